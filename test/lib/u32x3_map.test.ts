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

test('u32x3_map: growth moves entries a few per write; every key stays readable throughout, writes land once', () => {
  const m = new U32x3Map(16);
  const ref = new Map<number, number>();
  // Enough keys for several growths, with deletes and overwrites landing while a growth is under way.
  for (let i = 1; i <= 20_000; i++) {
    m.set(i, i * 7, 3, i);
    ref.set(i, i);
    if (i % 3 === 0) {
      m.set(i - 1, (i - 1) * 7, 3, i + 1_000_000); // an overwrite, maybe of a key still in the old table
      ref.set(i - 1, i + 1_000_000);
    }
    if (i % 5 === 0) {
      assert.equal(m.delete(i - 2, (i - 2) * 7, 3), ref.delete(i - 2));
    }
    if (i % 997 === 0) for (const [k, v] of ref) assert.equal(m.get(k, k * 7, 3), v, `key ${k} at step ${i}`);
    assert.equal(m.size, ref.size);
  }
  const seen = new Map<number, number>();
  m.forEach((a, _b, _c, v) => {
    assert.ok(!seen.has(a), `key ${a} in one table only`);
    seen.set(a, v);
  });
  assert.deepEqual(seen, ref);
});

test('u32x3_map: a map decoded from a snapshot of the earlier encoding (value, -1 empty, no growth fields) is converted', () => {
  // What the state codec rebuilt from such a snapshot: the class's prototype and the old fields only.
  const t = new Int32Array(16 * 4).fill(-1);
  const cur = new U32x3Map(16);
  cur.set(1, 2, 3, 0);
  cur.set(4, 5, 6, 0x7fffffff);
  cur.set(7, 8, 9, 41);
  // Lay the same entries out the old way, at the same slots.
  const now = (cur as unknown as { t: Int32Array }).t;
  for (let e = 0; e < now.length; e += 4) if (now[e + 3] !== 0) t.set([now[e]!, now[e + 1]!, now[e + 2]!, (now[e + 3]! - 1) | 0], e);
  const old = Object.create(U32x3Map.prototype) as U32x3Map;
  Object.assign(old, { t, mask: 15, size: 3 });
  U32x3Map.upgradeDecoded(old);
  assert.equal(old.get(1, 2, 3), 0);
  assert.equal(old.get(4, 5, 6), 0x7fffffff);
  assert.equal(old.get(7, 8, 9), 41);
  assert.equal(old.get(1, 1, 1), -1);
  for (let i = 0; i < 100; i++) old.set(100 + i, 0, 0, i);
  assert.equal(old.size, 103);
  assert.equal(old.get(150, 0, 0), 50);
  assert.equal(old.get(7, 8, 9), 41);
});

test('u32x3_map: a capacity above 2^30 entries is refused (a doubling past it would overflow and never end)', () => {
  assert.throws(() => new U32x3Map(2 ** 30 + 1), /^RangeError: U32x3Map: capacity 1073741825 above 2\^30$/);
});
