// Worker script for the ring tests: each worker plays one role (producer or
// consumer of an SpscRing or BroadcastRing, or an echo server) on buffers it
// receives in workerData, and posts one result message when done. Runs on
// its own worker thread; the test thread only starts it and reads the result.
//
// ctl (Int32Array over workerData.ctl): [0] workers ready, [1] abort (set by
// a worker that failed, so the others stop waiting for it instead of hanging),
// [2] a word that stays 0 (used to sleep with Atomics.wait and a timeout).

import { parentPort, workerData } from 'node:worker_threads';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { BroadcastConsumer, BroadcastProducer } from '../../src/ring/broadcast_ring.js';
import { Doorbell } from '../../src/ring/doorbell.js';
import { BlockingWaitStrategy } from '../../src/ring/wait.js';
import { STOP_TYPE, checkTestRecord, mix32, testRecordLen, writeTestRecord } from './ring_records.js';

export type FixtureRole =
  | {
      role: 'spsc_produce';
      sab: SharedArrayBuffer;
      fp: number;
      count: number;
      maxBatch: number;
      bell?: SharedArrayBuffer;
      pauseEvery?: number;
    }
  | { role: 'spsc_consume'; sab: SharedArrayBuffer; fp: number; count: number }
  | { role: 'bcast_produce'; sab: SharedArrayBuffer; fp: number; count: number; maxBatch: number; consumers: number }
  | {
      role: 'bcast_consume';
      sab: SharedArrayBuffer;
      fp: number;
      count: number;
      index: number;
      slowEvery?: number;
      slow_ms?: number;
      closeAfter?: number;
    }
  | { role: 'park_echo'; req: SharedArrayBuffer; rep: SharedArrayBuffer; fp: number; count: number };

export interface FixtureResult {
  error: string | null;
  count: number;
  fulls: number;
  parks: number;
  timeouts: number;
}

type Input = FixtureRole & { ctl: SharedArrayBuffer };

const input = workerData as Input;
const ctl = new Int32Array(input.ctl);

function sleep_ms(ms: number): void {
  // ctl[2] stays 0, so this always times out: a sleep that yields the core.
  Atomics.wait(ctl, 2, 0, ms);
}

/** Spins a little, then sleeps 50 us, so oversubscribed cores still progress. */
function backoff(tries: number): void {
  if (tries > 64) sleep_ms(0.05);
}

function aborted(): boolean {
  return Atomics.load(ctl, 1) !== 0;
}

const ABORTED = 'aborted: another worker failed';

function signalReady(): void {
  Atomics.add(ctl, 0, 1);
}

function waitReady(n: number): boolean {
  while (Atomics.load(ctl, 0) < n) {
    if (aborted()) return false;
    sleep_ms(0.1);
  }
  return true;
}

function result(r: Partial<FixtureResult>): FixtureResult {
  return { error: null, count: 0, fulls: 0, parks: 0, timeouts: 0, ...r };
}

function spscProduce(a: Extract<FixtureRole, { role: 'spsc_produce' }>): FixtureResult {
  const ring = new SpscRing(a.sab, a.fp);
  const bell = a.bell ? Doorbell.attach(a.bell) : ring.doorbell;
  const u32 = ring.mem.u32;
  let fulls = 0;
  let inBatch = 0;
  let batch = 1;
  for (let seq = 0; seq < a.count; seq++) {
    const len = testRecordLen(seq);
    let off = ring.tryClaim(len);
    for (let tries = 0; off === -1; tries++) {
      fulls++;
      // Claimed records must become visible or the consumer can never free space.
      ring.publish();
      bell.wake();
      inBatch = 0;
      if (tries > 64 && aborted()) return result({ error: ABORTED, count: seq, fulls });
      backoff(tries);
      off = ring.tryClaim(len);
    }
    writeTestRecord(u32, off, seq, len);
    if (++inBatch >= batch) {
      ring.publish();
      bell.wake();
      inBatch = 0;
      batch = 1 + (mix32(seq ^ 0x5bd1e995) % a.maxBatch);
    }
    if (a.pauseEvery && seq % a.pauseEvery === a.pauseEvery - 1) {
      ring.publish();
      bell.wake();
      inBatch = 0;
      sleep_ms(0.2 + (mix32(seq) % 100) / 100);
    }
  }
  ring.publish();
  bell.wake();
  return result({ count: a.count, fulls });
}

function spscConsume(a: Extract<FixtureRole, { role: 'spsc_consume' }>): FixtureResult {
  const ring = new SpscRing(a.sab, a.fp);
  const idle = new BlockingWaitStrategy(ring.doorbell, ring, { spin_us: 20, park_timeout_ms: 100 });
  const u32 = ring.mem.u32;
  let seq = 0;
  while (seq < a.count) {
    let n = 0;
    let off: number;
    while (n < 256 && (off = ring.peek()) !== -1) {
      const bad = checkTestRecord(u32, off, seq);
      if (bad !== null) return result({ error: bad, count: seq });
      ring.advance();
      seq++;
      n++;
    }
    idle.idle(n);
    if (n === 0 && aborted()) return result({ error: ABORTED, count: seq });
  }
  ring.release();
  const extra = ring.peek();
  return result({ error: extra === -1 ? null : 'record after the last one', count: seq, parks: idle.sleeps, timeouts: idle.timeouts });
}

function bcastProduce(a: Extract<FixtureRole, { role: 'bcast_produce' }>): FixtureResult {
  const ring = new BroadcastProducer(a.sab, a.fp);
  const bell = ring.doorbell;
  const u32 = ring.mem.u32;
  if (!waitReady(a.consumers)) return result({ error: ABORTED });
  let fulls = 0;
  let inBatch = 0;
  let batch = 1;
  for (let seq = 0; seq < a.count; seq++) {
    const len = testRecordLen(seq);
    let off = ring.tryClaim(len);
    for (let tries = 0; off === -1; tries++) {
      fulls++;
      ring.publish();
      bell.wake();
      inBatch = 0;
      if (tries > 64 && aborted()) return result({ error: ABORTED, count: seq, fulls });
      backoff(tries);
      off = ring.tryClaim(len);
    }
    writeTestRecord(u32, off, seq, len);
    if (++inBatch >= batch) {
      ring.publish();
      bell.wake();
      inBatch = 0;
      batch = 1 + (mix32(seq ^ 0x5bd1e995) % a.maxBatch);
    }
  }
  ring.publish();
  bell.wake();
  return result({ count: a.count, fulls });
}

function bcastConsume(a: Extract<FixtureRole, { role: 'bcast_consume' }>): FixtureResult {
  const ring = new BroadcastConsumer(a.sab, a.fp, a.index);
  const idle = new BlockingWaitStrategy(ring.doorbell, ring, { spin_us: 20, park_timeout_ms: 100 });
  const u32 = ring.mem.u32;
  ring.open();
  signalReady();
  const until = a.closeAfter ?? a.count;
  let seq = 0;
  while (seq < until) {
    let n = 0;
    let off: number;
    while (n < 256 && seq < until && (off = ring.peek()) !== -1) {
      const bad = checkTestRecord(u32, off, seq);
      if (bad !== null) return result({ error: bad, count: seq });
      ring.advance();
      seq++;
      n++;
      if (a.slowEvery && seq % a.slowEvery === 0) sleep_ms(a.slow_ms ?? 1);
    }
    idle.idle(n);
    if (n === 0 && aborted()) return result({ error: ABORTED, count: seq });
  }
  ring.close();
  return result({ count: seq, parks: idle.sleeps, timeouts: idle.timeouts });
}

function parkEcho(a: Extract<FixtureRole, { role: 'park_echo' }>): FixtureResult {
  const req = new SpscRing(a.req, a.fp);
  const rep = new SpscRing(a.rep, a.fp);
  // spin_us 0: park whenever the ring is empty, to exercise the wake-up path.
  const idle = new BlockingWaitStrategy(req.doorbell, req, { spin_us: 0, park_timeout_ms: 5000 });
  signalReady();
  let seq = 0;
  for (;;) {
    const off = req.peek();
    if (off === -1) {
      idle.idle(0);
      if (aborted()) return result({ error: ABORTED, count: seq });
      continue;
    }
    const src = req.mem.u32;
    const len = src[off >>> 2]!;
    const stop = (src[(off >>> 2) + 1]! & 0xffff) === STOP_TYPE;
    const bad = stop ? null : checkTestRecord(src, off, seq);
    if (bad !== null) return result({ error: bad, count: seq });
    let out = rep.tryClaim(len);
    while (out === -1) out = rep.tryClaim(len);
    rep.mem.u8.set(req.mem.u8.subarray(off + 4, off + len), out + 4);
    req.advance();
    rep.publish();
    rep.doorbell.wake();
    if (stop) break;
    seq++;
    idle.idle(1);
  }
  return result({ count: seq, parks: idle.sleeps, timeouts: idle.timeouts });
}

function run(a: Input): FixtureResult {
  switch (a.role) {
    case 'spsc_produce': return spscProduce(a);
    case 'spsc_consume': return spscConsume(a);
    case 'bcast_produce': return bcastProduce(a);
    case 'bcast_consume': return bcastConsume(a);
    case 'park_echo': return parkEcho(a);
  }
}

let out: FixtureResult;
try {
  out = run(input);
} catch (e) {
  out = result({ error: e instanceof Error ? `${e.name}: ${e.message}` : String(e) });
}
if (out.error !== null) Atomics.store(ctl, 1, 1);
parentPort!.postMessage(out);
