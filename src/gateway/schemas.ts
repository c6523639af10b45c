// schemas: the closed request schemas of every lane, written once with
// TypeBox and compiled once at start-up (additionalProperties false
// everywhere). `validate` maps the first failure to the spec's codes: an
// unknown field is 400 unknown_field, anything else 400 invalid_field with
// details.field and details.reason. The same schemas describe the MCP tools
// and the OpenAPI document. Gateway and control-plane threads.

import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { ApiError } from './envelope.js';

const closed = { additionalProperties: false } as const;

/** A u64 as a strict decimal string (the range check up to 2^64-1 is done on use). */
export const U64String = Type.String({ pattern: '^[0-9]{1,20}$', description: 'u64 as a decimal string' });
export const U32 = Type.Integer({ minimum: 0, maximum: 4294967295 });
export const MarketId = Type.Integer({ minimum: 1, maximum: 4294967295, description: 'market id' });
export const Tick = Type.Integer({ minimum: 1, maximum: 99, description: 'limit price in the order outcome\'s own space, cents' });

export const PlaceOrderBody = Type.Object({
  market_id: MarketId,
  side: Type.Union([Type.Literal('buy'), Type.Literal('sell')], { description: 'sell = sell shares you hold' }),
  outcome: Type.Union([Type.Literal('yes'), Type.Literal('no')]),
  tick: Tick,
  qty: Type.Integer({ minimum: 1, maximum: 1_000_000, description: 'shares' }),
  tif: Type.Optional(Type.Union([Type.Literal('gtc'), Type.Literal('gtd'), Type.Literal('ioc'), Type.Literal('fok')], { description: 'default gtc; gtd needs expiry_ts' })),
  post_only: Type.Optional(Type.Boolean({ description: 'default false' })),
  client_order_id: Type.Optional(U64String),
  expiry_ts: Type.Optional(U64String),
  max_cost: Type.Optional(U64String),
  group_id: Type.Optional(U32),
  stp: Type.Optional(Type.Union([Type.Literal('cancel_taker'), Type.Literal('cancel_maker'), Type.Literal('cancel_both')], { description: 'default cancel_taker' })),
}, closed);
export type PlaceOrderRequest = Static<typeof PlaceOrderBody>;

export const BatchPlaceBody = Type.Object({ orders: Type.Array(PlaceOrderBody, { minItems: 1, maxItems: 20 }) }, closed);
export const BatchCancelBody = Type.Object({ order_ids: Type.Array(U64String, { minItems: 1, maxItems: 20 }) }, closed);
export const DecreaseBody = Type.Object({ new_qty: Type.Integer({ minimum: 0, maximum: 4294967295, description: 'absolute target remaining quantity' }) }, closed);
export const DeadmanBody = Type.Object({ timeout_ms: Type.Integer({ minimum: 1000, maximum: 60000 }) }, closed);
export const WithdrawalBody = Type.Object({
  client_withdrawal_id: U64String,
  amount: U64String,
  destination: Type.String({ minLength: 1, maxLength: 128 }),
}, closed);
export const CreateKeyBody = Type.Object({
  label: Type.Optional(Type.String({ maxLength: 64 })),
  scopes: Type.Optional(Type.Array(Type.Union([Type.Literal('read'), Type.Literal('trade'), Type.Literal('withdraw')]), { minItems: 1, maxItems: 3, uniqueItems: true })),
}, closed);

// Control plane.
export const EmptyBody = Type.Object({}, closed);
export const AdminKeyBody = Type.Object({
  scopes: Type.Array(Type.Union([Type.Literal('read'), Type.Literal('trade'), Type.Literal('withdraw')]), { minItems: 1, maxItems: 3, uniqueItems: true }),
}, closed);
export const AdminDepositBody = Type.Object({ amount: U64String, ref: Type.Optional(Type.String({ maxLength: 64 })) }, closed);
export const AdminFeeScheduleBody = Type.Object({ taker_bps: Type.Integer({ minimum: 0, maximum: 10000 }), maker_bps: Type.Integer({ minimum: 0, maximum: 10000 }) }, closed);
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

export interface Checker<T extends TSchema> {
  readonly schema: T;
  readonly check: TypeCheck<T>;
}

export function compile<T extends TSchema>(schema: T): Checker<T> {
  return { schema, check: TypeCompiler.Compile(schema) };
}

function pointerToField(path: string): string {
  return path.replace(/^\//, '').replace(/\//g, '.');
}

/** Validates value; throws ApiError unknown_field / invalid_field on the first problem. */
export function validate<T extends TSchema>(c: Checker<T>, value: unknown): Static<T> {
  if (c.check.Check(value)) return value as Static<T>;
  // Unknown fields first, wherever they are, so a typo is named as such.
  let first: { path: string; message: string } | null = null;
  for (const e of c.check.Errors(value)) {
    if (e.type === ValueErrorType.ObjectAdditionalProperties) {
      // The error's path names the unknown property itself.
      const field = pointerToField(e.path);
      throw new ApiError('unknown_field', `unknown field ${field}`, { field });
    }
    if (!first) first = { path: e.path, message: e.message };
  }
  const field = first ? pointerToField(first.path) : '';
  throw new ApiError('invalid_field', `invalid field ${field || '(body)'}: ${first?.message ?? 'invalid'}`, { field: field || '(body)', reason: first?.message ?? 'invalid' });
}

/** The parsed u64 of a validated U64String, or an invalid_field error when above 2^64-1. */
export function u64Field(s: string, field: string): bigint {
  const v = BigInt(s);
  if (v > 0xffffffffffffffffn) throw new ApiError('invalid_field', `${field} exceeds 2^64-1`, { field, reason: 'exceeds 2^64-1' });
  return v;
}

/** A u64 field that must also be a safe integer (cent amounts). */
export function safeField(s: string, field: string, min = 0): number {
  const v = u64Field(s, field);
  if (v > BigInt(Number.MAX_SAFE_INTEGER)) throw new ApiError('invalid_field', `${field} exceeds 2^53-1`, { field, reason: 'exceeds 2^53-1' });
  const n = Number(v);
  if (n < min) throw new ApiError('invalid_field', `${field} must be at least ${min}`, { field, reason: `minimum ${min}` });
  return n;
}

const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);
const MAX_DEPTH = 8;

function walk(v: unknown, depth: number): void {
  if (depth > MAX_DEPTH) throw new ApiError('invalid_json', `JSON nested deeper than ${MAX_DEPTH}`);
  if (Array.isArray(v)) {
    for (const x of v) walk(x, depth + 1);
  } else if (v !== null && typeof v === 'object') {
    for (const k of Object.keys(v)) {
      if (FORBIDDEN_KEYS.has(k)) throw new ApiError('invalid_json', `forbidden key ${k}`);
      walk((v as Record<string, unknown>)[k], depth + 1);
    }
  }
}

/** JSON.parse plus the transport hygiene rules: depth cap and no prototype keys. */
export function parseJson(text: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new ApiError('invalid_json', `invalid JSON: ${(e as Error).message}`);
  }
  walk(v, 0);
  return v;
}
