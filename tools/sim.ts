// sim: the simulation at scale (issue 19). Seeded whole-engine streams (the
// engine, its matching-only twin and the independent reference model side
// by side, every event compared; the model's invariants and the engine's
// O(n) checker every --check-every commands and at the end of each seed; the
// state summaries at the end) in chunks of seeds across piscina workers
// (test/support/sim/). Prints progress, then the seed range run, the
// commands and commands per second; a failure prints its seed, the shortest
// failing prefix of its stream (found by bisection) and the command that
// replays it.
//
//   node dist/tools/sim.js [--commands N (1,000,000)] [--per-seed C (10,000)] [--first-seed S] [--chunk-seeds K]
//                          [--threads T (the cores)] [--check-every N (1,000)] [--keep-going] [--json]
//   node dist/tools/sim.js --seed S --prefix K      replay one seed's first K commands
//                                                    (the checks after every command)
//
// Exit 0 when every seed passed, 1 on a failure, 2 on bad usage. Main
// thread of its own process.

import { pathToFileURL } from 'node:url';
import { parseCommandLine, UsageError } from '../src/lib/command_line.js';
import { formatFailure, runSeed } from '../test/support/differential.js';
import { reproCommand, runSimulation, SIM_DEFAULTS, type SimOptions } from '../test/support/sim/run.js';

const USAGE = 'usage: node dist/tools/sim.js [--commands N] [--per-seed C] [--first-seed S] [--chunk-seeds K] [--threads T]'
  + ' [--check-every N] [--keep-going] [--json]\n'
  + '       node dist/tools/sim.js --seed S --prefix K';

/** Commands when --commands is not given (about a minute on two free cores). */
const DEFAULT_COMMANDS = 1_000_000;

const OPTIONS = {
  commands: { type: 'string' }, 'per-seed': { type: 'string' }, 'first-seed': { type: 'string' }, 'chunk-seeds': { type: 'string' },
  threads: { type: 'string' }, 'check-every': { type: 'string' }, 'keep-going': { type: 'boolean' }, json: { type: 'boolean' },
  seed: { type: 'string' }, prefix: { type: 'string' },
} as const;

function positive(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(v)) throw new UsageError(`--${name} needs a positive integer`);
  return Number(v);
}

function replay(seed: number, prefix: number): number {
  const f = runSeed(seed, prefix, { invariantsEvery: 1, verifyEvery: 1 });
  if (f === null) {
    process.stdout.write(`seed=${seed}: the first ${prefix} commands pass every check\n`);
    return 0;
  }
  process.stdout.write(`${formatFailure(f)}\n`);
  return 1;
}

async function main(argv: string[]): Promise<number> {
  const v = parseCommandLine(argv, OPTIONS, { positionals: false }).values;
  const seed = positive('seed', v.seed);
  if (seed !== undefined) {
    const prefix = positive('prefix', v.prefix);
    if (prefix === undefined) throw new UsageError('--seed S needs --prefix K');
    const runOnly = Object.keys(v).filter((k) => k !== 'seed' && k !== 'prefix');
    if (runOnly.length > 0) throw new UsageError(`--seed S --prefix K replays one seed: --${runOnly.join(', --')} does not apply`);
    return replay(seed, prefix);
  }
  if (v.prefix !== undefined) throw new UsageError('--prefix K needs --seed S');
  const commands = positive('commands', v.commands) ?? DEFAULT_COMMANDS;
  const o: SimOptions = {
    commands, perSeed: positive('per-seed', v['per-seed']), firstSeed: positive('first-seed', v['first-seed']),
    chunkSeeds: positive('chunk-seeds', v['chunk-seeds']), threads: positive('threads', v.threads),
    checkEvery: positive('check-every', v['check-every']), keepGoing: v['keep-going'] === true,
  };
  const perSeed = o.perSeed ?? SIM_DEFAULTS.perSeed;
  const first = o.firstSeed ?? SIM_DEFAULTS.firstSeed;
  process.stdout.write(`sim: ${commands} commands = ${Math.ceil(commands / perSeed)} seeds x ${perSeed} from seed ${first}, `
    + `chunks of ${o.chunkSeeds ?? SIM_DEFAULTS.chunkSeeds} seeds, checks every ${o.checkEvery ?? SIM_DEFAULTS.checkEvery} commands\n`);
  let lastPrint = 0;
  o.onProgress = (p) => {
    if (p.elapsedMs - lastPrint < 30_000) return;
    lastPrint = p.elapsedMs;
    const pct = ((100 * p.commands) / commands).toFixed(1);
    const rate = Math.round((p.commands * 1000) / p.elapsedMs);
    process.stdout.write(`  ${p.commands} commands (${pct}%), ${p.seeds} seeds, ${rate}/s, ${(p.elapsedMs / 1000).toFixed(0)} s\n`);
  };
  process.once('SIGINT', () => process.exit(130));
  const r = await runSimulation(o);
  if (v.json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  process.stdout.write([
    `sim ${r.failures.length === 0 ? 'PASSED' : 'FAILED'}: ${r.commands} commands, seeds ${r.firstSeed}..${r.lastSeed} `
      + `(${r.seeds} x ${r.perSeed}), ${r.chunks} chunks on ${r.threads} threads, ${(r.elapsedMs / 1000).toFixed(1)} s`,
    `  ${r.commandsPerSecond} commands/s (wall), ${r.commandsPerCpuSecond} per CPU second of a worker; `
      + `checks every ${r.checkEvery} commands and at the end of each seed${r.stopped ? '; stopped early by a failure' : ''}`,
    ...r.failures.flatMap((f) => [
      `  FAILED seed=${f.seed}: the shortest failing prefix is ${f.prefix} commands; replay: ${reproCommand(f)}`,
      ...f.text.split('\n').map((l) => `    ${l}`),
    ]),
  ].join('\n') + '\n');
  return r.failures.length === 0 ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    if (e instanceof UsageError) {
      process.stderr.write(`sim: ${e.message}\n${USAGE}\n`);
      process.exit(2);
    }
    process.stderr.write(`sim: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
