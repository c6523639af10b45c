// ExchangeState: everything the engine knows, in preallocated typed arrays.
// Changed only by applying events: evolve (src/engine/evolve.ts) in every
// gateway read model and in recovery; on the engine thread the same changes
// through the fused path (apply.ts, called as each event is written). decide
// reads it.

import { Accounts } from '../accounts/accounts.js';
import { Book } from '../book/book.js';
import { OrderSlab } from '../book/orders.js';
import * as assertModule from '../lib/assert.js';
import { IdIndex } from '../lib/id_index.js';
import * as intrusiveListModule from '../lib/intrusive_list.js';
import { TimerHeap } from '../lib/timer_heap.js';
import { U32x3Map } from '../lib/u32x3_map.js';
import { engineConfig, type EngineConfig } from './config.js';
import { Markets, ORACLE_SOURCES } from './markets.js';
import * as ordersModule from '../book/orders.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const { checks, fail } = assertModule;
const { NIL, unlinkPacked: unlink } = intrusiveListModule;
const { B_HAS_COID, F_ID, LB, LF, LW, W_ANEXT, W_APREV } = ordersModule;

export class ExchangeState {
  readonly config: EngineConfig;
  /** Last sequenced seq and its ts (hi, lo). */
  seq = 0;
  tsHi = 0;
  tsLo = 0;
  fillCount = 0;
  /**
   * Matching only: the state as the engine thread keeps it, with only what
   * decide reads. Set by enterMatchingOnly(), never by assignment. Its
   * changes then skip the order columns only read models read (qty, filled,
   * stp, post_only, has_max_cost, max_cost, reason, reject code, created ts,
   * last update seq; client_order_id and expiry of an order without them), and retention keeps only the terminal and rejected
   * orders that hold a client_order_id (decide reads retained orders only to
   * refuse a duplicate one); the others leave the slab when they end. Such a
   * state is for matching only: never answer a query from it or compare its
   * hash with a read model's. Off (and absent in older snapshots) everywhere
   * else; the differential test runs a matching-only twin beside the full
   * engine and requires the same events.
   */
  matchingOnly = false;
  /**
   * Matching only: per account, how many of its orders ever became terminal
   * (termTotal) or were rejected (rejTotal), how many of those a full state
   * has evicted (termGone, rejGone: the account keeps the ones numbered
   * above), and per slot the number under which a retained order retired
   * (retiredAt). Evictions move the gone counts, whether or not the rows
   * they drop are kept here. Empty otherwise.
   */
  termTotal: Float64Array = new Float64Array(0);
  rejTotal: Float64Array = new Float64Array(0);
  termGone: Float64Array = new Float64Array(0);
  rejGone: Float64Array = new Float64Array(0);
  retiredAt: Float64Array = new Float64Array(0);
  /**
   * Matching only: the orders a full state (every read model) holds, live
   * and retained: what `orders.count` is there. Kept by the same evictions,
   * counted instead of done (apply.ts). Read through ordersHeld().
   */
  heldOrders = 0;
  /** The retained (terminal and rejected) orders a full state holds, all accounts together: ordersHeld() less the live ones. */
  retainedOrders = 0;

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
    this.accounts = new Accounts(c.account_capacity, c.position_capacity > 0 ? c.position_capacity : c.account_capacity);
    this.markets = new Markets(c.market_capacity);
    // Sized by the ids it holds, not by order_capacity: ids rise with every
    // seq, so a table of a given size is written end to end in that many seqs.
    this.orderIndex = new IdIndex(1024, c.order_capacity * 2);
    this.coidIndex = new U32x3Map(1024);
    this.expiries = new TimerHeap(c.order_capacity);
    this.deadmen = new TimerHeap(c.account_capacity);
    this.closes = new TimerHeap(c.market_capacity);
    this.awaitingProposal = new TimerHeap(c.market_capacity);
    this.disputeDeadlines = new TimerHeap(c.market_capacity);
    this.seriesWaiting = new TimerHeap(c.market_capacity);
    this.oracleExpiries = new TimerHeap(ORACLE_SOURCES);
  }

  /** The orders every read model holds, live and retained (at max_orders, a new one first evicts a retained one). */
  ordersHeld(): number {
    return this.matchingOnly ? this.heldOrders : this.orders.count;
  }

  /** Live orders (resting, or being placed): the ones max_orders bounds, since nothing evicts them. */
  liveOrders(): number {
    return this.ordersHeld() - this.retainedOrders;
  }

  /**
   * Snapshots written before max_orders (its fields decoded as null, in their
   * places: state_codec): the retained count, derived from the accounts'
   * retention counts; the matching-only counts as in a full state.
   */
  static upgradeDecoded(x: ExchangeState): void {
    if (x.retainedOrders !== null) return;
    const acc = x.accounts;
    let n = 0;
    for (let a = 1; a <= acc.count; a++) n += acc.termCount[a]! + acc.rejCount[a]!;
    x.retainedOrders = n;
    x.heldOrders = 0;
    x.termGone = new Float64Array(0);
    x.rejGone = new Float64Array(0);
  }

  /**
   * Turns this state into the engine thread's matching-only form (see
   * matchingOnly): retained orders without a client_order_id leave the slab,
   * the others get their retirement counts. Fresh, recovered (snapshot plus
   * replay) or half-way states alike; idempotent.
   */
  enterMatchingOnly(): void {
    if (this.matchingOnly) return;
    this.matchingOnly = true;
    this.heldOrders = this.orders.count;
    const acc = this.accounts;
    this.termTotal = new Float64Array(acc.count + 1);
    this.rejTotal = new Float64Array(acc.count + 1);
    this.termGone = new Float64Array(acc.count + 1);
    this.rejGone = new Float64Array(acc.count + 1);
    this.retiredAt = new Float64Array(this.orders.capacity);
    for (let a = 1; a <= acc.count; a++) {
      this.termTotal[a] = this.keepCoidHolders(acc.termHead, acc.termTail, a);
      this.rejTotal[a] = this.keepCoidHolders(acc.rejHead, acc.rejTail, a);
    }
  }

  /** Numbers account a's retention list 1..n (its retirement counts) and drops the orders without a client_order_id; returns n. */
  private keepCoidHolders(head: Int32Array, tail: Int32Array, a: number): number {
    const ord = this.orders;
    let n = 0;
    for (let x = head[a]!; x !== NIL;) {
      const next = ord.i32[(x << LW) | W_ANEXT]!;
      n++;
      if (ord.u8[(x << LB) | B_HAS_COID] === 1) {
        this.retiredAt[x] = n;
      } else {
        unlink(head, tail, ord.i32, LW, W_APREV, W_ANEXT, a, x);
        this.unindexOrder(ord.f64[(x << LF) | F_ID]!);
        ord.free(x);
      }
      x = next;
    }
    return n;
  }

  /** Slot of a live or retained order, -1 when unknown. */
  slotOf(orderId: number): number {
    return this.orderIndex.get(orderId);
  }

  /** Indexes a new order (evolve only). */
  indexOrder(orderId: number, slot: number): void {
    if (checks.costly && this.orderIndex.get(orderId) >= 0) fail('state: an order id indexed twice');
    this.orderIndex.set(orderId, slot);
  }

  /** Drops an evicted order from the index (evolve only). */
  unindexOrder(orderId: number): void {
    if (!(this.orderIndex.delete(orderId))) fail('state: an evicted order was not indexed');
  }
}
