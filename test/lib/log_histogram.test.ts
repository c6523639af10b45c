// The log-linear histogram (src/lib/log_histogram.ts) in the load
// generator's shape (128 sub-buckets) and in the metrics' shape (16):
// percentiles against the exact order statistics of seeded random data,
// bucket edges, merging, counts at bucket edges.

import assert from 'node:assert/strict';
import { mulberry32 as prng } from '../../src/lib/rng.js';
import { test } from 'node:test';
import { LogHistogram, nearestRank } from '../../src/lib/log_histogram.js';
import { Histogram } from '../support/loadgen/histogram.js';

/** The exact value at percentile p with the histogram's rank rule: ceil(p/100 * n), 1-based. */
function exact(sorted: number[], p: number): number {
  const rank = nearestRank(p, sorted.length);
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

const PS = [0, 1, 10, 25, 50, 75, 90, 99, 99.9, 99.99, 100];

for (const seed of [1, 2, 3]) {
  test(`histogram: percentiles are within 1% of exact on log-normal latencies (seed=${seed})`, () => {
    const rand = prng(seed);
    const h = new Histogram();
    const values: number[] = [];
    for (let i = 0; i < 50_000; i++) {
      // Log-normal around 500 µs, spanning about 1 µs to seconds, with a tail.
      const u1 = rand() || 1e-12;
      const normal = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * rand());
      let v = Math.round(Math.exp(Math.log(500) + 1.6 * normal));
      if (rand() < 0.001) v = Math.round(200_000 + rand() * 3_000_000); // stalls
      values.push(v);
      h.record(v);
    }
    values.sort((a, b) => a - b);
    for (const p of PS) {
      const want = exact(values, p);
      const got = h.percentile(p);
      const err = want === 0 ? got : Math.abs(got - want) / want;
      assert.ok(err <= 0.01, `seed=${seed} p${p}: got ${got}, exact ${want}, error ${(err * 100).toFixed(3)}%`);
      assert.ok(got >= want, `seed=${seed} p${p}: reported ${got} below the exact ${want}`);
    }
    assert.equal(h.total, values.length);
    assert.equal(h.max, values[values.length - 1]);
    assert.equal(h.min, values[0]);
  });
}

test('histogram: uniform data over the full range stays within 1%', () => {
  const rand = prng(42);
  const h = new Histogram();
  const values: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const v = Math.floor(2 ** (rand() * 32)) - 1;
    values.push(v);
    h.record(v);
  }
  values.sort((a, b) => a - b);
  for (const p of PS) {
    const want = exact(values, p);
    const got = h.percentile(p);
    assert.ok(want === 0 ? got === 0 : Math.abs(got - want) / want <= 0.01, `p${p}: got ${got}, exact ${want}`);
  }
});

test('histogram: values below 256 are exact and every bucket edge maps back inside 1/128', () => {
  const h = new Histogram();
  for (let v = 0; v < 256; v++) h.record(v);
  assert.equal(h.percentile(0), 0);
  assert.equal(h.percentile(50), 127);
  assert.equal(h.percentile(100), 255);
  for (const v of [256, 257, 511, 512, 1000, 65_535, 65_536, 1e6, 2 ** 31, 2 ** 32 - 1]) {
    const one = new Histogram();
    one.record(v);
    one.record(0); // max stays v, so p50 reports the bucket of 0 and p100 the max
    const hh = new Histogram();
    hh.record(v);
    hh.record(v + 1e-9);
    assert.equal(one.percentile(100), v);
    assert.ok(hh.percentile(50) >= v && hh.percentile(50) <= v * (1 + 1 / 128), `edge ${v}`);
  }
});

test('histogram: out-of-range values are clamped and counted; negatives and NaN count as 0', () => {
  const h = new Histogram();
  h.record(2 ** 40);
  h.record(-5);
  h.record(Number.NaN);
  assert.equal(h.clamped, 1);
  assert.equal(h.total, 3);
  assert.equal(h.max, 2 ** 32 - 1);
  assert.equal(h.min, 0);
  assert.equal(new Histogram().percentile(99), 0);
});

test('histogram: merging two halves equals recording everything in one', () => {
  const rand = prng(7);
  const a = new Histogram();
  const b = new Histogram();
  const all = new Histogram();
  for (let i = 0; i < 10_000; i++) {
    const v = Math.floor(rand() * 1e6);
    (i % 2 === 0 ? a : b).record(v);
    all.record(v);
  }
  const m = Histogram.fromData(a.toData());
  m.merge(b.toData());
  assert.deepEqual(Array.from(m.words), Array.from(all.words));
  for (const p of PS) assert.equal(m.percentile(p), all.percentile(p));
  assert.equal(m.total, all.total);
  assert.equal(m.max, all.max);
  assert.equal(m.min, all.min);
  assert.equal(m.mean(), all.mean());
});

test('log histogram, 16 sub-buckets: within 6.25% above the exact value, never below', () => {
  const rand = prng(11);
  const h = new LogHistogram({ subBits: 4, maxBits: 26 });
  const values: number[] = [];
  for (let i = 0; i < 20_000; i++) {
    const v = Math.floor(2 ** (rand() * 26)) - 1;
    values.push(v);
    h.record(v);
  }
  values.sort((a, b) => a - b);
  for (const p of PS) {
    const want = exact(values, p);
    const got = h.percentile(p);
    assert.ok(got >= want && got <= want * (1 + 1 / 16) + 1, `p${p}: got ${got}, exact ${want}`);
  }
});

test('log histogram: countAtOrBelow a bucket edge is exact', () => {
  const h = new LogHistogram({ subBits: 4, maxBits: 26 });
  const values = [0, 3, 15, 16, 17, 31, 32, 100, 1000, 1023, 1024, 5000, 2 ** 25];
  for (const v of values) h.record(v);
  for (let i = 0; i < h.buckets; i++) {
    const edge = h.highest(i);
    assert.equal(h.countAtOrBelow(edge), values.filter((v) => v <= edge).length, `edge ${edge}`);
  }
});
