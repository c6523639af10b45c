// bench/engine_match, bench/engine_scale and bench/request_parts: each runs
// its quick form to the end through bench/run.js and writes a result with its
// key figures. The engine benchmarks generate their own command streams and
// stop at the first command the engine refuses, so a rule added to the engine
// that the workload breaks fails here instead of in the next recorded run
// (engine_scale's deposits went past deposit_limit_exceeded's cap unseen for
// a day); request_parts stops at the first input a lane's part refuses (a
// signature, a schema, a binary record). Figures are checked to be there,
// never against a bound.

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

test('request_parts: every part runs on inputs the lanes accept, beside its peers', { timeout: 120_000 }, () => {
  const m = runQuick('request_parts');
  for (const k of ['hmac_place_p50_ns', 'ws_parse_command_p50_ns', 'ws_route_input_p50_ns', 'binary_frame_check_per_record_p50_ns']) {
    assert.ok(m[k]! > 0, `${k}: ${JSON.stringify(m)}`);
  }
});
