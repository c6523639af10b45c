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

test('id_index: the table is sized by the ids it holds, not by how far the ids have gone', () => {
  // The order-id pattern of a long run: ids rise with every seq, about 1,500 are held at a time.
  const x = new IdIndex();
  for (let k = 1; k <= 1_000_000; k++) {
    x.set(k, k & 0xffff);
    if (k > 1500) assert.equal(x.delete(k - 1500), true);
  }
  assert.equal(x.size, 1500);
  // Eight times the ids held, rounded up to a power of two: 256 KiB of table,
  // where the ids span a million (a table that far would be 16 MiB, resident page by page).
  assert.equal(x.tableEntries, 16384);
  for (let k = 998_000; k <= 1_000_010; k++) assert.equal(x.get(k), k > 1_000_000 || k <= 998_500 ? -1 : k & 0xffff);
});

test('id_index: growth moves the old table a few entries per write; every id stays found meanwhile', () => {
  const x = new IdIndex(16);
  const ref = new Map<number, number>();
  let k = 0;
  // 4,000 ids, one in three deleted again: the table doubles 8 times, each time while lookups go on.
  let lastEntries = x.tableEntries;
  let growths = 0;
  while (ref.size < 4000) {
    k++;
    x.set(k * 3, k);
    ref.set(k * 3, k);
    if (k % 3 === 0) {
      assert.equal(x.delete((k - 1) * 3), true);
      ref.delete((k - 1) * 3);
    }
    if (x.tableEntries !== lastEntries) {
      growths++;
      lastEntries = x.tableEntries;
    }
    // Right after a growth most ids are still in the old table.
    for (const probe of [k * 3, (k - 2) * 3, (k - 1) * 3, 3, k * 3 + 1]) assert.equal(x.get(probe), ref.get(probe) ?? -1, `id ${probe}`);
  }
  assert.ok(growths >= 8, `grew ${growths} times`);
  assert.equal(x.size, ref.size);
  for (const [id, slot] of ref) assert.equal(x.get(id), slot);
  assert.deepEqual([...x.pairsById()], [...ref].sort((a, b) => a[0] - b[0]).flat());
});

test('id_index: an index from before incremental growth (a table sized for the most orders) is rebuilt to its ids on decode', () => {
  const big = new IdIndex(1 << 20);
  for (let k = 1; k <= 3000; k++) big.set(k * 7, k);
  for (let k = 1; k <= 3000; k += 2) big.delete(k * 7);
  big.set(7 + (1 << 20), 99); // shares an entry with a held id: in the overflow
  const pairs = big.pairsById();
  // The fields such a snapshot decodes to: no growth state.
  const old = big as unknown as Record<string, unknown>;
  for (const f of ['old', 'oldMask', 'moveAt', 'maxMask']) delete old[f];
  IdIndex.upgradeDecoded(big);
  assert.equal(big.tableEntries, 16384);
  assert.deepEqual(big.pairsById(), pairs);
  assert.equal(big.get(14), 2);
  assert.equal(big.get(7), -1);
  big.set(7, 1);
  assert.equal(big.get(7), 1);
  // An index of this build is left as it is.
  const now = new IdIndex(64);
  now.set(5, 1);
  IdIndex.upgradeDecoded(now);
  assert.equal(now.tableEntries, 64);
});

test('id_index: the table grows to an eighth full, never past the most it was given', () => {
  const fill = (maxCapacity: number): IdIndex => {
    const x = new IdIndex(16, maxCapacity);
    for (let k = 1; k <= 5000; k++) x.set(k * 5, k);
    for (let k = 1; k <= 5000; k++) assert.equal(x.get(k * 5), k);
    assert.equal(x.get(3), -1);
    return x;
  };
  assert.equal(fill(1 << 23).tableEntries, 65536);
  const capped = fill(4096);
  assert.equal(capped.tableEntries, 4096);
  // Past its most, ids that share an entry go to the overflow and are still found.
  assert.ok(capped.overflowSize > 0);
});
