// engine_ab: compares two builds of the engine on the engine_match stream,
// alternating processes (A, B, A, B, ...) so that a noisy host slows both
// alike. Each process builds the stream (bench/engine_match.ts
// buildWorkload), runs one untimed pass, then `--runs` timed passes on
// fresh engines, and prints its median and best commands/s. This is how the
// engine changes of issue 8 were measured before they were kept.
//
//   npm run build && cp -r dist /tmp/base     # the build to compare against
//   ... change the engine ... && npm run build
//   node dist/tools/engine_ab.js /tmp/base dist [--rounds 3] [--runs 7] [--commands 300000] [--cpu 1]
//
// --cpu N pins every process to CPU N with taskset (when it is installed),
// which steadies the figures on a 2-vCPU machine. Prints one line per
// process and a summary of the medians, by wall time and by process CPU time
// (commands per CPU second: on a shared machine a process that waits for the
// CPU loses wall time, not CPU time); exit code 2 on a usage error.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseCommandLine, parseOrUsage, UsageError } from '../src/lib/command_line.js';

interface Options {
  a: string;
  b: string;
  rounds: number;
  runs: number;
  commands: number;
  cpu: number | null;
}

const USAGE = 'usage: node dist/tools/engine_ab.js <dist A> <dist B> [--rounds 3] [--runs 7] [--commands 300000] [--cpu N]';

const OPTIONS = { rounds: { type: 'string' }, runs: { type: 'string' }, commands: { type: 'string' }, cpu: { type: 'string' } } as const;

function parse(argv: string[]): Options {
  const { values, positionals: pos } = parseCommandLine(argv, OPTIONS);
  const num = (name: keyof typeof OPTIONS, dflt: number | null): number | null => {
    const raw = values[name];
    if (raw === undefined) return dflt;
    const v = Number(raw);
    if (!Number.isInteger(v) || v < 0) throw new UsageError(`--${name}: expected a non-negative integer`);
    return v;
  };
  const o = { rounds: num('rounds', 3)!, runs: num('runs', 7)!, commands: num('commands', 300_000)!, cpu: num('cpu', null) };
  if (pos.length !== 2) throw new UsageError('two builds to compare are needed');
  const [a, b] = pos.map((p) => resolve(p)) as [string, string];
  for (const d of [a, b])
    if (!existsSync(resolve(d, 'bench', 'engine_match.js')))
      throw new UsageError(`${d} has no bench/engine_match.js (a dist directory is expected)`);
  if (o.rounds < 1 || o.runs < 1 || o.commands < 1000) throw new UsageError('rounds and runs must be >= 1, commands >= 1000');
  return { a, b, ...o };
}

/**
 * What the child calls in a build's bench/engine_match.js. Each build under
 * test brings its own, so it is loaded from that build's directory at run
 * time, not imported (test/tools/engine_ab.test.ts runs this against dist).
 */
interface EngineMatchBuild {
  buildWorkload(commands: number): unknown;
  freshOurs(workload: unknown): unknown;
  timeOurs(workload: unknown, engine: unknown): { ns: number };
}

interface ChildResult {
  median: number;
  best: number;
  /** Median of commands / process CPU time: steadier than wall time when other processes share the CPU. */
  cpuMedian: number;
}

/** The child: times one build, prints its median and best commands/s (wall) and the CPU-time median as JSON. */
async function child(dist: string, commands: number, runs: number): Promise<void> {
  const em = (await import(pathToFileURL(resolve(dist, 'bench', 'engine_match.js')).href)) as EngineMatchBuild;
  const w = em.buildWorkload(commands);
  em.timeOurs(w, em.freshOurs(w));
  const rates: number[] = [];
  const cpuRates: number[] = [];
  for (let r = 0; r < runs; r++) {
    const x = em.freshOurs(w);
    const c0 = process.cpuUsage();
    rates.push((commands / em.timeOurs(w, x).ns) * 1e9);
    const c = process.cpuUsage(c0);
    cpuRates.push((commands / (c.user + c.system)) * 1e6);
  }
  rates.sort((p, q) => p - q);
  cpuRates.sort((p, q) => p - q);
  const mid = rates.length >> 1;
  const out: ChildResult = { median: rates[mid]!, best: rates[rates.length - 1]!, cpuMedian: cpuRates[mid]! };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

function runOne(o: Options, dist: string): ChildResult {
  const self = fileURLToPath(import.meta.url);
  const args = [self, '--child', dist, String(o.commands), String(o.runs)];
  const useTaskset = o.cpu !== null && spawnSync('taskset', ['--version']).status === 0;
  const r = useTaskset
    ? spawnSync('taskset', ['-c', String(o.cpu), process.execPath, ...args], { encoding: 'utf8' })
    : spawnSync(process.execPath, args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`engine_ab child for ${dist} failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as ChildResult;
}

function main(argv: string[]): number {
  const o = parseOrUsage(() => parse(argv), USAGE);
  if (o === null) return 2;
  const m = (x: number): string => `${(x / 1e6).toFixed(3)} M/s`;
  const medians: Record<'A' | 'B', number[]> = { A: [], B: [] };
  const cpuMedians: Record<'A' | 'B', number[]> = { A: [], B: [] };
  for (let i = 0; i < o.rounds; i++) {
    for (const [tag, dist] of [['A', o.a], ['B', o.b]] as const) {
      const r = runOne(o, dist);
      medians[tag].push(r.median);
      cpuMedians[tag].push(r.cpuMedian);
      console.log(`round ${i + 1} ${tag} ${dist}: median ${m(r.median)}, best ${m(r.best)}, per CPU second ${m(r.cpuMedian)}`);
    }
  }
  const med = (xs: number[]): number => xs.slice().sort((p, q) => p - q)[xs.length >> 1]!;
  const a = med(medians.A);
  const b = med(medians.B);
  const ac = med(cpuMedians.A);
  const bc = med(cpuMedians.B);
  console.log(
    `A ${m(a)}  B ${m(b)}  B/A ${(b / a).toFixed(3)}; per CPU second A ${m(ac)}  B ${m(bc)}  B/A ${(bc / ac).toFixed(3)} ` +
    `(medians of ${o.rounds} rounds x ${o.runs} runs of ${o.commands} commands${o.cpu !== null ? `, CPU ${o.cpu}` : ''})`,
  );
  return 0;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]!, Number(process.argv[4]), Number(process.argv[5]));
} else if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = main(process.argv.slice(2));
}
