// Clock faults while trading: the main thread's time source (src/lib/time.ts,
// which stamps the control plane's commands) and the engine loop's clock
// (the same offset, through Pipeline.setClockOffset) step back
// 10 s, then forward an hour, then back to the real time, while clients keep
// trading through a gateway thread on the real clock. The journal afterwards
// shows that the sequencer's ts never went backwards, that every gtd expiry,
// the dead-man timer and the round close fired exactly once, in their order
// and never before they were due, and that nothing due later fired; request
// signatures kept their +-5 s window against the real time throughout.
// Test process (in-process exchange), main thread.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { planRecovery, replay } from '../../src/journal/recovery.js';
import { CANCEL_REASON_NAMES, CancelReason, RoundStatus } from '../../src/layout/records.js';
import { decodeRecord, type RecordObject } from '../../src/layout_codec/record_codec.js';
import type { TimeSource } from '../../src/lib/time.js';
import { startTestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, order, signedRaw, sleep } from '../support/harness.js';

const MS = 1_000_000n;
const HOUR_MS = 3_600_000;

/** The real clock plus an offset the test moves, for the main thread and the engine's clock alike. */
class SteppedClock implements TimeSource {
  offsetMs = 0;
  onStep: (offsetMs: number) => void = () => undefined;
  nowMs(): number {
    return Date.now() + this.offsetMs;
  }

  step(offsetMs: number): void {
    this.offsetMs = offsetMs;
    this.onStep(offsetMs);
  }
}

function nsIn(ms: number): string {
  return String(BigInt(Date.now() + ms) * MS);
}

function journal(dataDir: string): RecordObject[] {
  const out: RecordObject[] = [];
  replay(planRecovery(dataDir, { repair: false }), 0, (m, o) => out.push(decodeRecord(m, o)));
  return out;
}

test('clock faults: the main clock steps back 10 s, forward an hour and back; sequencer ts never goes back, every timer fires '
  + 'once, in order, never early; signatures stay on the real time', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-clock-'));
  const clock = new SteppedClock();
  const tx = await startTestExchange({ data_dir: dataDir }, { time: clock });
  clock.onStep = (ms) => tx.ex.pipeline.setClockOffset(ms);
  interface Due { id: number; due: bigint }
  let gtds: Due[] = [];
  let notDue: Due[] = [];
  let deadmanDue: { account: number; order: number; due: bigint } | null = null;
  let roundDue: { market: number; order: number; due: bigint } | null = null;
  let otherMarket = 0;
  try {
    const m1 = await newMarket(tx, { title: 'closes in 20 min', round: false });
    const m1Close = nsIn(20 * 60_000);
    await tx.admin.openRound(m1, { strike: '6000000000000', close_ts: m1Close });
    const m2 = await newMarket(tx, { title: 'closes in 3 h', round: false });
    await tx.admin.openRound(m2, { strike: '6000000000000', close_ts: nsIn(3 * HOUR_MS) });
    const trader = await newAccount(tx);
    const sleeper = await newAccount(tx);
    const c = trader.client;
    const gtd = async (expiry: string): Promise<Due> => {
      const p = await c.placeOrder(order(m2, { tick: 10, tif: 'gtd', expiry_ts: expiry }));
      assert.equal(p.status, 'resting');
      return { id: Number(p.order_id), due: BigInt(expiry) };
    };
    // Due in seconds (while the clock is behind), within the hour (at the
    // forward step: two at the same expiry, and one earlier placed after
    // them), and in two hours.
    const soon = [await gtd(nsIn(1500)), await gtd(nsIn(3000))];
    const in30 = nsIn(30 * 60_000);
    const late = [await gtd(in30), await gtd(in30), await gtd(nsIn(25 * 60_000))];
    const never = await gtd(nsIn(2 * HOUR_MS));
    gtds = [...soon, ...late];
    notDue = [never];
    roundDue = { market: m1, order: Number((await c.placeOrder(order(m1, { tick: 20 }))).order_id), due: BigInt(m1Close) };
    otherMarket = m2;
    const sleeperOrder = Number((await sleeper.client.placeOrder(order(m2, { tick: 5 }))).order_id);
    const armed = await sleeper.client.armDeadman(60_000);
    assert.ok(armed.fires_at_ts !== undefined);
    deadmanDue = { account: sleeper.accountId, order: sleeperOrder, due: BigInt(armed.fires_at_ts) };

    // 1. The main clock steps back 10 s; clients keep trading on the real clock.
    clock.step(-10_000);
    const status = async (id: number): Promise<string> => {
      const o = (await c.orders({ limit: 1000 })).orders.find((x) => Number(x.order_id) === id);
      return o === undefined ? 'gone' : o.reason;
    };
    const t1 = Date.now();
    while (Date.now() - t1 < 5000) {
      const p = await c.placeOrder(order(m2, { tick: 3 }));
      await c.cancelBatch([p.order_id]);
      await sleep(50);
    }
    const expiredSoon = await eventually(async () => (await status(soon[1]!.id)) === 'expired', 5000);
    assert.ok(expiredSoon, 'the gtd orders due while the clock was behind expire');
    assert.equal(await status(soon[0]!.id), 'expired');
    // Signatures are checked against the real time, not the main thread's clock.
    const balance = (tsMs: number): Promise<number> =>
      signedRaw(tx.port, trader, 'GET', '/v1/portfolio/balance', undefined, { ts: tsMs }).then((r) => r.status);
    assert.equal(await balance(Date.now()), 200);
    assert.equal(await balance(Date.now() - 6000), 401);

    // 2. Forward an hour: what falls due within it fires at once; what is due later does not.
    clock.step(HOUR_MS);
    assert.ok(await eventually(async () => (await status(late[0]!.id)) === 'expired', 5000), 'the gtd orders due within the hour expire');
    assert.ok(await eventually(async () => (await c.round(m1)).status === 'frozen', 5000), 'the round due within the hour closes');
    assert.ok(await eventually(async () => !(await sleeper.client.deadman()).armed, 5000), 'the dead-man timer fires');
    assert.equal(await status(never.id), '', 'an order due in two hours still rests');
    assert.equal((await c.round(m2)).status, 'trading');
    assert.equal(await balance(Date.now()), 200, 'a request signed on the real clock is still accepted');
    assert.equal(await balance(clock.nowMs()), 401, 'a signature on the stepped clock is outside the window');

    // 3. Back to the real time (an hour backwards): nothing fires again.
    clock.step(0);
    const t3 = Date.now();
    while (Date.now() - t3 < 1500) {
      const p = await c.placeOrder(order(m2, { tick: 3 }));
      await c.cancelBatch([p.order_id]);
      await sleep(50);
    }
    await tx.admin.createAccount();
  } finally {
    await tx.stop();
  }
  try {
    const events = journal(dataDir);
    // The sequencer's ts: the same within a command, strictly increasing from one command to the next.
    let prev = { seq: 0, ts: 0n };
    for (const e of events) {
      const seq = e.seq as number;
      const ts = e.ts as bigint;
      if (seq === prev.seq) assert.equal(ts, prev.ts, `seq ${seq}: one ts per command`);
      else assert.ok(ts > prev.ts, `seq ${seq} has ts ${ts}, not after seq ${prev.seq}'s ${prev.ts}`);
      prev = { seq, ts };
    }
    const expired = events.filter((e) => e.type === 'OrderCanceled' && e.reason === CancelReason.expired);
    const deadman = events.filter((e) => e.type === 'OrderCanceled' && e.reason === CancelReason.deadman);
    const fired = events.filter((e) => e.type === 'DeadmanDisarmed' && e.fired === 1);
    const frozen = events.filter((e) => e.type === 'RoundTransitioned' && e.status === RoundStatus.frozen);
    // Every gtd order due before the end expired exactly once, in (expiry_ts,
    // order_id) order, never before its expiry; the one due later did not.
    const order = [...gtds].sort((a, b) => (a.due < b.due ? -1 : a.due > b.due ? 1 : a.id - b.id)).map((g) => g.id);
    assert.deepEqual(expired.map((e) => e.order_id), order, 'each gtd expiry once, in (expiry_ts, order_id) order');
    for (const e of expired) {
      assert.ok((e.ts as bigint) >= gtds.find((g) => g.id === e.order_id)!.due, `order ${e.order_id} expired before its expiry_ts`);
    }
    for (const g of notDue) {
      assert.ok(!events.some((e) => e.type === 'OrderCanceled' && e.order_id === g.id), `order ${g.id}, due in two hours, was canceled`);
    }
    // The dead-man timer fired once, at or after its time, canceling its account's order once.
    assert.equal(fired.length, 1, 'the dead-man timer fired once');
    assert.equal(fired[0]!.account, deadmanDue!.account);
    assert.ok((fired[0]!.ts as bigint) >= deadmanDue!.due, 'the dead-man timer fired early');
    assert.deepEqual(deadman.map((e) => e.order_id), [deadmanDue!.order]);
    // The round due within the hour closed once (its resting order canceled round_frozen), at or after close_ts; the other did not.
    assert.deepEqual(frozen.map((e) => e.market_id), [roundDue!.market], 'one round close, of the market due within the hour');
    assert.ok((frozen[0]!.ts as bigint) >= roundDue!.due, 'the round closed early');
    const roundCancels = events.filter((e) => e.type === 'OrderCanceled' && e.reason === CancelReason.round_frozen);
    assert.deepEqual(roundCancels.map((e) => e.order_id), [roundDue!.order]);
    assert.ok(!events.some((e) => e.type === 'RoundTransitioned' && e.market_id === otherMarket));
    // The forward step fired everything due within the hour in one ClockTick,
    // in the engine's order: expiries, then the dead-man, then the round close.
    const step = events.filter((e) => e.seq === frozen[0]!.seq && e.type !== 'CommandCompleted')
      .map((e) => (e.type === 'OrderCanceled' ? CANCEL_REASON_NAMES[e.reason as number] : e.type));
    assert.deepEqual(step, ['expired', 'expired', 'expired', 'deadman', 'DeadmanDisarmed', 'round_frozen', 'RoundTransitioned']);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
