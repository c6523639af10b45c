// bench/gateway_path: the in-thread REST request path runs end to end on its
// uWS stand-in (a short run of each kind) and every request is answered with
// the status its kind expects. Figures are printed, never asserted.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const tool = fileURLToPath(new URL('../../bench/gateway_path.js', import.meta.url));

test('gateway_path: a short run of placements and reads answers every request', { timeout: 120_000 }, () => {
  const r = spawnSync(process.execPath, [tool, '--requests', '400', '--batch', '50', '--rounds', '1'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const metrics = JSON.parse(r.stdout.split('\n')[0]!) as Record<string, number>;
  assert.ok(metrics.place_ns_per_req! > 0 && metrics.read_ns_per_req! > 0, r.stdout);
  assert.ok(metrics.status_201! >= 400 && metrics.status_200! >= 400, r.stdout);
  assert.doesNotMatch(r.stdout, /FLAG/);
});

test('gateway_path: usage errors exit 2 with the usage line', () => {
  const r = spawnSync(process.execPath, [tool, '--bogus', '1'], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /usage: node dist\/bench\/gateway_path\.js/);
});
