// placement: PlaceOrder, the hot path. Engine thread. The rules are in
// src/engine/README.md ("PlaceOrder"); this file follows them in order:
// the checks (each failure a reject, retained as OrderRejected), then
// OrderAccepted (the reservation), then post-only / fok, the match loop
// (Filled per maker, self-trade prevention, the max_cost budget), and the
// taker's end: canceled, filled or rested, and the completion. Every event is
// applied as it is written (Emitter), so each step reads the state as of the
// event before.

import * as feesModule from '../accounts/fees.js';
import * as bookModule from '../book/book.js';
import * as ordersModule from '../book/orders.js';
import * as recordsModule from '../layout/records.js';
import * as assertModule from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import * as u64Module from '../lib/u64.js';
import * as applyModule from './apply.js';
import type { Emitter } from './emitter.js';
import * as orderCommandsModule from './order_commands.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const { affordableQty, feeCents, feePerShare } = feesModule;
const { Book } = bookModule;
const {
  CancelReason, Filled, OrderAccepted, OrderRejected, OrderRested, OrderStatus, PlaceOrder, Reject, RoundStatus, Side, Stp, T_PLACE_ORDER,
  Tif,
} = recordsModule;
const { fail } = assertModule;
const { cmpHiLo } = u64Module;
const { AcceptedOrder, Fill } = applyModule;
const { cancelLive } = orderCommandsModule;
const {
  NIL, B_SIDE, B_STATUS, B_TICK, F_ID, F_RESERVED_CASH, H_FEE_PER_SHARE, LB, LF, LH, LW, W_ACCOUNT, W_NEXT, W_REMAINING,
} = ordersModule;

/**
 * The incoming order: its fields (`order`, read once from the command, the
 * same the OrderAccepted carries) and what matching needs from its market.
 * One instance per engine, reused by every placement.
 */
export class Taker {
  readonly order = new AcceptedOrder();
  /** The fill being written and applied. */
  readonly fill = new Fill();
  slot = NIL;
  isBuy = false;
  /** max_cost, or -1 for an order without a budget. */
  budget = -1;
  /** Post-only, fok, ioc or a budget: the order needs the match loop even when nothing crosses. */
  special = false;
  /** Its ladder tick, the opposite ladder and that ladder's index in Book.best. */
  ladderTick = 0;
  opp = 0;
  oppBest = 0;
  /** The market's fee rates. */
  takerBps = 0;
  makerBps = 0;
  /** Shares filled and cents spent (price + fee) so far. */
  filled = 0;
  spent = 0;

  read(cm: Mem, co: number, account: number): void {
    const f = this.order;
    f.readCommand(cm, co, account);
    this.isBuy = f.side === Side.buy;
    this.budget = f.hasMaxCost === 1 ? f.maxCost : -1;
    this.special = f.postOnly !== 0 || f.hasMaxCost !== 0 || f.tif === Tif.ioc || f.tif === Tif.fok;
    // A buy bids on its own outcome's ladder; a sell of outcome o at t bids 100 - t on the other one.
    const ladder = this.isBuy ? f.outcome : 1 - f.outcome;
    this.ladderTick = this.isBuy ? f.tick : 100 - f.tick;
    this.opp = ladder ^ 1;
    this.oppBest = (f.market << 1) | this.opp;
    this.filled = 0;
    this.spent = 0;
  }
}

export function placeOrder(e: Emitter, t: Taker, cm: Mem, co: number, account: number): void {
  const s = e.state;
  if (!s.accounts.isLive(account)) return e.rejected(T_PLACE_ORDER, Reject.unknown_account, account);
  if (PlaceOrder.has_client_order_id(cm, co) === 1) {
    const dup = s.coidIndex.get(account, PlaceOrder.client_order_id_hi(cm, co), PlaceOrder.client_order_id_lo(cm, co));
    // Not retained as a reject of its own: the existing order answers.
    const ord = s.orders;
    if (dup >= 0)
      return e.placementRejected(account, Reject.duplicate_client_order_id, ord.f64[(dup << LF) | F_ID]!, ord.u8[(dup << LB) | B_STATUS]!);
  }
  // Before any outcome that holds an order (a rejected one too): when live orders alone fill max_orders, nothing
  // is placed or retained (below that, apply evicts a retained order to make room: makeRoom).
  if (s.liveOrders() >= s.config.max_orders) return e.rejected(T_PLACE_ORDER, Reject.order_capacity_exceeded, account);
  t.read(cm, co, account);
  const code = admit(e, t);
  if (code !== 0) return rejectPlacement(e, cm, co, account, code);
  acceptPlacement(e, t, cm, co);
  // A plain limit order that does not reach the opposite best rests at once.
  const b = s.book.best[t.oppBest]!;
  finishTaker(e, t, t.special || (b !== 0 && t.ladderTick + b >= 100) ? matchTaker(e, t) : 0);
}

/** The first core reject of a live account's placement (0 = none); sets t.order.fps and t.order.reserve for a buy. */
function admit(e: Emitter, t: Taker): number {
  const s = e.state;
  const mk = s.markets;
  const acc = s.accounts;
  const qty = t.order.qty;
  const tick = t.order.tick;
  const side = t.order.side;
  const tif = t.order.tif;
  const postOnly = t.order.postOnly;
  const hasMaxCost = t.order.hasMaxCost;
  const market = t.order.market;
  const hasExpiry = t.order.expHi !== 0 || t.order.expLo !== 0;
  if (
    tick < 1 || tick > 99 || qty < 1 || qty > s.config.max_qty || side > 1 || t.order.outcome > 1 || tif > 3 || t.order.stp > 2 ||
    postOnly > 1 || hasMaxCost > 1 || (postOnly === 1 && (tif === Tif.ioc || tif === Tif.fok)) ||
    (tif === Tif.gtd) !== hasExpiry ||
    (hasMaxCost === 1 && (side === Side.sell || postOnly === 1 || tif === Tif.gtd))
  ) {
    return Reject.invalid_command;
  }
  if (!mk.exists(market)) return Reject.unknown_market;
  if (mk.roundStatus(market) !== RoundStatus.trading) return Reject.market_not_trading;
  if (tif === Tif.gtd && cmpHiLo(t.order.expHi, t.order.expLo, e.tsHi, e.tsLo) <= 0) return Reject.expiry_in_past;
  const p = acc.findPosition(t.order.account, market);
  const k = p < 0 ? -1 : 2 * p + t.order.outcome;
  t.order.fps = 0;
  t.order.reserve = 0;
  if (!t.isBuy) return k < 0 || acc.pFree[k]! < qty ? Reject.insufficient_position : 0;
  const limit = mk.positionLimit[market]!;
  if (limit !== 0 && (k < 0 ? 0 : acc.pFree[k]! + acc.pReserved[k]! + acc.pBuying[k]!) + qty > limit) return Reject.position_limit_exceeded;
  const fs = mk.feeSchedule[market]!;
  // The fee the order can pay: a post_only order never takes, an ioc, fok or max_cost order never rests (never a maker).
  const rests = tif !== Tif.ioc && tif !== Tif.fok && hasMaxCost === 0;
  const fps = feePerShare(postOnly === 1 ? 0 : acc.feeTaker[fs]!, rests ? acc.feeMaker[fs]! : 0, tick);
  let reserve = qty * (tick + fps);
  if (t.budget >= 0 && t.budget < reserve) reserve = t.budget;
  if (acc.available[t.order.account]! < reserve) return Reject.insufficient_balance;
  t.order.fps = fps;
  t.order.reserve = reserve;
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

/** OrderAccepted (the reservation is taken); the taker's slot, id and fee rates. */
function acceptPlacement(e: Emitter, t: Taker, cm: Mem, co: number): void {
  const s = e.state;
  const m = e.m;
  const o = e.begin(OrderAccepted.TYPE, OrderAccepted.SIZE, t.order.account);
  OrderAccepted.clear_reserved(m, o);
  OrderAccepted.copy_from_PlaceOrder(cm, co, m, o);
  OrderAccepted.set_order_id(m, o, e.seq);
  OrderAccepted.set_fee_per_share(m, o, t.order.fps);
  OrderAccepted.set_reserve_cash(m, o, t.order.reserve);
  t.order.id = e.seq;
  t.slot = e.accepted(o, t.order);
  const fs = s.markets.feeSchedule[t.order.market]!;
  t.takerBps = s.accounts.feeTaker[fs]!;
  t.makerBps = s.accounts.feeMaker[fs]!;
}

/**
 * Post-only and fok first, then the match loop: while the taker has shares
 * left and the opposite best level crosses, it trades with that level's head.
 * Returns why the taker is canceled after it (a CancelReason), or 0 when it
 * filled or its remainder rests.
 */
function matchTaker(e: Emitter, t: Taker): number {
  const s = e.state;
  const book = s.book;
  const ord = s.orders;
  if (t.order.postOnly === 1) {
    const b = book.best[t.oppBest]!;
    return b !== 0 && t.ladderTick + b >= 100 ? CancelReason.post_only_cross : 0;
  }
  if (t.order.tif === Tif.fok && !fokFeasible(e, t)) return CancelReason.fok_infeasible;
  let rem = t.order.qty;
  while (rem > 0) {
    const b = book.best[t.oppBest]!;
    if (b === 0 || t.ladderTick + b < 100) break;
    const maker = book.levelHead[Book.level(t.order.market, t.opp, b)]!;
    if (ord.u32[(maker << LW) | W_ACCOUNT] === t.order.account) {
      if (t.order.stp === Stp.cancel_maker) {
        cancelLive(e, maker, CancelReason.self_trade_prevention);
        continue;
      }
      if (t.order.stp === Stp.cancel_both) cancelLive(e, maker, CancelReason.self_trade_prevention);
      return CancelReason.self_trade_prevention;
    }
    const makerRem = ord.u32[(maker << LW) | W_REMAINING]!;
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
  return t.order.tif === Tif.ioc || t.order.tif === Tif.fok ? CancelReason.ioc_remainder : 0;
}

/** One Filled: q shares between the taker and the maker at the maker's ladder tick b; `last` when it leaves the taker with 0. */
function fill(e: Emitter, t: Taker, maker: number, b: number, q: number, last: boolean): void {
  const ord = e.state.orders;
  const takerP = t.isBuy ? 100 - b : b;
  const makerIsBuy = ord.u8[(maker << LB) | B_SIDE] === Side.buy;
  const makerP = makerIsBuy ? b : 100 - b;
  const makerFee = feeCents(t.makerBps, q, makerP);
  const takerFee = feeCents(t.takerBps, q, takerP);
  let takerRelease = 0;
  if (t.isBuy) {
    // A max_cost order pays exactly what it spends, and frees all it still holds with its last share.
    if (t.budget >= 0) takerRelease = last ? ord.f64[(t.slot << LF) | F_RESERVED_CASH]! : q * takerP + takerFee;
    else takerRelease = q * (t.order.tick + t.order.fps);
  }
  const f = t.fill;
  f.fillId = e.state.fillCount + 1;
  f.makerId = ord.f64[(maker << LF) | F_ID]!;
  f.takerId = t.order.id;
  f.makerAccount = ord.u32[(maker << LW) | W_ACCOUNT]!;
  f.takerAccount = t.order.account;
  f.market = t.order.market;
  f.qty = q;
  f.tickYes = t.opp === 0 ? b : 100 - b;
  f.path = makerIsBuy ? (t.isBuy ? 0 : 1) : (t.isBuy ? 1 : 2);
  f.takerSide = t.order.side;
  f.takerOutcome = t.order.outcome;
  f.makerFee = makerFee;
  f.takerFee = takerFee;
  f.makerRelease = makerIsBuy ? q * (ord.u8[(maker << LB) | B_TICK]! + ord.u16[(maker << LH) | H_FEE_PER_SHARE]!) : 0;
  f.takerRelease = takerRelease;
  const o = e.begin(Filled.TYPE, Filled.SIZE, t.order.account);
  f.writeEvent(e.m, o);
  e.filled(o, f, maker, t.slot);
  t.filled += q;
  t.spent += q * takerP + takerFee;
}

/** Would the fok taker fill completely right now? Walks the opposite ladder as matching would, trading nothing. */
function fokFeasible(e: Emitter, t: Taker): boolean {
  const s = e.state;
  const ord = s.orders;
  const book = s.book;
  let need = t.order.qty;
  let spent = 0;
  for (let b = book.best[t.oppBest]!; b >= 1 && t.ladderTick + b >= 100; b--) {
    for (let slot = book.levelHead[Book.level(t.order.market, t.opp, b)]!; slot !== NIL; slot = ord.i32[(slot << LW) | W_NEXT]!) {
      if (ord.u32[(slot << LW) | W_ACCOUNT] === t.order.account) {
        if (t.order.stp === Stp.cancel_maker) continue;
        return false;
      }
      let q = ord.u32[(slot << LW) | W_REMAINING]!;
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
  const left = s.orders.u32[(t.slot << LW) | W_REMAINING]!;
  // A placement's filled + resting + canceled = qty.
  if (!(t.filled + left === t.order.qty)) fail('placement: filled and what is left do not add up to the order\'s qty');
  let status: number;
  let resting = 0;
  if (reason !== 0) {
    cancelLive(e, t.slot, reason);
    status = OrderStatus.canceled;
  } else if (left === 0) {
    status = OrderStatus.filled;
  } else {
    resting = left;
    const o = e.begin(OrderRested.TYPE, OrderRested.SIZE, t.order.account);
    OrderRested.write(e.m, o, t.order.id);
    e.rested(o, t.slot);
    status = t.filled === 0 ? OrderStatus.resting : OrderStatus.partially_filled;
  }
  e.placed(t.order.account, t.order.id, status, reason, t.filled, resting);
}
