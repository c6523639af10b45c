// tools/sim: the command line. --seed S --prefix K replays one seed; the run's
// options (--commands, --per-seed, ...) do not apply to it and --prefix means
// nothing without --seed: each of those is a usage error (exit 2), not a flag
// silently ignored (a run of the default million commands, or a replay that
// ignores what was asked).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const SIM_JS = fileURLToPath(new URL('../../tools/sim.js', import.meta.url));

test('sim: --prefix without --seed, or --seed with a run option, is a usage error', () => {
  for (const argv of [
    ['--prefix', '5', '--commands', '20', '--per-seed', '10', '--threads', '1'],
    ['--seed', '3', '--prefix', '5', '--commands', '20'],
    ['--seed', '3', '--prefix', '5', '--check-every', '100'],
  ]) {
    const r = spawnSync(process.execPath, [SIM_JS, ...argv], { encoding: 'utf8' });
    assert.equal(r.status, 2, `${argv.join(' ')}: exit ${r.status}\n${r.stdout}`);
    assert.match(r.stderr, /usage: /);
  }
});
