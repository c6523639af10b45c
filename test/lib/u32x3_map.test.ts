// U32x3Map against a JavaScript Map: random sets, overwrites and deletes on a
// small key space (so probe runs collide, wrap around and shift back), with
// growth from a tiny table.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { U32x3Map } from '../../src/lib/u32x3_map.js';

const word = fc.oneof(fc.integer({ min: 0, max: 7 }), fc.constant(0xffffffff), fc.constant(0x80000000));
const op = fc.tuple(fc.constantFrom('set', 'delete', 'get'), word, word, word, fc.integer({ min: 0, max: 0x7fffffff }));

test('u32x3_map: behaves like a Map under random set, get and delete', () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
    const m = new U32x3Map(16);
    const ref = new Map<string, number>();
    for (const [kind, a, b, c, v] of ops) {
      const k = `${a},${b},${c}`;
      if (kind === 'set') {
        m.set(a, b, c, v);
        ref.set(k, v);
      } else if (kind === 'delete') {
        assert.equal(m.delete(a, b, c), ref.delete(k));
      }
      assert.equal(m.get(a, b, c), ref.get(k) ?? -1);
      assert.equal(m.size, ref.size);
    }
    const seen = new Map<string, number>();
    m.forEach((a, b, c, v) => seen.set(`${a},${b},${c}`, v));
    assert.deepEqual(seen, ref);
  }), { numRuns: 300 });
});

test('u32x3_map: refuses a negative value (it marks empty entries)', () => {
  const m = new U32x3Map();
  assert.throws(() => m.set(1, 2, 3, -1), /non-negative/);
  assert.equal(m.size, 0);
});

test('u32x3_map: a sliding window of order ids (ids past 2^32 too, some kept for good) stays exact', () => {
  const m = new U32x3Map(1 << 12);
  const ref = new Map<number, number>();
  const start = 2 ** 32 - 5000;
  // Most ids leave after a short life; every 97th stays (a retained order).
  for (let id = start; id < start + 60_000; id++) {
    m.set(id >>> 0, Math.floor(id / 2 ** 32), 0, id % 1000);
    ref.set(id, id % 1000);
    const old = id - 1500;
    if (old >= start && old % 97 !== 0) {
      assert.equal(m.delete(old >>> 0, Math.floor(old / 2 ** 32), 0), true);
      ref.delete(old);
    }
  }
  assert.equal(m.size, ref.size);
  for (let id = start - 10; id < start + 60_010; id++) assert.equal(m.get(id >>> 0, Math.floor(id / 2 ** 32), 0), ref.get(id) ?? -1);
});
