// query: strict query-string and path-parameter parsing for the REST lane.
// Unknown parameters are unknown_field, duplicates and bad values
// invalid_field with details.field. Gateway threads.

import { decimalToHiLo } from '../lib/u64.js';
import { ApiError } from './envelope.js';

export type QueryKind = 'limit' | 'cursor' | 'depth' | 'market_id' | 'group_id' | 'u64' | 'category' | 'statuses' | 'choice';

export interface QueryParam {
  name: string;
  kind: QueryKind;
  /** For `statuses` and `choice`: the allowed values. */
  values?: readonly string[];
  /** For `choice`: the value when the parameter is absent. */
  default?: string;
}

export type QueryValues = Record<string, unknown>;

const U64_RE = /^[0-9]{1,20}$/;
const INT_RE = /^[0-9]{1,10}$/;
/** Scratch of u64Halves. */
const halves = new Uint32Array(2);

function invalid(field: string, reason: string): never {
  throw new ApiError('invalid_field', `invalid ${field}: ${reason}`, { field, reason });
}

function intParam(field: string, raw: string, min: number, max: number): number {
  if (!INT_RE.test(raw)) invalid(field, 'not an integer');
  const n = Number(raw);
  if (n < min || n > max) invalid(field, `must be ${min}..${max}`);
  return n;
}

/** Parses a u64 decimal string; returns [hi, lo] u32 halves. */
export function u64Halves(field: string, raw: string): [number, number] {
  if (!U64_RE.test(raw)) invalid(field, 'not a u64 decimal string');
  if (!decimalToHiLo(raw, halves)) invalid(field, 'exceeds 2^64-1');
  return [halves[0]!, halves[1]!];
}

export function parseQuery(raw: string, spec: readonly QueryParam[]): QueryValues {
  const out: QueryValues = {};
  if (raw.length > 0) {
    for (const part of raw.split('&')) {
      if (part.length === 0) continue;
      const eq = part.indexOf('=');
      let name: string;
      let value: string;
      try {
        name = decoded(eq < 0 ? part : part.slice(0, eq));
        value = eq < 0 ? '' : decoded(part.slice(eq + 1));
      } catch (err) {
        // decodeURIComponent throws URIError on a malformed escape; anything else is ours.
        if (!(err instanceof URIError)) throw err;
        invalid('query', 'bad percent-encoding');
      }
      const p = paramNamed(spec, name);
      if (p === null) throw new ApiError('unknown_field', `unknown query parameter ${name}`, { field: name });
      if (name in out) invalid(name, 'given more than once');
      out[name] = parseValue(p, value);
    }
  }
  for (const p of spec) {
    if (p.name in out) continue;
    if (p.kind === 'limit') out[p.name] = 100;
    else if (p.kind === 'depth') out[p.name] = 10;
    else if (p.kind === 'choice' && p.default !== undefined) out[p.name] = p.default;
  }
  return out;
}

/** A query component with `+` as space and percent-escapes decoded (URIError on a bad escape); most need neither. */
function decoded(s: string): string {
  return s.indexOf('%') < 0 && s.indexOf('+') < 0 ? s : decodeURIComponent(s.replace(/\+/g, ' '));
}

function paramNamed(spec: readonly QueryParam[], name: string): QueryParam | null {
  for (let i = 0; i < spec.length; i++) if (spec[i]!.name === name) return spec[i]!;
  return null;
}

function parseValue(p: QueryParam, value: string): unknown {
  switch (p.kind) {
    case 'limit': return intParam(p.name, value, 1, 1000);
    case 'depth': return intParam(p.name, value, 1, 99);
    case 'cursor': return value;
    case 'market_id': return intParam(p.name, value, 0, 4294967295);
    case 'group_id': return intParam(p.name, value, 0, 4294967295);
    case 'category': return intParam(p.name, value, 0, 65535);
    case 'u64': return u64Halves(p.name, value);
    case 'statuses': {
      const list = value.split(',');
      for (const v of list) if (!p.values!.includes(v)) invalid(p.name, `unknown status ${v}; one of ${p.values!.join(', ')}`);
      return list;
    }
    case 'choice':
      if (!p.values!.includes(value)) invalid(p.name, `one of ${p.values!.join(', ')}`);
      return value;
  }
}

/**
 * Takes `min_seq` (read-your-writes across nodes: the seq of the caller's own
 * write) out of a read's query string; the rest goes to the route's parser.
 * Any read accepts it; 0 when absent.
 */
export function takeMinSeq(raw: string): { min_seq: number; rest: string } {
  if (!raw.includes('min_seq')) return { min_seq: 0, rest: raw };
  const kept: string[] = [];
  let min: number | null = null;
  for (const part of raw.split('&')) {
    const eq = part.indexOf('=');
    if ((eq < 0 ? part : part.slice(0, eq)) !== 'min_seq') {
      kept.push(part);
      continue;
    }
    if (min !== null) invalid('min_seq', 'given more than once');
    const v = eq < 0 ? '' : part.slice(eq + 1);
    if (!/^[0-9]{1,20}$/.test(v)) invalid('min_seq', 'not a seq (a decimal u64)');
    // No seq reaches 2^53: a larger one is never applied (503 replica_lagging after the wait), as any seq not yet applied.
    min = Math.min(Number(v), Number.MAX_SAFE_INTEGER);
  }
  return { min_seq: min ?? 0, rest: kept.join('&') };
}

/** A path segment that must be a u32 id, at least `min` (1: a positive id). */
export function pathId(field: string, raw: string, min = 1): number {
  return intParam(field, raw, min, 4294967295);
}
