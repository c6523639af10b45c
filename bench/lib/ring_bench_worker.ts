// Worker script for bench/ring_handoff.ts: each worker plays one role
// (throughput producer/consumer, echo server, ping client, postMessage echo)
// and posts one result. Timing happens inside the workers; the main thread
// only starts them and then waits in its event loop (not runnable), because
// on these 2-vCPU machines a third runnable thread stalls two spinning ones.
//
// ctl (Int32Array over workerData.ctl): [0] workers ready, [1] go,
// [2] a word that stays 0 (sleep with Atomics.wait and a timeout).
//
// Records are 64 bytes: len (tryClaim), u16 type (1 = data, 2 = stop),
// u32 seq at byte 8, seq ^ 0xa5a5a5a5 in the last word.

import { parentPort, workerData } from 'node:worker_threads';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { BlockingWaitStrategy, LoopWaitStrategy } from '../../src/ring/wait.js';
import { BENCH_FP } from './ring_bench_constants.js';
const REC = 64;
const DATA = 1;
const STOP = 2;

export type BenchRole =
  | { role: 'tp_produce'; sab: SharedArrayBuffer; count: number; batch: number }
  | { role: 'tp_consume'; sab: SharedArrayBuffer; count: number }
  | { role: 'echo'; req: SharedArrayBuffer; rep: SharedArrayBuffer; idle: 'spin' | 'park'; spin_us: number }
  | { role: 'ping_spin'; req: SharedArrayBuffer; rep: SharedArrayBuffer; n: number; warmup: number }
  | { role: 'ping_poll'; req: SharedArrayBuffer; rep: SharedArrayBuffer; n: number; warmup: number; gap_ms: number }
  | { role: 'pm_echo' };

export interface BenchWorkerResult {
  error: string | null;
  t0_ns: number;
  t1_ns: number;
  lat_ns: Float64Array | null;
  mismatches: number;
  fulls: number;
  parks: number;
}

type Input = BenchRole & { ctl: SharedArrayBuffer };
const input = workerData as Input;
const ctl = new Int32Array(input.ctl);

function nowNs(): number {
  return Number(process.hrtime.bigint());
}

function ready(): void {
  Atomics.add(ctl, 0, 1);
}

/** Spins on the go flag: the main thread sets it once every worker is ready. */
function waitGo(): void {
  while (Atomics.load(ctl, 1) === 0) Atomics.wait(ctl, 2, 0, 0.05);
}

function result(r: Partial<BenchWorkerResult>): BenchWorkerResult {
  return { error: null, t0_ns: 0, t1_ns: 0, lat_ns: null, mismatches: 0, fulls: 0, parks: 0, ...r };
}

function send(ring: SpscRing, seq: number, type: number): void {
  let off = ring.tryClaim(REC);
  while (off === -1) off = ring.tryClaim(REC);
  const u32 = ring.mem.u32;
  const w = off >>> 2;
  u32[w + 1] = type;
  u32[w + 2] = seq;
  u32[w + 15] = (seq ^ 0xa5a5a5a5) >>> 0;
  ring.publish();
  ring.doorbell.wake();
}

function tpProduce(a: Extract<BenchRole, { role: 'tp_produce' }>): BenchWorkerResult {
  const ring = new SpscRing(a.sab, BENCH_FP);
  const u32 = ring.mem.u32;
  const batch = a.batch;
  ready();
  waitGo();
  const t0 = nowNs();
  let fulls = 0;
  let inBatch = 0;
  for (let seq = 0; seq < a.count; seq++) {
    let off = ring.tryClaim(REC);
    while (off === -1) {
      ring.publish();
      inBatch = 0;
      fulls++;
      off = ring.tryClaim(REC);
    }
    const w = off >>> 2;
    u32[w + 1] = DATA;
    u32[w + 2] = seq;
    u32[w + 15] = (seq ^ 0xa5a5a5a5) >>> 0;
    if (++inBatch === batch) {
      ring.publish();
      inBatch = 0;
    }
  }
  ring.publish();
  return result({ t0_ns: t0, fulls });
}

function tpConsume(a: Extract<BenchRole, { role: 'tp_consume' }>): BenchWorkerResult {
  const ring = new SpscRing(a.sab, BENCH_FP);
  const u32 = ring.mem.u32;
  let mismatches = 0;
  ready();
  let seq = 0;
  while (seq < a.count) {
    const off = ring.peek();
    if (off === -1) continue;
    const w = off >>> 2;
    if (u32[w + 2] !== seq || u32[w + 15] !== ((seq ^ 0xa5a5a5a5) >>> 0)) mismatches++;
    ring.advance();
    seq++;
  }
  const t1 = nowNs();
  ring.release();
  return result({ t1_ns: t1, mismatches });
}

function echo(a: Extract<BenchRole, { role: 'echo' }>): BenchWorkerResult {
  const req = new SpscRing(a.req, BENCH_FP);
  const rep = new SpscRing(a.rep, BENCH_FP);
  const idle = a.idle === 'park' ? new BlockingWaitStrategy(req.doorbell, req, { spin_us: a.spin_us, park_timeout_ms: 100 }) : null;
  const u32 = req.mem.u32;
  ready();
  for (;;) {
    const off = req.peek();
    if (off === -1) {
      if (idle !== null) idle.idle(0);
      continue;
    }
    const w = off >>> 2;
    const type = u32[w + 1]! & 0xffff;
    const seq = u32[w + 2]!;
    req.advance();
    send(rep, seq, type);
    if (type === STOP) break;
    if (idle !== null) idle.idle(1);
  }
  return result({ parks: idle === null ? 0 : idle.sleeps });
}

function pingSpin(a: Extract<BenchRole, { role: 'ping_spin' }>): BenchWorkerResult {
  const req = new SpscRing(a.req, BENCH_FP);
  const rep = new SpscRing(a.rep, BENCH_FP);
  const lat = new Float64Array(a.n);
  const u32 = rep.mem.u32;
  let mismatches = 0;
  ready();
  waitGo();
  for (let i = -a.warmup; i < a.n; i++) {
    const seq = i >>> 0;
    const t0 = performance.now();
    send(req, seq, DATA);
    let off = rep.peek();
    while (off === -1) off = rep.peek();
    if (u32[(off >>> 2) + 2] !== seq) mismatches++;
    rep.advance();
    const t1 = performance.now();
    if (i >= 0) lat[i] = (t1 - t0) * 1e6;
  }
  send(req, 0, STOP);
  return result({ lat_ns: lat, mismatches });
}

function pingPoll(a: Extract<BenchRole, { role: 'ping_poll' }>): Promise<BenchWorkerResult> {
  const req = new SpscRing(a.req, BENCH_FP);
  const rep = new SpscRing(a.rep, BENCH_FP);
  const lat = new Float64Array(a.n);
  const u32 = rep.mem.u32;
  let mismatches = 0;
  let i = -a.warmup;
  let tSend = 0;
  return new Promise((resolve) => {
    const sendNext = (): void => {
      tSend = performance.now();
      send(req, i >>> 0, DATA);
      outstanding = true;
      poller.kick();
    };
    // The gateway's pattern with the spin kind: one poll per event-loop turn while a reply is outstanding.
    let outstanding = false;
    const poller = new LoopWaitStrategy('spin', rep.doorbell, {
      poll: () => {
        const off = rep.peek();
        if (off === -1) return 0;
        if (u32[(off >>> 2) + 2] !== i >>> 0) mismatches++;
        rep.advance();
        const t = performance.now();
        if (i >= 0) lat[i] = (t - tSend) * 1e6;
        i++;
        outstanding = false;
        if (i >= a.n) {
          send(req, 0, STOP);
          poller.stop();
          resolve(result({ lat_ns: lat, mismatches }));
          return 1;
        }
        if (a.gap_ms > 0) {
          setTimeout(sendNext, a.gap_ms);
          return 1;
        }
        tSend = performance.now();
        send(req, i >>> 0, DATA);
        outstanding = true;
        return 1;
      },
      awaiting: () => outstanding,
      hasWork: () => rep.hasUnread(),
      dueInMs: () => Infinity,
    });
    ready();
    waitGo();
    sendNext();
  });
}

async function run(a: Input): Promise<BenchWorkerResult> {
  switch (a.role) {
    case 'tp_produce': return tpProduce(a);
    case 'tp_consume': return tpConsume(a);
    case 'echo': return echo(a);
    case 'ping_spin': return pingSpin(a);
    case 'ping_poll': return pingPoll(a);
    case 'pm_echo':
      parentPort!.on('message', (m: unknown) => {
        if (m === 'stop') parentPort!.close();
        else parentPort!.postMessage(m);
      });
      return new Promise(() => {});
  }
}

run(input).then(
  (r) => parentPort!.postMessage(r),
  (e: unknown) => parentPort!.postMessage(result({ error: e instanceof Error ? e.stack ?? e.message : String(e) })),
);
