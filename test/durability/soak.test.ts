// The soak test, 60 seconds (the long one is `npm run test:soak`, 30 minutes
// by default): the real exchange under the steady mixed load of
// test/support/soak/, sampled every 10 s through the inspector, /metrics and
// /proc. A minute is too short to judge memory trends (they are printed, not
// judged, under 10 minutes after the warm-up); it checks that every thread
// answers every sample, that the tables kept by a cap never pass it, that the
// load exercised every lane, and the end: nothing sequenced but not durable,
// no error line, exit 0 on SIGTERM, `tools/journal verify` sound.
// Test process, main thread; the exchange runs in a child process.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeSoak, runSoak, SOAK_SETTINGS } from '../support/soak/driver.js';

const TRADERS = 4;

test('soak: a minute of mixed load; every sample answered, capped tables stay within their caps, the journal verifies', {
  timeout: 180_000,
}, async () => {
  const lines: string[] = [];
  const r = await runSoak({
    minutes: 1, sampleMs: 10_000, warmupMs: 20_000, minWindowMs: 10 * 60_000, seed: 19, traders: TRADERS, subscribers: 2,
    log: (l) => lines.push(l),
  });
  const report = `${describeSoak(r)}\n${lines.join('\n')}`;
  assert.deepEqual(r.problems, [], report);
  assert.equal(r.ok, true, report);
  assert.ok(r.samples.length >= 7, report);
  const accounts = TRADERS + 1;
  const s = SOAK_SETTINGS;
  for (const x of r.samples) {
    assert.deepEqual(x.unanswered, [], report);
    for (const t of ['main', 'engine', 'journal', 'gateway-0']) assert.ok((x.threads[t]?.heapUsed ?? 0) > 0, `${t} at ${x.t} ms`);
    const tb = x.tables;
    assert.ok(tb.orders_retained_terminal! <= accounts * s.terminal_cap!, report);
    assert.ok(tb.orders_retained_rejected! <= accounts * s.reject_cap!, report);
    assert.ok(tb.rounds! <= s.round_cap! + 2 * tb.markets!, report);
    // Pending withdrawals: at most one at a time (the funding lane finishes each before the next).
    assert.ok(tb.withdrawals! <= 1 + accounts * s.withdrawal_cap!, report);
    // Live keys: one per account plus the one the keys lane holds.
    assert.ok(tb.keys! <= accounts + 1 + accounts * s.revoked_key_cap!, report);
    assert.ok(tb.replay_guard! >= 0 && x.held >= 0 && x.fds > 0, report);
  }
  const last = r.samples[r.samples.length - 1]!;
  // The churning tables reached their caps within the minute: keys and withdrawals were evicted.
  assert.ok(last.tables.withdrawal_index! < (r.load.withdraw_ok ?? 0), report);
  assert.ok(last.tables.key_index! < (r.load.key_create_ok ?? 0), report);
  const lanes = ['place_ok', 'cancel_ok', 'ws_connect', 'key_create_ok', 'key_revoke_ok', 'withdraw_ok', 'withdraw_confirm_ok'];
  for (const k of [...lanes, 'deposit_ok', 'oracle_tick_ok', 'read_book_ok']) {
    assert.ok((r.load[k] ?? 0) > 0, `${k}: ${report}`);
  }
  assert.ok(last.engineSeq > 1000, report);
  assert.match(r.journalVerify, /result: sound through seq [0-9]+/, report);
  // Trends are printed with their slopes; a minute is not judged.
  assert.ok(r.judgement.memory.length >= 5 && r.judgement.memory.every((m) => m.verdict === 'not judged'), report);
});
