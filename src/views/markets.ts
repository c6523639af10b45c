// markets: the market queries of the read model: the market list, one
// market, the order book (and the level totals the WebSocket fan-out
// compares), and the operator's market list, read from the folded engine
// state. Runs on the thread that owns the Views.

import { Book, LADDER_ROW } from '../book/book.js';
import { MARKET_STATUS_NAMES, RoundStatus } from '../layout/records.js';
import { hiLoToString } from '../lib/u64.js';
import type { AdminMarket, AdminMarkets } from '../wire/control_plane.js';
import type { Level, Market, MarketsPage, MarketWithSeq, Orderbook } from '../wire/responses.js';
import { CursorKind, cursorScope, decodeCursor, encodeCursor } from './cursor.js';
import { checkLimit, marketExists, statusMask, type MarketsQuery, type ViewsData } from './model.js';
import { marketRound } from './rounds.js';

/** Widest bid/ask spread (ticks) for which display_tick is the midpoint. */
const DISPLAY_MAX_SPREAD = 10;

/** MarketStatus of a market: its current round's status while not terminal, else closed. */
function marketStatus(v: ViewsData, id: number): number {
  const st = v.state.markets.roundStatus(id);
  return st >= RoundStatus.trading && st <= RoundStatus.proposed ? st : 0;
}

function marketView(v: ViewsData, id: number): Market {
  const mk = v.state.markets;
  const best = v.state.book.best;
  const bid = best[id << 1]!;
  const noBid = best[(id << 1) | 1]!;
  const ask = noBid === 0 ? 0 : 100 - noBid;
  const last = mk.lastTickYes[id]!;
  const display = bid !== 0 && ask !== 0 && ask - bid <= DISPLAY_MAX_SPREAD ? Math.floor((bid + ask) / 2) : last;
  // The current round in any status (the one GET /v1/rounds/{market_id} answers).
  const r = mk.round[id]!;
  return {
    market_id: id,
    title: mk.title[id]!,
    category: mk.category[id]!,
    status: MARKET_STATUS_NAMES[marketStatus(v, id)]!,
    best_yes_bid: bid,
    best_yes_ask: ask,
    display_tick: display,
    last_tick_yes: last,
    volume: String(mk.volume[id]!),
    open_interest: String(mk.openInterest[id]!),
    position_limit: mk.positionLimit[id]!,
    fee_schedule_id: mk.feeSchedule[id]!,
    close_ts: r < 0 ? '0' : hiLoToString(mk.rCloseHi[r]!, mk.rCloseLo[r]!),
    round_number: r < 0 ? '0' : String(mk.rNumber[r]!),
  };
}

/** Markets in ascending market_id, optionally filtered by status. */
export function marketsPage(v: ViewsData, q: MarketsQuery): MarketsPage {
  checkLimit(q.limit);
  const mask = statusMask('status', q.status, MARKET_STATUS_NAMES);
  const scope = cursorScope(0, q);
  const after = decodeCursor(CursorKind.markets, q.cursor, scope);
  const out: Market[] = [];
  const count = v.state.markets.count;
  let cursor = '';
  for (let id = Math.max(after + 1, 1); id <= count; id++) {
    if ((mask & (1 << marketStatus(v, id))) === 0) continue;
    if (out.length === q.limit) {
      cursor = encodeCursor(CursorKind.markets, out[out.length - 1]!.market_id, scope);
      break;
    }
    out.push(marketView(v, id));
  }
  return { markets: out, cursor, as_of_seq: String(v.state.seq) };
}

export function market(v: ViewsData, id: number): MarketWithSeq | null {
  if (!marketExists(v.state, id)) return null;
  return { ...marketView(v, id), as_of_seq: String(v.state.seq) };
}

/** Every market in ascending market_id with its current round and round length. O(markets); operator read. */
export function adminMarkets(v: ViewsData): AdminMarkets {
  const mk = v.state.markets;
  const out: AdminMarket[] = [];
  for (let id = 1; id <= mk.count; id++) {
    out.push({ ...marketView(v, id), round: marketRound(v, id), series_period_s: mk.seriesPeriodS[id]! });
  }
  return { markets: out, as_of_seq: String(v.state.seq) };
}

/** Bids of both ladders, best first, at most `depth` levels each (1..99). */
export function orderbook(v: ViewsData, id: number, depth: number): Orderbook | null {
  if (!marketExists(v.state, id)) return null;
  return { market_id: id, yes: ladder(v, id, 0, depth), no: ladder(v, id, 1, depth), as_of_seq: String(v.state.seq) };
}

function ladder(v: ViewsData, id: number, side: number, depth: number): Level[] {
  const book = v.state.book;
  const out: Level[] = [];
  for (let t = book.best[(id << 1) | side]!; t >= 1 && out.length < depth; t--) {
    const lv = Book.level(id, side, t);
    if (book.levelCount[lv] !== 0) out.push([t, book.levelQty[lv]!]);
  }
  return out;
}

/** Ticks per row of bookLevels' output: index ladder * BOOK_ROW + tick, ticks 1..99 (index 0 of each row is 0). */
export const BOOK_ROW = LADDER_ROW;

/**
 * The aggregate shares resting at every level of the market into out
 * (2 * BOOK_ROW numbers, 0 where none): what the fan-out's book deltas
 * compare after each command. One pass, nothing allocated.
 */
export function bookLevels(v: ViewsData, id: number, out: Float64Array): void {
  const book = v.state.book;
  const qty = book.levelQty;
  const count = book.levelCount;
  const base = Book.level(id, 0, 0);
  for (let i = 0; i < 2 * LADDER_ROW; i++) out[i] = count[base + i] !== 0 ? qty[base + i]! : 0;
}

/**
 * Brings `mirror` (a copy of bookLevels' output) up to the market's book in
 * one pass: the indexes that changed go to changed[0..n) in ascending order,
 * their previous totals to was[0..n); returns n. The fan-out's book deltas
 * after each command; nothing allocated.
 */
export function diffBookLevels(v: ViewsData, id: number, mirror: Float64Array, changed: Int32Array, was: Float64Array): number {
  const book = v.state.book;
  const qty = book.levelQty;
  const count = book.levelCount;
  const base = Book.level(id, 0, 0);
  let n = 0;
  for (let i = 1; i < 2 * LADDER_ROW; i++) {
    const now = count[base + i] !== 0 ? qty[base + i]! : 0;
    const before = mirror[i]!;
    if (now === before) continue;
    mirror[i] = now;
    changed[n] = i;
    was[n] = before;
    n++;
  }
  return n;
}
