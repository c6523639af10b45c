// Idle strategies: doorbell protocol, parking without lost wake-ups (real
// threads, many round trips), a shared doorbell for several rings, and the
// event-loop poller of the I/O threads.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { Doorbell } from '../../src/ring/doorbell.js';
import { LoopPoller, ParkingIdle } from '../../src/ring/idle.js';
import { STOP_TYPE, checkTestRecord, mix32, testRecordLen, writeTestRecord } from './ring_records.js';
import { newControl, online, startWorker } from './ring_workers.js';

const FP = 0x0f1a3b05;

async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await delay(1);
}

test('idle: wake() notifies only after a consumer announced parking, and clears the announcement', () => {
  const bell = Doorbell.attach(Doorbell.allocate());
  assert.equal(bell.wake(), false);
  bell.announce();
  assert.equal(bell.isAnnounced(), true);
  assert.equal(bell.wake(), true);
  assert.equal(bell.isAnnounced(), false);
  assert.equal(bell.wake(), false);
  // A park after the producer rang returns at once instead of sleeping.
  bell.announce();
  bell.wake();
  assert.equal(bell.park(10_000), 'not-equal');
  assert.throws(() => Doorbell.attach(new SharedArrayBuffer(128)), /bad magic/);
});

test('idle: ParkingIdle keeps returning during its spin phase, then parks until its timeout when nobody rings', () => {
  const ring = new SpscRing(SpscRing.allocate(4096, FP), FP);
  const idle = new ParkingIdle(ring.doorbell, ring, { spin_us: 2000, park_timeout_ms: 5 });
  const t0 = performance.now();
  for (let i = 0; i < 64; i++) idle.idle(0);
  assert.equal(idle.parks, 0, 'no park in the first rounds of the spin phase');
  while (idle.parks === 0) idle.idle(0);
  const spent = performance.now() - t0;
  assert.ok(spent >= 2 + 5 - 0.5, `spun ~2 ms then parked ~5 ms (took ${spent.toFixed(2)} ms)`);
  assert.equal(idle.timeouts, 1);
  // Work resets the spin phase.
  idle.idle(1);
  for (let i = 0; i < 64; i++) idle.idle(0);
  assert.equal(idle.parks, 1);
});

test('idle: ParkingIdle does not park when a record arrived before the re-check', () => {
  const sab = SpscRing.allocate(4096, FP);
  const p = new SpscRing(sab, FP);
  const c = new SpscRing(sab, FP);
  const idle = new ParkingIdle(c.doorbell, c, { spin_us: 0, park_timeout_ms: 10_000 });
  p.tryClaim(8);
  p.mem.u16[2] = 1;
  p.publish();
  idle.idle(0);
  assert.equal(idle.parks, 0);
  assert.equal(idle.rechecks, 1);
});

test('idle: a consumer thread parked on its ring is woken by every publish, 10,000 round trips with no lost wake-up', { timeout: 60_000 }, async () => {
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
  const idle = new ParkingIdle(rep.doorbell, rep, { spin_us: 0, park_timeout_ms: 5000 });
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
  assert.ok(idle.parks > 0);
  assert.ok(sink !== 0.5);
});

test('idle: one shared Doorbell lets any of several producers wake a consumer that serves all their rings', { timeout: 60_000 }, async () => {
  const count = 40_000;
  const bellSab = Doorbell.allocate();
  const sabs = [SpscRing.allocate(16 * 1024, FP), SpscRing.allocate(16 * 1024, FP)];
  const rings = sabs.map((s) => new SpscRing(s, FP));
  const ctl = newControl();
  const producers = sabs.map((sab) => startWorker({ role: 'spsc_produce', sab, fp: FP, count, maxBatch: 4, bell: bellSab, pauseEvery: 400 }, ctl));
  await Promise.all(producers.map(online));
  const idle = new ParkingIdle(Doorbell.attach(bellSab), rings, { spin_us: 10, park_timeout_ms: 5000 });
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
  assert.ok(idle.parks > 0, 'the consumer parked while both producers paused');
  assert.equal(idle.timeouts, 0, 'every park ended by a wake-up from one of the producers');
});

test('idle: LoopPoller polls from the event loop while replies are pending and stops when none are', async () => {
  const sab = SpscRing.allocate(4096, FP);
  const p = new SpscRing(sab, FP);
  const c = new SpscRing(sab, FP);
  let pending = 3;
  let got = 0;
  const poller = new LoopPoller(() => {
    for (let off = c.peek(); off !== -1; off = c.peek()) {
      c.advance();
      got++;
      pending--;
    }
    return pending > 0;
  });
  assert.equal(poller.running, false);
  poller.kick();
  assert.equal(poller.running, true);
  poller.kick(); // idempotent while running
  // Replies arrive from timers: the poller must not starve the event loop.
  for (let i = 0; i < 3; i++) {
    await delay(2);
    const off = p.tryClaim(8);
    p.mem.u16[(off >>> 1) + 2] = 1;
    p.publish();
  }
  await waitFor(() => !poller.running);
  assert.equal(got, 3);
  const polls = poller.polls;
  assert.ok(polls > 3, `polled ${polls} times while waiting`);
  await delay(5);
  assert.equal(poller.polls, polls, 'no polling once nothing is pending');
  // kick() starts it again; stop() ends it even with work pending.
  pending = 1;
  poller.kick();
  await delay(1);
  poller.stop();
  await waitFor(() => !poller.running);
  const stoppedAt = poller.polls;
  await delay(5);
  assert.equal(poller.polls, stoppedAt);
});

test('idle: a kick() from inside the poll callback keeps the LoopPoller running even if the callback returns false', async () => {
  let calls = 0;
  const poller = new LoopPoller(() => {
    calls++;
    if (calls < 5) poller.kick(); // e.g. a reply handler that sends the next request
    return false;
  });
  poller.kick();
  await waitFor(() => !poller.running);
  assert.equal(calls, 5);
});
