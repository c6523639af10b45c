// args: the CLI's argument parsing and value checks. Positionals and
// `--flag value` / `--flag=value` options, in any order; `--` ends options.
// Every mistake is a UsageError (exit code 2) with a message that names the
// argument and what was expected. CLI process, main thread.

export class UsageError extends Error {
  constructor(message: string, readonly usage?: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export interface Parsed {
  positionals: string[];
  flags: Map<string, string | true>;
}

/** Options that take no value. */
const BOOLEAN_FLAGS = new Set(['json', 'help', 'version', 'post-only']);

export function parseArgs(argv: readonly string[]): Parsed {
  const positionals: string[] = [];
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (a === '-h') {
      flags.set('help', true);
      continue;
    }
    if (!a.startsWith('--') || a.length === 2) {
      positionals.push(a);
      continue;
    }
    const eq = a.indexOf('=');
    const name = a.slice(2, eq > 0 ? eq : undefined);
    if (BOOLEAN_FLAGS.has(name)) {
      if (eq > 0) throw new UsageError(`--${name} takes no value`);
      flags.set(name, true);
      continue;
    }
    const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
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
  if (raw === undefined || !/^[0-9]+$/.test(raw)) throw new UsageError(`${name} must be an integer ${min}..${max}, got ${JSON.stringify(raw ?? '')}`);
  const n = Number(raw);
  if (n < min || n > max) throw new UsageError(`${name} must be ${min}..${max}, got ${raw}`);
  return n;
}

/** A u64 as a decimal string (ids, cents). */
export function u64(name: string, raw: string | undefined, min = 0n): string {
  if (raw === undefined || !/^[0-9]{1,20}$/.test(raw) || BigInt(raw) > 0xffffffffffffffffn) {
    throw new UsageError(`${name} must be a non-negative integer (u64), got ${JSON.stringify(raw ?? '')}`);
  }
  if (BigInt(raw) < min) throw new UsageError(`${name} must be at least ${min}, got ${raw}`);
  return String(BigInt(raw));
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
