// SpscRing: framing, padding, back-pressure, batching, release policy, and a
// two-thread stress run (no loss, no reordering, no torn record).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { checkTestRecord, testRecordLen, writeTestRecord } from './ring_records.js';
import { newControl, startWorker } from './ring_workers.js';

const FP = 0x0f1a3b05;
const KIB = 1024;

function pair(dataBytes = 4 * KIB, startPosition = 0): { p: SpscRing; c: SpscRing } {
  const sab = SpscRing.allocate(dataBytes, FP, startPosition);
  return { p: new SpscRing(sab, FP), c: new SpscRing(sab, FP) };
}

function put(r: SpscRing, len: number, type: number, tag: number): number {
  const off = r.tryClaim(len);
  if (off === -1) return -1;
  r.mem.u16[(off >>> 1) + 2] = type;
  if (len >= 12) r.mem.u32[(off >>> 2) + 2] = tag;
  return off;
}

test('spsc_ring: allocate rejects a data size that is not a power of two of at least 4096 bytes', () => {
  assert.throws(() => SpscRing.allocate(3000, FP), /power of two/);
  assert.throws(() => SpscRing.allocate(6144, FP), /power of two/);
  assert.throws(() => SpscRing.allocate(2048, FP), /power of two/);
  assert.equal(new SpscRing(SpscRing.allocate(4096, FP), FP).capacity, 4096);
});

test('spsc_ring: attaching with another fingerprint throws an error naming both fingerprints', () => {
  const sab = SpscRing.allocate(4 * KIB, FP);
  assert.throws(() => new SpscRing(sab, 0x12345678), (e: unknown) => {
    assert.ok(e instanceof Error);
    assert.match(e.message, /fingerprint mismatch/);
    assert.match(e.message, /0x0f1a3b05/);
    assert.match(e.message, /0x12345678/);
    return true;
  });
  assert.throws(() => new SpscRing(new SharedArrayBuffer(8192), FP), /bad magic/);
});

test('spsc_ring: a claim writes the record length and the consumer sees nothing until publish', () => {
  const { p, c } = pair();
  const off = put(p, 24, 7, 0xabc);
  assert.equal(off, 0);
  assert.equal(p.mem.u32[0], 24);
  assert.equal(c.peek(), -1);
  p.publish();
  assert.equal(c.peek(), 0);
  assert.equal(c.peek(), 0, 'peek is idempotent until advance');
  assert.equal(c.mem.u16[2], 7);
  assert.equal(c.mem.u32[2], 0xabc);
  c.advance();
  assert.equal(c.peek(), -1);
});

test('spsc_ring: a claimed record whose type the caller never wrote reads as type 0xffff, not as padding', () => {
  const { p, c } = pair();
  const off = p.tryClaim(16);
  p.publish();
  assert.equal(c.peek(), off);
  assert.equal(c.mem.u16[(off >>> 1) + 2], 0xffff);
});

test('spsc_ring: several claims followed by one publish become visible together, in order', () => {
  const { p, c } = pair();
  const offs = [put(p, 16, 1, 100), put(p, 64, 1, 101), put(p, 8, 1, 0), put(p, 32, 1, 103)];
  assert.deepEqual(offs, [0, 16, 80, 88]);
  assert.equal(c.peek(), -1, 'nothing visible before publish');
  p.publish();
  const seen: number[] = [];
  for (let off = c.peek(); off !== -1; off = c.peek()) {
    seen.push(off);
    c.advance();
  }
  assert.deepEqual(seen, offs);
});

test('spsc_ring: a record that does not fit before the end is preceded by a padding record and wraps to offset 0', () => {
  const { p, c } = pair(4 * KIB);
  // Fill to 4096 - 40 so 40 bytes remain before the end.
  let used = 0;
  while (used < 4096 - 40) {
    const len = Math.min(256, 4096 - 40 - used);
    assert.notEqual(put(p, len, 1, used), -1);
    used += len;
  }
  p.publish();
  for (let off = c.peek(); off !== -1; off = c.peek()) c.advance();
  // 48 > 40: padding of 40 bytes at 4056, record at 0.
  const off = put(p, 48, 1, 0xfeed);
  assert.equal(off, 0);
  assert.equal(p.mem.u32[(4096 - 40) >>> 2], 40, 'padding length fills to the end');
  assert.equal(p.mem.u16[((4096 - 40) >>> 1) + 2], 0, 'padding type is 0');
  p.publish();
  assert.equal(c.peek(), 0, 'the consumer skips the padding');
  assert.equal(c.mem.u32[2], 0xfeed);
  assert.equal(c.position(), 4096, 'position counts the padding bytes');
  c.advance();
  assert.equal(c.peek(), -1);
});

test('spsc_ring: a record that exactly fills the space before the end needs no padding', () => {
  const { p, c } = pair(4 * KIB);
  for (let i = 0; i < 15; i++) put(p, 256, 1, i);
  assert.equal(put(p, 256, 1, 15), 15 * 256);
  p.publish();
  for (let off = c.peek(); off !== -1; off = c.peek()) c.advance();
  assert.equal(put(p, 8, 1, 0), 0);
});

test('spsc_ring: tryClaim returns -1 when the ring is full and never overwrites unread data', () => {
  const { p, c } = pair(4 * KIB);
  let n = 0;
  while (put(p, 64, 1, n) !== -1) n++;
  assert.equal(n, 4096 / 64);
  assert.equal(put(p, 8, 1, 0), -1, 'not even 8 bytes are free');
  p.publish();
  // Reading without releasing frees nothing for the producer.
  assert.equal(c.peek(), 0);
  c.advance();
  assert.equal(put(p, 64, 1, 999), -1, 'advance alone has not released a batch yet');
  c.release();
  assert.notEqual(put(p, 64, 1, 1000), -1, 'release frees the consumed record');
  assert.equal(put(p, 64, 1, 1001), -1);
  p.publish();
  for (let i = 1; i < n; i++) {
    const off = c.peek();
    assert.equal(c.mem.u32[(off >>> 2) + 2], i, `record ${i} intact`);
    c.advance();
  }
  const off = c.peek();
  assert.equal(c.mem.u32[(off >>> 2) + 2], 1000);
});

test('spsc_ring: the consumer releases every quarter ring and whenever it finds the ring empty', () => {
  const { p, c } = pair(4 * KIB);
  for (let i = 0; i < 16; i++) put(p, 128, 1, i); // half the ring
  p.publish();
  for (let i = 0; i < 7; i++) {
    c.peek();
    c.advance();
  }
  assert.equal(p.freeBytes(), 2048, '7 * 128 < 1024: not released yet');
  c.peek();
  c.advance();
  assert.equal(p.freeBytes(), 2048 + 1024, 'released at a quarter ring');
  for (let off = c.peek(); off !== -1; off = c.peek()) c.advance();
  assert.equal(p.freeBytes(), 4096, 'released when peek found the ring empty');
});

test('spsc_ring: tryClaim rejects lengths that are not multiples of 8 or exceed half the ring', () => {
  const { p } = pair(4 * KIB);
  assert.throws(() => p.tryClaim(12), /bad record length/);
  assert.throws(() => p.tryClaim(0), /bad record length/);
  assert.throws(() => p.tryClaim(2056), /bad record length/);
  assert.equal(p.tryClaim(2048), 0);
});

test('spsc_ring: positions wrap mod 2^32 without losing or reordering records', () => {
  const { p, c } = pair(4 * KIB, 2 ** 32 - 64 * KIB);
  let sent = 0;
  let got = 0;
  while (sent < 5000) {
    for (;;) {
      const len = testRecordLen(sent);
      const off = p.tryClaim(len);
      if (off === -1) break;
      writeTestRecord(p.mem.u32, off, sent, len);
      sent++;
    }
    p.publish();
    for (let off = c.peek(); off !== -1; off = c.peek()) {
      assert.equal(checkTestRecord(c.mem.u32, off, got), null);
      c.advance();
      got++;
    }
  }
  assert.equal(got, sent);
  assert.ok(c.position() < 2 ** 20, 'the position counter wrapped past 2^32');
});

test(
  'spsc_ring: 3 million variable-length records cross threads through a 64 KiB ring with no loss, reordering or torn record',
  { timeout: 60_000 },
  async () => {
    const count = 3_000_000;
    const sab = SpscRing.allocate(64 * KIB, FP, 2 ** 32 - 16 * 1024 * KIB);
    const ctl = newControl();
    const consumer = startWorker({ role: 'spsc_consume', sab, fp: FP, count }, ctl);
    const producer = startWorker({ role: 'spsc_produce', sab, fp: FP, count, maxBatch: 16 }, ctl);
    const [pr, cr] = await Promise.all([producer.done, consumer.done]);
    assert.deepEqual([pr.error, cr.error], [null, null]);
    assert.equal(cr.count, count);
    assert.ok(pr.fulls > 0, 'the producer met a full ring at least once (wrap-around under pressure)');
  },
);
