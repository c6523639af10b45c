// memory: resident memory and heap per thread of the running exchange at
// 100,000 resting orders and 10,000 accounts, and whether the engine
// allocates in steady state. Main thread of the bench runner. Reports, never
// asserts.
//
// 1. The exchange (separate process, durability none) is started with
//    --inspect on a fresh loopback port; test/support/inspector.ts attaches to
//    its main thread and, through the NodeWorker domain, to every worker
//    thread by name (engine, journal, gateway-N, piscina...). Each thread
//    reports its own process.memoryUsage() (heap figures are per isolate),
//    before and after a full GC (HeapProfiler.collectGarbage); resident
//    memory comes from /proc/<pid>/status (one figure for the process). A
//    thread that does not answer within the deadline is listed as "could not
//    report".
// 2. Population through the real REST and control-plane APIs: `accounts`
//    accounts with a key and a deposit (control plane), then each account
//    places `orders/accounts` resting buys in one batch (POST
//    /v1/portfolio/orders/batch): YES and NO bids at ticks 1..45, which never
//    cross (a YES bid at y and a NO bid at n cross only when y + n >= 100).
//    Every placement is checked to rest.
// 3. Engine thread under load: a closed loop of placements (test/support/loadgen)
//    while the engine thread's heapUsed is sampled every 250 ms through the
//    inspector. A heap that only rises between samples, with no drop, means no
//    GC ran; a sawtooth means the engine thread allocates.
// 4. In process, one long match loop: the engine_match workload
//    (bench/engine_match.ts buildWorkload) on one engine, with a GC observer
//    and heapUsed read every 1/20 of the run: GCs inside the loop and the heap
//    growth over it (the engine is meant to allocate nothing per command).
// 5. In process, remembered deposit refs (the idempotency of deposits): an
//    engine and one read model fed `deposit_refs` deposits with 64-byte refs
//    (100 accounts) against the same deposits without a ref: heap per ref
//    per copy of the state, snapshot bytes per ref, and the snapshot's
//    encode and decode and the state hash at that size.

import { performance } from 'node:perf_hooks';
import { GcWatch } from './lib/gc_watch.js';
import { DxClient } from '../src/client/client.js';
import type { OrderRequest } from '../src/client/types.js';
import { runLoad } from '../test/support/loadgen/loadgen.js';
import { buildWorkload, freshOurs, timeOurs } from './engine_match.js';
import { freePort } from '../src/lib/free_port.js';
import { createTraders, openMarket, pool, startBenchExchange } from './lib/population.js';
import { InspectorClient, MEMORY_EXPRESSION, type ThreadMemory, type WorkerTarget } from '../test/support/inspector.js';
import { processMemory } from './lib/process_stats.js';
import { environment, type BenchResult } from './lib/result.js';
import { Engine } from '../src/engine/engine.js';
import { BufferEventOut } from '../src/engine/event_out.js';
import { decodeViews, encodeViews, stateHash } from '../src/journal/state_codec.js';
import { encodeToMem, type RecordObject } from '../src/layout_codec/record_codec.js';
import { Views } from '../src/views/views.js';

const MIB = 2 ** 20;
const round = (x: number, d = 1): number => Math.round(x * 10 ** d) / 10 ** d;
const mib = (bytes: number): number => round(bytes / MIB, 1);

interface Settings {
  accounts: number;
  orders: number;
  load_ms: number;
  engine_commands: number;
  deposit_refs: number;
}

function settings(quick: boolean): Settings {
  return quick
    ? { accounts: 1000, orders: 10_000, load_ms: 3000, engine_commands: 200_000, deposit_refs: 10_000 }
    : { accounts: 10_000, orders: 100_000, load_ms: 10_000, engine_commands: 2_000_000, deposit_refs: 100_000 };
}

/** Thread label for metric keys: "gateway-0" -> "gateway_0"; unnamed workers get their script name. */
function label(w: WorkerTarget | null, used: Set<string>): string {
  let base = w === null ? 'main' : w.name !== '' ? w.name : (/([a-z_]+)\.js$/i.exec(w.url)?.[1] ?? 'worker');
  base = base.replace(/[^a-z0-9]+/gi, '_').toLowerCase();
  if (w !== null && w.url.includes('piscina')) base = `piscina_${base}`;
  let name = base;
  for (let i = 2; used.has(name); i++) name = `${base}_${i}`;
  used.add(name);
  return name;
}

interface ThreadReport {
  name: string;
  before: ThreadMemory | null;
  /** After HeapProfiler.collectGarbage; null when the thread did not run it in time. */
  after: ThreadMemory | null;
  error: string;
}

async function threadReports(insp: InspectorClient): Promise<ThreadReport[]> {
  const used = new Set<string>();
  const targets: (WorkerTarget | null)[] = [null, ...insp.workers];
  const out: ThreadReport[] = [];
  for (const w of targets) {
    const name = label(w, used);
    let before: ThreadMemory;
    try {
      before = await insp.evaluateJson<ThreadMemory>(w, MEMORY_EXPRESSION, 5000);
    } catch (e) {
      out.push({ name, before: null, after: null, error: (e as Error).message });
      continue;
    }
    // A forced GC runs as a task on the thread's own loop: a thread that
    // spins or parks in Atomics.wait (engine, journal) may never run it, while
    // Runtime.evaluate is served by an interrupt and always answers.
    try {
      if (w === null) await insp.call('HeapProfiler.collectGarbage', {}, 3000);
      else await insp.callWorker(w, 'HeapProfiler.collectGarbage', {}, 3000);
      out.push({ name, before, after: await insp.evaluateJson<ThreadMemory>(w, MEMORY_EXPRESSION, 5000), error: '' });
    } catch (e) {
      out.push({ name, before, after: null, error: `no full GC: ${(e as Error).message}` });
    }
  }
  return out;
}

/** One resting order book per account: n buys that never cross (YES and NO bids at ticks 1..45). */
function restingOrders(market: number, n: number, account: number): OrderRequest[] {
  const out: OrderRequest[] = [];
  for (let i = 0; i < n; i++) {
    const tick = 1 + ((account * 7 + i * 13) % 45);
    out.push({ market_id: market, side: 'buy', outcome: i % 2 === 0 ? 'yes' : 'no', tick, qty: 1 + (i % 5) });
  }
  return out;
}

interface LongRun {
  commands: number;
  gc_count: number;
  gc_ms: number;
  heap_before: number;
  heap_after: number;
  heap_max: number;
  commands_per_s: number;
  build_ms: number;
}

/** The engine_match stream on one engine in one long loop, GCs and heap watched. */
async function longEngineRun(commands: number): Promise<LongRun> {
  const t0 = performance.now();
  const w = buildWorkload(commands);
  const buildMs = performance.now() - t0;
  // Warm-up on another engine (JIT), untimed.
  timeOurs(w, freshOurs(w));
  const x = freshOurs(w);
  // Node emits a 'gc' entry from a task it queues after the collection (env->SetImmediate), so the entries of GCs inside this
  // synchronous loop exist only once the event loop has turned: GcWatch.stop() lets it turn before it stops observing.
  const watch = new GcWatch();
  const mem = w.cmds.mem;
  const u32 = mem.u32;
  const end = w.cmds.bytes;
  const every = Math.max(1, Math.floor(w.cmds.count / 20));
  const heapBefore = process.memoryUsage().heapUsed;
  let heapMax = heapBefore;
  const s = performance.now();
  let off = 0;
  let n = 0;
  while (off < end) {
    x.engine.execute(mem, off);
    x.out.reset();
    off += u32[off >>> 2]!;
    if (++n % every === 0) {
      const h = process.memoryUsage().heapUsed;
      if (h > heapMax) heapMax = h;
    }
  }
  const e = performance.now();
  const heapAfter = process.memoryUsage().heapUsed;
  await watch.stop();
  const inside = watch.within([[s, e]]);
  return {
    commands: n, gc_count: inside.count, gc_ms: inside.ms, heap_before: heapBefore, heap_after: heapAfter,
    heap_max: Math.max(heapMax, heapAfter), commands_per_s: (n / (e - s)) * 1000, build_ms: buildMs,
  };
}

const PER_THREAD_NOTE =
  "per-thread figures: process.memoryUsage() evaluated inside each thread through the inspector " +
  "(heapUsed/heapTotal/external/arrayBuffers are that thread's isolate), then again after HeapProfiler.collectGarbage; " +
  "SharedArrayBuffers are counted by every thread that maps them. Resident memory is the whole process (/proc/<pid>/status VmRSS).";

interface RefCost {
  heap: number;
  snapshot: number;
  encode_ms: number;
  decode_ms: number;
  hash_ms: number;
}

/** An engine and one read model after n deposits over 100 accounts, with 64-byte refs or none (section 5 of the header). */
function depositRefCost(n: number, withRefs: boolean, gc: () => void): RefCost {
  const accounts = 100;
  const cfg = { deposit_ref_cap: Math.ceil(n / accounts), account_capacity: accounts + 1 };
  const out = new BufferEventOut(1 << 20);
  const views = new Views(cfg);
  const engine = new Engine(cfg, out);
  let ts = 1_750_000_000_000_000_000n;
  const send = (cmd: RecordObject): void => {
    ts += 1000n;
    engine.execute(encodeToMem({ producer: 100, correlation: 1, ts, ...cmd }).mem, 0);
    for (const o of out.offsets()) views.apply(out.mem, o);
    out.reset();
  };
  for (let a = 1; a <= accounts; a++) send({ type: 'CreateAccount' });
  gc();
  const h0 = process.memoryUsage().heapUsed;
  for (let i = 0; i < n; i++) {
    const a = 1 + (i % accounts);
    send({ type: 'Deposit', account: a, amount: 1, ref: withRefs ? `${a}x${i}`.padEnd(64, '-') : '' });
  }
  gc();
  const heap = process.memoryUsage().heapUsed - h0;
  let t = performance.now();
  const bytes = encodeViews(views);
  const encodeMs = performance.now() - t;
  t = performance.now();
  decodeViews(bytes);
  const decodeMs = performance.now() - t;
  t = performance.now();
  stateHash(views.state);
  return { heap, snapshot: bytes.length, encode_ms: encodeMs, decode_ms: decodeMs, hash_ms: performance.now() - t };
}

/** Section 5 of the header: the cost of n remembered deposit refs, into metrics and notes. */
function depositRefFigures(n: number, metrics: Record<string, number>, notes: string[]): void {
  const gc = (globalThis as { gc?: () => void }).gc ?? ((): void => {});
  const refs = depositRefCost(n, true, gc);
  const none = depositRefCost(n, false, gc);
  // Two copies of the state (the engine's and the read model's) hold the refs.
  metrics.deposit_ref_heap_bytes_per_copy = round((refs.heap - none.heap) / 2 / n, 0);
  metrics.deposit_ref_snapshot_bytes = round((refs.snapshot - none.snapshot) / n, 0);
  metrics.deposit_refs_snapshot_encode_ms = round(refs.encode_ms, 0);
  metrics.deposit_refs_snapshot_decode_ms = round(refs.decode_ms, 0);
  metrics.deposit_refs_state_hash_ms = round(refs.hash_ms, 0);
  notes.push(
    `deposit refs: ${n} deposits with 64-byte refs over 100 accounts, against the same without a ref: ` +
      `${metrics.deposit_ref_heap_bytes_per_copy} heap bytes per ref in each copy of the state (engine, every read model), ` +
      `${metrics.deposit_ref_snapshot_bytes} snapshot bytes per ref; at that size a snapshot encodes in ${round(refs.encode_ms, 0)} ms ` +
      `(${round(none.encode_ms, 0)} without refs), decodes in ${round(refs.decode_ms, 0)} ms (${round(none.decode_ms, 0)}), ` +
      `hashes in ${round(refs.hash_ms, 0)} ms (${round(none.hash_ms, 0)}).`,
  );
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const s = settings(opts.quick === true);
  const notes: string[] = [];
  const metrics: Record<string, number> = {};
  const flag = (what: string): void => {
    notes.push(`FLAG ${what}`);
  };
  const inspectPort = await freePort();
  const ex = await startBenchExchange({ durability: 'none' }, [`--inspect=127.0.0.1:${inspectPort}`]);
  let insp: InspectorClient | null = null;
  try {
    insp = await InspectorClient.connect(inspectPort);
    await insp.attachWorkers();
    metrics.process_rss_idle_mib = mib(processMemory(ex.child.pid).rss);

    const t0 = performance.now();
    const market = await openMarket(ex.admin(30_000));
    const setup = await createTraders(ex, s.accounts, { deposit_cents: 1_000_000_000, seed_shares: 0, market_id: market, concurrency: 64 });
    metrics.accounts_setup_ms = setup.setup_ms;
    const perAccount = Math.ceil(s.orders / setup.traders.length);
    let resting = 0;
    let other = 0;
    const tOrders = performance.now();
    await pool(setup.traders.length, 64, async (i) => {
      const t = setup.traders[i]!;
      const c = new DxClient({ baseUrl: ex.base, keyId: t.key_id, secret: t.secret, timeoutMs: 30_000 });
      const n = Math.min(perAccount, s.orders - i * perAccount);
      if (n <= 0) return;
      const r = await c.placeBatch(restingOrders(market, n, t.account_id));
      for (const item of r.results) {
        if ('status' in item && item.status === 'resting') resting++;
        else other++;
      }
    });
    metrics.orders_setup_ms = Math.round(performance.now() - tOrders);
    metrics.population_ms = Math.round(performance.now() - t0);
    metrics.accounts = setup.traders.length;
    metrics.resting_orders = resting;
    if (other > 0) flag(`${other} of the population's placements did not rest`);
    if (resting < s.orders) flag(`only ${resting} of ${s.orders} orders rest`);

    // Per-thread memory at the population.
    const pm = processMemory(ex.child.pid);
    metrics.process_rss_mib = mib(pm.rss);
    metrics.process_peak_rss_mib = mib(pm.peak_rss);
    metrics.process_rss_anon_mib = mib(pm.rss_anon);
    metrics.process_rss_file_mib = mib(pm.rss_file);
    metrics.process_rss_shmem_mib = mib(pm.rss_shmem);
    const reports = await threadReports(insp);
    for (const r of reports) {
      const k = `thread_${r.name}`;
      metrics[`${k}_reported`] = r.before === null ? 0 : 1;
      if (r.before === null) {
        notes.push(`thread ${r.name} could not report its memory: ${r.error}`);
        continue;
      }
      if (r.after === null) notes.push(`thread ${r.name}: heap after a full GC not available (${r.error})`);
      metrics[`${k}_heap_used_mib`] = mib(r.before.heapUsed);
      metrics[`${k}_heap_total_mib`] = mib(r.before.heapTotal);
      if (r.after !== null) metrics[`${k}_heap_used_after_gc_mib`] = mib(r.after.heapUsed);
      metrics[`${k}_external_mib`] = mib(r.before.external);
      metrics[`${k}_array_buffers_mib`] = mib(r.before.arrayBuffers);
    }
    metrics.process_rss_after_gc_mib = mib(processMemory(ex.child.pid).rss);

    // The engine thread under a placement load, heap sampled.
    const engine = insp.worker('engine');
    if (engine === null) {
      notes.push(`no worker named "engine" among ${insp.workers.map((w) => w.name || w.url).join(', ')}: engine-thread heap not sampled`);
    } else {
      const keys = setup.traders.slice(0, Math.min(256, setup.traders.length)).map((t) => ({ keyId: t.key_id, secret: t.secret }));
      const sample = async (): Promise<number> => (await insp!.evaluateJson<ThreadMemory>(engine, MEMORY_EXPRESSION, 2000)).heapUsed;
      // Baseline: the same sampling with no load (what the samples themselves allocate there).
      const idle: number[] = [];
      for (let i = 0; i < 8; i++) {
        idle.push(await sample());
        await new Promise((r) => setTimeout(r, 250));
      }
      metrics.engine_thread_idle_heap_growth_mib = round((idle[idle.length - 1]! - idle[0]!) / MIB, 3);
      notes.push(`engine thread idle, 8 samples 250 ms apart: ${idle.map((x) => mib(x)).join(', ')} MiB (what the sampling alone does).`);
      const samples: number[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          try {
            samples.push(await sample());
          } catch (e) {
            notes.push(`engine heap sample failed: ${(e as Error).message}`);
            return;
          }
          await new Promise((r) => setTimeout(r, 250));
        }
      })();
      const load = await runLoad({
        baseUrl: ex.base, keys, markets: [market], mode: 'closed', connections: keys.length, durationMs: s.load_ms,
        mix: { place: 1, cancel: 0, read: 0 }, workers: 1, seed: 0x3e3, mid: 50, spread: 5,
      });
      sampling = false;
      await sampler;
      let maxRise = 0;
      let drops = 0;
      for (let i = 1; i < samples.length; i++) {
        const d = samples[i]! - samples[i - 1]!;
        if (d > maxRise) maxRise = d;
        if (d < 0) drops++;
      }
      metrics.engine_thread_load_per_s = round(load.throughput_per_s, 0);
      metrics.engine_thread_heap_samples = samples.length;
      if (samples.length > 0) {
        metrics.engine_thread_heap_first_mib = mib(samples[0]!);
        metrics.engine_thread_heap_last_mib = mib(samples[samples.length - 1]!);
        metrics.engine_thread_heap_max_rise_mib = round(maxRise / MIB, 3);
        metrics.engine_thread_heap_drops = drops;
      }
      notes.push(
        `engine thread under ${Math.round(load.throughput_per_s)} placements/s for ${s.load_ms} ms (statuses ` +
          `${JSON.stringify(load.statuses)}): heapUsed sampled ${samples.length} times through the inspector (each sample itself ` +
          `allocates a small result string in that thread): ${samples.map((x) => mib(x)).join(', ')} MiB.`,
      );
    }
  } finally {
    insp?.close();
    const how = await ex.stop();
    if (how.killed || how.code !== 0)
      process.stderr.write(`memory: the exchange ended with code ${how.code} signal ${how.signal}${how.killed ? ' (SIGKILL)' : ''}\n`);
  }

  const lr = await longEngineRun(s.engine_commands);
  metrics.engine_long_commands = lr.commands;
  metrics.engine_long_gc_count = lr.gc_count;
  metrics.engine_long_gc_ms = round(lr.gc_ms, 2);
  metrics.engine_long_heap_before_mib = mib(lr.heap_before);
  metrics.engine_long_heap_after_mib = mib(lr.heap_after);
  metrics.engine_long_heap_max_mib = mib(lr.heap_max);
  metrics.engine_long_heap_delta_mib = round((lr.heap_after - lr.heap_before) / MIB, 3);
  metrics.engine_long_commands_per_s = round(lr.commands_per_s, 0);
  metrics.engine_long_build_ms = round(lr.build_ms, 0);
  notes.push(
    `long engine run: the engine_match stream (${lr.commands} commands after its untimed setup, one engine, one loop, after a warm-up ` +
      `pass on another engine), ${lr.gc_count} GCs started inside the loop (${round(lr.gc_ms, 2)} ms), heapUsed ${mib(lr.heap_before)} ` +
      `-> ${mib(lr.heap_after)} MiB (max ${mib(lr.heap_max)}; the loop reads process.memoryUsage() 20 times, which allocates a little ` +
      `in this thread, not in the engine).`,
  );
  depositRefFigures(s.deposit_refs, metrics, notes);
  notes.push(PER_THREAD_NOTE);
  notes.push(
    `targets (issue 8): the engine does not allocate in steady state: ` +
      `${lr.gc_count === 0 && lr.heap_after - lr.heap_before < MIB ? 'met' : 'NOT met'} (${lr.gc_count} GCs, heap growth ` +
      `${round((lr.heap_after - lr.heap_before) / MIB, 3)} MiB over ${lr.commands} commands).`,
  );

  const env = environment();
  return {
    name: 'memory',
    node: env.node,
    machine: env.machine,
    workload: `durability: none. Exchange as a separate process started with --inspect (loopback); ${metrics.accounts} accounts (control ` +
      `plane) and ${metrics.resting_orders} resting orders (batches of ${Math.ceil(s.orders / s.accounts)} non-crossing buys per account ` +
      `through the signed REST API) on one market; per-thread memory through the inspector; then ${s.load_ms} ms of placements ` +
      `(test/support/loadgen closed loop) with the engine thread's heap sampled; then, in the bench process, ${s.engine_commands} ` +
      `engine_match commands in one loop on one engine with GCs observed.`,
    metrics,
    peers: {},
    ratios: {},
    notes,
  };
}
