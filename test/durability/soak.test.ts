// The soak test, 60 seconds (the long one is `npm run test:soak`, 30 minutes
// by default): the real exchange under the steady mixed load of
// test/support/soak/, sampled every 10 s through the inspector, /metrics and
// /proc. A minute is too short to judge memory trends (they are printed, not
// judged, under 10 minutes after the warm-up); it checks that every thread
// answers every sample, that the tables kept by a cap never pass it, that the
// load exercised every lane, and the end: nothing sequenced but not durable,
// no error line, exit 0 on SIGTERM, `tools/journal verify` sound. And the
// judgement on made-up series: a young generation V8 shrinks and grows back
// is no trend of the resident memory, native growth is.
// Test process, main thread; the exchange runs in a child process.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { describeSoak, runSoak, SOAK_SETTINGS } from '../support/soak/driver.js';
import { judge, type Sample, type ThreadSample, type Trend } from '../support/soak/measure.js';

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
    for (const t of ['main', 'engine', 'journal', 'gateway-0', 'piscina']) {
      assert.ok((x.threads[t]?.heapUsed ?? 0) > 0 && (x.threads[t]?.young ?? 0) > 0, `${t} at ${x.t} ms`);
    }
    const tb = x.tables;
    assert.ok(tb.orders_retained_terminal! <= accounts * s.terminal_cap!, report);
    assert.ok(tb.orders_retained_rejected! <= accounts * s.reject_cap!, report);
    assert.ok(tb.rounds! <= s.round_cap! + 2 * tb.markets!, report);
    // Pending withdrawals: at most one at a time (the funding lane finishes each before the next).
    assert.ok(tb.withdrawals! <= 1 + accounts * s.withdrawal_cap!, report);
    // Live keys: one per account plus the one the keys lane holds.
    assert.ok(tb.keys! <= accounts + 1 + accounts * s.revoked_key_cap!, report);
    assert.ok(tb.deposit_refs! <= accounts * s.deposit_ref_cap!, report);
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

test('soak judgement: a young generation that shrinks and grows back is no trend; native growth is, with or without it', () => {
  const MIB = 1 << 20;
  // 30 samples a minute apart; the gateway's young generation drops by 25 MiB
  // at minute 8 and grows back by minute 12 (as V8 resized it in the soak).
  const series = (nativePer10Min: number): Sample[] => Array.from({ length: 31 }, (_, i): Sample => {
    const youngGateway = (i >= 8 && i < 12 ? 7 + (i - 8) * 6 : 32) * MIB;
    const thread = (heapUsed: number, young: number): ThreadSample => ({
      heapUsed, heapTotal: heapUsed + young, young, external: 0, arrayBuffers: 0, activeResources: 1,
    });
    const threads = { main: thread(15 * MIB, 4 * MIB), 'gateway-0': thread(19 * MIB, youngGateway) };
    const rss = 200 * MIB + (nativePer10Min * i) / 10 + threads.main.young + youngGateway;
    return {
      t: i * 60_000, rss, fds: 50, threads, unanswered: [], held: 0, commandRingUsed: {}, eventRingLag: {}, tables: {},
      journalBytes: 0, snapshotBytes: 0, engineSeq: i, wsConnections: 0,
    };
  });
  const o = { warmupMs: 5 * 60_000, minWindowMs: 10 * 60_000 };
  const rss = (j: ReturnType<typeof judge>, what: string): Trend => j.memory.find((m) => m.what === what)!;
  const flat = judge(series(0), o);
  assert.equal(rss(flat, 'rss less young gens').verdict, 'ok');
  assert.ok(Math.abs(rss(flat, 'rss less young gens').per10min) < 0.01 * MIB);
  // The raw RSS over the same window has a slope of several MiB per 10 minutes from the young generation alone: printed, not judged.
  assert.ok(rss(flat, 'rss process (raw)').per10min > 3 * MIB, JSON.stringify(rss(flat, 'rss process (raw)')));
  assert.equal(rss(flat, 'rss process (raw)').verdict, 'not judged');
  assert.equal(flat.ok, true);
  const leaking = judge(series(2 * MIB), o);
  assert.equal(rss(leaking, 'rss less young gens').verdict, 'FAIL');
  assert.ok(Math.abs(rss(leaking, 'rss less young gens').per10min - 2 * MIB) < 0.01 * MIB);
  assert.equal(leaking.ok, false);
});

test('soak judgement: snapshots that grow while a capped table fills pass once it is full; snapshots that keep growing fail', () => {
  // The fill records fill toward their cap until minute 20, past the middle
  // of the judged window, and the snapshot grows with them (the soak's took
  // 10-15 minutes).
  const series = (afterFull: number): Sample[] => Array.from({ length: 31 }, (_, i): Sample => {
    const fills = Math.min(6000, 500 + i * 275);
    return {
      t: i * 60_000, rss: 200 << 20, fds: 50, threads: {}, unanswered: [], held: 0, commandRingUsed: {}, eventRingLag: {},
      tables: { fill_records: fills, tape_records: 1000 }, journalBytes: 2e6,
      snapshotBytes: 1.5e6 + fills * 120 + Math.max(0, i - 20) * afterFull, engineSeq: i, wsConnections: 0,
    };
  });
  const o = { warmupMs: 5 * 60_000, minWindowMs: 10 * 60_000, bounds: { fill_records: 7000, tape_records: 1000 } };
  const snapshots = (j: ReturnType<typeof judge>): Trend => j.tables.find((t) => t.what === 'snapshots on disk (bytes)')!;
  const bounded = judge(series(0), o);
  assert.equal(snapshots(bounded).verdict, 'ok', snapshots(bounded).why);
  assert.match(snapshots(bounded).why, /from 20\.0 min, when the capped tables were full/);
  assert.equal(bounded.ok, true);
  assert.equal(snapshots(judge(series(20_000), o)).verdict, 'FAIL');
  // Still filling at the end: not judged (too few samples after it).
  const short = judge(series(0).slice(0, 15), { ...o, minWindowMs: 5 * 60_000 });
  assert.equal(snapshots(short).verdict, 'not judged', snapshots(short).why);
});
