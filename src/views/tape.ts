// tape: the public trade tape projection: per market, the newest tape_cap
// trades (one record per Filled event) in the RecordRings `tapes` (owner =
// market), and its two queries:
// the trades, newest first, and the OHLC candlesticks aggregated from them
// (GET /v1/markets/{market_id}/candlesticks). Runs on the thread that owns
// the Views.
//
// Candle rules (docs/rest.md, "Candlesticks"):
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
// Timestamps are ns since the epoch (> 2^53), so candle arithmetic is
// BigInt; this is a read, not the hot path. Only the answer is allocated.

import type { Candlesticks, TradesPage } from '../wire/responses.js';
import { Filled, Header, OUTCOME_NAMES, SIDE_NAMES } from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { hiLoToBigInt, hiLoToString } from '../lib/u64.js';
import { CursorKind, cursorScope, decodeCursor, encodeCursor, ViewError } from './cursor.js';
import { checkLimit, marketExists, type CandlesQuery, type PageQuery, type ViewsData } from './model.js';

// Trade record (one per Filled event on its market's tape).
const TF_SEQ = 0;
export const TAPE_F64 = 1;
const TU_TS_HI = 0;
const TU_TS_LO = 1;
const TU_QTY = 2;
/** tick_yes bits 0-7, taker side bit 8, taker outcome bit 9. */
const TU_PACKED = 3;
export const TAPE_U32 = 4;

/** Fold: appends the trade of a Filled event (at byte offset o of m) to its market's tape. */
export function recordTrade(v: ViewsData, m: Mem, o: number): void {
  const market = Filled.market_id(m, o);
  const tape = v.tapes;
  const r = tape.push(market);
  tape.setF64(r, TF_SEQ, Header.seq(m, o));
  tape.setU32(r, TU_TS_HI, Header.ts_hi(m, o));
  tape.setU32(r, TU_TS_LO, Header.ts_lo(m, o));
  tape.setU32(r, TU_QTY, Filled.qty(m, o));
  tape.setU32(r, TU_PACKED, Filled.tick_yes(m, o) | (Filled.taker_side(m, o) << 8) | (Filled.taker_outcome(m, o) << 9));
}

/** The market's tape, newest first (sort key: the trade's ordinal on the tape); null when the market does not exist. */
export function tradesPage(v: ViewsData, id: number, q: PageQuery): TradesPage | null {
  checkLimit(q.limit);
  if (!marketExists(v.state, id)) return null;
  const scope = cursorScope(id, q);
  const before = decodeCursor(CursorKind.trades, q.cursor, scope);
  const out: TradesPage['trades'] = [];
  const tape = v.tapes;
  const total = tape.totalOf(id);
  const from = tape.retainedFrom(id);
  let n = before < 0 || before > total ? total - 1 : before - 1;
  for (; n >= from && out.length < q.limit; n--) {
    const r = tape.slotOf(id, n);
    const packed = tape.u32At(r, TU_PACKED);
    out.push({
      seq: String(tape.f64At(r, TF_SEQ)),
      ts: hiLoToString(tape.u32At(r, TU_TS_HI), tape.u32At(r, TU_TS_LO)),
      market_id: id,
      tick_yes: packed & 0xff,
      qty: tape.u32At(r, TU_QTY),
      taker_side: SIDE_NAMES[(packed >>> 8) & 1]!,
      taker_outcome: OUTCOME_NAMES[(packed >>> 9) & 1]!,
    });
  }
  const cursor = n >= from ? encodeCursor(CursorKind.trades, n + 1, scope) : '';
  return { trades: out, cursor, as_of_seq: String(v.state.seq) };
}

// ---- candlesticks ---------------------------------------------------------------------

/** Length of each candle period in seconds. */
export const CANDLE_PERIOD_S: Readonly<Record<Candlesticks['period'], number>> = Object.freeze({
  '1m': 60, '5m': 300, '1h': 3600, '1d': 86400,
});

/** Most periods one request may span (empty ones included). */
export const MAX_CANDLE_PERIODS = 5000;

/** The market's candles, oldest first; null for an unknown market. Throws ViewError invalid_field for a bad range. */
export function candlesticks(v: ViewsData, id: number, q: CandlesQuery): Candlesticks | null {
  const periodNs = BigInt(CANDLE_PERIOD_S[q.period]) * 1_000_000_000n;
  const start = q.start_ts ? hiLoToBigInt(q.start_ts[0], q.start_ts[1]) : -1n;
  let end: bigint;
  if (q.end_ts) {
    end = hiLoToBigInt(q.end_ts[0], q.end_ts[1]);
    if (start > end) throw new ViewError('invalid_field', 'start_ts', `must be at most end_ts (${end})`);
  } else {
    // Now, as far as the exchange knows; never before start_ts (a client's clock may run ahead of the last event).
    end = hiLoToBigInt(v.state.tsHi, v.state.tsLo);
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
  if (!marketExists(v.state, id)) return null;

  const out: Candlesticks['candles'] = [];
  let bucket = -1n;
  let open = 0;
  let high = 0;
  let low = 0;
  let close = 0;
  let volume = 0;
  let count = 0;
  const flush = (): void => {
    if (count > 0) out.push({ start_ts: String(bucket * periodNs), open, high, low, close, volume: String(volume), trade_count: count });
  };
  const tape = v.tapes;
  const evicted = tape.retainedFrom(id);
  let oldest = '0';
  // The retained tape, oldest first.
  for (let n = evicted; n < tape.totalOf(id); n++) {
    const r = tape.slotOf(id, n);
    const ns = hiLoToBigInt(tape.u32At(r, TU_TS_HI), tape.u32At(r, TU_TS_LO));
    if (n === evicted) oldest = String(ns);
    const b = ns / periodNs;
    if (b < first || b > last) continue;
    const tickYes = tape.u32At(r, TU_PACKED) & 0xff;
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
    volume += tape.u32At(r, TU_QTY);
    count++;
  }
  flush();
  return {
    market_id: id, period: q.period, candles: out, retained_from_ts: oldest, truncated: evicted > 0, as_of_seq: String(v.state.seq),
  };
}
