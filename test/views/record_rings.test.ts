// RecordRings: every owner keeps its newest `max` records under ordinals that
// never change, read back in any order; blocks below an owner's window are
// reused, the store grows by segments without losing a record, and a ring
// per owner (snapshots before the store) converts to the same records.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RECORDS_PER_BLOCK, RecordRings, type RingPerOwner } from '../../src/views/record_rings.js';

/** A seeded LCG in [0, n). */
function rng(seed: number): (n: number) => number {
  let s = seed >>> 0;
  return (n) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s % n;
  };
}

/** Every retained record of every owner reads back (ascending, then descending: both walks of slotOf). */
function check(r: RecordRings, pushed: number[][], max: number): void {
  pushed.forEach((values, owner) => {
    assert.equal(r.totalOf(owner), values.length);
    const from = Math.max(0, values.length - max);
    assert.equal(r.retainedFrom(owner), from);
    const read = (n: number): void => {
      const k = r.slotOf(owner, n);
      assert.deepEqual([r.f64At(k, 0), r.u32At(k, 0), r.u32At(k, 1)], [values[n], owner, n], `owner ${owner} ordinal ${n}`);
    };
    for (let n = from; n < values.length; n++) read(n);
    for (let n = values.length - 1; n >= from; n--) read(n);
    if (from > 0) assert.throws(() => r.slotOf(owner, from - 1), /not retained/);
    assert.throws(() => r.slotOf(owner, values.length), /not retained/);
  });
}

function fill(r: RecordRings, pushed: number[][], owner: number, value: number): void {
  const list = (pushed[owner] ??= []);
  const k = r.push(owner);
  r.setF64(k, 0, value);
  r.setU32(k, 0, owner);
  r.setU32(k, 1, list.length);
  list.push(value);
}

test('record rings: each owner keeps its newest max records under stable ordinals, and freed blocks are reused', () => {
  for (const max of [1, 7, 8, 9, 13, 64]) {
    const r = new RecordRings(max, 1, 2);
    const pushed: number[][] = [];
    const next = rng(max);
    for (let i = 0; i < 6000; i++) {
      fill(r, pushed, next(5) === 0 ? 36 : next(37), i * 1.5);
      if (i % 499 === 0) check(r, pushed, max);
    }
    check(r, pushed, max);
    // An owner holds at most the blocks its window spans: ceil(max / block) + 1.
    assert.ok(r.blocks <= 37 * (Math.ceil(max / RECORDS_PER_BLOCK) + 1), `max ${max}: ${r.blocks} blocks`);
    assert.equal(r.retainedRecords(), pushed.reduce((sum, v) => sum + Math.min(v.length, max), 0));
    assert.equal(r.totalOf(1000), 0);
    assert.equal(r.retainedFrom(1000), 0);
  }
  assert.throws(() => new RecordRings(0, 1, 1), /positive/);
});

test('record rings: a store past one segment (16,384 records) keeps every record', () => {
  const r = new RecordRings(5000, 1, 2);
  const pushed: number[][] = [];
  const next = rng(7);
  for (let i = 0; i < 50_000; i++) fill(r, pushed, next(9), i);
  assert.ok(r.f64.length >= 3, `${r.f64.length} segments`);
  check(r, pushed, 5000);
});

test('record rings: a ring per owner (snapshots before the store) converts to the same records under the same ordinals', () => {
  const max = 20;
  // The old layout: record n at slot n % cap, cap doubling from 4 up to max before anything is overwritten.
  const rings: (RingPerOwner | undefined)[] = [];
  const pushed: number[][] = [];
  for (const [owner, total] of [[1, 3], [2, 20], [4, 57], [5, 0]] as const) {
    const cap = total >= max ? max : Math.min(max, 4 * 2 ** Math.ceil(Math.log2(Math.max(1, total / 4))));
    const ring: RingPerOwner = { total, cap, max, f64Stride: 1, u32Stride: 2, f64: new Float64Array(cap), u32: new Uint32Array(cap * 2) };
    for (let n = 0; n < total; n++) {
      ring.f64[n % cap] = owner * 1000 + n;
      ring.u32[(n % cap) * 2] = owner;
      ring.u32[(n % cap) * 2 + 1] = n;
    }
    rings[owner] = ring;
    pushed[owner] = Array.from({ length: total }, (_, n) => owner * 1000 + n);
  }
  const r = RecordRings.fromRingPerOwner(rings, 999, 1, 2);
  assert.equal(r.max, max, 'the rings keep their own cap');
  check(r, pushed, max);
  // And it goes on from there.
  for (let i = 0; i < 100; i++) fill(r, pushed, 1 + (i % 5), 7000 + i);
  check(r, pushed, max);
  assert.throws(() => RecordRings.fromRingPerOwner([{ ...rings[1]!, f64Stride: 2 }], max, 1, 2), /another record shape/);
});
