// EngineConfig: the engine's tunables. Caps and the dispute window are read by
// evolve too, so recovery and read models must run with the configuration the
// journal was written with (they come from the same environment).
// Plain data: the engine thread, every read model thread and tools.

import { MAX_SLOTS } from '../book/orders.js';

export interface EngineConfig {
  /** Largest qty a single order may carry. */
  max_qty: number;
  /** Terminal (filled or canceled) orders retained per account. */
  terminal_cap: number;
  /** Rejected orders retained per account. */
  reject_cap: number;
  /** Terminal rounds retained (all markets). */
  round_cap: number;
  /** Finished (confirmed or failed) withdrawals retained per account; pending ones always are. */
  withdrawal_cap: number;
  /** Revoked keys retained per account (listed as revoked); live ones always are. */
  revoked_key_cap: number;
  /** Deposits per account whose refs are remembered (a deposit retried with its ref is credited once), newest first. */
  deposit_ref_cap: number;
  /** An oracle source is fresh while its last tick is younger than this. */
  oracle_staleness_ms: number;
  /** Fresh sources needed to propose from the oracle. */
  oracle_quorum: number;
  /** A proposed round settles by itself after this long. */
  dispute_window_ms: number;
  /**
   * Most orders the exchange holds at once, live and retained (each account's
   * newest terminal_cap ended and reject_cap rejected ones), all accounts
   * together: what every read model keeps. At the bound a new order first
   * evicts a retained one (apply.ts makeRoom); a placement is refused
   * (order_capacity_exceeded, nothing retained) only when live orders alone
   * fill it. So no order table grows without bound, and a restart never
   * replays into more than it held.
   */
  max_orders: number;
  /**
   * Initial table sizes. A full table doubles, which copies it on the engine
   * thread (tens of ms at a million orders: bench/engine_scale measures it),
   * so production sizes them for the load it expects.
   */
  order_capacity: number;
  account_capacity: number;
  market_capacity: number;
  /** (account, market) positions; 0 = as many as account_capacity. */
  position_capacity: number;
}

/**
 * The largest max_orders: the order slab's most slots (2^24 slots of 128
 * bytes, 2 GiB in every read model). A state never holds more orders than
 * max_orders, so its slab never needs more slots.
 */
export const MAX_ORDERS_LIMIT = MAX_SLOTS;

export const DEFAULT_ENGINE_CONFIG: Readonly<EngineConfig> = Object.freeze({
  max_qty: 1_000_000,
  terminal_cap: 1000,
  reject_cap: 100,
  round_cap: 1000,
  withdrawal_cap: 1000,
  revoked_key_cap: 100,
  deposit_ref_cap: 1000,
  oracle_staleness_ms: 10_000,
  oracle_quorum: 1,
  dispute_window_ms: 60_000,
  max_orders: MAX_ORDERS_LIMIT,
  order_capacity: 1 << 16,
  account_capacity: 1024,
  market_capacity: 64,
  position_capacity: 0,
});

export function engineConfig(partial: Partial<EngineConfig> = {}): EngineConfig {
  const c = { ...DEFAULT_ENGINE_CONFIG, ...partial };
  for (const k of ['terminal_cap', 'reject_cap', 'round_cap', 'withdrawal_cap', 'revoked_key_cap', 'deposit_ref_cap'] as const) {
    if (!Number.isSafeInteger(c[k]) || c[k] < 1) throw new Error(`engine config: ${k} must be at least 1, got ${c[k]}`);
  }
  if (!Number.isSafeInteger(c.max_orders) || c.max_orders < 1 || c.max_orders > MAX_ORDERS_LIMIT) {
    throw new Error(`engine config: max_orders must be 1..${MAX_ORDERS_LIMIT}, got ${c.max_orders}`);
  }
  // A quorum of 0 would propose (and open series rounds) from no price at all.
  if (!Number.isInteger(c.oracle_quorum) || c.oracle_quorum < 1) {
    throw new Error(`engine config: oracle_quorum must be at least 1, got ${c.oracle_quorum}`);
  }
  if (!Number.isSafeInteger(c.oracle_staleness_ms * 1_000_000) || c.oracle_staleness_ms < 1) {
    throw new Error(`engine config: bad oracle_staleness_ms ${c.oracle_staleness_ms}`);
  }
  if (!Number.isSafeInteger(c.dispute_window_ms * 1_000_000) || c.dispute_window_ms < 0) {
    throw new Error(`engine config: bad dispute_window_ms ${c.dispute_window_ms}`);
  }
  return c;
}
