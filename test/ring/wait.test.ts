// Wait strategies: doorbell protocol, parking without lost wake-ups (real
// threads, many round trips), a shared doorbell for several rings, spin and
// backoff, deadlines, and the event-loop strategy of the I/O threads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { Doorbell } from '../../src/ring/doorbell.js';
import { EngineControl } from '../../src/main/engine_control.js';
import {
  ADAPTIVE_SPIN_US, BackoffWaitStrategy, BellWatch, BlockingWaitStrategy, BusySpinWaitStrategy, LoopWaitStrategy, WorkRate, type WaitKind,
} from '../../src/ring/wait.js';
import { STOP_TYPE, checkTestRecord, mix32, testRecordLen, writeTestRecord } from './ring_records.js';
import { newControl, online, startWorker } from './ring_workers.js';

const FP = 0x0f1a3b05;

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await delay(1);
}

test('wait: wake() notifies only after a consumer announced parking, and clears the announcement', () => {
  const bell = Doorbell.attach(Doorbell.allocate());
  assert.equal(bell.wake(), false);
  bell.announce();
  assert.equal(bell.isAnnounced(), true);
  assert.equal(bell.wake(), true);
  assert.equal(bell.isAnnounced(), false);
  assert.equal(bell.wake(), false);
  // A park after the producer rang returns at once instead of sleeping.
  const epoch = bell.announce();
  bell.wake();
  assert.equal(bell.park(epoch, 10_000), 'not-equal');
  assert.throws(() => Doorbell.attach(new SharedArrayBuffer(128)), /bad magic/);
});

// Two readers of one doorbell (as every gateway thread and the control plane
// share durable_seq's): reader 1 announces and finds nothing, a producer
// publishes and rings (clearing the announcement), reader 2 announces, and
// only then reader 1 parks. Its wait must see the ring; a wait on the
// announcement word itself found it set again (by reader 2) and slept.
test('wait: a reader that parks after a ring is not put to sleep by another reader announcing in between', () => {
  const bell = Doorbell.attach(Doorbell.allocate());
  const epoch1 = bell.announce();
  assert.equal(bell.wake(), true, 'the producer found the announcement and rang');
  bell.announce();
  const t0 = performance.now();
  assert.equal(bell.park(epoch1, 2000), 'not-equal');
  assert.ok(performance.now() - t0 < 1000, 'reader 1 returned at once');
  // The ring cleared reader 2's announcement too: the next producer rings nobody, so reader 2 must not sleep on its epoch either.
  const bell2 = Doorbell.attach(Doorbell.allocate());
  const a = bell2.announce();
  const b = bell2.announce();
  assert.equal(bell2.wake(), true);
  assert.equal(bell2.wake(), false, 'nobody announced since the ring');
  assert.equal(bell2.park(a, 2000), 'not-equal');
  assert.equal(bell2.park(b, 2000), 'not-equal');
});

test('wait: a BellWatch whose re-check raced a ring and another reader\'s announcement polls at once instead of waiting', async () => {
  const bell = Doorbell.attach(Doorbell.allocate());
  let rings = 0;
  // Inside the re-check: the producer publishes and rings, then the other reader (another thread in the exchange) announces.
  const watch = new BellWatch(bell, () => {
    bell.wake();
    bell.announce();
    return false;
  }, () => rings++);
  const parked = watch.watch(Infinity);
  // Either it saw the ring at once (false: poll now) or it parked and the ring settles its wait.
  if (parked) await delay(200);
  assert.ok(!parked || rings === 1, `parked=${parked}, woken ${rings} time(s) in 200 ms: the ring was lost`);
  watch.cancel();
});

test('wait: a blocking strategy keeps returning during its spin phase, then parks until its timeout when nobody rings', () => {
  const ring = new SpscRing(SpscRing.allocate(4096, FP), FP);
  const idle = new BlockingWaitStrategy(ring.doorbell, ring, { spin_us: 2000, park_timeout_ms: 5 });
  const t0 = performance.now();
  for (let i = 0; i < 64; i++) idle.idle(0);
  assert.equal(idle.sleeps, 0, 'no park in the first rounds of the spin phase');
  while (idle.sleeps === 0) idle.idle(0);
  const spent = performance.now() - t0;
  assert.ok(spent >= 2 + 5 - 0.5, `spun ~2 ms then parked ~5 ms (took ${spent.toFixed(2)} ms)`);
  assert.equal(idle.timeouts, 1);
  // Work resets the spin phase.
  idle.idle(1);
  for (let i = 0; i < 64; i++) idle.idle(0);
  assert.equal(idle.sleeps, 1);
});

test('wait: without a fixed spin_us, park spins only while rounds with work come at least once per ADAPTIVE_SPIN_US', () => {
  let nowMs = 0;
  const rate = new WorkRate(() => nowMs);
  const rounds = (n: number, gapUs: number): void => {
    for (let i = 0; i < n; i++) {
      nowMs += gapUs / 1000;
      rate.onWork();
    }
  };
  assert.equal(rate.dense, false, 'parks at once until it has seen the rate');
  rounds(64, ADAPTIVE_SPIN_US / 4);
  assert.equal(rate.dense, true, 'work every few µs: spin');
  rounds(63, 500);
  assert.equal(rate.dense, true, 'judged once per 64 rounds');
  rounds(1, 500);
  assert.equal(rate.dense, false, 'work every 500 µs: a spin would only burn the core');
  rounds(64, ADAPTIVE_SPIN_US * 0.99);
  assert.equal(rate.dense, true, 'just more often than once per window spins');
  rounds(64, ADAPTIVE_SPIN_US * 1.5);
  assert.equal(rate.dense, false, 'less often does not');
  // A strategy without spin_us parks at once while the rate is not dense (no spin phase at all).
  const ring = new SpscRing(SpscRing.allocate(4096, FP), FP);
  const idle = new BlockingWaitStrategy(ring.doorbell, ring, { park_timeout_ms: 1 });
  idle.idle(0);
  assert.equal(idle.sleeps, 1);
});

test('wait: a blocking strategy does not park when a record arrived before the re-check', () => {
  const sab = SpscRing.allocate(4096, FP);
  const p = new SpscRing(sab, FP);
  const c = new SpscRing(sab, FP);
  const idle = new BlockingWaitStrategy(c.doorbell, c, { spin_us: 0, park_timeout_ms: 10_000 });
  p.tryClaim(8);
  p.mem.u16[2] = 1;
  p.publish();
  idle.idle(0);
  assert.equal(idle.sleeps, 0);
  assert.equal(idle.rechecks, 1);
});

test('wait: the engine does not park when a control request came after it looked at its flags', () => {
  const sab = SpscRing.allocate(4096, FP);
  const ring = new SpscRing(sab, FP);
  const block = EngineControl.allocate();
  const engineSide = new EngineControl(block);
  const mainSide = new EngineControl(block);
  const idle = new BlockingWaitStrategy(ring.doorbell, [ring, engineSide], { spin_us: 0, park_timeout_ms: 10_000 });
  for (const request of [() => mainSide.startClock(), () => mainSide.setClockOffsetMs(5), () => mainSide.requestStop()]) {
    engineSide.observe();
    assert.equal(engineSide.hasUnread(), false);
    // The request and its ring land before the announce: the ring finds nobody parked, so only the re-check can see it.
    request();
    ring.doorbell.wake();
    const before = idle.rechecks;
    idle.idle(0);
    assert.equal(idle.sleeps, 0);
    assert.equal(idle.rechecks, before + 1);
  }
  engineSide.observe();
  assert.equal(engineSide.hasUnread(), false, 'a request the engine has looked at is not work');
});

test('wait: a consumer thread parked on its ring is woken by every publish, 10,000 round trips with no lost ' +
  'wake-up', { timeout: 60_000 }, async () => {
  const rounds = 10_000;
  const reqSab = SpscRing.allocate(4096, FP);
  const repSab = SpscRing.allocate(4096, FP);
  const req = new SpscRing(reqSab, FP);
  const rep = new SpscRing(repSab, FP);
  const ctl = newControl();
  const ctlI32 = new Int32Array(ctl);
  const echo = startWorker({ role: 'park_echo', req: reqSab, rep: repSab, fp: FP, count: rounds }, ctl);
  await online(echo);
  await waitFor(() => Atomics.load(ctlI32, 0) >= 1);
  // This thread parks too (spin_us 0), so both directions use the wake-up path.
  const idle = new BlockingWaitStrategy(rep.doorbell, rep, { spin_us: 0, park_timeout_ms: 5000 });
  let rang = 0;
  let sink = 0;
  for (let seq = 0; seq <= rounds; seq++) {
    // Jitter: publish sometimes before, sometimes while, sometimes after the echo thread parks.
    const spins = mix32(seq) % 3000;
    for (let i = 0; i < spins; i++) sink = mix32(sink + i);
    const len = seq < rounds ? testRecordLen(seq) : 8;
    const off = req.tryClaim(len);
    assert.notEqual(off, -1);
    if (seq < rounds) writeTestRecord(req.mem.u32, off, seq, len);
    else req.mem.u16[(off >>> 1) + 2] = STOP_TYPE;
    req.publish();
    if (req.doorbell.wake()) rang++;
    for (;;) {
      const r = rep.peek();
      if (r === -1) {
        idle.idle(0);
        continue;
      }
      if (seq < rounds) assert.equal(checkTestRecord(rep.mem.u32, r, seq), null);
      rep.advance();
      break;
    }
  }
  const res = await echo.done;
  assert.equal(res.error, null);
  assert.equal(res.count, rounds);
  assert.ok(res.parks > rounds / 10, `the echo thread parked ${res.parks} times`);
  assert.ok(rang > rounds / 10, `the producer rang a parked consumer ${rang} times`);
  assert.equal(res.timeouts, 0, 'no park of the echo thread ended by timeout (a lost wake-up would)');
  assert.equal(idle.timeouts, 0, 'no park of this thread ended by timeout');
  assert.ok(idle.sleeps > 0);
  assert.ok(sink !== 0.5);
});

test('wait: one shared Doorbell lets any of several producers wake a consumer that serves all their ' +
  'rings', { timeout: 60_000 }, async () => {
  const count = 40_000;
  const bellSab = Doorbell.allocate();
  const sabs = [SpscRing.allocate(16 * 1024, FP), SpscRing.allocate(16 * 1024, FP)];
  const rings = sabs.map((s) => new SpscRing(s, FP));
  const ctl = newControl();
  const producers = sabs.map((sab) =>
    startWorker({ role: 'spsc_produce', sab, fp: FP, count, maxBatch: 4, bell: bellSab, pauseEvery: 400 }, ctl),
  );
  await Promise.all(producers.map(online));
  const idle = new BlockingWaitStrategy(Doorbell.attach(bellSab), rings, { spin_us: 10, park_timeout_ms: 5000 });
  const next = [0, 0];
  while (next[0]! < count || next[1]! < count) {
    let n = 0;
    for (let i = 0; i < rings.length; i++) {
      const ring = rings[i]!;
      for (let off = ring.peek(); off !== -1 && n < 256; off = ring.peek()) {
        assert.equal(checkTestRecord(ring.mem.u32, off, next[i]!), null);
        ring.advance();
        next[i]!++;
        n++;
      }
    }
    idle.idle(n);
  }
  const results = await Promise.all(producers.map((p) => p.done));
  assert.deepEqual(results.map((r) => r.error), [null, null]);
  assert.deepEqual(next, [count, count]);
  assert.ok(idle.sleeps > 0, 'the consumer parked while both producers paused');
  assert.equal(idle.timeouts, 0, 'every park ended by a wake-up from one of the producers');
});

test('wait: busy spin never sleeps; backoff spins, then naps that grow, and work starts it over', () => {
  const spin = new BusySpinWaitStrategy();
  for (let i = 0; i < 1000; i++) spin.idle(0);
  assert.equal(spin.sleeps, 0);
  const b = new BackoffWaitStrategy({ spin_us: 0, max_nap_us: 400 });
  const t0 = performance.now();
  for (let i = 0; i < 6; i++) b.idle(0); // naps of 50, 100, 200, 400, 400, 400 µs
  const spent = performance.now() - t0;
  assert.equal(b.sleeps, 6);
  assert.ok(spent >= 1.4, `six naps took ${spent.toFixed(3)} ms`);
  b.idle(1);
  const t1 = performance.now();
  b.idle(0); // back to the shortest nap
  assert.ok(performance.now() - t1 < 5);
});

test('wait: a deadline bounds a park and a nap; a park that ends at its deadline is not a lost wake-up', () => {
  const ring = new SpscRing(SpscRing.allocate(4096, FP), FP);
  const park = new BlockingWaitStrategy(ring.doorbell, ring, { spin_us: 0, park_timeout_ms: 10_000 });
  let t0 = performance.now();
  park.idle(0, t0 + 5);
  let spent = performance.now() - t0;
  assert.ok(spent >= 4.5 && spent < 1000, `parked ${spent.toFixed(2)} ms until the deadline`);
  assert.equal(park.timeouts, 0);
  const nap = new BackoffWaitStrategy({ spin_us: 0, max_nap_us: 100_000 });
  for (let i = 0; i < 10; i++) nap.idle(0); // naps grow past 5 ms
  t0 = performance.now();
  nap.idle(0, t0 + 2);
  spent = performance.now() - t0;
  assert.ok(spent < 50, `the nap stopped at the deadline (${spent.toFixed(2)} ms)`);
});

/** A LoopWaitStrategy over a ring: counts its polls, parks on the ring's doorbell. */
function loopOver(kind: WaitKind, c: SpscRing, state: { awaited: number; got: number }, idle_drain_ms = 1): LoopWaitStrategy {
  return new LoopWaitStrategy(kind, c.doorbell, {
    poll: () => {
      let n = 0;
      for (let off = c.peek(); off !== -1; off = c.peek()) {
        c.advance();
        n++;
      }
      state.got += n;
      state.awaited = Math.max(0, state.awaited - n);
      return n;
    },
    awaiting: () => state.awaited > 0,
    hasWork: () => c.hasUnread(),
    dueInMs: () => Infinity,
  }, { idle_drain_ms });
}

function publishOne(p: SpscRing): void {
  const off = p.tryClaim(8);
  p.mem.u16[(off >>> 1) + 2] = 1;
  p.publish();
  p.doorbell.wake();
}

for (const kind of ['spin', 'backoff', 'park'] as const) {
  test(`wait: the event-loop strategy (${kind}) takes awaited records as they come, then parks with no CPU until rung`, async () => {
    const sab = SpscRing.allocate(4096, FP);
    const p = new SpscRing(sab, FP);
    const c = new SpscRing(sab, FP);
    const state = { awaited: 0, got: 0 };
    const w = loopOver(kind, c, state);
    w.start();
    // Awaited replies arriving from timers: the strategy must not starve the event loop.
    state.awaited = 3;
    w.kick();
    for (let i = 0; i < 3; i++) {
      await delay(2);
      publishOne(p);
    }
    await waitFor(() => state.got === 3);
    if (kind === 'park') assert.ok(w.parks >= 3, `parked between replies (${w.parks})`);
    if (kind === 'spin') assert.ok(w.polls > 10, `polled every turn while waiting (${w.polls})`);
    // Nothing awaited: parked, no polling until a record arrives.
    await delay(5);
    const polls = w.polls;
    await delay(20);
    assert.equal(w.polls, polls, 'no polling while idle');
    publishOne(p); // another thread's traffic: drained after the idle interval
    await waitFor(() => state.got === 4);
    w.stop();
  });
}

test('wait: a BellWatch keeps one wait however often it is armed, and a ring ends it once', async () => {
  const ring = new SpscRing(SpscRing.allocate(4096, FP), FP);
  let rings = 0;
  const watch = new BellWatch(ring.doorbell, () => ring.hasUnread(), () => rings++);
  for (let i = 0; i < 100; i++) assert.equal(watch.watch(), true, 'nothing there yet: it waits');
  ring.doorbell.wake();
  await waitFor(() => rings > 0);
  await delay(5);
  assert.equal(rings, 1, 'a hundred arms, one wait, one ring');
  // Work already there: no wait at all.
  const p = new SpscRing(ring.sab, FP);
  publishOne(p);
  assert.equal(watch.watch(), false);
});

test('wait: the event-loop strategy answers a held request at its deadline with no ring at all (its own loop timer)', async () => {
  const sab = SpscRing.allocate(4096, FP);
  const c = new SpscRing(sab, FP);
  let held = true;
  let expiredAt = 0;
  const t0 = performance.now();
  const w = new LoopWaitStrategy('park', c.doorbell, {
    poll: () => {
      if (held && performance.now() - t0 >= 30) {
        held = false;
        expiredAt = performance.now() - t0;
      }
      return 0;
    },
    awaiting: () => held,
    hasWork: () => c.hasUnread(),
    dueInMs: () => 30 - (performance.now() - t0),
  });
  w.start();
  w.kick();
  await waitFor(() => !held);
  w.stop();
  assert.ok(expiredAt >= 30, `expired at ${expiredAt.toFixed(1)} ms`);
  assert.ok(w.polls < 20, `parked until the deadline, not polling (${w.polls} polls)`);
});
