// report: writes bench/results/REPORT.md from every bench/results/*.json
// (the rendering is test/support/bench/report.ts). Main thread of the bench
// runner (bench/run.ts calls writeReport after its runs); `node
// dist/bench/report.js` rewrites the report from the JSON files alone,
// without running anything.

import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { renderReport } from '../test/support/bench/report.js';
import { resultsDir, type BenchResult } from './lib/result.js';

export function readResults(dir = resultsDir()): BenchResult[] {
  if (!existsSync(dir)) return [];
  const out: BenchResult[] = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.json')).sort()) {
    let r: BenchResult;
    try {
      r = JSON.parse(readFileSync(join(dir, f), 'utf8')) as BenchResult;
    } catch (e) {
      if (e instanceof SyntaxError) continue; // a half-written or foreign file: not a result
      throw e;
    }
    if (typeof r !== 'object' || r === null || typeof r.name !== 'string' || typeof r.metrics !== 'object') continue;
    r.peers ??= {};
    r.ratios ??= {};
    if (r.date === undefined) r.date = `${statSync(join(dir, f)).mtime.toISOString()} (file time)`;
    out.push(r);
  }
  return out;
}

/** Writes bench/results/REPORT.md (or opts.out) from the JSON results; returns its path. */
export function writeReport(opts: { dir?: string; expected?: readonly string[]; out?: string } = {}): string {
  const dir = opts.dir ?? resultsDir();
  const text = renderReport(readResults(dir), opts.expected ?? [], dir);
  const path = opts.out ?? join(dir, 'REPORT.md');
  writeFileSync(path, text.endsWith('\n') ? text : `${text}\n`);
  return path;
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  // The runner's list of known benchmarks, so missing results are named (run.js only runs when it is the entry point).
  const { KNOWN } = (await import('./run.js')) as { KNOWN: readonly string[] };
  console.log(`report -> ${writeReport({ expected: KNOWN })}`);
}
