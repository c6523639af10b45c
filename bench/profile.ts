// profile: V8 CPU profiles of the hot paths, with a top-functions table.
//
//   npm run profile -- engine  [--quick] [--commands N] [--passes K] [--interval-us U]
//   npm run profile -- deopt   [--commands N] [--passes K]
//   npm run profile -- gateway [--quick] [--duration 10s] [--durability none|fsync] [--lane rest|ws-json|ws-binary]
//                              [--mix place=1,read=0] [--connections N] [--thread gateway-0] [--interval-us U]
//
// engine: the engine_match workload (bench/engine_match.ts: the same seeded
//   stream, the same decide + evolve loop) on a worker thread, like the
//   exchange's matching worker. The worker builds the stream, warms the
//   engine up and sets up K fresh engines untimed, then opens a
//   node:inspector Session on ITSELF and runs Profiler.start, K passes over
//   the stream (one per engine), Profiler.stop.
//   Writes bench/results/engine.cpuprofile and bench/results/profile-engine.md.
// gateway: the real exchange (separate process, started with --inspect on a
//   fresh loopback port) with its accounts and market set up through the
//   control plane; test/support/inspector.ts attaches to the worker thread named
//   `--thread` (default gateway-0; `main` is the main thread) and runs Profiler.start / stop around a
//   closed-loop load from the load generator (test/support/loadgen;
//   placements by default), or with --lane ws-json / ws-binary the ws_orders
//   benchmark's WebSocket placements (test/support/loadgen/ws_order_worker.ts, closed
//   loop, 16 connections with 200 in flight each, keys on an unthrottled
//   tier). Writes
//   bench/results/gateway.cpuprofile and profile-gateway.md (another thread:
//   exchange-<name>.cpuprofile and profile-exchange-<name>.md).
// deopt: runs this tool again as `node --trace-deopt ... deopt-child`, which
//   builds the engine_match stream, forces one GC, runs one warm-up pass and
//   then K passes (each on a fresh engine), with a marker line on stdout
//   before each pass; counts V8's deoptimization lines before and after the
//   first marker. Writes bench/results/profile-deopt.md; exits 1 when the
//   engine loop deoptimized after warm-up (it is meant to be deopt-clean).
//
// Each CPU profile's .md has the run's settings, the throughput while
// profiled, self time by area (our folders, node internals, npm packages, GC,
// idle) and the top functions by self and by total time. Open a .cpuprofile
// in Chrome DevTools (Performance panel, "Load profile...") or VS Code (open
// the file). Main thread of its own process; the engine profile runs in a
// worker thread of it.

import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { availableParallelism } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { parseCommandLine, UsageError, type OptionValues } from '../src/lib/command_line.js';
import { freePort } from '../src/lib/free_port.js';
import { areaMarkdown, summarize, topFunctionsMarkdown, type CpuProfile } from '../test/support/bench/cpuprofile.js';
import { parseDeoptTrace, STEADY_MARK, tallyDeopts, type DeoptEvent, type DeoptRow } from '../test/support/bench/deopt_trace.js';
import { parseWeights, runLoad, type Mix } from '../test/support/loadgen/loadgen.js';
import { InspectorClient } from '../test/support/inspector.js';
import { createTraders, openMarket, startBenchExchange } from './lib/population.js';
import { OrderLoad } from './ws_orders.js';
import { CpuWindow } from './lib/process_stats.js';
import { environment, resultsDir } from './lib/result.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

interface EngineJob {
  commands: number;
  passes: number;
  interval_us: number;
}

interface EngineOutcome {
  profile: string;
  commands: number;
  passes: number;
  ns: number;
  build_ms: number;
  threadId: number;
}

// ------------------------------------------------------------------ engine (worker side)

async function engineWorker(job: EngineJob): Promise<EngineOutcome> {
  const { threadId } = await import('node:worker_threads');
  const em = await import('./engine_match.js');
  const t0 = performance.now();
  const w = em.buildWorkload(job.commands);
  const buildMs = performance.now() - t0;
  em.timeOurs(w, em.freshOurs(w)); // warm-up, not profiled
  // Fresh engines (each ~13 MB of typed arrays, setup replayed) made before the profiler starts.
  const engines = Array.from({ length: job.passes }, () => em.freshOurs(w));
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: job.interval_us });
  await session.post('Profiler.start');
  let ns = 0;
  for (const x of engines) ns += em.timeOurs(w, x).ns;
  const { profile } = await session.post('Profiler.stop');
  await session.post('Profiler.disable');
  session.disconnect();
  return { profile: JSON.stringify(profile), commands: w.cmds.count, passes: job.passes, ns, build_ms: Math.round(buildMs), threadId };
}

if (!isMainThread && (workerData as { profileJob?: EngineJob } | null)?.profileJob !== undefined) {
  engineWorker((workerData as { profileJob: EngineJob }).profileJob).then(
    (r) => parentPort!.postMessage({ ok: r }),
    (e: unknown) => parentPort!.postMessage({ error: (e as Error)?.stack ?? String(e) }),
  );
}

// ------------------------------------------------------------------ output

const CPU_PROFILE_NOTE =
  'Open the `.cpuprofile` in Chrome DevTools (Performance panel, "Load profile...", or the JavaScript Profiler panel) or in VS Code ' +
    '(open the file: flame chart and table). Self time = samples with the function innermost; total time = samples with the function ' +
      'anywhere on the stack. Percentages are of all sampled time, (idle) and (garbage collector) included. Profiling slows the thread ' +
        'down (sampling), so the throughput here is not a benchmark figure.';

function header(title: string, lines: string[], note = CPU_PROFILE_NOTE): string {
  const env = environment();
  return [
    `# ${title}`,
    '',
    `- written ${new Date().toISOString()} by \`npm run profile -- ${process.argv.slice(2).join(' ')}\` (bench/profile.ts)`,
    `- machine: ${env.machine.cpus} CPUs, ${env.machine.model}, ${env.machine.mem_gib} GiB; Node ${env.node}`,
    ...lines.map((l) => `- ${l}`),
    '',
    note,
    '',
    '',
  ].join('\n');
}

function writeOutputs(stem: string, title: string, lines: string[], profileJson: string): { cpuprofile: string; md: string } {
  const dir = resultsDir();
  // DX_BENCH_RESULTS_DIR may name a directory that does not exist yet.
  mkdirSync(dir, { recursive: true });
  const cpuprofile = join(dir, `${stem}.cpuprofile`);
  const md = join(dir, `profile-${stem}.md`);
  writeFileSync(cpuprofile, profileJson);
  const s = summarize(JSON.parse(profileJson) as CpuProfile, ROOT);
  writeFileSync(
    md,
    `${header(title, [...lines, `profile: \`bench/results/${stem}.cpuprofile\``])}## Self time by ` +
      `area\n\n${areaMarkdown(s)}\n\n${topFunctionsMarkdown(s, 30)}\n`,
  );
  return { cpuprofile, md };
}

// ------------------------------------------------------------------ args

/** The options of every subcommand (each reads its own). */
const OPTIONS = {
  quick: { type: 'boolean' },
  commands: { type: 'string' },
  passes: { type: 'string' },
  'interval-us': { type: 'string' },
  duration: { type: 'string' },
  durability: { type: 'string' },
  mix: { type: 'string' },
  connections: { type: 'string' },
  thread: { type: 'string' },
  lane: { type: 'string' },
} as const;

type Args = OptionValues<typeof OPTIONS>;

function durationMs(s: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(s);
  if (!m) throw new Error(`bad duration ${s}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

const USAGE = `usage: npm run profile -- engine  [--quick] [--commands N] [--passes K] [--interval-us U]
       npm run profile -- gateway [--quick] [--duration 10s] [--durability none|fsync]
                              [--lane rest|ws-json|ws-binary] [--mix place=1,read=0]
                                  [--connections N] [--thread gateway-0] [--interval-us U]
       npm run profile -- deopt   [--commands N] [--passes K]`;

// ------------------------------------------------------------------ engine (main side)

async function profileEngine(v: Args): Promise<void> {
  const quick = v.quick === true;
  const job: EngineJob = {
    commands: Number(v.commands ?? (quick ? 100_000 : 1_000_000)),
    passes: Number(v.passes ?? (quick ? 2 : 5)),
    interval_us: Number(v['interval-us'] ?? 100),
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: { profileJob: job }, name: 'engine-profile' });
  const r = await new Promise<EngineOutcome>((resolveP, reject) => {
    worker.once('message', (m: { ok?: EngineOutcome; error?: string }) =>
      m.ok !== undefined ? resolveP(m.ok) : reject(new Error(m.error)),
    );
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`profile worker exited with code ${code} before answering`)));
  });
  await worker.terminate();
  const rate = (r.commands * r.passes) / (r.ns / 1e9);
  const out = writeOutputs(
    'engine',
    'CPU profile: engine_match on a worker thread',
    [
      `workload: bench/engine_match.ts buildWorkload(${r.commands}) (the engine_match stream: ~50% passive limits, ~30% crossing, ~20% ` +
        `cancels, fees on), ${r.passes} passes each on a fresh engine (created and set up before the profiler starts), after one untimed ` +
          `warm-up pass; built in ${r.build_ms} ms before profiling`,
      `thread: a worker thread (threadId ${r.threadId}) profiling itself through node:inspector Session (Profiler.start/stop), sampling ` +
        `every ${job.interval_us} µs`,
      `throughput while profiled: ${Math.round(rate).toLocaleString('en-US')} commands/s (${r.commands * r.passes} commands in ` +
        `${(r.ns / 1e6).toFixed(0)} ms)`,
    ],
    r.profile,
  );
  console.log(`engine: ${Math.round(rate)} commands/s while profiled -> ${out.cpuprofile}, ${out.md}`);
}

// ------------------------------------------------------------------ gateway

/** --lane ws-*: connections and placements in flight per connection (the ws_orders benchmark's 16-connection run). */
const WS_PROFILE_CONNECTIONS = 16;
const WS_PROFILE_WINDOW = 200;

/**
 * The load while the thread is profiled: the load generator's closed loop
 * over REST, or `wsLoad` (WebSocket order entry). Returns what it was and
 * the rate it reached, for the profile's header.
 */
async function profiledLoad(
  base: string, wsLoad: OrderLoad | null, lane: string, keys: { keyId: number; secret: string }[], market: number, connections: number,
  mix: Mix, duration: number,
): Promise<{ loadLine: string; rateLine: string }> {
  if (wsLoad === null) {
    const load = await runLoad({
      baseUrl: base,
      keys,
      markets: [market],
      mode: 'closed',
      connections: Math.min(connections, keys.length),
      durationMs: duration,
      mix,
      workers: Math.max(1, Math.floor(availableParallelism() / 2)),
      seed: 0x9f0f11e,
    });
    const loadLine = `load: test/support/loadgen closed loop, mix ${JSON.stringify(mix)} (placements around tick 50±5, YES and NO, 70% ` +
      `buys), ${Math.min(connections, keys.length)} connections over ${keys.length} keys (each with a deposit and 5000 YES+NO shares), ` +
        `${duration} ms`;
    const rate = Math.round(load.throughput_per_s).toLocaleString('en-US');
    return { loadLine, rateLine: `${rate} requests/s, statuses ${JSON.stringify(load.statuses)}` };
  }
  const r = await wsLoad.run({ loop: 'closed', window: WS_PROFILE_WINDOW, rate: 0, duration_ms: duration });
  await wsLoad.close();
  const loadLine = `load: test/support/loadgen/ws_order_worker.ts (the ws_orders benchmark's), ` +
    `${lane === 'ws-json' ? 'place_order JSON frames' : 'binary PlaceOrder records'}, closed loop, ${connections} connection(s) with ` +
      `${WS_PROFILE_WINDOW} placements in flight each, keys on a custom tier of 10,000,000/s, ${duration} ms`;
  const rate = Math.round((r.ok * 1000) / r.elapsed_ms).toLocaleString('en-US');
  return { loadLine, rateLine: `${rate} placements/s, answers ${JSON.stringify(r.outcomes)}` };
}

async function profileGateway(v: Args): Promise<void> {
  const quick = v.quick === true;
  const duration = durationMs(v.duration ?? (quick ? '3s' : '10s'));
  const durability = (v.durability ?? 'none') as 'none' | 'fsync';
  if (durability !== 'none' && durability !== 'fsync') throw new Error(`--durability is none or fsync\n${USAGE}`);
  const threadName = v.thread ?? 'gateway-0';
  const interval = Number(v['interval-us'] ?? 250);
  const mix = v.mix === undefined ? { place: 1, cancel: 0, read: 0 } : parseWeights<keyof Mix>(v.mix, ['place', 'cancel', 'read'], 'mix');
  const lane = v.lane ?? 'rest';
  if (lane !== 'rest' && lane !== 'ws-json' && lane !== 'ws-binary') throw new Error(`--lane is rest, ws-json or ws-binary\n${USAGE}`);
  const keysN = quick ? 256 : 512;
  const connections = Number(v.connections ?? (lane === 'rest' ? keysN : WS_PROFILE_CONNECTIONS));
  const inspectPort = await freePort();
  const gateways = Math.max(1, availableParallelism() - 1);
  const ex = await startBenchExchange({ durability, gateways }, [`--inspect=127.0.0.1:${inspectPort}`]);
  let insp: InspectorClient | null = null;
  try {
    insp = await InspectorClient.connect(inspectPort);
    await insp.attachWorkers();
    // `main`: the exchange's main thread (control plane, keys service, its read model).
    const target = threadName === 'main' ? null : insp.worker(threadName);
    if (target === null && threadName !== 'main')
      throw new Error(`no thread named ${threadName}; the exchange has ${insp.workers.map((w) => w.name || w.url).join(', ')}`);
    const market = await openMarket(ex.admin(30_000));
    const setup = await createTraders(ex, keysN, {
      deposit_cents: 100_000_000, seed_shares: 5000, market_id: market, concurrency: 32, unthrottled: true,
    });
    const keys = setup.traders.map((t) => ({ keyId: t.key_id, secret: t.secret }));
    await insp.callOn(target, 'Profiler.enable');
    await insp.callOn(target, 'Profiler.setSamplingInterval', { interval });
    let wsLoad: OrderLoad | null = null;
    if (lane !== 'rest') {
      const wsKeys = setup.traders
        .slice(0, Math.min(connections, keysN))
        .map((t) => ({ key_id: t.key_id, secret: t.secret, account_id: t.account_id }));
      wsLoad = await OrderLoad.start(ex, lane === 'ws-json' ? 'json' : 'binary', market, wsKeys, 0x9f0f11e);
    }
    await insp.callOn(target, 'Profiler.start');
    const w = new CpuWindow({ server: ex.child.pid, generator: process.pid });
    const { loadLine, rateLine } = await profiledLoad(ex.base, wsLoad, lane, keys, market, connections, mix, duration);
    const cpu = w.stop();
    const { profile } = await insp.callOn<{ profile: CpuProfile }>(target, 'Profiler.stop', {}, 60_000);
    // The profile is taken: a thread that ended meanwhile has no profiler left to disable.
    await insp.callOn(target, 'Profiler.disable').catch(() => undefined);
    const thread = threadName.startsWith('gateway') ? 'gateway' : `exchange-${threadName.replace(/[^a-z0-9]+/gi, '-')}`;
    const stem = lane === 'rest' ? thread : `${thread}-${lane}`;
    const out = writeOutputs(
      stem,
      `CPU profile: the exchange's ${threadName} thread under load`,
      [
        `exchange: separate process, ${ex.gateways} gateway thread(s), --durability ` +
          `${durability}${durability === 'none' ? ' (no journal write or fsync on the path: benchmark setting)' : ''}; profiled thread: ` +
            `\`${threadName}\` through the inspector (NodeWorker session, Profiler.start/stop), sampling every ${interval} µs`,
        loadLine,
        `while profiled: ${rateLine}; CPU % of one core: exchange ${cpu.process_pct.server}, load generator ` +
          `${cpu.process_pct.generator}, machine ${cpu.machine_pct}`,
      ],
      JSON.stringify(profile),
    );
    console.log(`${threadName}: ${rateLine} while profiled -> ${out.cpuprofile}, ${out.md}`);
  } finally {
    insp?.close();
    const how = await ex.stop();
    if (how.killed || how.code !== 0) process.stderr.write(`profile: the exchange ended with code ${how.code} signal ${how.signal}\n`);
  }
}

// ------------------------------------------------------------------ deopt

const DEOPT_COMMANDS = 200_000;
const DEOPT_PASSES = 4;
/** Folders of dist/src/ with the code the engine loop runs (decide + evolve, book, accounts, records, lib). */
const ENGINE_DIRS = ['engine', 'book', 'accounts', 'lib', 'layout'];
const KEYWORDS = new Set(['if', 'for', 'while', 'switch', 'catch', 'function', 'return']);

/**
 * Names of the functions, methods, accessors and classes defined in the
 * engine's compiled files. A --trace-deopt line names a function but not its
 * file, so a name from this set is taken for the engine's (a bench function
 * of the same name would be too, which errs towards failing the check).
 */
function engineFunctionNames(): Set<string> {
  const def = new RegExp(
    [
      String.raw`\bfunction\s*\*?\s*([\w$]+)`,
      String.raw`\bclass\s+([\w$]+)`,
      String.raw`^\s*(?:static\s+)?(?:async\s+)?((?:get |set )?#?[\w$]+)\s*\([^)]*\)\s*\{`,
      String.raw`\b(?:const|let|var)\s+([\w$]+)\s*=\s*(?:async\s*)?(?:function\b|\([^)]*\)\s*=>|[\w$]+\s*=>)`,
    ].join('|'),
    'gm',
  );
  const names = new Set<string>();
  for (const dir of ENGINE_DIRS) {
    const abs = join(ROOT, 'dist', 'src', dir);
    for (const f of readdirSync(abs)) {
      if (!f.endsWith('.js')) continue;
      for (const m of readFileSync(join(abs, f), 'utf8').matchAll(def)) {
        const name = m[1] ?? m[2] ?? m[3] ?? m[4]!;
        if (!KEYWORDS.has(name)) names.add(name);
      }
    }
  }
  return names;
}

function deoptTable(rows: DeoptRow[]): string {
  if (rows.length === 0) return 'None.';
  return [
    '| count | function | name defined in the engine | kind | reason |',
    '|---:|---|---|---|---|',
    ...rows.map((r) => `| ${r.count} | \`${r.fn}\` | ${r.engine ? 'yes' : 'no'} | ${r.kind} | ${r.reason} |`),
  ].join('\n');
}

/** A section of profile-deopt.md: the counted events of a phase, then the others. */
function deoptPhase(title: string, events: DeoptEvent[]): string {
  const counted = events.filter((e) => e.counted);
  const other = events.filter((e) => !e.counted);
  return `## ${title}: ${counted.length} counted\n\n${deoptTable(tallyDeopts(counted))}\n\nOther code marked for deoptimization (not ` +
    `counted): ${other.length}\n\n${deoptTable(tallyDeopts(other))}\n`;
}

const DEOPT_NOTE =
  "Counted: every bailout (`[bailout (kind: deopt-eager|deopt-lazy|deopt-soft, reason: ...)`: optimized code left mid-run) and every " +
    "engine function whose optimized code is marked for deoptimization. After warm-up only the engine loop runs, and a deopt in engine " +
      "code inlined into the benchmark's loop (`oursSpan`) is reported under that function, so no bailout is excused there. Listed " +
        "apart, not counted: other code marked for deoptimization, e.g. the workload generator's once GC collects objects its code " +
          "embedded (\"weak objects\"). A function counts as the engine's by its name (V8 does not print the file), so the generator's " +
            "methods named like engine functions (`place`, `cancel`, ...) show up as engine functions during warm-up.";

/** The child of `deopt`, under node --trace-deopt: warm-up, then the timed passes, each after a marker line. */
async function deoptChild(v: Args): Promise<void> {
  const em = await import('./engine_match.js');
  const w = em.buildWorkload(Number(v.commands));
  // One full GC for the generator's garbage, as engine_match's run() does
  // before its warm-up: the generator's code that embedded its objects is
  // marked for deoptimization ("weak objects") now, not during a timed pass
  // (several of its methods share a name with engine functions).
  (globalThis as { gc?: () => void }).gc!();
  em.timeOurs(w, em.freshOurs(w));
  // All engines set up before the first marker, so that what follows it is the engine loop alone.
  const engines = Array.from({ length: Number(v.passes) }, () => em.freshOurs(w));
  for (const [i, x] of engines.entries()) {
    // Synchronously on fd 1, where V8 writes its --trace-deopt lines, so that they stay in order.
    writeSync(1, `\n${STEADY_MARK} pass ${i + 1}\n`);
    em.timeOurs(w, x);
  }
}

async function profileDeopt(v: Args): Promise<number> {
  const commands = Number(v.commands ?? DEOPT_COMMANDS);
  const passes = Number(v.passes ?? DEOPT_PASSES);
  const self = fileURLToPath(import.meta.url);
  const childArgs = ['--trace-deopt', '--expose-gc', self, 'deopt-child', '--commands', String(commands), '--passes', String(passes)];
  const child = spawn(process.execPath, childArgs, { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    out += d;
  });
  // 'close', not 'exit': the end of stdout may still be in the pipe when the child has exited.
  const code = await new Promise<number | null>((r) => child.once('close', r));
  if (code !== 0) throw new Error(`deopt child under --trace-deopt exited with ${code}`);
  const names = engineFunctionNames();
  const sections = parseDeoptTrace(out, (fn) => names.has(fn));
  if (sections.length !== passes + 1)
    throw new Error(`expected ${passes} pass markers in the --trace-deopt output, found ${sections.length - 1}`);
  const warm = sections[0]!.events;
  const steady = sections.slice(1).flatMap((x) => x.events);
  const steadyCounted = steady.filter((e) => e.counted);
  const warmCounted = warm.filter((e) => e.counted);
  const perPass = sections.slice(1).map((x) => x.events.filter((e) => e.counted).length);
  // This process only reads the child's output; the flags matter in the child, which sets them by importing bench/engine_match.js.
  const { V8_FLAGS } = await import('../src/main/v8_tuning.js');
  const md = join(resultsDir(), 'profile-deopt.md');
  writeFileSync(
    md,
    header(
      'Deoptimizations: the engine_match loop under --trace-deopt',
      [
        `child: \`node ${childArgs.map((a) => (a === self ? relative(ROOT, self) : a)).join(' ')}\`, the engine on the child's main thread`,
        `V8 flags: ${V8_FLAGS.join(' ')} (src/main/v8_tuning.ts, set as the exchange's engine thread sets them: the child imports ` +
          `bench/engine_match.js, which imports it), and --trace-deopt --expose-gc`,
        `workload: bench/engine_match.ts buildWorkload(${commands}) (the engine_match stream), one forced full GC (for the generator's ` +
          `garbage, as engine_match does), one untimed warm-up pass on a fresh engine, then ${passes} passes each on a fresh engine (all ` +
            `set up before the first pass marker)`,
        `engine functions: ${names.size} names of functions, methods, accessors and classes defined in ` +
          `dist/src/{${ENGINE_DIRS.join(',')}}/*.js`,
        `steady state (after warm-up): ${steadyCounted.length} deoptimizations on the engine loop (per pass: ${perPass.join(', ')}): ` +
          `${steadyCounted.length === 0 ? 'clean' : '**FAIL**'}`,
      ],
      DEOPT_NOTE,
    ) +
      deoptPhase('After warm-up (steady state)', steady) +
      '\n' +
      deoptPhase(
        "Warm-up (module loading, building the stream through the generator's own engine, the forced GC, the warm-up pass, setting up " +
          "the fresh engines)",
        warm,
      ),
  );
  console.log(
    `deopt: ${steadyCounted.length} deoptimizations on the engine loop after warm-up (${passes} passes x ${commands} commands; ` +
      `${warmCounted.length} during warm-up) -> ${md}`,
  );
  if (steadyCounted.length === 0) return 0;
  for (const r of tallyDeopts(steadyCounted)) console.error(`  ${r.count} x ${r.fn} (${r.kind}): ${r.reason}`);
  return 1;
}

async function main(argv: string[]): Promise<number> {
  const what = argv[0];
  let v: Args;
  try {
    v = parseCommandLine(argv.slice(1), OPTIONS, { positionals: false }).values;
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`${e.message}\n${USAGE}`);
    return 2;
  }
  if (what === 'engine') await profileEngine(v);
  else if (what === 'gateway') await profileGateway(v);
  else if (what === 'deopt') return profileDeopt(v);
  else if (what === 'deopt-child') await deoptChild(v);
  else {
    console.error(USAGE);
    return 2;
  }
  return 0;
}

// Only when run as a program (not in the engine worker thread it starts).
if (isMainThread && process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (e: unknown) => {
      console.error((e as Error)?.stack ?? String(e));
      process.exitCode = 1;
    },
  );
}
