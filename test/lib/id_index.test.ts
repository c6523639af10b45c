// IdIndex against a JavaScript Map: random inserts and deletes of ids that
// share low bits (so entries overflow, come back after deletes and move on
// growth), ids past 2^32 and near 2^53, and the order-id pattern it is built
// for (a sliding window of seqs with some ids retained for good).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { IdIndex } from '../../src/lib/id_index.js';

// Ids in a few residue classes of 16, spread over bases that differ above bit 32.
const BASES = [0, 2 ** 32, 2 ** 52];
const id = fc.tuple(fc.constantFrom(...BASES), fc.integer({ min: 0, max: 7 }), fc.integer({ min: 0, max: 3 }))
  .map(([base, k, r]) => base + k * 16 + r + 1);
const op = fc.tuple(fc.constantFrom('set', 'delete', 'get'), id, fc.integer({ min: 0, max: 0x7fffffff }));

test('id_index: behaves like a Map under random inserts, deletes and lookups', () => {
  fc.assert(fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
    const x = new IdIndex(16);
    const ref = new Map<number, number>();
    for (const [kind, k, v] of ops) {
      if (kind === 'set' && !ref.has(k)) {
        x.set(k, v);
        ref.set(k, v);
      } else if (kind === 'delete') {
        assert.equal(x.delete(k), ref.delete(k));
      }
      assert.equal(x.get(k), ref.get(k) ?? -1);
      assert.equal(x.size, ref.size);
    }
    for (const [k, v] of ref) assert.equal(x.get(k), v);
  }), { numRuns: 300 });
});

test('id_index: a colliding id overflows, is found, and is deleted from the overflow', () => {
  const x = new IdIndex(16); // 16 entries: 1 and 17 share an entry
  x.set(1, 10);
  x.set(17, 20);
  assert.equal(x.overflowSize, 1);
  assert.equal(x.get(1), 10);
  assert.equal(x.get(17), 20);
  assert.equal(x.delete(1), true);
  assert.equal(x.get(1), -1);
  assert.equal(x.get(17), 20, 'still found in the overflow after its entry emptied');
  x.set(33, 30); // takes the emptied entry
  assert.equal(x.get(33), 30);
  assert.equal(x.delete(17), true);
  assert.equal(x.delete(17), false);
  assert.equal(x.overflowSize, 0);
  assert.equal(x.size, 1);
});

test('id_index: refuses ids that are not safe integers >= 1 (0 marks an empty entry)', () => {
  const x = new IdIndex(16);
  assert.throws(() => x.set(0, 1), /safe integers >= 1/);
  assert.throws(() => x.set(1.5, 1), /safe integers >= 1/);
  assert.throws(() => x.set(2 ** 53, 1), /safe integers >= 1/);
  assert.equal(x.size, 0);
  assert.equal(x.get(0), -1);
});

test('id_index: a sliding window of seqs past 2^32 with retained ids stays exact through growth', () => {
  const x = new IdIndex(1 << 10);
  const ref = new Map<number, number>();
  const start = 2 ** 32 - 5000;
  let maxOverflow = 0;
  // Most ids leave after a short life; every 97th stays for good (a retained order).
  for (let k = start; k < start + 60_000; k++) {
    x.set(k, k % 1000);
    ref.set(k, k % 1000);
    const old = k - 1500;
    if (old >= start && old % 97 !== 0) {
      assert.equal(x.delete(old), true);
      ref.delete(old);
    }
    if (x.overflowSize > maxOverflow) maxOverflow = x.overflowSize;
  }
  assert.ok(maxOverflow > 0, 'retained ids made later ids overflow');
  assert.equal(x.size, ref.size);
  for (let k = start - 10; k < start + 60_010; k++) assert.equal(x.get(k), ref.get(k) ?? -1);
});
