// Candles (src/views/tape.ts, Views.candles) on a real engine with a controlled clock:
// period alignment, OHLC, volume and trade counts, omitted empty periods,
// the start/end window and its limits, and the retention bound.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_CANDLE_PERIODS, ViewError } from '../../src/views/views.js';
import { Candlesticks } from '../../src/wire/responses.js';
import { assertWireShape } from '../support/wire_shapes.js';
import { Harness, NS_PER_MS, T0 } from './harness.js';

type CandlePeriod = Candlesticks['period'];

const S = 1000n * NS_PER_MS;
/** T0 is 40 s into its minute: the minute starts 40 s before it. */
const MINUTE0 = (T0 / (60n * S)) * 60n * S;

function halves(v: bigint): [number, number] {
  return [Number(v >> 32n), Number(v & 0xffffffffn)];
}

interface Setup {
  h: Harness;
  market: number;
  maker: number;
  taker: number;
}

function setup(tapeCap = 1000): Setup {
  const h = new Harness({}, { tape_cap: tapeCap });
  const maker = h.account(10_000_000);
  const taker = h.account(10_000_000);
  const market = h.market({ close_ms: 86_400_000 });
  return { h, market, maker, taker };
}

/**
 * One trade of qty at tickYes at about `at` (ns): a resting NO bid taken by a
 * YES buy (a mint at the maker's price). Returns the trade's ts (the
 * sequencer keeps stamps strictly increasing, so it may be a few ns later).
 */
function trade(s: Setup, at: bigint, tickYes: number, qty: number): string {
  s.h.now = at;
  s.h.order(s.maker, { market: s.market, outcome: 'no', tick: 100 - tickYes, qty });
  s.h.order(s.taker, { market: s.market, outcome: 'yes', tick: tickYes, qty, tif: 'ioc' });
  return s.h.lastTs();
}

function get(s: Setup, period: CandlePeriod, start?: bigint, end?: bigint): Candlesticks | null {
  return s.h.views.candles(s.market, {
    period, start_ts: start === undefined ? undefined : halves(start), end_ts: end === undefined ? undefined : halves(end),
  });
}

test('candles: trades are bucketed into UTC-aligned periods with OHLC, volume and trade count; empty periods are omitted', () => {
  const s = setup();
  const first = trade(s, T0, 40, 5); // minute 0 (T0 is 40 s into it)
  trade(s, T0 + 5n * S, 45, 2);
  trade(s, T0 + 10n * S, 38, 1);
  trade(s, T0 + 15n * S, 42, 3);
  trade(s, T0 + 25n * S, 60, 4); // minute 1
  trade(s, T0 + 200n * S, 55, 6); // minute 4 (2 and 3 are empty)
  const r = get(s, '1m')!;
  assertWireShape(Candlesticks, r);
  assert.equal(r.market_id, s.market);
  assert.equal(r.period, '1m');
  assert.equal(r.truncated, false);
  assert.equal(r.retained_from_ts, first);
  assert.equal(r.as_of_seq, String(s.h.views.asOfSeq));
  assert.deepEqual(r.candles, [
    { start_ts: String(MINUTE0), open: 40, high: 45, low: 38, close: 42, volume: '11', trade_count: 4 },
    { start_ts: String(MINUTE0 + 60n * S), open: 60, high: 60, low: 60, close: 60, volume: '4', trade_count: 1 },
    { start_ts: String(MINUTE0 + 240n * S), open: 55, high: 55, low: 55, close: 55, volume: '6', trade_count: 1 },
  ]);
  // Each start is a multiple of the period since the epoch.
  for (const c of r.candles) assert.equal(BigInt(c.start_ts) % (60n * S), 0n);

  const five = get(s, '5m')!;
  const fiveStart = (T0 / (300n * S)) * 300n * S;
  const fiveEnd = fiveStart + 300n * S;
  // Which trades share T0's 5-minute period depends on where T0 falls in it: compute the expectation.
  const all: [bigint, number, number][] = [
    [T0, 40, 5], [T0 + 5n * S, 45, 2], [T0 + 10n * S, 38, 1], [T0 + 15n * S, 42, 3], [T0 + 25n * S, 60, 4], [T0 + 200n * S, 55, 6],
  ];
  const inFirst = all.filter(([t]) => t < fiveEnd);
  assert.equal(five.candles[0]!.start_ts, String(fiveStart));
  assert.equal(five.candles[0]!.trade_count, inFirst.length);
  assert.equal(five.candles[0]!.volume, String(inFirst.reduce((a, [, , q]) => a + q, 0)));
  assert.equal(five.candles[0]!.open, 40);
  assert.equal(five.candles.reduce((a, c) => a + c.trade_count, 0), 6);

  const day = get(s, '1d')!;
  assert.equal(day.candles.length, 1);
  const whole = { start_ts: '', open: 40, high: 60, low: 38, close: 55, volume: '21', trade_count: 6 };
  assert.deepEqual({ ...day.candles[0]!, start_ts: '' }, whole);
  assert.equal(BigInt(day.candles[0]!.start_ts) % (86_400n * S), 0n, 'a day candle starts at midnight UTC');
});

test('candles: start_ts and end_ts select the periods that hold them; a taker sweeping levels counts one trade per fill', () => {
  const s = setup();
  trade(s, T0, 40, 5);
  trade(s, T0 + 25n * S, 60, 4); // minute 1
  trade(s, T0 + 90n * S, 50, 1); // minute 2
  // Minute 1 only: any instant inside it selects it whole.
  const mid = get(s, '1m', MINUTE0 + 61n * S, MINUTE0 + 119n * S)!;
  assert.deepEqual(mid.candles.map((c) => c.open), [60]);
  // From minute 1 to now.
  assert.deepEqual(get(s, '1m', MINUTE0 + 60n * S)!.candles.map((c) => c.open), [60, 50]);
  // Up to minute 1.
  assert.deepEqual(get(s, '1m', undefined, MINUTE0 + 60n * S)!.candles.map((c) => c.open), [40, 60]);
  // Nothing in range.
  assert.deepEqual(get(s, '1m', MINUTE0 + 600n * S, MINUTE0 + 700n * S)!.candles, []);

  // Two NO bids at different levels, one YES buy taking both: two fills, one seq.
  s.h.now = T0 + 100n * S;
  s.h.order(s.maker, { market: s.market, outcome: 'no', tick: 48, qty: 2 });
  s.h.order(s.maker, { market: s.market, outcome: 'no', tick: 47, qty: 3 });
  s.h.order(s.taker, { market: s.market, outcome: 'yes', tick: 53, qty: 5, tif: 'ioc' });
  const last = get(s, '1m', MINUTE0 + 120n * S)!.candles;
  assert.equal(last.length, 1);
  assert.deepEqual(last[0], { start_ts: String(MINUTE0 + 120n * S), open: 50, high: 53, low: 50, close: 53, volume: '6', trade_count: 3 });
});

test('candles: a bad range is invalid_field: start after end, or more than MAX_CANDLE_PERIODS periods', () => {
  const s = setup();
  trade(s, T0, 40, 1);
  const bad = (f: () => unknown, field: string, reason: RegExp): void => {
    assert.throws(f, (e: unknown) => e instanceof ViewError && e.code === 'invalid_field' && e.field === field && reason.test(e.reason));
  };
  bad(() => get(s, '1m', T0 + S, T0), 'start_ts', /at most end_ts/);
  // Without end_ts, a start after the last event is not an error: nothing traded since.
  assert.deepEqual(get(s, '1m', T0 + 3_600n * S)!.candles, []);
  const periods = BigInt(MAX_CANDLE_PERIODS);
  // Exactly MAX_CANDLE_PERIODS periods is fine, one more is refused.
  assert.ok(get(s, '1m', MINUTE0 - (periods - 1n) * 60n * S, MINUTE0));
  const tooMany = new RegExp(`spans ${MAX_CANDLE_PERIODS + 1} periods of 1m; at most ${MAX_CANDLE_PERIODS}`);
  bad(() => get(s, '1m', MINUTE0 - periods * 60n * S, MINUTE0), 'start_ts', tooMany);
  // The default start covers MAX_CANDLE_PERIODS periods back from end_ts.
  assert.equal(get(s, '1m', undefined, MINUTE0 + periods * 60n * S)!.candles.length, 0);
  assert.equal(get(s, '1m', undefined, MINUTE0 + (periods - 1n) * 60n * S)!.candles.length, 1);
  // Unknown market.
  assert.equal(s.h.views.candles(999, { period: '1m' }), null);
  // A market without trades.
  const empty = s.h.market();
  assert.deepEqual(s.h.views.candles(empty, { period: '1h' }), {
    market_id: empty, period: '1h', candles: [], retained_from_ts: '0', truncated: false, as_of_seq: String(s.h.views.asOfSeq),
  });
});

test('candles: bounded by the tape: evicted trades are gone, truncated and retained_from_ts say so', () => {
  const s = setup(3);
  trade(s, T0, 10, 1);
  trade(s, T0 + S, 20, 1);
  const third = trade(s, T0 + 2n * S, 30, 1);
  assert.equal(get(s, '1m')!.truncated, false);
  trade(s, T0 + 3n * S, 40, 1);
  trade(s, T0 + 4n * S, 50, 1);
  const r = get(s, '1m')!;
  assert.equal(r.truncated, true);
  assert.equal(r.retained_from_ts, third);
  assert.deepEqual(r.candles, [{ start_ts: String(MINUTE0), open: 30, high: 50, low: 30, close: 50, volume: '3', trade_count: 3 }]);
});
