// exchange: the process entry point. Wires the pipeline with numbered stages:
//   0. recovery plan (piscina): segments and snapshots checked, a torn tail cut
//   1. engine thread (pipeline.ts): recovers its state, then command rings in,
//      event ring out
//   2. journal thread: appends the event ring to disk, publishes durable_seq
//   3. gateway threads (gateway_thread.ts): recover their read models, then
//      REST on the public port, one ring each
//   4. control plane and keys service on this (main) thread, ring 1
//   5. the clock starts: it runs in the engine loop (a ClockTick when the
//      next timer is due: expiry, dead-man, rounds, oracle staleness); what
//      fell due while the exchange was down is sequenced and made durable,
//      then the listeners open
// then prints one `ready` line. Every thread waits by its wait strategy
// (DX_WAIT), so an idle exchange sleeps.
//
// With --replicate on|replica (src/main/replication.ts, src/replication/): the
// log is checked before recovery (stage 0), durable_seq becomes
// min(fsynced, replicated), a standby's engine folds the event ring until it
// is promoted (stage 1; its loop, and so its clock, runs only from then), a
// read replica has no engine and no journal, and the replication thread
// starts once every reader of the event ring is in (stage 4). SIGTERM/SIGINT: close the listeners, answer
// what is held, stop the engine (it drains its rings), let the journal drain
// and fsync, exit 0.

import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, renameSync, statfsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { KEY_ROUTES } from '../keys_service/routes.js';
import { DataDirLock, EXIT_IN_USE } from './data_dir_lock.js';
import { mountAdmin } from '../admin/admin.js';
import { ReplayGuard } from '../gateway/auth.js';
import { TokenBuckets } from '../gateway/buckets.js';
import { GatewayCore } from '../gateway/core.js';
import { flushClientLog, mountRest } from '../gateway/http.js';
import { loadSite, mountSite, siteBytes, type StaticSite } from '../gateway/static_site.js';
import { uws, type ListenSocket } from '../gateway/uws.js';
import { ApiError } from '../gateway/envelope.js';
import { DurableSeq } from '../journal/durable.js';
import { cutToSyncedMarker } from '../journal/cut.js';
import { EXIT_BUG, EXIT_STORAGE, storageFault, type StorageFault } from '../journal/faults.js';
import { JournalJobs } from './journal_jobs.js';
import { JournalControl } from '../journal/journal_control.js';
import type { JournalThreadData } from './journal_thread.js';
import { recoverViews, type RecoveryPlan } from '../journal/recovery.js';
import type { SnapshotDone } from '../journal/tasks.js';
import { ViewsCapture } from '../journal/state_codec.js';
import { makeDirDurable } from '../journal/writer.js';
import { writeSecretFile } from '../lib/secret_file.js';
import { freePort } from '../lib/free_port.js';
import { prefault } from '../lib/mem.js';
import { SYSTEM_TIME, type TimeSource } from '../lib/time.js';
import { allocateMetrics, MetricsRegistry } from '../metrics/metrics.js';
import { metricsSpec, SLICE_ACCOUNTS, SLICE_CONTROL } from '../metrics/spec.js';
import { SeqStamps } from '../ring/seq_stamps.js';
import { startDemoFor } from '../demo/start.js';
import { availableParallelism } from 'node:os';
import { engineConfigOf, eventReaders, loadConfig, waitRoles, wsConfigOf, type ExchangeConfig } from './config.js';
import type { GatewayThreadData } from './gateway_thread.js';
import { log } from './log.js';
import { Pipeline } from './pipeline.js';
import { KeyCounts } from '../ws/key_counts.js';
import { Replication } from './replication.js';

/** Ring 0 (producer 0, the engine clock's id): nothing in the exchange writes it; tests and tools may inject ClockTicks. */
const PRODUCER_TIMER = 0;
/** How long a start waits for the clock to sequence (and the journal to make durable) what fell due while it was down. */
const CLOCK_CATCH_UP_MS = 5000;
const PRODUCER_CONTROL = 1;

export interface RunningExchange {
  config: ExchangeConfig;
  port: number;
  accounts_port: number;
  admin_port: number;
  admin_token: string;
  pipeline: Pipeline;
  /** The journal's durable_seq. */
  durable: DurableSeq;
  /** What start-up recovered: the last seq, the time it took, the snapshot it started from. */
  recovery: { seq: number; ms: number; snapshot_seq: number };
  /** Writes a snapshot at the current durable seq (one at a time). */
  snapshot(): Promise<{ seq: number; path: string }>;
  /** The replicated log's side of this node (null with --replicate off). */
  replication: Replication | null;
  /**
   * Stops the exchange. With waitForConnections, waits (up to 15 s) until
   * every gateway thread has ended, i.e. its clients' keep-alive connections
   * closed; otherwise returns once every held request was answered. uWS v20.30
   * cannot close idle connections and aborts the process if a thread exits
   * while it still has one, so SIGTERM waits for uWS's idle timeout (about
   * 10 s) when clients keep connections open; new requests meanwhile get 503
   * with Connection: close.
   */
  stop(opts?: { waitForConnections?: boolean }): Promise<void>;
}

function adminToken(cfg: ExchangeConfig): string {
  if (cfg.admin_token) return cfg.admin_token;
  const file = join(cfg.data_dir, 'admin-token');
  if (existsSync(file)) {
    const saved = readFileSync(file, 'utf8').trim();
    if (saved !== '') return saved;
  }
  // Written aside and renamed, so a full disk never leaves an empty token file behind.
  const token = randomBytes(24).toString('base64url');
  const tmp = `${file}.tmp-${process.pid}`;
  writeSecretFile(tmp, `${token}\n`);
  renameSync(tmp, file);
  return token;
}

/**
 * Refuses to start on a file system with less room than one journal segment:
 * such a start would fail at its first busy minute, and a supervisor would
 * restart it into the same failure (a crash loop). The error says how much is
 * free and what is needed.
 */
function checkFreeSpace(cfg: ExchangeConfig): void {
  const fs = statfsSync(cfg.data_dir);
  const free = fs.bavail * fs.bsize;
  if (free >= cfg.segment_bytes) return;
  const why = `the journal needs at least one segment (--segment-bytes ${cfg.segment_bytes}) to start`;
  throw Object.assign(new Error(`ENOSPC: the file system of ${cfg.data_dir} has ${free} bytes free; ${why}`), {
    code: 'ENOSPC', syscall: 'statfs', path: cfg.data_dir,
  });
}

interface JournalFailure {
  type: 'failed';
  fault: StorageFault | null;
  error: string;
  durable_seq: number;
  /**
   * A storage failure's synced marker (src/journal/cut.ts): 'written', or why it could not be; null for a failure that is
   * not storage; absent when the thread ended without its message.
   */
  synced_marker?: string | null;
}

/** The error a failed journal start is reported with (a storage fault keeps its errno code). */
function journalStartError(f: JournalFailure): Error {
  if (f.fault === null) return new Error(`journal thread failed: ${f.error}`);
  return Object.assign(new Error(f.fault.message), { code: f.fault.code, syscall: f.fault.syscall, path: f.fault.path });
}

/**
 * The error line of a journal failure; returns the exit status. Nothing can
 * become durable any more, so every held answer would time out while the
 * engine kept sequencing: the exchange stops (see failStop in startExchange).
 * Everything answered is at or below durable_seq, on disk, and the next start
 * recovers it.
 */
/**
 * This node became the primary (HA). Its replay table never saw the mutations the old primary was sent, so, as at a
 * start, mutations signed before now are refused (ReplayGuard.setNotBefore; docs/rest.md says what is left open).
 */
function promoted(replay: SharedArrayBuffer, epoch: number, seq: number): void {
  // Raised by the replication thread before the role turned primary (replication_thread.ts beforeWritable).
  const floor = new ReplayGuard(replay).notBefore;
  log('info', { event: 'replication_promoted', epoch, seq, replay_not_before_ms: floor });
}

/**
 * The replay guard's table, shared by every thread that authenticates. It starts empty, so it refuses every mutation
 * signed before this start (ReplayGuard.setNotBefore; docs/rest.md).
 */
function replayTable(): SharedArrayBuffer {
  const sab = ReplayGuard.allocate();
  new ReplayGuard(sab).setNotBefore(Date.now());
  return sab;
}

function logJournalFailure(f: JournalFailure): number {
  const storage = f.fault !== null;
  log('error', {
    event: 'journal_failed', code: f.fault?.code ?? null, syscall: f.fault?.syscall ?? null, path: f.fault?.path ?? null,
    durable_seq: f.durable_seq, synced_marker: f.synced_marker ?? null, action: 'exit', exit_code: storage ? EXIT_STORAGE : EXIT_BUG,
    message: storage
      ? `the journal could not ${f.fault!.syscall || 'write'} ${f.fault!.path || 'its segment'} (${f.fault!.code}); stopping: `
        + `nothing after seq ${f.durable_seq} was acknowledged, and everything up to it is on disk for the next start; `
        + 'fix the storage (free space, remount) and start again'
      : 'the journal thread failed (a bug, not the disk); stopping',
    error: f.error,
  });
  return storage ? EXIT_STORAGE : EXIT_BUG;
}

/** How long a fail-stop waits for the gateways' connections to end before it exits anyway. */
const FAIL_STOP_WAIT_MS = 15_000;

function listen(app: ReturnType<ReturnType<typeof uws>['App']>, host: string, port: number): Promise<ListenSocket> {
  return new Promise((resolveListen, reject) => {
    app.listen(host, port, (ls) => (ls ? resolveListen(ls) : reject(new Error(`cannot listen on ${host}:${port}`))));
  });
}

/**
 * Stage 0: the plan recovery starts from (piscina checks every segment and
 * snapshot and truncates a torn tail; with replication, the log's view is
 * reconciled with it, and a read replica takes the log's). Before it, a
 * journal that failed on storage is cut after its last synced seq (the
 * synced marker, src/journal/cut.ts). A fault stops the start here, naming
 * file and offset.
 */
async function recoveryPlan(cfg: ExchangeConfig, repl: Replication | null, jobs: JournalJobs): Promise<RecoveryPlan> {
  try {
    if (repl?.mode === 'replica') return await repl.replicaPlan();
    const cut = cutToSyncedMarker(cfg.data_dir);
    if (cut !== null) log('warn', { event: 'recovery', fault: 'unsynced_tail_cut', ...cut });
    const plan = await jobs.plan(cfg.data_dir);
    return repl === null ? plan : await repl.reconcile(plan, () => jobs.plan(cfg.data_dir));
  } catch (e) {
    await jobs.close();
    await repl?.log.close();
    throw new Error(`recovery refused to start: ${(e as Error).message}`);
  }
}

/**
 * Starts the journal thread. `ready` resolves once it runs (rejects with its
 * start error); a later failure calls onFailed: the thread's `failed`
 * message and its error event arrive in either order, so an error waits a
 * moment for the message, which says what failed (durable_seq 0 there: the
 * caller fills in its own).
 */
function startJournal(
  data: JournalThreadData, onFailed: (f: JournalFailure) => void,
): { worker: Worker; exit: Promise<void>; ready: Promise<void> } {
  const j = new Worker(new URL('./journal_thread.js', import.meta.url), { workerData: data, name: 'journal' });
  const exit = new Promise<void>((res) => j.once('exit', () => res()));
  let started = false;
  const ready = new Promise<void>((res, rej) => {
    j.once('error', (e) => { if (!started) rej(e); });
    j.on('message', (m: { type: string }) => {
      if (m.type === 'ready') {
        started = true;
        res();
      } else if (m.type === 'failed') {
        if (started) onFailed(m as JournalFailure);
        else rej(journalStartError(m as JournalFailure));
      }
    });
  });
  j.on('error', (e) => {
    if (!started) return;
    const failure: JournalFailure = { type: 'failed', fault: storageFault(e), error: (e as Error).stack ?? String(e), durable_seq: 0 };
    setTimeout(() => onFailed(failure), 200);
  });
  return { worker: j, exit, ready };
}

/** One warning per thing recovery set aside or repaired: a rejected snapshot, a truncated torn tail, an empty segment removed. */
function logRecoveryFaults(plan: RecoveryPlan): void {
  for (const r of plan.rejectedSnapshots) log('warn', { event: 'recovery', fault: 'snapshot_rejected', path: r.path, reason: r.reason });
  for (const t of plan.tails) {
    const { path, offset, bytes, kind, detail } = t;
    log('warn', { event: 'recovery', fault: 'torn_tail_truncated', path, offset, bytes, kind, detail });
  }
  for (const p of plan.removed) log('warn', { event: 'recovery', fault: 'empty_segment_removed', path: p });
}

/** The web pages (trader site, operator console), read once and handed to the threads that serve them; a missing build is a warning. */
function loadSites(cfg: ExchangeConfig): {
  traderDir: string;
  traderSite: StaticSite | null;
  consoleDir: string;
  consoleSite: StaticSite | null;
} {
  const traderDir = join(cfg.web_dir, 'trader');
  const consoleDir = join(cfg.web_dir, 'console');
  const traderSite = loadSite(traderDir);
  const consoleSite = loadSite(consoleDir);
  for (const [name, dir, site] of [['trader', traderDir, traderSite], ['console', consoleDir, consoleSite]] as const) {
    if (site === null) log('warn', { event: 'web', page: name, dir, built: false, note: 'GET / answers 404: run npm run build' });
    else log('info', { event: 'web', page: name, dir, built: true, ...siteBytes(site) });
  }
  return { traderDir, traderSite, consoleDir, consoleSite };
}

/**
 * Stage 5, before the listeners open: waits (up to CLOCK_CATCH_UP_MS) until
 * the clock has sequenced what fell due while the exchange was down and the
 * journal has made it durable; a warning when it could not.
 */
async function catchUpClock(pipeline: Pipeline, durable: DurableSeq): Promise<void> {
  const caughtUp = await pipeline.clockCaughtUp(CLOCK_CATCH_UP_MS);
  const target = pipeline.control.seq;
  const until = Date.now() + CLOCK_CATCH_UP_MS;
  while (durable.get() < target && Date.now() < until) await new Promise((r) => setTimeout(r, 1));
  if (!caughtUp || durable.get() < target) {
    log('warn', { event: 'clock_catch_up', caught_up: caughtUp, seq: target, durable_seq: durable.get() });
  }
}

/** The info line of a finished snapshot. */
function logSnapshot(done: SnapshotDone & CaptureTimes): void {
  const { seq, path, bytes } = done;
  log('info', {
    event: 'snapshot', seq, path, bytes, capture_ms: Math.round(done.captureMs), capture_steps: done.captureSteps,
    held_records: done.heldRecords, ms: Math.round(done.ms),
    pruned_segments: done.prunedSegments.length, pruned_snapshots: done.prunedSnapshots.length,
  });
}

/** How long a snapshot's capture took (wall time, its steps included), in how many steps, and the events held meanwhile. */
interface CaptureTimes {
  captureMs: number;
  captureSteps: number;
  heldRecords: number;
}

/**
 * A snapshot of the control plane's read model at the durable seq it has
 * applied: captured on this thread (a copy of its used tables: 40-100 ms of
 * CPU for a 90 MB model, 1.4 s at a million accounts) snapshot_step_bytes
 * per event-loop turn: between the steps the control plane takes events off
 * the event ring, held unapplied, so the engine never waits for it and its
 * own requests are served. Then serialized and written by the journal's
 * worker. No other thread folds the events again for it.
 */
export async function snapshotOf(
  control: GatewayCore, jobs: Pick<JournalJobs, 'snapshot'>, cfg: Pick<ExchangeConfig, 'data_dir' | 'durability' | 'snapshot_step_bytes'>,
): Promise<SnapshotDone & CaptureTimes> {
  control.drain();
  const t = performance.now();
  const capture = new ViewsCapture(control.views);
  let captureSteps = 1;
  let heldRecords = 0;
  const stepBytes = cfg.snapshot_step_bytes;
  if (!capture.step(stepBytes)) {
    control.holdEvents();
    try {
      do {
        await nextTurn();
        control.drain();
        captureSteps++;
      } while (!capture.step(stepBytes));
    } finally {
      heldRecords = control.releaseEvents();
    }
  }
  const captureMs = performance.now() - t;
  const args = { dataDir: cfg.data_dir, seq: capture.seq, tree: capture.tree, fsync: cfg.durability === 'fsync' };
  return { ...(await jobs.snapshot(args, capture.transfer)), captureMs, captureSteps, heldRecords };
}

export interface StartOptions {
  /** The wall clock of this (main) thread's commands: the ClockTick and the control plane's (default SYSTEM_TIME). */
  time?: TimeSource;
}

/**
 * Starts an exchange on `cfg.data_dir`, which it locks first (data_dir_lock.ts): a directory another
 * running exchange holds is refused with an error (code EBUSY) naming it, before anything is read.
 */
export async function startExchange(cfg: ExchangeConfig, opts: StartOptions = {}): Promise<RunningExchange> {
  // Its entry in its parent is synced too: a journal synced into a directory whose own entry a power cut loses is lost.
  makeDirDurable(cfg.data_dir, cfg.durability === 'fsync');
  // Read-only, so a start refused for room leaves even a stale lock as it was.
  checkFreeSpace(cfg);
  const lock = DataDirLock.take(resolve(cfg.data_dir));
  if (lock.tookOver !== null) log('warn', { event: 'data_dir_lock', stale_lock_taken_over: lock.tookOver, path: lock.path });
  try {
    return await startLocked(cfg, opts, lock);
  } catch (e) {
    lock.release();
    throw e;
  }
}

async function startLocked(cfg: ExchangeConfig, opts: StartOptions, lock: DataDirLock): Promise<RunningExchange> {
  const time = opts.time ?? SYSTEM_TIME;
  const u = uws();
  const token = adminToken(cfg);
  const t0 = performance.now();
  const port = cfg.port === 0 ? await freePort(cfg.host) : cfg.port;
  const repl = cfg.replicate === 'off' ? null : await Replication.prepare(cfg, port);

  // 0. Recovery plan (piscina): every segment and snapshot checked, a torn
  // tail truncated; a fault stops the start here, naming file and offset.
  const jobs = new JournalJobs();
  const plan = await recoveryPlan(cfg, repl, jobs);
  logRecoveryFaults(plan);

  // 1. Engine: the snapshot's state plus the journal after it, then its loop.
  // Every read model folds events with the engine's configuration (retention
  // caps live in evolve), so one object is handed to all of them. Tables are
  // sized from --order-capacity so that a busy book never pays the copy of a
  // doubling on the answering path (config.ts); they still grow past it.
  const engineCfg = engineConfigOf(cfg);
  const producers = 2 + cfg.gateways;
  const journalConsumer = 1 + cfg.gateways;
  // A standby's engine folds the ring from followConsumer; a primary's replicator reads from replicatorConsumer.
  const followConsumer = 2 + cfg.gateways;
  const replicatorConsumer = 3 + cfg.gateways;
  const wait = waitRoles(cfg.wait, availableParallelism(), cfg.gateways);
  const pipeline = Pipeline.start({
    producers, engine: engineCfg, verify: cfg.verify, event_consumers_max: eventReaders(cfg.gateways), recovery: plan, wait: wait.engine,
    clock: true, ...(repl?.mode === 'ha' ? { follow: { consumerIndex: followConsumer } } : {}), engineThread: repl?.mode !== 'replica',
  });
  const durableSab = DurableSeq.allocate(repl === null ? 'local' : repl.mode === 'ha' ? 'replicated' : 'stream');
  const durable = new DurableSeq(durableSab);
  durable.set(plan.lastSeq);
  // What the plan holds is in the log: reconcile cut anything else.
  durable.setReplicated(plan.lastSeq);
  const journalControl = new JournalControl(JournalControl.allocate());
  const durableStamps = SeqStamps.allocate();
  const workers: Worker[] = [];
  let journal: Worker | null = null;
  let core: GatewayCore | null = null;
  const abandon = async (e: unknown): Promise<never> => {
    await Promise.all(workers.map((w) => w.terminate()));
    core?.close();
    // Undoing a failed start: the caller gets `e`. A part that also fails to stop would only hide that first error.
    await pipeline.stop().catch(() => 0);
    if (journal) await journal.terminate();
    await jobs.close();
    // As above: `e` is what the caller sees.
    await repl?.stop().catch(() => undefined);
    throw e;
  };
  await pipeline.ready().catch(abandon);

  // 2. The journal thread, a reader of the event ring before anything is sequenced
  // (a read replica has none: what it shows is durable in the log).
  let journalExit: Promise<void> = Promise.resolve();
  // From here on a journal failure stops the process (fail-stop): the error
  // line, then the listeners close and the gateways answer what they hold
  // (504: nothing more becomes durable) and end with their connections, as
  // in a graceful stop, then exit with the failure's status. Exiting while a
  // uWS thread still holds a connection would abort Node. The thread posts
  // `failed` before its error ends it; an error without one (an assertion
  // outside its loop) stops the process too.
  let closeIo = async (): Promise<void> => undefined;
  let failing = false;
  const failStop = (f: JournalFailure): void => {
    if (failing) return;
    failing = true;
    const status = logJournalFailure(f);
    void closeIo().finally(() => process.exit(status));
  };
  // The engine thread ends only when asked: an assertion (a crash by design)
  // or any other end stops the process the same way, or every request would
  // wait for an engine that is gone. Everything acknowledged is in the journal.
  pipeline.onFailure((error) => {
    if (failing) return;
    failing = true;
    log('error', {
      event: 'engine_failed', durable_seq: durable.get(), action: 'exit', exit_code: EXIT_BUG,
      message: `the engine thread failed (a bug); stopping: nothing after seq ${durable.get()} was acknowledged, `
        + 'and everything up to it is on disk for the next start',
      error,
    });
    void closeIo().finally(() => process.exit(EXIT_BUG));
  });
  if (repl?.mode !== 'replica') {
    const journalData: JournalThreadData = {
      eventRing: pipeline.eventRing,
      consumerIndex: journalConsumer,
      durable: durableSab,
      control: journalControl.sab,
      durableStamps,
      dataDir: cfg.data_dir,
      fsync: cfg.durability === 'fsync',
      nextSeq: plan.lastSeq + 1,
      segmentBytes: cfg.segment_bytes,
      wait: wait.journal,
    };
    const j = startJournal(journalData, (f) => failStop({ ...f, durable_seq: f.durable_seq || durable.get() }));
    journal = j.worker;
    journalExit = j.exit;
    await j.ready.catch(abandon);
  }

  // 3. Gateways: each rebuilds its read model from the same plan and opens its
  // cursor; none listens until every reader (and the control plane) is in.
  const buckets = TokenBuckets.allocate();
  const replay = replayTable();
  const wsCounts = KeyCounts.allocate();
  for (const sab of [buckets, replay, wsCounts]) prefault(sab);
  // Metrics: one slice per thread that answers HTTP, merged by GET /metrics.
  const spec = metricsSpec(cfg.gateways);
  const metrics = new MetricsRegistry(allocateMetrics(spec), spec, {
    engine: () => ({
      seq: pipeline.control.seq,
      commands: pipeline.control.commands,
      batches: pipeline.control.batches,
      parks: pipeline.control.parks,
    }),
    commandRings: pipeline.commandRings.map((sab, i) => ({
      name: i === PRODUCER_TIMER ? 'timer' : i === PRODUCER_CONTROL ? 'control' : `gateway-${i - 2}`,
      sab,
    })),
    eventRing: pipeline.eventRing,
    durableSeq: () => durable.get(),
    journalFsync: journalControl.fsyncs,
    // The control plane's read model (stage 4) holds the engine's state; rendered only once listeners are open.
    tables: () => ({ ...views.tables(), replay_guard: replayGuard.occupancy(Date.now()).live }),
  });
  const replayGuard = new ReplayGuard(replay);
  const { traderDir, traderSite, consoleDir, consoleSite } = loadSites(cfg);
  const recovered: Promise<void>[] = [];
  for (let i = 0; i < cfg.gateways; i++) {
    const data: GatewayThreadData = {
      index: i, producerId: 2 + i, consumerIndex: 1 + i, host: cfg.host, port, commandRing: pipeline.commandRings[2 + i]!,
      doorbell: pipeline.doorbell, eventRing: pipeline.eventRing, buckets, replay, engine: engineCfg, views: {},
      response_budget_ms: cfg.response_budget_ms, shed_pending: 4096, durable: durableSab, recovery: plan,
      sequenced_stamps: pipeline.sequencedStamps, durable_stamps: durableStamps, wait: wait.gateway,
      metrics: metrics.sab, metrics_spec: spec, ws_counts: wsCounts, ws: wsConfigOf(cfg), replication: repl?.status.sab ?? null,
      site: traderSite, site_dir: traderDir,
    };
    const w = new Worker(new URL('./gateway_thread.js', import.meta.url), { workerData: data, name: `gateway-${i}` });
    workers.push(w);
    recovered.push(waitFor(w, 'recovered'));
  }

  // 4. The control plane's read model (this thread), meanwhile.
  const views = recoverViews(plan, engineCfg, {});
  core = new GatewayCore({
    producerId: PRODUCER_CONTROL, producer: pipeline.producer(PRODUCER_CONTROL), eventRing: pipeline.eventRing, consumerIndex: 0,
    views, response_budget_ms: cfg.response_budget_ms, shed_pending: 1 << 15, durable, time, replication: repl?.status ?? null,
    sequencedStamps: pipeline.sequencedStamps, durableStamps, wait: wait.gateway,
  });
  const control = core;
  await Promise.all(recovered).catch(abandon);
  const recoveryMs = performance.now() - t0;
  log('info', {
    event: 'recovery', seq: plan.lastSeq, snapshot: plan.snapshot?.path ?? null, snapshot_seq: plan.snapshot?.seq ?? 0,
    replayed_commands: plan.lastSeq - (plan.snapshot?.seq ?? 0), segments: plan.segments.length, ms: Math.round(recoveryMs),
  });

  let stopRef: ((o: { waitForConnections?: boolean }) => Promise<void>) | null = null;
  let exiting = false;
  const exitAfterStop = (code: number): void => {
    if (exiting) return; // the first reason gives the exit code
    exiting = true;
    const hard = setTimeout(() => process.kill(process.pid, 'SIGKILL'), 30_000);
    hard.unref();
    void (stopRef ?? (() => Promise.resolve()))({ waitForConnections: true }).finally(() => process.exit(code));
  };

  // 4b. Replication: every reader of the event ring is in; the thread
  // follows the log (and claims, or publishes once primary).
  if (repl !== null) {
    await repl.start({
      eventRing: pipeline.eventRing,
      replicatorConsumer,
      durable: durableSab,
      engineControl: repl.mode === 'ha' ? pipeline.control.sab : null,
      appliedSeq: plan.lastSeq, replay,
    }, (m) => {
      if (m.type === 'promoted') promoted(replay, m.epoch!, pipeline.control.seq);
      else if (m.type === 'step_down') {
        // Fenced or stalled: answer nothing more (the gateways refuse every
        // request and close its connection), stop, exit 75; the supervisor
        // starts the node again and it rejoins as a standby (cutting its
        // unacknowledged tail). uWS threads must end before the process
        // does, hence the stop rather than an immediate exit.
        log('error', { event: 'replication_stopped_answering', reason: m.reason, action: 'exit', code: 75 });
        exitAfterStop(75);
      } else if (m.type === 'fault') {
        log('error', { event: 'replication_failed', error: m.error, action: 'exit', code: 70 });
        repl.status.setRole('fenced');
        exitAfterStop(70);
      }
    }).catch(abandon);
  }

  // The clock (in the engine loop), now that every reader of the event ring
  // has joined; a standby's loop, and its clock, start only when it is
  // promoted. Before the listeners open, what fell due while the exchange was
  // down (gtd expiries, dead-man timers, round closes) is sequenced and
  // durable, so that no client reads an order past its expiry as live.
  pipeline.startClock();
  if (repl === null) await catchUpClock(pipeline, durable);

  // 5. Listeners: gateways, keys service, control plane.
  for (const w of workers) w.postMessage({ type: 'listen' });
  const ports = await Promise.all(workers.map((w) => waitFor<number>(w, 'listening', 'port'))).catch(abandon);
  const limits = { response_budget_ms: cfg.response_budget_ms };
  const accountsApp = u.App();
  mountRest(accountsApp, {
    core, buckets: new TokenBuckets(buckets, views), replay: replayGuard, limits, routes: KEY_ROUTES,
    log: (f) => log('warn', { thread: 'accounts', ...f }), observer: metrics.thread(SLICE_ACCOUNTS), stopping: () => stopped,
  }, '/*');
  const accountsSocket = await listen(accountsApp, cfg.host, cfg.accounts_port).catch(abandon);

  // Snapshots: every snapshot_every journal records, and on demand; one at a time.
  let lastSnapshotRecords = 0;
  let snapshotting: Promise<{ seq: number; path: string }> | null = null;
  let stopped = false; // from the stop's start: a snapshot asked for then is refused, not begun on the pool the stop closes
  let queued: Promise<{ seq: number; path: string }> | null = null;
  const takeSnapshot = (): Promise<{ seq: number; path: string }> => {
    // One asked for while another runs (of an older seq) follows it, shared by every request meanwhile.
    if (snapshotting) return queued ??= snapshotting.catch(() => undefined).then(() => { queued = null; return takeSnapshot(); });
    if (stopped) return Promise.reject(new ApiError('shed', 'the exchange is stopping: no snapshot was started'));
    if (repl?.mode === 'replica')
      return Promise.reject(
        new ApiError('not_primary', 'a read replica keeps no journal: snapshots come from the primary', {
          primary_url: repl.status.primaryUrl, role: 'replica',
        }),
      );
    lastSnapshotRecords = journalControl.counters.records;
    const seq = control.views.asOfSeq;
    snapshotting = snapshotOf(control, jobs, cfg)
      .then((done) => {
        logSnapshot(done);
        repl?.snapshotTaken(done.path, done.seq);
        return { seq: done.seq, path: done.path };
      }, (e: unknown) => {
        log('error', { event: 'snapshot_failed', seq, error: (e as Error).message });
        throw new ApiError('internal', `snapshot failed: ${(e as Error).message}`);
      })
      .finally(() => { snapshotting = null; });
    return snapshotting;
  };
  const snapshotTimer = setInterval(() => {
    if (snapshotting === null && repl?.mode !== 'replica' && journalControl.counters.records - lastSnapshotRecords >= cfg.snapshot_every)
      // takeSnapshot logged a failure (snapshot_failed); the next try comes once another snapshot_every records are written.
      takeSnapshot().catch(() => undefined);
  }, 1000);

  const controlMetrics = metrics.thread(SLICE_CONTROL);
  controlMetrics.watch(control);
  metrics.start();
  const adminApp = u.App();
  // The operator console: static and public on the loopback listener; every /admin call still needs the token.
  mountSite(adminApp, consoleSite, 'operator console', consoleDir);
  mountAdmin(adminApp, {
    core,
    health: () => {
      const seq = repl?.mode === 'replica' ? control.views.asOfSeq : pipeline.control.seq;
      const d = durable.get();
      return {
        seq: String(seq), durable_seq: String(d), lag: Math.max(0, seq - d), gateways: workers.length,
        engine_commands: pipeline.control.commands, durability: cfg.durability, journal: journalControl.counters,
        ...(repl !== null ? { replication: repl.health(seq) } : {}),
      };
    },
    snapshot: takeSnapshot,
    log: (f) => log('info', { thread: 'admin', ...f }),
    metrics: () => metrics.render() + (repl !== null ? repl.metrics(pipeline.control.seq, durable.get()) : ''),
    latency: () => metrics.latency(), stopping: () => stopped,
  }, token, controlMetrics);
  const adminSocket = await listen(adminApp, cfg.admin_host, cfg.admin_port).catch((e) => {
    u.us_listen_socket_close(accountsSocket);
    return abandon(e);
  });

  const accountsPort = u.us_socket_local_port(accountsSocket as never);
  const adminPort = u.us_socket_local_port(adminSocket as never);
  const exits = workers.map((w) => new Promise<void>((res) => w.once('exit', () => res())));
  // Each gateway closes its listen socket and answers what it holds, then
  // says so; its thread ends when its last keep-alive connection closes
  // (uWS v20.30 cannot close idle connections). Once, for a stop or a fail-stop;
  // then the keys service (this thread) writes its count of left-out client log lines.
  let listenersClosed: Promise<void> | null = null;
  const closeListeners = (): Promise<void> => listenersClosed ??= (async () => {
    u.us_listen_socket_close(accountsSocket);
    u.us_listen_socket_close(adminSocket);
    await Promise.all(workers.map((w) => new Promise<void>((res) => {
      w.once('exit', () => res());
      w.on('message', (m: { type: string }) => { if (m.type === 'stopped') res(); });
      w.postMessage({ type: 'stop' });
    })));
    clearInterval(snapshotTimer);
    flushClientLog();
  })();
  closeIo = async () => {
    await closeListeners();
    await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, FAIL_STOP_WAIT_MS).unref())]);
  };
  const stop = async (stopOpts: { waitForConnections?: boolean } = {}): Promise<void> => {
    if (stopped) return;
    stopped = true;
    await closeListeners();
    metrics.stop();
    controlMetrics.unwatch();
    // The engine drains its rings; then the journal drains the event ring and syncs.
    await pipeline.stop();
    journalControl.requestStop();
    pipeline.wakeEventReaders();
    await journalExit;
    // A primary publishes what the engine sequenced last and waits for the acks.
    await repl?.stop();
    // A snapshot's capture holds the control plane's completions until it ends: before the close. Failures are logged.
    await snapshotting?.catch(() => undefined);
    control.drain();
    control.close();
    await jobs.close();
    if (stopOpts.waitForConnections) await Promise.race([Promise.all(exits), new Promise((r) => setTimeout(r, 15_000).unref())]);
    lock.release();
  };
  stopRef = stop;
  return {
    config: cfg, port: ports[0] ?? port, accounts_port: accountsPort, admin_port: adminPort, admin_token: token, pipeline, durable,
    recovery: { seq: plan.lastSeq, ms: recoveryMs, snapshot_seq: plan.snapshot?.seq ?? 0 }, snapshot: takeSnapshot, stop, replication: repl,
  };
}

/** Resolves when the worker posts a message of this type (with its `field`), rejects on error or an `error` message. */
function waitFor<T = void>(w: Worker, type: string, field?: string): Promise<T> {
  return new Promise<T>((res, rej) => {
    const onMessage = (m: Record<string, unknown>): void => {
      if (m.type === type) {
        w.off('message', onMessage);
        res((field ? m[field] : undefined) as T);
      } else if (m.type === 'error') {
        rej(new Error(String(m.message)));
      }
    };
    w.on('message', onMessage);
    w.once('error', rej);
    w.once('exit', (code) => rej(new Error(`${w.threadId}: thread exited (${code}) before ${type}`)));
  });
}

async function main(): Promise<void> {
  let cfg: ExchangeConfig;
  try {
    cfg = loadConfig();
  } catch (e) {
    process.stderr.write(`dx: ${(e as Error).message}\n`);
    process.exit(2);
  }
  cfg.data_dir = resolve(cfg.data_dir);
  let ex: RunningExchange;
  try {
    ex = await startExchange(cfg);
  } catch (e) {
    // A storage fault at start (a full disk, a read-only mount, a file-size
    // limit) is one clear line and EXIT_STORAGE; nothing was damaged, and the
    // same start succeeds once the storage is fixed.
    if ((e as NodeJS.ErrnoException).code === 'EBUSY') {
      log('error', { event: 'start_failed', code: 'EBUSY', message: (e as Error).message, exit_code: EXIT_IN_USE });
      process.stderr.write(`dx: cannot start: ${(e as Error).message}\n`);
      process.exit(EXIT_IN_USE);
    }
    const fault = storageFault(e);
    if (fault === null) throw e;
    log('error', {
      event: 'start_failed', code: fault.code, syscall: fault.syscall, path: fault.path, message: fault.message, exit_code: EXIT_STORAGE,
    });
    process.stderr.write(`dx: cannot start: ${fault.message}\n`);
    process.exit(EXIT_STORAGE);
  }
  // The demo (src/demo) is a client of the listeners just opened.
  const demo = cfg.demo
    ? await startDemoFor({
      host: cfg.host, port: ex.port, admin_host: cfg.admin_host, admin_port: ex.admin_port, admin_token: ex.admin_token,
      data_dir: cfg.data_dir, period_s: cfg.demo_period_s, log,
    })
    : null;
  const shutdown = (signal: string): void => {
    log('info', { event: 'shutdown', signal });
    (demo ? demo.stop() : Promise.resolve()).then(() => ex.stop({ waitForConnections: true })).then(() => process.exit(0), (e) => {
      log('error', { event: 'shutdown_failed', error: String(e) });
      process.exit(1);
    });
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
  if (!cfg.admin_token) process.stdout.write(`admin token: ${ex.admin_token} (also in ${join(cfg.data_dir, 'admin-token')})\n`);
  const admin = `http://${cfg.admin_host}:${ex.admin_port}`;
  // A token the operator configured is a secret of theirs: the instructions name the variable, never its value.
  const shownToken = cfg.admin_token ? '$DX_ADMIN_TOKEN' : ex.admin_token;
  if (demo) process.stdout.write(demo.instructions);
  else process.stdout.write(
    [
      'get a trading key (the operator creates an account, funds it and issues a key):',
      `  curl -s -X POST -H "authorization: Bearer ${shownToken}" -d '{}' ${admin}/admin/accounts`,
      `  curl -s -X POST -H "authorization: Bearer ${shownToken}" -d '{"amount":"100000"}' ` +
        `${admin}/admin/accounts/<account_id>/deposits`,
      `  curl -s -X POST -H "authorization: Bearer ${shownToken}" -d '{"scopes":["read","trade"]}' ` +
        `${admin}/admin/accounts/<account_id>/keys`,
      '',
    ].join('\n'),
  );
  process.stdout.write(`trader page: http://${cfg.host}:${ex.port}/   operator console: ${admin}/ (paste the admin token)\n`);
  process.stdout.write(
    `ready rest=${cfg.host}:${ex.port} accounts=${cfg.host}:${ex.accounts_port} admin=${cfg.admin_host}:${ex.admin_port} ` +
      `gateways=${cfg.gateways}\n`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((e) => {
    log('error', { event: 'start_failed', error: (e as Error).stack ?? String(e) });
    process.exit(1);
  });
}
