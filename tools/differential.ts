// differential: the long differential run, the engine against the
// reference model (test/support/differential.ts) on many seeded random
// command streams.
//
//   node dist/tools/differential.js [seeds=2000] [commands=2000] [first_seed=1] [--keep-going]
//
// Prints progress and the first failing seed (seed=<n> command #<i>, the
// command, the first differing event of each side); exit 1 on failure.
// Main thread of its own process.

import { pathToFileURL } from 'node:url';
import { parseCommandLine, UsageError } from '../src/lib/command_line.js';
import { formatFailure, runSeed, type RunOptions } from '../test/support/differential.js';

function main(args: string[]): number {
  const { values, positionals: argv } = parseCommandLine(args, { 'keep-going': { type: 'boolean' } });
  if (argv.length > 3) throw new UsageError(`at most three arguments (seeds commands first_seed), got ${argv.length}`);
  const positive = (i: number, name: string, dflt: number): number => {
    const v = argv[i];
    if (v === undefined) return dflt;
    if (!/^[1-9][0-9]*$/.test(v)) throw new UsageError(`${name} must be a positive integer, got ${JSON.stringify(v)}`);
    return Number(v);
  };
  const seeds = positive(0, 'seeds', 2000);
  const count = positive(1, 'commands', 2000);
  const first = positive(2, 'first_seed', 1);
  const opts: RunOptions = {};
  const keepGoing = values['keep-going'] === true;
  let failures = 0;
  const started = Date.now();
  for (let s = first; s < first + seeds; s++) {
    const f = runSeed(s, count, opts);
    if (f) {
      console.log(formatFailure(f));
      failures++;
      if (!keepGoing) {
        console.log(`FAILED at seed=${s} after ${s - first} passing seeds (${((Date.now() - started) / 1000).toFixed(1)} s)`);
        return 1;
      }
    }
    const done = s - first + 1;
    if (done % 50 === 0 || done === seeds) {
      console.log(`${done}/${seeds} seeds x ${count} commands ok (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
  }
  if (failures > 0) {
    console.log(`${failures} of ${seeds} seeds FAILED`);
    return 1;
  }
  console.log(`all ${seeds} seeds passed`);
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    console.error(`differential: ${e.message}`);
    process.exitCode = 2;
  }
}
