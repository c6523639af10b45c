// profile: V8 CPU profiles of the hot paths, with a top-functions table.
//
//   npm run profile -- engine  [--quick] [--commands N] [--passes K] [--interval-us U]
//   npm run profile -- gateway [--quick] [--duration 10s] [--durability none|fsync]
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
//   control plane; bench/lib/inspector.ts attaches to the worker thread named
//   `--thread` (default gateway-0) and runs Profiler.start / stop around a
//   closed-loop load from tools/loadgen (placements by default). Writes
//   bench/results/gateway.cpuprofile and profile-gateway.md (another thread:
//   exchange-<name>.cpuprofile and profile-exchange-<name>.md).
//
// Each .md has the run's settings, the throughput while profiled, self time
// by area (our folders, node internals, npm packages, GC, idle) and the top
// functions by self and by total time. Open a .cpuprofile in Chrome DevTools
// (Performance panel, "Load profile...") or VS Code (open the file). Main
// thread of a tool process; the engine profile runs in a worker thread of it.

import { spawn } from 'node:child_process';
import { appendFileSync, writeFileSync, writeSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { availableParallelism } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { areaMarkdown, summarize, topFunctionsMarkdown, type CpuProfile } from '../bench/lib/cpuprofile.js';
import { createTraders, freePort, openMarket, startExchange } from '../bench/lib/exchange_fixture.js';
import { InspectorClient } from '../bench/lib/inspector.js';
import { CpuWindow } from '../bench/lib/process_stats.js';
import { environment, resultsDir } from '../bench/lib/result.js';
import { runLoad } from './loadgen/loadgen.js';

const DEOPT_BEGIN = '@@dx-profile: profiled passes begin@@';
const DEOPT_END = '@@dx-profile: profiled passes end@@';
const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');

interface EngineJob {
  /** Print the begin/end markers on fd 1 (only under --trace-deopt). */
  markers: boolean;
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
  const em = await import('../bench/engine_match.js');
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
  // Markers on fd 1, synchronously, so --trace-deopt lines (written by V8 to
  // the same fd) can be attributed to the profiled passes alone.
  if (job.markers) writeSync(1, `\n${DEOPT_BEGIN}\n`);
  let ns = 0;
  for (const x of engines) ns += em.timeOurs(w, x).ns;
  if (job.markers) writeSync(1, `\n${DEOPT_END}\n`);
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

function header(title: string, lines: string[]): string {
  const env = environment();
  return [
    `# ${title}`,
    '',
    `- written ${new Date().toISOString()} by \`npm run profile -- ${process.argv.slice(2).join(' ')}\` (tools/profile.ts)`,
    `- machine: ${env.machine.cpus} CPUs, ${env.machine.model}, ${env.machine.mem_gib} GiB; Node ${env.node}`,
    ...lines.map((l) => `- ${l}`),
    '',
    'Open the `.cpuprofile` in Chrome DevTools (Performance panel, "Load profile...", or the JavaScript Profiler panel) or in VS Code (open the file: flame chart and table). Self time = samples with the function innermost; total time = samples with the function anywhere on the stack. Percentages are of all sampled time, (idle) and (garbage collector) included. Profiling slows the thread down (sampling), so the throughput here is not a benchmark figure.',
    '',
    '',
  ].join('\n');
}

function writeOutputs(stem: string, title: string, lines: string[], profileJson: string): { cpuprofile: string; md: string } {
  const dir = resultsDir();
  const cpuprofile = join(dir, `${stem}.cpuprofile`);
  const md = join(dir, `profile-${stem}.md`);
  writeFileSync(cpuprofile, profileJson);
  const s = summarize(JSON.parse(profileJson) as CpuProfile, ROOT);
  writeFileSync(md, `${header(title, [...lines, `profile: \`bench/results/${stem}.cpuprofile\``])}## Self time by area\n\n${areaMarkdown(s)}\n\n${topFunctionsMarkdown(s, 30)}\n`);
  return { cpuprofile, md };
}

// ------------------------------------------------------------------ args

function flagValue(argv: string[], name: string): string | undefined {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : undefined;
}

function durationMs(s: string): number {
  const m = /^([0-9]+(?:\.[0-9]+)?)(ms|s|m)?$/.exec(s);
  if (!m) throw new Error(`bad duration ${s}`);
  const n = Number(m[1]);
  return m[2] === 'ms' ? n : m[2] === 'm' ? n * 60_000 : n * 1000;
}

const USAGE = `usage: npm run profile -- engine  [--quick] [--commands N] [--passes K] [--interval-us U] [--trace-deopt]
       npm run profile -- gateway [--quick] [--duration 10s] [--durability none|fsync] [--mix place=1,read=0]
                                  [--connections N] [--thread gateway-0] [--interval-us U]`;

// ------------------------------------------------------------------ engine (main side)

/**
 * --trace-deopt: runs this tool again in a child process under node
 * --trace-deopt, keeps the V8 deoptimization lines printed between the
 * worker's begin/end markers (the profiled passes, after warm-up), and
 * appends them to profile-engine.md (and prints a summary).
 */
async function engineDeopts(argv: string[]): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const child = spawn(process.execPath, ['--trace-deopt', self, 'engine', ...argv.filter((a) => a !== '--trace-deopt')], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d: string) => {
    out += d;
  });
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0) throw new Error(`profile child under --trace-deopt exited with ${code}`);
  const b = out.indexOf(DEOPT_BEGIN);
  const e = out.indexOf(DEOPT_END);
  if (b < 0 || e < b) throw new Error('no profiled-pass markers in the --trace-deopt output');
  const inside = out.slice(b + DEOPT_BEGIN.length, e).split('\n').filter((l) => /bailout|deoptimiz/.test(l));
  const byFn = new Map<string, number>();
  for (const l of inside) {
    const m = /<(?:JSFunction|SharedFunctionInfo) ([^ >]+)/.exec(l);
    const reason = /reason: ([^)\]]+)/.exec(l)?.[1] ?? '';
    const k = `${m?.[1] ?? '?'}: ${reason}`;
    byFn.set(k, (byFn.get(k) ?? 0) + 1);
  }
  const before = out.slice(0, b).split('\n').filter((l) => /bailout \(/.test(l)).length;
  const lines = [...byFn].sort((x, y) => y[1] - x[1]).map(([k, n]) => `- ${n} x ${k}`);
  const md = join(resultsDir(), 'profile-engine.md');
  appendFileSync(md, `\n## Deoptimizations during the profiled passes (--trace-deopt)\n\n${inside.length === 0 ? 'None: the engine loop ran without a deoptimization after warm-up.' : `${inside.length} V8 deoptimization lines after warm-up (function: reason):\n\n${lines.join('\n')}`}\n\n(${before} bailouts happened before, while the stream was built and the engine warmed up.)\n`);
  const summaryLine = out.split('\n').find((l) => l.startsWith('engine: '));
  if (summaryLine !== undefined) console.log(summaryLine);
  console.log(`--trace-deopt: ${inside.length} deoptimization lines during the profiled passes${inside.length > 0 ? `:\n${lines.join('\n')}` : ''}; appended to ${md}`);
}

async function profileEngine(argv: string[]): Promise<void> {
  if (argv.includes('--trace-deopt') && !process.execArgv.includes('--trace-deopt')) {
    await engineDeopts(argv);
    return;
  }
  const quick = argv.includes('--quick');
  const job: EngineJob = {
    markers: process.execArgv.includes('--trace-deopt'),
    commands: Number(flagValue(argv, '--commands') ?? (quick ? 100_000 : 1_000_000)),
    passes: Number(flagValue(argv, '--passes') ?? (quick ? 2 : 5)),
    interval_us: Number(flagValue(argv, '--interval-us') ?? 100),
  };
  const worker = new Worker(new URL(import.meta.url), { workerData: { profileJob: job }, name: 'engine-profile' });
  const r = await new Promise<EngineOutcome>((resolveP, reject) => {
    worker.once('message', (m: { ok?: EngineOutcome; error?: string }) => (m.ok !== undefined ? resolveP(m.ok) : reject(new Error(m.error))));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`profile worker exited with code ${code} before answering`)));
  });
  await worker.terminate();
  const rate = (r.commands * r.passes) / (r.ns / 1e9);
  const out = writeOutputs('engine', 'CPU profile: engine_match on a worker thread', [
    `workload: bench/engine_match.ts buildWorkload(${r.commands}) (the engine_match stream: ~50% passive limits, ~30% crossing, ~20% cancels, fees on), ${r.passes} passes each on a fresh engine (created and set up before the profiler starts), after one untimed warm-up pass; built in ${r.build_ms} ms before profiling`,
    `thread: a worker thread (threadId ${r.threadId}) profiling itself through node:inspector Session (Profiler.start/stop), sampling every ${job.interval_us} µs`,
    `throughput while profiled: ${Math.round(rate).toLocaleString('en-US')} commands/s (${r.commands * r.passes} commands in ${(r.ns / 1e6).toFixed(0)} ms)`,
  ], r.profile);
  console.log(`engine: ${Math.round(rate)} commands/s while profiled -> ${out.cpuprofile}, ${out.md}`);
}

// ------------------------------------------------------------------ gateway

async function profileGateway(argv: string[]): Promise<void> {
  const quick = argv.includes('--quick');
  const duration = durationMs(flagValue(argv, '--duration') ?? (quick ? '3s' : '10s'));
  const durability = (flagValue(argv, '--durability') ?? 'none') as 'none' | 'fsync';
  if (durability !== 'none' && durability !== 'fsync') throw new Error(`--durability is none or fsync\n${USAGE}`);
  const threadName = flagValue(argv, '--thread') ?? 'gateway-0';
  const interval = Number(flagValue(argv, '--interval-us') ?? 250);
  const mix = { place: 1, cancel: 0, read: 0 };
  const mixArg = flagValue(argv, '--mix');
  if (mixArg !== undefined) {
    mix.place = 0;
    for (const part of mixArg.split(',')) {
      const [k, v] = part.split('=');
      if (k !== 'place' && k !== 'cancel' && k !== 'read') throw new Error(`--mix takes place, cancel, read\n${USAGE}`);
      mix[k] = Number(v);
    }
  }
  const keysN = quick ? 256 : 512;
  const connections = Number(flagValue(argv, '--connections') ?? keysN);
  const inspectPort = await freePort();
  const gateways = Math.max(1, availableParallelism() - 1);
  const ex = await startExchange({ durability, gateways, nodeArgs: [`--inspect=127.0.0.1:${inspectPort}`] });
  let insp: InspectorClient | null = null;
  try {
    insp = await InspectorClient.connect(inspectPort);
    await insp.attachWorkers();
    const target = insp.worker(threadName);
    if (target === null) throw new Error(`no thread named ${threadName}; the exchange has ${insp.workers.map((w) => w.name || w.url).join(', ')}`);
    const market = await openMarket(ex.admin);
    const setup = await createTraders(ex, keysN, { deposit_cents: 100_000_000, seed_shares: 5000, market_id: market, concurrency: 32 });
    const keys = setup.traders.map((t) => ({ keyId: t.key_id, secret: t.secret }));
    await insp.callWorker(target, 'Profiler.enable');
    await insp.callWorker(target, 'Profiler.setSamplingInterval', { interval });
    await insp.callWorker(target, 'Profiler.start');
    const w = new CpuWindow({ server: ex.child.pid, generator: process.pid });
    const load = await runLoad({
      baseUrl: ex.url, keys, markets: [market], mode: 'closed', connections: Math.min(connections, keys.length), durationMs: duration, mix,
      workers: Math.max(1, Math.floor(availableParallelism() / 2)), seed: 0x9f0f11e,
    });
    const cpu = w.stop();
    const { profile } = await insp.callWorker<{ profile: CpuProfile }>(target, 'Profiler.stop', {}, 60_000);
    await insp.callWorker(target, 'Profiler.disable').catch(() => undefined);
    const stem = threadName.startsWith('gateway') ? 'gateway' : `exchange-${threadName.replace(/[^a-z0-9]+/gi, '-')}`;
    const out = writeOutputs(stem, `CPU profile: the exchange's ${threadName} thread under load`, [
      `exchange: separate process, ${ex.gateways} gateway thread(s), --durability ${durability}${durability === 'none' ? ' (no journal write or fsync on the path: benchmark setting)' : ''}; profiled thread: \`${threadName}\` through the inspector (NodeWorker session, Profiler.start/stop), sampling every ${interval} µs`,
      `load: tools/loadgen closed loop, mix ${JSON.stringify(mix)} (placements around tick 50±5, YES and NO, 70% buys), ${Math.min(connections, keys.length)} connections over ${keys.length} keys (each with a deposit and 5000 YES+NO shares), ${duration} ms`,
      `while profiled: ${Math.round(load.throughput_per_s).toLocaleString('en-US')} requests/s, statuses ${JSON.stringify(load.statuses)}; CPU % of one core: exchange ${cpu.process_pct.server}, load generator ${cpu.process_pct.generator}, machine ${cpu.machine_pct}`,
    ], JSON.stringify(profile));
    console.log(`${threadName}: ${Math.round(load.throughput_per_s)} requests/s while profiled -> ${out.cpuprofile}, ${out.md}`);
  } finally {
    insp?.close();
    const how = await ex.stop();
    if (how.killed || how.code !== 0) process.stderr.write(`profile: the exchange ended with code ${how.code} signal ${how.signal}\n`);
  }
}

async function main(argv: string[]): Promise<number> {
  const what = argv[0];
  if (what === 'engine') await profileEngine(argv.slice(1));
  else if (what === 'gateway') await profileGateway(argv.slice(1));
  else {
    console.error(USAGE);
    return 2;
  }
  return 0;
}

if (isMainThread) {
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
