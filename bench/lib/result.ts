// BenchResult: the one JSON shape every benchmark returns and writes to
// bench/results/<name>.json. Main thread of the bench runner only (this file
// imports node:*; nothing under src/ may import it). Figures are measurements,
// never assertions: a benchmark reports its targets in `notes`, it does not fail.

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface MachineInfo {
  cpus: number;
  model: string;
  mem_gib: number;
}

export interface BenchResult {
  /** `<subject>_<topology>_<metric>`-style name; also the JSON file name. */
  name: string;
  /** process.version of the run. */
  node: string;
  machine: MachineInfo;
  /** One paragraph: what was run, how much of it, with which seed. */
  workload: string;
  /** Our figures (throughput in per_s, latencies in _ns, sizes in _mib). */
  metrics: Record<string, number>;
  /** The same figures for each comparison subject, keyed by peer name. */
  peers: Record<string, Record<string, number>>;
  /** ours / theirs, keyed `vs_<peer>`; > 1 means we are better. */
  ratios: Record<string, number>;
  notes?: string[];
  /** When the run finished (ISO 8601, UTC); set by bench/run.ts. */
  date?: string;
  /** True when the run used --quick (short, for checking the tooling: not figures to quote). */
  quick?: boolean;
  /** Wall time of the whole benchmark, seconds; set by bench/run.ts. */
  wall_s?: number;
}

/** node version and machine description of this process. */
export function environment(): { node: string; machine: MachineInfo } {
  const c = cpus();
  return {
    node: process.version,
    machine: {
      cpus: c.length,
      model: c.length > 0 ? c[0]!.model.trim() : 'unknown',
      mem_gib: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    },
  };
}

/**
 * bench/results/ of the repository (this file is dist/bench/lib/result.js when
 * compiled), or $DX_BENCH_RESULTS_DIR when set (tooling checks that must not
 * overwrite the recorded results).
 */
export function resultsDir(): string {
  const override = process.env.DX_BENCH_RESULTS_DIR;
  if (override !== undefined && override !== '') return override;
  const here = dirname(fileURLToPath(import.meta.url));
  // dist/bench/lib -> repository root is three levels up; bench/lib (ts-node style) is two.
  const root = here.includes(`${join('dist', 'bench')}`) ? join(here, '..', '..', '..') : join(here, '..', '..');
  return join(root, 'bench', 'results');
}

/** Writes bench/results/<name>.json (pretty, trailing newline) and returns its path. */
export function writeResult(r: BenchResult, dir = resultsDir()): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${r.name}.json`);
  writeFileSync(path, `${JSON.stringify(r, null, 2)}\n`);
  return path;
}
