// The user channel's balance message names its cause: "the first event of the
// command that moved the account's money" (docs/websocket.md, Data messages:
// `order_accepted` is a buy's reservation). A sell reserves no cash: when it
// fills at once, the money moved because of the fill.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, order } from '../support/harness.js';
import { WsClient } from './ws_client.js';

let tx: TestExchange;
before(async () => {
  tx = await startTestExchange({ demo: false });
});
after(async () => {
  await tx.stop();
});

it('ws: a sell that fills at once moves the balance with cause filled, not order_accepted', async () => {
  const m = await newMarket(tx);
  const a = await newAccount(tx);
  const b = await newAccount(tx);
  // a gets 5 YES shares: a buys YES at 40, b buys NO at 60 (a mint).
  await a.client.placeOrder(order(m, { tick: 40, qty: 5 }));
  await b.client.placeOrder(order(m, { outcome: 'no', tick: 60, qty: 5 }));
  assert.equal((await a.client.positions()).positions.find((p) => p.outcome === 'yes')?.free, 5);
  // b bids YES at 45; a sells its YES into it.
  await b.client.placeOrder(order(m, { tick: 45, qty: 5 }));
  const c = await WsClient.connect(tx, a);
  try {
    const r = await c.call('subscribe', { channels: ['user'] });
    assert.equal(r.type, 'subscribed');
    const bal0 = (await a.client.balance()).available;
    const sell = await a.client.placeOrder(order(m, { side: 'sell', tick: 45, qty: 5 }));
    const fill = await c.next((x) => x.type === 'fill' && x.msg.seq === sell.seq);
    assert.equal(fill.msg.role, 'taker');
    const bal = await c.next((x) => x.type === 'balance' && x.msg.seq === sell.seq);
    assert.ok(Number(bal.msg.available) > Number(bal0), 'the sale paid cash');
    assert.equal(bal.msg.cause, 'filled', JSON.stringify(c.all.filter((x) => x.msg?.seq === sell.seq)));
  } finally {
    await c.close();
  }
});

