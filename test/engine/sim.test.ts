// The simulation at scale, short: seeded whole-engine streams in chunks
// across piscina workers (test/support/sim/, `npm run test:sim` runs 10^8
// commands), and the harness's self-test: a state damaged on purpose in one
// seed is reported with that seed and the shortest failing prefix, which the
// command line replays.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runSimulation } from '../support/sim/run.js';

const SIM_JS = fileURLToPath(new URL('../../tools/sim.js', import.meta.url));
/** Seeds far from the differential test's 1..100, so this run adds streams. */
const FIRST_SEED = 1_000_001;

test('sim: 40,000 commands (8 seeds x 5,000 in 4 chunks on 2 workers) pass every check; the report names the seed range', async () => {
  const r = await runSimulation({ commands: 40_000, perSeed: 5_000, firstSeed: FIRST_SEED, chunkSeeds: 2, threads: 2, checkEvery: 500 });
  assert.deepEqual(r.failures, []);
  assert.deepEqual({ commands: r.commands, first: r.firstSeed, last: r.lastSeed, seeds: r.seeds, chunks: r.chunks, stopped: r.stopped },
    { commands: 40_000, first: FIRST_SEED, last: FIRST_SEED + 7, seeds: 8, chunks: 4, stopped: false });
  assert.ok(r.commandsPerSecond > 0);
});

test('sim: a damaged state in one seed is reported with that seed and the shortest failing prefix (bisection), '
  + 'and the command line replays it', async () => {
  const damaged = FIRST_SEED + 1;
  const r = await runSimulation({
    commands: 10_000, perSeed: 5_000, firstSeed: FIRST_SEED, chunkSeeds: 1, threads: 2, checkEvery: 500,
    damage: { seed: damaged, at: 1234 },
  });
  assert.equal(r.failures.length, 1, JSON.stringify(r.failures));
  const f = r.failures[0]!;
  assert.equal(f.seed, damaged);
  // Damaged after command #1234: the first 1,235 commands fail (the checker at their end), 1,234 do not.
  assert.equal(f.prefix, 1235);
  assert.match(f.text, new RegExp(`^seed=${damaged} `));
  assert.match(f.text, /invariant checker .*money/);
  // Without the damage the same prefix passes: the replay command says so.
  const replay = spawnSync(process.execPath, [SIM_JS, '--seed', String(damaged), '--prefix', String(f.prefix)], { encoding: 'utf8' });
  assert.equal(replay.status, 0, replay.stdout + replay.stderr);
  assert.match(replay.stdout, new RegExp(`seed=${damaged}: the first 1235 commands pass every check`));
});

test('sim: bad usage exits 2 with the usage line', () => {
  const r = spawnSync(process.execPath, [SIM_JS, '--commands', '0'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /--commands needs a positive integer\nusage: /);
});
