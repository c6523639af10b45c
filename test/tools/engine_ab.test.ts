// tools/engine_ab: the A/B of two engine builds runs end to end (this build
// against itself, a small stream) and refuses bad usage with exit code 2.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../../', import.meta.url));
const tool = fileURLToPath(new URL('../../tools/engine_ab.js', import.meta.url));

test('engine_ab: compares a build with itself, one line per process and a summary', () => {
  const r = spawnSync(process.execPath, [tool, dist, dist, '--rounds', '1', '--runs', '1', '--commands', '2000'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.equal(lines.length, 3, r.stdout);
  assert.match(lines[0]!, /^round 1 A .*: median [0-9.]+ M\/s, best [0-9.]+ M\/s, per CPU second [0-9.]+ M\/s$/);
  assert.match(lines[1]!, /^round 1 B /);
  assert.match(
    lines[2]!,
    new RegExp(
      String.raw`^A [0-9.]+ M/s {2}B [0-9.]+ M/s {2}B/A [0-9.]+; per CPU second A [0-9.]+ M/s {2}B [0-9.]+ M/s {2}B/A [0-9.]+ ` +
        String.raw`\(medians of 1 rounds x 1 runs of 2000 commands\)$`,
    ),
  );
});

test('engine_ab: usage errors exit 2 with the usage line', () => {
  for (const argv of [[], [dist], [dist, dist, '--runs', 'x'], [dist, dist, '--bogus', '1'], [dist, '/no/such/dist']]) {
    const r = spawnSync(process.execPath, [tool, ...argv], { encoding: 'utf8' });
    assert.equal(r.status, 2, argv.join(' '));
    assert.match(r.stderr, /usage: node dist\/tools\/engine_ab\.js/);
  }
});
