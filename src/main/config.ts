// config: every option (README.md, "Configuration") as an environment variable and a flag
// (flags win), with the embedded defaults `npm start` runs with. Main thread.

import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { DEFAULT_ENGINE_CONFIG, MAX_ORDERS_LIMIT, type EngineConfig } from '../engine/config.js';
import { ArgumentError, parseCommandLine } from '../lib/command_line.js';
import { MAX_PENDING } from '../gateway/core.js';
import { BROADCAST_MAX_CONSUMERS } from '../ring/broadcast_ring.js';
import { WAIT_KINDS, type WaitKind } from '../ring/wait.js';
import { DEFAULT_WS_CONFIG, type WsConfig } from '../ws/protocol.js';
import { isLevel } from './log.js';

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
  /** Bytes a snapshot's capture copies per event-loop turn of the control plane (events are held, unapplied, between steps). */
  snapshot_step_bytes: number;
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
  /** Deposits per account whose refs are remembered for idempotency (engine retention). */
  deposit_ref_cap: number;
  /**
   * Most orders held at once, live and retained, all accounts together
   * (engine retention): at the bound a new order evicts a retained one, and
   * a placement is refused (order_capacity_exceeded) only when live orders
   * alone fill it.
   */
  max_orders: number;
  /**
   * Wait strategies per role (src/ring/wait.ts): `auto`, one kind for every
   * role (`spin`, `backoff`, `park`), or roles (`engine=spin,journal=park,gateway=backoff`;
   * a role left out takes the auto choice). See waitRoles().
   */
  wait: string;
  /** The built web pages: `trader/` (public port) and `console/` (control plane); `npm run build` writes dist/web. */
  web_dir: string;
  /**
   * Order commands (batch items, binary records) one WebSocket connection may
   * hold for their outcome; more are answered shed. At most MAX_PENDING: a
   * gateway thread holds no more than that in all.
   */
  ws_max_in_flight: number;
  /** The other WebSocket lane tunables (tests and benchmarks; no flag): defaults in src/ws/protocol.ts. */
  ws?: Partial<Omit<WsConfig, 'max_in_flight'>>;
  /** Replication (src/replication): off (one node), on (primary or standby of an HA group), replica (reads only). */
  replicate: 'off' | 'on' | 'replica';
  /** NATS servers, comma-separated. */
  nats_urls: string;
  /** JetStream stream of the replicated log. */
  nats_stream: string;
  /** Object Store bucket of the snapshots ('' = <stream>-snapshots). */
  nats_bucket: string;
  /** Replicas of the stream and the bucket. */
  nats_replicas: number;
  /** A standby claims after this long without a primary's heartbeat; a primary whose log stalls this long steps down. */
  lease_ms: number;
  heartbeat_ms: number;
  /** This node's name in heartbeats ('' = <hostname>-<pid>). */
  node_name: string;
  /** This node's public REST address, given to clients whose writes must go to it ('' = http://<host>:<port>). */
  advertise_url: string;
}

const OPTIONS: {
  env: string;
  flag: string;
  key: keyof ExchangeConfig;
  kind: 'string' | 'int' | 'bool' | 'durability' | 'wait' | 'replicate' | 'host' | 'port' | 'dir';
}[] = [
  { env: 'DX_HOST', flag: '--host', key: 'host', kind: 'host' },
  { env: 'DX_PORT', flag: '--port', key: 'port', kind: 'port' },
  { env: 'DX_ACCOUNTS_PORT', flag: '--accounts-port', key: 'accounts_port', kind: 'port' },
  { env: 'DX_ADMIN_HOST', flag: '--admin-host', key: 'admin_host', kind: 'host' },
  { env: 'DX_ADMIN_PORT', flag: '--admin-port', key: 'admin_port', kind: 'port' },
  { env: 'DX_DATA_DIR', flag: '--data-dir', key: 'data_dir', kind: 'dir' },
  { env: 'DX_ADMIN_TOKEN', flag: '--admin-token', key: 'admin_token', kind: 'string' },
  { env: 'DX_GATEWAYS', flag: '--gateways', key: 'gateways', kind: 'int' },
  { env: 'DX_DURABILITY', flag: '--durability', key: 'durability', kind: 'durability' },
  { env: 'DX_RESPONSE_BUDGET_MS', flag: '--response-budget-ms', key: 'response_budget_ms', kind: 'int' },
  { env: 'DX_WS_MAX_IN_FLIGHT', flag: '--ws-max-in-flight', key: 'ws_max_in_flight', kind: 'int' },
  { env: 'DX_VERIFY', flag: '--verify', key: 'verify', kind: 'bool' },
  { env: 'DX_SNAPSHOT_EVERY', flag: '--snapshot-every', key: 'snapshot_every', kind: 'int' },
  { env: 'DX_SNAPSHOT_STEP_BYTES', flag: '--snapshot-step-bytes', key: 'snapshot_step_bytes', kind: 'int' },
  { env: 'DX_SEGMENT_BYTES', flag: '--segment-bytes', key: 'segment_bytes', kind: 'int' },
  { env: 'DX_DEMO', flag: '--demo', key: 'demo', kind: 'bool' },
  { env: 'DX_DEMO_PERIOD_S', flag: '--demo-period-s', key: 'demo_period_s', kind: 'int' },
  { env: 'DX_DISPUTE_WINDOW_MS', flag: '--dispute-window-ms', key: 'dispute_window_ms', kind: 'int' },
  { env: 'DX_ORACLE_STALENESS_MS', flag: '--oracle-staleness-ms', key: 'oracle_staleness_ms', kind: 'int' },
  { env: 'DX_ORACLE_QUORUM', flag: '--oracle-quorum', key: 'oracle_quorum', kind: 'int' },
  { env: 'DX_ORDER_CAPACITY', flag: '--order-capacity', key: 'order_capacity', kind: 'int' },
  { env: 'DX_WAIT', flag: '--wait', key: 'wait', kind: 'wait' },
  { env: 'DX_ACCOUNT_CAPACITY', flag: '--account-capacity', key: 'account_capacity', kind: 'int' },
  { env: 'DX_MARKET_CAPACITY', flag: '--market-capacity', key: 'market_capacity', kind: 'int' },
  { env: 'DX_POSITION_CAPACITY', flag: '--position-capacity', key: 'position_capacity', kind: 'int' },
  { env: 'DX_TERMINAL_CAP', flag: '--terminal-cap', key: 'terminal_cap', kind: 'int' },
  { env: 'DX_REJECT_CAP', flag: '--reject-cap', key: 'reject_cap', kind: 'int' },
  { env: 'DX_ROUND_CAP', flag: '--round-cap', key: 'round_cap', kind: 'int' },
  { env: 'DX_WITHDRAWAL_CAP', flag: '--withdrawal-cap', key: 'withdrawal_cap', kind: 'int' },
  { env: 'DX_REVOKED_KEY_CAP', flag: '--revoked-key-cap', key: 'revoked_key_cap', kind: 'int' },
  { env: 'DX_DEPOSIT_REF_CAP', flag: '--deposit-ref-cap', key: 'deposit_ref_cap', kind: 'int' },
  { env: 'DX_MAX_ORDERS', flag: '--max-orders', key: 'max_orders', kind: 'int' },
  { env: 'DX_WEB_DIR', flag: '--web-dir', key: 'web_dir', kind: 'dir' },
  { env: 'DX_REPLICATE', flag: '--replicate', key: 'replicate', kind: 'replicate' },
  { env: 'DX_NATS_URLS', flag: '--nats-urls', key: 'nats_urls', kind: 'string' },
  { env: 'DX_NATS_STREAM', flag: '--nats-stream', key: 'nats_stream', kind: 'string' },
  { env: 'DX_NATS_BUCKET', flag: '--nats-bucket', key: 'nats_bucket', kind: 'string' },
  { env: 'DX_NATS_REPLICAS', flag: '--nats-replicas', key: 'nats_replicas', kind: 'int' },
  { env: 'DX_LEASE_MS', flag: '--lease-ms', key: 'lease_ms', kind: 'int' },
  { env: 'DX_HEARTBEAT_MS', flag: '--heartbeat-ms', key: 'heartbeat_ms', kind: 'int' },
  { env: 'DX_NODE_NAME', flag: '--node-name', key: 'node_name', kind: 'string' },
  { env: 'DX_ADVERTISE_URL', flag: '--advertise-url', key: 'advertise_url', kind: 'string' },
];

/** Every flag takes a value (booleans too: `--verify 1`). */
const FLAG_SPECS: Record<string, { type: 'string' }> = Object.fromEntries(
  OPTIONS.map((o) => [o.flag.slice(2), { type: 'string' as const }]),
);

/** dist/web beside the compiled sources (this file is dist/src/main/config.js). */
const BUILT_WEB_DIR = fileURLToPath(new URL('../../web', import.meta.url));

export function defaults(): ExchangeConfig {
  return {
    host: '127.0.0.1', port: 8080, accounts_port: 8081, admin_host: '127.0.0.1', admin_port: 8082, data_dir: './data',
    admin_token: null, gateways: Math.max(1, availableParallelism() - 1), durability: 'fsync',
    response_budget_ms: 1000, ws_max_in_flight: DEFAULT_WS_CONFIG.max_in_flight,
    verify: false, snapshot_every: 1_000_000, snapshot_step_bytes: 16 << 20, segment_bytes: 64 << 20,
    demo: true, demo_period_s: 180, dispute_window_ms: 60_000, oracle_staleness_ms: 10_000, oracle_quorum: 1, web_dir: BUILT_WEB_DIR,
    order_capacity: DEFAULT_ORDER_CAPACITY, account_capacity: 1 << 14, market_capacity: 64, position_capacity: 0, wait: 'auto',
    terminal_cap: DEFAULT_ENGINE_CONFIG.terminal_cap, reject_cap: DEFAULT_ENGINE_CONFIG.reject_cap,
    round_cap: DEFAULT_ENGINE_CONFIG.round_cap,
    withdrawal_cap: DEFAULT_ENGINE_CONFIG.withdrawal_cap, revoked_key_cap: DEFAULT_ENGINE_CONFIG.revoked_key_cap,
    deposit_ref_cap: DEFAULT_ENGINE_CONFIG.deposit_ref_cap,
    max_orders: DEFAULT_ENGINE_CONFIG.max_orders,
    replicate: 'off', nats_urls: 'nats://127.0.0.1:4222', nats_stream: 'DX', nats_bucket: '', nats_replicas: 3,
    lease_ms: 3000, heartbeat_ms: 500, node_name: '', advertise_url: '',
  };
}

/** How each role waits for the records of the others (src/ring/wait.ts). */
export interface WaitRoles {
  /** The engine thread, for commands. */
  engine: WaitKind;
  /** The journal thread, for events. */
  journal: WaitKind;
  /** Gateway threads and the control plane, for the completions of held requests (from their event loops). */
  gateway: WaitKind;
}

const WAIT_ROLES = ['engine', 'journal', 'gateway'] as const;

/**
 * The roles' wait strategies from a DX_WAIT setting. `auto` spins only where
 * every spinning thread can have a core of its own: the engine, the journal,
 * each gateway thread and one core left for the main thread and the system
 * (cores >= gateways + 4); otherwise every role parks. Measured on a 2-vCPU
 * host: two spinning threads plus any third runnable one stall for
 * milliseconds, so a small machine must not spin.
 */
export function waitRoles(setting: string, cores: number, gateways: number): WaitRoles {
  const auto: WaitKind = cores >= gateways + 4 ? 'spin' : 'park';
  const roles: WaitRoles = { engine: auto, journal: auto, gateway: auto };
  const s = setting.trim();
  if (s === 'auto' || s === '') return roles;
  if ((WAIT_KINDS as readonly string[]).includes(s)) return { engine: s as WaitKind, journal: s as WaitKind, gateway: s as WaitKind };
  for (const part of s.split(',')) {
    const [role, kind] = part.split('=').map((x) => x.trim());
    if (!(WAIT_ROLES as readonly string[]).includes(role ?? '') || !(WAIT_KINDS as readonly string[]).includes(kind ?? '')) {
      throw new Error(
        `wait: expected auto, ${WAIT_KINDS.join(', ')} or role=kind pairs (roles ${WAIT_ROLES.join(', ')}), got "${setting}"`,
      );
    }
    roles[role as keyof WaitRoles] = kind as WaitKind;
  }
  return roles;
}

/**
 * Default order slots: 4,194,304. Typed arrays are zero pages until written
 * (calloc'd, committed on first touch), so a large table costs address
 * space, not memory, until orders fill it; growing one instead copies every
 * order column at once on the engine thread and every read model's (measured
 * here: a 150 ms stall of every answer when 524,288 orders doubled).
 */
export const DEFAULT_ORDER_CAPACITY = 1 << 22;

/** Readers of the event ring: the main thread, one per gateway thread, the journal, a follower and a replicator. */
export function eventReaders(gateways: number): number {
  return gateways + 4;
}
/** The event ring has at most BROADCAST_MAX_CONSUMERS readers. */
export const MAX_GATEWAYS = BROADCAST_MAX_CONSUMERS - eventReaders(0);
/** Largest account, market and position table size (the position index is a power-of-two table of twice that). */
export const MAX_TABLE_CAPACITY = 1 << 28;

/**
 * uWS listens with SO_REUSEPORT: two listeners on one address would share its
 * connections between them. Hosts overlap in more ways than their spelling
 * shows (localhost, 127.1 and 127.0.0.1; 0.0.0.0 and any address), so no two
 * listeners share a port at all (0, any free port, excepted).
 */
function checkListeners(cfg: ExchangeConfig): void {
  const listeners = [
    ['port', cfg.host, cfg.port],
    ['accounts-port', cfg.host, cfg.accounts_port],
    ['admin-port', cfg.admin_host, cfg.admin_port],
  ] as const;
  for (let i = 0; i < listeners.length; i++) {
    for (let j = i + 1; j < listeners.length; j++) {
      const [a, ha, pa] = listeners[i]!;
      const [b, hb, pb] = listeners[j]!;
      if (pa === 0 || pa !== pb) continue;
      throw new Error(`${a} and ${b} are both ${pa} (on ${ha} and ${hb}); each listener needs a port of its own`);
    }
  }
}

function parseValue(name: string, kind: string, raw: string): unknown {
  switch (kind) {
    case 'int': {
      // At most 15 digits: every value is an exact (safe) integer, never 1e+23.
      if (!/^[0-9]+$/.test(raw)) throw new Error(`${name}: expected a non-negative integer, got "${raw}"`);
      if (raw.length > 15) throw new Error(`${name}: expected at most 15 digits, got "${raw}"`);
      return Number(raw);
    }
    case 'port': {
      // uWS takes the port modulo 65536: 84000 would listen on 18464.
      if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) > 65535) throw new Error(`${name}: expected a port 0..65535, got "${raw}"`);
      return Number(raw);
    }
    case 'host': {
      // An empty host makes uWS listen on every interface: never the default 127.0.0.1 by accident.
      if (raw.trim() === '') {
        throw new Error(`${name}: expected a host address (e.g. 127.0.0.1, or 0.0.0.0 for every interface), got an empty value`);
      }
      return raw;
    }
    case 'dir': {
      // '' resolves to the working directory: an unset variable in `--data-dir "$DIR"` would start an empty exchange there
      // (and `--web-dir "$DIR"` would serve ./trader and ./console).
      if (raw === '') throw new Error(`${name}: expected a directory, got an empty value`);
      return raw;
    }
    case 'bool': {
      if (raw === '1' || raw === 'true') return true;
      if (raw === '0' || raw === 'false') return false;
      throw new Error(`${name}: expected 1 or 0, got "${raw}"`);
    }
    case 'wait': {
      try {
        waitRoles(raw, 1, 1);
      } catch (e) {
        throw new Error(`${name}: ${(e as Error).message}`);
      }
      return raw;
    }
    case 'durability': {
      if (raw !== 'fsync' && raw !== 'none') throw new Error(`${name}: expected fsync or none, got "${raw}"`);
      return raw;
    }
    case 'replicate': {
      if (raw !== 'off' && raw !== 'on' && raw !== 'replica') throw new Error(`${name}: expected off, on or replica, got "${raw}"`);
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
  const level = env.DX_LOG_LEVEL;
  if (level !== undefined && level !== '' && !isLevel(level)) {
    throw new Error(`DX_LOG_LEVEL: expected debug, info, warn or error, got "${level}"`);
  }
  const cfg = c as unknown as ExchangeConfig;
  // Spaces around a bearer token cannot be sent: HTTP trims a header's value, and the scheme's separator takes the spaces after it.
  if (cfg.admin_token !== null && /^\s|\s$/.test(cfg.admin_token)) {
    throw new Error('admin-token: expected no spaces before or after the token');
  }
  if (cfg.gateways < 1 || cfg.gateways > MAX_GATEWAYS) throw new Error(`gateways must be 1..${MAX_GATEWAYS}`);
  checkListeners(cfg);
  for (const k of ['account_capacity', 'market_capacity', 'position_capacity'] as const) {
    if (cfg[k] > MAX_TABLE_CAPACITY) throw new Error(`${k.replace(/_/g, '-')} must be at most ${MAX_TABLE_CAPACITY}`);
  }
  // Timer bounds: Node runs a setTimeout or setInterval above 2^31-1 ms after 1 ms, so an unbounded figure would be a busy loop.
  if (cfg.response_budget_ms < 1 || cfg.response_budget_ms > 600_000) throw new Error('response-budget-ms must be 1..600000 (10 minutes)');
  if (cfg.ws_max_in_flight < 1 || cfg.ws_max_in_flight > MAX_PENDING) {
    throw new Error(`ws-max-in-flight must be 1..${MAX_PENDING} (order commands one WebSocket connection may hold)`);
  }
  if (cfg.snapshot_every < 1) throw new Error('snapshot-every must be at least 1 record');
  if (cfg.snapshot_step_bytes < 4096) throw new Error('snapshot-step-bytes must be at least 4096');
  if (cfg.segment_bytes < 4096) throw new Error('segment-bytes must be at least 4096');
  if (cfg.demo_period_s < 1 || cfg.demo_period_s > 2_592_000) throw new Error('demo-period-s must be 1..2592000');
  if (cfg.dispute_window_ms > 86_400_000) throw new Error('dispute-window-ms must be at most 86400000 (a day)');
  if (cfg.oracle_staleness_ms < 1 || cfg.oracle_staleness_ms > 86_400_000) throw new Error('oracle-staleness-ms must be 1..86400000');
  if (cfg.oracle_quorum < 1 || cfg.oracle_quorum > 64) throw new Error('oracle-quorum must be 1..64');
  if (cfg.order_capacity < 1024 || cfg.order_capacity > 1 << 26) throw new Error('order-capacity must be 1024..67108864');
  if (cfg.replicate !== 'off') {
    if (cfg.nats_urls.split(',').filter((u) => u.trim() !== '').length === 0)
      throw new Error('nats-urls: at least one NATS URL is needed with --replicate');
    if (!/^[A-Za-z0-9_-]{1,64}$/.test(cfg.nats_stream)) throw new Error('nats-stream: 1..64 of A-Z a-z 0-9 _ -');
    if (cfg.nats_bucket !== '' && !/^[A-Za-z0-9_-]{1,64}$/.test(cfg.nats_bucket)) throw new Error('nats-bucket: 1..64 of A-Z a-z 0-9 _ -');
    if (cfg.nats_replicas < 1 || cfg.nats_replicas > 5) throw new Error('nats-replicas must be 1..5');
    if (cfg.heartbeat_ms < 10 || cfg.heartbeat_ms > 60_000) throw new Error('heartbeat-ms must be 10..60000');
    if (cfg.lease_ms < 2 * cfg.heartbeat_ms || cfg.lease_ms > 600_000) {
      throw new Error('lease-ms must be at least twice heartbeat-ms and at most 600000 (10 minutes)');
    }
  }
  for (const k of ['terminal_cap', 'reject_cap', 'round_cap', 'withdrawal_cap', 'revoked_key_cap', 'deposit_ref_cap'] as const) {
    if (cfg[k] < 1 || cfg[k] > 1_000_000) throw new Error(`${k.replace(/_/g, '-')} must be 1..1000000`);
  }
  if (cfg.max_orders < 1 || cfg.max_orders > MAX_ORDERS_LIMIT) throw new Error(`max-orders must be 1..${MAX_ORDERS_LIMIT}`);
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
    revoked_key_cap: cfg.revoked_key_cap, deposit_ref_cap: cfg.deposit_ref_cap, max_orders: cfg.max_orders,
  };
}

/** The WebSocket lane settings of a server configuration (every gateway thread's): the tunables, and the operator's in-flight cap. */
export function wsConfigOf(cfg: ExchangeConfig): Partial<WsConfig> {
  return { ...cfg.ws, max_in_flight: cfg.ws_max_in_flight };
}
