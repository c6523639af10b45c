// responses: the response bodies of every REST operation (and the error
// envelope) as TypeBox schemas. They are the one declaration of these JSON
// shapes: the read models (src/views) and the client library (src/client)
// use the `Static` types exported beside each schema, so a field that drifts
// is a compile error; the MCP tools' outputSchema and the OpenAPI document's
// responses are rendered from the same objects; and the tests check real
// answers against them (test/support/wire_shapes.ts), closed, so an
// undocumented field fails. Response objects stay open here (no
// additionalProperties: false): clients ignore unknown response fields
// (docs/rest.md), so adding one is not a breaking change. No runtime state;
// any thread (the client imports the types only).

import {
  Type, type Static, type TInteger, type TLiteral, type TSchema, type TString, type TUnion,
} from '@sinclair/typebox';
import {
  CANCEL_REASON_NAMES, MARKET_STATUS_NAMES, ORDER_FLAG_BITS, ORDER_STATUS_NAMES, OUTCOME_NAMES, PATH_NAMES, SIDE_NAMES, STP_NAMES,
  RATE_TIER_NAMES, TIF_NAMES, WITHDRAWAL_STATUS_NAMES,
} from '../layout/records.js';

/** A u64-domain value (ids, seqs, cents, ns timestamps) as the decimal string the wire requires (docs/rest.md). */
export function u64(description: string): TString {
  return Type.String({ pattern: '^[0-9]+$', description });
}

/** One of the names, as a union of string literals (its static type is the union of the names). */
export function oneOf<const T extends readonly string[]>(values: T, description: string): TUnion<TLiteral<T[number]>[]> {
  return Type.Union(values.map((v) => Type.Literal(v)), { description }) as unknown as TUnion<TLiteral<T[number]>[]>;
}

export function int(min: number, max: number, description: string): TInteger {
  return Type.Integer({ minimum: min, maximum: max, description });
}

export const U32_MAX = 4294967295;
export const asOfSeq = u64('the stream sequence number this read is current as of; two reads with the same as_of_seq describe one instant');
export const cursor = Type.String({ description: 'pass as `cursor` to get the next page; "" when exhausted' });
const ROUND_STATUSES = ['trading', 'frozen', 'proposed', 'settled', 'void'] as const;
const EXECUTION_OUTCOMES = CANCEL_REASON_NAMES.slice(1, 6);

// ---- errors ------------------------------------------------------------------

export const ErrorObject = Type.Object({
  code: Type.String({ description: 'machine-readable error code (native-layout/codes.json)' }),
  num: Type.Union([Type.Integer(), Type.Null()], { description: 'core reject number (260+), null for gateway errors' }),
  origin: oneOf(['gateway', 'core'], 'gateway: refused before sequencing; core: a sequenced reject'),
  message: Type.String({ description: 'human-readable explanation' }),
  // Unsafe only types it: the JSON Schema stays an open object (or null), read as a record of facts.
  details: Type.Unsafe<Record<string, unknown> | null>(Type.Union([
    Type.Object({}, {
      description: 'code-specific facts, e.g. field and reason for invalid_field, retry_after_ms for rate_limited, '
        + 'order_id for duplicate_client_order_id',
    }),
    Type.Null(),
  ])),
}, { description: 'The inner error object; batch items carry it as {error: ...}.' });

export const ErrorEnvelope = Type.Object({ error: ErrorObject }, { description: 'Every error answer of every lane.' });

export const ItemError = Type.Object({ error: ErrorObject }, { description: 'A failed batch item (the other items are independent).' });

// ---- exchange ----------------------------------------------------------------

export const ExchangeStatus = Type.Object({
  exchange_active: Type.Boolean({ description: 'always true in v1 (not a kill switch)' }),
  as_of_seq: asOfSeq,
});

export const ExchangeSchedule = Type.Object({
  maintenance_windows: Type.Array(Type.Unknown(), { description: 'static list of maintenance windows; none are scheduled in v1' }),
  as_of_seq: asOfSeq,
});

export const RetentionLimits = Type.Object({
  tape_cap: Type.Integer({ minimum: 0, description: 'public trades kept per market' }),
  terminal_cap: Type.Integer({ minimum: 0, description: 'terminal orders kept per account' }),
  reject_cap: Type.Integer({ minimum: 0, description: 'rejected orders kept per account' }),
  fill_cap: Type.Integer({ minimum: 0, description: 'fills kept per account' }),
}, { description: 'Live listings silently truncate at these caps; resting orders are never evicted.' });

const Bucket = Type.Object({
  sustained_rate_per_s: Type.Integer({ minimum: 0 }),
  burst: Type.Integer({ minimum: 0 }),
});

export const AccountLimits = Type.Object({
  scopes: Type.Array(oneOf(['read', 'trade', 'withdraw'], 'a scope of the calling key')),
  tier: oneOf(RATE_TIER_NAMES, 'the key\'s rate tier, set by the operator: default (the figures above), market_maker, institutional or ' +
    'custom'),
  read: Bucket,
  write: Bucket,
  batch_cap: Type.Integer({ minimum: 1, description: 'most items per batch' }),
  response_budget_ms: Type.Integer({ minimum: 1, description: 'a write not sequenced within this budget answers 504 sequencing_timeout' }),
});

// ---- markets ------------------------------------------------------------------

const marketFields = {
  market_id: int(1, U32_MAX, 'market id'),
  title: Type.String(),
  category: int(0, 65535, 'series id'),
  status: oneOf(MARKET_STATUS_NAMES, "the current round's status, or closed when no round is open"),
  best_yes_bid: int(0, 99, 'best YES bid tick; 0 = none'),
  best_yes_ask: int(0, 99, 'best YES ask tick = 100 - best NO bid; 0 = none'),
  display_tick: int(0, 99, 'midpoint (rounded down) when bid and ask exist within 10 ticks, else last_tick_yes'),
  last_tick_yes: int(0, 99, 'YES-space tick of the last trade; 0 = no trade yet'),
  volume: u64('shares traded'),
  open_interest: u64('YES/NO pairs outstanding'),
  position_limit: int(0, U32_MAX, 'most shares one account may hold or be buying in one outcome; 0 = no limit'),
  fee_schedule_id: int(0, U32_MAX, '0 = no fees'),
  close_ts: u64('close time of the current round, ns since the epoch; 0 when none'),
  round_number: u64('the current round; 0 when the market never opened one'),
};

export const Market = Type.Object(marketFields);
export const MarketWithSeq = Type.Object({ ...marketFields, as_of_seq: asOfSeq });
export const MarketsPage = Type.Object({ markets: Type.Array(Market), cursor, as_of_seq: asOfSeq });

/** `[tick, aggregate_qty]`: a price level (emitted as prefixItems). */
export const Level = Type.Tuple([int(1, 99, 'tick in the ladder\'s own ' +
  'space'), Type.Integer({ minimum: 1, description: 'aggregate shares at the tick' })], {
  description: '[tick, aggregate_qty]',
});

export const Orderbook = Type.Object({
  market_id: int(1, U32_MAX, 'market id'),
  yes: Type.Array(Level, { description: 'YES bids at YES-space ticks, best first' }),
  no: Type.Array(Level, { description: 'NO bids at NO-space ticks, best first; a NO bid at t is a YES ask at 100 - t' }),
  as_of_seq: asOfSeq,
}, { description: 'Only bids are sent; asks are derived.' });

export const Trade = Type.Object({
  seq: u64('the sequence number of the trade'),
  ts: u64('sequencer time, ns since the epoch'),
  market_id: int(1, U32_MAX, 'market id'),
  tick_yes: int(1, 99, 'YES-space price'),
  qty: Type.Integer({ minimum: 1 }),
  taker_side: oneOf(SIDE_NAMES, 'side of the taking order'),
  taker_outcome: oneOf(OUTCOME_NAMES, 'outcome of the taking order'),
});
export const TradesPage = Type.Object({ trades: Type.Array(Trade, { description: 'newest first' }), cursor, as_of_seq: asOfSeq });

/** Candle lengths of GET /v1/markets/{market_id}/candlesticks (UTC-aligned; src/views/tape.ts). */
export const CANDLE_PERIODS = ['1m', '5m', '1h', '1d'] as const;

export const Candle = Type.Object({
  start_ts: u64('start of the period, ns since the epoch (a multiple of the period since the epoch, UTC)'),
  open: int(1, 99, 'tick_yes of the first trade of the period'),
  high: int(1, 99, 'highest tick_yes'),
  low: int(1, 99, 'lowest tick_yes'),
  close: int(1, 99, 'tick_yes of the last trade of the period'),
  volume: u64('shares traded in the period'),
  trade_count: Type.Integer({ minimum: 1, description: 'trades (fills) in the period' }),
});
export const Candlesticks = Type.Object({
  market_id: int(1, U32_MAX, 'market id'),
  period: oneOf(CANDLE_PERIODS, 'candle length'),
  candles: Type.Array(Candle, { description: 'oldest first; periods without trades are omitted' }),
  retained_from_ts: u64('ts of the oldest trade still on the market\'s tape; 0 when it has none'),
  truncated: Type.Boolean({
    description: 'older trades were evicted from the tape (tape_cap): periods before retained_from_ts are absent '
      + 'and the candle holding it may be partial',
  }),
  as_of_seq: asOfSeq,
}, {
  description: 'OHLC of tick_yes per period, aggregated from the retained public trade tape (the newest tape_cap trades of the market).',
});

export const OraclePrice = Type.Object({
  price: u64('reference price scaled by 1e8; 0 before any valid tick'),
  fresh_source_count: Type.Integer({ minimum: 0 }),
  seq: u64('seq of the last oracle event; 0 before any'),
});

const roundFields = {
  round_number: u64('global, increasing'),
  market_id: int(1, U32_MAX, 'market id'),
  category: int(0, 65535, 'series id'),
  status: oneOf(ROUND_STATUSES, 'trading -> frozen -> proposed -> settled, or void'),
  strike: u64('oracle units (1e8); the round resolves yes iff the reference price at close >= strike'),
  open_ts: u64('ns since the epoch'),
  close_ts: u64('ns since the epoch'),
  outcome: oneOf(['yes', 'no', ''], '"" until proposed'),
  settle_price: u64('oracle reference price used; 0 until proposed'),
  proposed_ts: u64('0 until proposed'),
  settled_ts: u64('0 until settled'),
};
export const Round = Type.Object(roundFields);
export const RoundWithSeq = Type.Object({ ...roundFields, as_of_seq: asOfSeq });
export const RoundsPage = Type.Object({ rounds: Type.Array(Round, { description: 'descending ' +
  'round_number' }), cursor, as_of_seq: asOfSeq });

// ---- portfolio ----------------------------------------------------------------

export const Balance = Type.Object({
  available: u64('cents free to trade or withdraw'),
  reserved: u64('cents reserved by resting buys and pending withdrawals'),
  as_of_seq: asOfSeq,
});

export const Position = Type.Object({
  market_id: int(1, U32_MAX, 'market id'),
  outcome: oneOf(OUTCOME_NAMES, 'the outcome held'),
  free: Type.Integer({ minimum: 0, description: 'shares free to sell' }),
  reserved_for_sale: Type.Integer({ minimum: 0, description: 'shares reserved by resting sells' }),
});
export const PositionsPage = Type.Object({ positions: Type.Array(Position), cursor, as_of_seq: asOfSeq });

export const Fill = Type.Object({
  fill_id: u64('unique per fill'),
  seq: u64('sequence number of the fill'),
  ts: u64('sequencer time, ns since the epoch'),
  order_id: u64('your order'),
  client_order_id: u64('your order\'s client_order_id; 0 = none'),
  market_id: int(1, U32_MAX, 'market id'),
  side: oneOf(SIDE_NAMES, 'your order\'s side'),
  outcome: oneOf(OUTCOME_NAMES, 'your order\'s outcome'),
  role: oneOf(['maker', 'taker'], 'your role in the trade'),
  tick_yes: int(1, 99, 'YES-space price'),
  tick: int(1, 99, 'price in your order\'s own outcome space'),
  qty: Type.Integer({ minimum: 1 }),
  fee: u64('cents you paid'),
  path: oneOf(PATH_NAMES, 'mint: buy YES x buy NO; direct: buy x sell of one outcome; merge: sell YES x sell NO'),
});
export const FillsPage = Type.Object({ fills: Type.Array(Fill, { description: 'newest first' }), cursor, as_of_seq: asOfSeq });

const FLAGS_DOC = `bit set: ${ORDER_FLAG_BITS.map(([n, b]) => `${b} ${n}`).join(', ')}`;

export const Order = Type.Object({
  order_id: u64('the seq that accepted the order'),
  client_order_id: u64('0 = none'),
  market_id: int(1, U32_MAX, 'market id'),
  tick: int(1, 99, 'limit price in the order\'s own outcome space'),
  qty: Type.Integer({ minimum: 1, description: 'original quantity' }),
  expiry_ts: u64('gtd expiry, ns since the epoch; 0 = none'),
  max_cost: u64('cents; 0 = none'),
  group_id: int(0, U32_MAX, 'for scoped mass cancel'),
  flags: Type.Integer({ minimum: 0, description: FLAGS_DOC }),
  reason: Type.String({ description: 'cancel reason of a canceled order, reject code of a rejected one, else ""' }),
  filled_qty: Type.Integer({ minimum: 0 }),
  remaining_qty: Type.Integer({ minimum: 0, description: 'shares still resting' }),
  created_seq: u64('seq of acceptance'),
  created_ts: u64('ns since the epoch'),
  last_update_seq: u64('seq of the last change'),
  side: oneOf(SIDE_NAMES, 'buy or sell'),
  outcome: oneOf(OUTCOME_NAMES, 'yes or no'),
  tif: oneOf(TIF_NAMES, 'time in force'),
  post_only: Type.Boolean(),
  stp: oneOf(STP_NAMES, 'self-trade prevention'),
}, { description: 'An order list item (no status field: status is a filter).' });
export const OrdersPage = Type.Object({ orders: Type.Array(Order, { description: 'newest first' }), cursor, as_of_seq: asOfSeq });

/** One order with its status: the WebSocket user channel's `order` message, the order in duplicate_client_order_id's details. */
export const OrderWithStatus = Type.Object({ status: oneOf(ORDER_STATUS_NAMES, 'the order\'s status'), ...Order.properties });

// ---- orders --------------------------------------------------------------------

export const PlacementFill = Type.Object({
  tick_yes: int(1, 99, 'YES-space price'),
  qty: Type.Integer({ minimum: 1 }),
  path: oneOf(PATH_NAMES, 'match path'),
});

export const Placement = Type.Object({
  order_id: u64('the seq that accepted the order'),
  client_order_id: u64('echoed; 0 = none'),
  status: oneOf(ORDER_STATUS_NAMES.slice(0, 4), 'canceled with a reason is an execution outcome, not an error'),
  reason: Type.Optional(oneOf(EXECUTION_OUTCOMES, 'why the order was canceled at once (present only then)')),
  seq: u64('sequence number of the outcome'),
  filled_qty: Type.Integer({ minimum: 0 }),
  resting_qty: Type.Integer({ minimum: 0 }),
  fills: Type.Array(PlacementFill, { description: 'the taker fills of this placement' }),
});

export const BatchPlaceResult = Type.Object({
  results: Type.Array(Type.Union([Placement, ItemError]), { description: 'index-aligned with orders: a placement or {error}' }),
});

export const SequencedAck = Type.Object({ seq: u64('the sequence number of the command') });

export const CancelResult = Type.Object({
  status: Type.Literal('canceled'),
  canceled_qty: Type.Integer({ minimum: 0 }),
  seq: u64('sequence number of the cancel'),
});

export const BatchCancelResult = Type.Object({
  results: Type.Array(Type.Union([CancelResult, ItemError]), { description: 'index-aligned with order_ids: a cancel result or {error} ' +
    '(unknown_order)' }),
});

export const DecreaseResult = Type.Object({
  status: Type.Literal('decreased'),
  new_qty: Type.Integer({ minimum: 0, description: 'remaining quantity now: min(remaining, requested new_qty)' }),
  seq: u64('sequence number of the decrease'),
});

export const QueuePosition = Type.Object({
  order_id: u64('the order'),
  market_id: int(1, U32_MAX, 'market id'),
  shares_ahead: Type.Integer({ minimum: 0, description: 'shares resting before this order at its price level' }),
  as_of_seq: asOfSeq,
});

export const DeadmanState = Type.Object({
  armed: Type.Boolean(),
  timeout_ms: Type.Integer({ minimum: 0, description: '0 when disarmed' }),
  fires_at_ts: u64('ns since the epoch; 0 when disarmed'),
  seq: u64('as of this seq'),
});

export const DeadmanArmed = Type.Object({
  armed: Type.Literal(true),
  timeout_ms: Type.Integer({ minimum: 1000, maximum: 60000 }),
  fires_at_ts: u64('when it fires unless refreshed, ns since the epoch'),
  seq: u64('sequence number of the arm'),
});

export const DeadmanDisarmed = Type.Object({
  armed: Type.Literal(false),
  seq: u64('sequence number of the disarm'),
});

// ---- funding -------------------------------------------------------------------

export const DepositAddress = Type.Object({
  address: Type.String({ description: 'deterministic per account; deposits are credited by the operator' }),
  as_of_seq: asOfSeq,
});

const withdrawalStatus = oneOf(WITHDRAWAL_STATUS_NAMES, 'pending until the operator confirms or fails it (failed returns the money)');

export const Withdrawal = Type.Object({
  wid: u64('withdrawal id'),
  client_withdrawal_id: u64('your idempotency key'),
  status: withdrawalStatus,
  amount: u64('cents'),
  destination: Type.String(),
  seq: u64('seq that requested it'),
  as_of_seq: asOfSeq,
});

export const WithdrawalCreated = Type.Object({
  wid: u64('withdrawal id'),
  client_withdrawal_id: u64('your idempotency key'),
  status: withdrawalStatus,
  amount: Type.Optional(u64('cents')),
  destination: Type.Optional(Type.String()),
  seq: u64('seq that requested it'),
  as_of_seq: Type.Optional(asOfSeq),
});

/**
 * Named schemas: the OpenAPI document lists them under components.schemas and
 * refers to them with $ref (MCP tool schemas inline everything).
 */
export const NAMED_SCHEMAS: Readonly<Record<string, TSchema>> = {
  ErrorEnvelope, ErrorObject, ItemError, ExchangeStatus, ExchangeSchedule, RetentionLimits, AccountLimits,
  Market, MarketWithSeq, MarketsPage, Level,
  Orderbook, Trade, TradesPage, Candle, Candlesticks,
  OraclePrice, Round, RoundWithSeq, RoundsPage, Balance, Position, PositionsPage, Fill, FillsPage, Order,
  OrdersPage, PlacementFill, Placement, BatchPlaceResult, SequencedAck, CancelResult, BatchCancelResult, DecreaseResult, QueuePosition,
  DeadmanState, DeadmanArmed, DeadmanDisarmed, DepositAddress, Withdrawal, WithdrawalCreated,
};

// ---- the static types (what src/views returns and src/client receives) ----

/** An order's status name (a placement answers the first four; an order read may be rejected too). */
export type OrderStatusName = (typeof ORDER_STATUS_NAMES)[number];

export type ErrorObject = Static<typeof ErrorObject>;
export type ErrorEnvelope = Static<typeof ErrorEnvelope>;
export type ItemError = Static<typeof ItemError>;
export type ExchangeStatus = Static<typeof ExchangeStatus>;
export type ExchangeSchedule = Static<typeof ExchangeSchedule>;
export type RetentionLimits = Static<typeof RetentionLimits>;
export type AccountLimits = Static<typeof AccountLimits>;
export type Market = Static<typeof Market>;
export type MarketWithSeq = Static<typeof MarketWithSeq>;
export type MarketsPage = Static<typeof MarketsPage>;
export type Level = Static<typeof Level>;
export type Orderbook = Static<typeof Orderbook>;
export type Trade = Static<typeof Trade>;
export type TradesPage = Static<typeof TradesPage>;
export type Candle = Static<typeof Candle>;
export type Candlesticks = Static<typeof Candlesticks>;
export type OraclePrice = Static<typeof OraclePrice>;
export type Round = Static<typeof Round>;
export type RoundWithSeq = Static<typeof RoundWithSeq>;
export type RoundsPage = Static<typeof RoundsPage>;
export type Balance = Static<typeof Balance>;
export type Position = Static<typeof Position>;
export type PositionsPage = Static<typeof PositionsPage>;
export type Fill = Static<typeof Fill>;
export type FillsPage = Static<typeof FillsPage>;
export type Order = Static<typeof Order>;
export type OrdersPage = Static<typeof OrdersPage>;
export type OrderWithStatus = Static<typeof OrderWithStatus>;
export type PlacementFill = Static<typeof PlacementFill>;
export type Placement = Static<typeof Placement>;
export type BatchPlaceResult = Static<typeof BatchPlaceResult>;
export type SequencedAck = Static<typeof SequencedAck>;
export type CancelResult = Static<typeof CancelResult>;
export type BatchCancelResult = Static<typeof BatchCancelResult>;
export type DecreaseResult = Static<typeof DecreaseResult>;
export type QueuePosition = Static<typeof QueuePosition>;
export type DeadmanState = Static<typeof DeadmanState>;
export type DeadmanArmed = Static<typeof DeadmanArmed>;
export type DeadmanDisarmed = Static<typeof DeadmanDisarmed>;
export type DepositAddress = Static<typeof DepositAddress>;
export type Withdrawal = Static<typeof Withdrawal>;
export type WithdrawalCreated = Static<typeof WithdrawalCreated>;
