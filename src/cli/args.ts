// args: the CLI's argument parsing (the repository's one command-line
// parser, src/lib/command_line.ts, over dx's table of options) and value
// checks. Positionals and `--flag value` / `--flag=value` options, in any
// order; `--` ends options. Every mistake is a UsageError (exit code 2) with
// a message that names the argument and what was expected. CLI process, main
// thread.

import { parseCommandLine, UsageError, type OptionSpecs } from '../lib/command_line.js';

export interface Parsed {
  positionals: string[];
  flags: Map<string, string | true>;
}

/**
 * Every option dx knows and whether it takes a value; which of them a
 * command accepts is its allowFlags list (the global ones always).
 */
const DX_OPTIONS = {
  json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean' }, 'post-only': { type: 'boolean' },
  url: { type: 'string' }, 'admin-url': { type: 'string' }, 'accounts-url': { type: 'string' }, 'key-file': { type: 'string' },
  'timeout-ms': { type: 'string' }, category: { type: 'string' }, 'client-order-id': { type: 'string' }, 'close-in': { type: 'string' },
  'close-ts': { type: 'string' }, deposit: { type: 'string' }, depth: { type: 'string' }, 'expiry-ts': { type: 'string' },
  'fee-schedule': { type: 'string' }, group: { type: 'string' }, 'interval-ms': { type: 'string' }, label: { type: 'string' },
  limit: { type: 'string' }, market: { type: 'string' }, 'max-cost': { type: 'string' }, period: { type: 'string' },
  'position-limit': { type: 'string' }, ref: { type: 'string' }, rounds: { type: 'string' }, save: { type: 'string' },
  scopes: { type: 'string' }, seed: { type: 'string' }, sigma: { type: 'string' }, sources: { type: 'string' },
  'start-price': { type: 'string' }, status: { type: 'string' }, stp: { type: 'string' }, strike: { type: 'string' },
  tif: { type: 'string' }, read: { type: 'string' }, write: { type: 'string' },
  since: { type: 'string' }, 'start-ts': { type: 'string' }, 'end-ts': { type: 'string' },
} as const satisfies OptionSpecs;

/**
 * The command line as positionals and options. An option dx does not know
 * is kept (as true, or its `=value`), so that the command names it in its
 * usage error (allowFlags).
 */
export function parseArgs(argv: readonly string[]): Parsed {
  const { values, positionals, unknown } = parseCommandLine(argv, DX_OPTIONS, { unknown: 'keep' });
  const flags = new Map<string, string | true>();
  for (const [k, v] of Object.entries(values)) if (v !== undefined) flags.set(k, v as string | true);
  for (const [k, v] of unknown) flags.set(k, v);
  return { positionals, flags };
}

/** The options a command accepts beside the global ones; anything else is a usage error. */
export const GLOBAL_FLAGS = ['json', 'help', 'version', 'url', 'admin-url', 'accounts-url', 'key-file', 'timeout-ms'];

export function allowFlags(p: Parsed, allowed: readonly string[], usage: string): void {
  for (const k of p.flags.keys()) {
    if (!GLOBAL_FLAGS.includes(k) && !allowed.includes(k)) throw new UsageError(`unknown option --${k}`, usage);
  }
}

export function flag(p: Parsed, name: string): string | undefined {
  const v = p.flags.get(name);
  if (v === true) throw new UsageError(`--${name} needs a value`);
  return v;
}

/** Exactly n positionals after the command words (min..max when max is given). */
export function positionals(p: Parsed, from: number, min: number, max: number, usage: string): string[] {
  const rest = p.positionals.slice(from);
  if (rest.length < min) throw new UsageError('missing arguments', usage);
  if (rest.length > max) throw new UsageError(`unexpected argument ${JSON.stringify(rest[max])}`, usage);
  return rest;
}

export function int(name: string, raw: string | undefined, min: number, max: number): number {
  if (raw === undefined || !/^[0-9]+$/.test(raw))
    throw new UsageError(`${name} must be an integer ${min}..${max}, got ${JSON.stringify(raw ?? '')}`);
  const n = Number(raw);
  if (n < min || n > max) throw new UsageError(`${name} must be ${min}..${max}, got ${raw}`);
  return n;
}

/** A u64 as a decimal string (ids, cents), min..max. */
export function u64(name: string, raw: string | undefined, min = 0n, max = 0xffffffffffffffffn): string {
  if (raw === undefined || !/^[0-9]{1,20}$/.test(raw) || BigInt(raw) > 0xffffffffffffffffn) {
    throw new UsageError(`${name} must be a non-negative integer (u64), got ${JSON.stringify(raw ?? '')}`);
  }
  if (BigInt(raw) < min) throw new UsageError(`${name} must be at least ${min}, got ${raw}`);
  if (BigInt(raw) > max) throw new UsageError(`${name} must be at most ${max}, got ${raw}`);
  return String(BigInt(raw));
}

/**
 * The path of a raw request: one leading slash. Two would make it a
 * scheme-relative URL, naming another host that the token or the signature
 * would go to.
 */
export function requestPath(raw: string, example: string, usage: string): string {
  // A URL parser also reads '/\\host' and '/<tab>/host' as '//host': what it resolves to must stay on the origin.
  const stays = raw.startsWith('/') && !raw.startsWith('//') && new URL(raw, 'http://origin.invalid').host === 'origin.invalid';
  if (!stays) throw new UsageError(`the path must start with a single /, e.g. ${example}`, usage);
  return raw;
}

export function oneOf<T extends string>(name: string, raw: string | undefined, values: readonly T[]): T {
  if (raw === undefined || !(values as readonly string[]).includes(raw)) {
    throw new UsageError(`${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw ?? '')}`);
  }
  return raw as T;
}

/** A decimal price such as 65000 or 65000.25 in oracle units (x 1e8), exactly. */
export function oraclePrice(name: string, raw: string | undefined): string {
  const m = raw === undefined ? null : /^([0-9]{1,12})(?:\.([0-9]{1,8}))?$/.exec(raw);
  if (!m) throw new UsageError(`${name} must be a decimal price with at most 8 decimals (e.g. 65000.25), got ${JSON.stringify(raw ?? '')}`);
  const v = BigInt(m[1]!) * 100_000_000n + BigInt((m[2] ?? '').padEnd(8, '0'));
  if (v === 0n) throw new UsageError(`${name} must be above 0`);
  return String(v);
}

/** A duration: 90, 90s, 5m, 2h, 1d (plain numbers are seconds); returns seconds. */
export function durationS(name: string, raw: string | undefined): number {
  const m = raw === undefined ? null : /^([0-9]{1,7})(s|m|h|d)?$/.exec(raw);
  if (!m) throw new UsageError(`${name} must be a duration such as 90s, 5m, 2h or 1d, got ${JSON.stringify(raw ?? '')}`);
  const n = Number(m[1]) * ({ s: 1, m: 60, h: 3600, d: 86400 } as Record<string, number>)[m[2] ?? 's']!;
  if (n < 1) throw new UsageError(`${name} must be at least 1 s`);
  return n;
}
