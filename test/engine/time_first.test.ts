// Time comes first, to the nanosecond: a command arriving when something is
// due is preceded by the clock's tick at its ts and runs at ts + 1; when
// something else is due at ts + 1 (a gtd expiry or a round's close 1 ns
// later), another tick runs there first. A maker whose expiry is the command's
// ts + 1 does not trade, nor does a round whose close_ts is.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ScenarioRunner } from './scenario.js';
import { Outcome, Side, Stp, Tif, ORDER_STATUS_NAMES } from '../../src/layout/records.js';
import type { RecordObject } from '../../src/layout_codec/record_codec.js';

function place(r: ScenarioRunner, account: number, fields: Partial<RecordObject>): RecordObject[] {
  return r.send({
    type: 'PlaceOrder', account, market_id: 1, side: Side.buy, outcome: Outcome.yes, tick: 50, qty: 1,
    tif: Tif.gtc, stp: Stp.cancel_taker, post_only: 0, group_id: 0, ...fields,
  });
}

test('time first: a gtd maker whose expiry_ts is the ts the command runs at (after a due tick) must not trade', () => {
  const r = new ScenarioRunner();
  r.run(`
    market
    account a1 100000
    account a2 100000
    account a3 100000
  `);
  const X = r.now + 10_000_000n; // 10 ms ahead
  // a3: a non-crossing gtd order that expires at X (makes a ClockTick due at X)
  let ev = place(r, 3, { tick: 10, tif: Tif.gtd, expiry_ts: X });
  assert.equal(ORDER_STATUS_NAMES[ev.at(-1)!.order_status as number], 'resting');
  // a1: the maker, gtd, expires at X + 1 ns
  ev = place(r, 1, { tick: 60, qty: 5, tif: Tif.gtd, expiry_ts: X + 1n });
  const makerId = ev.at(-1)!.order_id;
  assert.equal(ORDER_STATUS_NAMES[ev.at(-1)!.order_status as number], 'resting');
  // a2 arrives at X: the tick at X expires a3's order; a2's command then runs at X + 1, when a1's order has expired too.
  r.now = X;
  ev = place(r, 2, { outcome: Outcome.no, tick: 40, qty: 5 });
  const c = ev.at(-1)!;
  const fills = ev.filter((e) => e.type === 'Filled');
  assert.ok(BigInt(c.ts as bigint) >= X + 1n, 'the command runs at X + 1');
  assert.equal(fills.length, 0, `maker #${makerId} (expiry_ts ${X + 1n}) traded at ts ${c.ts}, at or after its expiry`);
  assert.equal(ORDER_STATUS_NAMES[c.order_status as number], 'resting', 'the taker finds no maker and rests');
});

test('time first: a round whose close_ts is the ts the command runs at (after a due tick) must not trade', () => {
  const r = new ScenarioRunner();
  r.run(`
    market round=none
    account a1 100000
    account a2 100000
    account a3 100000
  `);
  const X = r.now + 10_000_000n;
  let ev = r.send({ type: 'OpenRound', market_id: 1, strike: 100, close_ts: X + 1n });
  assert.equal(ev.at(-1)!.status, 0);
  place(r, 3, { tick: 10, tif: Tif.gtd, expiry_ts: X });
  place(r, 1, { tick: 60, qty: 5 });
  r.now = X;
  ev = place(r, 2, { outcome: Outcome.no, tick: 40, qty: 5 });
  const c = ev.at(-1)!;
  const fills = ev.filter((e) => e.type === 'Filled');
  assert.equal(fills.length, 0, `traded at ts ${c.ts} in a round whose close_ts is ${X + 1n}`);
  assert.notEqual(c.status, 0, 'the round froze first: the placement is refused');
});
