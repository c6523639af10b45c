// durable_place: what durability costs, in one run. Signed placements through
// the REST gateway of two exchange processes started side by side, one with
// --durability fsync (every answer waits for the journal's group-commit
// fdatasync) and one with --durability none (benchmarks only: the journal
// writes without syncing), driven by the load generator (test/support/loadgen) in
// closed loop for throughput and in open loop at half of each one's peak for
// latency; then recovery time per 1,000,000 journaled events: a journal of at
// least a million events is built through a third exchange, and cold starts
// of the real server on that data directory are timed from spawn to its
// `ready` line (with the `recovery` log line's own ms). First of all, the uWS
// hello-world ceiling (gateway_place's hello phase), so that the target
// ratio (durable placements / hello) comes from one run, and the same with wrk
// as the generator (bench/lib/wrk.ts). The exchanges run with the demo off. Main thread of the
// bench runner; reports, never asserts.
//
// One run:
//   1. throughput: both exchanges, each with `keys` accounts (one key each,
//      a deposit and seeded YES and NO shares, as gateway_place does). Probes
//      pick each one's connection count (the write bucket caps a key at 50/s,
//      and the generator binds a connection to a key); then REPEATS closed
//      loops per mode, interleaved (fsync, none, none, fsync, ...) so a noisy
//      neighbour hits both alike; then an open loop per mode at half its
//      median peak, latency from the intended send time, and (fsync only)
//      open loops at 10% and 25% of the peak: latency against load.
//   2. recovery: an exchange with --snapshot-every 10^9 (no periodic snapshot:
//      the start must replay the whole journal) is driven with placements and
//      cancels until its journal holds `journal_events` records, stopped with
//      SIGTERM; the records are counted from the segment files. Then
//      COLD_STARTS starts on that directory, and the same on an empty
//      directory (the fixed cost of a start). Then one snapshot
//      (POST /admin/snapshot) and starts from it, for comparison.

import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { listSegments } from '../src/journal/recovery.js';
import { readWhole, scanSegment } from '../src/journal/segment.js';
import { runLoad, type LoadResult } from '../test/support/loadgen/loadgen.js';
import {
  flagSharedMachine, helloPhase, okRate, presignMetrics, round1, round3, settings as gatewaySettings, triple, wrkHelloPhase,
  type Settings as GatewaySettings,
} from './gateway_place.js';
import { closeFetchConnections } from '../src/client/transport.js';
import { spawnExchange, type ExchangeProcess } from '../test/support/exchange.js';
import { createTraders, openMarket } from './lib/population.js';
import { diskFloor, diskOverWindow, STALL_US, type DiskFloor } from './lib/disk_floor.js';
import { CpuWindow, waitQuiet, type QuietResult } from './lib/process_stats.js';
import { environment, type BenchResult } from './lib/result.js';
import {
  fsyncSummary, putServer, readLatency, serverStages, stagesLine, type ServerSummary,
} from '../test/support/bench/server_latency.js';
import { max as maxOf, median, min as minOf, putLatencyUs, relativeSpread } from '../test/support/bench/stats.js';

const NONE_LABEL = 'durability none (benchmarks only)';
const SPREAD_FLAG = 0.1;
const FOREIGN_REDO_PCT = 25;
/**
 * Fractions of the fsync peak for the latency-against-load open loops (the
 * regression benchmark of the stalls: 1%, 10%, 25% and 50%, each CURVE_MS at
 * CURVE_CONNECTIONS connections, server-side percentiles beside the client's).
 */
const CURVE_FRACTIONS = [0.01, 0.1, 0.25, 0.5] as const;
const CURVE_CONNECTIONS = 512;
/** The disk probed for this long, a sync every ms (its stalls: docs/latency.md). */
const DISK_WINDOW_MS = 20_000;
const MID = 50;
const SPREAD = 5;
const TOKEN = 'durable-place-bench-token-0123456789';

type Mode = 'fsync' | 'none';
const MODES: readonly Mode[] = ['fsync', 'none'];

/** gateway_place's run shape (runs, keys, threads, workers) plus the recovery phase's. */
interface Settings extends Omit<GatewaySettings, 'max_attempts'> {
  connections: readonly number[];
  journal_events: number;
  build_run_ms: number;
  build_max_ms: number;
  cold_starts: number;
  /** Length of each open loop of the latency-against-load curve. */
  curve_ms: number;
}

function settings(quick: boolean): Settings {
  const { max_attempts: _unused, ...shape } = gatewaySettings(quick);
  return {
    ...shape,
    connections: quick ? [256, 512] : [128, 256, 512, 1024],
    // Bounded: the machine is shared, and a run that starts noisy is flagged, not waited for forever.
    quiet_wait_ms: quick ? 10_000 : 20_000,
    journal_events: quick ? 200_000 : 1_000_000,
    build_run_ms: quick ? 3000 : 8000,
    build_max_ms: quick ? 120_000 : 600_000,
    cold_starts: quick ? 1 : 3,
    curve_ms: quick ? 3000 : 30_000,
  };
}

// ------------------------------------------------------------------ servers

interface Exchange {
  mode: Mode;
  server: ExchangeProcess;
  dir: string;
  market: number;
  keys: { keyId: number; secret: string }[];
  setup_ms: number;
  /** Next slice of keys handed to a run (each run starts on full buckets). */
  offset: number;
  runs: number;
}

function startServer(
  dir: string,
  mode: Mode,
  s: Settings,
  opts: { snapshotEvery?: number; logLevel?: 'info' | 'warn' } = {},
): Promise<ExchangeProcess> {
  return spawnExchange(
    { data_dir: dir, admin_token: TOKEN, durability: mode, gateways: s.gateways, snapshot_every: opts.snapshotEvery, demo: false },
    { logLevel: opts.logLevel ?? 'warn', readyTimeoutMs: 600_000 },
  );
}

/** A started exchange with its market and funded keys (the benchmarks' population). */
async function population(server: ExchangeProcess, mode: Mode, dir: string, keys: number, s: Settings): Promise<Exchange> {
  const market = await openMarket(server.admin(60_000));
  const setup = await createTraders(server, keys, {
    deposit_cents: 100_000_000,
    seed_shares: s.seed_shares,
    market_id: market,
    concurrency: 32,
    adminTimeoutMs: 60_000,
    unthrottled: true,
  });
  return {
    mode,
    server,
    dir,
    market,
    keys: setup.traders.map((t) => ({ keyId: t.key_id, secret: t.secret })),
    setup_ms: setup.setup_ms,
    offset: 0,
    runs: 0,
  };
}

async function stopServer(server: ExchangeProcess): Promise<{ code: number | null; signal: string | null; killed: boolean }> {
  await closeFetchConnections();
  return server.terminate(60_000);
}

// ------------------------------------------------------------------ measured runs

/** The exchange's own figures over a run: every stage of place_order, and the journal's fsyncs. */
interface ServerWindow {
  stages: Record<string, ServerSummary>;
  fsync: ServerSummary;
}

interface Measured {
  value: LoadResult;
  /** Server-side latency over the run (open loops). */
  server?: ServerWindow;
  server_pct: number;
  generator_pct: number;
  foreign_pct: number;
  attempts: number;
  quiet: QuietResult;
}

/**
 * Waits for a quiet machine (bounded), runs under a CPU window, redoes (at most twice) when other processes took more than
 * FOREIGN_REDO_PCT.
 */
async function measured(
  s: Settings,
  ex: Exchange,
  others: number[],
  fn: (start: () => void) => Promise<LoadResult>,
  timed = false,
): Promise<Measured> {
  let last: Measured | null = null;
  for (let attempt = 1; attempt <= 3; attempt++) {
    const quiet = await waitQuiet([ex.server.pid, process.pid, ...others], {
      maxWaitMs: attempt === 1 ? s.quiet_wait_ms : s.quiet_wait_ms / 2,
      windowMs: 500,
      windows: 2,
    });
    const pids: Record<string, number> = { server: ex.server.pid, generator: process.pid };
    others.forEach((p, i) => (pids[`other${i}`] = p));
    const admin = { adminBase: ex.server.adminBase, token: TOKEN };
    const before = timed ? await readLatency(admin) : null;
    let w = new CpuWindow(pids);
    // A run that signs ahead opens the window again when its sending starts (runLoad's onStart).
    const value = await fn(() => (w = new CpuWindow(pids)));
    const cpu = w.stop();
    const after = before !== null ? await readLatency(admin) : null;
    let own = 0;
    for (const v of Object.values(cpu.process_pct)) own += Number.isFinite(v) ? v : 0;
    last = {
      value,
      server_pct: cpu.process_pct.server!,
      generator_pct: cpu.process_pct.generator!,
      foreign_pct: round1(cpu.machine_pct - own),
      attempts: attempt,
      quiet,
    };
    if (before !== null && after !== null)
      last.server = { stages: serverStages(before, after, 'rest', 'place_order'), fsync: fsyncSummary(before, after) };
    if (!ex.server.running) throw new Error(`the ${ex.mode} exchange died: ${ex.server.stderrTail().slice(-2000)}`);
    if (last.foreign_pct <= FOREIGN_REDO_PCT) break;
  }
  return last!;
}

/** A closed loop; `ahead`: sign ahead at the rate a probe measured (the peak runs). */
function closed(
  s: Settings,
  ex: Exchange,
  connections: number,
  durationMs: number,
  seed: number,
  ahead?: { rate: number; start: () => void },
): Promise<LoadResult> {
  const ks: { keyId: number; secret: string }[] = [];
  for (let i = 0; i < connections; i++) ks.push(ex.keys[(ex.offset + i) % ex.keys.length]!);
  ex.offset = (ex.offset + connections) % ex.keys.length;
  // Every run gets its own seed: the generator derives its client_order_id nonce from it.
  const runSeed = (seed + 0x9e3779b1 * ++ex.runs) >>> 0;
  return runLoad({
    baseUrl: ex.server.base,
    keys: ks,
    markets: [ex.market],
    mode: 'closed',
    connections,
    durationMs,
    mix: { place: 1, cancel: 0, read: 0 },
    workers: s.workers,
    seed: runSeed,
    mid: MID,
    spread: SPREAD,
    presign: ahead !== undefined && ahead.rate > 0,
    expectedRate: ahead?.rate,
    onStart: ahead?.start,
  });
}

/** An open loop, signed ahead (every due request, stamped with its due time). */
function open(
  s: Settings,
  ex: Exchange,
  connections: number,
  rate: number,
  seed: number,
  start: () => void,
  durationMs = s.open_ms,
): Promise<LoadResult> {
  const runSeed = (seed + 0x9e3779b1 * ++ex.runs) >>> 0;
  return runLoad({
    baseUrl: ex.server.base,
    keys: ex.keys,
    markets: [ex.market],
    mode: 'open',
    rate,
    connections,
    durationMs,
    mix: { place: 1, cancel: 0, read: 0 },
    workers: s.workers,
    seed: runSeed,
    mid: MID,
    spread: SPREAD,
    presign: true,
    onStart: start,
  });
}

// ------------------------------------------------------------------ phase 1: throughput and latency

interface Probe {
  connections: number;
  per_s: number;
  per_key_per_s: number;
  statuses: Record<string, number>;
  accepted: boolean;
}

interface ModeResult {
  setup_ms: number;
  probes: Probe[];
  connections: number;
  place: Measured[];
  /** Open loop at half of the peak (fsync: the curve's 50% point). */
  open: Measured;
  open_rate: number;
  /** Open loops at fractions of the peak (fsync only): where the tail comes from. */
  curve: { fraction: number; rate: number; m: Measured }[];
}

async function throughputPhase(s: Settings, seed: number): Promise<Record<Mode, ModeResult>> {
  const dirs = { fsync: mkdtempSync(join(tmpdir(), 'dx-bench-fsync-')), none: mkdtempSync(join(tmpdir(), 'dx-bench-none-')) };
  const exs: Partial<Record<Mode, Exchange>> = {};
  try {
    for (const mode of MODES) {
      const server = await startServer(dirs[mode], mode, s);
      exs[mode] = { mode, server, dir: dirs[mode], market: 0, keys: [], setup_ms: 0, offset: 0, runs: 0 };
      exs[mode] = await population(server, mode, dirs[mode], s.keys, s);
    }
    const ex = exs as Record<Mode, Exchange>;
    const other = (m: Mode): number[] => [ex[m === 'fsync' ? 'none' : 'fsync'].server.pid];

    // Probes: per mode, the connection count with the most 2xx placements and no key near its bucket.
    const probes: Record<Mode, Probe[]> = { fsync: [], none: [] };
    for (const c of s.connections) {
      if (c > s.keys) continue;
      for (const mode of MODES) {
        const m = await measured(s, ex[mode], other(mode), () => closed(s, ex[mode], c, s.probe_ms, seed));
        const perS = okRate(m.value);
        const perKey = perS / c;
        probes[mode].push({
          connections: c,
          per_s: perS,
          per_key_per_s: round1(perKey),
          statuses: m.value.statuses,
          accepted: (m.value.statuses['429'] ?? 0) === 0, // keys never throttle (bench/lib/tiers.ts): a 429 is a fault
        });
      }
    }
    const chosen = (mode: Mode): number => {
      const ok = probes[mode].filter((p) => p.accepted).sort((a, b) => b.per_s - a.per_s);
      return ok.length > 0 ? ok[0]!.connections : Math.max(...probes[mode].map((p) => p.connections));
    };
    const conns: Record<Mode, number> = { fsync: chosen('fsync'), none: chosen('none') };

    // Repeats, interleaved: fsync none | none fsync | fsync none ...
    const place: Record<Mode, Measured[]> = { fsync: [], none: [] };
    for (let i = 0; i < s.repeats; i++) {
      const order: Mode[] = i % 2 === 0 ? ['fsync', 'none'] : ['none', 'fsync'];
      for (const mode of order) {
        const rate = probes[mode].find((p) => p.connections === conns[mode])!.per_s;
        place[mode].push(
          await measured(s, ex[mode], other(mode), (start) => closed(s, ex[mode], conns[mode], s.run_ms, seed, { rate, start })),
        );
      }
    }

    // Latency against load, fsync: open loops at 1%, 10%, 25% and 50% of the
    // median peak, each with the server's own stage histograms over the run.
    // If the tail stays where it is at a hundredth of the peak, it is not
    // queueing but the hand-offs, a stall, or the machine.
    const curve: ModeResult['curve'] = [];
    const openAt = (x: Exchange, r: number) => (go: () => void) => open(s, x, CURVE_CONNECTIONS, r, seed, go, s.curve_ms);
    for (const fraction of CURVE_FRACTIONS) {
      const rate = Math.max(1, Math.round(median(place.fsync.map((m) => okRate(m.value))) * fraction));
      const m = await measured(s, ex.fsync, other('fsync'), openAt(ex.fsync, rate), true);
      curve.push({ fraction, rate, m });
    }
    const half = curve.find((c) => c.fraction === 0.5)!;
    // none (benchmarks only): its own half of peak, as the fsync curve's half-peak point runs (one measurement per report row).
    const noneRate = Math.max(1, Math.round(median(place.none.map((m) => okRate(m.value))) / 2));
    const noneOpen = await measured(s, ex.none, other('none'), openAt(ex.none, noneRate), true);
    return {
      fsync: {
        setup_ms: ex.fsync.setup_ms,
        probes: probes.fsync,
        connections: conns.fsync,
        place: place.fsync,
        open: half.m,
        open_rate: half.rate,
        curve,
      },
      none: {
        setup_ms: ex.none.setup_ms,
        probes: probes.none,
        connections: conns.none,
        place: place.none,
        open: noneOpen,
        open_rate: noneRate,
        curve: [],
      },
    };
  } finally {
    await stopExchanges(exs, dirs);
  }
}

/** Stops both modes' exchanges (saying on stderr when one did not end cleanly) and removes their data directories. */
async function stopExchanges(exs: Partial<Record<Mode, Exchange>>, dirs: Record<Mode, string>): Promise<void> {
  for (const mode of MODES) {
    const e = exs[mode];
    if (e === undefined) continue;
    const how = await stopServer(e.server);
    if (how.killed || how.code !== 0)
      process.stderr.write(
        `durable_place: the ${mode} exchange ended with code ${how.code} signal ` +
          `${how.signal}${how.killed ? ' (SIGKILL after SIGTERM timed out)' : ''}\n`,
      );
  }
  for (const d of Object.values(dirs)) rmSync(d, { recursive: true, force: true });
}

// ------------------------------------------------------------------ phase 2: recovery

interface JournalStats {
  events: number;
  segments: number;
  bytes: number;
  last_seq: number;
}

/** Counts the records in the data directory's segments (checksums verified by the scan). */
function journalStats(dir: string): JournalStats {
  let events = 0;
  let bytes = 0;
  let lastSeq = 0;
  let expect: number | null = null;
  const segs = listSegments(dir);
  for (const f of segs) {
    const b = readWhole(f.path);
    const scan = scanSegment(f.path, b, expect);
    events += scan.records;
    bytes += b.length;
    lastSeq = Math.max(lastSeq, scan.lastSeq);
    expect = scan.lastSeq + 1;
  }
  return { events, segments: segs.length, bytes, last_seq: lastSeq };
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const st = statSync(join(dir, name));
    if (st.isFile()) n += st.size;
  }
  return n;
}

interface ColdStart {
  spawn_to_ready_ms: number;
  recovery_log_ms: number;
  seq: number;
  snapshot_seq: number;
  replayed_commands: number;
}

/** Starts the real server on `dir` (fsync, the production mode), times spawn to `ready`, reads its recovery line, stops it. */
async function coldStart(dir: string, s: Settings): Promise<ColdStart> {
  const server = await startServer(dir, 'fsync', s, { snapshotEvery: 1_000_000_000, logLevel: 'info' });
  try {
    const rec = server.recovery();
    if (rec === null) throw new Error(`cold start on ${dir}: no recovery line; stderr: ${server.stderrTail().slice(-1500)}`);
    return {
      spawn_to_ready_ms: Math.round(server.spawnToReadyMs),
      recovery_log_ms: rec.ms,
      seq: rec.seq,
      snapshot_seq: rec.snapshot_seq,
      replayed_commands: rec.replayed_commands,
    };
  } finally {
    await stopServer(server);
  }
}

interface RecoveryResult {
  build_ms: number;
  build_runs: number;
  journal: JournalStats;
  data_dir_bytes: number;
  full: ColdStart[];
  empty: ColdStart[];
  snapshot: { seq: number; ms: number; bytes: number };
  from_snapshot: ColdStart[];
  reached: boolean;
}

/**
 * Builds a journal of s.journal_events events (or what s.build_max_ms
 * allows) in `dir` through the real server: durability none to build fast
 * (the journal's content is the same), no periodic snapshot, placements and
 * cancels 4:1 in closed-loop runs. Returns how many runs it took.
 */
async function buildJournal(dir: string, s: Settings, seed: number): Promise<number> {
  const t0 = performance.now();
  const server = await startServer(dir, 'none', s, { snapshotEvery: 1_000_000_000 });
  let runs = 0;
  try {
    const ex = await population(server, 'none', dir, Math.min(512, s.keys), s);
    const admin = server.admin(60_000);
    while (performance.now() - t0 < s.build_max_ms) {
      const records = ((await admin.health()).journal as { records: number }).records;
      if (records >= s.journal_events) break;
      const ks = ex.keys;
      await runLoad({
        baseUrl: server.base,
        keys: ks,
        markets: [ex.market],
        mode: 'closed',
        connections: ks.length,
        durationMs: s.build_run_ms,
        mix: { place: 4, cancel: 1, read: 0 },
        workers: s.workers,
        seed: (seed + 0x51ed27 * ++runs) >>> 0,
        mid: MID,
        spread: SPREAD,
      });
      if (!server.running) throw new Error(`the build exchange died: ${server.stderrTail().slice(-2000)}`);
    }
  } finally {
    const how = await stopServer(server);
    if (how.killed || how.code !== 0) throw new Error(`the build exchange ended with code ${how.code} signal ${how.signal}`);
  }
  return runs;
}

async function recoveryPhase(s: Settings, seed: number): Promise<RecoveryResult> {
  const dir = mkdtempSync(join(tmpdir(), 'dx-bench-recovery-'));
  const emptyDir = mkdtempSync(join(tmpdir(), 'dx-bench-empty-'));
  try {
    const t0 = performance.now();
    const runs = await buildJournal(dir, s, seed);
    const buildMs = Math.round(performance.now() - t0);
    const journal = journalStats(dir);
    const full: ColdStart[] = [];
    const empty: ColdStart[] = [];
    for (let i = 0; i < s.cold_starts; i++) {
      await waitQuiet([process.pid], { maxWaitMs: s.quiet_wait_ms / 2, windowMs: 500, windows: 2 });
      full.push(await coldStart(dir, s));
      empty.push(await coldStart(emptyDir, s));
    }
    // One snapshot at the end of the journal, then starts from it.
    const snapServer = await startServer(dir, 'fsync', s, { snapshotEvery: 1_000_000_000, logLevel: 'info' });
    let snapshot: RecoveryResult['snapshot'];
    try {
      const ts = performance.now();
      const r = await snapServer.admin(600_000).snapshot();
      snapshot = { seq: Number(r.seq), ms: Math.round(performance.now() - ts), bytes: statSync(r.path).size };
    } finally {
      await stopServer(snapServer);
    }
    const fromSnapshot: ColdStart[] = [];
    for (let i = 0; i < s.cold_starts; i++) fromSnapshot.push(await coldStart(dir, s));
    return {
      build_ms: buildMs,
      build_runs: runs,
      journal,
      data_dir_bytes: dirBytes(dir),
      full,
      empty,
      snapshot,
      from_snapshot: fromSnapshot,
      reached: journal.events >= s.journal_events,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  }
}

// ------------------------------------------------------------------ result

/** The fsync curve's figures per fraction of the peak: client-side (the generator) beside server-side (the exchange's stages). */
function curveMetrics(metrics: Record<string, number>, curve: ModeResult['curve']): void {
  const us = (ms: number): number => Math.round(ms * 1000);
  for (const c of curve) {
    const pct = Math.round(c.fraction * 100);
    const p = `fsync_at_${pct}pct`;
    const o = c.m.value;
    metrics[`${p}_rate_per_s`] = c.rate;
    putLatencyUs(metrics, `${p}_`, o.latency_ms, ['p50', 'p99', 'p999', 'max']);
    metrics[`${p}_send_lag_p99_us`] = us(o.send_lag_ms.p99);
    metrics[`${p}_server_cpu_pct`] = round1(c.m.server_pct);
    metrics[`${p}_generator_cpu_pct`] = round1(c.m.generator_pct);
    // The issue-13 keys: server-side (the exchange's own histograms over the run) beside client-side.
    for (const q of ['p50', 'p99', 'p999', 'max'] as const) metrics[`client_${q}_us_${pct}pct`] = us(o.latency_ms[q]);
    const srv = c.m.server;
    if (srv !== undefined) {
      const t = srv.stages.total!;
      metrics[`server_p50_us_${pct}pct`] = t.p50_us;
      metrics[`server_p99_us_${pct}pct`] = t.p99_us;
      metrics[`server_p999_us_${pct}pct`] = t.p999_us;
      metrics[`server_max_us_${pct}pct`] = t.max_us;
      metrics[`server_count_${pct}pct`] = t.count;
      for (const [stage, x] of Object.entries(srv.stages)) {
        if (stage === 'total' || x.count === 0) continue;
        metrics[`stage_${stage}_p50_us_${pct}pct`] = x.p50_us;
        metrics[`stage_${stage}_p99_us_${pct}pct`] = x.p99_us;
        metrics[`stage_${stage}_max_us_${pct}pct`] = x.max_us;
      }
      metrics[`journal_fsync_p50_us_${pct}pct`] = srv.fsync.p50_us;
      metrics[`journal_fsync_p99_us_${pct}pct`] = srv.fsync.p99_us;
      metrics[`journal_fsync_max_us_${pct}pct`] = srv.fsync.max_us;
    }
  }
}

/** The recovery phase's figures: the journal, cold starts replaying it, an empty start, a snapshot and starts from it. */
function recoveryMetrics(metrics: Record<string, number>, rc: RecoveryResult): { emptyReady: number; emptyLog: number } {
  const million = rc.journal.events / 1e6;
  const fullReady = median(rc.full.map((c) => c.spawn_to_ready_ms));
  const fullLog = median(rc.full.map((c) => c.recovery_log_ms));
  const emptyReady = median(rc.empty.map((c) => c.spawn_to_ready_ms));
  const emptyLog = median(rc.empty.map((c) => c.recovery_log_ms));
  metrics.journal_events = rc.journal.events;
  metrics.journal_commands = rc.journal.last_seq;
  metrics.journal_segments = rc.journal.segments;
  metrics.journal_mib = round1(rc.journal.bytes / 2 ** 20);
  metrics.journal_build_ms = rc.build_ms;
  triple(
    metrics,
    'recovery_spawn_to_ready_ms',
    rc.full.map((c) => c.spawn_to_ready_ms),
  );
  triple(
    metrics,
    'recovery_log_ms',
    rc.full.map((c) => c.recovery_log_ms),
  );
  metrics.recovery_s_per_million_events = round3(fullReady / 1000 / million);
  metrics.recovery_log_s_per_million_events = round3(fullLog / 1000 / million);
  metrics.empty_start_spawn_to_ready_ms = round1(emptyReady);
  metrics.empty_start_recovery_log_ms = round1(emptyLog);
  metrics.replay_s_per_million_events = round3((fullReady - emptyReady) / 1000 / million);
  metrics.snapshot_seq = rc.snapshot.seq;
  metrics.snapshot_write_ms = rc.snapshot.ms;
  metrics.snapshot_mib = round1(rc.snapshot.bytes / 2 ** 20);
  triple(
    metrics,
    'from_snapshot_spawn_to_ready_ms',
    rc.from_snapshot.map((c) => c.spawn_to_ready_ms),
  );
  metrics.from_snapshot_recovery_log_ms = round1(median(rc.from_snapshot.map((c) => c.recovery_log_ms)));

  return { emptyReady, emptyLog };
}

/** The disk's own figures: the short probe (its floor) and the long window (its stalls). */
function putDisk(metrics: Record<string, number>, notes: string[], disk: DiskFloor, diskWindow: DiskFloor, windowMs: number): void {
  metrics.disk_fdatasync_4k_p50_us = disk.p50_us;
  metrics.disk_fdatasync_4k_p99_us = disk.p99_us;
  metrics.disk_fdatasync_4k_p999_us = disk.p999_us;
  metrics.disk_fdatasync_4k_max_us = disk.max_us;
  notes.push(
    `the disk's own floor: ${disk.samples} appends of 4 KiB + fdatasync to a file in ${tmpdir()} (where the exchanges' data directories ` +
      `are), each timed: p50/p99/p99.9/max ${disk.p50_us}/${disk.p99_us}/${disk.p999_us}/${disk.max_us} us. With fsync on, every answer ` +
        `waits for at least one such sync, so the placement p99 cannot be below this p99.`,
  );
  const perMin = round1((diskWindow.stalls * 60_000) / windowMs);
  metrics.disk_window_fdatasync_4k_p99_us = diskWindow.p99_us;
  metrics.disk_window_fdatasync_4k_p999_us = diskWindow.p999_us;
  metrics.disk_window_fdatasync_4k_max_us = diskWindow.max_us;
  metrics.disk_window_stalls_per_min = perMin;
  metrics.disk_window_s = windowMs / 1000;
  notes.push(
    `the disk over ${windowMs / 1000} s (one 4 KiB append + fdatasync every ms, ${diskWindow.samples} syncs): ` +
      `p50/p99/p99.9/max ${diskWindow.p50_us}/${diskWindow.p99_us}/${diskWindow.p999_us}/${diskWindow.max_us} us, ` +
        `${diskWindow.stalls} syncs over ${STALL_US / 1000} ms (${perMin} per minute). Every placement that arrives during such a stall ` +
          `waits for it, so at thousands of placements/s a few stalls a minute reach the placements' p99 though not the disk's.`,
  );
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const s = settings(opts.quick === true);
  const seed = 0x6a09e667;
  const t0 = performance.now();
  // The uWS hello-world ceiling in this same run, so the target's ratio is of one run.
  const hello = await helloPhase(gatewaySettings(s.quick), seed);
  // And with wrk (bench/lib/wrk.ts), the generator that costs least: issue 13's ceiling.
  const wrk = await wrkHelloPhase(gatewaySettings(s.quick), hello.connections);
  const disk = diskFloor(s.quick ? 500 : 3000);
  const windowMs = s.quick ? 2000 : DISK_WINDOW_MS;
  const diskWindow = diskOverWindow(windowMs, 1);
  const tp = await throughputPhase(s, seed);
  const rc = await recoveryPhase(s, seed);
  const wallS = Math.round((performance.now() - t0) / 1000);

  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  const flag = (what: string): void => {
    notes.push(`FLAG ${what}`);
  };
  const us = (ms: number): number => Math.round(ms * 1000);

  // Throughput first (run.ts prints the first *_per_s metric): fsync, then none.
  const rates: Record<Mode, number[]> = {
    fsync: tp.fsync.place.map((m) => okRate(m.value)),
    none: tp.none.place.map((m) => okRate(m.value)),
  };
  const fsyncMed = triple(metrics, 'fsync_placements_per_s', rates.fsync);
  const noneMed = triple(metrics, 'none_placements_per_s', rates.none);
  for (const mode of MODES) {
    const o = tp[mode].open.value;
    metrics[`${mode}_open_rate_per_s`] = tp[mode].open_rate;
    metrics[`${mode}_open_achieved_per_s`] = okRate(o);
    putLatencyUs(metrics, `${mode}_`, o.latency_ms);
    metrics[`${mode}_open_send_lag_p99_us`] = us(o.send_lag_ms.p99);
    metrics[`${mode}_open_unsent`] = o.unsent;
    metrics[`${mode}_open_errors`] = o.errors;
    metrics[`${mode}_closed_p50_us`] = us(median(tp[mode].place.map((m) => m.value.latency_ms.p50)));
    metrics[`${mode}_closed_p99_us`] = us(median(tp[mode].place.map((m) => m.value.latency_ms.p99)));
    metrics[`${mode}_connections`] = tp[mode].connections;
    metrics[`${mode}_server_cpu_pct`] = round1(median(tp[mode].place.map((m) => m.server_pct)));
    metrics[`${mode}_generator_cpu_pct`] = round1(median(tp[mode].place.map((m) => m.generator_pct)));
    metrics[`${mode}_foreign_cpu_pct_max`] = round1(maxOf([...tp[mode].place, tp[mode].open].map((m) => m.foreign_pct)));
    metrics[`${mode}_setup_ms`] = tp[mode].setup_ms;
    for (const p of tp[mode].probes) metrics[`${mode}_probe_c${p.connections}_per_s`] = p.per_s;
    const statuses: Record<string, number> = {};
    for (const m of tp[mode].place) for (const [k, v] of Object.entries(m.value.statuses)) statuses[k] = (statuses[k] ?? 0) + v;
    for (const [k, v] of Object.entries(statuses)) metrics[`${mode}_placements_status_${k}`] = v;
    for (const [k, v] of Object.entries(o.statuses)) metrics[`${mode}_open_status_${k}`] = v;
  }
  const ratio = noneMed > 0 ? fsyncMed / noneMed : NaN;
  metrics.fsync_vs_none_throughput = round3(ratio);
  putDisk(metrics, notes, disk, diskWindow, windowMs);
  const helloRates = hello.runs.map((m) => okRate(m.value));
  const helloMed = median(helloRates);
  notes.push(
    `uWS hello-world ceiling in this run (test/support/loadgen/hello_server.js, GET / closed loop, ${hello.connections} connections, ` +
      `${helloRates.length} runs): ${Math.round(helloMed).toLocaleString('en-US')} requests/s ` +
        `[${helloRates.map((r) => Math.round(r).toLocaleString('en-US')).join(', ')}]; signed durable placements = ` +
          `${round1((fsyncMed / helloMed) * 100)}% of it (target >= 40%).`,
  );
  const wrkMed = wrk === null ? NaN : median(wrk.runs.map((m) => m.value.requests_per_s));
  if (wrk !== null) {
    metrics.hello_wrk_requests_per_s = round1(wrkMed);
    notes.push(
      `uWS hello-world ceiling with wrk in this run (${wrk.connections} connections, ${wrk.runs.length} runs): ` +
        `${Math.round(wrkMed).toLocaleString('en-US')} requests/s; signed durable placements = ${round1((fsyncMed / wrkMed) * 100)}% of ` +
          `it (target >= 40%).`,
    );
  } else flag('wrk is not installed: no wrk hello ceiling in this run');
  curveMetrics(metrics, tp.fsync.curve);
  if (tp.none.open.server !== undefined) putServer(metrics, 'none_', tp.none.open.server.stages.total!);
  const signedRuns = [...tp.fsync.place, ...tp.none.place, ...tp.fsync.curve.map((c) => c.m), tp.none.open];
  const signed = presignMetrics(metrics, signedRuns);
  notes.push(
    `signing ahead: the closed-loop runs and the open loops signed ${signed} requests in the generator's workers before sending started ` +
      `(${metrics.presign_cpu_us_per_req} µs of worker CPU each, outside the runs' CPU windows); ${metrics.presign_inline} were signed ` +
        `when sent instead (past the signed ones, or a stamp over 3 s off). Probes sign when sending.`,
  );

  const { emptyReady, emptyLog } = recoveryMetrics(metrics, rc);

  // Settings.
  metrics.gateways = s.gateways;
  metrics.loadgen_workers = s.workers;
  metrics.keys = s.keys;
  metrics.run_ms = s.run_ms;
  metrics.probe_ms = s.probe_ms;
  metrics.open_ms = s.open_ms;
  metrics.repeats = s.repeats;
  metrics.cold_starts = s.cold_starts;
  metrics.wall_s = wallS;
  const all = [...tp.fsync.place, ...tp.none.place, tp.fsync.open, tp.none.open];
  metrics.redone_runs = all.reduce((a, m) => a + m.attempts - 1, 0);

  notes.push(
    `${NONE_LABEL}: every figure named none_* (and the peer durability_none) was taken with --durability none, where the journal writes ` +
      `without fdatasync; it exists for benchmarks only. fsync_* figures are the production mode: an answer waits for the group-commit ` +
        `fdatasync that covers its command.`,
  );
  notes.push(
    `target fsync throughput >= 50% of none: ${(ratio * 100).toFixed(1)}% (${Math.round(fsyncMed)}/s vs ${Math.round(noneMed)}/s, ` +
      `medians of ${s.repeats} interleaved closed-loop runs of ${s.run_ms} ms) — ${ratio >= 0.5 ? 'met' : 'NOT met'}.`,
  );
  notes.push(
    `target recovery <= 3 s per 1,000,000 journaled events: ${metrics.recovery_s_per_million_events} s per million from spawn to the ` +
      `ready line (median of ${s.cold_starts} cold starts replaying ${rc.journal.events} events = ${rc.journal.last_seq} commands, ` +
        `${metrics.journal_mib} MiB, no snapshot) — ${metrics.recovery_s_per_million_events! <= 3 ? 'met' : 'NOT met'}. The recovery log ` +
          `line's own ms give ${metrics.recovery_log_s_per_million_events} s per million; a start on an empty directory takes ` +
            `${emptyReady} ms to ready (${emptyLog} ms in its recovery line), so the replay itself costs about ` +
              `${metrics.replay_s_per_million_events} s per million.`,
  );
  notes.push(
    `recovery: the start plans in a piscina worker (every segment checksummed), then the engine thread, each of the ${s.gateways} ` +
      `gateway thread(s) and the control plane load and replay the same records in parallel; the ready line comes after all of them. ` +
        `Cold start = a new process; the segment files were in the page cache (no cache drop: not possible without root), so disk read ` +
          `time is not in these figures.`,
  );
  notes.push(
    `journal built through the real server (durability none, to build faster; the records are the same) with the load generator's ` +
      `placements and cancels (4:1) from ${Math.min(512, s.keys)} keys in ${rc.build_runs} closed-loop runs of ${s.build_run_ms} ms, ` +
        `${rc.build_ms} ms in all; events counted from the segment files (every frame's checksum ` +
          'verified).' +
          (rc.reached
            ? ''
            : ` It did NOT reach ${s.journal_events} events within ${s.build_max_ms} ms: ` +
              `the per-million figure is scaled from ${rc.journal.events}.`),
  );
  notes.push(
    `snapshot for comparison: POST /admin/snapshot at seq ${rc.snapshot.seq} took ${rc.snapshot.ms} ms (${metrics.snapshot_mib} MiB; the ` +
      `piscina worker replays the journal to build it), after which a start is ready in ${metrics.from_snapshot_spawn_to_ready_ms} ms ` +
        `(recovery line ${metrics.from_snapshot_recovery_log_ms} ms).`,
  );
  notes.push(
    'connections: the generator binds each connection to one key, and every key is on a custom tier that never throttles (the ' +
      `bucket is still taken per request); the best probe with no 429 is chosen; probes (${s.probe_ms} ms): ` +
        MODES.map((m) => {
          const probes = tp[m].probes.map((p) => `${p.connections}: ${Math.round(p.per_s)}/s${p.accepted ? '' : ' (rejected)'}`);
          return `${m}: ${probes.join(', ')} -> ${tp[m].connections}`;
        }).join('; ') + '.',
  );
  notes.push(
    `both exchanges ran side by side (${s.gateways} gateway thread(s) each, separate processes and data directories under ${tmpdir()} on ` +
      `the same disk); the idle one's CPU is counted as ours, not foreign. Setup: ${s.keys} accounts per exchange, one key each, ` +
        `${s.seed_shares} YES+NO shares minted per account (fsync ${tp.fsync.setup_ms} ms, none ${tp.none.setup_ms} ms). Orders: the ` +
          `load generator's place op (YES-space ${MID}+-${SPREAD}, both outcomes, 70% buys / 30% sells, qty 1..10), no cancels, the book ` +
            `grows during the run.`,
  );
  notes.push(
    `open loop latency from the intended send time at half of each mode's median closed-loop peak: fsync ${tp.fsync.open_rate}/s ` +
      `p50/p99/p99.9 ${metrics.fsync_p50_us}/${metrics.fsync_p99_us}/${metrics.fsync_p999_us} us; none (benchmarks only) ` +
        `${tp.none.open_rate}/s ${metrics.none_p50_us}/${metrics.none_p99_us}/${metrics.none_p999_us} us. The generator's own send lag ` +
          `p99: fsync ${metrics.fsync_open_send_lag_p99_us} us, none ${metrics.none_open_send_lag_p99_us} us.`,
  );
  notes.push(
    `latency against load (fsync, open loop at ${CURVE_CONNECTIONS} connections, ${s.curve_ms} ms each; client = the load generator from ` +
      `the intended send time, server = the exchange's own histograms over the same run, head to reply written): ` +
        tp.fsync.curve.map((c) => {
          const l = c.m.value.latency_ms;
          const t = c.m.server?.stages.total;
          const server = t ? `${t.p50_us}/${t.p99_us}/${t.p999_us}/${t.max_us}` : '–';
          return `${Math.round(c.fraction * 100)}% of peak = ${c.rate}/s: client p50/p99/p99.9/max ` +
            `${us(l.p50)}/${us(l.p99)}/${us(l.p999)}/${us(l.max)} us, server ${server} us ` +
            `(generator send lag p99 ${us(c.m.value.send_lag_ms.p99)} us; server ${round1(c.m.server_pct)}%, ` +
            `generator ${round1(c.m.generator_pct)}% CPU)`;
        }).join('; ') + '.',
  );
  for (const c of tp.fsync.curve)
    if (c.m.server)
      notes.push(
        `stages at ${Math.round(c.fraction * 100)}% of peak: ${stagesLine(c.m.server.stages)}; journal write+fdatasync ` +
          `${c.m.server.fsync.p50_us}/${c.m.server.fsync.p99_us}/${c.m.server.fsync.max_us} (p50/p99/max µs, ${c.m.server.fsync.count} ` +
            `group commits).`,
      );
  const diskP99 = disk.p99_us;
  const srvTarget = (pct: number, q: 'p99' | 'p999', budget: number): void => {
    const v = metrics[`server_${q}_us_${pct}pct`];
    if (v === undefined) return;
    notes.push(
      `target server-side ${q === 'p999' ? 'p99.9' : 'p99'} at ${pct}% of peak <= ${budget / 1000} ms + the disk's fdatasync p99 ` +
        `(${diskP99} us) = ${budget + diskP99} us: ${v} us — ${v <= budget + diskP99 ? 'met' : 'NOT met'}.`,
    );
  };
  for (const pct of [1, 10, 25]) {
    srvTarget(pct, 'p99', 1000);
    srvTarget(pct, 'p999', 3000);
  }
  srvTarget(50, 'p99', 2000);
  if (metrics.client_p99_us_10pct !== undefined)
    notes.push(
      `target client-side p99 at 10% of peak <= 3 ms: ${metrics.client_p99_us_10pct} us — ` +
        `${metrics.client_p99_us_10pct <= 3000 ? 'met' : 'NOT met'}.`,
    );
  for (const [name, xs] of [
    ['fsync_placements_per_s', rates.fsync],
    ['none_placements_per_s', rates.none],
    ['recovery_spawn_to_ready_ms', rc.full.map((c) => c.spawn_to_ready_ms)],
  ] as const) {
    if (xs.length > 1 && relativeSpread(xs) > SPREAD_FLAG)
      flag(
        `${name} spread ${(relativeSpread(xs) * 100).toFixed(1)}% over ${xs.length} runs (> ${SPREAD_FLAG * 100}%): ` +
          `${xs.map((x) => Math.round(x)).join(', ')}`,
      );
  }
  flagSharedMachine(all, flag);
  for (const mode of MODES) {
    const bad = Object.entries(tp[mode].open.value.statuses).filter(([k]) => !/^2/.test(k));
    if (bad.length > 0 || tp[mode].open.value.unsent > 0)
      flag(`${mode} open loop: non-2xx ${JSON.stringify(Object.fromEntries(bad))}, unsent ${tp[mode].open.value.unsent}`);
    if (tp[mode].probes.every((p) => !p.accepted))
      flag(`${mode}: no probed connection count avoided the per-key write bucket; ran at ${tp[mode].connections}`);
  }
  for (const c of rc.full) if (c.snapshot_seq !== 0) flag(`a full-replay cold start used a snapshot at ${c.snapshot_seq}`);
  if (rc.full.some((c) => c.seq !== rc.journal.last_seq))
    flag(`a cold start recovered seq ${rc.full.map((c) => c.seq).join('/')}, the journal ends at ${rc.journal.last_seq}`);
  if (s.quick) notes.push('QUICK run: short runs and a smaller journal, for checking the tooling; not figures to quote.');

  const env = environment();
  return {
    name: 'durable_place',
    node: env.node,
    machine: env.machine,
    workload: `Two exchange processes side by side on 127.0.0.1 (demo off), --durability fsync and --durability none (${NONE_LABEL}), ` +
      `${s.gateways} gateway thread(s) each, one market, ${s.keys} funded accounts with one key each; test/support/loadgen (${s.workers} ` +
        `piscina worker(s), raw transport) signed POST /v1/portfolio/orders: closed-loop probes, ${s.repeats} interleaved closed-loop ` +
          `runs of ${s.run_ms} ms per mode, open loops at ${CURVE_FRACTIONS.map((f) => `${f * 100}%`).join(', ')} of the fsync peak ` +
            `(${s.curve_ms} ms each, ${CURVE_CONNECTIONS} connections, the exchange's own stage histograms read before and after each) ` +
              `and one of ${s.curve_ms} ms (${CURVE_CONNECTIONS} connections) at half the none peak. ` +
              `Recovery: a journal of ${rc.journal.events} events ` +
                `(${rc.journal.last_seq} commands) built through the server, ${s.cold_starts} cold starts of dist/src/main/exchange.js ` +
                  `on it (no snapshot), ${s.cold_starts} on an empty directory, ${s.cold_starts} from a snapshot. Seed ${seed}.`,
    metrics,
    peers: {
      durability_none_benchmarks_only: {
        placements_per_s: round1(noneMed),
        p50_us: metrics.none_p50_us!,
        p99_us: metrics.none_p99_us!,
        p999_us: metrics.none_p999_us!,
        open_rate_per_s: tp.none.open_rate,
      },
      uws_hello: {
        requests_per_s: round1(helloMed),
        requests_per_s_min: round1(minOf(helloRates)),
        requests_per_s_max: round1(maxOf(helloRates)),
        connections: hello.connections,
        server_cpu_pct: round1(median(hello.runs.map((m) => m.server_pct))),
        generator_cpu_pct: round1(median(hello.runs.map((m) => m.generator_pct))),
      },
    },
    ratios: { vs_durability_none: round3(ratio), vs_uws_hello: round3(fsyncMed / helloMed), vs_uws_hello_wrk: round3(fsyncMed / wrkMed) },
    notes,
  };
}
