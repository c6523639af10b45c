// JsonBody (src/gateway/routes.ts): the hand-written JSON of a placement's
// answer and of an order book is the very string JSON.stringify writes for
// the same object (fields, order, numbers, the reason only when there is
// one), and it reads back as a valid body of the wire declaration. Test
// process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Value } from '@sinclair/typebox/value';
import { bodyJson, OrderbookBody, PlacementBody } from '../../src/gateway/routes.js';
import * as R from '../../src/wire/responses.js';

function body(status: R.Placement['status'], fills: R.PlacementFill[], reason?: R.Placement['reason']): PlacementBody {
  const filled = fills.reduce((n, f) => n + f.qty, 0);
  const resting = status === 'resting' ? 7 : 0;
  const b = new PlacementBody('9007199254740991', '18446744073709551615', status, '123456789012', filled, resting, fills);
  if (reason !== undefined) b.reason = reason;
  return b;
}

test('placement body: its JSON is JSON.stringify\'s, with and without fills and reason, and a valid Placement', () => {
  const cases = [
    body('resting', []),
    body('partially_filled', [{ tick_yes: 1, qty: 3, path: 'direct' }]),
    body('filled', [{ tick_yes: 99, qty: 1, path: 'mint' }, { tick_yes: 50, qty: 100000, path: 'merge' }]),
    body('canceled', [], 'post_only_cross'),
    body('canceled', [{ tick_yes: 42, qty: 2, path: 'direct' }], 'ioc_remainder'),
  ];
  for (const b of cases) {
    const json = b.json();
    assert.equal(json, JSON.stringify(b));
    assert.equal(bodyJson(b), json);
    const back: unknown = JSON.parse(json);
    assert.ok(Value.Check(R.Placement, back), `${json} is a Placement`);
    assert.equal('reason' in (back as object), b.reason !== undefined);
  }
  // Anything else is JSON.stringify's.
  const other = { orders: [body('resting', [])], n: 1 };
  assert.equal(bodyJson(other), JSON.stringify(other));
});

test('order book body: its JSON is JSON.stringify\'s, empty and full ladders, and a valid Orderbook', () => {
  const full: [number, number][] = [];
  for (let t = 99; t >= 1; t--) full.push([t, t === 50 ? Number.MAX_SAFE_INTEGER : t * 1000]);
  const cases = [
    new OrderbookBody({ market_id: 1, yes: [], no: [], as_of_seq: '0' }, 0),
    new OrderbookBody({ market_id: 4294967295, yes: [[50, 1]], no: full, as_of_seq: '18446744073709551615' }, 7),
  ];
  for (const b of cases) {
    const json = b.json();
    assert.equal(json, JSON.stringify(b));
    assert.equal(bodyJson(b), json);
    assert.ok(Value.Check(R.Orderbook, JSON.parse(json)), `${json.slice(0, 80)} is an Orderbook`);
  }
});
