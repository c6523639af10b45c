// ws_orders: order entry over the WebSocket lane against REST, in one run on
// one exchange process with --durability fsync (every answer waits for the
// journal's group-commit fdatasync). Every key has a rate tier that does not
// throttle (custom, 10,000,000/s), so the lanes, not the buckets, set the
// pace. Main thread of the bench runner; reports, never asserts.
//
//   1. REST: signed placements from the load generator (test/support/loadgen,
//      piscina workers) in closed loop, at the better of two connection
//      counts (probed), REPEATS runs;
//   2. WebSocket JSON (one place_order per text frame) and binary
//      (PlaceOrder records, a turn's records in one frame), each over one
//      connection and over 16, closed loop with a window of placements in
//      flight per connection (test/support/loadgen/ws_order_worker.ts, one worker
//      thread), REPEATS runs each, interleaved;
//   3. open loop at half of each WebSocket mode's 16-connection peak:
//      server-side latency from the exchange's own stage histograms
//      (GET /admin/latency, lane ws: total and each stage, with the
//      journal's group commits beside them), and the client's from the
//      intended send time;
//   4. the disk alone (4 KiB append + fdatasync), whose p99 the latency
//      target adds to its 1 ms;
//   0. first of all, on a second exchange started fresh for it: the binary
//      16-connection load once (binary_fresh_*). The main runs' read models
//      hold the ended orders the REST phase left (up to 1,000 per account,
//      128 accounts); the fresh one holds those of 16 accounts, so the gap
//      shows what retention costs each placement.
//
// Server CPU per placement = the exchange process's CPU over a run
// (/proc, all its threads: gateway, engine, journal, main) / placements
// answered ok in it. Placements look like the generator's (around YES 50,
// both outcomes, 70% buys, client_order_id on each); a WebSocket connection
// sends a cancel-all of its account every 2,000 placements to keep the book
// bounded (not counted; REST runs are short enough not to need it).

import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { CLIENT_LAYOUT_FINGERPRINT } from '../src/client/binary_codec.js';
import { runLoad, type LoadResult } from '../test/support/loadgen/loadgen.js';
import { Histogram } from '../test/support/loadgen/histogram.js';
import type { ExchangeProcess } from '../test/support/exchange.js';
import {
  cpuMetrics,
  loadExchange,
  measured,
  okCount,
  okRate,
  round1,
  round3,
  settings as gatewaySettings,
  triple,
  type LoadedExchange,
  type Measured,
} from './gateway_place.js';
import { diskFloor } from './lib/disk_floor.js';
import { startBenchExchange } from './lib/population.js';
import { environment, type BenchResult } from './lib/result.js';
import {
  fsyncSummary, readLatency, serverStages, stagesLine, type LatencyReport, type ServerSummary,
} from '../test/support/bench/server_latency.js';
import { median } from '../test/support/bench/stats.js';
import type { OrderRunRequest, OrderWorkerData, OrderWorkerReport } from '../test/support/loadgen/ws_order_worker.js';

const MID = 50;
const SPREAD = 5;
const CANCEL_EVERY = 2000;
const WS_CONNECTIONS = [1, 16] as const;
/**
 * Placements in flight per WebSocket connection (closed loop): under the exchange's caps of 1,000 per connection and 4,096 held per
 * gateway thread.
 */
const WINDOW: Record<number, number> = { 1: 900, 16: 200 };
const REST_CONNECTIONS = [256, 512] as const;
type WsMode = 'json' | 'binary';
const WS_MODES: readonly WsMode[] = ['json', 'binary'];

interface Settings extends ReturnType<typeof gatewaySettings> {
  keys: number;
}

function settings(quick: boolean): Settings {
  return { ...gatewaySettings(quick), keys: quick ? 64 : 128 };
}

// ------------------------------------------------------------------ the WebSocket load

export class OrderLoad {
  private constructor(private readonly w: Worker) {}

  static async start(ex: ExchangeProcess, mode: WsMode, market: number, keys: OrderWorkerData['keys'], seed: number): Promise<OrderLoad> {
    const data: OrderWorkerData = {
      url: ex.base.replace(/^http/, 'ws'),
      mode,
      market_id: market,
      keys,
      layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT,
      seed,
      mid: MID,
      spread: SPREAD,
      cancel_every: CANCEL_EVERY,
    };
    const w = new Worker(new URL('../test/support/loadgen/ws_order_worker.js', import.meta.url), { workerData: data });
    await new Promise<void>((resolve, reject) => {
      w.once('error', reject);
      w.once('message', (m: { type: string }) => (m.type === 'ready' ? resolve() : reject(new Error(`worker said ${m.type}`))));
    });
    return new OrderLoad(w);
  }

  run(req: Omit<OrderRunRequest, 'type'>): Promise<OrderWorkerReport> {
    return new Promise((resolve, reject) => {
      this.w.once('error', reject);
      this.w.once('message', (m: OrderWorkerReport) => resolve(m));
      this.w.postMessage({ type: 'run', ...req });
    });
  }

  async close(): Promise<void> {
    const done = new Promise<void>((resolve) => this.w.once('exit', () => resolve()));
    this.w.postMessage({ type: 'close' });
    await done;
  }
}

function wsRate(r: OrderWorkerReport): number {
  return round1((r.ok * 1000) / r.elapsed_ms);
}

/** Attempts redone (measured's reruns when other processes took the CPU) over these runs. */
function redone(runs: readonly Measured<unknown>[]): number {
  return runs.reduce((a, m) => a + m.attempts - 1, 0);
}

// ------------------------------------------------------------------ the exchange's own latency histograms

/**
 * The exchange's stage histograms (GET /admin/latency) of one lane and route
 * over ONE attempt of a measured run: `measure` (gateway_place's measured)
 * may redo the run when other processes took the CPU, and only the last
 * attempt's figures are reported, so the histograms are read around each
 * attempt and the last attempt's window is kept.
 */
async function withStages<T>(
  ex: ExchangeProcess,
  lane: string,
  route: string,
  measure: (attempt: (start: () => void) => Promise<T>) => Promise<Measured<T>>,
  run: () => Promise<T>,
): Promise<{ value: Measured<T>; stages: Record<string, ServerSummary>; fsync: ServerSummary }> {
  let win: { before: LatencyReport; after: LatencyReport } | null = null;
  const value = await measure(async (start) => {
    const before = await readLatency(ex);
    start(); // the CPU window opens after the first read
    const v = await run();
    win = { before, after: await readLatency(ex) };
    return v;
  });
  const w = win as unknown as { before: LatencyReport; after: LatencyReport };
  return { value, stages: serverStages(w.before, w.after, lane, route), fsync: fsyncSummary(w.before, w.after) };
}

// ------------------------------------------------------------------ the run

interface WsRun {
  mode: WsMode;
  connections: number;
  m: Measured<OrderWorkerReport>;
  server_p50_ms: number;
  server_p99_ms: number;
  /** Every stage of the lane's route over the run, and the journal's group commits. */
  stages: Record<string, ServerSummary>;
  fsync: ServerSummary;
}

async function wsRun(
  s: Settings,
  ex: ExchangeProcess,
  le: LoadedExchange,
  load: OrderLoad,
  mode: WsMode,
  connections: number,
  req: Omit<OrderRunRequest, 'type'>,
): Promise<WsRun> {
  const route = mode === 'json' ? 'place_order' : 'binary';
  const { value: m, stages, fsync } = await withStages(ex, 'ws', route, (f) => measured(s, le.target, f), () => load.run(req));
  return { mode, connections, m, server_p50_ms: stages.total!.p50_us / 1000, server_p99_ms: stages.total!.p99_us / 1000, stages, fsync };
}

function cpuUsPerPlacement(m: Measured<unknown>, placements: number): number {
  return placements === 0 ? NaN : Math.round((((m.server_pct / 100) * m.cpu.wall_ms * 1000) / placements) * 10) / 10;
}

/**
 * One (mode, connections) cell of the closed-loop runs: placements/s,
 * server CPU per placement, server- and client-side latency, the CPU of
 * each thread, and flags for other answers, a shared machine or a wide
 * spread. Returns the median placements/s.
 */
function closedMetrics(
  metrics: Record<string, number>, notes: string[], flag: (what: string) => void, runs: WsRun[], mode: WsMode, n: number,
): number {
  const rates = runs.map((r) => wsRate(r.m.value));
  const p = `${mode}_${n}conn_`;
  const med = triple(metrics, `${p}placements_per_s`, rates);
  metrics[`${p}server_cpu_us_per_placement`] = round1(median(runs.map((r) => cpuUsPerPlacement(r.m, r.m.value.ok))));
  metrics[`${p}server_p50_ms`] = round3(median(runs.map((r) => r.server_p50_ms)));
  metrics[`${p}server_p99_ms`] = round3(median(runs.map((r) => r.server_p99_ms)));
  metrics[`${p}server_cpu_pct`] = round1(median(runs.map((r) => r.m.server_pct)));
  metrics[`${p}client_cpu_pct`] = round1(median(runs.map((r) => r.m.generator_pct)));
  metrics[`${p}engine_thread_cpu_pct`] = round1(median(runs.map((r) => r.m.engine_pct)));
  metrics[`${p}gateway_thread_cpu_pct`] = round1(median(runs.map((r) => r.m.gateway_pct)));
  metrics[`${p}main_thread_cpu_pct`] = round1(median(runs.map((r) => r.m.main_pct)));
  // Journal, snapshot worker (piscina) and the rest of the exchange's threads.
  metrics[`${p}other_threads_cpu_pct`] = round1(
    median(runs.map((r) => r.m.server_pct - r.m.gateway_pct - r.m.engine_pct - r.m.main_pct)),
  );
  const h = new Histogram();
  for (const r of runs) h.merge(r.m.value.latency);
  metrics[`${p}client_p50_ms`] = round3(h.percentile(50) / 1000);
  metrics[`${p}client_p99_ms`] = round3(h.percentile(99) / 1000);
  const bad: Record<string, number> = {};
  for (const r of runs)
    for (const [k, v] of Object.entries(r.m.value.outcomes)) if (k !== '201' && k !== 'ok') bad[k] = (bad[k] ?? 0) + v;
  if (Object.keys(bad).length > 0) notes.push(`${mode} over ${n} connection(s): answers other than ok: ${JSON.stringify(bad)}`);
  if (runs.some((r) => r.m.foreign_pct > 25))
    flag(`${mode} over ${n} connection(s): other processes used more than 25% of a core in some runs`);
  const spread = (Math.max(...rates) - Math.min(...rates)) / med;
  if (spread > 0.1) flag(`${mode} over ${n} connection(s): spread ${Math.round(spread * 100)}% over ${rates.length} runs`);
  return med;
}

/**
 * Binary placements over 16 connections on a second, fresh exchange (only
 * these 16 accounts, no REST phase before): the same load as the main
 * 16-connection runs, on read models that hold few ended orders. The gap
 * to those runs is what the retained orders of the main runs' 128 accounts
 * cost (docs/order-entry.md).
 */
async function freshBinary(s: Settings, seed: number): Promise<WsRun> {
  const ex = await startBenchExchange({ gateways: s.gateways, durability: 'fsync', demo: false });
  try {
    const le = await loadExchange(ex, { keys: 16, seed_shares: s.seed_shares }, seed);
    const keys = le.setup.traders.map((t) => ({ key_id: t.key_id, secret: t.secret, account_id: t.account_id }));
    const load = await OrderLoad.start(ex, 'binary', le.market, keys, le.nextSeed());
    try {
      // A short run first: the exchange's code warms up on it, as the main runs' does on the REST phase.
      await load.run({ loop: 'closed', window: WINDOW[16]!, rate: 0, duration_ms: Math.min(3000, s.run_ms) });
      return await wsRun(s, ex, le, load, 'binary', 16, { loop: 'closed', window: WINDOW[16]!, rate: 0, duration_ms: s.run_ms });
    } finally {
      await load.close();
    }
  } finally {
    await ex.stop();
  }
}

/** The binary load on a fresh exchange (freshBinary): one run. */
function freshMetrics(metrics: Record<string, number>, fresh: WsRun): void {
  metrics.binary_fresh_placements_per_s = round1(wsRate(fresh.m.value));
  metrics.binary_fresh_server_cpu_us_per_placement = cpuUsPerPlacement(fresh.m, fresh.m.value.ok);
  metrics.binary_fresh_engine_thread_cpu_pct = round1(fresh.m.engine_pct);
  metrics.binary_fresh_gateway_thread_cpu_pct = round1(fresh.m.gateway_pct);
  metrics.binary_fresh_main_thread_cpu_pct = round1(fresh.m.main_pct);
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const s = settings(opts.quick === true);
  const seed = 0x5eed_0017;
  const t0 = performance.now();
  const notes: string[] = [];
  const flag = (what: string): void => {
    notes.push(`FLAG ${what}`);
  };

  const disk = diskFloor(s.quick ? 500 : 3000);
  const fresh = await freshBinary(s, seed ^ 0xf7e5);
  const ex = await startBenchExchange({ gateways: s.gateways, durability: 'fsync', demo: false });
  try {
    const le = await loadExchange(ex, { keys: s.keys, seed_shares: s.seed_shares }, seed);

    // 1. REST, closed loop: probe two connection counts, then the repeats at the better one.
    const measure = <T>(f: (start: () => void) => Promise<T>): Promise<Measured<T>> => measured(s, le.target, f);
    const restLoad = (connections: number, ms: number): Promise<LoadResult> =>
      runLoad({
        baseUrl: ex.base,
        keys: le.keys,
        markets: [le.market],
        mode: 'closed',
        connections,
        durationMs: ms,
        mix: { place: 1, cancel: 0, read: 0 },
        workers: s.workers,
        seed: le.nextSeed(),
        mid: MID,
        spread: SPREAD,
      });
    const rest = (connections: number, ms: number): Promise<Measured<LoadResult>> => measure(() => restLoad(connections, ms));
    const probes: { connections: number; per_s: number }[] = [];
    for (const c of REST_CONNECTIONS) probes.push({ connections: c, per_s: okRate((await rest(c, s.probe_ms)).value) });
    const restConns = probes.reduce((a, b) => (b.per_s > a.per_s ? b : a)).connections;
    const restRuns: Measured<LoadResult>[] = [];
    const restServerP: { p50: number[]; p99: number[] } = { p50: [], p99: [] };
    for (let i = 0; i < s.repeats; i++) {
      const { value, stages } = await withStages(ex, 'rest', 'place_order', measure, () => restLoad(restConns, s.run_ms));
      restRuns.push(value);
      restServerP.p50.push(stages.total!.p50_us / 1000);
      restServerP.p99.push(stages.total!.p99_us / 1000);
    }

    // 2. WebSocket, closed loop: JSON and binary, 1 and 16 connections, the repeats interleaved.
    const wsKeys = le.setup.traders.slice(0, 16).map((t) => ({ key_id: t.key_id, secret: t.secret, account_id: t.account_id }));
    const closedRuns: WsRun[] = [];
    const loads = new Map<string, OrderLoad>();
    for (const mode of WS_MODES) {
      for (const n of WS_CONNECTIONS)
        loads.set(`${mode}${n}`, await OrderLoad.start(ex, mode, le.market, wsKeys.slice(0, n), le.nextSeed()));
    }
    for (let i = 0; i < s.repeats; i++) {
      for (const mode of i % 2 === 0 ? WS_MODES : [...WS_MODES].reverse()) {
        for (const n of WS_CONNECTIONS) {
          closedRuns.push(
            await wsRun(s, ex, le, loads.get(`${mode}${n}`)!, mode, n, {
              loop: 'closed',
              window: WINDOW[n]!,
              rate: 0,
              duration_ms: s.run_ms,
            }),
          );
        }
      }
    }

    // 3. Open loop at half of each mode's 16-connection peak: the latency target.
    const peak = (mode: WsMode, n: number): number =>
      median(closedRuns.filter((r) => r.mode === mode && r.connections === n).map((r) => wsRate(r.m.value)));
    const openRuns = new Map<WsMode, WsRun>();
    for (const mode of WS_MODES) {
      const rate = Math.max(100, Math.round(peak(mode, 16) / 2));
      openRuns.set(
        mode,
        await wsRun(s, ex, le, loads.get(`${mode}16`)!, mode, 16, { loop: 'open', window: 0, rate, duration_ms: s.open_ms }),
      );
    }
    for (const l of loads.values()) await l.close();
    const wallS = Math.round((performance.now() - t0) / 1000);

    // ---- metrics
    const metrics: Record<string, number> = {};
    const restRates = restRuns.map((m) => okRate(m.value));
    const restMed = triple(metrics, 'rest_placements_per_s', restRates);
    metrics.rest_connections = restConns;
    metrics.rest_server_p50_ms = round3(median(restServerP.p50));
    metrics.rest_server_p99_ms = round3(median(restServerP.p99));
    cpuMetrics(metrics, 'rest', restRuns, restRates);
    metrics.rest_server_cpu_us_per_placement = round1(median(restRuns.map((m) => cpuUsPerPlacement(m, okCount(m.value.statuses)))));
    const best: Record<WsMode, number> = { json: 0, binary: 0 };
    for (const mode of WS_MODES) {
      for (const n of WS_CONNECTIONS) {
        const med = closedMetrics(metrics, notes, flag, closedRuns.filter((r) => r.mode === mode && r.connections === n), mode, n);
        if (med > best[mode]) best[mode] = med;
      }
      // The headline: the better of 1 and 16 connections; CPU per placement from the 16-connection runs.
      metrics[`${mode}_placements_per_s`] = best[mode];
      metrics[`${mode}_server_cpu_us_per_placement`] = metrics[`${mode}_16conn_server_cpu_us_per_placement`]!;
      const o = openRuns.get(mode)!;
      metrics[`${mode}_half_peak_rate_per_s`] = (o.m.value.sent * 1000) / s.open_ms;
      metrics[`${mode}_half_peak_achieved_per_s`] = wsRate(o.m.value);
      metrics[`${mode}_half_peak_server_p50_ms`] = round3(o.server_p50_ms);
      metrics[`${mode}_half_peak_server_p99_ms`] = round3(o.server_p99_ms);
      const oh = new Histogram();
      oh.merge(o.m.value.latency);
      metrics[`${mode}_half_peak_client_p50_ms`] = round3(oh.percentile(50) / 1000);
      metrics[`${mode}_half_peak_client_p99_ms`] = round3(oh.percentile(99) / 1000);
      metrics[`${mode}_half_peak_behind`] = o.m.value.behind;
      // Where the half-peak tail comes from: each stage's p99 (µs) and the journal's group commits.
      for (const [stage, sum] of Object.entries(o.stages))
        if (stage !== 'total' && sum.count > 0) metrics[`${mode}_half_peak_${stage}_p99_us`] = sum.p99_us;
      metrics[`${mode}_half_peak_fsync_p99_us`] = o.fsync.p99_us;
      notes.push(
        `${mode} at half peak, stages: ${stagesLine(o.stages)}; journal write+fdatasync ` +
          `${o.fsync.p50_us}/${o.fsync.p99_us}/${o.fsync.max_us} (p50/p99/max µs, ${o.fsync.count} group commits).`,
      );
    }
    freshMetrics(metrics, fresh);
    metrics.redone_runs = redone([...restRuns, ...closedRuns.map((r) => r.m), ...[...openRuns.values()].map((r) => r.m), fresh.m]);
    metrics.disk_fdatasync_p50_ms = round3(disk.p50_us / 1000);
    metrics.disk_fdatasync_p99_ms = round3(disk.p99_us / 1000);
    metrics.latency_target_ms = round3(1 + disk.p99_us / 1000);
    const ratios = {
      json_vs_rest: round3(best.json / restMed),
      binary_vs_rest: round3(best.binary / restMed),
    };
    metrics.json_vs_rest = ratios.json_vs_rest;
    metrics.binary_vs_rest = ratios.binary_vs_rest;
    notes.push(
      `targets (issue 17): JSON >= 3x REST placements/s: ${ratios.json_vs_rest}x; binary >= 10x: ${ratios.binary_vs_rest}x; ` +
        `server CPU per binary placement <= 5 us: ${metrics.binary_server_cpu_us_per_placement} us; per JSON placement <= 15 us: ` +
          `${metrics.json_server_cpu_us_per_placement} us; ` +
        `server p99 at half peak <= 1 ms + disk fdatasync p99 (${metrics.latency_target_ms} ms): JSON ` +
          `${metrics.json_half_peak_server_p99_ms} ms, binary ${metrics.binary_half_peak_server_p99_ms} ms.`,
      "Server-side latency: the exchange's own stage histograms of the lane and route (GET /admin/latency, log-linear buckets within " +
        "6.25%, " +
        "a percentile is its bucket's highest value), from a frame's arrival to its answer queued for the socket; client latency (from " +
          "the " +
        'intended send time in the open loop) beside it.',
      'The client (one worker thread for the WebSocket lanes, piscina workers for REST) shares the two cores with the exchange.',
    );
    return {
      name: 'ws_orders',
      ...environment(),
      workload:
        `One exchange (--durability fsync, ${s.gateways} gateway thread(s)), ${le.setup.traders.length} funded accounts with seeded ` +
          `shares, every key on a custom ` +
        `tier of 10,000,000/s. REST: the load generator's signed placements, closed loop at ${restConns} connections (probed ` +
          `${REST_CONNECTIONS.join(', ')}), ` +
        `${s.repeats} x ${s.run_ms / 1000} s. WebSocket: place_order JSON frames and binary PlaceOrder frames over 1 connection (window ` +
          `${WINDOW[1]}) and ` +
        `16 (window ${WINDOW[16]} each), ${s.repeats} x ${s.run_ms / 1000} s each, interleaved; then ${s.open_ms / 1000} s open loop at ` +
          `half of each mode's ` +
        `16-connection peak. Before all that, binary_fresh_*: the 16-connection binary load for ${s.run_ms / 1000} s on a second, ` +
          `fresh exchange (16 accounts, nothing placed before but a ${Math.min(3000, s.run_ms) / 1000} s warm-up). ` +
        `Placements around YES ${MID} +- ${SPREAD}, both outcomes, 70% buys, qty 1..10.${s.quick ? ' QUICK run: tooling check only.' : ''}`,
      metrics,
      peers: {},
      ratios,
      notes,
      wall_s: wallS,
    };
  } finally {
    await ex.stop();
  }
}
