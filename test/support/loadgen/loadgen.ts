// Load generator for the exchange's REST surface (or a hello-world peer):
// runLoad() for benchmarks, tools and tests, and the command line of its CLI
// (tools/loadgen/loadgen.ts):
//
//   node dist/tools/loadgen/loadgen.js --url http://127.0.0.1:8080 \
//     --key 1:<base64 secret> --key 2:<base64 secret> --markets 1,2 \
//     --mode open --rate 2000 --connections 32 --duration 10s \
//     --mix place=60,cancel=20,read=20
//
// The main thread only splits the run into shards and merges the answers;
// signing and sending happen in piscina worker threads (worker.ts), each with
// its own keep-alive connections and its own latency histogram.
//
// Modes: `closed` (each connection sends back to back: peak throughput) and
// `open` (fixed rate, latency measured from the intended send time, so a
// stall is charged to every request it delayed). Prints one JSON LoadResult.
//
// Bounded: no request starts after the duration, in-flight ones get a grace
// period (default 1 s), then every connection is closed. Only loopback
// targets are accepted unless allowRemote / --allow-remote is given: a load
// test must never be pointed at someone else's machine by a typo.
//
// Clients must not pipeline against the uWS server (it closes a connection
// that pipelines behind a held request): every connection here carries one
// request at a time.

import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { ArgumentError, parseCommandLine, type OptionValues } from '../../../src/lib/command_line.js';
import { allArrived, GATE_BYTES, go } from './gate.js';
import { Histogram } from './histogram.js';
import { TRANSPORT_KINDS, type TransportKind } from './transports.js';
import type { Mix, ReadMix, WorkerResult, WorkerTask } from './worker.js';

export type { Mix, ReadMix } from './worker.js';
export type { TransportKind } from './transports.js';

export interface LoadOptions {
  baseUrl: string;
  /** Secrets as bytes or base64. Connections are spread over the keys round-robin. */
  keys: { keyId: number; secret: Uint8Array | string }[];
  markets: number[];
  mode: 'closed' | 'open';
  connections: number;
  /** Requests per second over all connections (open loop only). */
  rate?: number;
  durationMs: number;
  /** Relative weights; a cancel with no own live order to cancel becomes a placement. */
  mix: Mix;
  /**
   * How read ops are split: book (orderbook depth 10), balance, orders (own
   * orders, limit 20), market (one market). Default: book and balance, half each.
   */
  reads?: ReadMix;
  /** 'hello': unsigned `GET /` to a hello-world peer (measures the generator and transport alone). */
  path?: 'hello';
  /** Piscina threads; default half the cores (at least 1), since the server shares this machine. */
  workers?: number;
  /** Default 'raw' (the fastest measured here; see README.md in this folder). */
  transport?: TransportKind;
  /** How long in-flight requests may finish after the duration; default 1000 ms. */
  graceMs?: number;
  seed?: number;
  /** YES-space tick placements cluster around (default 50) and their spread (default 5). */
  mid?: number;
  spread?: number;
  allowRemote?: boolean;
  /**
   * Sign requests ahead, in the workers, before the run starts (peak runs: so
   * sending costs little and the server gets the machine). Open loop: every
   * due request (rate x duration); closed loop: `expectedRate` x duration x
   * PRESIGN_HEADROOM. Requests past those, or whose stamp would be too old
   * or early when sent, are signed when sent and counted (presign.inline).
   */
  presign?: boolean;
  /** Closed loop with presign: the expected requests/s over all connections. */
  expectedRate?: number;
  /** Called when every worker is ready (signed ahead) and the run starts: a CPU window of the run opens here. */
  onStart?: () => void;
}

/** Closed loop: requests signed ahead per expected request. */
export const PRESIGN_HEADROOM = 1.25;

export interface LatencySummary {
  count: number;
  min: number;
  mean: number;
  p50: number;
  p90: number;
  p99: number;
  p999: number;
  max: number;
}

export interface LoadResult {
  mode: 'closed' | 'open';
  transport: TransportKind;
  path: 'signed' | 'hello';
  workers: number;
  connections: number;
  target_rate_per_s: number | null;
  duration_ms: number;
  /** From the start of sending to the last answer (at least duration_ms). */
  elapsed_ms: number;
  sent: number;
  completed: number;
  /** Transport failures (connection refused, reset, cut off at the end of the grace period). */
  errors: number;
  /**
   * Requests still in flight when the grace period ended: counted in `errors`
   * and recorded in latency_ms at their age then (a lower bound), so a stall
   * longer than the run cannot drop out of the percentiles.
   */
  cut_off: number;
  /** Open loop: requests that were due but never got a free connection before the end. */
  unsent: number;
  throughput_per_s: number;
  /** Open loop: from the intended send time (unsent ones at their age at the end); closed: from the actual send. */
  latency_ms: LatencySummary;
  /** Open loop: how late requests were actually sent after their intended time (the generator's own share of latency_ms). */
  send_lag_ms: LatencySummary;
  /** Answers by HTTP status code; transport failures under "error". */
  statuses: Record<string, number>;
  ops: Record<string, number>;
  /** latency_ms split by op kind (place, cancel, read_book, read_balance, read_orders, read_market, hello); answered requests only. */
  latency_by_op_ms: Record<string, LatencySummary>;
  generator_cpu: {
    /** Sum over the load worker threads (per-thread CPU from /proc/thread-self). */
    workers_ms: number;
    per_worker_ms: number[];
    /** The whole generator process, main thread included (and anything else it hosts, e.g. a test server). */
    process_ms: number;
    /** workers_ms / elapsed_ms: cores kept busy by the generator's workers. */
    workers_cores: number;
    scope: 'thread' | 'process';
  };
  /**
   * Signing ahead: requests signed before the run, the workers' CPU for it (not in generator_cpu), and requests signed when sent anyway.
   */
  presign: { signed: number; cpu_ms: number; inline: number };
}

const LOOPBACK = /^(localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|\[::1\]|::1)$/i;

/** Splits n into `parts` near-equal integers. */
function split(n: number, parts: number): number[] {
  const out: number[] = [];
  for (let i = 0; i < parts; i++) out.push(Math.floor(n / parts) + (i < n % parts ? 1 : 0));
  return out;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

/** Refuses a run that could not mean what it says: a remote target unless allowed, no connections, no time, no rate. */
function checkOptions(opts: LoadOptions): void {
  const url = new URL(opts.baseUrl);
  if (!opts.allowRemote && !LOOPBACK.test(url.hostname)) {
    throw new Error(`refusing a non-loopback target ${url.hostname} (pass allowRemote / --allow-remote if it is your own test host)`);
  }
  if (!(opts.connections >= 1) || !Number.isInteger(opts.connections)) throw new RangeError('connections must be an integer >= 1');
  if (!(opts.durationMs > 0)) throw new RangeError('durationMs must be > 0');
  if (opts.mode === 'open' && !(opts.rate !== undefined && opts.rate > 0)) throw new RangeError('open loop needs rate > 0');
  const transport = opts.transport ?? 'raw';
  if (!TRANSPORT_KINDS.includes(transport)) throw new RangeError(`transport must be one of ${TRANSPORT_KINDS.join(', ')}`);
  if (opts.presign === true && opts.mode === 'closed' && !(opts.expectedRate !== undefined && opts.expectedRate > 0)) {
    throw new RangeError('presign in a closed loop needs expectedRate > 0');
  }
}

/** A histogram of µs as the result's ms figures. */
function summary(h: Histogram): LatencySummary {
  const us = (v: number): number => round3(v / 1000);
  return {
    count: h.total,
    min: us(h.total === 0 ? 0 : h.min),
    mean: us(h.mean()),
    p50: us(h.percentile(50)),
    p90: us(h.percentile(90)),
    p99: us(h.percentile(99)),
    p999: us(h.percentile(99.9)),
    max: us(h.max),
  };
}

export async function runLoad(opts: LoadOptions): Promise<LoadResult> {
  checkOptions(opts);
  const transport = opts.transport ?? 'raw';
  const workers = Math.max(1, Math.min(opts.connections, opts.workers ?? Math.floor(availableParallelism() / 2)));
  const keys = opts.keys.map((k) => ({
    keyId: k.keyId,
    secret: typeof k.secret === 'string' ? k.secret : Buffer.from(k.secret).toString('base64'),
  }));
  for (const k of keys) {
    if (Buffer.from(k.secret, 'base64').length !== 32) throw new RangeError(`key ${k.keyId}: a secret is base64 of 32 bytes`);
  }
  const conns = split(opts.connections, workers);
  const seed = opts.seed ?? Math.floor(Math.random() * 0x7fffffff);

  // piscina loads the compiled worker module, which sits beside this file in dist/.
  const pool = new Piscina<WorkerTask, WorkerResult>({
    filename: new URL('./worker.js', import.meta.url).href,
    minThreads: workers,
    maxThreads: workers,
    concurrentTasksPerWorker: 1,
    idleTimeout: 1000,
  });
  const gate = new SharedArrayBuffer(GATE_BYTES);
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  let first = 0;
  const tasks: Promise<WorkerResult>[] = [];
  for (let w = 0; w < workers; w++) {
    const task: WorkerTask = {
      workerIndex: w,
      baseUrl: opts.baseUrl,
      keys,
      markets: opts.markets,
      mode: opts.mode,
      connections: conns[w]!,
      firstConnection: first,
      rate: opts.mode === 'open' ? (opts.rate! * conns[w]!) / opts.connections : 0,
      durationMs: opts.durationMs,
      graceMs: opts.graceMs ?? 1000,
      mix: opts.mix,
      reads: opts.reads,
      path: opts.path,
      transport,
      seed: (seed + w * 0x9e3779b1) >>> 0,
      mid: opts.mid ?? 50,
      spread: opts.spread ?? 5,
      gate,
    };
    if (opts.presign === true && opts.path !== 'hello') {
      const share = ((opts.mode === 'open' ? opts.rate! : opts.expectedRate!) * conns[w]!) / opts.connections;
      task.presign = Math.ceil(share * (opts.durationMs / 1000) * (opts.mode === 'open' ? 1 : PRESIGN_HEADROOM)) + 1;
      task.presignRate = share;
    }
    first += conns[w]!;
    tasks.push(pool.run(task));
  }
  let results: WorkerResult[];
  try {
    const all = Promise.all(tasks);
    // Every shard is ready (signed ahead, connections warm): go.
    await Promise.race([allArrived(gate, workers), all]);
    opts.onStart?.();
    go(gate);
    results = await all;
  } finally {
    await pool.destroy();
  }
  const wallMs = performance.now() - wall0;
  const cpu = process.cpuUsage(cpu0);

  const hist = new Histogram();
  const lag = new Histogram();
  const statuses: Record<string, number> = {};
  const ops: Record<string, number> = {};
  const byOp = new Map<string, Histogram>();
  let sent = 0;
  let completed = 0;
  let errors = 0;
  let unsent = 0;
  let cutOff = 0;
  let elapsed = 0;
  const perWorker: number[] = [];
  let scope: 'thread' | 'process' = 'thread';
  const presign = { signed: 0, cpu_ms: 0, inline: 0 };
  for (const r of results) {
    presign.signed += r.presigned;
    presign.cpu_ms += r.presignCpuMs;
    presign.inline += r.signedInline;
    hist.merge(r.histogram);
    lag.merge(r.sendLag);
    for (const [k, v] of Object.entries(r.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    for (const [k, v] of Object.entries(r.ops)) ops[k] = (ops[k] ?? 0) + v;
    for (const [k, h] of Object.entries(r.byOp ?? {})) {
      let into = byOp.get(k);
      if (into === undefined) byOp.set(k, (into = new Histogram()));
      into.merge(h);
    }
    sent += r.sent;
    completed += r.completed;
    errors += r.errors;
    cutOff += r.cutOff ?? 0;
    unsent += r.unsent;
    elapsed = Math.max(elapsed, r.elapsedMs);
    perWorker.push(r.cpu.userMs + r.cpu.systemMs);
    if (r.cpu.scope === 'process') scope = 'process';
  }
  // Where only process-wide CPU exists, each worker reported the same process,
  // so summing would count it several times: report the process figure once.
  const workersMs = scope === 'thread' ? perWorker.reduce((a, b) => a + b, 0) : (cpu.user + cpu.system) / 1000;
  return {
    mode: opts.mode,
    transport,
    path: opts.path === 'hello' ? 'hello' : 'signed',
    workers,
    connections: opts.connections,
    target_rate_per_s: opts.mode === 'open' ? opts.rate! : null,
    duration_ms: opts.durationMs,
    elapsed_ms: round3(Math.min(elapsed, wallMs)),
    sent,
    completed,
    errors,
    cut_off: cutOff,
    unsent,
    throughput_per_s: round3((completed * 1000) / Math.max(opts.durationMs, Math.min(elapsed, wallMs))),
    latency_ms: summary(hist),
    send_lag_ms: summary(lag),
    statuses,
    ops,
    latency_by_op_ms: Object.fromEntries([...byOp].map(([k, h]) => [k, summary(h)])),
    generator_cpu: {
      workers_ms: round3(workersMs),
      per_worker_ms: perWorker.map(round3),
      process_ms: round3((cpu.user + cpu.system) / 1000),
      workers_cores: round3(workersMs / Math.max(1, elapsed)),
      scope,
    },
    presign,
  };
}

// ------------------------------------------------------------------ CLI

const USAGE = `usage: node dist/tools/loadgen/loadgen.js --url http://127.0.0.1:8080 [options]
  --key ID:BASE64SECRET   (repeatable) keys to sign with; connections spread over them
  --markets 1,2,3         market ids for placements and orderbook reads
  --mode closed|open      closed: back-to-back per connection; open: fixed rate (default closed)
  --rate N                requests/s in total (open loop)
  --connections N         keep-alive connections (default 16)
  --duration 10s|500ms    run length (default 10s)
  --mix place=60,cancel=20,read=20   relative weights (default 60/20/20)
  --reads book=1,balance=1,orders=0,market=0   split of the read ops (default book/balance half each)
  --path hello            unsigned GET / against a hello-world peer
  --workers N             piscina threads (default half the cores, at least 1)
  --transport raw|http|fetch   (default raw)
  --grace 1000ms          time in-flight requests get after the duration
  --seed N  --mid 50  --spread 5
  --allow-remote          accept a non-loopback target (your own test host only)`;

function parseDuration(s: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(s);
  if (!m) throw new Error(`bad duration: ${s}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

const OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string', multiple: true },
  markets: { type: 'string' },
  mode: { type: 'string' },
  rate: { type: 'string' },
  connections: { type: 'string' },
  duration: { type: 'string' },
  grace: { type: 'string' },
  mix: { type: 'string' },
  reads: { type: 'string' },
  path: { type: 'string' },
  workers: { type: 'string' },
  transport: { type: 'string' },
  seed: { type: 'string' },
  mid: { type: 'string' },
  spread: { type: 'string' },
  'allow-remote': { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The CLI's options; a mistake throws an Error whose message says what (and the usage, for a wrong or missing flag). */
/** `name=weight,...` over `names` (each 0 unless given); a name not among them is an error. */
export function parseWeights<K extends string>(text: string, names: readonly K[], what: string): Record<K, number> {
  const out = Object.fromEntries(names.map((n) => [n, 0])) as Record<K, number>;
  for (const part of text.split(',')) {
    const [name, w] = part.split('=');
    if (!(names as readonly string[]).includes(name!)) throw new Error(`unknown ${what} entry ${part}`);
    out[name as K] = Number(w);
  }
  return out;
}

export function parseArgs(argv: string[]): LoadOptions {
  let v: OptionValues<typeof OPTIONS>;
  try {
    v = parseCommandLine(argv, OPTIONS).values;
  } catch (e) {
    if (e instanceof ArgumentError && e.problem === 'missing_value') throw new Error(e.message);
    if (e instanceof ArgumentError) throw new Error(`unknown flag ${e.arg}\n${USAGE}`);
    throw e;
  }
  if (v.help) throw new Error(USAGE);
  const o: LoadOptions = {
    baseUrl: v.url ?? '',
    keys: [],
    markets: [],
    mode: 'closed',
    connections: 16,
    durationMs: 10_000,
    mix: { place: 60, cancel: 20, read: 20 },
  };
  for (const k of v.key ?? []) {
    const c = k.indexOf(':');
    if (c < 1) throw new Error(`--key wants ID:BASE64SECRET, got ${k}`);
    o.keys.push({ keyId: Number(k.slice(0, c)), secret: k.slice(c + 1) });
  }
  if (v.markets !== undefined)
    o.markets = v.markets
      .split(',')
      .filter((x) => x !== '')
      .map(Number);
  if (v.mode !== undefined) {
    if (v.mode !== 'closed' && v.mode !== 'open') throw new Error('--mode is closed or open');
    o.mode = v.mode;
  }
  if (v.rate !== undefined) o.rate = Number(v.rate);
  if (v.connections !== undefined) o.connections = Number(v.connections);
  if (v.duration !== undefined) o.durationMs = parseDuration(v.duration);
  if (v.grace !== undefined) o.graceMs = parseDuration(v.grace);
  if (v.mix !== undefined) o.mix = parseWeights<keyof Mix>(v.mix, ['place', 'cancel', 'read'], 'mix');
  if (v.reads !== undefined) o.reads = parseWeights<keyof ReadMix>(v.reads, ['book', 'balance', 'orders', 'market'], 'reads');
  if (v.path !== undefined) {
    if (v.path !== 'hello') throw new Error('--path takes only hello');
    o.path = 'hello';
  }
  if (v.workers !== undefined) o.workers = Number(v.workers);
  if (v.transport !== undefined) {
    if (!(TRANSPORT_KINDS as readonly string[]).includes(v.transport))
      throw new Error(`--transport is one of ${TRANSPORT_KINDS.join(', ')}`);
    o.transport = v.transport as TransportKind;
  }
  if (v.seed !== undefined) o.seed = Number(v.seed);
  if (v.mid !== undefined) o.mid = Number(v.mid);
  if (v.spread !== undefined) o.spread = Number(v.spread);
  if (v['allow-remote']) o.allowRemote = true;
  if (o.baseUrl === '') throw new Error(`--url is required\n${USAGE}`);
  return o;
}
