// Differential test: the typed-array engine against the independent reference
// model (test/support/reference_model.ts) on seeded random streams
// (test/support/random_commands.ts). After every command the two event lists
// must be deep-equal; at the end the state summaries must be. A failure
// prints seed=<n> command #<i>, the command and the first differing event of
// each side; replay one seed with `node dist/tools/differential.js 1 2000 <seed>`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CANCEL_REASON_NAMES, CancelReason, PATH_NAMES, Reject } from '../../src/layout/records.js';
import { formatFailure, newCoverage, runSeed } from '../support/differential.js';
import { COMMAND_NAMES, CommandGenerator, DIFF_CONFIG, generateCommands } from '../support/random_commands.js';
import { ReferenceModel } from '../support/reference_model.js';

const SEEDS = 100;
const COMMANDS = 2000;

const coverage = newCoverage();
let seedsRun = 0;

test('random_commands: a seed names one stream, and a few seeds cover every command type', () => {
  assert.deepEqual(generateCommands(7, 400), generateCommands(7, 400));
  assert.notDeepEqual(generateCommands(7, 400), generateCommands(8, 400));
  const seen = new Set<string>();
  for (const seed of [1, 2, 3, 4]) for (const c of generateCommands(seed, COMMANDS)) seen.add(c.type);
  assert.deepEqual(COMMAND_NAMES.filter((n) => !seen.has(n)), []);
});

test('reference model: money, reservations and shares balance after every command of seeds 1..10', () => {
  for (let seed = 1; seed <= 10; seed++) {
    const model = new ReferenceModel(DIFF_CONFIG);
    const gen = new CommandGenerator(seed, model);
    for (let i = 0; i < COMMANDS; i++) {
      const cmd = gen.next();
      try {
        model.execute(cmd);
        model.checkInvariants();
      } catch (e) {
        assert.fail(
          `seed=${seed} command #${i} ${JSON.stringify(cmd, (_k, v: unknown) => (typeof v === 'bigint' ? `${v}n` : v))}: ` +
            `${(e as Error).message}`,
        );
      }
    }
  }
});

test(`engine: emits exactly the reference model's events on seeds 1..${SEEDS} x ${COMMANDS} random commands, and its fused path writes ` +
  `the same bytes and reaches the same state hash as applying every event through evolve`, () => {
  for (let seed = 1; seed <= SEEDS; seed++) {
    const f = runSeed(seed, COMMANDS, { coverage });
    if (f) assert.fail(formatFailure(f));
    seedsRun++;
  }
});

/** Outcomes no stream can produce under README.md (reported, not asserted). */
const UNREACHABLE_REASONS = new Set<number>([
  // SettleRound and the auto-settle start from `proposed`, whose book is already
  // empty (the freeze before it canceled every resting order with round_frozen).
  CancelReason.round_settled,
]);

test('differential: the runs produced every command type, fill path, cancel reason and core reject', (t) => {
  assert.equal(seedsRun, SEEDS, 'coverage needs the whole differential run');
  const rejectNames = new Map<number, string>(Object.entries(Reject).map(([k, v]) => [v, k]));
  const missingCommands = COMMAND_NAMES.filter((n) => !coverage.commands.has(n));
  const missingPaths = PATH_NAMES.filter((_n, i) => !coverage.paths.has(i));
  const missingReasons = CANCEL_REASON_NAMES.map((n, i) => [n, i] as const)
    .filter(([n, i]) => n !== 'none' && !coverage.reasons.has(i));
  const missingCodes = [...rejectNames.entries()].filter(([num]) => !coverage.codes.has(num)).map(([, n]) => n);
  t.diagnostic(`commands: ${[...coverage.commands].map(([k, v]) => `${k}=${v}`).join(' ')} (dropped ticks ${coverage.dropped})`);
  t.diagnostic(`fills by path: ${[...coverage.paths].map(([k, v]) => `${PATH_NAMES[k]}=${v}`).join(' ')}`);
  t.diagnostic(
    `cancels by reason: ${[...coverage.reasons]
      .sort((a, b) => a[0] - b[0])
      .map(([k, v]) => `${CANCEL_REASON_NAMES[k]}=${v}`)
      .join(' ')}`,
  );
  t.diagnostic(
    `rejects by code: ${[...coverage.codes]
      .sort((a, b) => a[0] - b[0])
      .map(([k, v]) => `${rejectNames.get(k)}=${v}`)
      .join(' ')}`,
  );
  const unreachableSeen = missingReasons.filter(([, i]) => UNREACHABLE_REASONS.has(i)).map(([n]) => n);
  if (unreachableSeen.length > 0) t.diagnostic(`never produced (unreachable under README.md): ${unreachableSeen.join(', ')}`);
  assert.deepEqual(missingCommands, []);
  assert.deepEqual(missingPaths, []);
  assert.deepEqual(missingReasons.filter(([, i]) => !UNREACHABLE_REASONS.has(i)).map(([n]) => n), []);
  assert.deepEqual(missingCodes, []);
});
