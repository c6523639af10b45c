// candles: OHLC candlesticks of a market's trades (GET
// /v1/markets/{market_id}/candlesticks), aggregated on demand from the public
// tape the read model keeps (Views.visitTape). Runs on the thread that owns
// the Views (gateway threads); allocates only its answer.
//
// Rules (README, "Candlesticks"):
//   - Periods are aligned to multiples of the period since the Unix epoch
//     (UTC): a 1d candle runs from midnight UTC to midnight UTC.
//   - A candle aggregates every retained trade whose ts lies in
//     [start_ts, start_ts + period): open and close are the tick_yes of the
//     first and last trade (tape order = seq order), high and low the
//     extremes, volume the shares traded, trade_count the tape entries (one
//     per fill, so one taker order sweeping three levels counts three).
//   - The answer lists the candles whose period overlaps [start_ts, end_ts],
//     oldest first; periods without trades are omitted.
//   - Bounded by retention: the tape keeps the newest tape_cap trades of the
//     market (across its rounds). `truncated` says older trades were evicted,
//     `retained_from_ts` is the ts of the oldest trade still kept; periods
//     before it are absent and the candle holding it may be partial.
//   - At most MAX_CANDLE_PERIODS periods may be spanned by a request. end_ts
//     defaults to the exchange's last sequencer stamp (or start_ts when that
//     is later), start_ts to the period MAX_CANDLE_PERIODS - 1 periods
//     before end_ts.
// Timestamps are ns since the epoch (> 2^53), so bucket arithmetic is BigInt;
// this is a read, not the hot path.

import { hiLoToBigInt } from '../lib/u64.js';
import { ViewError } from './cursor.js';
import type { Views } from './views.js';

export const CANDLE_PERIODS = ['1m', '5m', '1h', '1d'] as const;
export type CandlePeriod = (typeof CANDLE_PERIODS)[number];

/** Length of each period in seconds. */
export const CANDLE_PERIOD_S: Readonly<Record<CandlePeriod, number>> = Object.freeze({ '1m': 60, '5m': 300, '1h': 3600, '1d': 86400 });

/** Most periods one request may span (empty ones included). */
export const MAX_CANDLE_PERIODS = 5000;

export interface Candle {
  start_ts: string;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: string;
  trade_count: number;
}

export interface CandlesView {
  market_id: number;
  period: CandlePeriod;
  candles: Candle[];
  retained_from_ts: string;
  truncated: boolean;
  as_of_seq: string;
}

export interface CandlesQuery {
  period: CandlePeriod;
  /** u64 ns as [hi, lo] halves (the REST query parser's form). */
  start_ts?: [number, number];
  end_ts?: [number, number];
}

/** The market's candles; null for an unknown market. Throws ViewError invalid_field for a bad range. */
export function candles(views: Views, marketId: number, q: CandlesQuery): CandlesView | null {
  const periodNs = BigInt(CANDLE_PERIOD_S[q.period]) * 1_000_000_000n;
  const start = q.start_ts ? hiLoToBigInt(q.start_ts[0], q.start_ts[1]) : -1n;
  let end: bigint;
  if (q.end_ts) {
    end = hiLoToBigInt(q.end_ts[0], q.end_ts[1]);
    if (start > end) throw new ViewError('invalid_field', 'start_ts', `must be at most end_ts (${end})`);
  } else {
    // Now, as far as the exchange knows; never before start_ts (a client's clock may run ahead of the last event).
    end = hiLoToBigInt(views.state.tsHi, views.state.tsLo);
    if (start > end) end = start;
  }
  const last = end / periodNs;
  let first: bigint;
  if (start >= 0n) {
    first = start / periodNs;
    const spanned = last - first + 1n;
    if (spanned > BigInt(MAX_CANDLE_PERIODS)) {
      const reason = `start_ts..end_ts spans ${spanned} periods of ${q.period}; at most ${MAX_CANDLE_PERIODS}`;
      throw new ViewError('invalid_field', 'start_ts', reason);
    }
  } else {
    first = last >= BigInt(MAX_CANDLE_PERIODS - 1) ? last - BigInt(MAX_CANDLE_PERIODS - 1) : 0n;
  }

  const out: Candle[] = [];
  let bucket = -1n;
  let open = 0;
  let high = 0;
  let low = 0;
  let close = 0;
  let volume = 0;
  let count = 0;
  let oldest = '0';
  const flush = (): void => {
    if (count > 0) out.push({ start_ts: String(bucket * periodNs), open, high, low, close, volume: String(volume), trade_count: count });
  };
  const evicted = views.visitTape(marketId, (tsHi, tsLo, tickYes, qty) => {
    const ns = hiLoToBigInt(tsHi, tsLo);
    if (oldest === '0') oldest = String(ns);
    const b = ns / periodNs;
    if (b < first || b > last) return;
    if (b !== bucket) {
      flush();
      bucket = b;
      open = high = low = tickYes;
      volume = 0;
      count = 0;
    }
    if (tickYes > high) high = tickYes;
    if (tickYes < low) low = tickYes;
    close = tickYes;
    volume += qty;
    count++;
  });
  if (evicted < 0) return null;
  flush();
  return {
    market_id: marketId, period: q.period, candles: out, retained_from_ts: oldest, truncated: evicted > 0, as_of_seq: String(views.asOfSeq),
  };
}
