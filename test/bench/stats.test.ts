// The benchmarks' figures. The nearest-rank p99.9 of the three percentile helpers:
// src/lib/log_histogram.ts (load generator, metrics), test/support/bench/stats.ts
// (engine, disk, client samples) and test/support/bench/server_latency.ts (the
// exchange's histograms over a window). Nearest rank: the smallest value with
// at least p% of the values at or below it, rank ceil(p/100 * n). For
// n = 1000, p99.9 is the 999th value, not the 1000th (the max). The server
// CPU per request over repeated runs (place_server_cpu_us_per_req and the
// hello's, whose ratio is issue 13's place_cpu_vs_hello): each run's own CPU
// over its own requests, then the median run, never one run's CPU over
// another's rate.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cpuUsPerReq, percentile } from '../support/bench/stats.js';
import { serverSummary, type LatencyReport } from '../support/bench/server_latency.js';
import { Histogram } from '../support/loadgen/histogram.js';

// 999 values of 100 and one of 200 (both exact buckets in either shape).
const N = 1000;
const values = [...Array.from({ length: N - 1 }, () => 100), 200];

test('percentile rank: LogHistogram p99.9 of 1000 values is the 999th, not the max', () => {
  const h = new Histogram();
  for (const v of values) h.record(v);
  assert.equal(h.percentile(99.9), 100);
});

test('percentile rank: stats.percentile p99.9 of 1000 samples is the 999th, not the max', () => {
  assert.equal(percentile(Float64Array.from(values), 99.9), 100);
});

test('percentile rank: serverSummary p99.9 over a window of 1000 answers is the 999th, not the max', () => {
  const before: LatencyReport = { histograms: [], journal_fsync: null };
  const after: LatencyReport = {
    histograms: [
      {
        lane: 'rest', route: 'place_order', stage: 'total', count: N, sum_us: 100 * 999 + 200, max_us: 200, buckets: [[100, 999], [203, 1]],
      },
    ],
    journal_fsync: null,
  };
  assert.equal(serverSummary(before, after).p999_us, 100);
});

test('cpu per request: the median of the runs\' own figures', () => {
  // Per run: 100% of a core at 10,000/s = 100 µs; 100% at 5,000/s = 200 µs; 50% at 5,000/s = 100 µs. Median: 100 µs.
  assert.equal(cpuUsPerReq([100, 100, 50], [10_000, 5_000, 5_000]), 100);
  assert.ok(Number.isNaN(cpuUsPerReq([100], [0])), 'no run answered: no figure');
});
