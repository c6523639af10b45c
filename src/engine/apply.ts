// apply: the state changes of the order events (OrderAccepted, OrderRested,
// Filled, OrderCanceled, OrderDecreased, OrderRejected), one function each,
// reading the event's fields from its record. Two callers: evolve, which
// finds the orders' slots by order id (read models, recovery), and the
// engine's fused path, which writes the event and applies it at once with the
// slots it already holds (engine thread). Both run this same code, so a state
// built either way is the same state; the differential test checks it (equal
// event bytes and state hashes on every seed). Engine thread, gateway read
// models, recovery. No clock, no decisions: every choice is in the event.

import * as recordsModule from '../layout/records.js';
import * as assertModule from '../lib/assert.js';
import * as growModule from '../lib/grow.js';
import * as intrusiveListModule from '../lib/intrusive_list.js';
import type { Mem } from '../lib/mem.js';
import type { ExchangeState } from './state.js';
import * as ordersModule from '../book/orders.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const {
  Filled, Header, OrderAccepted, OrderCanceled, OrderDecreased, OrderRejected, OrderRested, OrderStatus, PlaceOrder, Side, Tif,
} = recordsModule;
const { fail } = assertModule;
const { grown, nextCapacity } = growModule;
const { NIL, popHeadPacked: popHead, pushTailPacked: pushTail, unlinkPacked: unlink } = intrusiveListModule;
const {
  B_HAS_COID, B_HAS_MAX_COST, B_LADDER, B_LADDER_TICK, B_ON_BOOK, B_OUTCOME, B_POST_ONLY, B_REASON, B_SIDE, B_STATUS, B_STP,
  B_TICK, B_TIF, F_ID, F_LAST_UPDATE_SEQ, F_MAX_COST, F_RESERVED_CASH, H_FEE_PER_SHARE, H_REJECT_CODE, LB, LF, LH, LW, W_ACCOUNT,
  W_ANEXT, W_APREV, W_COID_HI, W_COID_LO, W_CREATED_TS_HI, W_CREATED_TS_LO, W_EXP_HI, W_EXP_LO, W_FILLED, W_GROUP_ID, W_MARKET,
  W_POS_SLOT, W_QTY, W_REMAINING,
} = ordersModule;

/**
 * The fields of an accepted order, as OrderAccepted carries them, gathered
 * once: from the event by evolve (readEvent), from the command by decide
 * (placement.ts), which writes the event from the same command.
 */
export class AcceptedOrder {
  id = 0;
  account = 0;
  market = 0;
  qty = 0;
  groupId = 0;
  tick = 0;
  side = 0;
  outcome = 0;
  tif = 0;
  stp = 0;
  postOnly = 0;
  hasCoid = 0;
  hasMaxCost = 0;
  maxCost = 0;
  /** fee_per_share and reserve_cash (buys; 0 for sells). */
  fps = 0;
  reserve = 0;
  coidHi = 0;
  coidLo = 0;
  expHi = 0;
  expLo = 0;

  /** Reads the OrderAccepted at o. */
  readEvent(m: Mem, o: number): this {
    this.id = OrderAccepted.order_id(m, o);
    this.account = Header.account(m, o);
    this.market = OrderAccepted.market_id(m, o);
    this.qty = OrderAccepted.qty(m, o);
    this.groupId = OrderAccepted.group_id(m, o);
    this.tick = OrderAccepted.tick(m, o);
    this.side = OrderAccepted.side(m, o);
    this.outcome = OrderAccepted.outcome(m, o);
    this.tif = OrderAccepted.tif(m, o);
    this.stp = OrderAccepted.stp(m, o);
    this.postOnly = OrderAccepted.post_only(m, o);
    this.hasCoid = OrderAccepted.has_client_order_id(m, o);
    this.hasMaxCost = OrderAccepted.has_max_cost(m, o);
    this.maxCost = OrderAccepted.max_cost(m, o);
    this.fps = OrderAccepted.fee_per_share(m, o);
    this.reserve = OrderAccepted.reserve_cash(m, o);
    this.coidHi = OrderAccepted.client_order_id_hi(m, o);
    this.coidLo = OrderAccepted.client_order_id_lo(m, o);
    this.expHi = OrderAccepted.expiry_ts_hi(m, o);
    this.expLo = OrderAccepted.expiry_ts_lo(m, o);
    return this;
  }

  /** Reads a PlaceOrder command at co for `account` (not yet validated; id, fps and reserve are decide's to set). */
  readCommand(cm: Mem, co: number, account: number): void {
    this.account = account;
    this.market = PlaceOrder.market_id(cm, co);
    this.qty = PlaceOrder.qty(cm, co);
    this.groupId = PlaceOrder.group_id(cm, co);
    this.tick = PlaceOrder.tick(cm, co);
    this.side = PlaceOrder.side(cm, co);
    this.outcome = PlaceOrder.outcome(cm, co);
    this.tif = PlaceOrder.tif(cm, co);
    this.stp = PlaceOrder.stp(cm, co);
    this.postOnly = PlaceOrder.post_only(cm, co);
    this.hasCoid = PlaceOrder.has_client_order_id(cm, co);
    this.hasMaxCost = PlaceOrder.has_max_cost(cm, co);
    this.maxCost = PlaceOrder.max_cost(cm, co);
    this.coidHi = PlaceOrder.client_order_id_hi(cm, co);
    this.coidLo = PlaceOrder.client_order_id_lo(cm, co);
    this.expHi = PlaceOrder.expiry_ts_hi(cm, co);
    this.expLo = PlaceOrder.expiry_ts_lo(cm, co);
    this.id = 0;
    this.fps = 0;
    this.reserve = 0;
  }
}

/** An accepted order (OrderAccepted): a new slot, indexed, on its account's live list, its reservation taken. Returns the slot. */
export function applyAccepted(s: ExchangeState, f: AcceptedOrder): number {
  const ord = s.orders;
  const acc = s.accounts;
  if (s.ordersHeld() >= s.config.max_orders) makeRoom(s, f.account);
  const slot = ord.alloc();
  const a = f.account;
  const side = f.side;
  const outcome = f.outcome;
  const tick = f.tick;
  const qty = f.qty;
  ord.f64[(slot << LF) | F_ID] = f.id;
  ord.u32[(slot << LW) | W_ACCOUNT] = a;
  ord.u32[(slot << LW) | W_MARKET] = f.market;
  ord.u32[(slot << LW) | W_REMAINING] = qty;
  ord.u32[(slot << LW) | W_GROUP_ID] = f.groupId;
  ord.u8[(slot << LB) | B_TICK] = tick;
  ord.u8[(slot << LB) | B_SIDE] = side;
  ord.u8[(slot << LB) | B_OUTCOME] = outcome;
  ord.u8[(slot << LB) | B_TIF] = f.tif;
  ord.u8[(slot << LB) | B_HAS_COID] = f.hasCoid;
  ord.u8[(slot << LB) | B_LADDER] = side === Side.buy ? outcome : 1 - outcome;
  ord.u8[(slot << LB) | B_LADDER_TICK] = side === Side.buy ? tick : 100 - tick;
  ord.u8[(slot << LB) | B_STATUS] = OrderStatus.resting;
  ord.u16[(slot << LH) | H_FEE_PER_SHARE] = f.fps;
  // A matching-only state reads these only when the order has them: skipping them there keeps an accept in the slot's first
  // cache line (orders.ts); read models keep them for every order.
  const full = !s.matchingOnly;
  if (!full) s.heldOrders++;
  if (full || f.hasCoid === 1) {
    ord.u32[(slot << LW) | W_COID_HI] = f.coidHi;
    ord.u32[(slot << LW) | W_COID_LO] = f.coidLo;
  }
  if (full || f.tif === Tif.gtd) {
    ord.u32[(slot << LW) | W_EXP_HI] = f.expHi;
    ord.u32[(slot << LW) | W_EXP_LO] = f.expLo;
  }
  if (full) {
    ord.u32[(slot << LW) | W_QTY] = qty;
    ord.u32[(slot << LW) | W_FILLED] = 0;
    ord.u8[(slot << LB) | B_STP] = f.stp;
    ord.u8[(slot << LB) | B_POST_ONLY] = f.postOnly;
    ord.u8[(slot << LB) | B_HAS_MAX_COST] = f.hasMaxCost;
    ord.f64[(slot << LF) | F_MAX_COST] = f.maxCost;
    ord.u8[(slot << LB) | B_REASON] = 0;
    ord.u16[(slot << LH) | H_REJECT_CODE] = 0;
    ord.u32[(slot << LW) | W_CREATED_TS_HI] = s.tsHi;
    ord.u32[(slot << LW) | W_CREATED_TS_LO] = s.tsLo;
    ord.f64[(slot << LF) | F_LAST_UPDATE_SEQ] = s.seq;
  }
  s.indexOrder(f.id, slot);
  if (f.hasCoid === 1) s.coidIndex.set(a, f.coidHi, f.coidLo, slot);
  // Live list: ascending order_id, so append at the tail.
  pushTail(acc.liveHead, acc.liveTail, ord.i32, LW, W_APREV, W_ANEXT, a, slot);
  const p = acc.position(a, f.market);
  ord.i32[(slot << LW) | W_POS_SLOT] = p;
  const k = 2 * p + outcome;
  if (side === Side.buy) {
    ord.f64[(slot << LF) | F_RESERVED_CASH] = f.reserve;
    acc.reserveCash(a, f.reserve);
    acc.addBuying(k, qty);
  } else {
    ord.f64[(slot << LF) | F_RESERVED_CASH] = 0;
    acc.reserveShares(k, qty);
  }
  return slot;
}

/** OrderRested at o: the accepted order (at `slot`) joins the tail of its level. */
export function applyRested(s: ExchangeState, m: Mem, o: number, slot: number): void {
  const ord = s.orders;
  if (!(ord.f64[(slot << LF) | F_ID] === OrderRested.order_id(m, o))) fail('apply: the rested order is live at its slot');
  s.book.append(ord, slot);
  if (ord.u8[(slot << LB) | B_TIF] === Tif.gtd) s.expiries.set(slot, ord.u32[(slot << LW) | W_EXP_HI]!, ord.u32[(slot << LW) | W_EXP_LO]!);
}

/**
 * The fields of a Filled event, gathered once: decide computes them and
 * writes the event from them (writeEvent); evolve reads them back
 * (readEvent). Either way applyFilled takes them from here.
 */
export class Fill {
  fillId = 0;
  makerId = 0;
  takerId = 0;
  makerAccount = 0;
  takerAccount = 0;
  market = 0;
  qty = 0;
  tickYes = 0;
  path = 0;
  takerSide = 0;
  takerOutcome = 0;
  makerFee = 0;
  takerFee = 0;
  makerRelease = 0;
  takerRelease = 0;

  readEvent(m: Mem, o: number): this {
    this.fillId = Filled.fill_id(m, o);
    this.makerId = Filled.maker_order_id(m, o);
    this.takerId = Filled.taker_order_id(m, o);
    this.makerAccount = Filled.maker_account(m, o);
    this.takerAccount = Filled.taker_account(m, o);
    this.market = Filled.market_id(m, o);
    this.qty = Filled.qty(m, o);
    this.tickYes = Filled.tick_yes(m, o);
    this.path = Filled.path(m, o);
    this.takerSide = Filled.taker_side(m, o);
    this.takerOutcome = Filled.taker_outcome(m, o);
    this.makerFee = Filled.maker_fee(m, o);
    this.takerFee = Filled.taker_fee(m, o);
    this.makerRelease = Filled.maker_release(m, o);
    this.takerRelease = Filled.taker_release(m, o);
    return this;
  }

  /** Writes the fields into the Filled record at o (its header is the caller's), in one call of whole-word stores. */
  writeEvent(m: Mem, o: number): void {
    Filled.write(
      m, o, this.fillId, this.makerId, this.takerId, this.makerAccount, this.takerAccount, this.market, this.qty, this.tickYes, this.path,
      this.takerSide, this.takerOutcome, this.makerFee, this.takerFee, this.makerRelease, this.takerRelease,
    );
  }
}

/** A fill between the resting maker and the incoming taker (at their slots). */
export function applyFilled(s: ExchangeState, f: Fill, maker: number, taker: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  if (!(ord.f64[(maker << LF) | F_ID] === f.makerId && ord.u8[(maker << LB) | B_ON_BOOK] === 1)) fail('apply: the maker rests at its slot');
  if (!(ord.f64[(taker << LF) | F_ID] === f.takerId)) fail('apply: the taker is live at its slot');
  const q = f.qty;
  const mTick = ord.u8[(maker << LB) | B_LADDER_TICK]!;
  const makerFee = f.makerFee;
  const takerFee = f.takerFee;
  // Maker trades at its own ladder price; the taker at the complement.
  const makerP = ord.u8[(maker << LB) | B_SIDE] === Side.buy ? mTick : 100 - mTick;
  const takerP = ord.u8[(taker << LB) | B_SIDE] === Side.buy ? 100 - mTick : mTick;
  settleParty(s, maker, q, makerP, makerFee, f.makerRelease);
  settleParty(s, taker, q, takerP, takerFee, f.takerRelease);
  acc.feesCollected += makerFee + takerFee;
  s.fillCount = f.fillId;

  const seq = s.seq;
  const mRem = ord.u32[(maker << LW) | W_REMAINING]! - q;
  if (!(mRem >= 0)) fail('apply: a fill exceeds the maker\'s remaining quantity');
  ord.u32[(maker << LW) | W_REMAINING] = mRem;
  if (!s.matchingOnly) {
    ord.u32[(maker << LW) | W_FILLED] = ord.u32[(maker << LW) | W_FILLED]! + q;
    ord.f64[(maker << LF) | F_LAST_UPDATE_SEQ] = seq;
  }
  if (mRem === 0) {
    s.book.remove(ord, maker, q);
    if (ord.u8[(maker << LB) | B_TIF] === Tif.gtd) s.expiries.remove(maker);
    ord.u8[(maker << LB) | B_STATUS] = OrderStatus.filled;
    retire(s, maker);
  } else {
    s.book.reduce(ord, maker, q);
    ord.u8[(maker << LB) | B_STATUS] = OrderStatus.partially_filled;
  }
  const tRem = ord.u32[(taker << LW) | W_REMAINING]! - q;
  if (!(tRem >= 0)) fail('apply: a fill exceeds the taker\'s remaining quantity');
  ord.u32[(taker << LW) | W_REMAINING] = tRem;
  if (!s.matchingOnly) {
    ord.u32[(taker << LW) | W_FILLED] = ord.u32[(taker << LW) | W_FILLED]! + q;
    ord.f64[(taker << LF) | F_LAST_UPDATE_SEQ] = seq;
  }
  if (tRem === 0) {
    ord.u8[(taker << LB) | B_STATUS] = OrderStatus.filled;
    retire(s, taker);
  } else {
    ord.u8[(taker << LB) | B_STATUS] = OrderStatus.partially_filled;
  }

  const market = f.market;
  const mk = s.markets;
  mk.volume[market] = mk.volume[market]! + q;
  if (f.path === 0) mk.openInterest[market] = mk.openInterest[market]! + q;
  else if (f.path === 2) mk.openInterest[market] = mk.openInterest[market]! - q;
  mk.lastTickYes[market] = f.tickYes;
}

/** One party's side of a fill: q shares at own-outcome price p, paying fee; a buy releases `release` of its reservation. */
function settleParty(s: ExchangeState, slot: number, q: number, p: number, fee: number, release: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const a = ord.u32[(slot << LW) | W_ACCOUNT]!;
  const k = 2 * ord.i32[(slot << LW) | W_POS_SLOT]! + ord.u8[(slot << LB) | B_OUTCOME]!;
  if (ord.u8[(slot << LB) | B_SIDE] === Side.buy) {
    const left = ord.f64[(slot << LF) | F_RESERVED_CASH]! - release;
    if (!(left >= 0)) fail('apply: a fill releases more than the order reserved');
    ord.f64[(slot << LF) | F_RESERVED_CASH] = left;
    acc.releaseCash(a, release, q * p + fee);
    acc.pFree[k] = acc.pFree[k]! + q;
    acc.addBuying(k, -q);
  } else {
    acc.releaseShares(k, q, false);
    acc.available[a] = acc.available[a]! + q * p - fee;
  }
}

/** OrderCanceled at o: the live order at `slot` leaves the book and its account's live list; its reservation returns. */
export function applyCanceled(s: ExchangeState, m: Mem, o: number, slot: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  if (!(ord.f64[(slot << LF) | F_ID] === OrderCanceled.order_id(m, o))) fail('apply: the canceled order is live at its slot');
  const rem = OrderCanceled.canceled_qty(m, o);
  const status = ord.u8[(slot << LB) | B_STATUS];
  const live = status !== OrderStatus.canceled && status !== OrderStatus.filled;
  if (!(live && rem === ord.u32[(slot << LW) | W_REMAINING])) fail('apply: a cancel takes a live order\'s whole remainder');
  if (ord.u8[(slot << LB) | B_ON_BOOK] === 1) s.book.remove(ord, slot, rem);
  if (ord.u8[(slot << LB) | B_TIF] === Tif.gtd) s.expiries.remove(slot);
  const a = ord.u32[(slot << LW) | W_ACCOUNT]!;
  const k = 2 * ord.i32[(slot << LW) | W_POS_SLOT]! + ord.u8[(slot << LB) | B_OUTCOME]!;
  if (ord.u8[(slot << LB) | B_SIDE] === Side.buy) {
    const release = OrderCanceled.release_cash(m, o);
    const left = ord.f64[(slot << LF) | F_RESERVED_CASH]! - release;
    if (!(left >= 0)) fail('apply: a cancel releases more than the order reserved');
    ord.f64[(slot << LF) | F_RESERVED_CASH] = left;
    acc.releaseCash(a, release, 0);
    acc.addBuying(k, -rem);
  } else {
    acc.releaseShares(k, rem, true);
  }
  ord.u32[(slot << LW) | W_REMAINING] = 0;
  ord.u8[(slot << LB) | B_STATUS] = OrderStatus.canceled;
  if (!s.matchingOnly) {
    ord.u8[(slot << LB) | B_REASON] = OrderCanceled.reason(m, o);
    ord.f64[(slot << LF) | F_LAST_UPDATE_SEQ] = s.seq;
  }
  retire(s, slot);
}

/** OrderDecreased at o: the resting order at `slot` keeps its place with a smaller remainder. */
export function applyDecreased(s: ExchangeState, m: Mem, o: number, slot: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  if (!(ord.f64[(slot << LF) | F_ID] === OrderDecreased.order_id(m, o) && ord.u8[(slot << LB) | B_ON_BOOK] === 1))
    fail('apply: the decreased order rests at its slot');
  const newQty = OrderDecreased.new_qty(m, o);
  const removed = ord.u32[(slot << LW) | W_REMAINING]! - newQty;
  if (!(removed > 0 && newQty > 0)) fail('apply: a decrease keeps between 1 and remaining - 1 shares');
  ord.u32[(slot << LW) | W_REMAINING] = newQty;
  s.book.reduce(ord, slot, removed);
  if (!s.matchingOnly) ord.f64[(slot << LF) | F_LAST_UPDATE_SEQ] = s.seq;
  const a = ord.u32[(slot << LW) | W_ACCOUNT]!;
  const k = 2 * ord.i32[(slot << LW) | W_POS_SLOT]! + ord.u8[(slot << LB) | B_OUTCOME]!;
  if (ord.u8[(slot << LB) | B_SIDE] === Side.buy) {
    const release = OrderDecreased.release_cash(m, o);
    const left = ord.f64[(slot << LF) | F_RESERVED_CASH]! - release;
    if (!(left >= 0)) fail('apply: a decrease releases more than the order reserved');
    ord.f64[(slot << LF) | F_RESERVED_CASH] = left;
    acc.releaseCash(a, release, 0);
    acc.addBuying(k, -removed);
  } else {
    acc.releaseShares(k, removed, true);
  }
}

/** OrderRejected at o: the refused placement is retained in its account's reject list (reject_cap, oldest evicted). */
export function applyRejected(s: ExchangeState, m: Mem, o: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const a = Header.account(m, o);
  const hasCoid = OrderRejected.has_client_order_id(m, o);
  // A reject adds a row unless its account's reject list is full (then its own oldest leaves).
  if (s.ordersHeld() >= s.config.max_orders && retainedRejects(s, a) < s.config.reject_cap) makeRoom(s, a);
  if (s.matchingOnly && hasCoid !== 1) {
    // Nothing decide reads: only counted, for the evictions it causes.
    s.heldOrders++;
    evictRetired(s, acc.rejHead, acc.rejTail, a, retireCounted(s, true, a, s.config.reject_cap));
    return;
  }
  const slot = ord.alloc();
  const id = OrderRejected.order_id(m, o);
  const side = OrderRejected.side(m, o);
  const outcome = OrderRejected.outcome(m, o);
  ord.f64[(slot << LF) | F_ID] = id;
  ord.u32[(slot << LW) | W_ACCOUNT] = a;
  ord.u32[(slot << LW) | W_MARKET] = OrderRejected.market_id(m, o);
  ord.u32[(slot << LW) | W_QTY] = OrderRejected.qty(m, o);
  ord.u32[(slot << LW) | W_REMAINING] = 0;
  ord.u32[(slot << LW) | W_FILLED] = 0;
  ord.u32[(slot << LW) | W_GROUP_ID] = OrderRejected.group_id(m, o);
  ord.u8[(slot << LB) | B_TICK] = OrderRejected.tick(m, o);
  ord.u8[(slot << LB) | B_SIDE] = side;
  ord.u8[(slot << LB) | B_OUTCOME] = outcome;
  ord.u8[(slot << LB) | B_TIF] = OrderRejected.tif(m, o);
  ord.u8[(slot << LB) | B_STP] = OrderRejected.stp(m, o);
  ord.u8[(slot << LB) | B_POST_ONLY] = OrderRejected.post_only(m, o);
  ord.u8[(slot << LB) | B_HAS_COID] = hasCoid;
  ord.u8[(slot << LB) | B_HAS_MAX_COST] = OrderRejected.has_max_cost(m, o);
  ord.u8[(slot << LB) | B_LADDER] = (side === Side.buy ? outcome : 1 - outcome) & 1;
  ord.u8[(slot << LB) | B_LADDER_TICK] = 0;
  ord.u8[(slot << LB) | B_STATUS] = OrderStatus.rejected;
  ord.u8[(slot << LB) | B_REASON] = 0;
  ord.u16[(slot << LH) | H_FEE_PER_SHARE] = 0;
  ord.u16[(slot << LH) | H_REJECT_CODE] = OrderRejected.code_num(m, o);
  ord.i32[(slot << LW) | W_POS_SLOT] = -1;
  ord.f64[(slot << LF) | F_RESERVED_CASH] = 0;
  ord.f64[(slot << LF) | F_MAX_COST] = OrderRejected.max_cost(m, o);
  ord.u32[(slot << LW) | W_COID_HI] = OrderRejected.client_order_id_hi(m, o);
  ord.u32[(slot << LW) | W_COID_LO] = OrderRejected.client_order_id_lo(m, o);
  ord.u32[(slot << LW) | W_EXP_HI] = OrderRejected.expiry_ts_hi(m, o);
  ord.u32[(slot << LW) | W_EXP_LO] = OrderRejected.expiry_ts_lo(m, o);
  ord.u32[(slot << LW) | W_CREATED_TS_HI] = s.tsHi;
  ord.u32[(slot << LW) | W_CREATED_TS_LO] = s.tsLo;
  ord.f64[(slot << LF) | F_LAST_UPDATE_SEQ] = s.seq;
  s.indexOrder(id, slot);
  if (hasCoid === 1) s.coidIndex.set(a, ord.u32[(slot << LW) | W_COID_HI]!, ord.u32[(slot << LW) | W_COID_LO]!, slot);
  // Rejected FIFO, oldest first; evict beyond reject_cap.
  pushTail(acc.rejHead, acc.rejTail, ord.i32, LW, W_APREV, W_ANEXT, a, slot);
  if (s.matchingOnly) {
    s.heldOrders++;
    const gone = retireCounted(s, true, a, s.config.reject_cap);
    markRetired(s, slot, s.rejTotal[a]!);
    evictRetired(s, acc.rejHead, acc.rejTail, a, gone);
    return;
  }
  acc.markRetaining(a);
  s.retainedOrders++;
  acc.rejCount[a] = acc.rejCount[a]! + 1;
  while (acc.rejCount[a]! > s.config.reject_cap) {
    forget(s, popHead(acc.rejHead, acc.rejTail, ord.i32, LW, W_APREV, W_ANEXT, a));
    acc.rejCount[a] = acc.rejCount[a]! - 1;
    s.retainedOrders--;
  }
}

/** Moves a live order that became terminal from its account's live list to the terminal FIFO; evicts beyond terminal_cap. */
function retire(s: ExchangeState, slot: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const a = ord.u32[(slot << LW) | W_ACCOUNT]!;
  unlink(acc.liveHead, acc.liveTail, ord.i32, LW, W_APREV, W_ANEXT, a, slot);
  if (s.matchingOnly) {
    // Only orders holding a client_order_id stay (decide refuses their id while retained).
    const gone = retireCounted(s, false, a, s.config.terminal_cap);
    if (ord.u8[(slot << LB) | B_HAS_COID] === 1) {
      pushTail(acc.termHead, acc.termTail, ord.i32, LW, W_APREV, W_ANEXT, a, slot);
      markRetired(s, slot, s.termTotal[a]!);
    } else {
      s.unindexOrder(ord.f64[(slot << LF) | F_ID]!);
      ord.free(slot);
    }
    evictRetired(s, acc.termHead, acc.termTail, a, gone);
    return;
  }
  pushTail(acc.termHead, acc.termTail, ord.i32, LW, W_APREV, W_ANEXT, a, slot);
  acc.markRetaining(a);
  s.retainedOrders++;
  acc.termCount[a] = acc.termCount[a]! + 1;
  while (acc.termCount[a]! > s.config.terminal_cap) {
    forget(s, popHead(acc.termHead, acc.termTail, ord.i32, LW, W_APREV, W_ANEXT, a));
    acc.termCount[a] = acc.termCount[a]! - 1;
    s.retainedOrders--;
  }
}

/**
 * Matching only: counts one more retained order of account a in one of its
 * lists (rejected: s.rejTotal and s.rejGone, else the term pair),
 * evicting the list's oldest beyond `cap` as a full state does (the count
 * only: the caller drops the row if it is kept here). Returns the list's
 * gone count: the rows numbered up to it are evicted.
 */
function retireCounted(s: ExchangeState, rejected: boolean, a: number, cap: number): number {
  if (a >= s.termTotal.length) growRetirementCounts(s, a);
  const totals = rejected ? s.rejTotal : s.termTotal;
  const gone = rejected ? s.rejGone : s.termGone;
  const n = totals[a]! + 1;
  totals[a] = n;
  s.accounts.markRetaining(a);
  s.retainedOrders++;
  let g = gone[a]!;
  if (n - g > cap) {
    // Down to cap, as a full state evicts (more than cap are kept after a restart that lowered the cap).
    const k = n - cap - g;
    g = n - cap;
    gone[a] = g;
    s.retainedOrders -= k;
    s.heldOrders -= k;
  }
  return g;
}

/** Matching only: the four per-account retirement counts, grown to hold account a. */
function growRetirementCounts(s: ExchangeState, a: number): void {
  const cap = nextCapacity(s.termTotal.length, a + 1);
  s.termTotal = grown(s.termTotal, cap);
  s.rejTotal = grown(s.rejTotal, cap);
  s.termGone = grown(s.termGone, cap);
  s.rejGone = grown(s.rejGone, cap);
}

/** Rejected orders account a retains (as a full state counts them). */
function retainedRejects(s: ExchangeState, a: number): number {
  if (!s.matchingOnly) return s.accounts.rejCount[a]!;
  return a < s.rejTotal.length ? s.rejTotal[a]! - s.rejGone[a]! : 0;
}

/** Terminal orders account a retains (as a full state counts them). */
function retainedTerminal(s: ExchangeState, a: number): number {
  if (!s.matchingOnly) return s.accounts.termCount[a]!;
  return a < s.termTotal.length ? s.termTotal[a]! - s.termGone[a]! : 0;
}

/**
 * At max_orders, before a new row (an accepted order, or a reject that does
 * not evict its own account's oldest): evicts one retained order so that the
 * orders held stay within the bound. Account a's own first if it retains any,
 * else the first account that does from a place the seq picks (so the cost
 * spreads over the accounts, the same on every thread and on replay); of that
 * account its oldest rejected order, or its oldest terminal one if it has no
 * rejected one. Decide refuses a placement when the live orders alone reach
 * the bound (order_capacity_exceeded), so there is one to evict here unless
 * the journal was written under a larger max_orders.
 */
function makeRoom(s: ExchangeState, a: number): void {
  const acc = s.accounts;
  let v = a;
  if (retainedRejects(s, v) + retainedTerminal(s, v) === 0) v = acc.retainingFrom(1 + (s.seq % acc.count));
  // None retained: live orders alone are at the bound, which decide allows only in a journal written under a larger
  // max_orders (lowered at a restart). Nothing evicts a live order: the orders held stay over the bound until live ones
  // end (decide refuses placements meanwhile), the same in every state and on every replay.
  if (v === 0) return;
  const ord = s.orders;
  const rej = retainedRejects(s, v) > 0;
  if (s.matchingOnly) {
    const gone = rej ? s.rejGone : s.termGone;
    gone[v] = gone[v]! + 1;
    if (rej) evictRetired(s, acc.rejHead, acc.rejTail, v, gone[v]!);
    else evictRetired(s, acc.termHead, acc.termTail, v, gone[v]!);
    s.heldOrders--;
  } else if (rej) {
    forget(s, popHead(acc.rejHead, acc.rejTail, ord.i32, LW, W_APREV, W_ANEXT, v));
    acc.rejCount[v] = acc.rejCount[v]! - 1;
  } else {
    forget(s, popHead(acc.termHead, acc.termTail, ord.i32, LW, W_APREV, W_ANEXT, v));
    acc.termCount[v] = acc.termCount[v]! - 1;
  }
  s.retainedOrders--;
  if (retainedRejects(s, v) + retainedTerminal(s, v) === 0) acc.unmarkRetaining(v);
}

/** Matching only: the retained order at slot retired as its account's n-th. */
function markRetired(s: ExchangeState, slot: number, n: number): void {
  if (slot >= s.retiredAt.length) s.retiredAt = grown(s.retiredAt, s.orders.capacity);
  s.retiredAt[slot] = n;
}

/** Matching only: evicts account a's retained orders (oldest first) that retired as its upTo-th or earlier. */
function evictRetired(s: ExchangeState, head: Int32Array, tail: Int32Array, a: number, upTo: number): void {
  const ord = s.orders;
  while (head[a] !== NIL && s.retiredAt[head[a]!]! <= upTo) forget(s, popHead(head, tail, ord.i32, LW, W_APREV, W_ANEXT, a));
}

/** Drops an evicted retained order from the slab and its indexes. */
function forget(s: ExchangeState, slot: number): void {
  const ord = s.orders;
  if (!(slot !== NIL)) fail('apply: eviction from an empty retention list');
  s.unindexOrder(ord.f64[(slot << LF) | F_ID]!);
  const w = slot << LW;
  // Only while the id still names this order: a journal written under a smaller cap (raised at a restart) may hold a
  // later order with the same id, which the replay indexed over this one.
  if (ord.u8[(slot << LB) | B_HAS_COID] === 1) {
    const a = ord.u32[w | W_ACCOUNT]!;
    const hi = ord.u32[w | W_COID_HI]!;
    const lo = ord.u32[w | W_COID_LO]!;
    if (s.coidIndex.get(a, hi, lo) === slot) s.coidIndex.delete(a, hi, lo);
  }
  ord.free(slot);
}
