// sim run: the simulation at scale (issue 19): `commands` commands of seeded
// whole-engine streams, cut into seeds of `perSeed` commands and chunks of
// `chunkSeeds` seeds, run across piscina workers (task.ts), each chunk its
// own seed range. Reports commands per second (wall and per CPU second), the
// seed range run, and every failure with its seed and shortest failing
// prefix (found by bisection in the worker). Used by tools/sim.ts and
// test/engine/sim.test.ts. Main thread.

import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { ChunkArgs, ChunkResult, SeedFailure } from './task.js';

export interface SimOptions {
  commands: number;
  /** Commands per seed (one stream). */
  perSeed?: number;
  firstSeed?: number;
  /** Seeds per chunk (one piscina task). */
  chunkSeeds?: number;
  threads?: number;
  /** The engine's checker and the model's invariants every N commands. */
  checkEvery?: number;
  /** Keep running after a failure (default: stop scheduling chunks). */
  keepGoing?: boolean;
  /** Called after each chunk with the totals so far. */
  onProgress?: (p: SimProgress) => void;
  /** The harness's self-test only (task.ts). */
  damage?: ChunkArgs['damage'];
}

export interface SimProgress {
  commands: number;
  seeds: number;
  chunks: number;
  elapsedMs: number;
}

export interface SimReport {
  commands: number;
  /** Seeds run: firstSeed .. lastSeed (every seed of the range, when the run was not stopped). */
  firstSeed: number;
  lastSeed: number;
  seeds: number;
  perSeed: number;
  chunks: number;
  threads: number;
  checkEvery: number;
  elapsedMs: number;
  commandsPerSecond: number;
  /** Commands per CPU second of a worker thread (independent of how busy the machine was; 0 where thread CPU time is unknown). */
  commandsPerCpuSecond: number;
  failures: SeedFailure[];
  /** True when a failure stopped the run before every chunk ran. */
  stopped: boolean;
}

export const SIM_DEFAULTS = { perSeed: 10_000, firstSeed: 1, chunkSeeds: 10, checkEvery: 1000 } as const;

export async function runSimulation(o: SimOptions): Promise<SimReport> {
  const perSeed = o.perSeed ?? SIM_DEFAULTS.perSeed;
  const firstSeed = o.firstSeed ?? SIM_DEFAULTS.firstSeed;
  const chunkSeeds = o.chunkSeeds ?? SIM_DEFAULTS.chunkSeeds;
  const checkEvery = o.checkEvery ?? SIM_DEFAULTS.checkEvery;
  const threads = o.threads ?? availableParallelism();
  const totalSeeds = Math.ceil(o.commands / perSeed);
  const chunks: ChunkArgs[] = [];
  for (let s = 0; s < totalSeeds; s += chunkSeeds) {
    chunks.push({ firstSeed: firstSeed + s, seeds: Math.min(chunkSeeds, totalSeeds - s), perSeed, checkEvery, damage: o.damage });
  }
  const pool = new Piscina<ChunkArgs, ChunkResult>({
    filename: new URL('./task.js', import.meta.url).href, name: 'chunk', minThreads: threads, maxThreads: threads, idleTimeout: 1000,
  });
  const t0 = performance.now();
  const failures: SeedFailure[] = [];
  let commands = 0;
  let cpuMs = 0;
  let seeds = 0;
  let done = 0;
  let lastSeed = firstSeed - 1;
  let next = 0;
  let stopped = false;
  try {
    // `threads` chunks in flight; a failure stops the scheduling unless keepGoing.
    const lane = async (): Promise<void> => {
      while (next < chunks.length && !(failures.length > 0 && !o.keepGoing)) {
        const r = await pool.run(chunks[next++]!);
        commands += r.commands;
        cpuMs += r.cpuMs;
        seeds += r.seeds;
        done++;
        lastSeed = Math.max(lastSeed, r.firstSeed + r.seeds - 1);
        failures.push(...r.failures);
        o.onProgress?.({ commands, seeds, chunks: done, elapsedMs: performance.now() - t0 });
      }
    };
    await Promise.all(Array.from({ length: threads }, lane));
    stopped = done < chunks.length;
  } finally {
    await pool.destroy();
  }
  const elapsedMs = performance.now() - t0;
  failures.sort((a, b) => a.seed - b.seed);
  return {
    commands, firstSeed, lastSeed, seeds, perSeed, chunks: done, threads, checkEvery, elapsedMs,
    commandsPerSecond: Math.round((commands * 1000) / elapsedMs),
    commandsPerCpuSecond: Number.isNaN(cpuMs) ? 0 : Math.round((commands * 1000) / Math.max(1, cpuMs)),
    failures, stopped,
  };
}

/** The command line that replays one seed's failing prefix. */
export function reproCommand(f: SeedFailure): string {
  return `npm run test:sim -- --seed ${f.seed} --prefix ${f.prefix}`;
}
