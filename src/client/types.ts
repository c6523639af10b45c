// Wire types of the REST surface, the accounts service and the control plane,
// spelled as the spec and DESIGN spell them. Used by the client library only
// (no runtime code). u64-domain values (ids, seqs, cents, timestamps) are
// decimal strings; u32 and below are numbers. Response types list the fields
// the contract names; servers may add fields and clients ignore the extra.

/** A decimal u64 string (`^[0-9]+$`). */
export type U64 = string;

// ---------------------------------------------------------------- errors

/** The inner object of the error envelope `{error: {...}}`. */
export interface ErrorBody {
  code: string;
  num: number | null;
  origin: string;
  message: string;
  details: Record<string, unknown> | null;
}

/** A per-item error inside a batch `results` array. */
export interface ItemError {
  error: ErrorBody;
}

// ---------------------------------------------------------------- pagination

export interface PageQuery {
  /** Opaque string from a prior response; omit for the first page. */
  cursor?: string;
  /** 1..1000, default 100. */
  limit?: number;
}

/** Every list response carries `cursor` ("" when exhausted) and `as_of_seq`. */
export interface Page {
  cursor: string;
  as_of_seq: U64;
}

// ---------------------------------------------------------------- exchange

export interface ExchangeStatus {
  exchange_active: boolean;
  as_of_seq: U64;
}

/** Static list of maintenance windows; the window fields are not fixed by the contract. */
export interface ExchangeSchedule {
  maintenance_windows?: unknown[];
  as_of_seq?: U64;
  [field: string]: unknown;
}

export interface RetentionLimits {
  tape_cap: number;
  terminal_cap: number;
  reject_cap: number;
  fill_cap: number;
}

export interface Bucket {
  sustained_rate_per_s: number;
  burst: number;
}

export type Scope = 'read' | 'trade' | 'withdraw';

export interface AccountLimits {
  scopes: Scope[];
  read: Bucket;
  write: Bucket;
  batch_cap: number;
  response_budget_ms: number;
}

// ---------------------------------------------------------------- markets

export interface Market {
  market_id: number;
  title: string;
  best_yes_bid: number;
  best_yes_ask: number;
  display_tick: number;
  last_tick_yes: number;
  volume: U64;
  open_interest: U64;
  position_limit: number;
  fee_schedule_id: number;
  close_ts: U64;
  /** DESIGN 2: the current round's status, or `closed`. */
  status?: string;
  category?: number;
}

export interface MarketWithSeq extends Market {
  as_of_seq: U64;
}

export interface MarketsQuery extends PageQuery {
  /** Market statuses, sent comma-separated (e.g. `['trading', 'proposed']`). */
  status?: string[];
}

export interface MarketsPage extends Page {
  markets: Market[];
}

/** `[tick, aggregate_qty]`, best first. */
export type Level = [number, number];

export interface Orderbook {
  market_id: number;
  /** YES bids at YES-space ticks. */
  yes: Level[];
  /** NO bids at NO-space ticks; the YES ask at `100 - t`. */
  no: Level[];
  as_of_seq: U64;
}

export interface Trade {
  seq: U64;
  ts: U64;
  market_id: number;
  tick_yes: number;
  qty: number;
}

export interface TradesPage extends Page {
  trades: Trade[];
}

export type CandlePeriod = '1m' | '5m' | '1h' | '1d';

export interface CandlesQuery {
  /** Default `1m`. */
  period?: CandlePeriod;
  /** ns since the epoch: the first period is the one holding it. */
  start_ts?: U64;
  /** ns since the epoch: the last period is the one holding it (default: the exchange's last event). */
  end_ts?: U64;
}

/** One period with trades: OHLC of `tick_yes`. */
export interface Candle {
  start_ts: U64;
  open: number;
  high: number;
  low: number;
  close: number;
  volume: U64;
  trade_count: number;
}

export interface Candlesticks {
  market_id: number;
  period: CandlePeriod;
  /** Oldest first; periods without trades are omitted. */
  candles: Candle[];
  /** ts of the oldest trade still on the tape; `0` when none. */
  retained_from_ts: U64;
  /** Older trades were evicted from the tape (tape_cap). */
  truncated: boolean;
  as_of_seq: U64;
}

export interface OraclePrice {
  /** Reference price scaled by 1e8; `0` when no valid tick exists yet. */
  price: U64;
  fresh_source_count: number;
  seq: U64;
}

export type RoundStatus = 'trading' | 'frozen' | 'proposed' | 'settled' | 'void';

export interface Round {
  round_number: U64;
  market_id: number;
  category: number;
  status: RoundStatus;
  strike: U64;
  open_ts: U64;
  close_ts: U64;
  outcome: 'yes' | 'no' | '';
  settle_price: U64;
  proposed_ts: U64;
  settled_ts: U64;
}

export interface RoundWithSeq extends Round {
  as_of_seq: U64;
}

export interface RoundsQuery extends PageQuery {
  /** Series filter, 0..65535. */
  category?: number;
}

export interface RoundsPage extends Page {
  rounds: Round[];
}

// ---------------------------------------------------------------- portfolio

export interface Balance {
  available: U64;
  reserved: U64;
  as_of_seq: U64;
}

export type Outcome = 'yes' | 'no';
export type Side = 'buy' | 'sell';

export interface Position {
  market_id: number;
  outcome: Outcome;
  free: number;
  reserved_for_sale: number;
}

export interface PositionsQuery extends PageQuery {
  market_id?: number;
}

export interface PositionsPage extends Page {
  positions: Position[];
}

export type FillPath = 'mint' | 'direct' | 'merge';

export interface Fill {
  fill_id: U64;
  seq: U64;
  ts: U64;
  order_id: U64;
  client_order_id: U64;
  market_id: number;
  side: Side;
  outcome: Outcome;
  role: 'maker' | 'taker';
  tick_yes: number;
  /** In the order's own outcome space. */
  tick: number;
  qty: number;
  fee: U64;
  path: FillPath;
}

export interface FillsQuery extends PageQuery {
  market_id?: number;
  order_id?: U64;
}

export interface FillsPage extends Page {
  fills: Fill[];
}

export type OrderStatus = 'resting' | 'partially_filled' | 'filled' | 'canceled' | 'rejected';
export type Tif = 'gtc' | 'gtd' | 'ioc' | 'fok';
export type Stp = 'cancel_taker' | 'cancel_maker' | 'cancel_both';

export interface Order {
  order_id: U64;
  client_order_id: U64;
  market_id: number;
  side: Side;
  outcome: Outcome;
  tick: number;
  qty: number;
  tif: Tif;
  post_only: boolean;
  stp: Stp;
  expiry_ts: U64;
  max_cost: U64;
  group_id: number;
  flags: number;
  reason: string;
  filled_qty: number;
  remaining_qty: number;
  created_seq: U64;
  created_ts: U64;
  last_update_seq: U64;
}

export interface OrdersQuery extends PageQuery {
  market_id?: number;
  /** Order statuses, sent comma-separated (e.g. `['resting', 'partially_filled']`). */
  status?: string[];
  client_order_id?: U64;
}

export interface OrdersPage extends Page {
  orders: Order[];
}

/** The closed-schema placement request (DESIGN 3). */
export interface OrderRequest {
  market_id: number;
  side: Side;
  outcome: Outcome;
  /** 1..99, in the outcome's own space. */
  tick: number;
  qty: number;
  tif?: Tif;
  post_only?: boolean;
  /** Idempotency key: a retry with a used id is refused 409 `duplicate_client_order_id`. */
  client_order_id?: U64;
  /** Nanoseconds since the epoch; with `tif: 'gtd'` only. */
  expiry_ts?: U64;
  /** Cents; buys only. The order executes at once and never rests. */
  max_cost?: U64;
  group_id?: number;
  stp?: Stp;
}

export interface PlacementFill {
  tick_yes: number;
  qty: number;
  path: FillPath;
}

export interface Placement {
  order_id: U64;
  client_order_id: U64;
  /** `resting`, `partially_filled`, `filled` or `canceled` (an execution outcome, with `reason`). */
  status: OrderStatus;
  reason?: string;
  seq: U64;
  filled_qty: number;
  resting_qty: number;
  fills: PlacementFill[];
}

export interface BatchPlaceResponse {
  /** Index-aligned with the request's `orders`. */
  results: (Placement | ItemError)[];
}

export interface CancelResult {
  status: 'canceled';
  canceled_qty: number;
  seq: U64;
}

export interface BatchCancelResponse {
  /** Index-aligned with the request's `order_ids`. */
  results: (CancelResult | ItemError)[];
}

export interface CancelAllQuery {
  /** 0 or absent: every market. */
  market_id?: number;
  /** 0 or absent: every group. */
  group_id?: number;
}

export interface SequencedAck {
  seq: U64;
}

export interface DecreaseResult {
  status: 'decreased';
  new_qty: number;
  seq: U64;
}

export interface QueuePosition {
  order_id: U64;
  market_id: number;
  shares_ahead: number;
  as_of_seq: U64;
}

export interface DeadmanState {
  armed: boolean;
  timeout_ms?: number;
  fires_at_ts?: U64;
  seq: U64;
}

// ---------------------------------------------------------------- funding

export interface DepositAddress {
  address: string;
  as_of_seq: U64;
}

export interface WithdrawalRequest {
  client_withdrawal_id: U64;
  /** Cents. */
  amount: U64;
  destination: string;
}

export type WithdrawalStatusValue = 'pending' | 'confirmed' | 'failed';

export interface WithdrawalCreated {
  wid: U64;
  client_withdrawal_id: U64;
  status: WithdrawalStatusValue;
  seq: U64;
  amount?: U64;
  destination?: string;
}

export interface WithdrawalStatus {
  wid: U64;
  status: WithdrawalStatusValue;
  client_withdrawal_id?: U64;
  amount?: U64;
  destination?: string;
  seq?: U64;
  as_of_seq?: U64;
}

// ---------------------------------------------------------------- accounts service

export interface CreateKeyRequest {
  label?: string;
  /** `read` and/or `trade`; default both. `withdraw` is refused 403 `missing_scope`. */
  scopes?: Scope[];
}

export interface CreatedKey {
  key_id: number;
  /** base64 of the 32 secret bytes; shown once. */
  secret: string;
  scopes: Scope[];
  label?: string;
  seq?: U64;
}

export interface KeyRevoked {
  key_id: number;
  revoked: boolean;
  seq?: U64;
}

export interface KeyInfo {
  key_id: number;
  scopes: Scope[];
  label?: string;
  revoked?: boolean;
  [field: string]: unknown;
}

export interface KeyList {
  keys: KeyInfo[];
  as_of_seq?: U64;
}

// ---------------------------------------------------------------- control plane

export interface AccountCreated {
  account_id: number;
  seq?: U64;
}

export interface AdminKeyCreated {
  key_id: number;
  /** base64 of the 32 secret bytes. */
  secret: string;
  scopes: Scope[];
  seq?: U64;
}

export interface DepositRequest {
  /** Cents. */
  amount: U64;
  /** The operator's reference for the credit (e.g. a chain transaction id). */
  ref: string;
}

export interface AdminAccount {
  account_id: number;
  deleted?: boolean;
  available?: U64;
  reserved?: U64;
  positions?: Position[];
  keys?: KeyInfo[];
  as_of_seq?: U64;
  [field: string]: unknown;
}

export interface FeeScheduleRequest {
  taker_bps: number;
  maker_bps: number;
}

export interface FeeScheduleCreated {
  fee_schedule_id: number;
  seq?: U64;
}

export interface CreateMarketRequest {
  title: string;
  category: number;
  position_limit: number;
  fee_schedule_id: number;
}

export interface MarketCreated {
  market_id: number;
  seq?: U64;
}

export interface OpenRoundRequest {
  /** Oracle units (1e8). */
  strike: U64;
  /** Nanoseconds since the epoch. */
  close_ts: U64;
}

export interface RoundOpened {
  round_number: U64;
  seq?: U64;
}

export interface StatusAck {
  status: string;
  seq: U64;
}

export interface OracleTickRequest {
  source_id: number;
  /** Scaled by 1e8. */
  price: U64;
}

export interface SeriesRequest {
  category: number;
  title: string;
  period_s: number;
  position_limit: number;
  fee_schedule_id: number;
}

/** POST /admin/series: round_number is "0" while the first round waits for a fresh oracle quorum. */
export interface SeriesCreated {
  market_id: number;
  category: number;
  period_s: number;
  round_number: U64;
  seq: U64;
}

export interface SeriesItem {
  category: number;
  market_id: number;
  title: string;
  period_s: number;
  /** False once stopped: the current round ends, no next one opens. */
  active: boolean;
  /** The current round, null before the first. */
  round: Round | null;
}

export interface SeriesList {
  series: SeriesItem[];
  as_of_seq: U64;
}

export interface SeriesStopped {
  category: number;
  market_id: number;
  active: false;
  seq: U64;
}

export interface SnapshotResult {
  seq: U64;
  path: string;
}

export interface Health {
  seq: U64;
  durable_seq: U64;
  lag: number | U64;
  gateways: number;
  [field: string]: unknown;
}

/** GET /admin/markets: every market with its current round (null before the first or once evicted). */
export interface AdminMarkets {
  markets: (Market & { category: number; status: string; round_number: U64; round: Round | null; series_period_s: number })[];
  as_of_seq: U64;
}

export interface OracleSource {
  source_id: number;
  /** Last tick, x 1e8. */
  price: U64;
  /** ns since the epoch. */
  ts: U64;
  /** Younger than the staleness limit. */
  fresh: boolean;
}

/** GET /admin/oracle: the reference price and every source that ever ticked. */
export interface AdminOracle extends OraclePrice {
  staleness_ms: number;
  quorum: number;
  sources: OracleSource[];
  as_of_seq: U64;
}

/** GET /admin/withdrawals: the pending ones, oldest first. */
export interface PendingWithdrawals {
  withdrawals: (WithdrawalStatus & { account_id: number })[];
  as_of_seq: U64;
}
