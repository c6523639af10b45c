// tape: the public trade tape projection: per market, the newest tape_cap
// trades (one record per Filled event) in a RecordRing, and the query that
// pages it newest first. Runs on the thread that owns the Views.

import type { TradesPage } from '../wire/responses.js';
import { Filled, Header, OUTCOME_NAMES, SIDE_NAMES } from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { hiLoToString } from '../lib/u64.js';
import { CursorKind, decodeCursor, encodeCursor } from './cursor.js';
import { checkLimit, marketExists, type PageQuery, type ViewsData } from './model.js';
import { RecordRing } from './record_ring.js';

// Trade record (one per Filled event on its market's tape).
const TF_SEQ = 0;
const TAPE_F64 = 1;
const TU_TS_HI = 0;
const TU_TS_LO = 1;
const TU_QTY = 2;
/** tick_yes bits 0-7, taker side bit 8, taker outcome bit 9. */
const TU_PACKED = 3;
const TAPE_U32 = 4;

/** Fold: appends the trade of a Filled event (at byte offset o of m) to its market's tape. */
export function recordTrade(v: ViewsData, m: Mem, o: number): void {
  const market = Filled.market_id(m, o);
  let tape = v.tapes[market];
  if (tape === undefined) {
    tape = new RecordRing(v.config.tape_cap, TAPE_F64, TAPE_U32, 64);
    v.tapes[market] = tape;
  }
  const i = tape.push();
  tape.f64[i * TAPE_F64 + TF_SEQ] = Header.seq(m, o);
  const u = i * TAPE_U32;
  tape.u32[u + TU_TS_HI] = Header.ts_hi(m, o);
  tape.u32[u + TU_TS_LO] = Header.ts_lo(m, o);
  tape.u32[u + TU_QTY] = Filled.qty(m, o);
  tape.u32[u + TU_PACKED] = Filled.tick_yes(m, o) | (Filled.taker_side(m, o) << 8) | (Filled.taker_outcome(m, o) << 9);
}

/** The market's tape, newest first (sort key: the trade's ordinal on the tape); null when the market does not exist. */
export function tradesPage(v: ViewsData, id: number, q: PageQuery): TradesPage | null {
  checkLimit(q.limit);
  if (!marketExists(v.state, id)) return null;
  const before = decodeCursor(CursorKind.trades, q.cursor);
  const out: TradesPage['trades'] = [];
  const tape = v.tapes[id];
  let cursor = '';
  if (tape !== undefined) {
    let n = before < 0 || before > tape.total ? tape.total - 1 : before - 1;
    const from = tape.retainedFrom;
    for (; n >= from && out.length < q.limit; n--) {
      const i = tape.slotOf(n);
      const u = i * TAPE_U32;
      const packed = tape.u32[u + TU_PACKED]!;
      out.push({
        seq: String(tape.f64[i * TAPE_F64 + TF_SEQ]!),
        ts: hiLoToString(tape.u32[u + TU_TS_HI]!, tape.u32[u + TU_TS_LO]!),
        market_id: id,
        tick_yes: packed & 0xff,
        qty: tape.u32[u + TU_QTY]!,
        taker_side: SIDE_NAMES[(packed >>> 8) & 1]!,
        taker_outcome: OUTCOME_NAMES[(packed >>> 9) & 1]!,
      });
    }
    if (n >= from) cursor = encodeCursor(CursorKind.trades, n + 1);
  }
  return { trades: out, cursor, as_of_seq: String(v.state.seq) };
}
