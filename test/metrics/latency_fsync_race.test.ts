// Review repro (sibling of scrape_race): GET /admin/latency's journal_fsync
// entry is read from the journal thread's live histogram, not a merged copy:
// its count (the bucket words, read first) can be below the sum of the
// buckets read after it while the journal thread records an fsync.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { FSYNC_SHAPE } from '../../src/journal/journal_control.js';
import { histogramWords, LogHistogram } from '../../src/lib/log_histogram.js';
import { allocateMetrics, MetricsRegistry, type MetricsSpec } from '../../src/metrics/metrics.js';

const spec: MetricsSpec = { lanes: [{ lane: 'rest', routes: ['get_balance'] }], slices: [{ name: 'gateway-0', lane: 'rest' }] };

/** A worker that records fsyncs (spread over the buckets) in a loop until told to stop, as the journal thread does. */
const WRITER = `
const { workerData, parentPort } = require('node:worker_threads');
import(workerData.module).then(({ LogHistogram }) => {
  const h = new LogHistogram(workerData.shape, new Float64Array(workerData.sab));
  const stop = new Int32Array(workerData.stop);
  parentPort.postMessage('running');
  let v = 0;
  while (Atomics.load(stop, 0) === 0) for (let i = 0; i < 1000; i++) h.record((v = (v * 7 + 13) % 100000));
});
`;

test('metrics: /admin/latency journal_fsync count is never below the sum of its buckets while the journal records', async () => {
  const fsab = new SharedArrayBuffer(histogramWords(FSYNC_SHAPE) * 8);
  const fsyncs = new LogHistogram(FSYNC_SHAPE, new Float64Array(fsab));
  const reg = new MetricsRegistry(allocateMetrics(spec), spec, { journalFsync: fsyncs });
  const stop = new SharedArrayBuffer(4);
  const module = new URL('../../src/lib/log_histogram.js', import.meta.url).href;
  const w = new Worker(WRITER, { eval: true, workerData: { sab: fsab, shape: FSYNC_SHAPE, stop, module } });
  await new Promise((r) => w.once('message', r));
  const problems: string[] = [];
  let reads = 0;
  try {
    for (const until = Date.now() + 3000; Date.now() < until && problems.length === 0; reads++) {
      const j = reg.latency().journal_fsync;
      if (j === null) continue;
      const inBuckets = j.buckets.reduce((a, [, c]) => a + c, 0);
      if (inBuckets !== j.count) problems.push(`count ${j.count} but the buckets hold ${inBuckets}`);
    }
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await w.terminate();
  }
  assert.deepEqual(problems.slice(0, 3), [], `after ${reads} reads`);
});
