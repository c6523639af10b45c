// Replay proof (issue 4): a seeded stream of 100,000 commands runs through an
// in-process engine and is journaled the way the journal thread does it, with
// snapshots of a read model fed the same events written along the way. The
// live engine's state hash must equal the hash after recovery from the journal
// alone, and after recovery from the newest snapshot plus the journal after
// it, in this process and in a child process with another time zone and
// locale. The time-driven state (dead-man timers, gtd expiries) and the
// withdrawal states must survive recovery, and fire (or finish) identically
// on the recovered engines.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import type { ExchangeState } from '../../src/engine/state.js';
import { summarize } from '../../src/engine/summary.js';
import { verify } from '../../src/engine/verify.js';
import { JOURNAL_DIR, SNAPSHOT_DIR } from '../../src/journal/format.js';
import { planRecovery, recoverViews } from '../../src/journal/recovery.js';
import { readSnapshot, writeSnapshot } from '../../src/journal/snapshot.js';
import { decodeViews, encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { CancelReason, Outcome, Side, Tif, WithdrawalStatus } from '../../src/layout/records.js';
import type { RecordObject } from '../../src/layout_codec/record_codec.js';
import { hiLoToBigInt, hiLoToString } from '../../src/lib/u64.js';
import { Views } from '../../src/views/views.js';
import {
  clockTick, executeDecoded, JOURNAL_ENGINE_CONFIG, journaledRun, recoverState, removeDataDir, tempDataDir,
} from './journal_fixture.js';
import { B_TIF, LB, LW, W_EXP_HI, W_EXP_LO } from '../../src/book/orders.js';

const SEED = 4242;
const COMMANDS = 100_000;
/** Snapshots after these many generated commands; the timer commands below get one more. */
const SNAPSHOT_AFTER = [35_000, 70_000, 95_000];
const TOOL = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));
const FOREIGN_ENV = { TZ: 'Pacific/Chatham', LANG: 'tr_TR.UTF-8', LC_ALL: 'tr_TR.UTF-8' };
const MS = 1_000_000n;

/**
 * Commands that leave a dead-man timer armed, a gtd order and a gtc order
 * resting and a withdrawal pending for a fresh account, on a fresh market
 * whose round stays open for days (so that nothing else touches them).
 * `rearm`: an account whose timer is re-armed with another timeout.
 */
function timerCommands(s: ExchangeState, rearm: number | null): RecordObject[] {
  const now = hiLoToBigInt(s.tsHi, s.tsLo);
  const account = s.accounts.count + 1;
  const market = s.markets.count + 1;
  let k = 0n;
  const c = (type: string, acct: number, fields: Record<string, unknown>): RecordObject => ({
    type,
    producer: 1,
    correlation: 0,
    account: acct,
    seq: 0,
    ts: now + ++k * MS,
    ...fields,
  });
  const place = (outcome: number, tif: number, expiry: bigint): RecordObject => c('PlaceOrder', account, {
    market_id: market, qty: 3, group_id: 0, tick: 2, side: Side.buy, outcome, tif, stp: 0, post_only: 1,
    has_client_order_id: 0, has_max_cost: 0, client_order_id: 0n, expiry_ts: expiry, max_cost: 0,
  });
  return [
    c('CreateMarket', 0, { category: 900 + market, position_limit: 0, fee_schedule_id: 0, title: `timers ${market}` }),
    c('OpenRound', 0, { market_id: market, strike: 3_000_000_000_000, close_ts: now + 10n * 86_400_000n * MS }),
    c('CreateAccount', 0, {}),
    c('Deposit', account, { amount: 100_000, ref: 'timers' }),
    place(Outcome.yes, Tif.gtd, now + 7_200_000n * MS),
    place(Outcome.no, Tif.gtc, 0n),
    c('ArmDeadman', account, { timeout_ms: 3_600_000 }),
    c('RequestWithdrawal', account, { client_withdrawal_id: 7n, amount: 500, destination: 'timers' }),
    ...(rearm === null ? [] : [c('ArmDeadman', rearm, { timeout_ms: 1_800_000 })]),
  ];
}

let dataDir = '';
/** The same journal without the snapshots directory: recovery from the journal alone. */
let journalOnlyDir = '';
/** The same journal with only the snapshot after 95,000 commands: a long tail to replay. */
let longTailDir = '';
let live: { engine: Engine; out: BufferEventOut };
let liveHash = '';
let liveSeq = 0;
let mirrorHash = '';
const snapshotSeqs: number[] = [];
const snapshotPaths: string[] = [];
let runMs = 0;
/** The fresh account of the first timer group (in the newest snapshot; re-armed in the tail). */
let timerAccount = 0;

before(() => {
  dataDir = tempDataDir('replay');
  const mirror = new Views(JOURNAL_ENGINE_CONFIG);
  const snapshot = (): void => {
    snapshotPaths.push(writeSnapshot(dataDir, mirror.asOfSeq, encodeViews(mirror), false));
    snapshotSeqs.push(mirror.asOfSeq);
  };
  let snapshotAt = -1;
  const t0 = performance.now();
  const run = journaledRun(dataDir, SEED, COMMANDS, {
    segmentBytes: 4 << 20,
    onEvent: (m, o) => mirror.apply(m, o),
    // After the stream: timers for a fresh account, a snapshot, then the same for another account (the tail).
    extra: [
      (engine) => {
        const cmds = timerCommands(engine.state, null);
        snapshotAt = COMMANDS + cmds.length - 1;
        timerAccount = engine.state.accounts.count + 1;
        return cmds;
      },
      (engine) => timerCommands(engine.state, timerAccount),
    ],
    each: (i) => {
      if (SNAPSHOT_AFTER.includes(i + 1) || i === snapshotAt) snapshot();
    },
  });
  runMs = performance.now() - t0;
  run.writer.close();
  live = { engine: run.engine, out: run.out };
  liveSeq = run.engine.state.seq;
  liveHash = stateHash(run.engine.state);
  mirrorHash = stateHash(mirror.state);
  journalOnlyDir = tempDataDir('replay-journal-only');
  symlinkSync(join(dataDir, JOURNAL_DIR), join(journalOnlyDir, JOURNAL_DIR));
  longTailDir = tempDataDir('replay-long-tail');
  symlinkSync(join(dataDir, JOURNAL_DIR), join(longTailDir, JOURNAL_DIR));
  mkdirSync(join(longTailDir, SNAPSHOT_DIR));
  symlinkSync(
    snapshotPaths[SNAPSHOT_AFTER.length - 1]!,
    join(longTailDir, SNAPSHOT_DIR, basename(snapshotPaths[SNAPSHOT_AFTER.length - 1]!)),
  );
});

after(() => {
  for (const d of [dataDir, journalOnlyDir, longTailDir]) if (d !== '') removeDataDir(d);
});

test(`replay: ${COMMANDS} seeded commands are journaled, with snapshots of a read model fed the same events`, (t) => {
  t.diagnostic(
    `seed=${SEED}: ${COMMANDS} commands -> seq ${liveSeq} in ${Math.round(runMs)} ms (engine, reference model, journal writer and mirror ` +
      `read model), snapshots at seqs ${snapshotSeqs.join(', ')}`,
  );
  assert.equal(snapshotSeqs.length, SNAPSHOT_AFTER.length + 1);
  assert.ok(liveSeq > snapshotSeqs.at(-1)!, 'the newest snapshot leaves a tail of the journal to replay');
  assert.ok(liveSeq - snapshotSeqs.at(-2)! > 4000, 'the snapshot after 95,000 commands leaves a long tail');
  assert.deepEqual(verify(live.engine.state), []);
  assert.equal(mirrorHash, liveHash, 'the read model fed the same events has the engine\'s state');
});

test('replay: recovery from the journal alone gives the live state hash (read model and engine-thread way)', () => {
  const plan = planRecovery(journalOnlyDir, { repair: false });
  assert.equal(plan.snapshot, null);
  assert.deepEqual(plan.tails, []);
  assert.equal(plan.lastSeq, liveSeq);
  assert.equal(plan.segments[0]!.firstSeq, 1);
  assert.ok(plan.segments.length >= 3, `the journal spans several segments (${plan.segments.length})`);
  const views = recoverViews(plan, JOURNAL_ENGINE_CONFIG);
  assert.equal(views.asOfSeq, liveSeq);
  assert.equal(stateHash(views.state), liveHash);
  assert.equal(stateHash(recoverState(plan)), liveHash);
});

for (const variant of ['newest', 'long tail'] as const) {
  test(`replay: recovery from a snapshot plus the journal after it (${variant}) gives the live state hash`, () => {
    const plan = planRecovery(variant === 'newest' ? dataDir : longTailDir, { repair: false });
    const want = variant === 'newest' ? snapshotSeqs.at(-1) : snapshotSeqs[SNAPSHOT_AFTER.length - 1];
    assert.equal(plan.snapshot?.seq, want);
    assert.deepEqual(plan.rejectedSnapshots, []);
    assert.equal(plan.lastSeq, liveSeq);
    // Only the segments the tail needs are planned.
    assert.ok(plan.segments.length > 0 && plan.segments.every((s) => s.lastSeq > want!));
    // The read model's configuration comes from the snapshot (nothing is passed here).
    const views = recoverViews(plan, {});
    assert.equal(views.asOfSeq, liveSeq);
    assert.equal(stateHash(views.state), liveHash);
    assert.equal(stateHash(recoverState(plan)), liveHash);
  });
}

function runTool(args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [TOOL, ...args], { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 26 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('replay: in a child process with TZ=Pacific/Chatham and a Turkish locale, tools/journal prints the same hash', () => {
  // The environment must really change the child's zone and locale, or this test proves nothing.
  const probe = spawnSync(
    process.execPath,
    ['-e', 'const o = Intl.DateTimeFormat().resolvedOptions(); console.log(o.timeZone, o.locale, new Date(0).getHours())'],
    {
      env: { ...process.env, ...FOREIGN_ENV },
      encoding: 'utf8',
    },
  );
  assert.equal(probe.stdout.trim(), 'Pacific/Chatham tr-TR 12');

  const alone = runTool(['hash', '--data-dir', journalOnlyDir, '--engine', JSON.stringify(JOURNAL_ENGINE_CONFIG)], FOREIGN_ENV);
  assert.equal(alone.status, 0, alone.stderr);
  const a = JSON.parse(alone.stdout) as { seq: string; state_hash: string; snapshot: string | null };
  assert.deepEqual([a.seq, a.state_hash, a.snapshot], [String(liveSeq), liveHash, null]);

  const withSnapshot = runTool(['hash', '--data-dir', dataDir], FOREIGN_ENV);
  assert.equal(withSnapshot.status, 0, withSnapshot.stderr);
  const b = JSON.parse(withSnapshot.stdout) as { seq: string; state_hash: string; snapshot_seq: string };
  assert.deepEqual([b.seq, b.state_hash, b.snapshot_seq], [String(liveSeq), liveHash, String(snapshotSeqs.at(-1))]);

  // verify: the full replay with invariant checks on the way, every snapshot cross-checked.
  const v = runTool(['verify', '--data-dir', dataDir, '--check-every', '50000'], FOREIGN_ENV);
  assert.equal(v.status, 0, v.stdout + v.stderr);
  assert.match(v.stdout, new RegExp(`state hash at seq ${liveSeq}: ${liveHash}`));
  for (const seq of snapshotSeqs) assert.match(v.stdout, new RegExp(`snap-0*${seq}\\.dxs: same state hash as the replay at seq ${seq}`));
  assert.match(v.stdout, /replay from the newest valid snapshot .* same state hash as the full replay/);
  assert.match(v.stdout, /result: sound/);
});

// ---- time-driven state and withdrawals ----------------------------------------

/** The parts of the state that timers and withdrawals live in, by id (not by slot). */
function timePicture(s: ExchangeState): unknown {
  const acc = s.accounts;
  const ord = s.orders;
  const sum = summarize(s);
  const deadman = [];
  for (let a = 1; a <= acc.count; a++) {
    if (acc.deadArmed[a] !== 1) continue;
    deadman.push({
      account: a, timeout_ms: acc.deadTimeoutMs[a], fires_at_ts: hiLoToString(acc.deadHi[a]!, acc.deadLo[a]!),
      timer: s.deadmen.has(a) ? hiLoToString(s.deadmen.hiOf(a), s.deadmen.loOf(a)) : null,
    });
  }
  const gtd = [];
  for (const o of sum.orders) {
    const slot = s.slotOf(o.order_id);
    if (ord.u8[(slot << LB) | B_TIF] !== Tif.gtd) continue;
    gtd.push({
      order_id: o.order_id, account: o.account_id,
      expiry_ts: hiLoToString(ord.u32[(slot << LW) | W_EXP_HI]!, ord.u32[(slot << LW) | W_EXP_LO]!),
      timer: s.expiries.has(slot) ? hiLoToString(s.expiries.hiOf(slot), s.expiries.loOf(slot)) : null,
    });
  }
  const withdrawals = [];
  for (let wid = 1; wid <= acc.withdrawalCount; wid++) {
    const w = acc.withdrawalRow(wid);
    if (w < 0) continue;
    withdrawals.push({
      wid, account: acc.wAccount[w], amount: acc.wAmount[w], status: acc.wStatus[w], seq: acc.wSeq[w],
      client_withdrawal_id: hiLoToString(acc.wCwidHi[w]!, acc.wCwidLo[w]!), destination: acc.wDestination[w],
    });
  }
  return {
    deadman, deadmen_armed: s.deadmen.size, summary_deadman: sum.deadman, gtd, expiries_pending: s.expiries.size, withdrawals,
    summary_withdrawals: sum.withdrawals, balances: sum.accounts, ts: hiLoToString(s.tsHi, s.tsLo),
  };
}

test('replay: dead-man timers, gtd expiries and withdrawal states survive recovery, then fire and finish identically', () => {
  const recovered = [
    { name: 'journal alone', state: recoverState(planRecovery(journalOnlyDir, { repair: false })) },
    { name: 'newest snapshot + tail', state: recoverState(planRecovery(dataDir, { repair: false })) },
    { name: 'older snapshot + long tail', state: recoverState(planRecovery(longTailDir, { repair: false })) },
  ];
  const s = live.engine.state;
  type Picture = {
    deadman: { account: number; timeout_ms: number }[];
    gtd: { order_id: number; account: number }[];
    withdrawals: { wid: number; account: number; status: number }[];
  };
  const picture = timePicture(s) as Picture;
  // The first timer group is inside the newest snapshot; the tail re-arms its timer and adds a second group.
  const inSnapshot = timePicture(decodeViews(readSnapshot(snapshotPaths.at(-1)!).body).state) as Picture;
  assert.deepEqual(inSnapshot.deadman.filter((d) => d.account === timerAccount).map((d) => d.timeout_ms), [3_600_000]);
  assert.equal(inSnapshot.gtd.filter((g) => g.account === timerAccount).length, 1);
  assert.ok(inSnapshot.withdrawals.some((w) => w.account === timerAccount && w.status === WithdrawalStatus.pending));
  assert.deepEqual(
    picture.deadman.filter((d) => d.account >= timerAccount).map((d) => [d.account, d.timeout_ms]),
    [
      [timerAccount, 1_800_000],
      [timerAccount + 1, 3_600_000],
    ],
  );
  // The stream must leave something of each kind pending, or the comparison is empty.
  assert.ok(picture.deadman.length > 0, 'armed dead-man timers at the end of the stream');
  assert.ok(picture.gtd.length > 0, 'resting gtd orders at the end of the stream');
  for (const st of [WithdrawalStatus.pending, WithdrawalStatus.confirmed, WithdrawalStatus.failed]) {
    assert.ok(picture.withdrawals.some((w) => w.status === st), `a withdrawal in status ${st}`);
  }
  for (const r of recovered) assert.deepEqual(timePicture(r.state), picture, r.name);

  // The same commands on the live engine and on engines continuing the
  // recovered states emit the same events: a ClockTick three days later expires
  // every gtd order and fires every dead-man timer; pending withdrawals finish.
  const engines = [
    { name: 'live', engine: new Engine(JOURNAL_ENGINE_CONFIG, live.out, s), out: live.out },
    ...recovered.map((r) => {
      const out = new BufferEventOut(1 << 22);
      return { name: r.name, engine: new Engine(JOURNAL_ENGINE_CONFIG, out, r.state), out };
    }),
  ];
  const pending = picture.withdrawals.filter((w) => w.status === WithdrawalStatus.pending).map((w) => w.wid);
  // What the tick must do, from the state: expire every resting gtd order
  // (first), then cancel the other live orders of every armed account.
  const armed = new Set(picture.deadman.map((d) => d.account));
  const gtdIds = new Set(picture.gtd.map((g) => g.order_id));
  const deadmanCancels = summarize(s).orders.filter((o) => armed.has(o.account_id) && !gtdIds.has(o.order_id)).length;
  const later = hiLoToBigInt(s.tsHi, s.tsLo) + 3n * 86_400_000n * MS;
  const commands: RecordObject[] = [
    clockTick(later),
    ...pending.map((wid, i): RecordObject => ({
      type: i % 2 === 0 ? 'ConfirmWithdrawal' : 'FailWithdrawal',
      producer: 1,
      correlation: 0,
      account: 0,
      seq: 0,
      ts: later + 1n,
      wid,
    })),
  ];
  const events = engines.map((e) => commands.flatMap((c) => executeDecoded(e.engine, e.out, c)));
  for (let i = 1; i < engines.length; i++) assert.deepEqual(events[i], events[0], engines[i]!.name);
  const fired = events[0]!;
  assert.equal(
    fired.filter((e) => e.type === 'OrderCanceled' && e.reason === CancelReason.expired).length,
    gtdIds.size,
    'every gtd order expired',
  );
  assert.equal(
    fired.filter((e) => e.type === 'OrderCanceled' && e.reason === CancelReason.deadman).length,
    deadmanCancels,
    'dead-man cancels',
  );
  assert.equal(
    fired.filter((e) => e.type === 'DeadmanDisarmed' && e.fired === 1).length,
    picture.deadman.length,
    'every armed timer fired',
  );
  assert.equal(fired.filter((e) => e.type === 'WithdrawalConfirmed' || e.type === 'WithdrawalFailed').length, pending.length);
  const hashes = engines.map((e) => stateHash(e.engine.state));
  assert.deepEqual(hashes, engines.map(() => hashes[0]));
  assert.notEqual(hashes[0], liveHash);
  for (const e of engines) assert.deepEqual(verify(e.engine.state), [], e.name);
});
