// bench/engine_match and bench/engine_scale: each runs its quick form to the
// end through bench/run.js and writes a result with its key figures. Both
// generate their own command streams and stop at the first command the
// engine refuses, so a rule added to the engine that the workload breaks
// fails here instead of in the next recorded run (engine_scale's deposits
// went past deposit_limit_exceeded's cap unseen for a day). Figures are
// printed, never asserted.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const runner = fileURLToPath(new URL('../../bench/run.js', import.meta.url));

function runQuick(name: string): Record<string, number> {
  const dir = mkdtempSync(join(tmpdir(), `dx-bench-${name}-`));
  try {
    const r = spawnSync(process.execPath, ['--expose-gc', runner, name, '--quick', '--no-report'], {
      encoding: 'utf8',
      env: { ...process.env, DX_BENCH_RESULTS_DIR: dir },
    });
    assert.equal(r.status, 0, `${r.stdout}\n${r.stderr}`);
    return (JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as { metrics: Record<string, number> }).metrics;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('engine_scale: the quick cases run to the end and report throughput, the ratio and memory', { timeout: 180_000 }, () => {
  const m = runQuick('engine_scale');
  assert.ok(m.o1k_m10_a10k_commands_per_s! > 0, JSON.stringify(m));
  assert.ok(m.o100k_m1000_a10k_commands_per_s! > 0, JSON.stringify(m));
  assert.ok(m.ratio_1m_orders_1000_markets_vs_1k! > 0, JSON.stringify(m));
  assert.ok(m.bytes_per_resting_order! > 0, JSON.stringify(m));
});

test('engine_match: the quick run reaches the end and reports its figures', { timeout: 180_000 }, () => {
  const m = runQuick('engine_match');
  assert.ok(m.commands_per_s! > 0 && m.p99_ns! > 0, JSON.stringify(m));
});
