// tools/differential: the command line. Its positional arguments (seeds,
// commands, first seed) must be positive integers: a bad one is a usage
// error (exit 2), never a run of no seeds (or of empty streams) reported as
// "all passed" with exit 0.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const tool = fileURLToPath(new URL('../../tools/differential.js', import.meta.url));

test('differential: a bad seeds, commands or first-seed argument is a usage error, not a pass', () => {
  for (const argv of [['seeds=10'], ['abc'], ['0'], ['2', 'x'], ['2', '0'], ['1', '10', 'first_seed=5'], ['1', '10', '1', 'extra']]) {
    const r = spawnSync(process.execPath, [tool, ...argv], { encoding: 'utf8' });
    assert.equal(r.status, 2, `${argv.join(' ')}: exit ${r.status}, stdout ${JSON.stringify(r.stdout)}`);
  }
});

test('differential: a small run passes and says how many seeds ran', () => {
  const r = spawnSync(process.execPath, [tool, '2', '50', '7'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^2\/2 seeds x 50 commands ok/m);
  assert.match(r.stdout, /all 2 seeds passed/);
});
