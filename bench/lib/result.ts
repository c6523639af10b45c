// result: what a benchmark needs to report its BenchResult (the shape is
// declared in test/support/bench/result.ts, where the report's tests read it
// too): the machine it ran on, the results directory, the JSON file. Main
// thread of the bench runner only (this file imports node:*; nothing under
// src/ may import it).

import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchResult, MachineInfo } from '../../test/support/bench/result.js';

export type { BenchResult, MachineInfo } from '../../test/support/bench/result.js';

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
