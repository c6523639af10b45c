// config: every option of DESIGN 9 as an environment variable and a flag
// (flags win), with the embedded defaults `npm start` runs with. Main thread.

import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ENGINE_CONFIG, type EngineConfig } from '../engine/config.js';
import { ArgumentError, parseCommandLine } from '../lib/command_line.js';
import type { WsConfig } from '../ws/protocol.js';

export interface ExchangeConfig {
  host: string;
  port: number;
  accounts_port: number;
  admin_host: string;
  admin_port: number;
  data_dir: string;
  admin_token: string | null;
  gateways: number;
  durability: 'fsync' | 'none';
  response_budget_ms: number;
  verify: boolean;
  /** Journal records between periodic snapshots. */
  snapshot_every: number;
  /** Journal segment size before rotation (tests use small ones). */
  segment_bytes: number;
  /** Start the demo (src/demo): a series on a simulated oracle, a market maker, a trader key. Main only. */
  demo: boolean;
  /** Round length of the demo series, seconds. */
  demo_period_s: number;
  /** A proposed round settles by itself after this long (engine; recovery must use the same value). */
  dispute_window_ms: number;
  /** An oracle source is fresh while its last tick is younger than this (engine). */
  oracle_staleness_ms: number;
  /** Fresh oracle sources needed to propose a round or open a series round (engine). */
  oracle_quorum: number;
  /**
   * Table sizes of the engine and every read model (orders, accounts, markets,
   * (account, market) positions; 0 = as many as accounts). A full table
   * doubles on the engine thread, tens of ms at a million entries, so size
   * them for the load expected.
   */
  order_capacity: number;
  account_capacity: number;
  market_capacity: number;
  position_capacity: number;
  /** Terminal (filled, canceled) orders kept per account (engine retention). */
  terminal_cap: number;
  /** Rejected orders kept per account (engine retention). */
  reject_cap: number;
  /** Terminal rounds kept, all markets together (engine retention). */
  round_cap: number;
  /** Finished withdrawals kept per account (engine retention). */
  withdrawal_cap: number;
  /** Revoked keys kept per account (engine retention). */
  revoked_key_cap: number;
  /** The built web pages: `trader/` (public port) and `console/` (control plane); `npm run build` writes dist/web. */
  web_dir: string;
  /** WebSocket lane tunables (tests and benchmarks; no flag): defaults in src/ws/protocol.ts. */
  ws?: Partial<WsConfig>;
}

const OPTIONS: { env: string; flag: string; key: keyof ExchangeConfig; kind: 'string' | 'int' | 'bool' | 'durability' }[] = [
  { env: 'DX_HOST', flag: '--host', key: 'host', kind: 'string' },
  { env: 'DX_PORT', flag: '--port', key: 'port', kind: 'int' },
  { env: 'DX_ACCOUNTS_PORT', flag: '--accounts-port', key: 'accounts_port', kind: 'int' },
  { env: 'DX_ADMIN_HOST', flag: '--admin-host', key: 'admin_host', kind: 'string' },
  { env: 'DX_ADMIN_PORT', flag: '--admin-port', key: 'admin_port', kind: 'int' },
  { env: 'DX_DATA_DIR', flag: '--data-dir', key: 'data_dir', kind: 'string' },
  { env: 'DX_ADMIN_TOKEN', flag: '--admin-token', key: 'admin_token', kind: 'string' },
  { env: 'DX_GATEWAYS', flag: '--gateways', key: 'gateways', kind: 'int' },
  { env: 'DX_DURABILITY', flag: '--durability', key: 'durability', kind: 'durability' },
  { env: 'DX_RESPONSE_BUDGET_MS', flag: '--response-budget-ms', key: 'response_budget_ms', kind: 'int' },
  { env: 'DX_VERIFY', flag: '--verify', key: 'verify', kind: 'bool' },
  { env: 'DX_SNAPSHOT_EVERY', flag: '--snapshot-every', key: 'snapshot_every', kind: 'int' },
  { env: 'DX_SEGMENT_BYTES', flag: '--segment-bytes', key: 'segment_bytes', kind: 'int' },
  { env: 'DX_DEMO', flag: '--demo', key: 'demo', kind: 'bool' },
  { env: 'DX_DEMO_PERIOD_S', flag: '--demo-period-s', key: 'demo_period_s', kind: 'int' },
  { env: 'DX_DISPUTE_WINDOW_MS', flag: '--dispute-window-ms', key: 'dispute_window_ms', kind: 'int' },
  { env: 'DX_ORACLE_STALENESS_MS', flag: '--oracle-staleness-ms', key: 'oracle_staleness_ms', kind: 'int' },
  { env: 'DX_ORACLE_QUORUM', flag: '--oracle-quorum', key: 'oracle_quorum', kind: 'int' },
  { env: 'DX_ORDER_CAPACITY', flag: '--order-capacity', key: 'order_capacity', kind: 'int' },
  { env: 'DX_ACCOUNT_CAPACITY', flag: '--account-capacity', key: 'account_capacity', kind: 'int' },
  { env: 'DX_MARKET_CAPACITY', flag: '--market-capacity', key: 'market_capacity', kind: 'int' },
  { env: 'DX_POSITION_CAPACITY', flag: '--position-capacity', key: 'position_capacity', kind: 'int' },
  { env: 'DX_TERMINAL_CAP', flag: '--terminal-cap', key: 'terminal_cap', kind: 'int' },
  { env: 'DX_REJECT_CAP', flag: '--reject-cap', key: 'reject_cap', kind: 'int' },
  { env: 'DX_ROUND_CAP', flag: '--round-cap', key: 'round_cap', kind: 'int' },
  { env: 'DX_WITHDRAWAL_CAP', flag: '--withdrawal-cap', key: 'withdrawal_cap', kind: 'int' },
  { env: 'DX_REVOKED_KEY_CAP', flag: '--revoked-key-cap', key: 'revoked_key_cap', kind: 'int' },
  { env: 'DX_WEB_DIR', flag: '--web-dir', key: 'web_dir', kind: 'string' },
];

/** Every flag takes a value (booleans too: `--verify 1`). */
const FLAG_SPECS: Record<string, { type: 'string' }> = Object.fromEntries(OPTIONS.map((o) => [o.flag.slice(2), { type: 'string' as const }]));

/** dist/web beside the compiled sources (this file is dist/src/main/config.js). */
const BUILT_WEB_DIR = fileURLToPath(new URL('../../web', import.meta.url));

export function defaults(): ExchangeConfig {
  return {
    host: '127.0.0.1', port: 8080, accounts_port: 8081, admin_host: '127.0.0.1', admin_port: 8082, data_dir: './data',
    admin_token: null, gateways: Math.max(1, availableParallelism() - 1), durability: 'fsync',
    response_budget_ms: 1000, verify: false, snapshot_every: 1_000_000, segment_bytes: 64 << 20,
    demo: true, demo_period_s: 180, dispute_window_ms: 60_000, oracle_staleness_ms: 10_000, oracle_quorum: 1, web_dir: BUILT_WEB_DIR,
    order_capacity: 1 << 19, account_capacity: 1 << 14, market_capacity: 64, position_capacity: 0,
    terminal_cap: DEFAULT_ENGINE_CONFIG.terminal_cap, reject_cap: DEFAULT_ENGINE_CONFIG.reject_cap,
    round_cap: DEFAULT_ENGINE_CONFIG.round_cap,
    withdrawal_cap: DEFAULT_ENGINE_CONFIG.withdrawal_cap, revoked_key_cap: DEFAULT_ENGINE_CONFIG.revoked_key_cap,
  };
}

function parseValue(name: string, kind: string, raw: string): unknown {
  switch (kind) {
    case 'int': {
      if (!/^[0-9]+$/.test(raw)) throw new Error(`${name}: expected a non-negative integer, got "${raw}"`);
      return Number(raw);
    }
    case 'bool': {
      if (raw === '1' || raw === 'true') return true;
      if (raw === '0' || raw === 'false') return false;
      throw new Error(`${name}: expected 1 or 0, got "${raw}"`);
    }
    case 'durability': {
      if (raw !== 'fsync' && raw !== 'none') throw new Error(`${name}: expected fsync or none, got "${raw}"`);
      return raw;
    }
    default: return raw;
  }
}

export function loadConfig(argv: string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): ExchangeConfig {
  const c = defaults() as unknown as Record<string, unknown>;
  for (const o of OPTIONS) {
    const v = env[o.env];
    if (v !== undefined && v !== '') c[o.key] = parseValue(o.env, o.kind, v);
  }
  let values: Record<string, string | undefined>;
  try {
    ({ values } = parseCommandLine(argv, FLAG_SPECS, { positionals: false }));
  } catch (e) {
    if (!(e instanceof ArgumentError)) throw e;
    if (e.problem === 'missing_value') throw new Error(`${e.option} needs a value`);
    throw new Error(`unknown option ${e.option}; options: ${OPTIONS.map((x) => x.flag).join(' ')}`);
  }
  for (const o of OPTIONS) {
    const raw = values[o.flag.slice(2)];
    if (raw !== undefined) c[o.key] = parseValue(o.flag, o.kind, raw);
  }
  const cfg = c as unknown as ExchangeConfig;
  if (cfg.gateways < 1) throw new Error('gateways must be at least 1');
  if (cfg.response_budget_ms < 1) throw new Error('response budget must be at least 1 ms');
  if (cfg.snapshot_every < 1) throw new Error('snapshot-every must be at least 1 record');
  if (cfg.segment_bytes < 4096) throw new Error('segment-bytes must be at least 4096');
  if (cfg.demo_period_s < 1 || cfg.demo_period_s > 2_592_000) throw new Error('demo-period-s must be 1..2592000');
  if (cfg.dispute_window_ms > 86_400_000) throw new Error('dispute-window-ms must be at most 86400000 (a day)');
  if (cfg.oracle_staleness_ms < 1 || cfg.oracle_staleness_ms > 86_400_000) throw new Error('oracle-staleness-ms must be 1..86400000');
  if (cfg.oracle_quorum < 1 || cfg.oracle_quorum > 64) throw new Error('oracle-quorum must be 1..64');
  for (const k of ['terminal_cap', 'reject_cap', 'round_cap', 'withdrawal_cap', 'revoked_key_cap'] as const) {
    if (cfg[k] < 1 || cfg[k] > 1_000_000) throw new Error(`${k.replace(/_/g, '-')} must be 1..1000000`);
  }
  return cfg;
}

/**
 * The engine configuration of a server configuration: what the engine, every
 * read model, recovery, snapshots and the journal tools fold events with
 * (retention caps and the oracle and dispute settings live in evolve, so a
 * replay must use the values the journal was written with). Tables are sized
 * from the configuration (DX_*_CAPACITY) so that a busy book does not pay a
 * doubling stall (a 262k-entry index rehash measured 38 ms); they still grow
 * past it.
 */
export function engineConfigOf(cfg: ExchangeConfig): Partial<EngineConfig> {
  return {
    order_capacity: cfg.order_capacity, account_capacity: cfg.account_capacity, market_capacity: cfg.market_capacity,
    position_capacity: cfg.position_capacity,
    dispute_window_ms: cfg.dispute_window_ms, oracle_staleness_ms: cfg.oracle_staleness_ms, oracle_quorum: cfg.oracle_quorum,
    terminal_cap: cfg.terminal_cap, reject_cap: cfg.reject_cap, round_cap: cfg.round_cap, withdrawal_cap: cfg.withdrawal_cap,
    revoked_key_cap: cfg.revoked_key_cap,
  };
}
