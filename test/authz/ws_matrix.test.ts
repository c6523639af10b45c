// Who can reach what on the WebSocket lane: the upgrade with every kind of
// credential, each order command per scope, another account's order ids, and
// the user channel carrying the caller's account only.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order, sleep, type Key } from '../support/harness.js';
import { WsClient, type UpgradeRefusal } from '../ws/ws_client.js';

let tx: TestExchange;
let a: Key;
let aRead: Key;
let aTrade: Key;
let aWithdraw: Key;
let b: Key;
let market: number;

before(async () => {
  tx = await startTestExchange();
  market = await newMarket(tx);
  a = await newAccount(tx);
  b = await newAccount(tx);
  aRead = await newKey(tx, a.accountId, ['read']);
  aTrade = await newKey(tx, a.accountId, ['trade']);
  aWithdraw = await newKey(tx, a.accountId, ['withdraw']);
});

after(async () => {
  await tx.stop();
});

async function refusal(k: { keyId: number; secret: string }, o: Parameters<typeof WsClient.connect>[2] = {}): Promise<number> {
  try {
    const c = await WsClient.connect(tx, k, o);
    await c.close();
    return 101;
  } catch (e) {
    return (e as UpgradeRefusal).status;
  }
}

test('ws matrix: upgrades', async () => {
  assert.equal(await refusal(a, { headers: null }), 401);
  assert.equal(await refusal(a, { headers: null, target: '/v1/ws', ts: Date.now() }), 401);
  assert.equal(await refusal(a, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'DX-ACCESS-SIGNATURE': 'x' } }), 401);
  assert.equal(await refusal(a, { ts: Date.now() - 6000 }), 401);
  assert.equal(await refusal({ keyId: a.keyId, secret: b.secret }), 401);
  assert.equal(await refusal(aTrade), 403);
  assert.equal(await refusal(aWithdraw), 403);
  assert.equal(await refusal(aRead), 101);
});

test('ws matrix: order commands per scope and another account\'s ids; user channel is the account\'s own', async () => {
  const aOrder = (await a.client.placeOrder(order(market, { tick: 10, qty: 3, client_order_id: '91' }))).order_id;
  const reader = await WsClient.connect(tx, aRead);
  const other = await WsClient.connect(tx, b);
  const sub = await other.call('subscribe', { channels: ['user'] });
  assert.equal(sub.type, 'subscribed');
  // What B's key gets for each command: its own orders are placed, A's ids are unknown to it.
  const unknown = (o: { msg: unknown }): unknown => (o.msg as { error?: { code: string } }).error?.code;
  const itemUnknown = (o: { msg: unknown }): unknown => (o.msg as { results: { error?: { code: string } }[] }).results[0]!.error?.code;
  const cases: [string, Record<string, unknown>, number, ((o: { msg: unknown }) => unknown) | null][] = [
    ['place_order', order(market, { tick: 2 }), 201, null],
    ['cancel_order', { order_id: aOrder }, 404, unknown],
    ['batch_cancel_orders', { order_ids: [aOrder] }, 200, itemUnknown],
    ['decrease_order', { order_id: aOrder, new_qty: 1 }, 404, unknown],
    ['cancel_all', {}, 202, null],
    ['batch_place_orders', { orders: [order(market, { tick: 2 })] }, 201, null],
  ];
  for (const [cmd, params, status, code] of cases) {
    const r = await reader.call(cmd, params);
    assert.equal(r.status, 403, `read-only ${cmd}: ${JSON.stringify(r)}`);
    const o = await other.call(cmd, params);
    assert.equal(o.status, status, `B ${cmd}: ${JSON.stringify(o)}`);
    if (code !== null) assert.equal(code(o), 'unknown_order', `B ${cmd}: ${JSON.stringify(o)}`);
  }
  await sleep(200);
  const list = await a.client.orders({ client_order_id: '91' });
  assert.equal(list.orders[0]!.remaining_qty, 3, 'A\'s order untouched');
  assert.equal(list.orders[0]!.reason, '');
  const leaked = other.all.filter((m) => {
    const t = JSON.stringify(m);
    return t.includes(`"order_id":"${aOrder}"`) && !t.includes('unknown_order');
  });
  assert.deepEqual(leaked, []);
  await reader.close();
  await other.close();
});
