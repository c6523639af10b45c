// Series automation end to end, over the real listeners: POST /admin/series
// on a simulated oracle (two sources pushing through the control plane), four
// short rounds while accounts trade through the client library:
//   1. close -> proposed from the oracle -> settled after the dispute window;
//      payouts and fees right to the cent, the next round opens by itself;
//   2. the oracle goes stale before close: the round freezes and waits (an
//      operator proposal from the oracle is refused), fresh ticks propose it;
//   3. the operator voids it: every share pays 50;
//   4. opens by itself after the void.
// The engine runs with its O(n) invariant check after every command (verify),
// and the money identity is checked from the public reads at the end.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SimulatedFeeder, adminSink, type OracleTick } from '../../src/oracle/feeder.js';
import type { DxClient } from '../../src/client/client.js';
import * as C from '../../src/wire/control_plane.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, rejects, type Key } from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';

type J = Record<string, any>;

const CATEGORY = 42;
const PERIOD_S = 3;
const DEPOSIT = 1_000_000;
const TAKER_BPS = 700;
const MAKER_BPS = 200;

let tx: TestExchange;
let feeder: SimulatedFeeder;
const sent = new Set<string>();
const feedErrors: unknown[] = [];

/** ceil(bps x q x p x (100 - p) / 1e6), written out again here. */
function fee(bps: number, q: number, p: number): number {
  return Math.ceil((bps * q * p * (100 - p)) / 1_000_000);
}

before(async () => {
  tx = await startTestExchange({ verify: true, dispute_window_ms: 1000, oracle_staleness_ms: 1500, oracle_quorum: 2 });
  const sink = adminSink(tx.admin);
  feeder = new SimulatedFeeder({
    sources: [0, 1], interval_ms: 150, start_price: 50_000, sigma_per_sqrt_s: 0.002, seed: 7,
    sink: async (t: OracleTick) => {
      sent.add(String(t.price));
      await sink(t);
    },
    onError: (e) => feedErrors.push(e),
  });
  feeder.start();
});

after(async () => {
  await feeder.stop();
  await tx.stop();
});

async function roundOf(c: DxClient, n: number, category = CATEGORY): Promise<J | undefined> {
  const page = await c.rounds({ category, limit: 10 });
  return (page.rounds as unknown as J[]).find((r) => r.round_number === String(n));
}

async function waitRound(c: DxClient, n: number, status: string, ms = 10_000, category = CATEGORY): Promise<J> {
  let last: J | undefined;
  const ok = await eventually(async () => {
    last = await roundOf(c, n, category);
    return last?.status === status;
  }, ms, 25);
  assert.ok(ok, `round ${n} reached ${status} (last seen ${JSON.stringify(last)})`);
  return last!;
}

async function cash(k: Key): Promise<{ available: number; reserved: number }> {
  const b = await k.client.balance();
  return { available: Number(b.available), reserved: Number(b.reserved) };
}

test('series: rounds run by themselves on the simulated oracle; payouts to the cent, a stale oracle holds a round, a void pays ' +
  '50/50', async () => {
  const a = await newAccount(tx, { deposit: String(DEPOSIT) });
  const b = await newAccount(tx, { deposit: String(DEPOSIT) });
  const c = await newAccount(tx, { deposit: String(DEPOSIT) });
  assert.ok(await eventually(async () => (await a.client.oraclePrice()).fresh_source_count === 2, 5000), 'both sources fresh');

  const { fee_schedule_id } = await tx.admin.createFeeSchedule({ taker_bps: TAKER_BPS, maker_bps: MAKER_BPS });
  const created = await tx.admin.createSeries({
    category: CATEGORY,
    title: 'BTC/USD 3 s',
    period_s: PERIOD_S,
    position_limit: 1000,
    fee_schedule_id,
  });
  assertWireShape(C.SeriesCreated, created);
  const market = created.market_id;
  assert.equal(created.round_number, '1', 'the oracle is fresh: the first round opened with the series');
  assert.equal(created.period_s, PERIOD_S);

  // ---- round 1: trade, settle from the oracle after the dispute window ----
  const r1 = (await a.client.round(market)) as unknown as J;
  assert.equal(r1.status, 'trading');
  assert.equal(r1.category, CATEGORY);
  assert.ok(sent.has(r1.strike), `the strike ${r1.strike} is a price the oracle sent`);
  assert.equal(BigInt(r1.close_ts) - BigInt(r1.open_ts), BigInt(PERIOD_S) * 1_000_000_000n, 'close_ts = open + period_s');
  assert.equal((await a.client.market(market)).status, 'trading');

  assert.equal((await a.client.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 60, qty: 10 })).status, 'resting');
  const t1 = await b.client.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick: 40, qty: 10 });
  assert.deepEqual(t1.fills, [{ tick_yes: 60, qty: 10, path: 'mint' }]);
  assert.equal((await c.client.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 55, qty: 4 })).status, 'resting');
  const t2 = await b.client.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick: 45, qty: 3 });
  assert.deepEqual(t2.fills, [{ tick_yes: 55, qty: 3, path: 'mint' }]);

  const s1 = await waitRound(a.client, 1, 'settled');
  assert.notEqual(s1.settle_price, '0');
  assert.ok(sent.has(s1.settle_price), `settle_price ${s1.settle_price} is a price the oracle sent`);
  assert.equal(s1.outcome, BigInt(s1.settle_price) >= BigInt(s1.strike) ? 'yes' : 'no', 'yes iff the price at close >= strike');
  assert.ok(BigInt(s1.proposed_ts) >= BigInt(s1.close_ts), 'proposed at or after close');
  assert.ok(BigInt(s1.settled_ts) - BigInt(s1.proposed_ts) >= 1_000_000_000n, 'settled after the dispute window');
  const yes1 = s1.outcome === 'yes';
  const aFee = fee(MAKER_BPS, 10, 60);
  const bFee = fee(TAKER_BPS, 10, 40) + fee(TAKER_BPS, 3, 45);
  const cFee = fee(MAKER_BPS, 3, 55);
  let aCash = DEPOSIT - 600 - aFee + (yes1 ? 1000 : 0);
  let bCash = DEPOSIT - 400 - 135 - bFee + (yes1 ? 0 : 1300);
  const cCash = DEPOSIT - 165 - cFee + (yes1 ? 300 : 0);
  assert.deepEqual(await cash(a), { available: aCash, reserved: 0 });
  assert.deepEqual(await cash(b), { available: bCash, reserved: 0 });
  assert.deepEqual(
    await cash(c),
    { available: cCash, reserved: 0 },
    "c's unfilled share was canceled at the freeze and its reservation returned",
  );
  for (const k of [a, b, c]) assert.deepEqual((await k.client.positions({ market_id: market })).positions, [], 'positions paid out');
  const cOrders = await c.client.orders({ market_id: market });
  assert.equal(cOrders.orders[0]!.reason, 'round_frozen');

  // ---- round 2: the oracle goes stale before close; the round waits ----
  const r2 = await waitRound(a.client, 2, 'trading');
  assert.equal(BigInt(r2.open_ts), BigInt(s1.settled_ts), 'the next round opened when the last one settled');
  assert.ok(sent.has(r2.strike));
  await a.client.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 50, qty: 2 });
  await b.client.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick: 50, qty: 2 });
  feeder.pause();
  assert.ok(await eventually(async () => (await a.client.oraclePrice()).fresh_source_count === 0, 5000), 'both sources went stale');
  const stale = await a.client.oraclePrice();
  assert.equal(stale.price, '0', 'no fresh source: no reference price');
  const frozen = await waitRound(a.client, 2, 'frozen');
  assert.equal((await a.client.market(market)).status, 'frozen');
  // Past close and stale: nothing can propose it. The operator's oracle proposal is refused, nothing changes.
  await rejects(tx.admin.proposeRound(market), 409, 'oracle_quorum_not_met', { num: 273, origin: 'core' });
  const still = await roundOf(a.client, 2);
  assert.equal(still!.status, 'frozen');
  assert.equal(still!.proposed_ts, '0');
  assert.equal(frozen.outcome, '');
  const resumedNs = BigInt(Date.now()) * 1_000_000n;
  feeder.resume();
  const p2 = await waitRound(a.client, 2, 'settled');
  assert.ok(BigInt(p2.proposed_ts) >= resumedNs, 'proposed only once fresh ticks came back');
  assert.ok(sent.has(p2.settle_price));
  assert.equal(p2.outcome, BigInt(p2.settle_price) >= BigInt(p2.strike) ? 'yes' : 'no');
  aCash += -100 - fee(MAKER_BPS, 2, 50) + (p2.outcome === 'yes' ? 200 : 0);
  bCash += -100 - fee(TAKER_BPS, 2, 50) + (p2.outcome === 'no' ? 200 : 0);
  assert.deepEqual(await cash(a), { available: aCash, reserved: 0 });
  assert.deepEqual(await cash(b), { available: bCash, reserved: 0 });

  // ---- round 3: voided by the operator; every share pays 50 ----
  await waitRound(a.client, 3, 'trading');
  await a.client.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 70, qty: 4 });
  await b.client.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick: 30, qty: 4 });
  const v = await tx.admin.voidRound(market);
  assert.equal(v.status, 'void');
  aCash += -280 - fee(MAKER_BPS, 4, 70) + 200;
  bCash += -120 - fee(TAKER_BPS, 4, 30) + 200;
  assert.deepEqual(await cash(a), { available: aCash, reserved: 0 });
  assert.deepEqual(await cash(b), { available: bCash, reserved: 0 });
  const v3 = await roundOf(a.client, 3);
  assert.equal(v3!.status, 'void');
  assert.equal(v3!.outcome, '');

  // ---- round 4 opens by itself after the void ----
  const r4 = await waitRound(a.client, 4, 'trading');
  assert.ok(BigInt(r4.open_ts) >= BigInt(v3!.settled_ts));

  // Listing: this category's rounds, newest first.
  const listed = (await a.client.rounds({ category: CATEGORY })).rounds.map((r) => r.round_number);
  assert.deepEqual(listed, ['4', '3', '2', '1']);
  assert.deepEqual((await a.client.rounds({ category: CATEGORY + 1 })).rounds, []);

  // Money: cash + 100 x open pairs + fees == deposits (no withdrawals here).
  let fees = 0;
  let held = 0;
  for (const k of [a, b, c]) {
    for await (const f of k.client.paginate('fills', {})) fees += Number(f.fee);
    const x = await cash(k);
    held += x.available + x.reserved;
  }
  const oi = Number((await a.client.market(market)).open_interest);
  assert.equal(held + 100 * oi + fees, 3 * DEPOSIT, 'no cent created or lost');
  assert.equal(fees, aFee + bFee + cFee + fee(MAKER_BPS, 2, 50) + fee(TAKER_BPS, 2, 50) + fee(MAKER_BPS, 4, 70) + fee(TAKER_BPS, 4, 30));
  assert.deepEqual(feedErrors, [], 'every oracle tick was accepted');
});

test('series admin: GET /admin/series lists it with its current round; stop lets the round end and opens no more; bad input is refused ' +
  'whole', async () => {
  const k = await newAccount(tx, { deposit: '1000' });
  const created = await tx.admin.request<J>('POST', '/admin/series', {
    category: 77,
    title: 'stop me',
    period_s: 1,
    position_limit: 0,
    fee_schedule_id: 0,
  });
  const list = assertWireShape(C.SeriesList, await tx.admin.listSeries());
  const mine = list.series.find((s) => s.category === 77)!;
  assert.equal(mine.market_id, created.market_id);
  assert.equal(mine.active, true);
  assert.equal(mine.period_s, 1);
  assert.equal(mine.round!.round_number, created.round_number);
  await rejects(
    tx.admin.request('POST', '/admin/series', { category: 77, title: 'again', period_s: 5, position_limit: 0, fee_schedule_id: 0 }),
    409,
    'duplicate_series',
    { num: 277, origin: 'core' },
  );
  await rejects(
    tx.admin.request('POST', '/admin/series', { category: 78, title: 'x', period_s: 0, position_limit: 0, fee_schedule_id: 0 }),
    400,
    'invalid_field',
  );
  await rejects(
    tx.admin.request('POST', '/admin/series', { category: 78, title: 'x', period_s: 5, position_limit: 0, fee_schedule_id: 0, extra: 1 }),
    400,
    'unknown_field',
  );
  await rejects(
    tx.admin.request('POST', '/admin/series', { category: 78, title: 'x', period_s: 5, position_limit: 0, fee_schedule_id: 999 }),
    404,
    'unknown_fee_schedule',
    { num: 271, origin: 'core' },
  );
  await rejects(
    tx.admin.request('POST', '/admin/series', { category: 65536, title: 'x', period_s: 5, position_limit: 0, fee_schedule_id: 0 }),
    400,
    'invalid_field',
  );
  const after = await tx.admin.request<J>('GET', '/admin/series');
  assert.equal((after.series as J[]).filter((s) => s.category === 78).length, 0, 'refused requests created nothing');

  const stopped = assertWireShape(C.SeriesStopped, await tx.admin.stopSeries(77));
  assert.deepEqual({ market_id: stopped.market_id, active: stopped.active }, { market_id: created.market_id, active: false });
  await rejects(tx.admin.request('POST', '/admin/series/77/stop', {}), 404, 'unknown_series', { num: 278, origin: 'core' });
  await rejects(tx.admin.request('POST', '/admin/series/65536/stop', {}), 400, 'invalid_field');
  // The current round still runs to its end, and no next round opens: an
  // active series would have opened it in the very command that settled this one.
  const n = Number(created.round_number);
  await waitRound(k.client, n, 'settled', 10_000, 77);
  const r = await k.client.round(created.market_id);
  assert.equal(r.round_number, String(n), 'no next round');
  assert.equal((await k.client.market(created.market_id)).status, 'closed');
  const again = await tx.admin.request<J>('GET', '/admin/series');
  assert.equal((again.series as J[]).find((s) => s.category === 77)!.active, false);
});
