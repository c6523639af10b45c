// ExchangeState: everything the engine knows, in preallocated typed arrays.
// Written only by evolve (src/engine/evolve.ts): on the engine thread, in every
// gateway read model, and in recovery. decide reads it.

import { Accounts } from '../accounts/accounts.js';
import { Book } from '../book/book.js';
import { OrderSlab } from '../book/orders.js';
import { TimerHeap } from '../lib/timer_heap.js';
import { U32x3Map } from '../lib/u32x3_map.js';
import { engineConfig, type EngineConfig } from './config.js';
import { Markets, ORACLE_SOURCES } from './markets.js';

const SLOT_CACHE = 4096;

export class ExchangeState {
  readonly config: EngineConfig;
  /** Last sequenced seq and its ts (hi, lo). */
  seq = 0;
  tsHi = 0;
  tsLo = 0;
  fillCount = 0;

  readonly orders: OrderSlab;
  readonly book: Book;
  readonly accounts: Accounts;
  readonly markets: Markets;
  /** order_id (lo, hi) -> slot for live and retained orders. */
  readonly orderIndex: U32x3Map;
  /** (account, client_order_id hi, lo) -> slot for live and retained orders. */
  readonly coidIndex: U32x3Map;
  /** Resting gtd orders by expiry (ids are slots). */
  readonly expiries: TimerHeap;
  /** Armed dead-man timers by fires_at (ids are accounts). */
  readonly deadmen: TimerHeap;
  /** Trading rounds by close_ts (ids are markets). */
  readonly closes: TimerHeap;
  /** Frozen, undisputed rounds by close_ts, waiting to be proposed (ids are markets). */
  readonly awaitingProposal: TimerHeap;
  /** Proposed rounds by proposed_ts + dispute window (ids are markets). */
  readonly disputeDeadlines: TimerHeap;
  /** Active series markets without a non-terminal round, by the time they became so (ids are markets). */
  readonly seriesWaiting: TimerHeap;
  /** Oracle sources by last tick + staleness, i.e. when they stop being fresh (ids are source ids). */
  readonly oracleExpiries: TimerHeap;

  constructor(config: Partial<EngineConfig> = {}) {
    this.config = engineConfig(config);
    const c = this.config;
    this.orders = new OrderSlab(c.order_capacity);
    this.book = new Book(c.market_capacity);
    this.accounts = new Accounts(c.account_capacity);
    this.markets = new Markets(c.market_capacity);
    this.orderIndex = new U32x3Map(c.order_capacity * 2);
    this.coidIndex = new U32x3Map(1024);
    this.expiries = new TimerHeap(c.order_capacity);
    this.deadmen = new TimerHeap(c.account_capacity);
    this.closes = new TimerHeap(c.market_capacity);
    this.awaitingProposal = new TimerHeap(c.market_capacity);
    this.disputeDeadlines = new TimerHeap(c.market_capacity);
    this.seriesWaiting = new TimerHeap(c.market_capacity);
    this.oracleExpiries = new TimerHeap(ORACLE_SOURCES);
  }

  // A direct-mapped cache in front of orderIndex: order ids are seqs, so the
  // orders a command touches (the taker just accepted, makers near the top
  // of the book) are mostly recent and hit here without hashing.
  private readonly cacheId = new Float64Array(SLOT_CACHE);
  private readonly cacheSlot = new Int32Array(SLOT_CACHE);

  /** Slot of a live or retained order, -1 when unknown. */
  slotOf(orderId: number): number {
    const i = orderId & (SLOT_CACHE - 1);
    if (this.cacheId[i] === orderId) return this.cacheSlot[i]!;
    const slot = this.orderIndex.get(orderId >>> 0, Math.floor(orderId / 4294967296), 0);
    if (slot >= 0) {
      this.cacheId[i] = orderId;
      this.cacheSlot[i] = slot;
    }
    return slot;
  }

  /** Indexes a new order (evolve only). */
  indexOrder(orderId: number, slot: number): void {
    this.orderIndex.set(orderId >>> 0, Math.floor(orderId / 4294967296), 0, slot);
    const i = orderId & (SLOT_CACHE - 1);
    this.cacheId[i] = orderId;
    this.cacheSlot[i] = slot;
  }

  /** Drops an evicted order from the index (evolve only). */
  unindexOrder(orderId: number): void {
    this.orderIndex.delete(orderId >>> 0, Math.floor(orderId / 4294967296), 0);
    const i = orderId & (SLOT_CACHE - 1);
    if (this.cacheId[i] === orderId) this.cacheId[i] = 0;
  }
}
