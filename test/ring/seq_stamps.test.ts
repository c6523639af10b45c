// SeqStamps: a reader finds the first stamp at or after a seq, its cursor
// only moves forward, and stamps the writer lapped are reported missing (NaN)
// rather than read torn or wrong; a stamp never goes back.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SeqStamps } from '../../src/ring/seq_stamps.js';

test('seq stamps: the time of the first stamp covering a seq; NaN before the writer stamped it', () => {
  const sab = SeqStamps.allocate(128);
  const w = new SeqStamps(sab);
  const r = w.reader();
  assert.ok(Number.isNaN(r.timeOf(1)));
  w.stamp(3, 100); // a round that sequenced 1..3
  w.stamp(4, 110);
  w.stamp(9, 150);
  assert.equal(r.timeOf(1), 100);
  assert.equal(r.timeOf(3), 100);
  assert.equal(r.timeOf(4), 110);
  assert.equal(r.timeOf(5), 150);
  assert.equal(r.timeOf(9), 150);
  assert.ok(Number.isNaN(r.timeOf(10)), 'not stamped yet');
  w.stamp(12, 200);
  assert.equal(r.timeOf(10), 200);
  // A reader created later starts at the stamps written from then on.
  const late = w.reader();
  assert.ok(Number.isNaN(late.timeOf(12)));
  w.stamp(13, 210);
  assert.equal(late.timeOf(13), 210);
});

test('seq stamps: a reader lapped by the writer reports what was overwritten as unknown and goes on from the stamps still safe to ' +
  'read', () => {
  const w = new SeqStamps(SeqStamps.allocate(128));
  const r = w.reader();
  for (let s = 1; s <= 1000; s++) w.stamp(s, s * 10);
  // seq 1's stamp was overwritten long ago: unknown, not a later stamp's time.
  assert.ok(Number.isNaN(r.timeOf(1)));
  assert.equal(r.timeOf(999), 9990);
  assert.equal(r.timeOf(1000), 10_000);
});

test('seq stamps: a reader lapped between two lookups drops the overwritten stamps, then trusts a stamp once it read the one ' +
  'before', () => {
  const w = new SeqStamps(SeqStamps.allocate(128));
  const r = w.reader();
  w.stamp(2, 20);
  assert.equal(r.timeOf(1), 20);
  // The writer laps the reader (which had loaded its counter at one stamp): entry n now holds seq n + 2.
  for (let s = 3; s <= 1000; s++) w.stamp(s, s * 10);
  assert.ok(Number.isNaN(r.timeOf(3)), 'overwritten');
  // The oldest entry still safe to read (seq 937) has lost the one before it: not known to be the first covering 937.
  assert.ok(Number.isNaN(r.timeOf(937)));
  assert.equal(r.timeOf(938), 9380);
  assert.equal(r.timeOf(1000), 10_000);
  assert.ok(Number.isNaN(r.timeOf(1001)), 'not stamped yet');
  w.stamp(1001, 10_010);
  assert.equal(r.timeOf(1001), 10_010);
});

test('seq stamps: a stamp below the previous one is our bug (readers only move forward): an assertion, not a silent entry', () => {
  const w = new SeqStamps(SeqStamps.allocate(128));
  w.stamp(5, 100);
  w.stamp(5, 110); // a group commit or a round that moved nothing on: the same seq again is fine
  assert.throws(() => w.stamp(4, 120), /seq_stamps: seq 4 stamped after a later one/);
});
