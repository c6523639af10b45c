// ring_handoff: SpscRing hand-off between real worker threads.
//   (a) one-way throughput of 64-byte records, median of 5 runs, publishing
//       per record and per batch of 16;
//   (b) round-trip latency A -> B -> A over two rings, p50/p99/p99.9, with
//       the wait strategies of src/ring/wait.ts:
//       spin_spin   both sides busy-poll;
//       poll_spin   A (I/O thread) polls from its event loop (LoopWaitStrategy
//                   spin), B (engine) parks (BlockingWaitStrategy) and is
//                   within its spin phase;
//       poll_parked as poll_spin with a 1 ms gap between requests, so B has
//                   parked and every request pays a wake-up;
//       poll_parked_nospin  the same with B's spin phase off (spin_us 0):
//                   after a wake-up B often shares A's vCPU, and B's spin
//                   phase then delays A's poll (see wait.ts);
//   (c) a single-thread claim/publish/peek/advance cost per record;
//   peer: worker postMessage round trip.
// Timing is done inside the workers; the main thread waits in its event loop.
// Results are reported, never asserted (STYLE: no timed assertions).
// Run: npx tsc -p tsconfig.json && node dist/bench/ring_handoff.js [--quick]

import { once } from 'node:events';
import os from 'node:os';
import { pathToFileURL } from 'node:url';
import { setTimeout as delay } from 'node:timers/promises';
import { Worker } from 'node:worker_threads';
import { parseCommandLine, parseOrUsage } from '../src/lib/command_line.js';
import { SpscRing } from '../src/ring/spsc_ring.js';
import type { BenchRole, BenchWorkerResult } from './lib/ring_bench_worker.js';
import { BENCH_FP } from './lib/ring_bench_constants.js';
import { type BenchResult, environment, writeResult } from './lib/result.js';
import { max, median, min, percentileSorted, sortedCopy } from '../test/support/bench/stats.js';

const WORKER_URL = new URL('./lib/ring_bench_worker.js', import.meta.url);
const RING_BYTES = 256 * 1024;
/**
 * The echo side's spin phase (BlockingWaitStrategy) in the poll variants:
 * 20 µs, beside the _nospin variant (none: the default, SPIN_US_DEFAULT),
 * so the report keeps showing what a spin phase buys on this host.
 */
const ECHO_SPIN_US = 20;

interface Running {
  worker: Worker;
  done: Promise<BenchWorkerResult>;
}

function start(role: BenchRole, ctl: SharedArrayBuffer): Running {
  const worker = new Worker(WORKER_URL, { workerData: { ...role, ctl } });
  const done = new Promise<BenchWorkerResult>((resolve, reject) => {
    worker.once('message', (r: BenchWorkerResult) => (r.error === null ? resolve(r) : reject(new Error(r.error))));
    worker.once('error', reject);
  });
  return { worker, done };
}

/** Waits (in the event loop) until n workers are ready, then lets them go. */
async function go(ctl: SharedArrayBuffer, n: number): Promise<void> {
  const c = new Int32Array(ctl);
  while (Atomics.load(c, 0) < n) await delay(1);
  Atomics.store(c, 1, 1);
}

async function throughputRun(count: number, batch: number): Promise<{ rate: number; fulls: number }> {
  const sab = SpscRing.allocate(RING_BYTES, BENCH_FP);
  const ctl = new SharedArrayBuffer(64);
  const consumer = start({ role: 'tp_consume', sab, count }, ctl);
  const producer = start({ role: 'tp_produce', sab, count, batch }, ctl);
  await go(ctl, 2);
  const [p, c] = await Promise.all([producer.done, consumer.done]);
  if (c.mismatches !== 0) throw new Error(`ring_handoff: consumer saw ${c.mismatches} wrong records`);
  return { rate: count / ((c.t1_ns - p.t0_ns) / 1e9), fulls: p.fulls };
}

interface Latency {
  p50: number;
  p99: number;
  p999: number;
  max: number;
  parks: number;
}

type Variant = 'spin_spin' | 'poll_spin' | 'poll_parked' | 'poll_parked_nospin';

async function latencyRun(variant: Variant, n: number, warmup: number): Promise<Latency> {
  const req = SpscRing.allocate(64 * 1024, BENCH_FP);
  const rep = SpscRing.allocate(64 * 1024, BENCH_FP);
  const ctl = new SharedArrayBuffer(64);
  const spin_us = variant === 'poll_parked_nospin' ? 0 : ECHO_SPIN_US;
  const echo = start({ role: 'echo', req, rep, idle: variant === 'spin_spin' ? 'spin' : 'park', spin_us }, ctl);
  const gap_ms = variant === 'poll_parked' || variant === 'poll_parked_nospin' ? 1 : 0;
  const ping = variant === 'spin_spin'
    ? start({ role: 'ping_spin', req, rep, n, warmup }, ctl)
    : start({ role: 'ping_poll', req, rep, n, warmup, gap_ms }, ctl);
  await go(ctl, 2);
  const [a, b] = await Promise.all([ping.done, echo.done]);
  if (a.mismatches !== 0) throw new Error(`ring_handoff: ${variant}: ${a.mismatches} wrong replies`);
  return summarize(a.lat_ns!, b.parks);
}

function summarize(lat_ns: Float64Array, parks: number): Latency {
  const s = sortedCopy(lat_ns);
  return { p50: percentileSorted(s, 50), p99: percentileSorted(s, 99), p999: percentileSorted(s, 99.9), max: s[s.length - 1]!, parks };
}

async function postMessageRtt(n: number, warmup: number): Promise<Latency> {
  const role: BenchRole = { role: 'pm_echo' };
  const worker = new Worker(WORKER_URL, { workerData: { ...role, ctl: new SharedArrayBuffer(64) } });
  await once(worker, 'online');
  const lat = new Float64Array(n);
  for (let i = -warmup; i < n; i++) {
    const t0 = performance.now();
    worker.postMessage(i);
    await once(worker, 'message');
    if (i >= 0) lat[i] = (performance.now() - t0) * 1e6;
  }
  worker.postMessage('stop');
  await once(worker, 'exit');
  return summarize(lat, 0);
}

/** One thread: claim + write 3 words + publish + peek + check + advance per record. */
function singleThreadNsPerRecord(count: number): number {
  const sab = SpscRing.allocate(RING_BYTES, BENCH_FP);
  const p = new SpscRing(sab, BENCH_FP);
  const c = new SpscRing(sab, BENCH_FP);
  const pu = p.mem.u32;
  const cu = c.mem.u32;
  let bad = 0;
  const t0 = performance.now();
  for (let seq = 0; seq < count; seq++) {
    const off = p.tryClaim(64);
    const w = off >>> 2;
    pu[w + 1] = 1;
    pu[w + 2] = seq;
    pu[w + 15] = seq;
    p.publish();
    const r = c.peek();
    if (cu[(r >>> 2) + 2] !== seq) bad++;
    c.advance();
  }
  const ns = ((performance.now() - t0) * 1e6) / count;
  if (bad !== 0) throw new Error('ring_handoff: single-thread mismatch');
  return ns;
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const quick = opts.quick === true;
  const tpCount = quick ? 2_000_000 : 10_000_000;
  const runs = 5;
  const latN = quick ? 20_000 : 200_000;
  const pollN = quick ? 20_000 : 100_000;
  const parkedN = quick ? 200 : 1000;
  const pmN = quick ? 5_000 : 20_000;

  const metrics: Record<string, number> = {};
  // Other processes on a 2-vCPU host distort every figure here; record how busy it was.
  metrics.host_loadavg_1m_start = os.loadavg()[0]!;
  const perRecord: number[] = [];
  const batched: number[] = [];
  let fulls = 0;
  for (let r = 0; r < runs; r++) {
    const a = await throughputRun(tpCount, 1);
    perRecord.push(a.rate);
    const b = await throughputRun(tpCount, 16);
    batched.push(b.rate);
    fulls += a.fulls + b.fulls;
  }
  metrics.spsc_1p1c_64b_records_per_s = median(perRecord);
  metrics.spsc_1p1c_64b_min_records_per_s = min(perRecord);
  metrics.spsc_1p1c_64b_max_records_per_s = max(perRecord);
  metrics.spsc_1p1c_64b_batch16_records_per_s = median(batched);
  metrics.spsc_1p1c_64b_batch16_min_records_per_s = min(batched);
  metrics.spsc_1p1c_64b_batch16_max_records_per_s = max(batched);
  metrics.spsc_1p1c_64b_producer_full_count = fulls;

  const variants = ['spin_spin', 'poll_spin', 'poll_parked', 'poll_parked_nospin'] as const;
  const lat: Record<string, Latency> = {};
  for (const v of variants) {
    const n = v === 'spin_spin' ? latN : v === 'poll_spin' ? pollN : parkedN;
    const l = await latencyRun(v, n, Math.min(n, 10_000));
    lat[v] = l;
    metrics[`spsc_rtt_${v}_p50_ns`] = l.p50;
    metrics[`spsc_rtt_${v}_p99_ns`] = l.p99;
    metrics[`spsc_rtt_${v}_p999_ns`] = l.p999;
    metrics[`spsc_rtt_${v}_max_ns`] = l.max;
    metrics[`spsc_rtt_${v}_samples_count`] = n;
    metrics[`spsc_rtt_${v}_echo_parks_count`] = l.parks;
  }
  metrics.spsc_single_thread_64b_ns_per_record = median([1, 2, 3].map(() => singleThreadNsPerRecord(quick ? 1_000_000 : 5_000_000)));

  const pm = await postMessageRtt(pmN, 1000);
  metrics.host_loadavg_1m_end = os.loadavg()[0]!;
  const peers = {
    worker_postmessage: { rtt_p50_ns: pm.p50, rtt_p99_ns: pm.p99, rtt_p999_ns: pm.p999, rtt_max_ns: pm.max, samples_count: pmN },
  };
  // ours / theirs with > 1 meaning we are better: for latencies, theirs / ours.
  const ratios = {
    vs_worker_postmessage_rtt_p50_spin_spin: pm.p50 / lat.spin_spin!.p50,
    vs_worker_postmessage_rtt_p50_poll_spin: pm.p50 / lat.poll_spin!.p50,
    vs_worker_postmessage_rtt_p50_poll_parked: pm.p50 / lat.poll_parked!.p50,
  };
  const m = metrics;
  const notes = [
    `targets: spsc_1p1c_64b_records_per_s >= 10M (got ${(m.spsc_1p1c_64b_records_per_s! / 1e6).toFixed(1)}M per record, ` +
      `${(m.spsc_1p1c_64b_batch16_records_per_s! / 1e6).toFixed(1)}M batched); spsc_rtt_spin_spin_p50_ns <= 2000 (got ` +
      `${Math.round(lat.spin_spin!.p50)})`,
    'the peer is event-driven (both threads sleep between messages), so compare it with poll_parked as well as with the polling variants',
    'other processes on a 2-vCPU host distort these figures: see host_loadavg_1m_start/end; the spread between min and max runs shows it',
  ];
  return {
    name: 'ring_handoff',
    ...environment(),
    notes,
    workload:
      `SpscRing over worker_threads on ${os.availableParallelism()} CPUs; ` +
      `throughput: ${tpCount} x 64 B records, ${RING_BYTES / 1024} KiB ring, median of ${runs} runs, publish per record and per 16; ` +
      `rtt: 64 B request on ring 1, echo on ring 2, 64 KiB rings, ` +
      `spin_spin ${latN} samples, poll_spin ${pollN} (LoopWaitStrategy spin vs BlockingWaitStrategy spin_us=${ECHO_SPIN_US}), ` +
      `poll_parked and poll_parked_nospin ${parkedN} each (1 ms gaps, echo parked; spin_us ${ECHO_SPIN_US} and 0); ` +
      `peer: worker postMessage of a number, ${pmN} round trips` + (quick ? '; quick mode' : ''),
    metrics,
    peers,
    ratios,
  };
}

const isMain = process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (isMain) {
  const usage = 'usage: node dist/bench/ring_handoff.js [--quick]';
  const args = parseOrUsage(() => parseCommandLine(process.argv.slice(2), { quick: { type: 'boolean' } }, { positionals: false }), usage);
  if (args === null) process.exit(2);
  const result = await run({ quick: args.values.quick === true });
  console.log(JSON.stringify(result, null, 2));
  console.log(`wrote ${writeResult(result)}`);
}
