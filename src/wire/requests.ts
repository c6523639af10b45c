// requests: the request bodies of every lane (REST, keys service, control
// plane) as closed TypeBox schemas (additionalProperties false everywhere).
// They are the one declaration of these JSON shapes: the gateway compiles
// them once to validate (src/gateway/schemas.ts), the MCP tools and the
// OpenAPI document render them, and the client library's request types are
// their `Static` types. Its one effect at load: the `u64` string format
// registered with TypeBox for its checkers. Any thread (the client imports
// the types only).

import { FormatRegistry, Type, type Static } from '@sinclair/typebox';

const closed = { additionalProperties: false } as const;

/** A decimal string of at most 20 digits whose value is at most 2^64-1. */
export function isU64Decimal(s: string): boolean {
  return /^[0-9]{1,20}$/.test(s) && (s.length < 20 || s <= '18446744073709551615');
}

// Registered where the schema is declared, so every checker of it (gateway,
// control plane, tests) knows the format; a value above 2^64-1 fails the
// schema like any other bad field, before a batch is admitted.
FormatRegistry.Set('u64', isU64Decimal);

/** A u64 as a strict decimal string, 0..2^64-1. */
export const U64String = Type.String({
  pattern: '^[0-9]{1,20}$', format: 'u64', description: 'u64 as a decimal string, at most 18446744073709551615',
});
/** A u64 decimal string of at least 1 (0 means none where the field is optional). */
const PositiveU64String = Type.String({
  pattern: '^0*[1-9][0-9]*$', maxLength: 20, format: 'u64', description: 'u64 as a decimal string, 1..18446744073709551615',
});
export const U32 = Type.Integer({ minimum: 0, maximum: 4294967295 });
export const MarketId = Type.Integer({ minimum: 1, maximum: 4294967295, description: 'market id' });
export const Tick = Type.Integer({ minimum: 1, maximum: 99, description: 'limit price in the order outcome\'s own space, cents' });

export const PlaceOrderBody = Type.Object({
  market_id: MarketId,
  side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: 'sell = sell shares you hold' }),
  outcome: Type.Union([Type.Literal('yes'), Type.Literal('no')]),
  tick: Tick,
  qty: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'shares' }),
  tif: Type.Optional(Type.Union(
    [Type.Literal('gtc'), Type.Literal('gtd'), Type.Literal('ioc'), Type.Literal('fok')],
    { description: 'default gtc; gtd needs expiry_ts' },
  )),
  post_only: Type.Optional(Type.Boolean({ description: 'default false' })),
  client_order_id: Type.Optional(PositiveU64String),
  expiry_ts: Type.Optional(PositiveU64String),
  max_cost: Type.Optional(U64String),
  group_id: Type.Optional(U32),
  stp: Type.Optional(Type.Union(
    [Type.Literal('cancel_taker'), Type.Literal('cancel_maker'), Type.Literal('cancel_both')], { description: 'default cancel_taker' },
  )),
}, closed);

export const BatchPlaceBody = Type.Object({ orders: Type.Array(PlaceOrderBody, { minItems: 1, maxItems: 20 }) }, closed);
export const BatchCancelBody = Type.Object({ order_ids: Type.Array(U64String, { minItems: 1, maxItems: 20 }) }, closed);
export const DecreaseBody = Type.Object({
  new_qty: Type.Integer({ minimum: 0, maximum: 4294967295, description: 'absolute target remaining quantity' }),
}, closed);
export const DeadmanBody = Type.Object({ timeout_ms: Type.Integer({ minimum: 1000, maximum: 60000 }) }, closed);
export const WithdrawalBody = Type.Object({
  client_withdrawal_id: U64String,
  amount: Type.String({ pattern: '^0*[1-9][0-9]{0,15}$', maxLength: 20, description: 'cents, 1..2^53-1, as a decimal string' }),
  destination: Type.String({ minLength: 1, maxLength: 128, description: 'at most 128 UTF-8 bytes, no U+0000' }),
}, closed);
export const CreateKeyBody = Type.Object({
  label: Type.Optional(Type.String({ maxLength: 64 })),
  scopes: Type.Optional(Type.Array(
    Type.Union([Type.Literal('read'), Type.Literal('trade'), Type.Literal('withdraw')]), { minItems: 1, maxItems: 3, uniqueItems: true },
  )),
}, closed);

// Control plane.
export const EmptyBody = Type.Object({}, closed);
export const AdminKeyBody = Type.Object({
  scopes: Type.Array(
    Type.Union([Type.Literal('read'), Type.Literal('trade'), Type.Literal('withdraw')]), { minItems: 1, maxItems: 3, uniqueItems: true },
  ),
}, closed);
const TierBucket = Type.Object({
  sustained_rate_per_s: Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'tokens per second' }),
  burst: Type.Integer({ minimum: 1, maximum: 10_000_000, description: 'bucket size' }),
}, closed);
export const AdminKeyTierBody = Type.Object({
  tier: Type.Union([Type.Literal('default'), Type.Literal('market_maker'), Type.Literal('institutional'), Type.Literal('custom')], {
    description: 'a named tier, or custom with read and write figures',
  }),
  read: Type.Optional(TierBucket),
  write: Type.Optional(TierBucket),
}, closed);
export const AdminDepositBody = Type.Object({
  amount: U64String,
  ref: Type.Optional(Type.String({
    maxLength: 64,
    description: "the transfer's reference: the account's deposit repeated with its ref and amount is credited once (a retry)",
  })),
}, closed);
export const AdminFeeScheduleBody = Type.Object({
  taker_bps: Type.Integer({ minimum: 0, maximum: 10000 }),
  maker_bps: Type.Integer({ minimum: 0, maximum: 10000 }),
}, closed);
export const AdminMarketBody = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 128 }),
  category: Type.Integer({ minimum: 0, maximum: 65535 }),
  position_limit: U32,
  fee_schedule_id: U32,
}, closed);
export const AdminRoundBody = Type.Object({ strike: U64String, close_ts: U64String }, closed);
export const AdminProposeBody = Type.Object({ outcome: Type.Optional(Type.Union([Type.Literal('yes'), Type.Literal('no')])) }, closed);
export const AdminSeriesBody = Type.Object({
  category: Type.Integer({ minimum: 0, maximum: 65535, description: 'series id; at most one active series per category' }),
  title: Type.String({ minLength: 1, maxLength: 128 }),
  period_s: Type.Integer({ minimum: 1, maximum: 2_592_000, description: 'trading time of each round, seconds' }),
  position_limit: U32,
  fee_schedule_id: U32,
}, closed);
export const AdminOracleTickBody = Type.Object({ source_id: Type.Integer({ minimum: 0, maximum: 63 }), price: U64String }, closed);

// ---- the static types (what src/client sends, what the handlers receive once validated) ----

export type PlaceOrderRequest = Static<typeof PlaceOrderBody>;
export type BatchPlaceRequest = Static<typeof BatchPlaceBody>;
export type BatchCancelRequest = Static<typeof BatchCancelBody>;
export type DecreaseRequest = Static<typeof DecreaseBody>;
export type DeadmanRequest = Static<typeof DeadmanBody>;
export type WithdrawalRequest = Static<typeof WithdrawalBody>;
export type CreateKeyRequest = Static<typeof CreateKeyBody>;
export type AdminKeyRequest = Static<typeof AdminKeyBody>;
export type KeyTierRequest = Static<typeof AdminKeyTierBody>;
export type DepositRequest = Static<typeof AdminDepositBody>;
export type FeeScheduleRequest = Static<typeof AdminFeeScheduleBody>;
export type CreateMarketRequest = Static<typeof AdminMarketBody>;
export type OpenRoundRequest = Static<typeof AdminRoundBody>;
export type ProposeRequest = Static<typeof AdminProposeBody>;
export type SeriesRequest = Static<typeof AdminSeriesBody>;
export type OracleTickRequest = Static<typeof AdminOracleTickBody>;
