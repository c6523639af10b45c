// Views: the read models. One instance per gateway thread (and one on the
// control-plane thread), fed every event of the broadcast ring in seq order by
// the thread that owns it; nothing else touches it.
//
// It owns an ExchangeState, folded with the engine's own evolve (so it is the
// engine's state as of `asOfSeq`), plus projections the engine does not keep:
//   - the public trade tape of every market (newest tape_cap trades),
//   - the fills of every account, in both roles (newest fill_cap fills),
//   - each account's position slots (the state indexes positions only by
//     (account, market), so listing an account's positions needs this list).
// The queries render plain JSON-ready objects in the wire shapes of the spec
// (spec/exchange-rest-api.md) and DESIGN.md: u64-domain values (ids, seq,
// cents, timestamps, volume, open interest, strike, prices) as decimal
// strings, small integers as numbers, enums by name, never a float.
//
// Invariants:
//   - apply() is called for every event, whole commands at a time, before any
//     read; a read between two events of one command would see half a
//     command (gateways apply up to a CommandCompleted before serving).
//   - apply() allocates nothing in steady state: rings grow by doubling up to
//     their caps and are then reused; a ring is created at an account's or a
//     market's first fill.
//   - Queries never mutate anything (they may allocate their answer).
//   - Every list is served newest first (descending sort key) except markets
//     and positions, which are served in ascending market_id (then yes before
//     no): they have no "newest". Cursors are strict (see cursor.ts).

import { createHash } from 'node:crypto';
import { Book } from '../book/book.js';
import { NIL } from '../book/orders.js';
import type { EngineConfig } from '../engine/config.js';
import { evolve } from '../engine/evolve.js';
import { ExchangeState } from '../engine/state.js';
import {
  CANCEL_REASON_NAMES, CODES, Filled, Header, MARKET_STATUS_NAMES, ORDER_STATUS_NAMES, OUTCOME_NAMES, OrderFlag,
  OrderStatus, Outcome, PATH_NAMES, ROUND_OUTCOME_NAMES, ROUND_STATUS_NAMES, RoundStatus, SCOPE_BITS, SIDE_NAMES,
  STP_NAMES, Side, Stp, T_FILLED, TIF_NAMES, Tif, WITHDRAWAL_STATUS_NAMES,
} from '../layout/records.js';
import { assert } from '../lib/assert.js';
import { grown, nextCapacity } from '../lib/grow.js';
import type { Mem } from '../lib/mem.js';
import { hiLoToString } from '../lib/u64.js';
import { CursorKind, ViewError, decodeCursor, encodeCursor } from './cursor.js';
import { RecordRing } from './record_ring.js';

export { ViewError } from './cursor.js';

// ---- configuration ---------------------------------------------------------

export interface ViewsConfig {
  /** Trades retained per market on the public tape. */
  tape_cap: number;
  /** Fills retained per account (both roles together). */
  fill_cap: number;
}

export const DEFAULT_VIEWS_CONFIG: Readonly<ViewsConfig> = Object.freeze({ tape_cap: 1000, fill_cap: 1000 });

// ---- wire shapes -----------------------------------------------------------

export interface Page {
  cursor: string;
  as_of_seq: string;
}
export interface PageQuery {
  cursor?: string;
  /** 1..1000, validated by the gateway. */
  limit: number;
}

export interface MarketView {
  market_id: number;
  title: string;
  category: number;
  status: string;
  best_yes_bid: number;
  best_yes_ask: number;
  display_tick: number;
  last_tick_yes: number;
  volume: string;
  open_interest: string;
  position_limit: number;
  fee_schedule_id: number;
  close_ts: string;
  round_number: string;
}

export interface RoundView {
  round_number: string;
  market_id: number;
  category: number;
  status: string;
  strike: string;
  open_ts: string;
  close_ts: string;
  outcome: string;
  settle_price: string;
  proposed_ts: string;
  settled_ts: string;
}

export interface SeriesView {
  category: number;
  market_id: number;
  title: string;
  period_s: number;
  /** False once stopped: the current round runs to its end and no next round opens. */
  active: boolean;
  round: RoundView | null;
}

export interface OrderbookView {
  market_id: number;
  yes: [number, number][];
  no: [number, number][];
  as_of_seq: string;
}

export interface TradeItem {
  seq: string;
  ts: string;
  market_id: number;
  tick_yes: number;
  qty: number;
  taker_side: string;
  taker_outcome: string;
}

export interface PositionItem {
  market_id: number;
  outcome: string;
  free: number;
  reserved_for_sale: number;
}

export interface FillItem {
  fill_id: string;
  seq: string;
  ts: string;
  order_id: string;
  client_order_id: string;
  market_id: number;
  side: string;
  outcome: string;
  role: string;
  tick_yes: number;
  tick: number;
  qty: number;
  fee: string;
  path: string;
}

export interface OrderItem {
  order_id: string;
  client_order_id: string;
  market_id: number;
  tick: number;
  qty: number;
  expiry_ts: string;
  max_cost: string;
  group_id: number;
  flags: number;
  reason: string;
  filled_qty: number;
  remaining_qty: number;
  created_seq: string;
  created_ts: string;
  last_update_seq: string;
  side: string;
  outcome: string;
  tif: string;
  post_only: boolean;
  stp: string;
}

export interface WithdrawalView {
  wid: string;
  client_withdrawal_id: string;
  /** pending, confirmed or failed. */
  status: string;
  amount: string;
  destination: string;
  /** The seq that requested it. */
  seq: string;
  as_of_seq: string;
}

export interface KeyItem {
  key_id: number;
  scopes: string[];
  revoked: boolean;
}

export interface KeyInfo {
  account_id: number;
  /** Scope bits (Scope enum). */
  scopes: number;
  revoked: boolean;
  /** 32-byte view into the state's key table: valid until the next apply(); never keep it. */
  secret: Uint8Array;
}

export interface MarketsQuery extends PageQuery {
  /** Market status names (closed, trading, frozen, proposed); any of them matches. */
  status?: string[];
}
export interface RoundsQuery extends PageQuery {
  category?: number;
}
export interface PositionsQuery extends PageQuery {
  market_id?: number;
}
export interface FillsQuery extends PageQuery {
  market_id?: number;
  order_id?: number;
}
export interface OrdersQuery extends PageQuery {
  market_id?: number;
  /** Order status names (resting, partially_filled, filled, canceled, rejected); any of them matches. */
  status?: string[];
  /** [hi, lo] halves of the client_order_id. */
  client_order_id?: [number, number];
}

// ---- ring record layouts ---------------------------------------------------

// Fill record (one per party per Filled event).
const FF_FILL_ID = 0;
const FF_SEQ = 1;
const FF_ORDER_ID = 2;
const FF_FEE = 3;
const FILL_F64 = 4;
const FU_TS_HI = 0;
const FU_TS_LO = 1;
const FU_COID_HI = 2;
const FU_COID_LO = 3;
const FU_MARKET = 4;
const FU_QTY = 5;
/** side bit 0, outcome bit 1, role bit 2 (1 = taker), path bits 3-4, has coid bit 5, tick_yes bits 8-15, own tick bits 16-23. */
const FU_PACKED = 6;
const FILL_U32 = 7;

// Trade record (one per Filled event on its market's tape).
const TF_SEQ = 0;
const TAPE_F64 = 1;
const TU_TS_HI = 0;
const TU_TS_LO = 1;
const TU_QTY = 2;
/** tick_yes bits 0-7, taker side bit 8, taker outcome bit 9. */
const TU_PACKED = 3;
const TAPE_U32 = 4;

const ROLE_NAMES: readonly string[] = ['maker', 'taker'];
/** Widest bid/ask spread (ticks) for which display_tick is the midpoint. */
const DISPLAY_MAX_SPREAD = 10;

function codeName(num: number): string {
  for (const c of CODES) if (c.num === num) return c.code;
  return '';
}

/** The gateway validates limit (1..1000); anything else here is our bug. */
function checkLimit(limit: number): void {
  assert(Number.isInteger(limit) && limit >= 1, 'views: limit must be a positive integer');
}

/** Bit mask of the names' indexes in `names`; throws invalid_field on an unknown name. */
function statusMask(field: string, values: readonly string[] | undefined, names: readonly string[]): number {
  if (values === undefined || values.length === 0) return -1;
  let mask = 0;
  for (const v of values) {
    const i = names.indexOf(v);
    if (i < 0) throw new ViewError('invalid_field', field, `unknown status ${JSON.stringify(v)}; one of ${names.join(', ')}`);
    mask |= 1 << i;
  }
  return mask;
}

// ---- the read model --------------------------------------------------------

export class Views {
  readonly state: ExchangeState;
  readonly config: ViewsConfig;
  /** Public tape per market (index = market_id), created at the market's first trade. */
  private readonly tapes: (RecordRing | undefined)[] = [];
  /** Fills per account (index = account_id), created at the account's first fill. */
  private readonly fillRings: (RecordRing | undefined)[] = [];
  // Each account's position slots, linked in creation order.
  private posSeen = 0;
  private posHead = new Int32Array(0);
  private posTail = new Int32Array(0);
  private posNext = new Int32Array(0);
  /** Lowest round index that may not be evicted (eviction only ever moves it up). */
  private roundLow = 0;

  constructor(engine: Partial<EngineConfig> = {}, views: Partial<ViewsConfig> = {}) {
    this.state = new ExchangeState(engine);
    this.config = { ...DEFAULT_VIEWS_CONFIG, ...views };
    assert(Number.isInteger(this.config.tape_cap) && this.config.tape_cap >= 1, 'views: tape_cap >= 1');
    assert(Number.isInteger(this.config.fill_cap) && this.config.fill_cap >= 1, 'views: fill_cap >= 1');
    this.posHead = grown(this.posHead, nextCapacity(0, this.state.config.account_capacity), NIL);
    this.posTail = grown(this.posTail, this.posHead.length, NIL);
    this.posNext = grown(this.posNext, nextCapacity(0, this.state.config.account_capacity), NIL);
  }

  /** The seq of the last applied event: every answer is as of it. */
  get asOfSeq(): number {
    return this.state.seq;
  }

  // ---- folding ---------------------------------------------------------------

  /** Applies one event record (at byte offset o of m) to the state and the projections. */
  apply(m: Mem, o: number): void {
    // A fill is recorded before evolve: evolve may retire the parties and,
    // with a small terminal_cap, evict them from the slab at once.
    if (Header.type(m, o) === T_FILLED) this.recordFill(m, o);
    evolve(this.state, m, o);
    if (this.state.accounts.posCount !== this.posSeen) this.linkNewPositions();
  }

  private recordFill(m: Mem, o: number): void {
    const s = this.state;
    const maker = s.slotOf(Filled.maker_order_id(m, o));
    const taker = s.slotOf(Filled.taker_order_id(m, o));
    assert(maker >= 0 && taker >= 0, 'views: filled orders exist');
    const fillId = Filled.fill_id(m, o);
    const seq = Header.seq(m, o);
    const tsHi = Header.ts_hi(m, o);
    const tsLo = Header.ts_lo(m, o);
    const market = Filled.market_id(m, o);
    const qty = Filled.qty(m, o);
    const tickYes = Filled.tick_yes(m, o);
    const path = Filled.path(m, o);
    this.pushFill(Filled.maker_account(m, o), maker, 0, Filled.maker_fee(m, o), fillId, seq, tsHi, tsLo, market, qty, tickYes, path);
    this.pushFill(Filled.taker_account(m, o), taker, 1, Filled.taker_fee(m, o), fillId, seq, tsHi, tsLo, market, qty, tickYes, path);

    let tape = this.tapes[market];
    if (tape === undefined) {
      tape = new RecordRing(this.config.tape_cap, TAPE_F64, TAPE_U32, 64);
      this.tapes[market] = tape;
    }
    const i = tape.push();
    tape.f64[i * TAPE_F64 + TF_SEQ] = seq;
    const u = i * TAPE_U32;
    tape.u32[u + TU_TS_HI] = tsHi;
    tape.u32[u + TU_TS_LO] = tsLo;
    tape.u32[u + TU_QTY] = qty;
    tape.u32[u + TU_PACKED] = tickYes | (Filled.taker_side(m, o) << 8) | (Filled.taker_outcome(m, o) << 9);
  }

  private pushFill(
    account: number, slot: number, role: number, fee: number, fillId: number, seq: number, tsHi: number, tsLo: number,
    market: number, qty: number, tickYes: number, path: number,
  ): void {
    const ord = this.state.orders;
    let ring = this.fillRings[account];
    if (ring === undefined) {
      ring = new RecordRing(this.config.fill_cap, FILL_F64, FILL_U32, 16);
      this.fillRings[account] = ring;
    }
    const i = ring.push();
    const f = i * FILL_F64;
    ring.f64[f + FF_FILL_ID] = fillId;
    ring.f64[f + FF_SEQ] = seq;
    ring.f64[f + FF_ORDER_ID] = ord.id[slot]!;
    ring.f64[f + FF_FEE] = fee;
    const u = i * FILL_U32;
    const outcome = ord.outcome[slot]!;
    // Both parties trade at one YES-space price; an order's own price is its outcome's side of it.
    const tick = outcome === Outcome.yes ? tickYes : 100 - tickYes;
    ring.u32[u + FU_TS_HI] = tsHi;
    ring.u32[u + FU_TS_LO] = tsLo;
    ring.u32[u + FU_COID_HI] = ord.coidHi[slot]!;
    ring.u32[u + FU_COID_LO] = ord.coidLo[slot]!;
    ring.u32[u + FU_MARKET] = market;
    ring.u32[u + FU_QTY] = qty;
    ring.u32[u + FU_PACKED] = ord.side[slot]! | (outcome << 1) | (role << 2) | (path << 3) | (ord.hasCoid[slot]! << 5) | (tickYes << 8) | (tick << 16);
  }

  /** Links position slots created since the last event into their account's list (slots are never freed). */
  private linkNewPositions(): void {
    const acc = this.state.accounts;
    const n = acc.posCount;
    if (n > this.posNext.length) this.posNext = grown(this.posNext, nextCapacity(this.posNext.length, n), NIL);
    for (let p = this.posSeen; p < n; p++) {
      const a = acc.pAccount[p]!;
      if (a >= this.posHead.length) {
        const cap = nextCapacity(this.posHead.length, a + 1);
        this.posHead = grown(this.posHead, cap, NIL);
        this.posTail = grown(this.posTail, cap, NIL);
      }
      const tail = this.posTail[a]!;
      if (tail === NIL) this.posHead[a] = p;
      else this.posNext[tail] = p;
      this.posTail[a] = p;
      this.posNext[p] = NIL;
    }
    this.posSeen = n;
  }

  // ---- exchange ----------------------------------------------------------------

  exchangeStatus(): { exchange_active: true; as_of_seq: string } {
    return { exchange_active: true, as_of_seq: String(this.state.seq) };
  }

  retention(): { tape_cap: number; terminal_cap: number; reject_cap: number; fill_cap: number } {
    const c = this.state.config;
    return { tape_cap: this.config.tape_cap, terminal_cap: c.terminal_cap, reject_cap: c.reject_cap, fill_cap: this.config.fill_cap };
  }

  // ---- markets -----------------------------------------------------------------

  private marketExists(id: number): boolean {
    return Number.isInteger(id) && this.state.markets.exists(id);
  }

  /** MarketStatus of a market: its current round's status while not terminal, else closed. */
  private marketStatus(id: number): number {
    const st = this.state.markets.roundStatus(id);
    return st >= RoundStatus.trading && st <= RoundStatus.proposed ? st : 0;
  }

  private marketView(id: number): MarketView {
    const mk = this.state.markets;
    const best = this.state.book.best;
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
      status: MARKET_STATUS_NAMES[this.marketStatus(id)]!,
      best_yes_bid: bid,
      best_yes_ask: ask,
      display_tick: display,
      last_tick_yes: last,
      volume: String(mk.volume[id]!),
      open_interest: String(mk.openInterest[id]!),
      position_limit: mk.positionLimit[id]!,
      fee_schedule_id: mk.feeSchedule[id]!,
      close_ts: r < 0 ? '0' : hiLoToString(mk.rCloseHi[r]!, mk.rCloseLo[r]!),
      round_number: String(r + 1),
    };
  }

  /** Markets in ascending market_id, optionally filtered by status. */
  markets(q: MarketsQuery): { markets: MarketView[] } & Page {
    checkLimit(q.limit);
    const mask = statusMask('status', q.status, MARKET_STATUS_NAMES);
    const after = decodeCursor(CursorKind.markets, q.cursor);
    const out: MarketView[] = [];
    const count = this.state.markets.count;
    let cursor = '';
    for (let id = Math.max(after + 1, 1); id <= count; id++) {
      if ((mask & (1 << this.marketStatus(id))) === 0) continue;
      if (out.length === q.limit) {
        cursor = encodeCursor(CursorKind.markets, out[out.length - 1]!.market_id);
        break;
      }
      out.push(this.marketView(id));
    }
    return { markets: out, cursor, as_of_seq: String(this.state.seq) };
  }

  market(id: number): (MarketView & { as_of_seq: string }) | null {
    if (!this.marketExists(id)) return null;
    return { ...this.marketView(id), as_of_seq: String(this.state.seq) };
  }

  /** Bids of both ladders, best first, at most `depth` levels each (1..99). */
  orderbook(id: number, depth: number): OrderbookView | null {
    if (!this.marketExists(id)) return null;
    return { market_id: id, yes: this.ladder(id, 0, depth), no: this.ladder(id, 1, depth), as_of_seq: String(this.state.seq) };
  }

  private ladder(id: number, ladder: number, depth: number): [number, number][] {
    const book = this.state.book;
    const out: [number, number][] = [];
    for (let t = book.best[(id << 1) | ladder]!; t >= 1 && out.length < depth; t--) {
      const lv = Book.level(id, ladder, t);
      if (book.levelCount[lv] !== 0) out.push([t, book.levelQty[lv]!]);
    }
    return out;
  }

  /** The market's public tape, newest first (sort key: the trade's ordinal on the tape). */
  trades(id: number, q: PageQuery): { trades: TradeItem[] } & Page | null {
    checkLimit(q.limit);
    if (!this.marketExists(id)) return null;
    const before = decodeCursor(CursorKind.trades, q.cursor);
    const out: TradeItem[] = [];
    const tape = this.tapes[id];
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
    return { trades: out, cursor, as_of_seq: String(this.state.seq) };
  }

  /**
   * Visits the market's retained tape oldest first (aggregations such as
   * candles.ts): ts halves, tick_yes and qty of each trade. Returns how many
   * older trades the tape evicted (tape_cap), -1 for an unknown market.
   */
  visitTape(id: number, visit: (tsHi: number, tsLo: number, tickYes: number, qty: number) => void): number {
    if (!this.marketExists(id)) return -1;
    const tape = this.tapes[id];
    if (tape === undefined) return 0;
    for (let n = tape.retainedFrom; n < tape.total; n++) {
      const u = tape.slotOf(n) * TAPE_U32;
      visit(tape.u32[u + TU_TS_HI]!, tape.u32[u + TU_TS_LO]!, tape.u32[u + TU_PACKED]! & 0xff, tape.u32[u + TU_QTY]!);
    }
    return tape.retainedFrom;
  }

  // ---- oracle and rounds ---------------------------------------------------------

  oraclePrice(): { price: string; fresh_source_count: number; seq: string } {
    const mk = this.state.markets;
    // Before the first tick these are 0, 0, 0: the spec's zero sentinel.
    return { price: String(mk.oraclePrice), fresh_source_count: mk.oracleFresh, seq: String(mk.oracleSeq) };
  }

  private roundView(r: number): RoundView {
    const mk = this.state.markets;
    const market = mk.rMarket[r]!;
    const outcome = mk.rOutcome[r]!;
    return {
      round_number: String(r + 1),
      market_id: market,
      category: mk.category[market]!,
      status: ROUND_STATUS_NAMES[mk.rStatus[r]!]!,
      strike: String(mk.rStrike[r]!),
      open_ts: hiLoToString(mk.rOpenHi[r]!, mk.rOpenLo[r]!),
      close_ts: hiLoToString(mk.rCloseHi[r]!, mk.rCloseLo[r]!),
      outcome: outcome === 0 ? '' : ROUND_OUTCOME_NAMES[outcome]!,
      settle_price: String(mk.rSettlePrice[r]!),
      proposed_ts: hiLoToString(mk.rProposedHi[r]!, mk.rProposedLo[r]!),
      settled_ts: hiLoToString(mk.rSettledHi[r]!, mk.rSettledLo[r]!),
    };
  }

  /** Retained rounds in descending round_number, optionally of one category (series). */
  rounds(q: RoundsQuery): { rounds: RoundView[] } & Page {
    checkLimit(q.limit);
    const mk = this.state.markets;
    const before = decodeCursor(CursorKind.rounds, q.cursor);
    while (this.roundLow < mk.roundCount && mk.rEvicted[this.roundLow] === 1) this.roundLow++;
    const out: RoundView[] = [];
    let cursor = '';
    // Round index r has round_number r + 1.
    let r = before < 0 || before > mk.roundCount ? mk.roundCount - 1 : before - 2;
    for (; r >= this.roundLow; r--) {
      if (mk.rEvicted[r] === 1) continue;
      if (q.category !== undefined && mk.category[mk.rMarket[r]!] !== q.category) continue;
      if (out.length === q.limit) {
        cursor = encodeCursor(CursorKind.rounds, r + 2);
        break;
      }
      out.push(this.roundView(r));
    }
    return { rounds: out, cursor, as_of_seq: String(this.state.seq) };
  }

  /**
   * Every series (markets whose rounds open by themselves), ascending by
   * market_id: category, round length, whether it still opens rounds, and its
   * current round (null before the first or once evicted). Operator read.
   */
  series(): { series: SeriesView[]; as_of_seq: string } {
    const mk = this.state.markets;
    const out: SeriesView[] = [];
    for (let id = 1; id <= mk.count; id++) {
      const period = mk.seriesPeriodS[id]!;
      if (period === 0) continue;
      const r = mk.round[id]!;
      out.push({
        category: mk.category[id]!, market_id: id, title: mk.title[id]!, period_s: period, active: mk.seriesActive[id] === 1,
        round: r < 0 || mk.rEvicted[r] === 1 ? null : this.roundView(r),
      });
    }
    return { series: out, as_of_seq: String(this.state.seq) };
  }

  /** One round by round_number (WebSocket rounds channel); null when unknown or evicted. */
  roundRecord(roundNumber: number): RoundView | null {
    const mk = this.state.markets;
    if (!Number.isInteger(roundNumber) || roundNumber < 1 || roundNumber > mk.roundCount || mk.rEvicted[roundNumber - 1] === 1) return null;
    return this.roundView(roundNumber - 1);
  }

  /** The market's current round in any status; null when unknown market, no round yet, or evicted. */
  round(marketId: number): (RoundView & { as_of_seq: string }) | null {
    if (!this.marketExists(marketId)) return null;
    const r = this.state.markets.round[marketId]!;
    if (r < 0 || this.state.markets.rEvicted[r] === 1) return null;
    return { ...this.roundView(r), as_of_seq: String(this.state.seq) };
  }

  // ---- accounts: money and positions ---------------------------------------------------

  private accountKnown(account: number): boolean {
    return Number.isInteger(account) && account >= 1 && account <= this.state.accounts.count;
  }

  /** True when the account exists and is not deleted. */
  accountLive(account: number): boolean {
    return Number.isInteger(account) && this.state.accounts.isLive(account);
  }

  balance(account: number): { available: string; reserved: string; as_of_seq: string } {
    const acc = this.state.accounts;
    const known = this.accountKnown(account);
    return {
      available: known ? String(acc.available[account]!) : '0',
      reserved: known ? String(acc.reserved[account]!) : '0',
      as_of_seq: String(this.state.seq),
    };
  }

  /** Every non-empty (market, outcome) of the account, ascending by market then yes before no; sort key market_id * 2 + outcome. */
  private positionEntries(account: number, market: number | undefined, after: number): { key: number; item: PositionItem }[] {
    const acc = this.state.accounts;
    const out: { key: number; item: PositionItem }[] = [];
    if (!this.accountKnown(account) || account >= this.posHead.length) return out;
    const add = (p: number): void => {
      const m = acc.pMarket[p]!;
      for (let outcome = 0; outcome < 2; outcome++) {
        const key = m * 2 + outcome;
        if (key <= after) continue;
        const free = acc.pFree[2 * p + outcome]!;
        const res = acc.pReserved[2 * p + outcome]!;
        if (free === 0 && res === 0) continue;
        out.push({ key, item: { market_id: m, outcome: OUTCOME_NAMES[outcome]!, free, reserved_for_sale: res } });
      }
    };
    if (market !== undefined) {
      const p = Number.isInteger(market) && market >= 0 ? acc.findPosition(account, market) : -1;
      if (p >= 0) add(p);
    } else {
      for (let p = this.posHead[account]!; p !== NIL; p = this.posNext[p]!) add(p);
      out.sort((x, y) => x.key - y.key);
    }
    return out;
  }

  positions(account: number, q: PositionsQuery): { positions: PositionItem[] } & Page {
    checkLimit(q.limit);
    const after = decodeCursor(CursorKind.positions, q.cursor);
    const all = this.positionEntries(account, q.market_id, after);
    const page = all.slice(0, q.limit);
    const cursor = all.length > q.limit ? encodeCursor(CursorKind.positions, page[page.length - 1]!.key) : '';
    return { positions: page.map((e) => e.item), cursor, as_of_seq: String(this.state.seq) };
  }

  // ---- fills -------------------------------------------------------------------

  /** The account's fills in both roles, newest first (sort key: the fill's ordinal in the account's ring). */
  fills(account: number, q: FillsQuery): { fills: FillItem[] } & Page {
    checkLimit(q.limit);
    const before = decodeCursor(CursorKind.fills, q.cursor);
    const out: FillItem[] = [];
    let cursor = '';
    const ring = this.accountKnown(account) ? this.fillRings[account] : undefined;
    if (ring !== undefined) {
      const from = ring.retainedFrom;
      for (let n = before < 0 || before > ring.total ? ring.total - 1 : before - 1; n >= from; n--) {
        const i = ring.slotOf(n);
        const u = i * FILL_U32;
        const f = i * FILL_F64;
        if (q.market_id !== undefined && ring.u32[u + FU_MARKET] !== q.market_id) continue;
        if (q.order_id !== undefined && ring.f64[f + FF_ORDER_ID] !== q.order_id) continue;
        if (out.length === q.limit) {
          cursor = encodeCursor(CursorKind.fills, n + 1);
          break;
        }
        const packed = ring.u32[u + FU_PACKED]!;
        out.push({
          fill_id: String(ring.f64[f + FF_FILL_ID]!),
          seq: String(ring.f64[f + FF_SEQ]!),
          ts: hiLoToString(ring.u32[u + FU_TS_HI]!, ring.u32[u + FU_TS_LO]!),
          order_id: String(ring.f64[f + FF_ORDER_ID]!),
          client_order_id: (packed >>> 5) & 1 ? hiLoToString(ring.u32[u + FU_COID_HI]!, ring.u32[u + FU_COID_LO]!) : '0',
          market_id: ring.u32[u + FU_MARKET]!,
          side: SIDE_NAMES[packed & 1]!,
          outcome: OUTCOME_NAMES[(packed >>> 1) & 1]!,
          role: ROLE_NAMES[(packed >>> 2) & 1]!,
          tick_yes: (packed >>> 8) & 0xff,
          tick: (packed >>> 16) & 0xff,
          qty: ring.u32[u + FU_QTY]!,
          fee: String(ring.f64[f + FF_FEE]!),
          path: PATH_NAMES[(packed >>> 3) & 3]!,
        });
      }
    }
    return { fills: out, cursor, as_of_seq: String(this.state.seq) };
  }

  // ---- orders ------------------------------------------------------------------

  /** OrderFlag bits of an order (documented in native-layout LAYOUT.md, enum OrderFlag). */
  private flags(slot: number): number {
    const ord = this.state.orders;
    let f = 0;
    if (ord.side[slot] === Side.sell) f |= OrderFlag.sell;
    if (ord.outcome[slot] === Outcome.no) f |= OrderFlag.outcome_no;
    if (ord.postOnly[slot] === 1) f |= OrderFlag.post_only;
    const tif = ord.tif[slot]!;
    if (tif === Tif.gtd) f |= OrderFlag.tif_gtd;
    else if (tif === Tif.ioc) f |= OrderFlag.tif_ioc;
    else if (tif === Tif.fok) f |= OrderFlag.tif_fok;
    const stp = ord.stp[slot]!;
    if (stp === Stp.cancel_maker) f |= OrderFlag.stp_cancel_maker;
    else if (stp === Stp.cancel_both) f |= OrderFlag.stp_cancel_both;
    if (ord.hasMaxCost[slot] === 1) f |= OrderFlag.max_cost;
    return f;
  }

  private orderItem(slot: number): OrderItem {
    const ord = this.state.orders;
    const status = ord.status[slot]!;
    let reason = '';
    if (status === OrderStatus.canceled) reason = CANCEL_REASON_NAMES[ord.reason[slot]!]!;
    else if (status === OrderStatus.rejected) reason = codeName(ord.rejectCode[slot]!);
    return {
      order_id: String(ord.id[slot]!),
      client_order_id: ord.hasCoid[slot] === 1 ? hiLoToString(ord.coidHi[slot]!, ord.coidLo[slot]!) : '0',
      market_id: ord.market[slot]!,
      tick: ord.tick[slot]!,
      qty: ord.qty[slot]!,
      expiry_ts: hiLoToString(ord.expHi[slot]!, ord.expLo[slot]!),
      max_cost: String(ord.maxCost[slot]!),
      group_id: ord.groupId[slot]!,
      flags: this.flags(slot),
      reason,
      filled_qty: ord.filled[slot]!,
      remaining_qty: ord.remaining[slot]!,
      // The seq that accepted (or rejected) an order is its id.
      created_seq: String(ord.id[slot]!),
      created_ts: hiLoToString(ord.createdTsHi[slot]!, ord.createdTsLo[slot]!),
      last_update_seq: String(ord.lastUpdateSeq[slot]!),
      side: SIDE_NAMES[ord.side[slot]!]!,
      outcome: OUTCOME_NAMES[ord.outcome[slot]!]!,
      tif: TIF_NAMES[ord.tif[slot]!]!,
      post_only: ord.postOnly[slot] === 1,
      stp: STP_NAMES[ord.stp[slot]!]!,
    };
  }

  /** Slot of a retained order of the account, -1 when unknown, evicted or foreign. */
  private ownSlot(account: number, orderId: number): number {
    if (!Number.isSafeInteger(orderId) || orderId < 1) return -1;
    const slot = this.state.slotOf(orderId);
    return slot >= 0 && this.state.orders.account[slot] === account ? slot : -1;
  }

  /**
   * Every retained order of the account (live, terminal and rejected),
   * newest first (descending order_id), filtered by market, any of the
   * statuses and client_order_id.
   */
  orders(account: number, q: OrdersQuery): { orders: OrderItem[] } & Page {
    checkLimit(q.limit);
    const mask = statusMask('status', q.status, ORDER_STATUS_NAMES);
    const before = decodeCursor(CursorKind.orders, q.cursor);
    const s = this.state;
    const ord = s.orders;
    const acc = s.accounts;
    const slots: number[] = [];
    const consider = (slot: number): void => {
      if (before >= 0 && ord.id[slot]! >= before) return;
      if (q.market_id !== undefined && ord.market[slot] !== q.market_id) return;
      if ((mask & (1 << ord.status[slot]!)) === 0) return;
      slots.push(slot);
    };
    if (this.accountKnown(account)) {
      if (q.client_order_id !== undefined) {
        // At most one retained order of an account holds a client_order_id.
        const slot = s.coidIndex.get(account, q.client_order_id[0] >>> 0, q.client_order_id[1] >>> 0);
        if (slot >= 0) consider(slot);
      } else {
        const liveMask = (1 << OrderStatus.resting) | (1 << OrderStatus.partially_filled);
        const termMask = (1 << OrderStatus.filled) | (1 << OrderStatus.canceled);
        if (mask & liveMask) for (let x = acc.liveHead[account]!; x !== NIL; x = ord.anext[x]!) consider(x);
        if (mask & termMask) for (let x = acc.termHead[account]!; x !== NIL; x = ord.anext[x]!) consider(x);
        if (mask & (1 << OrderStatus.rejected)) for (let x = acc.rejHead[account]!; x !== NIL; x = ord.anext[x]!) consider(x);
        slots.sort((x, y) => ord.id[y]! - ord.id[x]!);
      }
    }
    const n = Math.min(slots.length, q.limit);
    const out: OrderItem[] = new Array(n);
    for (let i = 0; i < n; i++) out[i] = this.orderItem(slots[i]!);
    const cursor = slots.length > q.limit ? encodeCursor(CursorKind.orders, ord.id[slots[n - 1]!]!) : '';
    return { orders: out, cursor, as_of_seq: String(s.seq) };
  }

  /** One retained order of the account with its status (duplicate_client_order_id details, user channel); null when unknown, evicted or foreign. */
  order(account: number, orderId: number): ({ status: string } & OrderItem) | null {
    const slot = this.ownSlot(account, orderId);
    if (slot < 0) return null;
    const { order_id, ...rest } = this.orderItem(slot);
    return { order_id, status: ORDER_STATUS_NAMES[this.state.orders.status[slot]!]!, ...rest };
  }

  /** Shares ahead of a live own order in its level's queue; null unless the order rests and is the caller's. */
  queuePosition(account: number, orderId: number): { order_id: string; market_id: number; shares_ahead: number; as_of_seq: string } | null {
    const slot = this.ownSlot(account, orderId);
    const ord = this.state.orders;
    if (slot < 0 || ord.onBook[slot] !== 1) return null;
    let ahead = 0;
    for (let x = ord.prev[slot]!; x !== NIL; x = ord.prev[x]!) ahead += ord.remaining[x]!;
    return { order_id: String(orderId), market_id: ord.market[slot]!, shares_ahead: ahead, as_of_seq: String(this.state.seq) };
  }

  // ---- dead-man, funding -----------------------------------------------------------

  deadman(account: number): { armed: boolean; timeout_ms: number; fires_at_ts: string; seq: string } {
    const acc = this.state.accounts;
    const armed = this.accountKnown(account) && acc.deadArmed[account] === 1;
    return {
      armed,
      timeout_ms: armed ? acc.deadTimeoutMs[account]! : 0,
      fires_at_ts: armed ? hiLoToString(acc.deadHi[account]!, acc.deadLo[account]!) : '0',
      seq: String(this.state.seq),
    };
  }

  /** A deterministic per-account deposit address: "dx1" + the first 40 hex digits of sha256("dx-deposit:<account_id>"). */
  depositAddress(account: number): { address: string; as_of_seq: string } {
    const h = createHash('sha256').update(`dx-deposit:${account}`).digest('hex');
    return { address: `dx1${h.slice(0, 40)}`, as_of_seq: String(this.state.seq) };
  }

  private withdrawalView(wid: number): WithdrawalView {
    const acc = this.state.accounts;
    return {
      wid: String(wid),
      client_withdrawal_id: hiLoToString(acc.wCwidHi[wid]!, acc.wCwidLo[wid]!),
      status: WITHDRAWAL_STATUS_NAMES[acc.wStatus[wid]!]!,
      amount: String(acc.wAmount[wid]!),
      destination: acc.wDestination[wid]!,
      seq: String(acc.wSeq[wid]!),
      as_of_seq: String(this.state.seq),
    };
  }

  /** The account's withdrawal by client_withdrawal_id (hi, lo halves); null when none. */
  withdrawal(account: number, cwidHi: number, cwidLo: number): WithdrawalView | null {
    if (!this.accountKnown(account)) return null;
    const wid = this.state.accounts.cwidIndex.get(account, cwidHi >>> 0, cwidLo >>> 0);
    return wid < 0 ? null : this.withdrawalView(wid);
  }

  /** A withdrawal by wid (operator); null when none. */
  withdrawalByWid(wid: number): ({ account_id: number } & WithdrawalView) | null {
    const acc = this.state.accounts;
    if (!Number.isInteger(wid) || wid < 1 || wid > acc.withdrawalCount) return null;
    return { account_id: acc.wAccount[wid]!, ...this.withdrawalView(wid) };
  }

  // ---- keys and operator reads ----------------------------------------------------

  /** Owner of a key, 0 when there is no such key. Cheap: used on every request. */
  keyAccount(keyId: number): number {
    return this.keyKnown(keyId) ? this.state.accounts.keyAccount[keyId]! : 0;
  }

  /** Scope bits of a key (Scope enum), 0 when there is no such key. */
  keyScopes(keyId: number): number {
    return this.keyKnown(keyId) ? this.state.accounts.keyScopes[keyId]! : 0;
  }

  /** True when the key is revoked (deleting an account revokes its keys); false for an unknown key (check keyAccount first). */
  keyRevoked(keyId: number): boolean {
    return this.keyKnown(keyId) && this.state.accounts.keyRevoked[keyId] === 1;
  }

  /** The key's 32 secret bytes as a view into the state (valid until the next apply(); never keep it), null when unknown. */
  keySecret(keyId: number): Uint8Array | null {
    return this.keyKnown(keyId) ? this.state.accounts.keySecret.subarray(keyId * 32, keyId * 32 + 32) : null;
  }

  keyInfo(keyId: number): KeyInfo | null {
    if (!this.keyKnown(keyId)) return null;
    const acc = this.state.accounts;
    return {
      account_id: acc.keyAccount[keyId]!,
      scopes: acc.keyScopes[keyId]!,
      revoked: acc.keyRevoked[keyId] === 1,
      secret: acc.keySecret.subarray(keyId * 32, keyId * 32 + 32),
    };
  }

  private keyKnown(keyId: number): boolean {
    return (keyId >>> 0) === keyId && keyId >= 1 && keyId <= this.state.accounts.keyCount;
  }

  /** The account's keys in ascending key_id, never secrets (accounts service GET /keys, operator). O(all keys). */
  keys(account: number): KeyItem[] {
    const acc = this.state.accounts;
    const out: KeyItem[] = [];
    for (let k = 1; k <= acc.keyCount; k++) {
      if (acc.keyAccount[k] !== account) continue;
      const bits = acc.keyScopes[k]!;
      const scopes: string[] = [];
      for (const [name, bit] of SCOPE_BITS) if (bits & bit) scopes.push(name);
      out.push({ key_id: k, scopes, revoked: acc.keyRevoked[k] === 1 });
    }
    return out;
  }

  /** Operator view of an account: balance, every position and its keys; null when the account never existed. */
  adminAccount(account: number): {
    account_id: number; deleted: boolean; available: string; reserved: string; positions: PositionItem[]; keys: KeyItem[]; as_of_seq: string;
  } | null {
    if (!this.accountKnown(account)) return null;
    const acc = this.state.accounts;
    return {
      account_id: account,
      deleted: acc.deleted[account] === 1,
      available: String(acc.available[account]!),
      reserved: String(acc.reserved[account]!),
      positions: this.positionEntries(account, undefined, -1).map((e) => e.item),
      keys: this.keys(account),
      as_of_seq: String(this.state.seq),
    };
  }
}
