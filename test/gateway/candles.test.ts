// REST lane, black box: GET /v1/markets/{market_id}/candlesticks. The
// answer's shape, candles recomputed from the public trade tape of the same
// instant, every period, the start/end window, and every refused query.
// One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Candle, CandlePeriod, Trade } from '../../src/client/types.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertErrorReply, newAccount, newMarket, order, rejects, signedRaw, type Key } from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';
import { Candlesticks } from '../../src/wire/responses.js';

let tx: TestExchange;
let maker: Key;
let taker: Key;
let market: number;

const S = 1_000_000_000n;
const PERIOD_NS: Record<CandlePeriod, bigint> = { '1m': 60n * S, '5m': 300n * S, '1h': 3600n * S, '1d': 86_400n * S };

before(async () => {
  tx = await startTestExchange();
  maker = await newAccount(tx);
  taker = await newAccount(tx);
  market = await newMarket(tx);
  // Trades at several prices: resting NO bids taken by YES buys (some sweeping two levels).
  for (const [tickYes, qty] of [[40, 5], [45, 2], [38, 1], [42, 3], [60, 4]] as const) {
    await maker.client.placeOrder(order(market, { outcome: 'no', tick: 100 - tickYes, qty }));
    await taker.client.placeOrder(order(market, { outcome: 'yes', tick: tickYes, qty, tif: 'ioc' }));
  }
  await maker.client.placeOrder(order(market, { outcome: 'no', tick: 48, qty: 2 }));
  await maker.client.placeOrder(order(market, { outcome: 'no', tick: 47, qty: 3 }));
  await taker.client.placeOrder(order(market, { outcome: 'yes', tick: 53, qty: 5, tif: 'ioc' }));
});

after(async () => {
  await tx.stop();
});

/** The candles a client would compute from the tape (oldest first), for one period. */
function expected(trades: Trade[], period: CandlePeriod): Candle[] {
  const out: Candle[] = [];
  for (const t of [...trades].reverse()) {
    const start = String((BigInt(t.ts) / PERIOD_NS[period]) * PERIOD_NS[period]);
    const c = out[out.length - 1];
    if (c === undefined || c.start_ts !== start) {
      const p = t.tick_yes;
      out.push({ start_ts: start, open: p, high: p, low: p, close: p, volume: String(t.qty), trade_count: 1 });
      continue;
    }
    c.high = Math.max(c.high, t.tick_yes);
    c.low = Math.min(c.low, t.tick_yes);
    c.close = t.tick_yes;
    c.volume = String(Number(c.volume) + t.qty);
    c.trade_count++;
  }
  return out;
}

test('candlesticks: every period equals the candles computed from the trade tape at the same as_of_seq', async () => {
  const trades = await taker.client.trades(market, { limit: 1000 });
  assert.equal(trades.trades.length, 7, 'five single trades and a sweep of two levels');
  for (const period of ['1m', '5m', '1h', '1d'] as const) {
    const r = await taker.client.candles(market, { period });
    assertWireShape(Candlesticks, r);
    assert.equal(r.as_of_seq, trades.as_of_seq, 'no event in between');
    assert.equal(r.market_id, market);
    assert.equal(r.period, period);
    assert.equal(r.truncated, false);
    assert.equal(r.retained_from_ts, trades.trades[trades.trades.length - 1]!.ts, 'the oldest trade on the tape');
    assert.deepEqual(r.candles, expected(trades.trades, period));
    for (const c of r.candles) {
      assert.equal(typeof c.trade_count, 'number');
      assert.ok(c.low <= c.open && c.open <= c.high && c.low <= c.close && c.close <= c.high);
    }
  }
  const total = (await taker.client.candles(market, { period: '1d' })).candles.reduce((a, c) => a + Number(c.volume), 0);
  assert.equal(total, 5 + 2 + 1 + 3 + 4 + 5);
  // The default period is 1m.
  assert.equal((await taker.client.request<{ period: string }>('GET', `/v1/markets/${market}/candlesticks`)).period, '1m');
});

test('candlesticks: start_ts and end_ts select the periods holding them; a market without trades has none', async () => {
  const trades = (await taker.client.trades(market, { limit: 1000 })).trades;
  const first = BigInt(trades[trades.length - 1]!.ts);
  const last = BigInt(trades[0]!.ts);
  const all = await taker.client.candles(market, { period: '1m', start_ts: String(first), end_ts: String(last) });
  assert.deepEqual(all.candles, expected(trades, '1m'));
  // A window after every trade, and one before.
  assert.deepEqual((await taker.client.candles(market, { period: '1m', start_ts: String(last + PERIOD_NS['1m']) })).candles, []);
  assert.deepEqual((await taker.client.candles(market, { period: '1h', end_ts: String(first - PERIOD_NS['1h']) })).candles, []);
  // end_ts alone: everything up to it.
  assert.deepEqual((await taker.client.candles(market, { period: '1d', end_ts: String(last) })).candles, expected(trades, '1d'));
  const empty = await newMarket(tx);
  const none = await taker.client.candles(empty, { period: '5m' });
  assert.deepEqual({ ...none, as_of_seq: '' }, {
    market_id: empty, period: '5m', candles: [], retained_from_ts: '0', truncated: false, as_of_seq: '',
  });
});

test('candlesticks: bad queries are refused with the error envelope', async () => {
  const get = (q: string): ReturnType<typeof signedRaw> => signedRaw(tx.port, taker, 'GET', `/v1/markets/${market}/candlesticks${q}`);
  const field = async (q: string, f: string, reason: RegExp): Promise<void> => {
    const r = await get(q);
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details.field, f, q);
    assert.match(r.json.error.details.reason, reason, q);
  };
  await field('?period=2m', 'period', /one of 1m, 5m, 1h, 1d/);
  await field('?period=', 'period', /one of/);
  await field('?start_ts=abc', 'start_ts', /u64/);
  await field('?end_ts=-1', 'end_ts', /u64/);
  await field('?end_ts=18446744073709551616', 'end_ts', /2\^64-1/);
  await field('?start_ts=2000&end_ts=1000', 'start_ts', /at most end_ts/);
  await field('?period=1m&start_ts=0&end_ts=300000000000000', 'start_ts', /spans 5001 periods of 1m; at most 5000/);
  await field('?period=1m&period=5m', 'period', /more than once/);
  const unknown = await get('?limit=5');
  assertErrorReply(unknown, 400, 'unknown_field');
  assert.equal(unknown.json.error.details.field, 'limit');
  await rejects(taker.client.candles(999_999), 404, 'unknown_market', { num: 265, origin: 'core' });
  // 0 is an id no market has (404, as the contract answers an unknown market); past 2^32-1 it is not a market id (400).
  const zero = await signedRaw(tx.port, taker, 'GET', '/v1/markets/0/candlesticks');
  assertErrorReply(zero, 404, 'unknown_market', { num: 265, origin: 'core' });
  assertErrorReply(await signedRaw(tx.port, taker, 'GET', '/v1/markets/4294967296/candlesticks'), 400, 'invalid_field');
  assertErrorReply(await signedRaw(tx.port, taker, 'POST', `/v1/markets/${market}/candlesticks`, '{}'), 405, 'method_not_allowed');
  // Exactly 5000 periods is allowed.
  assert.equal((await get('?period=1m&start_ts=0&end_ts=299999999999999')).status, 200);
});
