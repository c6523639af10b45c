// schemas: validation of the closed request schemas of every lane (declared
// in src/wire/requests.ts), each compiled once at start-up. `validate` maps
// the first failure to the lane's codes (docs/rest.md): an unknown field is 400
// unknown_field, anything else 400 invalid_field with details.field and
// details.reason. Also the u64 field checks and the JSON transport hygiene.
// Gateway and control-plane threads.

import { isUtf8 } from 'node:buffer';
import type { Static, TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { ValueErrorType } from '@sinclair/typebox/errors';
import { decimalToHiLo } from '../lib/u64.js';
import { ApiError } from './envelope.js';

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
  throw new ApiError('invalid_field', `invalid field ${field || '(body)'}: ${first?.message ?? 'invalid'}`, {
    field: field || '(body)',
    reason: first?.message ?? 'invalid',
  });
}

/** s as is when it is well-formed Unicode; a lone surrogate (valid in JSON, not in UTF-8 or a URL) is invalid_field. */
export function wellFormed(s: string, field: string): string {
  // String.prototype.isWellFormed is in Node 20 but not in TypeScript's ES2022 lib.
  if (!(s as unknown as { isWellFormed(): boolean }).isWellFormed()) {
    throw new ApiError('invalid_field', `${field} is not well-formed Unicode`, { field, reason: 'not well-formed Unicode' });
  }
  return s;
}

/**
 * A string bound for a fixed, NUL-padded UTF-8 field of a record (titles,
 * refs, destinations, labels): it must hold no U+0000 (the field would end
 * there), be well-formed Unicode (a lone surrogate would be stored as
 * U+FFFD) and fit in maxBytes of UTF-8 (it would be cut); else invalid_field,
 * so what is stored is always exactly what was sent.
 */
export function storedText(s: string, field: string, maxBytes: number): string {
  if (s.includes('\u0000')) throw new ApiError('invalid_field', `${field} contains U+0000`, { field, reason: 'contains U+0000' });
  wellFormed(s, field);
  if (Buffer.byteLength(s) > maxBytes) {
    throw new ApiError('invalid_field', `${field} exceeds ${maxBytes} bytes`, { field, reason: `at most ${maxBytes} bytes` });
  }
  return s;
}

/** The parsed u64 of a validated U64String, or an invalid_field error when above 2^64-1. */
export function u64Field(s: string, field: string): bigint {
  const v = BigInt(s);
  if (v > 0xffffffffffffffffn) throw new ApiError('invalid_field', `${field} exceeds 2^64-1`, { field, reason: 'exceeds 2^64-1' });
  return v;
}

/** Scratch of u64FieldHalves. */
const halves = new Uint32Array(2);

/**
 * A validated U64String as u32 halves, without a BigInt (placements: the
 * client_order_id and expiry_ts): out[0] hi, out[1] lo; an invalid_field
 * error when above 2^64-1.
 */
export function u64FieldHalves(s: string, field: string): Uint32Array {
  if (!decimalToHiLo(s, halves)) throw new ApiError('invalid_field', `${field} exceeds 2^64-1`, { field, reason: 'exceeds 2^64-1' });
  return halves;
}

/** A u64 field that must also be a safe integer (cent amounts). */
export function safeField(s: string, field: string, min = 0): number {
  const v = u64Field(s, field);
  if (v > BigInt(Number.MAX_SAFE_INTEGER))
    throw new ApiError('invalid_field', `${field} exceeds 2^53-1`, { field, reason: 'exceeds 2^53-1' });
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

/**
 * The transport hygiene rules on a parsed body: depth cap and no prototype keys (400 invalid_json). For a body that
 * arrives inside another message (a WebSocket order command's params), counting depth from the body as REST does.
 */
export function checkJsonHygiene(v: unknown): void {
  walk(v, 0);
}

/**
 * Whether `text`, raw's UTF-8 decoding, is what was sent: a byte sequence
 * that is not UTF-8 decodes to U+FFFD, so only a text holding one needs the
 * full check (a one-byte string has none: the common case costs a scan).
 */
export function decodedWhole(raw: Buffer, text: string): boolean {
  return !text.includes('\uFFFD') || isUtf8(raw);
}

/**
 * A body's bytes as JSON plus the transport hygiene rules (checkJsonHygiene).
 * JSON is UTF-8 (RFC 8259): bytes that are not are 400 invalid_json, never
 * decoded to U+FFFD and kept as text the client did not send.
 */
export function parseJson(raw: Buffer): unknown {
  const text = raw.toString('utf8');
  if (!decodedWhole(raw, text)) throw new ApiError('invalid_json', 'the body is not valid UTF-8');
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    throw new ApiError('invalid_json', `invalid JSON: ${(e as Error).message}`);
  }
  checkJsonHygiene(v);
  return v;
}
