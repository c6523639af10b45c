// A scrape while a gateway thread records: the control plane reads the slice
// of another thread, word by word, while that thread writes it. Whatever it
// reads, every histogram it renders must be one a Prometheus server takes:
// cumulative buckets, none above +Inf, and +Inf equal to _count.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { allocateMetrics, MetricsRegistry, type MetricsSpec } from '../../src/metrics/metrics.js';

const spec: MetricsSpec = { lanes: [{ lane: 'rest', routes: ['get_balance'] }], slices: [{ name: 'gateway-0', lane: 'rest' }] };

/** A worker that answers get_balance in a loop (100 µs each) into slice 0 until told to stop. */
const WRITER = `
const { workerData, parentPort } = require('node:worker_threads');
import(workerData.module).then(({ ThreadMetrics }) => {
  const m = new ThreadMetrics(workerData.sab, workerData.spec, 0);
  const stop = new Int32Array(workerData.stop);
  const t = { tHead: 0, tVerified: NaN, tPublished: NaN, tSequenced: NaN, tDurable: NaN, tApplied: NaN, tReplied: 100 };
  parentPort.postMessage('running');
  while (Atomics.load(stop, 0) === 0) for (let i = 0; i < 1000; i++) m.onResponse('get_balance', 200, null, t);
});
`;

test('metrics: scrapes taken while another thread records never show a bucket above +Inf, and +Inf is _count', async () => {
  const sab = allocateMetrics(spec);
  const reg = new MetricsRegistry(sab, spec, {});
  const stop = new SharedArrayBuffer(4);
  const module = new URL('../../src/metrics/metrics.js', import.meta.url).href;
  const w = new Worker(WRITER, { eval: true, workerData: { sab, spec, stop, module } });
  await new Promise((r) => w.once('message', r));
  const problems: string[] = [];
  let scrapes = 0;
  try {
    for (const until = Date.now() + 3000; Date.now() < until && problems.length === 0; scrapes++) {
      const text = reg.render();
      const buckets = [...text.matchAll(/^dx_http_request_duration_seconds_bucket\{[^}]*le="([^"]+)"\} (\S+)$/gm)];
      const count = Number(/^dx_http_request_duration_seconds_count\{[^}]*\} (\S+)$/m.exec(text)?.[1]);
      if (buckets.length === 0) continue;
      const inf = Number(buckets.at(-1)![2]);
      if (inf !== count) problems.push(`+Inf ${inf} but _count ${count}`);
      for (const [, le, v] of buckets) if (Number(v) > inf) problems.push(`le="${le}" ${v} > +Inf ${inf}`);
    }
  } finally {
    Atomics.store(new Int32Array(stop), 0, 1);
    await w.terminate();
  }
  assert.deepEqual(problems.slice(0, 3), [], `after ${scrapes} scrapes`);
});
