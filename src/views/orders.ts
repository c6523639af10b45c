// orders: the order queries of the read model: an account's retained orders
// (live, terminal and rejected), one order with its status, its queue
// position, and the per-order facts the WebSocket fan-out needs. Read from
// the folded engine state's order slab. Runs on the thread that owns the
// Views.

import * as ordersModule from '../book/orders.js';
import {
  CANCEL_REASON_NAMES, ORDER_STATUS_NAMES, OUTCOME_NAMES, OrderFlag, OrderStatus, Outcome, SIDE_NAMES, STP_NAMES, Side, Stp, TIF_NAMES, Tif,
} from '../layout/records.js';
import { hiLoToString } from '../lib/u64.js';
import type { Order, OrdersPage, OrderWithStatus, QueuePosition } from '../wire/responses.js';
import { CursorKind, cursorScope, decodeCursor, encodeCursor } from './cursor.js';
import { accountKnown, checkLimit, codeName, statusMask, type OrdersQuery, type ViewsData } from './model.js';

// Field offsets as module constants (an imported binding is a module cell read at every use; docs/engine-performance.md).
const {
  NIL, B_HAS_COID, B_HAS_MAX_COST, B_ON_BOOK, B_OUTCOME, B_POST_ONLY, B_REASON, B_SIDE, B_STATUS, B_STP, B_TICK, B_TIF, F_ID,
  F_LAST_UPDATE_SEQ, F_MAX_COST, F_RESERVED_CASH, H_FEE_PER_SHARE, H_REJECT_CODE, LB, LF, LH, LW, W_ACCOUNT, W_ANEXT, W_COID_HI,
  W_COID_LO, W_CREATED_TS_HI, W_CREATED_TS_LO, W_EXP_HI, W_EXP_LO, W_FILLED, W_GROUP_ID, W_MARKET, W_PREV, W_QTY, W_REMAINING,
} = ordersModule;

/** OrderFlag bits of an order (documented in native-layout LAYOUT.md, enum OrderFlag). */
function flags(v: ViewsData, slot: number): number {
  const ord = v.state.orders;
  let f = 0;
  if (ord.u8[(slot << LB) | B_SIDE] === Side.sell) f |= OrderFlag.sell;
  if (ord.u8[(slot << LB) | B_OUTCOME] === Outcome.no) f |= OrderFlag.outcome_no;
  if (ord.u8[(slot << LB) | B_POST_ONLY] === 1) f |= OrderFlag.post_only;
  const tif = ord.u8[(slot << LB) | B_TIF]!;
  if (tif === Tif.gtd) f |= OrderFlag.tif_gtd;
  else if (tif === Tif.ioc) f |= OrderFlag.tif_ioc;
  else if (tif === Tif.fok) f |= OrderFlag.tif_fok;
  const stp = ord.u8[(slot << LB) | B_STP]!;
  if (stp === Stp.cancel_maker) f |= OrderFlag.stp_cancel_maker;
  else if (stp === Stp.cancel_both) f |= OrderFlag.stp_cancel_both;
  if (ord.u8[(slot << LB) | B_HAS_MAX_COST] === 1) f |= OrderFlag.max_cost;
  return f;
}

function orderItem(v: ViewsData, slot: number): Order {
  const ord = v.state.orders;
  const w = slot << LW;
  const status = ord.u8[(slot << LB) | B_STATUS]!;
  let reason = '';
  if (status === OrderStatus.canceled) reason = CANCEL_REASON_NAMES[ord.u8[(slot << LB) | B_REASON]!]!;
  else if (status === OrderStatus.rejected) reason = codeName(ord.u16[(slot << LH) | H_REJECT_CODE]!);
  return {
    order_id: String(ord.f64[(slot << LF) | F_ID]!),
    client_order_id: ord.u8[(slot << LB) | B_HAS_COID] === 1 ? hiLoToString(ord.u32[w | W_COID_HI]!, ord.u32[w | W_COID_LO]!) : '0',
    market_id: ord.u32[(slot << LW) | W_MARKET]!,
    tick: ord.u8[(slot << LB) | B_TICK]!,
    qty: ord.u32[(slot << LW) | W_QTY]!,
    expiry_ts: hiLoToString(ord.u32[(slot << LW) | W_EXP_HI]!, ord.u32[(slot << LW) | W_EXP_LO]!),
    max_cost: String(ord.f64[(slot << LF) | F_MAX_COST]!),
    group_id: ord.u32[(slot << LW) | W_GROUP_ID]!,
    flags: flags(v, slot),
    reason,
    filled_qty: ord.u32[(slot << LW) | W_FILLED]!,
    remaining_qty: ord.u32[(slot << LW) | W_REMAINING]!,
    // The seq that accepted (or rejected) an order is its id.
    created_seq: String(ord.f64[(slot << LF) | F_ID]!),
    created_ts: hiLoToString(ord.u32[(slot << LW) | W_CREATED_TS_HI]!, ord.u32[(slot << LW) | W_CREATED_TS_LO]!),
    last_update_seq: String(ord.f64[(slot << LF) | F_LAST_UPDATE_SEQ]!),
    side: SIDE_NAMES[ord.u8[(slot << LB) | B_SIDE]!]!,
    outcome: OUTCOME_NAMES[ord.u8[(slot << LB) | B_OUTCOME]!]!,
    tif: TIF_NAMES[ord.u8[(slot << LB) | B_TIF]!]!,
    post_only: ord.u8[(slot << LB) | B_POST_ONLY] === 1,
    stp: STP_NAMES[ord.u8[(slot << LB) | B_STP]!]!,
  };
}

/** Slot of a retained order of the account, -1 when unknown, evicted or foreign. */
function ownSlot(v: ViewsData, account: number, orderId: number): number {
  if (!Number.isSafeInteger(orderId) || orderId < 1) return -1;
  const slot = v.state.slotOf(orderId);
  return slot >= 0 && v.state.orders.u32[(slot << LW) | W_ACCOUNT] === account ? slot : -1;
}

/**
 * Every retained order of the account (live, terminal and rejected),
 * newest first (descending order_id), filtered by market, any of the
 * statuses and client_order_id.
 */
export function ordersPage(v: ViewsData, account: number, q: OrdersQuery): OrdersPage {
  checkLimit(q.limit);
  const mask = statusMask('status', q.status, ORDER_STATUS_NAMES);
  const scope = cursorScope(account, q);
  const before = decodeCursor(CursorKind.orders, q.cursor, scope);
  const s = v.state;
  const ord = s.orders;
  const acc = s.accounts;
  const slots: number[] = [];
  const consider = (slot: number): void => {
    if (before >= 0 && ord.f64[(slot << LF) | F_ID]! >= before) return;
    if (q.market_id !== undefined && ord.u32[(slot << LW) | W_MARKET] !== q.market_id) return;
    if ((mask & (1 << ord.u8[(slot << LB) | B_STATUS]!)) === 0) return;
    slots.push(slot);
  };
  if (accountKnown(s, account)) {
    if (q.client_order_id !== undefined) {
      // At most one retained order of an account holds a client_order_id.
      const slot = s.coidIndex.get(account, q.client_order_id[0] >>> 0, q.client_order_id[1] >>> 0);
      if (slot >= 0) consider(slot);
    } else {
      const liveMask = (1 << OrderStatus.resting) | (1 << OrderStatus.partially_filled);
      const termMask = (1 << OrderStatus.filled) | (1 << OrderStatus.canceled);
      if (mask & liveMask) for (let x = acc.liveHead[account]!; x !== NIL; x = ord.i32[(x << LW) | W_ANEXT]!) consider(x);
      if (mask & termMask) for (let x = acc.termHead[account]!; x !== NIL; x = ord.i32[(x << LW) | W_ANEXT]!) consider(x);
      if (mask & (1 << OrderStatus.rejected)) for (let x = acc.rejHead[account]!; x !== NIL; x = ord.i32[(x << LW) | W_ANEXT]!) consider(x);
      slots.sort((x, y) => ord.f64[(y << LF) | F_ID]! - ord.f64[(x << LF) | F_ID]!);
    }
  }
  const n = Math.min(slots.length, q.limit);
  const out: Order[] = new Array(n);
  for (let i = 0; i < n; i++) out[i] = orderItem(v, slots[i]!);
  const last = slots.length > q.limit ? ord.f64[((slots[n - 1]!) << LF) | F_ID]! : -1;
  const cursor = last >= 0 ? encodeCursor(CursorKind.orders, last, scope) : '';
  return { orders: out, cursor, as_of_seq: String(s.seq) };
}

/** How many live (resting or partially filled) orders the account has: one walk of its live list, nothing allocated. */
export function openOrderCount(v: ViewsData, account: number): number {
  const s = v.state;
  if (!accountKnown(s, account)) return 0;
  const ord = s.orders;
  let n = 0;
  for (let x = s.accounts.liveHead[account]!; x !== NIL; x = ord.i32[(x << LW) | W_ANEXT]!) n++;
  return n;
}

/**
 * One retained order of the account with its status (duplicate_client_order_id
 * details, user channel); null when unknown, evicted or foreign.
 */
export function orderWithStatus(v: ViewsData, account: number, orderId: number): OrderWithStatus | null {
  const slot = ownSlot(v, account, orderId);
  if (slot < 0) return null;
  const { order_id, ...rest } = orderItem(v, slot);
  return { order_id, status: ORDER_STATUS_NAMES[v.state.orders.u8[(slot << LB) | B_STATUS]!]!, ...rest };
}

/** Shares ahead of a live own order in its level's queue; null unless the order rests and is the caller's. */
export function queuePosition(v: ViewsData, account: number, orderId: number): QueuePosition | null {
  const slot = ownSlot(v, account, orderId);
  const ord = v.state.orders;
  if (slot < 0 || ord.u8[(slot << LB) | B_ON_BOOK] !== 1) return null;
  let ahead = 0;
  for (let x = ord.i32[(slot << LW) | W_PREV]!; x !== NIL; x = ord.i32[(x << LW) | W_PREV]!) ahead += ord.u32[(x << LW) | W_REMAINING]!;
  return { order_id: String(orderId), market_id: ord.u32[(slot << LW) | W_MARKET]!, shares_ahead: ahead, as_of_seq: String(v.state.seq) };
}

// ---- per-order facts for the WebSocket fan-out (by order id, any account; one lookup, nothing allocated) ----

/** out[0] = the order's market, out[1] = its account; false (out untouched) when the order is not retained. */
export function orderOwner(v: ViewsData, orderId: number, out: Float64Array): boolean {
  const slot = v.state.slotOf(orderId);
  if (slot < 0) return false;
  out[0] = v.state.orders.u32[(slot << LW) | W_MARKET]!;
  out[1] = v.state.orders.u32[(slot << LW) | W_ACCOUNT]!;
  return true;
}

export function orderFilled(v: ViewsData, orderId: number): boolean {
  const slot = v.state.slotOf(orderId);
  return slot >= 0 && v.state.orders.u8[(slot << LB) | B_STATUS] === OrderStatus.filled;
}

/**
 * out[0] = cents the order still reserves, out[1] = the worst-case fee
 * per share a buy reserved (0 for sells); zeros when not retained.
 */
export function orderReservation(v: ViewsData, orderId: number, out: Float64Array): void {
  const slot = v.state.slotOf(orderId);
  const ord = v.state.orders;
  out[0] = slot < 0 ? 0 : ord.f64[(slot << LF) | F_RESERVED_CASH]!;
  out[1] = slot >= 0 && ord.u8[(slot << LB) | B_SIDE] === Side.buy ? ord.u16[(slot << LH) | H_FEE_PER_SHARE]! : 0;
}
