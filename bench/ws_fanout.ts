// ws_fanout: WebSocket fan-out of one market's orderbook_delta stream to 100
// and 1,000 subscribers under a steady order flow, through a running
// exchange (separate process, loopback, durability none). Main thread of the
// bench runner; the subscribers live in a worker thread of this process
// (bench/lib/ws_subscriber_worker.ts: raw sockets, frame counting, no JSON),
// the order flow is this thread's REST batches. Reports, never asserts.
//
// The flow: maker accounts post batches of 20 buy-YES qty 1 at tick 40, taker
// accounts batches of 20 buy-NO qty 1 at tick 60, alternately; every accepted
// order changes exactly one book level (a resting order adds one share at
// yes:40 or no:60, a crossing one takes one share off the other side), so
// each placement is exactly one orderbook_delta per subscriber, and the book
// stays small. Messages delivered/s = text frames received by all
// subscribers during the flow / its duration; delivered % = frames received
// once the stream drained / (accepted placements x subscribers).
//
// Latency: sampling connections stamp each delta's arrival (process.hrtime);
// the flow stamps each batch's send; joined by the delta's as_of_seq = the
// placement's seq (from the batch response). So it is placement sent ->
// delta received: REST transit, sequencing, drain, fan-out and loopback.
//
// This machine has 2 cores shared by the engine, the gateway, this process's
// subscriber thread and the flow: every figure comes with the CPU of both
// sides, per thread where it matters.

import { availableParallelism } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { DxClient } from '../src/client/client.js';
import type { OrderRequest } from '../src/client/types.js';
import type { ExchangeProcess } from '../test/support/exchange.js';
import { openMarket, pool, startBenchExchange } from './lib/population.js';
import { CpuWindow, lastEventLoopThreads, waitQuiet, type CpuReport } from './lib/process_stats.js';
import { environment, type BenchResult } from './lib/result.js';
import { max as maxOf, median, min as minOf, percentiles, relativeSpread } from '../test/support/bench/stats.js';
import type { SubscriberReport, SubscriberWorkerData } from './lib/ws_subscriber_worker.js';

const DURABILITY_LABEL = 'durability none';
const BATCH = 20;
/** The WebSocket lane's default cap (src/ws/protocol.ts DEFAULT_WS_CONFIG.max_connections_per_key). */
const CONNECTIONS_PER_KEY = 16;
/** A key's write bucket refills 50 tokens/s; keep each flow key at 40% of it. */
const FLOW_ORDERS_PER_KEY_S = 20;
const SAMPLE_CONNECTIONS = 4;
const SPREAD_FLAG = 0.1;
/** Issue 8's target at 1,000 subscribers. */
const TARGET_PER_S = 2_000_000;

interface Settings {
  quick: boolean;
  repeats: number;
  run_ms: number;
  /** A stream is drained once no frame arrived for this long. */
  quiet_ms: number;
  drain_max_ms: number;
  subscribers: number[];
  /** Orders per second of the flow (= deltas per second per subscriber). */
  rate: number;
  /** One more run at the largest subscriber count at this rate, past what the machine sustains (the ceiling). */
  probe_rate: number;
  gateways: number;
  quiet_wait_ms: number;
}

/** Probing knobs (not for recorded results): DX_WS_FANOUT_RATE=orders/s, DX_WS_FANOUT_SUBSCRIBERS=100,1000. */
function envList(name: string): number[] | null {
  const v = process.env[name];
  if (v === undefined || v === '') return null;
  const xs = v.split(',').map(Number);
  if (xs.some((x) => !Number.isInteger(x) || x < 1)) throw new Error(`${name}: expected positive integers, got ${v}`);
  return xs;
}

function settings(quick: boolean): Settings {
  return {
    quick,
    repeats: quick ? 1 : 3,
    run_ms: quick ? 3000 : 10_000,
    quiet_ms: 300,
    drain_max_ms: 30_000,
    subscribers: envList('DX_WS_FANOUT_SUBSCRIBERS') ?? [100, 1000],
    // 2,100 orders/s offers 2.1M messages/s to 1,000 subscribers: above the
    // target, near what two cores sustain with the subscribers' own thread on
    // them (a quick run at 2,200 delivered 2.07M/s with a growing backlog).
    rate: envList('DX_WS_FANOUT_RATE')?.[0] ?? 2100,
    probe_rate: 3000,
    gateways: Math.max(1, availableParallelism() - 1),
    quiet_wait_ms: quick ? 10_000 : 60_000,
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}

// ------------------------------------------------------------------ the flow

interface FlowResult {
  /** Time the flow was sending (the measurement window). */
  duration_ms: number;
  /** Accepted placements sent inside the window. */
  accepted_in_window: number;
  accepted: number;
  rejected: number;
  /** Items answered 504 sequencing_timeout: not seen in time, but they may still have executed (and made a delta). */
  timed_out: number;
  failed_batches: number;
  /** seq -> hrtime ns of the batch send. */
  sent_at: Map<number, number>;
  /** seq -> hrtime ns when the batch's answer arrived. */
  answered_at: Map<number, number>;
  /** REST response time of each batch, ms. */
  batch_ms: number[];
}

/**
 * Sends `rate` orders/s in batches of BATCH for durationMs, alternating
 * makers and takers; calls atEnd the moment the window closes (before the
 * answers still in flight arrive), then waits for those answers.
 */
async function flow(
  makers: DxClient[],
  takers: DxClient[],
  market: number,
  rate: number,
  durationMs: number,
  atEnd: () => Promise<void>,
): Promise<FlowResult> {
  const r: FlowResult = {
    duration_ms: 0,
    accepted_in_window: 0,
    accepted: 0,
    rejected: 0,
    timed_out: 0,
    failed_batches: 0,
    sent_at: new Map(),
    answered_at: new Map(),
    batch_ms: [],
  };
  const maker: OrderRequest[] = Array.from({ length: BATCH }, () => ({ market_id: market, side: 'buy', outcome: 'yes', tick: 40, qty: 1 }));
  const taker: OrderRequest[] = Array.from({ length: BATCH }, () => ({ market_id: market, side: 'buy', outcome: 'no', tick: 60, qty: 1 }));
  const inflight = new Set<Promise<void>>();
  const batchesPerMs = rate / BATCH / 1000;
  const t0 = performance.now();
  let sent = 0;
  let mi = 0;
  let ti = 0;
  while (performance.now() - t0 < durationMs) {
    const due = Math.floor((performance.now() - t0) * batchesPerMs) + 1;
    while (sent < due) {
      const isMaker = sent % 2 === 0;
      const client = isMaker ? makers[mi++ % makers.length]! : takers[ti++ % takers.length]!;
      const at = Number(process.hrtime.bigint());
      const t = performance.now();
      const p = client.placeBatch(isMaker ? maker : taker).then((res) => {
        r.batch_ms.push(performance.now() - t);
        const answered = Number(process.hrtime.bigint());
        for (const item of res.results as unknown as Record<string, unknown>[]) {
          if ('error' in item) {
            if ((item.error as { code?: string }).code === 'sequencing_timeout') r.timed_out++;
            else r.rejected++;
            continue;
          }
          r.accepted++;
          r.sent_at.set(Number(item.seq), at);
          r.answered_at.set(Number(item.seq), answered);
        }
      }, () => {
        r.failed_batches++;
      });
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      sent++;
    }
    await new Promise((res) => setTimeout(res, 5));
  }
  r.duration_ms = performance.now() - t0;
  await atEnd();
  await Promise.all(inflight);
  // Every batch was sent inside the window; what was accepted is what the window offered.
  r.accepted_in_window = r.accepted;
  return r;
}

// ------------------------------------------------------------------ subscribers

/** Any message of the subscriber worker: ready, error or a report. */
type WorkerMessage = { type: string; message?: string; tid?: number };

class Subscribers {
  readonly worker: Worker;
  tid = 0;
  private waiters: { resolve: (m: WorkerMessage) => void; reject: (e: Error) => void }[] = [];

  constructor(data: SubscriberWorkerData) {
    this.worker = new Worker(new URL('./lib/ws_subscriber_worker.js', import.meta.url), { workerData: data });
    this.worker.on('message', (m: WorkerMessage) => this.waiters.shift()?.resolve(m));
    this.worker.on('error', (e: Error) => {
      for (const w of this.waiters.splice(0)) w.reject(e);
    });
  }

  private next(): Promise<WorkerMessage> {
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  async ready(): Promise<void> {
    const m = await this.next();
    if (m.type !== 'ready') throw new Error(`subscribers: ${m.message ?? m.type}`);
    this.tid = m.tid ?? 0;
  }

  start(): void {
    this.worker.postMessage({ type: 'start' });
  }

  async mark(): Promise<SubscriberReport> {
    this.worker.postMessage({ type: 'mark' });
    return (await this.next()) as unknown as SubscriberReport;
  }

  /** Resolves once no frame arrived for ms (the stream is drained), or after maxMs; the time it took. */
  async quiet(ms: number, maxMs: number): Promise<number> {
    this.worker.postMessage({ type: 'quiet', ms, max_ms: maxMs });
    return ((await this.next()) as unknown as { waited_ms: number }).waited_ms;
  }

  async stop(): Promise<SubscriberReport> {
    this.worker.postMessage({ type: 'stop' });
    return (await this.next()) as unknown as SubscriberReport;
  }

  async close(): Promise<void> {
    const exited = new Promise((res) => this.worker.once('exit', res));
    this.worker.postMessage({ type: 'close' });
    await exited;
  }
}

// ------------------------------------------------------------------ runs

interface RunResult {
  subscribers: number;
  /** After the flow's last answer: until no frame arrived for quiet_ms (the backlog it left, plus quiet_ms). */
  drain_ms: number;
  delivered_per_s: number;
  delivered_pct: number;
  deltas_per_s: number;
  accepted: number;
  rejected: number;
  timed_out: number;
  failed_batches: number;
  frames: number;
  bytes_per_msg: number;
  closes: Record<string, number>;
  latency_us: { p50: number; p99: number; p999: number; max: number; samples: number };
  /** Delta arrival minus the REST answer's arrival for the same order, us (negative: the push came first). */
  vs_answer_p50_us: number;
  batch_p50_ms: number;
  cpu: CpuReport;
  server_pct: number;
  gateway_pct: number;
  engine_pct: number;
  client_pct: number;
  subscriber_thread_pct: number;
  flow_thread_pct: number;
  foreign_pct: number;
  quiet: boolean;
}

async function oneRun(
  s: Settings,
  ex: ExchangeProcess,
  gatewayTids: number[],
  subs: Subscribers,
  n: number,
  makers: DxClient[],
  takers: DxClient[],
  market: number,
  rate: number,
): Promise<RunResult> {
  // Start from a drained stream (a backlog of the previous run must not count here), on a quiet machine.
  await subs.quiet(s.quiet_ms, s.drain_max_ms);
  const quiet = await waitQuiet([ex.child.pid, process.pid], { maxWaitMs: s.quiet_wait_ms, windowMs: 500, windows: 2 });
  const w = new CpuWindow({ server: ex.child.pid, client: process.pid });
  subs.start();
  let atMark: SubscriberReport | null = null;
  let cpu: CpuReport | null = null;
  const f = await flow(makers, takers, market, rate, s.run_ms, async () => {
    atMark = await subs.mark();
    cpu = w.stop();
  });
  if (atMark === null || cpu === null) throw new Error('ws_fanout: the window never closed');
  const mark = atMark as SubscriberReport;
  const win = cpu as CpuReport;
  const drainMs = await subs.quiet(s.quiet_ms, s.drain_max_ms);
  const fin = await subs.stop();
  const lat: number[] = [];
  const vsAnswer: number[] = [];
  const samples = fin.samples!;
  for (let i = 0; i < samples.length; i += 2) {
    const sent = f.sent_at.get(samples[i]!);
    if (sent !== undefined) lat.push((samples[i + 1]! - sent) / 1000);
    const answered = f.answered_at.get(samples[i]!);
    if (answered !== undefined) vsAnswer.push((samples[i + 1]! - answered) / 1000);
  }
  const pc = percentiles(Float64Array.from(lat), [50, 99, 99.9]);
  let gateway = 0;
  let engine = 0;
  for (const t of win.threads.server ?? []) {
    if (gatewayTids.includes(t.tid)) gateway += t.pct;
    else if (t.tid !== ex.child.pid && t.pct > engine) engine = t.pct;
  }
  let subscriberThread = 0;
  let flowThread = 0;
  for (const t of win.threads.client ?? []) {
    if (t.tid === subs.tid) subscriberThread = t.pct;
    if (t.tid === process.pid) flowThread = t.pct;
  }
  const server = win.process_pct.server!;
  const client = win.process_pct.client!;
  return {
    subscribers: n,
    drain_ms: drainMs,
    delivered_per_s: Math.round(mark.frames / (f.duration_ms / 1000)),
    delivered_pct: round1((100 * fin.frames) / Math.max(1, f.accepted * n)),
    deltas_per_s: Math.round(f.accepted_in_window / (f.duration_ms / 1000)),
    accepted: f.accepted,
    rejected: f.rejected,
    timed_out: f.timed_out,
    failed_batches: f.failed_batches,
    frames: fin.frames,
    bytes_per_msg: fin.frames > 0 ? Math.round(fin.bytes / fin.frames) : 0,
    closes: fin.closes,
    latency_us: {
      p50: Math.round(pc.get(50)!),
      p99: Math.round(pc.get(99)!),
      p999: Math.round(pc.get(99.9)!),
      max: Math.round(maxOf(lat)),
      samples: lat.length,
    },
    batch_p50_ms: round1(median(f.batch_ms)),
    vs_answer_p50_us: Math.round(median(vsAnswer)),
    cpu: win,
    server_pct: server,
    gateway_pct: round1(gateway),
    engine_pct: engine,
    client_pct: client,
    subscriber_thread_pct: subscriberThread,
    flow_thread_pct: flowThread,
    foreign_pct: round1(win.machine_pct - server - client),
    quiet: quiet.quiet,
  };
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const s = settings(opts.quick === true);
  const t0 = performance.now();
  // DX_WS_FANOUT_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles the exchange (every thread writes a .cpuprofile).
  const nodeArgs = process.env.DX_WS_FANOUT_NODE_ARGS?.split(' ').filter((x) => x.length > 0);
  const ex = await startBenchExchange({ gateways: s.gateways, durability: 'none' }, nodeArgs);
  const byCount = new Map<number, RunResult[]>();
  let probe: RunResult | null = null;
  let setupMs = 0;
  let flowKeys = 0;
  let subKeys = 0;
  try {
    const gatewayTids = await lastEventLoopThreads(ex.child.pid, ex.gateways);
    const admin = ex.admin(30_000);
    const market = await openMarket(admin);
    const setup0 = performance.now();
    flowKeys = 2 * Math.ceil(s.rate / 2 / FLOW_ORDERS_PER_KEY_S);
    const flowClients = await pool(flowKeys, 16, async () => {
      const { account_id } = await admin.createAccount();
      await admin.deposit(account_id, { amount: '100000000000', ref: 'bench' });
      const k = await admin.createKey(account_id, ['read', 'trade']);
      return new DxClient({ baseUrl: ex.base, keyId: k.key_id, secret: k.secret, timeoutMs: 30_000 });
    });
    const makers = flowClients.filter((_c, i) => i % 2 === 0);
    const takers = flowClients.filter((_c, i) => i % 2 === 1);
    const maxSubs = Math.max(...s.subscribers);
    subKeys = Math.ceil(maxSubs / CONNECTIONS_PER_KEY);
    const { account_id: watcher } = await admin.createAccount();
    const readKeys = await pool(subKeys, 16, async () => {
      const k = await admin.createKey(watcher, ['read']);
      return { key_id: k.key_id, secret: k.secret };
    });
    setupMs = Math.round(performance.now() - setup0);
    for (const n of s.subscribers) {
      const keys = Array.from({ length: n }, (_x, i) => readKeys[i % readKeys.length]!);
      const subs = new Subscribers({ port: ex.port, market_id: market, keys, sample_connections: SAMPLE_CONNECTIONS });
      try {
        await subs.ready();
        const runs: RunResult[] = [];
        for (let r = 0; r < s.repeats; r++) {
          runs.push(await oneRun(s, ex, gatewayTids, subs, n, makers, takers, market, s.rate));
          if (!ex.child.running) throw new Error(`the exchange died: ${ex.stderrTail().slice(-2000)}`);
        }
        byCount.set(n, runs);
        if (n === Math.max(...s.subscribers) && s.probe_rate > s.rate) {
          // Let the probe start from an empty backlog and full write buckets.
          await new Promise((res) => setTimeout(res, 1500));
          probe = await oneRun(s, ex, gatewayTids, subs, n, makers, takers, market, s.probe_rate);
        }
      } finally {
        await subs.close();
      }
    }
  } finally {
    await ex.stop();
  }
  return result(s, byCount, probe, {
    setupMs,
    flowKeys,
    subKeys,
    wallS: Math.round((performance.now() - t0) / 1000),
    gateways: ex.gateways,
  });
}

function result(
  s: Settings,
  byCount: Map<number, RunResult[]>,
  probe: RunResult | null,
  o: { setupMs: number; flowKeys: number; subKeys: number; wallS: number; gateways: number },
): BenchResult {
  const env = environment();
  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  const flag = (what: string): void => {
    notes.push(`FLAG ${what}`);
  };
  // The headline first (run.ts prints the first *_per_s): delivered at the largest count.
  const counts = [...byCount.keys()].sort((a, b) => b - a);
  for (const n of counts) {
    const runs = byCount.get(n)!;
    const p = `s${n}`;
    const rates = runs.map((r) => r.delivered_per_s);
    const med = median(rates);
    metrics[`${p}_delivered_msgs_per_s`] = Math.round(med);
    metrics[`${p}_delivered_msgs_per_s_min`] = Math.round(minOf(rates));
    metrics[`${p}_delivered_msgs_per_s_max`] = Math.round(maxOf(rates));
    const spread = rates.length > 1 ? relativeSpread(rates) : 0;
    metrics[`${p}_spread_pct`] = round1(spread * 100);
    if (spread > SPREAD_FLAG)
      flag(`${n} subscribers: spread ${round1(spread * 100)}% over ${rates.length} runs (> ${SPREAD_FLAG * 100}%): a median to doubt.`);
    const mid = runs.slice().sort((a, b) => a.delivered_per_s - b.delivered_per_s)[Math.floor(runs.length / 2)]!;
    metrics[`${p}_deltas_per_s`] = Math.round(median(runs.map((r) => r.deltas_per_s)));
    metrics[`${p}_delivered_pct_min`] = minOf(runs.map((r) => r.delivered_pct));
    metrics[`${p}_delivered_pct_max`] = maxOf(runs.map((r) => r.delivered_pct));
    metrics[`${p}_drain_ms_max`] = maxOf(runs.map((r) => r.drain_ms));
    if (runs.some((r) => r.frames !== r.accepted * n))
      flag(
        `${n} subscribers: delivered ${minOf(runs.map((r) => r.delivered_pct))}..${maxOf(runs.map((r) => r.delivered_pct))}% of the ` +
          `expected messages (per run, received - expected: ${runs.map((r) => r.frames - r.accepted * n).join(', ')}; exactly 0 is ` +
          `expected: fewer is loss or a close; more comes from placements answered 504 sequencing_timeout that executed later: ` +
          `${runs.reduce((a, r) => a + r.timed_out, 0)}).`,
      );
    metrics[`${p}_p50_us`] = Math.round(median(runs.map((r) => r.latency_us.p50)));
    metrics[`${p}_p99_us`] = Math.round(median(runs.map((r) => r.latency_us.p99)));
    metrics[`${p}_p999_us`] = Math.round(median(runs.map((r) => r.latency_us.p999)));
    metrics[`${p}_max_us`] = Math.round(maxOf(runs.map((r) => r.latency_us.max)));
    metrics[`${p}_latency_samples`] = runs.reduce((a, r) => a + r.latency_us.samples, 0);
    metrics[`${p}_rest_batch_p50_ms`] = median(runs.map((r) => r.batch_p50_ms));
    metrics[`${p}_delta_minus_rest_answer_p50_us`] = median(runs.map((r) => r.vs_answer_p50_us));
    metrics[`${p}_bytes_per_msg`] = mid.bytes_per_msg;
    metrics[`${p}_server_cpu_pct`] = round1(median(runs.map((r) => r.server_pct)));
    metrics[`${p}_gateway_thread_cpu_pct`] = round1(median(runs.map((r) => r.gateway_pct)));
    metrics[`${p}_engine_thread_cpu_pct`] = round1(median(runs.map((r) => r.engine_pct)));
    metrics[`${p}_client_cpu_pct`] = round1(median(runs.map((r) => r.client_pct)));
    metrics[`${p}_subscriber_thread_cpu_pct`] = round1(median(runs.map((r) => r.subscriber_thread_pct)));
    metrics[`${p}_flow_thread_cpu_pct`] = round1(median(runs.map((r) => r.flow_thread_pct)));
    metrics[`${p}_machine_cpu_pct`] = round1(median(runs.map((r) => r.cpu.machine_pct)));
    metrics[`${p}_foreign_cpu_pct_max`] = round1(maxOf(runs.map((r) => r.foreign_pct)));
    metrics[`${p}_rejected`] = runs.reduce((a, r) => a + r.rejected, 0);
    metrics[`${p}_sequencing_timeouts`] = runs.reduce((a, r) => a + r.timed_out, 0);
    metrics[`${p}_failed_batches`] = runs.reduce((a, r) => a + r.failed_batches, 0);
    const closes: Record<string, number> = {};
    for (const r of runs) for (const [k, v] of Object.entries(r.closes)) closes[k] = (closes[k] ?? 0) + v;
    for (const [k, v] of Object.entries(closes)) metrics[`${p}_closes_${k}`] = v;
    if (Object.keys(closes).length > 0)
      flag(`${n} subscribers: connections were closed during the runs: ${JSON.stringify(closes)} (4008 = slow consumer).`);
    if (runs.some((r) => !r.quiet))
      flag(`${n} subscribers: the machine was not quiet before every run (other processes above 15% of a core).`);
    const gwUsPerMsg = med > 0 ? round1((metrics[`${p}_gateway_thread_cpu_pct`]! / 100) * 1e6 / med * 1000) : NaN;
    metrics[`${p}_gateway_cpu_ns_per_msg`] = gwUsPerMsg;
    notes.push(
      `${n} subscribers of one market, ${runs.length} run(s) of ${s.run_ms} ms at ${s.rate} orders/s: delivered ` +
        `${Math.round(med).toLocaleString('en-US')} msgs/s (median; min ${Math.round(minOf(rates)).toLocaleString('en-US')}, max ` +
        `${Math.round(maxOf(rates)).toLocaleString('en-US')}), ${metrics[`${p}_delivered_pct_min`]}% of the expected messages arrived ` +
        `(worst run), latency placement-sent -> delta-received p50 ${metrics[`${p}_p50_us`]} us, p99 ${metrics[`${p}_p99_us`]} us ` +
        `(the REST batch answer took p50 ${metrics[`${p}_rest_batch_p50_ms`]} ms; the delta arrived p50 ` +
        `${metrics[`${p}_delta_minus_rest_answer_p50_us`]} us after that answer, negative = before). CPU (% of one core, 200% = ` +
        `the whole machine): exchange ${metrics[`${p}_server_cpu_pct`]}% (gateway thread ` +
        `${metrics[`${p}_gateway_thread_cpu_pct`]}%, engine ${metrics[`${p}_engine_thread_cpu_pct`]}%), client side ` +
        `${metrics[`${p}_client_cpu_pct`]}% (subscriber thread ${metrics[`${p}_subscriber_thread_cpu_pct`]}%, order flow ` +
        `${metrics[`${p}_flow_thread_cpu_pct`]}%), machine ${metrics[`${p}_machine_cpu_pct`]}%.`,
    );
  }
  if (probe !== null) {
    const p = `s${probe.subscribers}_ceiling`;
    metrics[`${p}_offered_orders_per_s`] = s.probe_rate;
    metrics[`${p}_delivered_msgs_per_s`] = probe.delivered_per_s;
    metrics[`${p}_deltas_per_s`] = probe.deltas_per_s;
    metrics[`${p}_delivered_pct`] = probe.delivered_pct;
    metrics[`${p}_sequencing_timeouts`] = probe.timed_out;
    metrics[`${p}_drain_ms`] = probe.drain_ms;
    metrics[`${p}_p50_us`] = probe.latency_us.p50;
    metrics[`${p}_p99_us`] = probe.latency_us.p99;
    metrics[`${p}_gateway_thread_cpu_pct`] = probe.gateway_pct;
    metrics[`${p}_subscriber_thread_cpu_pct`] = probe.subscriber_thread_pct;
    metrics[`${p}_machine_cpu_pct`] = probe.cpu.machine_pct;
    notes.push(
      `ceiling probe (one run, not the recorded figure): ${probe.subscribers} subscribers at ${s.probe_rate} orders/s offered ` +
        `(${(s.probe_rate * probe.subscribers).toLocaleString('en-US')} msgs/s): delivered ` +
        `${probe.delivered_per_s.toLocaleString('en-US')} msgs/s while the flow ran, ${probe.delivered_pct}% of the accepted ` +
        `placements' deltas once drained (the backlog took ${probe.drain_ms} ms to clear after the flow's last answer; ` +
        `${probe.timed_out} placements were answered 504 sequencing_timeout and may have executed later, which is how more than ` +
        `100% can arrive), p50 ${probe.latency_us.p50} us, p99 ${probe.latency_us.p99} us; machine ${probe.cpu.machine_pct}% ` +
        `(gateway thread ${probe.gateway_pct}%, subscriber thread ${probe.subscriber_thread_pct}%). Where delivered/s falls ` +
        `short of the offer, this is the machine's ceiling with the client on it, and latency is queueing.`,
    );
  }
  const big = Math.max(...counts);
  const headline = metrics[`s${big}_delivered_msgs_per_s`]!;
  notes.unshift(
    `${DURABILITY_LABEL}: the exchange ran with --durability none (no journal write or fsync between the engine and the fan-out).`,
  );
  notes.push(
    `target >= ${TARGET_PER_S.toLocaleString('en-US')} messages/s at 1,000 subscribers: ${headline.toLocaleString('en-US')} msgs/s at ` +
      `${s.rate} deltas/s offered (${headline >= TARGET_PER_S ? 'met' : 'NOT met'}). Subscribers, order flow and exchange share this ` +
      `machine's ${env.machine.cpus} cores; the client side's CPU is in each line above.`,
  );
  notes.push(
    `setup: ${o.flowKeys} flow keys (makers and takers, ${FLOW_ORDERS_PER_KEY_S} orders/s each, under the 50/s write bucket), ` +
      `${o.subKeys} read keys for the subscribers (${CONNECTIONS_PER_KEY} connections per key, the lane's cap), ${o.setupMs} ms; ` +
      `gateways ${o.gateways}; subscribers on raw sockets in one worker thread (frame counting, pings answered, no JSON), ` +
      `${SAMPLE_CONNECTIONS} of them stamping arrivals for latency.`,
  );
  metrics.rate_orders_per_s = s.rate;
  metrics.run_ms = s.run_ms;
  metrics.repeats = s.repeats;
  metrics.gateways = o.gateways;
  metrics.wall_s = o.wallS;
  return {
    name: 'ws_fanout',
    node: env.node,
    machine: env.machine,
    workload: `One market; a REST order flow of ${s.rate} orders/s (batches of ${BATCH}: makers buy YES 40, takers buy NO 60, qty 1, so ` +
      `each order is one book delta); ${s.subscribers.join(' and ')} WebSocket subscribers of its orderbook_delta stream on raw sockets ` +
      `in a worker thread of the bench process; ${s.repeats} run(s) of ${s.run_ms} ms per subscriber count; ${DURABILITY_LABEL}.`,
    metrics,
    peers: {},
    ratios: {},
    notes,
  };
}
