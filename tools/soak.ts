// soak: the soak test of issue 19 (test/support/soak/): the real exchange
// under a steady mixed load for N minutes, sampled every minute (per-thread
// heap after a full GC, RSS, open handles and descriptors, held requests,
// ring occupancy, the growing tables, the journal on disk), then judged:
// after the warm-up, no heap or RSS trend above 1 MiB per 10 minutes
// (least-squares slope), no table that keeps growing, every invariant and
// `tools/journal verify` at the end.
//
//   node dist/tools/soak.js [--minutes N (30)] [--sample-s S (60)] [--warmup-min W (5)] [--seed S] [--keep] [--json FILE]
//
// Exit 0 when everything held, 1 otherwise, 2 on bad usage. Main thread of
// its own process; the exchange runs in a child process.

import { writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseCommandLine, UsageError } from '../src/lib/command_line.js';
import { describeSoak, runSoak } from '../test/support/soak/driver.js';

const USAGE = 'usage: node dist/tools/soak.js [--minutes N] [--sample-s S] [--warmup-min W] [--seed S] [--keep] [--json FILE]';

const OPTIONS = {
  minutes: { type: 'string' }, 'sample-s': { type: 'string' }, 'warmup-min': { type: 'string' }, seed: { type: 'string' },
  keep: { type: 'boolean' }, json: { type: 'string' },
} as const;

function num(name: string, v: string | undefined, min: number): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || n < min) throw new UsageError(`--${name} needs a number >= ${min}`);
  return n;
}

async function main(argv: string[]): Promise<number> {
  const v = parseCommandLine(argv, OPTIONS, { positionals: false }).values;
  const minutes = num('minutes', v.minutes, 0.5) ?? 30;
  const sampleS = num('sample-s', v['sample-s'], 1) ?? 60;
  const warmupMin = num('warmup-min', v['warmup-min'], 0) ?? 5;
  process.once('SIGINT', () => process.exit(130)); // the exit hook SIGKILLs the exchange
  const seed = num('seed', v.seed, 0);
  const r = await runSoak({ minutes, sampleMs: sampleS * 1000, warmupMs: warmupMin * 60_000, seed, keep: v.keep === true });
  if (v.json !== undefined) writeFileSync(v.json, `${JSON.stringify(r, null, 2)}\n`);
  process.stdout.write(describeSoak(r));
  return r.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    if (e instanceof UsageError) {
      process.stderr.write(`soak: ${e.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`soak: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
