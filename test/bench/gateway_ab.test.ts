// bench/gateway_ab: the A/B of two builds' placement paths runs end to end
// (this build against itself, one short round) and refuses bad usage with
// exit code 2. Figures are printed, never asserted.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const dist = fileURLToPath(new URL('../../', import.meta.url));
const tool = fileURLToPath(new URL('../../bench/gateway_ab.js', import.meta.url));

test('gateway_ab: compares a build with itself, one line per exchange process and the medians', { timeout: 120_000 }, async () => {
  const argv = [tool, dist, dist, '--rounds', '1', '--rate', '200', '--open-ms', '1000', '--closed-ms', '1000', '--keys', '16'];
  const child = spawn(process.execPath, [...argv, '--connections', '8'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((res) => child.on('close', res));
  assert.equal(code, 0, err);
  const lines = out.trim().split('\n');
  assert.equal(lines.length, 8, out);
  const round = /^round 1 [AB] .*: open 200\/s server [0-9.]+ us\/placement, p50 [0-9]+ us, p99 [0-9]+ us; closed 8 conns [0-9]+\/s, /;
  assert.match(lines[0]!, round);
  assert.match(lines[1]!, round);
  for (const [i, k] of ['open_server_us', 'open_p50_us', 'open_p99_us', 'closed_per_s', 'closed_server_us'].entries())
    assert.match(lines[2 + i]!, new RegExp(`^${k}: A [0-9.]+ {2}B [0-9.]+ {2}B/A [0-9.]+$`));
  assert.match(lines[7]!, /^\(medians of 1 rounds; [0-9]+ gateway thread\(s\), [0-9]+ load worker\(s\), 16 keys, default tier\)$/);
});

test('gateway_ab: usage errors exit 2 with the usage line', () => {
  for (const argv of [[], [dist], [dist, dist, '--rate', 'x'], [dist, dist, '--bogus', '1'], [dist, '/no/such/dist'],
    [dist, dist, '--keys', '4', '--connections', '8']]) {
    const r = spawnSync(process.execPath, [tool, ...argv], { encoding: 'utf8' });
    assert.equal(r.status, 2, argv.join(' '));
    assert.match(r.stderr, /usage: node dist\/bench\/gateway_ab\.js/);
  }
});
