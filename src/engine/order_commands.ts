// order_commands: CancelOrder, DecreaseOrder, CancelAll and the dead-man
// timer, and cancelLive, the one way a live order is canceled (used by
// placement, the clock and the round commands too). Engine thread. Rules in
// src/engine/README.md ("Other order commands").

import * as ordersModule from '../book/orders.js';
import * as recordsModule from '../layout/records.js';
import * as u64Module from '../lib/u64.js';
import type { Emitter } from './emitter.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const {
  CancelReason, DeadmanArmed, DeadmanDisarmed, OrderCanceled, OrderDecreased, Reject, Side, T_ARM_DEADMAN, T_CANCEL_ALL, T_CANCEL_ORDER,
  T_DECREASE_ORDER, T_DISARM_DEADMAN,
} = recordsModule;
const { addHiLo } = u64Module;
const {
  NIL, B_ON_BOOK, B_SIDE, B_TICK, F_ID, F_RESERVED_CASH, H_FEE_PER_SHARE, LB, LF, LH, LW, W_ACCOUNT, W_ANEXT, W_GROUP_ID,
  W_MARKET, W_REMAINING,
} = ordersModule;

/**
 * OrderCanceled for the live order at `slot`: its whole remainder, its
 * reservation released. Exported as cancelLive; this module calls it as
 * `cancel`, because an exported binding is read from its module cell at
 * every use in optimized code (docs/engine-performance.md, "Imported
 * bindings").
 */
function cancel(e: Emitter, slot: number, reason: number): void {
  const ord = e.state.orders;
  const m = e.m;
  const o = e.begin(OrderCanceled.TYPE, OrderCanceled.SIZE, ord.u32[(slot << LW) | W_ACCOUNT]!);
  const release = ord.u8[(slot << LB) | B_SIDE] === Side.buy ? ord.f64[(slot << LF) | F_RESERVED_CASH]! : 0;
  OrderCanceled.write(m, o, ord.f64[(slot << LF) | F_ID]!, ord.u32[(slot << LW) | W_REMAINING]!, reason, release);
  e.canceled(o, slot);
}
export const cancelLive = cancel;

/** The slot of the account's resting order `orderId`, or -1 (unknown, another account's, or no longer live). */
function ownLiveSlot(e: Emitter, orderId: number, account: number): number {
  const s = e.state;
  const slot = s.slotOf(orderId);
  return slot >= 0 && s.orders.u32[(slot << LW) | W_ACCOUNT] === account && s.orders.u8[(slot << LB) | B_ON_BOOK] === 1 ? slot : -1;
}

export function cancelOrder(e: Emitter, orderId: number, account: number): void {
  const slot = ownLiveSlot(e, orderId, account);
  if (slot < 0) return e.orderRejected(T_CANCEL_ORDER, Reject.unknown_order, account, orderId);
  const qty = e.state.orders.u32[(slot << LW) | W_REMAINING]!;
  cancel(e, slot, CancelReason.user_canceled);
  e.orderOk(T_CANCEL_ORDER, account, orderId, qty);
}

export function decreaseOrder(e: Emitter, orderId: number, newQty: number, account: number): void {
  const slot = ownLiveSlot(e, orderId, account);
  if (slot < 0) return e.orderRejected(T_DECREASE_ORDER, Reject.unknown_order, account, orderId);
  const ord = e.state.orders;
  const rem = ord.u32[(slot << LW) | W_REMAINING]!;
  const n = newQty < rem ? newQty : rem;
  if (n === 0) {
    cancel(e, slot, CancelReason.decreased_to_zero);
  } else if (n < rem) {
    const m = e.m;
    const o = e.begin(OrderDecreased.TYPE, OrderDecreased.SIZE, account);
    OrderDecreased.clear_reserved(m, o);
    OrderDecreased.set_order_id(m, o, orderId);
    OrderDecreased.set_new_qty(m, o, n);
    const perShare = ord.u8[(slot << LB) | B_TICK]! + ord.u16[(slot << LH) | H_FEE_PER_SHARE]!;
    OrderDecreased.set_release_cash(m, o, ord.u8[(slot << LB) | B_SIDE] === Side.buy ? (rem - n) * perShare : 0);
    e.decreased(o, slot);
  }
  e.orderOk(T_DECREASE_ORDER, account, orderId, n);
}

export function cancelAll(e: Emitter, market: number, group: number, account: number): void {
  if (!e.state.accounts.isLive(account)) return e.rejected(T_CANCEL_ALL, Reject.unknown_account, account);
  cancelWhere(e, account, market, group, CancelReason.mass_canceled);
  e.ok(T_CANCEL_ALL, account, 0);
}

/** Cancels the account's live orders in ascending order_id, filtered by market and group (0 = any). */
export function cancelWhere(e: Emitter, account: number, market: number, group: number, reason: number): void {
  const ord = e.state.orders;
  let slot = e.state.accounts.liveHead[account]!;
  while (slot !== NIL) {
    const next = ord.i32[(slot << LW) | W_ANEXT]!;
    const w = slot << LW;
    if ((market === 0 || ord.u32[w | W_MARKET] === market) && (group === 0 || ord.u32[w | W_GROUP_ID] === group)) cancel(e, slot, reason);
    slot = next;
  }
}

export function armDeadman(e: Emitter, timeoutMs: number, account: number): void {
  if (!e.state.accounts.isLive(account)) return e.rejected(T_ARM_DEADMAN, Reject.unknown_account, account);
  addHiLo(e.tsHi, e.tsLo, timeoutMs * 1_000_000, e.hilo);
  const hi = e.hilo[0]!;
  const lo = e.hilo[1]!;
  const m = e.m;
  const o = e.begin(DeadmanArmed.TYPE, DeadmanArmed.SIZE, account);
  DeadmanArmed.clear_reserved(m, o);
  DeadmanArmed.set_timeout_ms(m, o, timeoutMs);
  DeadmanArmed.set_fires_at_ts(m, o, hi, lo);
  e.commit(o);
  e.okAt(T_ARM_DEADMAN, account, timeoutMs, hi, lo);
}

export function disarmDeadman(e: Emitter, account: number): void {
  if (!e.state.accounts.isLive(account)) return e.rejected(T_DISARM_DEADMAN, Reject.unknown_account, account);
  if (e.state.accounts.deadArmed[account] === 1) emitDisarmed(e, account, 0);
  e.ok(T_DISARM_DEADMAN, account, 0);
}

/** DeadmanDisarmed: `fired` 1 when the clock fired it (its orders were just canceled), 0 when the account disarmed it. */
export function emitDisarmed(e: Emitter, account: number, fired: number): void {
  const o = e.begin(DeadmanDisarmed.TYPE, DeadmanDisarmed.SIZE, account);
  DeadmanDisarmed.clear_reserved(e.m, o);
  DeadmanDisarmed.set_fired(e.m, o, fired);
  e.commit(o);
}
