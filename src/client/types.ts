// Wire types of the REST surface, the WebSocket lane, the keys service and the control plane.
// Every JSON body type is the `Static` type of its TypeBox schema in
// src/wire (the one declaration of each shape, which the server validates
// with and renders from), re-exported here under the client's names, so a
// drift between server and client is a compile error. Type-only imports: the
// client loads nothing of src/wire at run time. u64-domain values (ids,
// seqs, cents, timestamps) are decimal strings; u32 and below are numbers.
// Servers may add fields; clients ignore the extra. What stays declared here
// is the client's own: the query options of the list calls.
// Types only (erased at compile time): no thread runs this file.

import type * as Q from '../wire/queries.js';
import type { Candlesticks, ErrorObject, Fill, Order, OrderStatusName, Round, Withdrawal } from '../wire/responses.js';

/** A decimal u64 string (`^[0-9]+$`). */
export type U64 = string;

// ---------------------------------------------------------------- errors

/**
 * The inner object of the error envelope `{error: {...}}`. The client also
 * builds one for an answer that is not an envelope (origin `client`, code
 * `http_<status>`), so origin is wider than the wire's `gateway | core`.
 */
export type ErrorBody = Omit<ErrorObject, 'origin'> & { origin: ErrorObject['origin'] | 'client' | '' };

export type { ItemError } from '../wire/responses.js';

// ---------------------------------------------------------------- query options

export type { MarketsQuery, PageQuery, PositionsQuery, RoundsQuery } from '../wire/queries.js';
export type FillsQuery = Q.FillsQuery<U64>;
export type OrdersQuery = Q.OrdersQuery<U64>;

export interface CandlesQuery {
  /** Default `1m`. */
  period?: CandlePeriod;
  /** ns since the epoch: the first period is the one holding it. */
  start_ts?: U64;
  /** ns since the epoch: the last period is the one holding it (default: the exchange's last event). */
  end_ts?: U64;
}

export interface CancelAllQuery {
  /** 0 or absent: every market. */
  market_id?: number;
  /** 0 or absent: every group. */
  group_id?: number;
}

// ---------------------------------------------------------------- REST responses (src/wire/responses.ts)

export type {
  AccountLimits, Balance, BatchCancelResult, BatchPlaceResult, Candle, Candlesticks, CancelResult, DeadmanArmed, DeadmanDisarmed,
  DeadmanState, DecreaseResult, DepositAddress, ExchangeSchedule, ExchangeStatus, Fill, FillsPage, Level, Market, MarketsPage,
  MarketWithSeq, OraclePrice, Order, Orderbook, OrdersPage, OrderWithStatus, Placement, PlacementFill, Position, PositionsPage,
  QueuePosition, RetentionLimits, Round, RoundsPage, RoundWithSeq, SequencedAck, Trade, TradesPage, Withdrawal, WithdrawalCreated,
} from '../wire/responses.js';

export type Outcome = Fill['outcome'];
export type Side = Fill['side'];
export type FillPath = Fill['path'];
export type Tif = Order['tif'];
export type Stp = Order['stp'];
export type OrderStatus = OrderStatusName;
export type RoundStatus = Round['status'];
export type CandlePeriod = Candlesticks['period'];
export type WithdrawalStatusValue = Withdrawal['status'];

// ---------------------------------------------------------------- WebSocket messages (src/wire/ws.ts)

export type {
  BalanceCause, BalanceMessage, BinaryStarted, BookDelta, Channel, FillMessage, OkBody, OpenOrder, OrderMessage, OrderResultBody,
  PositionMessage, RoundMessage, Subscribed, TradeMessage, UserSnapshot, WsDataMessage, WsErrorBody, WsErrorName, WsReply,
  WsServerMessage,
} from '../wire/ws.js';

// ---------------------------------------------------------------- request bodies (src/wire/requests.ts)

export type {
  CreateKeyRequest, CreateMarketRequest, DepositRequest, FeeScheduleRequest, KeyTierRequest, OpenRoundRequest, OracleTickRequest,
  SeriesRequest, WithdrawalRequest,
} from '../wire/requests.js';
/** The closed-schema placement request. */
export type { PlaceOrderRequest as OrderRequest } from '../wire/requests.js';

// ---------------------------------------------------------------- keys service (src/wire/keys.ts)

export type { CreatedKey, KeyItem, KeyList, KeyRevoked, Scope } from '../wire/keys.js';

// ---------------------------------------------------------------- control plane (src/wire/control_plane.ts)

export type {
  AccountCreated, AdminAccount, AdminKeyCreated, AdminMarket, AdminMarkets, AdminOracle, AdminWithdrawal, FeeSchedule, FeeScheduleCreated,
  FeeSchedules, Health, KeyTierResult, Ledger, MarketCreated, OracleSource, PendingWithdrawals, RoundActionResult, RoundOpened,
  SeriesCreated, SeriesItem, SeriesList, SeriesStopped, SnapshotResult, StateHash, WithdrawalSettled,
} from '../wire/control_plane.js';
