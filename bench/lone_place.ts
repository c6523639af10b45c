// lone_place: the latency of one placement on an otherwise idle exchange,
// inside the server. 1,000 signed placements one at a time, 5 ms apart
// (each sent when the previous one was answered and its slot came due), through
// the REST gateway of an exchange process with the demo off; the exchange's
// own stage histograms (GET /admin/latency) are read before and after, so the
// figures are the server's, head of the request to reply written, beside the
// client's. Cases, each a fresh exchange in the same run:
//   - durability none with each wait strategy (src/ring/wait.ts) for every
//     role: the default (auto: park on this 2-core machine), spin, backoff,
//     park; the server's CPU over the placements is the strategy's cost;
//   - durability fsync with the default wait, beside the disk's own 4 KiB
//     append + fdatasync, timed here too: back to back (the issue's floor)
//     and at the placements' pace (one every INTERVAL_MS, as the journal
//     syncs here), and the journal's own write + fdatasync per group.
// Main thread of the bench runner; reports, never asserts.

import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DxClient } from '../src/client/client.js';
import { closeFetchConnections } from '../src/client/transport.js';
import { waitRoles } from '../src/main/config.js';
import { spawnExchange } from '../test/support/exchange.js';
import { diskFloor, type DiskFloor } from './lib/disk_floor.js';
import { createTraders, openMarket } from './lib/population.js';
import { CpuWindow, waitQuiet } from './lib/process_stats.js';
import { environment, type BenchResult } from './lib/result.js';
import { fsyncSummary, readLatency, serverStages, stagesLine, type ServerSummary } from '../test/support/bench/server_latency.js';
import { percentiles } from '../test/support/bench/stats.js';

const TOKEN = 'lone-place-bench-token-0123456789';
/** Keys the placements rotate over: the write bucket allows 50/s per key, the run sends 200/s. */
const KEYS = 8;
const INTERVAL_MS = 5;
const WARMUP = 200;

interface Case {
  name: string;
  durability: 'none' | 'fsync';
  /** DX_WAIT of the exchange. */
  wait: string;
}

const CASES: readonly Case[] = [
  { name: 'none', durability: 'none', wait: 'auto' },
  { name: 'fsync', durability: 'fsync', wait: 'auto' },
  { name: 'none_wait_spin', durability: 'none', wait: 'spin' },
  { name: 'none_wait_backoff', durability: 'none', wait: 'backoff' },
  { name: 'none_wait_park', durability: 'none', wait: 'park' },
];

interface CaseResult {
  c: Case;
  stages: Record<string, ServerSummary>;
  /** The journal's write + fdatasync per group commit over the placements (count 0 without fsync). */
  fsync: ServerSummary;
  client: { p50_us: number; p99_us: number; max_us: number };
  server_cpu_pct: number;
  /** Server CPU per placement, µs (the whole process over the window / placements). */
  cpu_us_per_req: number;
  statuses: Record<string, number>;
  threads: string;
}

/**
 * Placements one at a time, INTERVAL_MS apart from the first one's start,
 * from clients in turn: `paced(from, count, lat)` places `count`, records
 * each answer's status in `statuses` and, given `lat`, each one's time (ms).
 */
function pacedPlacer(
  clients: DxClient[], market: number, statuses: Record<string, number>,
): (from: number, count: number, lat: Float64Array | null) => Promise<void> {
  // Resting buys that never cross (YES at 30, NO at 60: 30 + 60 < 100): the placement path alone, no fills.
  const place = async (i: number): Promise<void> => {
    try {
      await clients[i % KEYS]!.placeOrder({
        market_id: market,
        side: 'buy',
        outcome: i % 2 === 0 ? 'yes' : 'no',
        tick: i % 2 === 0 ? 30 : 60,
        qty: 1,
      });
      statuses['201'] = (statuses['201'] ?? 0) + 1;
    } catch (e) {
      const code = String((e as { status?: number }).status ?? 'error');
      statuses[code] = (statuses[code] ?? 0) + 1;
    }
  };
  const paced = async (from: number, count: number, lat: Float64Array | null): Promise<void> => {
    const t0 = performance.now();
    for (let k = 0; k < count; k++) {
      const due = t0 + k * INTERVAL_MS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      const s = performance.now();
      await place(from + k);
      if (lat !== null) lat[k] = performance.now() - s;
    }
  };
  return paced;
}

/** One exchange: warm up, then `n` placements one at a time, INTERVAL_MS apart. */
async function runCase(c: Case, n: number, quietMs: number): Promise<CaseResult> {
  const dir = mkdtempSync(join(tmpdir(), `dx-bench-lone-${c.name}-`));
  const ex = await spawnExchange(
    { data_dir: dir, admin_token: TOKEN, durability: c.durability, wait: c.wait, demo: false },
    { logLevel: 'warn', readyTimeoutMs: 60_000 },
  );
  try {
    const market = await openMarket(ex.admin(30_000));
    const setup = await createTraders(ex, KEYS, { deposit_cents: 100_000_000, seed_shares: 0, market_id: market, concurrency: 8 });
    const clients = setup.traders.map((t) => new DxClient({ baseUrl: ex.base, keyId: t.key_id, secret: t.secret, timeoutMs: 10_000 }));
    const statuses: Record<string, number> = {};
    const paced = pacedPlacer(clients, market, statuses);
    await paced(0, WARMUP, null);
    for (const k of Object.keys(statuses)) delete statuses[k];
    await sleep(200);
    await waitQuiet([ex.pid, process.pid], { maxWaitMs: quietMs, windowMs: 500, windows: 2 });
    const admin = { adminBase: ex.adminBase, token: TOKEN };
    const before = await readLatency(admin);
    const lat = new Float64Array(n);
    const w = new CpuWindow({ server: ex.pid });
    await paced(WARMUP, n, lat);
    const cpu = w.stop();
    const after = await readLatency(admin);
    if (!ex.running) throw new Error(`the ${c.name} exchange died: ${ex.stderrTail().slice(-2000)}`);
    const p = percentiles(lat, [50, 99, 100]);
    const us = (q: number): number => Math.round(p.get(q)! * 1000);
    const pct = cpu.process_pct.server!;
    return {
      c,
      stages: serverStages(before, after, 'rest', 'place_order'),
      fsync: fsyncSummary(before, after),
      client: { p50_us: us(50), p99_us: us(99), max_us: us(100) },
      server_cpu_pct: pct,
      cpu_us_per_req: Math.round(((pct / 100) * cpu.wall_ms * 1000) / n),
      statuses,
      threads: (cpu.threads.server ?? [])
        .slice(0, 6)
        .map((t) => `${t.comm}/${t.tid} ${t.pct}%`)
        .join(', '),
    };
  } finally {
    await closeFetchConnections();
    await ex.terminate(30_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

/** One case's figures (server-side stages, client-side, CPU), its flags and its line in the notes. */
function caseMetrics(metrics: Record<string, number>, notes: string[], r: CaseResult, n: number): void {
  const t = r.stages.total!;
  metrics[`server_p50_us_${r.c.name}`] = t.p50_us;
  metrics[`server_p99_us_${r.c.name}`] = t.p99_us;
  metrics[`server_max_us_${r.c.name}`] = t.max_us;
  metrics[`server_count_${r.c.name}`] = t.count;
  metrics[`client_p50_us_${r.c.name}`] = r.client.p50_us;
  metrics[`client_p99_us_${r.c.name}`] = r.client.p99_us;
  metrics[`server_cpu_pct_${r.c.name}`] = r.server_cpu_pct;
  metrics[`server_cpu_us_per_req_${r.c.name}`] = r.cpu_us_per_req;
  for (const [stage, x] of Object.entries(r.stages)) {
    if (stage === 'total' || x.count === 0) continue;
    metrics[`stage_${stage}_p50_us_${r.c.name}`] = x.p50_us;
    metrics[`stage_${stage}_p99_us_${r.c.name}`] = x.p99_us;
  }
  if (r.fsync.count > 0) {
    metrics[`journal_fsync_p50_us_${r.c.name}`] = r.fsync.p50_us;
    metrics[`journal_fsync_p99_us_${r.c.name}`] = r.fsync.p99_us;
  }
  const bad = Object.entries(r.statuses).filter(([k]) => k !== '201');
  if (bad.length > 0) notes.push(`FLAG ${r.c.name}: answers other than 201: ${JSON.stringify(Object.fromEntries(bad))}`);
  if (r.stages.total!.count < n) notes.push(`FLAG ${r.c.name}: the server recorded ${r.stages.total!.count} placements of ${n}`);
  notes.push(
    `${r.c.name} (--durability ${r.c.durability}, --wait ${r.c.wait}): server p50/p99/max ` +
      `${metrics[`server_p50_us_${r.c.name}`]}/${metrics[`server_p99_us_${r.c.name}`]}/${metrics[`server_max_us_${r.c.name}`]} µs, ` +
        `client ${r.client.p50_us}/${r.client.p99_us}/${r.client.max_us} µs; stages ${stagesLine(r.stages)}; ` +
          (r.fsync.count > 0 ? `journal write + fdatasync ${r.fsync.p50_us}/${r.fsync.p99_us}/${r.fsync.max_us}; ` : '') + 'server CPU ' +
          `${r.server_cpu_pct}% of a core over the placements (${r.cpu_us_per_req} µs per placement; busiest threads ${r.threads}).`,
  );
}

/** The issue's targets, for the cases that ran. */
function targetNotes(notes: string[], by: Map<string, CaseResult>, disk: DiskFloor): void {
  const none = by.get('none')?.stages.total;
  const fsync = by.get('fsync')?.stages.total;
  if (none !== undefined) {
    notes.push(`target durability none, server-side p50 <= 100 µs: ${none.p50_us} µs — ${none.p50_us <= 100 ? 'met' : 'NOT met'}.`);
    notes.push(`target durability none, server-side p99 <= 300 µs: ${none.p99_us} µs — ${none.p99_us <= 300 ? 'met' : 'NOT met'}.`);
  }
  if (fsync === undefined) return;
  notes.push(
    `target fsync, server-side p50 <= the disk's fdatasync p50 + 100 µs (${disk.p50_us + 100} µs): ${fsync.p50_us} µs — ` +
      `${fsync.p50_us <= disk.p50_us + 100 ? 'met' : 'NOT met'}.`,
  );
}

/** `cases`: only these (names of CASES), for A/B runs. */
export async function run(opts: { quick?: boolean; cases?: readonly string[] } = {}): Promise<BenchResult> {
  const quick = opts.quick === true;
  const n = quick ? 200 : 1000;
  const t0 = performance.now();
  const disk = diskFloor(quick ? 300 : 2000);
  const diskPaced = diskFloor(quick ? 100 : 400, INTERVAL_MS);
  const results: CaseResult[] = [];
  const cases = opts.cases === undefined ? CASES : CASES.filter((c) => opts.cases!.includes(c.name));
  for (const c of cases) results.push(await runCase(c, n, quick ? 3000 : 20_000));
  const by = new Map(results.map((r) => [r.c.name, r]));
  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  for (const r of results) caseMetrics(metrics, notes, r, n);
  metrics.disk_fdatasync_4k_p50_us = disk.p50_us;
  metrics.disk_fdatasync_4k_p99_us = disk.p99_us;
  metrics.disk_fdatasync_4k_paced_p50_us = diskPaced.p50_us;
  metrics.disk_fdatasync_4k_paced_p99_us = diskPaced.p99_us;
  metrics.placements = n;
  metrics.interval_ms = INTERVAL_MS;
  const auto = waitRoles('auto', availableParallelism(), Math.max(1, availableParallelism() - 1));
  notes.push(
    `the default wait (auto) on this machine (${availableParallelism()} cores, ${Math.max(1, availableParallelism() - 1)} gateway ` +
      `thread(s)): engine ${auto.engine}, journal ${auto.journal}, gateway ${auto.gateway}.`,
  );
  notes.push(
    `the disk alone: ${disk.samples} appends of 4 KiB + fdatasync in ${tmpdir()}: p50/p99/max ` +
      `${disk.p50_us}/${disk.p99_us}/${disk.max_us} µs back to back; ${diskPaced.samples} at the placements' pace (one every ` +
        `${INTERVAL_MS} ms): ${diskPaced.p50_us}/${diskPaced.p99_us}/${diskPaced.max_us} µs.`,
  );
  targetNotes(notes, by, disk);
  notes.push(
    "server-side percentiles are the upper edges of the exchange's log-linear buckets (16 per power of two: within 6.25%, never below " +
      "the truth).",
  );
  if (quick) notes.push('QUICK run: fewer placements, for checking the tooling; not figures to quote.');
  const env = environment();
  return {
    name: 'lone_place',
    node: env.node,
    machine: env.machine,
    workload: `One exchange process per case on 127.0.0.1 (demo off, ${Math.max(1, availableParallelism() - 1)} gateway thread(s), one ` +
      `market with a trading round, ${KEYS} funded accounts with one key each). After ${WARMUP} warm-up placements, ${n} signed POST ` +
        `/v1/portfolio/orders one at a time, ${INTERVAL_MS} ms apart (resting buys, no fills; src/client DxClient on Node fetch, ` +
          `keep-alive), the exchange's stage histograms read before and after. Cases: ` +
            `${cases.map((c) => `${c.name} (--durability ${c.durability}, --wait ${c.wait})`).join(', ')}.`,
    metrics,
    peers: {},
    ratios: {},
    notes,
    wall_s: Math.round((performance.now() - t0) / 1000),
  };
}
