// Views: the read models. One instance per gateway thread (and one on the
// control-plane thread), fed every event of the broadcast ring in seq order by
// the thread that owns it; nothing else touches it.
//
// It owns an ExchangeState, folded with the engine's own evolve (so it is the
// engine's state as of `asOfSeq`), plus projections the engine does not keep:
//   - the public trade tape of every market (tape.ts, newest tape_cap trades;
//     its queries: the trades and the candles aggregated from them),
//   - the fills of every account, in both roles (fills.ts, newest fill_cap),
//   - each account's position slots (positions.ts: the state indexes
//     positions only by (account, market), so listing needs this list).
// This class is the façade: it holds the data (model.ts says why it is all
// here), folds each event (apply), and answers every query by delegating to
// the query groups (markets.ts, rounds.ts, orders.ts, accounts.ts and the
// projections' own queries). The queries render plain JSON-ready objects in
// the wire shapes declared in src/wire (responses.ts, control_plane.ts,
// keys.ts): u64-domain values (ids, seq, cents, timestamps, volume, open
// interest, strike, prices) as decimal strings, small integers as numbers,
// enums by name, never a float.
//
// Invariants:
//   - apply() is called for every event, whole commands at a time, before any
//     read; a read between two events of one command would see half a
//     command (gateways apply up to a CommandCompleted before serving).
//   - apply() allocates nothing in steady state: rings grow by doubling up to
//     their caps and are then reused; a ring is created at an account's or a
//     market's first fill.
//   - Queries never mutate anything but caches (they may allocate their answer).
//   - Every list is served newest first (descending sort key) except markets
//     and positions, which are served in ascending market_id (then yes before
//     no): they have no "newest". Cursors are strict (see cursor.ts).
//
// Adding a projection: put its data in a field here (and in ViewsData), its
// fold in a function called from apply(), its queries beside it, and one
// delegating method below; state_codec carries the field in snapshots.

import type { EngineConfig } from '../engine/config.js';
import { evolve } from '../engine/evolve.js';
import { ExchangeState } from '../engine/state.js';
import { Header, T_FILLED } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import type {
  AdminAccount, AdminMarkets, AdminOracle, AdminWithdrawal, FeeSchedules, Ledger, PendingWithdrawals, SeriesList,
} from '../wire/control_plane.js';
import type { KeyItem } from '../wire/keys.js';
import type {
  Balance, Candlesticks, DeadmanState, DepositAddress, ExchangeStatus, FillsPage, MarketsPage, MarketWithSeq, OraclePrice, Orderbook,
  OrdersPage, OrderWithStatus, PositionsPage, QueuePosition, RetentionLimits, Round, RoundsPage, RoundWithSeq, TradesPage, Withdrawal,
} from '../wire/responses.js';
import * as A from './accounts.js';
import { FILL_F64, FILL_U32, fillsPage, recordFills } from './fills.js';
import * as M from './markets.js';
import {
  DEFAULT_VIEWS_CONFIG, marketExists, type CandlesQuery, type FillsQuery, type MarketsQuery, type OrdersQuery, type PageQuery,
  type PositionsQuery, type RoundsQuery, type ViewsConfig, type ViewsData,
} from './model.js';
import * as O from './orders.js';
import { initPositionLists, linkNewPositions, positionNumbers, positionsPage } from './positions.js';
import { RecordRings } from './record_rings.js';
import * as R from './rounds.js';
import { tableSizes } from './tables.js';
import { candlesticks, recordTrade, TAPE_F64, TAPE_U32, tradesPage } from './tape.js';

export { ViewError } from './cursor.js';
export type { KeyInfo } from './accounts.js';
export {
  DEFAULT_VIEWS_CONFIG, type CandlesQuery, type FillsQuery, type MarketsQuery, type OrdersQuery, type PageQuery, type PositionsQuery,
  type RoundsQuery, type ViewsConfig,
} from './model.js';
export { BOOK_ROW } from './markets.js';
export { MAX_CANDLE_PERIODS } from './tape.js';

export class Views implements ViewsData {
  // The fields are the read model's data (ViewsData, model.ts); a snapshot
  // is this object graph, so their names are part of the snapshot format.
  readonly state: ExchangeState;
  readonly config: ViewsConfig;
  readonly tapes: RecordRings;
  readonly fillRings: RecordRings;
  posSeen = 0;
  posHead = new Int32Array(0);
  posTail = new Int32Array(0);
  posNext = new Int32Array(0);

  constructor(engine: Partial<EngineConfig> = {}, views: Partial<ViewsConfig> = {}) {
    this.state = new ExchangeState(engine);
    this.config = { ...DEFAULT_VIEWS_CONFIG, ...views };
    assert(Number.isInteger(this.config.tape_cap) && this.config.tape_cap >= 1, 'views: tape_cap >= 1');
    assert(Number.isInteger(this.config.fill_cap) && this.config.fill_cap >= 1, 'views: fill_cap >= 1');
    this.tapes = new RecordRings(this.config.tape_cap, TAPE_F64, TAPE_U32);
    this.fillRings = new RecordRings(this.config.fill_cap, FILL_F64, FILL_U32);
    initPositionLists(this);
  }

  /** The seq of the last applied event: every answer is as of it. */
  get asOfSeq(): number {
    return this.state.seq;
  }

  // ---- folding ---------------------------------------------------------------

  /** Applies one event record (at byte offset o of m) to the state and the projections. */
  apply(m: Mem, o: number): void {
    // A fill is recorded before evolve: evolve may retire the parties and,
    // with a small terminal_cap, evict them from the slab at once.
    if (Header.type(m, o) === T_FILLED) {
      recordFills(this, m, o);
      recordTrade(this, m, o);
    }
    evolve(this.state, m, o);
    if (this.state.accounts.posCount !== this.posSeen) linkNewPositions(this);
  }

  // ---- exchange ----------------------------------------------------------------

  exchangeStatus(): ExchangeStatus {
    return { exchange_active: true, as_of_seq: String(this.state.seq) };
  }

  retention(): RetentionLimits {
    const c = this.state.config;
    return { tape_cap: this.config.tape_cap, terminal_cap: c.terminal_cap, reject_cap: c.reject_cap, fill_cap: this.config.fill_cap };
  }

  // ---- markets (markets.ts, tape.ts) ---------------------------------------------

  /** Markets in ascending market_id, optionally filtered by status. */
  markets(q: MarketsQuery): MarketsPage {
    return M.marketsPage(this, q);
  }

  market(id: number): MarketWithSeq | null {
    return M.market(this, id);
  }

  marketExists(id: number): boolean {
    return marketExists(this.state, id);
  }

  /** Bids of both ladders, best first, at most `depth` levels each (1..99). */
  orderbook(id: number, depth: number): Orderbook | null {
    return M.orderbook(this, id, depth);
  }

  /** The market's public tape, newest first. */
  trades(id: number, q: PageQuery): TradesPage | null {
    return tradesPage(this, id, q);
  }

  /** OHLC candles of the market's retained tape, oldest first; null for an unknown market. */
  candles(id: number, q: CandlesQuery): Candlesticks | null {
    return candlesticks(this, id, q);
  }

  /** Every market in ascending market_id with its current round (operator read). */
  adminMarkets(): AdminMarkets {
    return M.adminMarkets(this);
  }

  // ---- oracle and rounds (rounds.ts) ---------------------------------------------

  oraclePrice(): OraclePrice {
    return R.oraclePrice(this);
  }

  /** The reference price and every source that ever ticked, with its last tick and freshness (operator read). */
  adminOracle(): AdminOracle {
    return R.adminOracle(this);
  }

  /** Retained rounds in descending round_number, optionally of one category (series). */
  rounds(q: RoundsQuery): RoundsPage {
    return R.roundsPage(this, q);
  }

  /** Every series, ascending by market_id, with its current round (operator read). */
  series(): SeriesList {
    return R.seriesList(this);
  }

  /** One round by round_number (WebSocket rounds channel); null when unknown or evicted. */
  roundRecord(roundNumber: number): Round | null {
    return R.roundRecord(this, roundNumber);
  }

  /** The market's current round in any status; null when unknown market, no round yet, or evicted. */
  round(marketId: number): RoundWithSeq | null {
    return R.currentRound(this, marketId);
  }

  // ---- accounts: money and positions (accounts.ts, positions.ts, fills.ts) --------

  /** True when the account exists and is not deleted. */
  accountLive(account: number): boolean {
    return Number.isInteger(account) && this.state.accounts.isLive(account);
  }

  balance(account: number): Balance {
    return A.balance(this, account);
  }

  positions(account: number, q: PositionsQuery): PositionsPage {
    return positionsPage(this, account, q);
  }

  /** The account's fills in both roles, newest first. */
  fills(account: number, q: FillsQuery): FillsPage {
    return fillsPage(this, account, q);
  }

  // ---- orders (orders.ts) --------------------------------------------------------

  /** Every retained order of the account, newest first, filtered by market, statuses and client_order_id. */
  orders(account: number, q: OrdersQuery): OrdersPage {
    return O.ordersPage(this, account, q);
  }

  /** How many live orders the account has (the orders of its user snapshot). */
  openOrderCount(account: number): number {
    return O.openOrderCount(this, account);
  }

  /** One retained order of the account with its status; null when unknown, evicted or foreign. */
  order(account: number, orderId: number): OrderWithStatus | null {
    return O.orderWithStatus(this, account, orderId);
  }

  /** Shares ahead of a live own order in its level's queue; null unless the order rests and is the caller's. */
  queuePosition(account: number, orderId: number): QueuePosition | null {
    return O.queuePosition(this, account, orderId);
  }

  // ---- dead-man, funding (accounts.ts) ------------------------------------------------

  deadman(account: number): DeadmanState {
    return A.deadman(this, account);
  }

  depositAddress(account: number): DepositAddress {
    return A.depositAddress(this, account);
  }

  /** The account's withdrawal by client_withdrawal_id (hi, lo halves); null when none. */
  withdrawal(account: number, cwidHi: number, cwidLo: number): Withdrawal | null {
    return A.withdrawal(this, account, cwidHi, cwidLo);
  }

  /** A withdrawal by wid (operator); null when none. */
  withdrawalByWid(wid: number): AdminWithdrawal | null {
    return A.withdrawalByWid(this, wid);
  }

  /** Withdrawals waiting for confirm or fail, oldest first (operator). */
  pendingWithdrawals(): PendingWithdrawals {
    return A.pendingWithdrawals(this);
  }

  /** Every fee schedule (operator). */
  feeSchedules(): FeeSchedules {
    return A.feeSchedules(this);
  }

  /** Where the money is, and whether it adds up (operator). */
  ledger(): Ledger {
    return A.ledger(this);
  }

  // ---- keys and operator reads (accounts.ts) ----------------------------------------

  /** Owner of a key, 0 when there is no such key. Cheap: used on every request. */
  keyAccount(keyId: number): number {
    return A.keyAccount(this, keyId);
  }

  /** Scope bits of a key (Scope enum), 0 when there is no such key. */
  keyScopes(keyId: number): number {
    return A.keyScopes(this, keyId);
  }

  /** True when the key is revoked; false for an unknown key (check keyAccount first). */
  keyRevoked(keyId: number): boolean {
    return A.keyRevoked(this, keyId);
  }

  /** The key's 32 secret bytes as a view into the state (valid until the next apply(); never keep it), null when unknown. */
  keySecret(keyId: number): Uint8Array | null {
    return A.keySecret(this, keyId);
  }

  /** The row of a known key (its index in the per-key tables), -1 when unknown or evicted. */
  keyRow(keyId: number): number {
    return A.keyRow(this, keyId);
  }

  /** Rate tier of the key in row keyRow (RateTier; 0 = default, also for -1): the gateway's TierSource. */
  keyTier(keyRow: number): number {
    return A.keyTier(this, keyRow);
  }

  /** Custom tier figure i of the key in row keyRow (0 read rate, 1 read burst, 2 write rate, 3 write burst); 0 for named tiers. */
  keyFigure(keyRow: number, i: number): number {
    return A.keyFigure(this, keyRow, i);
  }

  /** Entries of each growing table (tables.ts): /metrics and the soak test. */
  tables(): Record<string, number> {
    return tableSizes(this);
  }

  keyInfo(keyId: number): A.KeyInfo | null {
    return A.keyInfo(this, keyId);
  }

  /** The account's keys in ascending key_id (live and retained revoked), never secrets (keys service GET /keys, operator). */
  keys(account: number): KeyItem[] {
    return A.keyList(this, account);
  }

  /** Operator view of an account: balance, every position and its keys; null when the account never existed. */
  adminAccount(account: number): AdminAccount | null {
    return A.adminAccount(this, account);
  }

  // ---- numbers for the WebSocket fan-out (src/ws/fanout.ts): no allocation --------------

  /** Every level's resting shares of the market into out[ladder * BOOK_ROW + tick] (2 * BOOK_ROW numbers, 0 where none). */
  bookLevels(market: number, out: Float64Array): void {
    M.bookLevels(this, market, out);
  }

  /** Brings a bookLevels copy of the market up to date; changed indexes and previous totals go to changed/was; returns their count. */
  diffBookLevels(market: number, mirror: Float64Array, changed: Int32Array, was: Float64Array): number {
    return M.diffBookLevels(this, market, mirror, changed, was);
  }

  /** The oracle's price, fresh source count and seq into out[0..2]. */
  oracleNumbers(out: Float64Array): void {
    R.oracleNumbers(this, out);
  }

  /** The account's cents into out: [available, reserved], zeros when unknown. */
  cashNumbers(account: number, out: Float64Array): void {
    A.cashNumbers(this, account, out);
  }

  /** The account's shares in one market into out: [free yes, reserved yes, free no, reserved no]. */
  positionNumbers(account: number, market: number, out: Float64Array): void {
    positionNumbers(this, account, market, out);
  }

  /** A retained order's [market, account] into out; false when the order is not retained. */
  orderOwner(orderId: number, out: Float64Array): boolean {
    return O.orderOwner(this, orderId, out);
  }

  /** True when the order is retained and filled. */
  orderFilled(orderId: number): boolean {
    return O.orderFilled(this, orderId);
  }

  /** The order's [reserved cents, fee per share of a buy] into out; zeros when not retained. */
  orderReservation(orderId: number, out: Float64Array): void {
    O.orderReservation(this, orderId, out);
  }

  /** The account that requested withdrawal wid. */
  withdrawalAccount(wid: number): number {
    return A.withdrawalAccount(this, wid);
  }
}
