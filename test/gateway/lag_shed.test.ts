// Engine lag sheds: once the oldest held request has waited half the response
// budget, new placements are refused 503 shed at once instead of being held
// to time out, while cancels by id are still held and answered.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertErrorReply, newAccount, newMarket, order, signedRaw, sleep, type Key } from '../support/harness.js';

const BUDGET_MS = 600;
let tx: TestExchange;
let k: Key;
let market: number;

before(async () => {
  tx = await startTestExchange({ response_budget_ms: BUDGET_MS });
  k = await newAccount(tx);
  market = await newMarket(tx);
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

test('lag: a placement is shed with 503 once the oldest held request waited half the budget', async () => {
  const resting = await k.client.placeOrder(order(market, { tick: 5, qty: 1 }));
  tx.ex.pipeline.control.setPaused(true);
  const held = signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', JSON.stringify(order(market, { tick: 6, qty: 1 })));
  await sleep(BUDGET_MS / 2 + 100);
  const shed = await signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', JSON.stringify(order(market, { tick: 7, qty: 1 })));
  assertErrorReply(shed, 503, 'shed');
  const cancel = signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders/batch', JSON.stringify({ order_ids: [resting.order_id] }));
  tx.ex.pipeline.control.setPaused(false);
  const first = await held;
  assert.ok(first.status === 201 || first.status === 504, `the held placement was answered (${first.status})`);
  const c = await cancel;
  assert.equal(c.status, 200, c.text);
  assert.equal(c.json.results[0].status, 'canceled', 'cancels by id are never shed');
  const again = await signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', JSON.stringify(order(market, { tick: 8, qty: 1 })));
  assert.equal(again.status, 201, 'placements are admitted again once the engine caught up');
});
