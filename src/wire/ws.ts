// ws: the JSON messages the WebSocket lane (src/ws) sends, as TypeBox
// schemas: the one declaration of their shapes, as responses.ts is for REST.
// The fan-out serializes the hot messages (trade, orderbook_delta, oracle,
// balance, position and the data envelope) with template strings for speed;
// the tests check every message they receive against these schemas, closed
// (test/support/wire_shapes.ts, through test/ws/ws_client.ts), so a template
// that drifts fails there, and the messages built from objects are checked
// at compile time with `satisfies`. The client library (src/client) and the
// web pages read messages as the `Static` types. The lane's channel names and
// error codes live here too, so the schemas and the lane share one list.
// docs/websocket.md describes every message. No runtime state; any thread
// (the client imports the types only).

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { OUTCOME_NAMES, SIDE_NAMES } from '../layout/records.js';
import {
  asOfSeq, BatchCancelResult, BatchPlaceResult, CancelResult, DecreaseResult, ErrorEnvelope, Fill, int, oneOf, OraclePrice, Orderbook,
  OrderWithStatus, Placement, Position, Round, SequencedAck, u64, U32_MAX,
} from './responses.js';

/** The channels in service. `ticker` is not implemented: it answers code 4 like any unknown channel (docs/websocket.md). */
export const CHANNELS = ['orderbook_delta', 'trades', 'oracle', 'rounds', 'user'] as const;
export type Channel = (typeof CHANNELS)[number];

/** Error codes of `{type: "error", msg: {code, name, msg}}` replies (docs/websocket.md); a code never changes its meaning. */
export const WsError = {
  invalid_message: 1,
  unknown_command: 2,
  bad_params: 3,
  unknown_channel: 4,
  unknown_sid: 5,
  unknown_market: 6,
  too_many_subscriptions: 7,
  rate_limited: 8,
  internal: 9,
  /** start_binary with another native-layout fingerprint than the exchange's. */
  layout_mismatch: 10,
  /** A binary frame that cannot be read as command records (the connection is then closed with 4002). */
  malformed_frame: 11,
} as const;
export type WsErrorName = keyof typeof WsError;

/** The first event of a command that moved an account's money: a `balance` message's cause. */
export const BALANCE_CAUSES = [
  'order_accepted', 'filled', 'order_canceled', 'order_decreased', 'deposited', 'withdrawal_requested', 'withdrawal_confirmed',
  'withdrawal_failed', 'position_settled',
] as const;

const marketId = int(1, U32_MAX, 'market id');
const seq = u64('the exchange seq this message reflects');

// ---- data message bodies (`msg`) -----------------------------------------------------

export const BookDelta = Type.Object({
  market_id: marketId,
  side: oneOf(OUTCOME_NAMES, 'the bid ladder: yes, or no (a NO bid at t is a YES ask at 100 - t)'),
  tick: int(1, 99, 'tick in the ladder\'s own space'),
  qty: Type.Integer({ minimum: 0, description: 'the level\'s new total; 0 = the level is gone' }),
  delta: Type.Integer({ description: 'the signed change' }),
  as_of_seq: asOfSeq,
});

export const TradeMessage = Type.Object({
  market_id: marketId,
  tick_yes: int(1, 99, 'YES-space price'),
  qty: Type.Integer({ minimum: 1 }),
  taker_outcome: oneOf(OUTCOME_NAMES, 'outcome of the taking order'),
  taker_side: oneOf(SIDE_NAMES, 'side of the taking order'),
  trade_seq: u64('the exchange seq of the trade (the REST tape\'s seq)'),
  fill_id: u64('the fill'),
  ts: u64('sequencer time, ns since the epoch'),
});

export const RoundMessage = Type.Object({ ...Round.properties, seq });

/** An order as the user channel shows it: its status, and what it still holds reserved. */
const orderExtras = {
  reserved_cash: u64('cents still reserved by the order'),
  fee_per_share: Type.Integer({ minimum: 0, description: 'worst-case fee reserved per share (buys)' }),
};
export const OpenOrder = Type.Object({ ...OrderWithStatus.properties, ...orderExtras });
export const OrderMessage = Type.Object({ ...OrderWithStatus.properties, ...orderExtras, seq });

export const UserSnapshot = Type.Object({
  orders: Type.Array(OpenOrder, { description: 'the open orders' }),
  balance: Type.Object({ available: u64('cents'), reserved: u64('cents') }),
  positions: Type.Array(Position),
  as_of_seq: asOfSeq,
  resumed: Type.Boolean({ description: 'false: a fresh snapshot (a resume could not be served)' }),
});

export const FillMessage = Type.Object({ ...Fill.properties, release: u64('cents released from the order\'s reservation') });

export const BalanceMessage = Type.Object({
  available: u64('cents'),
  reserved: u64('cents'),
  cause: oneOf(BALANCE_CAUSES, 'the first event of the command that moved the money'),
  seq,
});

export const PositionMessage = Type.Object({ ...Position.properties, seq });

// ---- messages ----------------------------------------------------------------------------

function data<const T extends string, S extends TSchema>(type: T, msg: S) {
  return Type.Object({
    type: Type.Literal(type),
    sid: Type.Integer({ minimum: 1, description: 'the subscription (stream) it belongs to' }),
    seq: Type.Integer({ minimum: 0, description: 'grows by one per message of the subscription' }),
    msg,
  });
}

const replyId = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'the command\'s id; null when it had none' });

function reply<const T extends string, S extends TSchema>(type: T, msg: S) {
  return Type.Object({ id: replyId, type: Type.Literal(type), msg });
}

/** Every data message `{type, sid, seq, msg}`, by type. */
export const DATA_MESSAGES = {
  orderbook_snapshot: data('orderbook_snapshot', Orderbook),
  orderbook_delta: data('orderbook_delta', BookDelta),
  trade: data('trade', TradeMessage),
  oracle: data('oracle', OraclePrice),
  round: data('round', RoundMessage),
  user_snapshot: data('user_snapshot', UserSnapshot),
  order: data('order', OrderMessage),
  fill: data('fill', FillMessage),
  balance: data('balance', BalanceMessage),
  position: data('position', PositionMessage),
};

export const Subscribed = Type.Object({
  channel: oneOf(CHANNELS, 'the channel'),
  sid: Type.Integer({ minimum: 1 }),
  market_id: Type.Optional(marketId),
  existing: Type.Optional(Type.Literal(true, { description: 'the connection already had this stream' })),
  resumed: Type.Optional(Type.Boolean({ description: 'user channel with resume_from_seq: the missed messages follow' })),
});

export const Unsubscribed = Type.Object({ sids: Type.Array(Type.Integer({ minimum: 1 })) });

export const SubscriptionUpdated = Type.Object({
  sid: Type.Integer({ minimum: 1 }),
  action: oneOf(['get_snapshot', 'delete_markets'] as const, 'the action done'),
  sids: Type.Optional(Type.Array(Type.Integer({ minimum: 1 }), { description: 'delete_markets: the subscriptions ended' })),
});

export const BinaryStarted = Type.Object({
  layout_fingerprint: Type.String({ pattern: '^0x[0-9a-f]{8}$' }),
  account_id: int(1, U32_MAX, 'the account every record must carry'),
  max_records_per_frame: Type.Integer({ minimum: 1 }),
  max_in_flight: Type.Integer({ minimum: 1 }),
});

export const WsErrorBody = Type.Object({
  code: Type.Integer({ minimum: 1 }),
  name: oneOf(Object.keys(WsError) as WsErrorName[], 'the code\'s name'),
  msg: Type.String(),
  retry_after_ms: Type.Optional(u64('rate_limited: when a token returns')),
  layout_fingerprint: Type.Optional(Type.String({ description: 'layout_mismatch: the exchange\'s fingerprint' })),
});

/** An order command's answer: the REST operation's body, or its error envelope. */
export const OrderResultBody = Type.Union([
  Placement, BatchPlaceResult, CancelResult, BatchCancelResult, DecreaseResult, SequencedAck, ErrorEnvelope,
]);

/** What `ok` answers: unsubscribe, update_subscription (get_snapshot, delete_markets), start_binary. */
export const OkBody = Type.Union([Unsubscribed, SubscriptionUpdated, BinaryStarted]);

/** Every reply `{id, type, msg}` to a command, by type. */
export const REPLIES = {
  subscribed: reply('subscribed', Subscribed),
  ok: reply('ok', OkBody),
  error: reply('error', WsErrorBody),
  order_result: Type.Object({
    id: replyId,
    type: Type.Literal('order_result'),
    status: Type.Integer({ minimum: 100, maximum: 599, description: 'the HTTP status REST would answer' }),
    msg: OrderResultBody,
  }),
};

/** Every text message the lane sends, by its `type`. */
export const WS_MESSAGES: Readonly<Record<string, TSchema>> = { ...DATA_MESSAGES, ...REPLIES };

type Values<T> = T[keyof T];
export type BookDelta = Static<typeof BookDelta>;
export type TradeMessage = Static<typeof TradeMessage>;
export type RoundMessage = Static<typeof RoundMessage>;
export type OpenOrder = Static<typeof OpenOrder>;
export type OrderMessage = Static<typeof OrderMessage>;
export type UserSnapshot = Static<typeof UserSnapshot>;
export type FillMessage = Static<typeof FillMessage>;
export type BalanceMessage = Static<typeof BalanceMessage>;
export type PositionMessage = Static<typeof PositionMessage>;
export type BalanceCause = (typeof BALANCE_CAUSES)[number];
export type Subscribed = Static<typeof Subscribed>;
export type OkBody = Static<typeof OkBody>;
export type BinaryStarted = Static<typeof BinaryStarted>;
export type WsErrorBody = Static<typeof WsErrorBody>;
export type OrderResultBody = Static<typeof OrderResultBody>;
/** A data message `{type, sid, seq, msg}` (narrow on `type` to get its msg). */
export type WsDataMessage = Static<Values<typeof DATA_MESSAGES>>;
/** A reply to a command (narrow on `type`). */
export type WsReply = Static<Values<typeof REPLIES>>;
export type WsServerMessage = WsDataMessage | WsReply;
