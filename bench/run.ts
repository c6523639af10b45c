// Bench runner: `node dist/bench/run.js [name ...] [--quick] [--no-report] [--cases a,b]`.
// Main thread. Imports each named benchmark (default: all known) as
// ./<name>.js, calls its `run({quick})`, writes bench/results/<name>.json and
// prints one line per benchmark, then rewrites bench/results/REPORT.md from
// every bench/results/*.json (bench/report.ts). Benchmarks report; they never
// assert timings, so the exit code is non-zero only when a benchmark could
// not run. A known benchmark whose module does not exist (yet) is reported
// as "not run" and does not fail the others; a name given explicitly that
// has no module is an error.

import { pathToFileURL } from 'node:url';
import { parseCommandLine, UsageError, type CommandLine } from '../src/lib/command_line.js';
import { environment, writeResult, type BenchResult } from './lib/result.js';

const KNOWN = [
  'engine_match', 'engine_scale', 'ring_handoff', 'gateway_place', 'gateway_read', 'durable_place', 'ws_fanout', 'ws_orders', 'memory',
  'replicated_place', 'lone_place', 'idle', 'gateway_path', 'request_parts',
] as const;
export { KNOWN };

/** What a benchmark module has to offer (structural: its own result type may differ slightly). */
interface BenchModule {
  run(opts: { quick?: boolean; cases?: readonly string[] }): Promise<unknown>;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function numbers(v: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!isRecord(v)) return out;
  for (const [k, x] of Object.entries(v)) if (typeof x === 'number') out[k] = x;
  return out;
}

/** True when `err` says that ./<name>.js itself does not exist (not one of its imports). */
function moduleMissing(err: unknown, name: string): boolean {
  const e = err as { code?: string; message?: string; url?: string };
  if (e?.code !== 'ERR_MODULE_NOT_FOUND') return false;
  // Node: "Cannot find module '/abs/dist/bench/<name>.js' imported from /abs/dist/bench/run.js".
  const m = /Cannot find module '([^']+)' imported from (\S+)/.exec(e.message ?? '');
  return m !== null && m[1]!.endsWith(`/bench/${name}.js`) && m[2]!.endsWith('/bench/run.js');
}

/** Adapts a module's result to BenchResult, filling what it leaves out. */
function normalize(name: string, raw: unknown): BenchResult {
  if (!isRecord(raw)) throw new Error(`${name}: run() returned ${typeof raw}, not a result object`);
  const env = environment();
  const peers: Record<string, Record<string, number>> = {};
  if (isRecord(raw.peers)) for (const [k, v] of Object.entries(raw.peers)) peers[k] = numbers(v);
  const machine = isRecord(raw.machine) ? raw.machine : {};
  const r: BenchResult = {
    name: typeof raw.name === 'string' && raw.name.length > 0 ? raw.name : name,
    node: typeof raw.node === 'string' ? raw.node : env.node,
    machine: {
      cpus: typeof machine.cpus === 'number' ? machine.cpus : env.machine.cpus,
      model: typeof machine.model === 'string' ? machine.model : env.machine.model,
      mem_gib: typeof machine.mem_gib === 'number' ? machine.mem_gib : env.machine.mem_gib,
    },
    workload: typeof raw.workload === 'string' ? raw.workload : '',
    metrics: numbers(raw.metrics),
    peers,
    ratios: numbers(raw.ratios),
  };
  if (Array.isArray(raw.notes)) r.notes = raw.notes.map(String);
  if (typeof raw.wall_s === 'number') r.wall_s = raw.wall_s;
  const dropped = isRecord(raw.metrics) ? Object.keys(raw.metrics).filter((k) => !(k in r.metrics)) : [];
  if (dropped.length > 0) (r.notes ??= []).push(`run.ts dropped non-numeric metrics: ${dropped.join(', ')}`);
  return r;
}

function fmt(x: number | undefined, unit = ''): string {
  if (x === undefined || !Number.isFinite(x)) return '-';
  if (Math.abs(x) >= 1e6) return `${(x / 1e6).toFixed(2)}M${unit}`;
  if (Math.abs(x) >= 1e4) return `${(x / 1e3).toFixed(1)}k${unit}`;
  return `${Math.round(x * 100) / 100}${unit}`;
}

/** One line: throughput, latencies, spread and ratios. */
function summary(r: BenchResult): string {
  const m = r.metrics;
  const parts = [r.name];
  const rate = Object.keys(m).find((k) => k.endsWith('_per_s'));
  if (rate !== undefined) parts.push(`${rate}=${fmt(m[rate])}`);
  for (const k of ['p50_ns', 'p99_ns', 'p999_ns']) if (m[k] !== undefined) parts.push(`${k}=${fmt(m[k])}`);
  if (m.spread_pct !== undefined) parts.push(`spread=${m.spread_pct}%`);
  for (const [k, v] of Object.entries(r.ratios)) parts.push(`${k}=${Math.round(v * 100) / 100}x`);
  return parts.join('  ');
}

const OPTIONS = { quick: { type: 'boolean' }, 'no-report': { type: 'boolean' }, cases: { type: 'string' } } as const;

/** A bench's options; `--cases a,b`: only these cases of a bench that has cases (engine_scale, lone_place: A/B runs); others ignore it. */
function runOptions(quick: boolean, cases: string | boolean | undefined): { quick: boolean; cases?: string[] } {
  return typeof cases === 'string' ? { quick, cases: cases.split(',').filter((x) => x !== '') } : { quick };
}

async function main(argv: readonly string[]): Promise<number> {
  let args: CommandLine<typeof OPTIONS>;
  try {
    args = parseCommandLine(argv, OPTIONS);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`usage: node dist/bench/run.js [name ...] [--quick] [--no-report] [--cases a,b]  (${e.message})`);
    return 2;
  }
  const quick = args.values.quick === true;
  const report = args.values['no-report'] !== true;
  const named = args.positionals;
  const explicit = named.length > 0;
  const names = [...new Set(explicit ? named : KNOWN)];
  let failed = 0;
  const notRun: string[] = [];
  for (const name of names) {
    if (!/^[a-z0-9_]+$/.test(name)) {
      console.error(`${name}: not a benchmark name`);
      failed++;
      continue;
    }
    let mod: BenchModule;
    try {
      mod = (await import(`./${name}.js`)) as BenchModule;
    } catch (err) {
      if (!explicit && moduleMissing(err, name)) {
        console.log(`${name}: not run (no module ./${name}.js yet)`);
        notRun.push(name);
        continue;
      }
      console.error(`${name}: cannot load ./${name}.js: ${(err as Error).message}`);
      failed++;
      continue;
    }
    if (typeof mod.run !== 'function') {
      console.error(`${name}: ./${name}.js exports no run()`);
      failed++;
      continue;
    }
    let r: BenchResult;
    const t0 = performance.now();
    try {
      r = normalize(name, await mod.run(runOptions(quick, args.values.cases)));
      r.date = new Date().toISOString();
      r.quick = quick;
      r.wall_s ??= Math.round((performance.now() - t0) / 1000);
    } catch (err) {
      console.error(`${name}: failed: ${(err as Error).stack ?? String(err)}`);
      failed++;
      continue;
    }
    const path = writeResult(r);
    console.log(`${summary(r)}  -> ${path}`);
    for (const n of r.notes ?? []) if (n.startsWith('FLAG')) console.log(`  ${n}`);
  }
  if (notRun.length > 0) console.log(`not run: ${notRun.join(', ')}`);
  if (report) {
    try {
      // Imported here, not statically: report.js imports this module for KNOWN when it runs alone.
      const { writeReport } = await import('./report.js');
      console.log(`report -> ${writeReport({ expected: KNOWN })}`);
    } catch (err) {
      console.error(`report: failed: ${(err as Error).stack ?? String(err)}`);
      failed++;
    }
  }
  return failed === 0 ? 0 : 1;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.exitCode = await main(process.argv.slice(2));
}
