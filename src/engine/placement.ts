// placement: PlaceOrder, the hot path. Engine thread. The rules are in
// src/engine/README.md ("PlaceOrder"); this file follows them in order:
// the checks (each failure a reject, retained as OrderRejected), then
// OrderAccepted (the reservation), then post-only / fok, the match loop
// (Filled per maker, self-trade prevention, the max_cost budget), and the
// taker's end: canceled, filled or rested, and the completion. Every event is
// applied as it is written (Emitter), so each step reads the state as of the
// event before.

import { affordableQty, feeCents, feePerShare } from '../accounts/fees.js';
import { Book } from '../book/book.js';
import { NIL } from '../book/orders.js';
import {
  CancelReason, Filled, OrderAccepted, OrderRejected, OrderRested, OrderStatus, PlaceOrder, Reject, RoundStatus, Side, Stp, T_PLACE_ORDER, Tif,
} from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { cmpHiLo } from '../lib/u64.js';
import type { Emitter } from './emitter.js';
import { cancelLive } from './order_commands.js';

/**
 * The incoming order while it matches: what the match loop reads on every
 * level, read once from the command and the market. One instance per engine,
 * reused by every placement.
 */
export class Taker {
  slot = NIL;
  orderId = 0;
  account = 0;
  market = 0;
  qty = 0;
  tick = 0;
  side = 0;
  outcome = 0;
  tif = 0;
  stp = 0;
  isBuy = false;
  /** The order's fee_per_share (buys). */
  fps = 0;
  /** max_cost, or -1 for an order without a budget. */
  budget = -1;
  /** Its ladder tick; the opposite ladder and that ladder's index in Book.best. */
  ladderTick = 0;
  opp = 0;
  oppBest = 0;
  takerBps = 0;
  makerBps = 0;
  /** Shares filled and cents spent (price + fee) so far. */
  filled = 0;
  spent = 0;
}

export function placeOrder(e: Emitter, t: Taker, cm: Mem, co: number, account: number): void {
  const s = e.state;
  const acc = s.accounts;
  if (!acc.isLive(account)) return e.rejected(T_PLACE_ORDER, Reject.unknown_account, account);
  if (PlaceOrder.has_client_order_id(cm, co) === 1) {
    const dup = s.coidIndex.get(account, PlaceOrder.client_order_id_hi(cm, co), PlaceOrder.client_order_id_lo(cm, co));
    // Not retained as a reject of its own: the existing order answers.
    if (dup >= 0) return e.placementRejected(account, Reject.duplicate_client_order_id, s.orders.id[dup]!, s.orders.status[dup]!);
  }
  let code = commandCheck(e, cm, co);
  if (code !== 0) return rejectPlacement(e, cm, co, account, code);
  const market = PlaceOrder.market_id(cm, co);
  const qty = PlaceOrder.qty(cm, co);
  const tick = PlaceOrder.tick(cm, co);
  const outcome = PlaceOrder.outcome(cm, co);
  const p = acc.findPosition(account, market);
  const k = p < 0 ? -1 : 2 * p + outcome;
  let fps = 0;
  let reserve = 0;
  if (PlaceOrder.side(cm, co) === Side.sell) {
    if (k < 0 || acc.pFree[k]! < qty) code = Reject.insufficient_position;
  } else {
    const limit = s.markets.positionLimit[market]!;
    const held = k < 0 ? 0 : acc.pFree[k]! + acc.pReserved[k]! + acc.pBuying[k]!;
    if (limit !== 0 && held + qty > limit) {
      code = Reject.position_limit_exceeded;
    } else {
      const fs = s.markets.feeSchedule[market]!;
      fps = feePerShare(acc.feeTaker[fs]!, acc.feeMaker[fs]!, tick);
      reserve = qty * (tick + fps);
      if (PlaceOrder.has_max_cost(cm, co) === 1 && PlaceOrder.max_cost(cm, co) < reserve) reserve = PlaceOrder.max_cost(cm, co);
      if (acc.available[account]! < reserve) code = Reject.insufficient_balance;
    }
  }
  if (code !== 0) return rejectPlacement(e, cm, co, account, code);
  acceptPlacement(e, t, cm, co, account, fps, reserve);
  finishTaker(e, t, matchTaker(e, t, PlaceOrder.post_only(cm, co) === 1));
}

/** The checks that need neither the account's cash nor its positions: invalid_command, unknown_market, market_not_trading, expiry_in_past. */
function commandCheck(e: Emitter, cm: Mem, co: number): number {
  const s = e.state;
  const mk = s.markets;
  const qty = PlaceOrder.qty(cm, co);
  const tick = PlaceOrder.tick(cm, co);
  const side = PlaceOrder.side(cm, co);
  const tif = PlaceOrder.tif(cm, co);
  const postOnly = PlaceOrder.post_only(cm, co);
  const hasMaxCost = PlaceOrder.has_max_cost(cm, co);
  const expHi = PlaceOrder.expiry_ts_hi(cm, co);
  const expLo = PlaceOrder.expiry_ts_lo(cm, co);
  const hasExpiry = expHi !== 0 || expLo !== 0;
  if (
    tick < 1 || tick > 99 || qty < 1 || qty > s.config.max_qty || side > 1 || PlaceOrder.outcome(cm, co) > 1 || tif > 3 ||
    PlaceOrder.stp(cm, co) > 2 || postOnly > 1 || PlaceOrder.has_client_order_id(cm, co) > 1 || hasMaxCost > 1 ||
    (postOnly === 1 && (tif === Tif.ioc || tif === Tif.fok)) ||
    (tif === Tif.gtd) !== hasExpiry ||
    (hasMaxCost === 1 && (side === Side.sell || postOnly === 1 || tif === Tif.gtd))
  ) {
    return Reject.invalid_command;
  }
  const market = PlaceOrder.market_id(cm, co);
  if (!mk.exists(market)) return Reject.unknown_market;
  if (mk.roundStatus(market) !== RoundStatus.trading) return Reject.market_not_trading;
  if (tif === Tif.gtd && cmpHiLo(expHi, expLo, e.tsHi, e.tsLo) <= 0) return Reject.expiry_in_past;
  return 0;
}

/** OrderRejected (the request's fields and the code, retained as a reject) and the rejected completion. */
function rejectPlacement(e: Emitter, cm: Mem, co: number, account: number, code: number): void {
  const m = e.m;
  const o = e.begin(OrderRejected.TYPE, OrderRejected.SIZE, account);
  OrderRejected.clear_reserved(m, o);
  OrderRejected.copy_from_PlaceOrder(cm, co, m, o);
  OrderRejected.set_order_id(m, o, e.seq);
  OrderRejected.set_code_num(m, o, code);
  e.rejectedOrder(o);
  e.placementRejected(account, code, e.seq, OrderStatus.rejected);
}

/** OrderAccepted (the reservation is taken) and the taker's matching context. */
function acceptPlacement(e: Emitter, t: Taker, cm: Mem, co: number, account: number, fps: number, reserve: number): void {
  const s = e.state;
  const m = e.m;
  const o = e.begin(OrderAccepted.TYPE, OrderAccepted.SIZE, account);
  OrderAccepted.clear_reserved(m, o);
  OrderAccepted.copy_from_PlaceOrder(cm, co, m, o);
  OrderAccepted.set_order_id(m, o, e.seq);
  OrderAccepted.set_fee_per_share(m, o, fps);
  OrderAccepted.set_reserve_cash(m, o, reserve);
  const slot = e.accepted(o);
  const ord = s.orders;
  const market = PlaceOrder.market_id(cm, co);
  const fs = s.markets.feeSchedule[market]!;
  t.slot = slot;
  t.orderId = e.seq;
  t.account = account;
  t.market = market;
  t.qty = PlaceOrder.qty(cm, co);
  t.tick = PlaceOrder.tick(cm, co);
  t.side = PlaceOrder.side(cm, co);
  t.outcome = PlaceOrder.outcome(cm, co);
  t.tif = PlaceOrder.tif(cm, co);
  t.stp = PlaceOrder.stp(cm, co);
  t.isBuy = t.side === Side.buy;
  t.fps = fps;
  t.budget = PlaceOrder.has_max_cost(cm, co) === 1 ? PlaceOrder.max_cost(cm, co) : -1;
  t.ladderTick = ord.ladderTick[slot]!;
  t.opp = ord.ladder[slot]! ^ 1;
  t.oppBest = (market << 1) | t.opp;
  t.takerBps = s.accounts.feeTaker[fs]!;
  t.makerBps = s.accounts.feeMaker[fs]!;
  t.filled = 0;
  t.spent = 0;
}

/**
 * Post-only and fok first, then the match loop: while the taker has shares
 * left and the opposite best level crosses, it trades with that level's head.
 * Returns why the taker is canceled after it (a CancelReason), or 0 when it
 * filled or its remainder rests.
 */
function matchTaker(e: Emitter, t: Taker, postOnly: boolean): number {
  const s = e.state;
  const book = s.book;
  const ord = s.orders;
  if (postOnly) {
    const b = book.best[t.oppBest]!;
    return b !== 0 && t.ladderTick + b >= 100 ? CancelReason.post_only_cross : 0;
  }
  if (t.tif === Tif.fok && !fokFeasible(e, t)) return CancelReason.fok_infeasible;
  let rem = t.qty;
  while (rem > 0) {
    const b = book.best[t.oppBest]!;
    if (b === 0 || t.ladderTick + b < 100) break;
    const maker = book.levelHead[Book.level(t.market, t.opp, b)]!;
    if (ord.account[maker] === t.account) {
      if (t.stp === Stp.cancel_maker) {
        cancelLive(e, maker, CancelReason.self_trade_prevention);
        continue;
      }
      if (t.stp === Stp.cancel_both) cancelLive(e, maker, CancelReason.self_trade_prevention);
      return CancelReason.self_trade_prevention;
    }
    const makerRem = ord.remaining[maker]!;
    let q = rem < makerRem ? rem : makerRem;
    if (t.budget >= 0) {
      q = affordableQty(t.budget - t.spent, q, t.isBuy ? 100 - b : b, t.takerBps);
      if (q === 0) break;
    }
    fill(e, t, maker, b, q, rem === q);
    rem -= q;
  }
  if (rem === 0) return 0;
  if (t.budget >= 0) return t.filled === 0 ? CancelReason.max_cost_infeasible : CancelReason.ioc_remainder;
  return t.tif === Tif.ioc || t.tif === Tif.fok ? CancelReason.ioc_remainder : 0;
}

/** One Filled: q shares between the taker and the maker at the maker's ladder tick b; `last` when it leaves the taker with 0. */
function fill(e: Emitter, t: Taker, maker: number, b: number, q: number, last: boolean): void {
  const ord = e.state.orders;
  const m = e.m;
  const takerP = t.isBuy ? 100 - b : b;
  const makerIsBuy = ord.side[maker] === Side.buy;
  const makerP = makerIsBuy ? b : 100 - b;
  const makerFee = feeCents(t.makerBps, q, makerP);
  const takerFee = feeCents(t.takerBps, q, takerP);
  let takerRelease = 0;
  if (t.isBuy) {
    // A max_cost order pays exactly what it spends, and frees all it still holds with its last share.
    if (t.budget >= 0) takerRelease = last ? ord.reservedCash[t.slot]! : q * takerP + takerFee;
    else takerRelease = q * (t.tick + t.fps);
  }
  const o = e.begin(Filled.TYPE, Filled.SIZE, t.account);
  Filled.clear_reserved(m, o);
  Filled.set_fill_id(m, o, e.state.fillCount + 1);
  Filled.set_maker_order_id(m, o, ord.id[maker]!);
  Filled.set_taker_order_id(m, o, t.orderId);
  Filled.set_maker_account(m, o, ord.account[maker]!);
  Filled.set_taker_account(m, o, t.account);
  Filled.set_market_id(m, o, t.market);
  Filled.set_qty(m, o, q);
  Filled.set_tick_yes(m, o, t.opp === 0 ? b : 100 - b);
  Filled.set_path(m, o, makerIsBuy ? (t.isBuy ? 0 : 1) : (t.isBuy ? 1 : 2));
  Filled.set_taker_side(m, o, t.side);
  Filled.set_taker_outcome(m, o, t.outcome);
  Filled.set_maker_fee(m, o, makerFee);
  Filled.set_taker_fee(m, o, takerFee);
  Filled.set_maker_release(m, o, makerIsBuy ? q * (ord.tick[maker]! + ord.feePerShare[maker]!) : 0);
  Filled.set_taker_release(m, o, takerRelease);
  e.filled(o, maker, t.slot);
  t.filled += q;
  t.spent += q * takerP + takerFee;
}

/** Would the fok taker fill completely right now? Walks the opposite ladder as matching would, trading nothing. */
function fokFeasible(e: Emitter, t: Taker): boolean {
  const s = e.state;
  const ord = s.orders;
  const book = s.book;
  let need = t.qty;
  let spent = 0;
  for (let b = book.best[t.oppBest]!; b >= 1 && t.ladderTick + b >= 100; b--) {
    for (let slot = book.levelHead[Book.level(t.market, t.opp, b)]!; slot !== NIL; slot = ord.next[slot]!) {
      if (ord.account[slot] === t.account) {
        if (t.stp === Stp.cancel_maker) continue;
        return false;
      }
      let q = ord.remaining[slot]!;
      if (q > need) q = need;
      if (t.budget >= 0) {
        const p = t.isBuy ? 100 - b : b;
        const afford = affordableQty(t.budget - spent, q, p, t.takerBps);
        spent += afford * p + feeCents(t.takerBps, afford, p);
        need -= afford;
        if (afford < q) return need === 0;
      } else {
        need -= q;
      }
      if (need === 0) return true;
    }
  }
  return false;
}

/** The taker's end: canceled with `reason`, filled, or its remainder rests; then the placement's completion. */
function finishTaker(e: Emitter, t: Taker, reason: number): void {
  const s = e.state;
  const left = s.orders.remaining[t.slot]!;
  // A placement's filled + resting + canceled = qty.
  assert(t.filled + left === t.qty, 'placement: filled and what is left do not add up to the order\'s qty');
  let status: number;
  let resting = 0;
  if (reason !== 0) {
    cancelLive(e, t.slot, reason);
    status = OrderStatus.canceled;
  } else if (left === 0) {
    status = OrderStatus.filled;
  } else {
    resting = left;
    const o = e.begin(OrderRested.TYPE, OrderRested.SIZE, t.account);
    OrderRested.clear_reserved(e.m, o);
    OrderRested.set_order_id(e.m, o, t.orderId);
    e.rested(o, t.slot);
    status = t.filled === 0 ? OrderStatus.resting : OrderStatus.partially_filled;
  }
  e.placed(t.account, t.orderId, status, reason, t.filled, resting);
}
