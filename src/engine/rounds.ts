// rounds: the clock (ClockTick: expiries, dead-man timers, oracle staleness
// and round automation), the operator's round commands, the oracle and the
// series. Engine thread. Rules in src/engine/README.md ("ClockTick", "Rounds
// and oracle", "Series").

import { Book } from '../book/book.js';
import * as ordersModule from '../book/orders.js';
import {
  CancelReason, CreateSeries, OpenRound, OracleSourceExpired, OracleTicked, PositionSettled, ProposeSource, Reject, RoundOpened,
  RoundOutcome, RoundStatus, RoundTransitioned, SeriesCreated, SeriesStopped, T_CLOCK_TICK, T_CREATE_SERIES, T_DISPUTE_ROUND,
  T_FREEZE_ROUND, T_OPEN_ROUND, T_PROPOSE_ROUND, T_SETTLE_ROUND, T_STOP_SERIES, T_SUBMIT_ORACLE_TICK, T_UNFREEZE_ROUND, T_VOID_ROUND,
} from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { TimerHeap } from '../lib/timer_heap.js';
import { addHiLo, cmpHiLo } from '../lib/u64.js';
import { emitMarketCreated } from './admin.js';
import type { Emitter } from './emitter.js';
import { ORACLE_SOURCES } from './markets.js';
import { cancelLive, cancelWhere, emitDisarmed } from './order_commands.js';

// Field offsets as module constants (an imported binding is a module cell read at every use; docs/engine-performance.md).
const { NIL, F_ID, LF, LW, W_NEXT } = ordersModule;

/** Longest series round: 30 days, so that period_s x 1e9 ns stays a safe integer. */
export const SERIES_PERIOD_MAX_S = 2_592_000;

// ---- clock -------------------------------------------------------------------

/** Does a ClockTick at (hi, lo) have anything to do? (A tick with nothing due is dropped unsequenced.) */
export function clockDue(e: Emitter, hi: number, lo: number): boolean {
  const s = e.state;
  if (
    s.expiries.dueAt(hi, lo) || s.deadmen.dueAt(hi, lo) || s.oracleExpiries.dueAt(hi, lo) || s.closes.dueAt(hi, lo) ||
    s.disputeDeadlines.dueAt(hi, lo)
  ) return true;
  // Proposals and series openings wait for a fresh oracle quorum (a proposal's may be the one at its close: proposeDue).
  const proposals = s.awaitingProposal.dueAt(hi, lo);
  if (!proposals && !s.seriesWaiting.dueAt(hi, lo)) return false;
  if (freshPrices(e, hi, lo, -1, 0) >= s.config.oracle_quorum) return true;
  return proposals && quorumAtADueClose(e, hi, lo);
}

/**
 * Has a frozen round due at (hi, lo) a quorum of sources fresh at its close?
 * Runs before every command while a round waits for the oracle, so a round
 * that closed after every source's last tick went stale (with quorum 1, every
 * waiting round) is passed over without looking at the sources again.
 */
function quorumAtADueClose(e: Emitter, hi: number, lo: number): boolean {
  const s = e.state;
  const mk = s.markets;
  const h = s.awaitingProposal;
  // The latest moment any source is fresh until: no round closed at or after it has a source fresh at its close.
  const staleNs = s.config.oracle_staleness_ms * 1_000_000;
  let untilHi = 0;
  let untilLo = 0;
  for (let src = 0; src < ORACLE_SOURCES; src++) {
    if (mk.srcSeen[src] !== 1) continue;
    addHiLo(mk.srcTsHi[src]!, mk.srcTsLo[src]!, staleNs, e.hilo);
    if (cmpHiLo(e.hilo[0]!, e.hilo[1]!, untilHi, untilLo) > 0) {
      untilHi = e.hilo[0]!;
      untilLo = e.hilo[1]!;
    }
  }
  const first = h.peek();
  if (cmpHiLo(h.hiOf(first), h.loOf(first), untilHi, untilLo) >= 0) return false;
  const n = h.dueIds(hi, lo);
  for (let i = 0; i < n; i++) {
    const r = mk.round[TimerHeap.found[i]!]!;
    if (cmpHiLo(mk.rCloseHi[r]!, mk.rCloseLo[r]!, untilHi, untilLo) >= 0) continue;
    if (freshAtClose(e, mk.rCloseHi[r]!, mk.rCloseLo[r]!) >= s.config.oracle_quorum) return true;
  }
  return false;
}

export function clockTick(e: Emitter): void {
  const s = e.state;
  const hi = e.tsHi;
  const lo = e.tsLo;
  while (s.expiries.dueAt(hi, lo)) expireNext(e);
  while (s.deadmen.dueAt(hi, lo)) {
    const a = s.deadmen.peek();
    cancelWhere(e, a, 0, 0, CancelReason.deadman);
    emitDisarmed(e, a, 1);
  }
  if (s.oracleExpiries.dueAt(hi, lo)) {
    // Every event of this tick carries the reference as of ts, all stale sources excluded.
    const n = freshPrices(e, hi, lo, -1, 0);
    const ref = n === 0 ? 0 : e.prices[(n - 1) >> 1]!;
    while (s.oracleExpiries.dueAt(hi, lo)) sourceExpired(e, s.oracleExpiries.peek(), n, ref);
  }
  while (s.closes.dueAt(hi, lo)) freeze(e, s.closes.peek());
  if (s.awaitingProposal.dueAt(hi, lo)) proposeDue(e, hi, lo);
  while (s.disputeDeadlines.dueAt(hi, lo)) endRound(e, s.disputeDeadlines.peek(), RoundStatus.settled);
  if (s.seriesWaiting.dueAt(hi, lo)) {
    const n = freshPrices(e, hi, lo, -1, 0);
    if (n >= s.config.oracle_quorum) {
      const strike = e.prices[(n - 1) >> 1]!;
      while (s.seriesWaiting.dueAt(hi, lo)) openSeriesRound(e, s.seriesWaiting.peek(), strike);
    }
  }
  e.ok(T_CLOCK_TICK, 0, 0);
}

/**
 * Expires the gtd orders of the earliest due expiry_ts, by order_id: the heap
 * breaks ties by slot, and a reused slot can put a later order first.
 */
function expireNext(e: Emitter): void {
  const s = e.state;
  const h = s.expiries;
  const first = h.peek();
  const n = h.dueIds(h.hiOf(first), h.loOf(first));
  if (n === 1) return cancelLive(e, first, CancelReason.expired);
  const found = TimerHeap.found;
  const ord = s.orders;
  let k = 0;
  for (let i = 0; i < n; i++) k = e.pushId(k, ord.f64[(found[i]! << LF) | F_ID]!);
  const ids = e.ids.subarray(0, k).sort();
  for (let i = 0; i < k; i++) cancelLive(e, s.slotOf(ids[i]!), CancelReason.expired);
}

function sourceExpired(e: Emitter, source: number, fresh: number, ref: number): void {
  const m = e.m;
  const o = e.begin(OracleSourceExpired.TYPE, OracleSourceExpired.SIZE, 0);
  OracleSourceExpired.clear_reserved(m, o);
  OracleSourceExpired.set_source_id(m, o, source);
  OracleSourceExpired.set_fresh_source_count(m, o, fresh);
  OracleSourceExpired.set_ref_price(m, o, ref);
  e.commit(o);
}

// ---- rounds ------------------------------------------------------------------

function transition(e: Emitter, market: number, status: number, outcome: number, settlePrice: number): void {
  const mk = e.state.markets;
  const r = mk.round[market]!;
  const m = e.m;
  const o = e.begin(RoundTransitioned.TYPE, RoundTransitioned.SIZE, 0);
  RoundTransitioned.clear_reserved(m, o);
  RoundTransitioned.set_round_number(m, o, mk.rNumber[r]!);
  RoundTransitioned.set_market_id(m, o, market);
  RoundTransitioned.set_status(m, o, status);
  RoundTransitioned.set_outcome(m, o, outcome);
  RoundTransitioned.set_settle_price(m, o, settlePrice);
  e.commit(o);
}

/** Cancels every resting order of the market in ascending order_id. */
function cancelMarketOrders(e: Emitter, market: number, reason: number): void {
  const s = e.state;
  const ord = s.orders;
  const book = s.book;
  let n = 0;
  for (let ladder = 0; ladder < 2; ladder++) {
    for (let t = 1; t < 100; t++) {
      const lv = Book.level(market, ladder, t);
      for (let x = book.levelHead[lv]!; x !== NIL; x = ord.i32[(x << LW) | W_NEXT]!) n = e.pushId(n, ord.f64[(x << LF) | F_ID]!);
    }
  }
  const ids = e.ids.subarray(0, n).sort();
  for (let i = 0; i < n; i++) cancelLive(e, s.slotOf(ids[i]!), reason);
}

function freeze(e: Emitter, market: number): void {
  cancelMarketOrders(e, market, CancelReason.round_frozen);
  transition(e, market, RoundStatus.frozen, 0, 0);
}

/** Proposes the market's round from an oracle reference price: yes iff it is at least the strike. */
function proposeAt(e: Emitter, market: number, price: number): void {
  const mk = e.state.markets;
  transition(e, market, RoundStatus.proposed, price >= mk.rStrike[mk.round[market]!]! ? RoundOutcome.yes : RoundOutcome.no, price);
}

function propose(e: Emitter, market: number, source: number): void {
  if (source === ProposeSource.oracle) {
    proposeAt(e, market, e.prices[(freshPrices(e, e.tsHi, e.tsLo, -1, 0) - 1) >> 1]!);
  } else {
    transition(e, market, RoundStatus.proposed, source === ProposeSource.yes ? RoundOutcome.yes : RoundOutcome.no, 0);
  }
}

/**
 * Proposes the frozen rounds due at (hi, lo), by (close_ts, market_id): from
 * the sources fresh at the round's close_ts when they make a quorum (a
 * source whose last tick came after the close does not count there), else
 * from those fresh at ts; a round with neither waits.
 */
function proposeDue(e: Emitter, hi: number, lo: number): void {
  const s = e.state;
  const mk = s.markets;
  const h = s.awaitingProposal;
  const n = h.dueIds(hi, lo);
  const due: number[] = [];
  for (let i = 0; i < n; i++) due.push(TimerHeap.found[i]!);
  due.sort((a, b) => cmpHiLo(h.hiOf(a), h.loOf(a), h.hiOf(b), h.loOf(b)) || a - b);
  const q = s.config.oracle_quorum;
  for (const market of due) {
    const r = mk.round[market]!;
    let k = freshAtClose(e, mk.rCloseHi[r]!, mk.rCloseLo[r]!);
    if (k < q) k = freshPrices(e, hi, lo, -1, 0);
    if (k >= q) proposeAt(e, market, e.prices[(k - 1) >> 1]!);
  }
}

/** Settles (paying the proposed outcome) or voids (50/50) the market's current round. */
function endRound(e: Emitter, market: number, status: number): void {
  const s = e.state;
  const mk = s.markets;
  const acc = s.accounts;
  const r = mk.round[market]!;
  cancelMarketOrders(e, market, status === RoundStatus.void ? CancelReason.round_void : CancelReason.round_settled);
  const outcome = status === RoundStatus.void ? RoundOutcome.none : mk.rOutcome[r]!;
  let n = 0;
  for (let p = acc.marketPosHead[market]!; p !== NIL; p = acc.pNextInMarket[p]!) {
    if (acc.pFree[2 * p]! > 0 || acc.pFree[2 * p + 1]! > 0) n = e.pushId(n, acc.pAccount[p]!);
  }
  const accounts = e.ids.subarray(0, n).sort();
  const m = e.m;
  for (let i = 0; i < n; i++) {
    const a = accounts[i]!;
    const p = acc.findPosition(a, market);
    const yes = acc.pFree[2 * p]!;
    const no = acc.pFree[2 * p + 1]!;
    const payout = status === RoundStatus.void ? (yes + no) * 50 : outcome === RoundOutcome.yes ? yes * 100 : no * 100;
    const o = e.begin(PositionSettled.TYPE, PositionSettled.SIZE, a);
    PositionSettled.clear_reserved(m, o);
    PositionSettled.set_market_id(m, o, market);
    PositionSettled.set_round_number(m, o, mk.rNumber[r]!);
    PositionSettled.set_yes_qty(m, o, yes);
    PositionSettled.set_no_qty(m, o, no);
    PositionSettled.set_payout(m, o, payout);
    e.commit(o);
  }
  transition(e, market, status, outcome, status === RoundStatus.void ? 0 : mk.rSettlePrice[r]!);
}

/** Opens the next round of a series market: strike given, close_ts = ts + period. */
function openSeriesRound(e: Emitter, market: number, strike: number): void {
  addHiLo(e.tsHi, e.tsLo, e.state.markets.seriesPeriodS[market]! * 1_000_000_000, e.hilo);
  emitRoundOpened(e, market, strike, e.hilo[0]!, e.hilo[1]!);
}

function emitRoundOpened(e: Emitter, market: number, strike: number, closeHi: number, closeLo: number): number {
  const rn = e.state.markets.roundCount + 1;
  const m = e.m;
  const o = e.begin(RoundOpened.TYPE, RoundOpened.SIZE, 0);
  RoundOpened.clear_reserved(m, o);
  RoundOpened.set_round_number(m, o, rn);
  RoundOpened.set_market_id(m, o, market);
  RoundOpened.set_strike(m, o, strike);
  RoundOpened.set_close_ts(m, o, closeHi, closeLo);
  e.commit(o);
  return rn;
}

export function openRound(e: Emitter, cm: Mem, co: number, account: number): void {
  const mk = e.state.markets;
  const market = OpenRound.market_id(cm, co);
  const closeHi = OpenRound.close_ts_hi(cm, co);
  const closeLo = OpenRound.close_ts_lo(cm, co);
  if (!mk.exists(market)) return e.rejected(T_OPEN_ROUND, Reject.unknown_market, account);
  const st = mk.roundStatus(market);
  if ((st !== 0 && st !== RoundStatus.settled && st !== RoundStatus.void) || cmpHiLo(closeHi, closeLo, e.tsHi, e.tsLo) <= 0) {
    return e.rejected(T_OPEN_ROUND, Reject.round_state_conflict, account);
  }
  const rn = emitRoundOpened(e, market, OpenRound.strike(cm, co), closeHi, closeLo);
  e.ok(T_OPEN_ROUND, account, rn);
}

/** FreezeRound, UnfreezeRound, ProposeRound, DisputeRound, SettleRound, VoidRound. */
export function roundControl(e: Emitter, type: number, market: number, source: number, account: number): void {
  const s = e.state;
  const mk = s.markets;
  if (!mk.exists(market)) return e.rejected(type, Reject.unknown_market, account);
  const r = mk.round[market]!;
  const st = mk.roundStatus(market);
  let allowed = false;
  switch (type) {
    case T_FREEZE_ROUND: allowed = st === RoundStatus.trading; break;
    case T_UNFREEZE_ROUND: allowed = st === RoundStatus.frozen && cmpHiLo(e.tsHi, e.tsLo, mk.rCloseHi[r]!, mk.rCloseLo[r]!) < 0; break;
    case T_PROPOSE_ROUND: allowed = st === RoundStatus.frozen; break;
    case T_DISPUTE_ROUND: allowed = st === RoundStatus.proposed; break;
    case T_SETTLE_ROUND: allowed = st === RoundStatus.proposed; break;
    case T_VOID_ROUND: allowed = st === RoundStatus.trading || st === RoundStatus.frozen || st === RoundStatus.proposed; break;
  }
  if (type === T_PROPOSE_ROUND && source > 2) return e.rejected(type, Reject.invalid_command, account);
  if (!allowed) return e.rejected(type, Reject.round_state_conflict, account);
  switch (type) {
    case T_FREEZE_ROUND: freeze(e, market); break;
    case T_UNFREEZE_ROUND: transition(e, market, RoundStatus.trading, 0, 0); break;
    case T_PROPOSE_ROUND:
      if (source === ProposeSource.oracle && freshPrices(e, e.tsHi, e.tsLo, -1, 0) < s.config.oracle_quorum) {
        return e.rejected(type, Reject.oracle_quorum_not_met, account);
      }
      propose(e, market, source);
      break;
    case T_DISPUTE_ROUND: transition(e, market, RoundStatus.frozen, 0, 0); break;
    case T_SETTLE_ROUND: endRound(e, market, RoundStatus.settled); break;
    case T_VOID_ROUND: endRound(e, market, RoundStatus.void); break;
  }
  e.ok(type, account, mk.rNumber[r]!);
}

// ---- oracle ------------------------------------------------------------------
/**
 * When the next ClockTick can have an effect, in ms since the epoch (the ns
 * key / 1e6), or Infinity when nothing is scheduled: the earliest gtd expiry,
 * dead-man, oracle staleness, round close and dispute deadline, and
 * proposals and series openings while the oracle quorum is fresh at the last
 * sequenced ts (without one they wait for an oracle tick, a command, after
 * which the caller asks again; a quorum going stale is an oracle expiry,
 * itself scheduled). For the engine thread's clock, which sleeps until then;
 * reads no clock.
 */
export function nextDueMs(e: Emitter): number {
  const s = e.state;
  let due = Math.min(
    heapDueMs(s.expiries),
    heapDueMs(s.deadmen),
    heapDueMs(s.oracleExpiries),
    heapDueMs(s.closes),
    heapDueMs(s.disputeDeadlines),
  );
  if ((s.awaitingProposal.size > 0 || s.seriesWaiting.size > 0) && freshPrices(e, s.tsHi, s.tsLo, -1, 0) >= s.config.oracle_quorum) {
    due = Math.min(due, heapDueMs(s.awaitingProposal), heapDueMs(s.seriesWaiting));
  }
  return due;
}

/** A timer heap's earliest key in ms since the epoch (ns / 1e6), Infinity when empty. */
function heapDueMs(h: TimerHeap): number {
  const id = h.peek();
  return id < 0 ? Infinity : (h.hiOf(id) * 4294967296 + h.loOf(id)) / 1e6;
}

/**
 * Collects the prices of sources fresh at (hi, lo) into e.prices, sorted
 * ascending; `extraSource` (>= 0) counts as ticked at (hi, lo) with
 * `extraPrice`. Returns how many there are.
 */
function freshPrices(e: Emitter, hi: number, lo: number, extraSource: number, extraPrice: number): number {
  const mk = e.state.markets;
  const staleNs = e.state.config.oracle_staleness_ms * 1_000_000;
  let n = 0;
  for (let src = 0; src < ORACLE_SOURCES; src++) {
    if (src === extraSource) {
      e.prices[n++] = extraPrice;
      continue;
    }
    if (mk.srcSeen[src] !== 1) continue;
    addHiLo(mk.srcTsHi[src]!, mk.srcTsLo[src]!, staleNs, e.hilo);
    if (cmpHiLo(e.hilo[0]!, e.hilo[1]!, hi, lo) > 0) e.prices[n++] = mk.srcPrice[src]!;
  }
  e.prices.subarray(0, n).sort();
  return n;
}

/** Prices of sources fresh at a round's close (last tick <= close_ts < last tick + staleness) into e.prices, sorted; their count. */
function freshAtClose(e: Emitter, closeHi: number, closeLo: number): number {
  const mk = e.state.markets;
  const staleNs = e.state.config.oracle_staleness_ms * 1_000_000;
  let n = 0;
  for (let src = 0; src < ORACLE_SOURCES; src++) {
    if (mk.srcSeen[src] !== 1 || cmpHiLo(mk.srcTsHi[src]!, mk.srcTsLo[src]!, closeHi, closeLo) > 0) continue;
    addHiLo(mk.srcTsHi[src]!, mk.srcTsLo[src]!, staleNs, e.hilo);
    if (cmpHiLo(e.hilo[0]!, e.hilo[1]!, closeHi, closeLo) > 0) e.prices[n++] = mk.srcPrice[src]!;
  }
  e.prices.subarray(0, n).sort();
  return n;
}

export function oracleTick(e: Emitter, source: number, price: number, account: number): void {
  if (source >= ORACLE_SOURCES || price < 1) return e.rejected(T_SUBMIT_ORACLE_TICK, Reject.invalid_command, account);
  const n = freshPrices(e, e.tsHi, e.tsLo, source, price);
  const m = e.m;
  const o = e.begin(OracleTicked.TYPE, OracleTicked.SIZE, 0);
  OracleTicked.clear_reserved(m, o);
  OracleTicked.set_source_id(m, o, source);
  OracleTicked.set_fresh_source_count(m, o, n);
  OracleTicked.set_price(m, o, price);
  OracleTicked.set_ref_price(m, o, e.prices[(n - 1) >> 1]!);
  e.commit(o);
  e.ok(T_SUBMIT_ORACLE_TICK, account, 0);
}

// ---- series ------------------------------------------------------------------

export function createSeries(e: Emitter, cm: Mem, co: number, account: number): void {
  const s = e.state;
  const period = CreateSeries.period_s(cm, co);
  const fs = CreateSeries.fee_schedule_id(cm, co);
  const category = CreateSeries.category(cm, co);
  if (period < 1 || period > SERIES_PERIOD_MAX_S) return e.rejected(T_CREATE_SERIES, Reject.invalid_command, account);
  if (fs !== 0 && fs > s.accounts.feeCount) return e.rejected(T_CREATE_SERIES, Reject.unknown_fee_schedule, account);
  if (s.markets.activeSeries(category) !== 0) return e.rejected(T_CREATE_SERIES, Reject.duplicate_series, account);
  const id = emitMarketCreated(e, cm, co, T_CREATE_SERIES);
  const m = e.m;
  const o = e.begin(SeriesCreated.TYPE, SeriesCreated.SIZE, 0);
  SeriesCreated.clear_reserved(m, o);
  SeriesCreated.set_market_id(m, o, id);
  SeriesCreated.set_category(m, o, category);
  SeriesCreated.set_period_s(m, o, period);
  e.commit(o);
  // The first round opens at once when the oracle allows it, else on a later ClockTick.
  const n = freshPrices(e, e.tsHi, e.tsLo, -1, 0);
  if (n >= s.config.oracle_quorum) openSeriesRound(e, id, e.prices[(n - 1) >> 1]!);
  e.ok(T_CREATE_SERIES, account, id);
}

export function stopSeries(e: Emitter, category: number, account: number): void {
  const market = e.state.markets.activeSeries(category);
  if (market === 0) return e.rejected(T_STOP_SERIES, Reject.unknown_series, account);
  const m = e.m;
  const o = e.begin(SeriesStopped.TYPE, SeriesStopped.SIZE, 0);
  SeriesStopped.clear_reserved(m, o);
  SeriesStopped.set_market_id(m, o, market);
  SeriesStopped.set_category(m, o, category);
  e.commit(o);
  e.ok(T_STOP_SERIES, account, market);
}
