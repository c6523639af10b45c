// BroadcastRing: every active consumer sees every record in order; a lagging
// active consumer blocks the producer; a closed one does not; resume by
// position; and a multi-thread stress run.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BroadcastConsumer, BroadcastProducer, BroadcastRing } from '../../src/ring/broadcast_ring.js';
import { checkTestRecord, testRecordLen, writeTestRecord } from './ring_records.js';
import { newControl, startWorker } from './ring_workers.js';

const FP = 0x0f1a3b05;
const KIB = 1024;

function send(p: BroadcastProducer, seq: number): boolean {
  const len = testRecordLen(seq);
  const off = p.tryClaim(len);
  if (off === -1) return false;
  writeTestRecord(p.mem.u32, off, seq, len);
  return true;
}

/** Reads everything visible; returns the next expected seq. */
function drain(c: BroadcastConsumer, seq: number): number {
  for (let off = c.peek(); off !== -1; off = c.peek()) {
    assert.equal(checkTestRecord(c.mem.u32, off, seq), null);
    c.advance();
    seq++;
  }
  return seq;
}

test('broadcast_ring: attaching with another fingerprint throws an error naming both fingerprints', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 4, FP);
  assert.throws(
    () => new BroadcastProducer(sab, 0xdeadbeef),
    /fingerprint mismatch: ring has 0x0f1a3b05, attaching code expects 0xdeadbeef/,
  );
  assert.throws(() => new BroadcastConsumer(sab, 0xdeadbeef, 0), /fingerprint mismatch/);
  assert.throws(() => BroadcastRing.allocate(4 * KIB, 33, FP), /maxConsumers/);
});

test('broadcast_ring: every open consumer sees every record in order, across padding and wrap-around', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 4, FP, 2 ** 32 - 8 * KIB);
  const p = new BroadcastProducer(sab, FP);
  const a = new BroadcastConsumer(sab, FP, 0);
  const b = new BroadcastConsumer(sab, FP, 3);
  a.open();
  b.open();
  let sent = 0;
  let seqA = 0;
  let seqB = 0;
  while (sent < 3000) {
    while (send(p, sent)) sent++;
    p.publish();
    seqA = drain(a, seqA);
    seqB = drain(b, seqB);
  }
  assert.equal(seqA, sent);
  assert.equal(seqB, sent);
  assert.equal(p.writePosition(), BroadcastRing.writePosition(sab));
  assert.equal(a.writePosition(), p.writePosition());
});

test('broadcast_ring: a consumer that opens late starts at the current write position', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 2, FP);
  const p = new BroadcastProducer(sab, FP);
  for (let i = 0; i < 5; i++) send(p, i);
  p.publish();
  const c = new BroadcastConsumer(sab, FP, 1);
  c.open();
  assert.equal(c.peek(), -1);
  send(p, 0);
  p.publish();
  assert.equal(drain(c, 0), 1);
});

test('broadcast_ring: a lagging active consumer blocks the producer and is never overwritten; closing it unblocks', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 2, FP);
  const p = new BroadcastProducer(sab, FP);
  const fast = new BroadcastConsumer(sab, FP, 0);
  const slow = new BroadcastConsumer(sab, FP, 1);
  fast.open();
  slow.open();
  let sent = 0;
  let seqFast = 0;
  let blocked = 0;
  for (let round = 0; round < 100; round++) {
    if (send(p, sent)) sent++;
    else blocked++;
    p.publish();
    seqFast = drain(fast, seqFast);
  }
  assert.ok(blocked > 0, 'the producer saw a full ring');
  assert.equal(seqFast, sent);
  // The slow consumer still reads every record from the first.
  assert.equal(drain(slow, 0), sent);
  // Once the slow one closes, it no longer holds the producer back.
  slow.close();
  for (let i = 0; i < 2000; i++) {
    assert.ok(send(p, sent), `record ${sent} claimed with the slow consumer closed`);
    sent++;
    p.publish();
    seqFast = drain(fast, seqFast);
  }
  assert.equal(seqFast, sent);
});

test('broadcast_ring: with no consumer open the producer never blocks', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 2, FP);
  const p = new BroadcastProducer(sab, FP);
  for (let i = 0; i < 10_000; i++) {
    assert.ok(send(p, i));
    p.publish();
  }
});

test('broadcast_ring: openAt resumes at a position still in the ring and refuses one already overwritten', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 2, FP);
  const p = new BroadcastProducer(sab, FP);
  const c = new BroadcastConsumer(sab, FP, 0);
  c.open();
  for (let i = 0; i < 10; i++) send(p, i);
  p.publish();
  // Read records 0..3; remember the position of record 4 as peeked.
  assert.equal(drainN(c, 0, 4), 4);
  assert.notEqual(c.peek(), -1);
  const resumeAt = c.position();
  c.close();
  for (let i = 10; i < 14; i++) send(p, i);
  p.publish();
  assert.equal(c.openAt(resumeAt), true);
  assert.equal(drain(c, 4), 14, 'resumed at record 4 and read on to the end');
  c.close();
  // Write more than a ring past resumeAt: the data is gone and openAt says so.
  for (let i = 14; i < 100; i++) {
    assert.ok(send(p, i));
    p.publish();
  }
  assert.equal(c.openAt(resumeAt), false);
  assert.equal(c.opened, false);
  assert.equal(c.openAt((p.writePosition() + 8) >>> 0), false, 'a position beyond the write position is refused');
  assert.equal(c.openAt(p.writePosition()), true);
});

test('broadcast_ring: a consumer resuming at an old position holds back the producer from then on', () => {
  const sab = BroadcastRing.allocate(4 * KIB, 2, FP);
  const p = new BroadcastProducer(sab, FP);
  const c = new BroadcastConsumer(sab, FP, 0);
  for (let i = 0; i < 10; i++) send(p, i);
  p.publish();
  assert.equal(c.openAt(0), true);
  let sent = 10;
  while (send(p, sent)) sent++;
  p.publish();
  assert.ok(sent < 100, 'the producer stopped at one ring of unread data');
  assert.equal(drain(c, 0), sent);
});

function drainN(c: BroadcastConsumer, seq: number, n: number): number {
  for (let i = 0; i < n; i++) {
    const off = c.peek();
    assert.equal(checkTestRecord(c.mem.u32, off, seq), null);
    c.advance();
    seq++;
  }
  return seq;
}

test('broadcast_ring: one producer and three consumer threads, one of them slow, each see every record in order; a fourth that closes ' +
  'early stops blocking', { timeout: 60_000 }, async () => {
  const count = 400_000;
  const sab = BroadcastRing.allocate(64 * KIB, 16, FP, 2 ** 32 - 4 * 1024 * KIB);
  const ctl = newControl();
  const consumers = [
    startWorker({ role: 'bcast_consume', sab, fp: FP, count, index: 0 }, ctl),
    startWorker({ role: 'bcast_consume', sab, fp: FP, count, index: 5 }, ctl),
    // Slow: sleeps 1 ms every 4000 records, so the producer fills the ring.
    startWorker({ role: 'bcast_consume', sab, fp: FP, count, index: 15, slowEvery: 4000, slow_ms: 1 }, ctl),
    // Reads 20,000 records, then closes while the producer has far more to send.
    startWorker({ role: 'bcast_consume', sab, fp: FP, count, index: 7, closeAfter: 20_000 }, ctl),
  ];
  const producer = startWorker({ role: 'bcast_produce', sab, fp: FP, count, maxBatch: 8, consumers: consumers.length }, ctl);
  const pr = await producer.done;
  const cr = await Promise.all(consumers.map((c) => c.done));
  assert.deepEqual([pr.error, ...cr.map((r) => r.error)], [null, null, null, null, null]);
  assert.deepEqual(cr.map((r) => r.count), [count, count, count, 20_000]);
  assert.ok(pr.fulls > 0, `the slow consumer made the producer see a full ring (tryClaim returned -1 ${pr.fulls} times)`);
});
