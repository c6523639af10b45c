// sim task: one chunk of the simulation at scale, run in a piscina worker
// (test/support/sim/run.ts owns the pool). A chunk is a range of seeds; each
// seed is one stream of the differential harness (test/support/differential.ts):
// the engine, its matching-only twin and the reference model side by side,
// every event compared, the model's invariants and the engine's O(n) checker
// every N commands and at the end, the state summaries at the end. A failing
// seed is shrunk here, in the worker, to its shortest failing prefix.

import { readFileSync } from 'node:fs';
import type { Engine } from '../../../src/engine/engine.js';
import { formatFailure, runSeed, shrink, type RunOptions } from '../differential.js';

export interface ChunkArgs {
  firstSeed: number;
  seeds: number;
  perSeed: number;
  /** The engine's checker and the model's invariants every N commands (and always at the end of a seed). */
  checkEvery: number;
  /** The harness's self-test only: damage the engine's state after command `at` of this seed (an invariant breaks). */
  damage?: { seed: number; at: number };
}

export interface SeedFailure {
  seed: number;
  /** The shortest prefix of the seed's stream that fails. */
  prefix: number;
  /** The failure of that prefix, formatted (seed, command, differing events). */
  text: string;
}

export interface ChunkResult {
  firstSeed: number;
  seeds: number;
  /** Commands run (a failing seed counts up to its failure). */
  commands: number;
  /** CPU time of the worker thread for this chunk (NaN off Linux). */
  cpuMs: number;
  failures: SeedFailure[];
}

/** Options of one seed's run (the same for the run and its shrinking). */
export function seedOptions(args: Pick<ChunkArgs, 'checkEvery' | 'damage'>, seed: number): RunOptions {
  const opts: RunOptions = { invariantsEvery: args.checkEvery, verifyEvery: args.checkEvery };
  const d = args.damage;
  if (d !== undefined && d.seed === seed) {
    opts.afterCommand = (i: number, engine: Engine) => {
      if (i === d.at) engine.state.accounts.available[1] = engine.state.accounts.available[1]! + 1;
    };
  }
  return opts;
}

/**
 * CPU time of this thread in ms (Linux: /proc/thread-self/stat, utime +
 * stime in clock ticks of 10 ms), or NaN where that is not available.
 * process.cpuUsage() would count every thread of the process.
 */
function threadCpuMs(): number {
  let stat: string;
  try {
    stat = readFileSync('/proc/thread-self/stat', 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return NaN;
    throw e;
  }
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}

export function chunk(args: ChunkArgs): ChunkResult {
  const c0 = threadCpuMs();
  const failures: SeedFailure[] = [];
  let commands = 0;
  for (let seed = args.firstSeed; seed < args.firstSeed + args.seeds; seed++) {
    const opts = seedOptions(args, seed);
    const f = runSeed(seed, args.perSeed, opts);
    if (f === null) {
      commands += args.perSeed;
      continue;
    }
    commands += f.index < 0 ? args.perSeed : f.index + 1;
    const s = shrink(seed, f.index < 0 ? args.perSeed : f.index + 1, opts);
    failures.push({ seed, prefix: s.prefix, text: formatFailure(s.failure) });
  }
  return { firstSeed: args.firstSeed, seeds: args.seeds, commands, cpuMs: threadCpuMs() - c0, failures };
}
