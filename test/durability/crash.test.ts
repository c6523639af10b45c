// Crash test inside `npm test`: the crash run (test/support/crash/, the
// same one as tools/crash_test.ts) with 3 kills (the first the moment a new
// journal segment appears, the second the moment a snapshot's temp file
// appears, the third while the exchange is recovering from the second), on
// 8 KiB segments with a snapshot every 300 records, the engine's invariant
// checker on (--verify 1), and a self-test showing that its checks do report
// a lost acknowledged order and money that does not add up. The long runs
// are `npm run test:crash` (30 kills; `-- --kills 300` for parts of 30).
// Test process, main thread; the exchange runs in a child process.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { test } from 'node:test';
import { ROTATION_AND_SNAPSHOT_STRESS, runCrashTest, type CrashReport } from '../support/crash/driver.js';

function describe(r: CrashReport): string {
  return `seed ${r.seed}, data dir ${r.data_dir}\n${r.violations.join('\n')}\ncounts ${JSON.stringify(r.counts)}`;
}

test('crash: 3 SIGKILLs under load (one during a restart) lose nothing acknowledged, retries apply at most once, seqs keep ' +
  'increasing', { timeout: 120_000 }, async () => {
  const lines: string[] = [];
  const r = await runCrashTest({
    kills: 3, seed: 20261121, verify: true, loadMinMs: 500, loadMaxMs: 1500, log: (l) => lines.push(l),
    ...ROTATION_AND_SNAPSHOT_STRESS, snapshotKillEvery: 2, rotationKillEvery: 3,
  });
  assert.deepEqual(r.violations, [], `${describe(r)}\n${lines.join('\n')}`);
  assert.equal(r.ok, true);
  assert.equal(r.kills, 3);
  assert.equal(r.kills_during_start, 1, 'the schedule kills the start after the second kill');
  // Starts: the first, two restarts after load kills, one after the start kill, one after the final SIGTERM.
  assert.equal(r.restarts, 4);
  // The run did what it claims: acknowledged placements with fills, cancels,
  // withdrawals, confirmations, and a conservation check after every restart.
  const c = r.counts;
  assert.ok((c.place_ok ?? 0) > 0 && (c.fills_acked ?? 0) > 0, describe(r));
  assert.ok((c.cancel_ok ?? 0) > 0 && (c.withdraw_ok ?? 0) > 0 && (c.deposit_ok ?? 0) > 0, describe(r));
  assert.ok((c.orders_checked ?? 0) >= (c.place_ok ?? 0), describe(r));
  // The WebSocket lanes (each trader's second key) connected, placed, and their acknowledged orders were checked after restarts.
  assert.ok((c.ws_connect_ok ?? 0) > 0 && (c.ws_place_ok ?? 0) > 0, describe(r));
  assert.ok((c.ws_orders_checked ?? 0) >= (c.ws_place_ok ?? 0), describe(r));
  assert.equal(c.conservation_checks, r.restarts - 1, 'one after each restart but the first start');
  // Every placement and withdrawal cut off by a kill (or by the final SIGTERM) was looked up and retried once after the restart.
  for (const kind of ['place', 'withdraw']) {
    const cut = c[`${kind}_uncertain`] ?? 0;
    assert.equal((c[`${kind}_uncertain_had_landed`] ?? 0) + (c[`${kind}_uncertain_had_not_landed`] ?? 0), cut, `${kind}: ${describe(r)}`);
  }
  for (const rec of r.recoveries.slice(1)) assert.ok(rec.seq > 0, JSON.stringify(r.recoveries));
  // The aimed kills met their moment: a new segment file, then a snapshot's temp file.
  assert.equal(c.kills_aimed_at_rotation, 1, describe(r));
  assert.equal(c.kills_aimed_at_snapshot, 1, describe(r));
});

test('crash: the checker reports an acknowledged order that is missing after a restart and money that does not add ' +
  'up', { timeout: 60_000 }, async () => {
  const r = await runCrashTest({
    kills: 1,
    seed: 77,
    injectFaults: true,
    loadMinMs: 300,
    loadMaxMs: 600,
    traders: 2,
    log: () => undefined,
  });
  try {
    assert.equal(r.ok, false);
    assert.ok(
      r.violations.some((v) => /acknowledged order 1 \(client_order_id \d+, seq 1\) is missing after restart/.test(v)),
      describe(r),
    );
    assert.ok(r.violations.some((v) => /^\[epoch 0\] money: /.test(v)), describe(r));
    assert.ok(r.violations.some((v) => /funding account \d+: available/.test(v)), describe(r));
  } finally {
    rmSync(r.data_dir, { recursive: true, force: true });
  }
});
