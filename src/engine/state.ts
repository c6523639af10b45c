// ExchangeState: everything the engine knows, in preallocated typed arrays.
// Changed only by applying events: evolve (src/engine/evolve.ts) in every
// gateway read model and in recovery; on the engine thread the same changes
// through the fused path (apply.ts, called as each event is written). decide
// reads it.

import { Accounts } from '../accounts/accounts.js';
import { Book } from '../book/book.js';
import { OrderSlab } from '../book/orders.js';
import { assert } from '../lib/assert.js';
import { IdIndex } from '../lib/id_index.js';
import { TimerHeap } from '../lib/timer_heap.js';
import { U32x3Map } from '../lib/u32x3_map.js';
import { engineConfig, type EngineConfig } from './config.js';
import { Markets, ORACLE_SOURCES } from './markets.js';

export class ExchangeState {
  readonly config: EngineConfig;
  /** Last sequenced seq and its ts (hi, lo). */
  seq = 0;
  tsHi = 0;
  tsLo = 0;
  fillCount = 0;
  /**
   * Matching only: evolve skips the order columns that only read models
   * read (qty, filled, stp, post_only, has_max_cost, max_cost, reason,
   * reject code, created ts, last update seq). The engine thread sets it,
   * because decide never reads them and writing them cost ~10% of its time
   * (tools/engine_ab). Such a state holds stale values in those columns, so
   * it is for matching only: never answer a query from it or compare its
   * hash with a read model's. Off (and absent in older snapshots) everywhere
   * else.
   */
  matchingOnly = false;

  readonly orders: OrderSlab;
  readonly book: Book;
  readonly accounts: Accounts;
  readonly markets: Markets;
  /** order_id -> slot for live and retained orders. */
  readonly orderIndex: IdIndex;
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
    this.orderIndex = new IdIndex(c.order_capacity * 2);
    this.coidIndex = new U32x3Map(1024);
    this.expiries = new TimerHeap(c.order_capacity);
    this.deadmen = new TimerHeap(c.account_capacity);
    this.closes = new TimerHeap(c.market_capacity);
    this.awaitingProposal = new TimerHeap(c.market_capacity);
    this.disputeDeadlines = new TimerHeap(c.market_capacity);
    this.seriesWaiting = new TimerHeap(c.market_capacity);
    this.oracleExpiries = new TimerHeap(ORACLE_SOURCES);
  }

  /** Slot of a live or retained order, -1 when unknown. */
  slotOf(orderId: number): number {
    return this.orderIndex.get(orderId);
  }

  /** Indexes a new order (evolve only). */
  indexOrder(orderId: number, slot: number): void {
    this.orderIndex.set(orderId, slot);
  }

  /** Drops an evicted order from the index (evolve only). */
  unindexOrder(orderId: number): void {
    assert(this.orderIndex.delete(orderId), 'state: an evicted order was not indexed');
  }
}
