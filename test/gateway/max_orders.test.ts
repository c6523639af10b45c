// REST lane, black box: the bound on the orders the exchange holds
// (--max-orders, live and retained, all accounts together). At the bound a
// new order first evicts a retained one (the placing account's own first),
// and a placement is refused 503 order_capacity_exceeded only when live
// orders alone fill it. The gateway's read model, which answers the listings,
// evicts exactly what the engine does; the WebSocket lane refuses alike.
// One exchange, max_orders 4.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertEnvelope, newAccount, newMarket, order, rejects, type Key } from '../support/harness.js';
import { WsClient } from '../ws/ws_client.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ demo: false, max_orders: 4 });
});

after(async () => {
  await tx.stop();
});

/** The client_order_ids of every order the account's listing holds (live and retained), sorted. */
async function listed(k: Key): Promise<string[]> {
  const page = await k.client.orders({ limit: 1000 });
  return page.orders.map((o) => o.client_order_id).sort();
}

test('max_orders: a new order evicts a retained one, its own account first; only live orders at the bound refuse it', async () => {
  const a = await newAccount(tx);
  const b = await newAccount(tx);
  const m = await newMarket(tx);
  const a1 = await a.client.placeOrder(order(m, { tick: 10, client_order_id: '1' }));
  await a.client.placeOrder(order(m, { tick: 11, client_order_id: '2' }));
  await a.client.cancelBatch([a1.order_id]);
  await b.client.placeOrder(order(m, { tick: 12, client_order_id: '1' }));
  await b.client.placeOrder(order(m, { tick: 13, client_order_id: '2' }));
  // Four held: a's canceled 1 and live 2, b's live 1 and 2.
  assert.deepEqual(await listed(a), ['1', '2']);
  const dup = { num: 266, origin: 'core' };
  await rejects(a.client.placeOrder(order(m, { tick: 14, client_order_id: '1' })), 409, 'duplicate_client_order_id', dup);

  // b retains nothing, so a's canceled order leaves for b's third.
  const b3 = await b.client.placeOrder(order(m, { tick: 14, client_order_id: '3' }));
  assert.equal(b3.status, 'resting');
  assert.deepEqual(await listed(a), ['2'], "a's canceled order was evicted");

  // Four live orders: nothing can leave, so the next placement is refused and nothing is retained.
  const e = await rejects(a.client.placeOrder(order(m, { tick: 15, client_order_id: '1' })), 503, 'order_capacity_exceeded', {
    num: 279,
    origin: 'core',
  });
  assert.match(e.message, /max-orders/);
  assert.deepEqual(await listed(a), ['2'], 'the refused placement left no row');
  // The WebSocket lane answers the same refusal in its order_result.
  const ws = await WsClient.connect(tx, a);
  try {
    const r = await ws.reply(ws.send('place_order', { ...order(m, { tick: 15, client_order_id: '1' }) }), 5000);
    assert.equal(r.status, 503, JSON.stringify(r));
    assertEnvelope(r.msg, 'order_capacity_exceeded', { num: 279, origin: 'core' });
  } finally {
    await ws.close();
  }

  // A cancel makes room: b's canceled order stays listed (and keeps its client_order_id) until b places again.
  await b.client.cancelBatch([b3.order_id]);
  assert.deepEqual(await listed(b), ['1', '2', '3']);
  await rejects(b.client.placeOrder(order(m, { tick: 16, client_order_id: '3' })), 409, 'duplicate_client_order_id', dup);
  const b4 = await b.client.placeOrder(order(m, { tick: 16, client_order_id: '4' }));
  assert.equal(b4.status, 'resting');
  assert.deepEqual(await listed(b), ['1', '2', '4'], "b's own canceled order left for it");
  assert.deepEqual(await listed(a), ['2']);
});
