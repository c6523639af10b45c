// Load worker: one piscina task runs one shard of a load run (some of the
// connections and its share of the rate) for the whole duration, signing and
// sending every request on this thread's own event loop. Runs in a piscina
// worker thread; loadgen.ts merges the shards.
//
// Invariants:
// - At most one request in flight per connection; never pipelined.
// - closed loop: a connection sends its next request as soon as the previous
//   one is answered; latency = answer - actual send.
// - open loop: request k is due at start + k / rate whatever happens to the
//   earlier ones; a due request waits in a queue until a connection is free,
//   and its latency is measured from when it was DUE, so a server stall shows
//   up in every request it delayed (no coordinated omission). Requests still
//   queued when the run ends are recorded at their age then (a lower bound)
//   and counted as `unsent`.
// - No request is started after `durationMs`; in-flight ones get `graceMs`,
//   then every socket is destroyed and the task returns. The run is bounded.
// - Signed ahead (`presign` > 0): before the run, the shard builds and signs
//   that many requests, each stamped with the time it is planned to go
//   (open loop: its due time; closed loop: its place in the connection's
//   queue at the expected rate), reports ready on the gate and waits for go.
//   Sending then costs a lookup; a request whose stamp is more than
//   PRESIGN_SLACK_MS off when it goes (the server allows 5 s) is signed again
//   (counted in signedInline), as is every request past the signed ones.

import { createSecretKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { authHeaders } from '../../../src/client/sign.js';
import { mulberry32 } from '../../../src/lib/rng.js';
import { arriveAndWait } from './gate.js';
import { Histogram, type HistogramData } from './histogram.js';
import { connFactory, type Conn, type TransportKind } from './transports.js';

export interface Mix {
  place: number;
  cancel: number;
  read: number;
}

/**
 * How a `read` op is split between endpoints (relative weights). Default
 * book 1, balance 1 (half each). `orders` is GET /v1/portfolio/orders?limit=20
 * (the caller's own orders, newest first), `market` GET /v1/markets/{id}.
 */
export interface ReadMix {
  book: number;
  balance: number;
  orders: number;
  market: number;
}

export const DEFAULT_READ_MIX: Readonly<ReadMix> = Object.freeze({ book: 1, balance: 1, orders: 0, market: 0 });

export interface WorkerTask {
  workerIndex: number;
  baseUrl: string;
  /** base64 secrets (structured-clone friendly). */
  keys: { keyId: number; secret: string }[];
  markets: number[];
  mode: 'closed' | 'open';
  /** This worker's connections. */
  connections: number;
  /** Index of this worker's first connection among all workers' (spreads keys). */
  firstConnection: number;
  /** This worker's share of the rate, requests per second (open loop). */
  rate: number;
  durationMs: number;
  graceMs: number;
  mix: Mix;
  /** Split of the read ops; absent = DEFAULT_READ_MIX. */
  reads?: ReadMix;
  path?: 'hello';
  transport: TransportKind;
  seed: number;
  /** YES-space tick that placements cluster around. */
  mid: number;
  /** Placements fall within mid +- spread. */
  spread: number;
  /** Requests this shard signs before the run (0: each is signed when sent). */
  presign?: number;
  /** Expected requests/s of this shard (closed loop with presign: spaces the stamps). */
  presignRate?: number;
  /** Int32Array over it: [shards ready, go]; the shard waits for go after signing ahead. */
  gate?: SharedArrayBuffer;
}

export interface WorkerResult {
  workerIndex: number;
  histogram: HistogramData;
  /** Open loop: how late each request was actually sent after its intended time (us). */
  sendLag: HistogramData;
  /** Answers by HTTP status; transport failures under "error". */
  statuses: Record<string, number>;
  ops: Record<string, number>;
  /** Latency (us, same origin as `histogram`) per op kind, answered requests only. */
  byOp: Record<string, HistogramData>;
  sent: number;
  completed: number;
  errors: number;
  unsent: number;
  /**
   * Requests still unanswered when the grace period ended (cut off): in `errors`, and in the histogram at their age then (a lower bound).
   */
  cutOff: number;
  /** Wall time from the first scheduled send to the last answer, ms. */
  elapsedMs: number;
  /** CPU of this worker thread (Linux /proc/thread-self), or of the process where unavailable. */
  cpu: { userMs: number; systemMs: number; scope: 'thread' | 'process' };
  /** Signing ahead: requests signed and this thread's CPU for it (before the run, not in `cpu`). */
  presigned: number;
  presignCpuMs: number;
  /** Requests signed when sent although signing ahead was asked for (stale stamp, or past the signed ones). */
  signedInline: number;
}

/** A request built (and signed) ahead of its send. */
interface Prepared {
  op: Op;
  key: KeyState;
  method: string;
  target: string;
  body: string;
  headers: Record<string, string>;
  /** The timestamp signed in, Unix ms (0: not signed, e.g. a cancel, built when sent). */
  tsMs: number;
}

/** How far a signed-ahead stamp may be from the send time before it is signed again (the server allows 5,000 ms). */
export const PRESIGN_SLACK_MS = 3000;

type Op = 'place' | 'cancel' | 'read_book' | 'read_balance' | 'read_orders' | 'read_market' | 'hello';

const CLK_TCK_MS = 10; // USER_HZ is 100 on Linux: one clock tick is 10 ms

function threadCpu(): { userMs: number; systemMs: number; scope: 'thread' | 'process' } {
  if (process.platform === 'linux') {
    const stat = readFileSync('/proc/thread-self/stat', 'latin1');
    // Fields after "(comm)": state is field 3; utime and stime are 14 and 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { userMs: Number(f[11]) * CLK_TCK_MS, systemMs: Number(f[12]) * CLK_TCK_MS, scope: 'thread' };
  }
  // Elsewhere process.cpuUsage() in a worker reports the whole process.
  const u = process.cpuUsage();
  return { userMs: u.user / 1000, systemMs: u.system / 1000, scope: 'process' };
}

/** A connection, its key (closed loop) and its signed-ahead requests. */
interface Slot {
  conn: Conn;
  key: KeyState;
  queue: Prepared[];
  next: number;
}

interface KeyState {
  keyId: number;
  key: KeyObject;
  /** Ids of this worker's orders on this key that were resting when placed. */
  live: string[];
}

const LIVE_MAX = 4096;

/**
 * The requests of one shard: which op goes next (the mix), and each request
 * built and signed: prices around the mid, client_order_ids unique across
 * workers and runs, cancels of the key's own live orders. Every random draw
 * comes from the shard's seed, in the order the run asks for them.
 */
class Requests {
  private readonly rand: () => number;
  private readonly prefix: string;
  private readonly totalWeight: number;
  private readonly reads: ReadMix;
  private readonly readWeight: number;
  /**
   * client_order_id: (nonce << 32) | counter, a u64. The 32-bit nonce is 24
   * random bits and the worker index, so ids differ across workers and runs.
   */
  private readonly nonce: bigint;
  private coid = 0;
  /** Requests signed when sent although signing ahead was asked for (see WorkerResult). */
  signedInline = 0;

  constructor(private readonly task: WorkerTask) {
    this.rand = mulberry32(task.seed);
    this.prefix = new URL(task.baseUrl).pathname.replace(/\/+$/, '');
    this.nonce = BigInt(((Math.floor(this.rand() * 0x1000000) << 8) | (task.workerIndex & 0xff)) >>> 0);
    this.totalWeight = task.mix.place + task.mix.cancel + task.mix.read;
    this.reads = task.reads ?? DEFAULT_READ_MIX;
    const reads = this.reads;
    this.readWeight = reads.book + reads.balance + reads.orders + reads.market;
    if (task.path === 'hello') return;
    if (task.mix.read > 0 && !(this.readWeight > 0)) throw new Error('read mix weights must add up to more than 0');
    if (!(this.totalWeight > 0)) throw new Error('mix weights must add up to more than 0');
  }

  pickOp(): Op {
    const task = this.task;
    if (task.path === 'hello') return 'hello';
    const r = this.rand() * this.totalWeight;
    if (r < task.mix.place) return 'place';
    if (r < task.mix.place + task.mix.cancel) return 'cancel';
    if (task.reads === undefined) return this.rand() < 0.5 ? 'read_book' : 'read_balance';
    const reads = this.reads;
    const q = this.rand() * this.readWeight;
    if (q < reads.book) return 'read_book';
    if (q < reads.book + reads.balance) return 'read_balance';
    if (q < reads.book + reads.balance + reads.orders) return 'read_orders';
    return 'read_market';
  }

  /** Builds (and signs, for `tsMs`) one request of `op` on `key`; a cancel with nothing live becomes a placement. */
  build(op: Op, key: KeyState, tsMs: number): Prepared {
    const { task, rand, prefix } = this;
    if (op === 'cancel' && key.live.length === 0) op = 'place';
    let method = 'GET';
    let target: string;
    let body = '';
    switch (op) {
      case 'hello':
        target = prefix + '/';
        break;
      case 'read_book':
        target = `${prefix}/v1/markets/${task.markets[Math.floor(rand() * task.markets.length)]}/orderbook?depth=10`;
        break;
      case 'read_balance':
        target = `${prefix}/v1/portfolio/balance`;
        break;
      case 'read_orders':
        target = `${prefix}/v1/portfolio/orders?limit=20`;
        break;
      case 'read_market':
        target = `${prefix}/v1/markets/${task.markets[Math.floor(rand() * task.markets.length)]}`;
        break;
      case 'cancel': {
        method = 'DELETE';
        target = `${prefix}/v1/portfolio/orders/batch`;
        // Swap-remove a random live id: cancels hit orders all over the book.
        const i = Math.floor(rand() * key.live.length);
        const id = key.live[i]!;
        key.live[i] = key.live[key.live.length - 1]!;
        key.live.pop();
        body = `{"order_ids":["${id}"]}`;
        break;
      }
      case 'place': {
        method = 'POST';
        target = `${prefix}/v1/portfolio/orders`;
        const market = task.markets[Math.floor(rand() * task.markets.length)]!;
        // A YES-space price around the mid; a NO order at 100 - p quotes the
        // same YES-space level, so both outcomes meet and some orders cross.
        let p = task.mid + Math.floor(rand() * (2 * task.spread + 1)) - task.spread;
        p = p < 1 ? 1 : p > 99 ? 99 : p;
        const outcome = rand() < 0.5 ? 'yes' : 'no';
        // Mostly buys: a sell needs shares, which only fills create.
        const side = rand() < 0.7 ? 'buy' : 'sell';
        const tick = outcome === 'yes' ? p : 100 - p;
        const qty = 1 + Math.floor(rand() * 10);
        const clientOrderId = ((this.nonce << 32n) | BigInt(this.coid++ >>> 0)).toString();
        body =
          `{"market_id":${market},"side":"${side}","outcome":"${outcome}","tick":${tick},"qty":${qty}` +
          `,"client_order_id":"${clientOrderId}"}`;
        break;
      }
    }
    const headers = op === 'hello' ? {} : this.sign(key, method, target, body, tsMs);
    return { op, key, method, target, body, headers, tsMs: op === 'hello' ? 0 : tsMs };
  }

  private sign(key: KeyState, method: string, target: string, body: string, tsMs: number): Record<string, string> {
    const headers = authHeaders(key.keyId, key.key, method, target, body, tsMs) as unknown as Record<string, string>;
    if (body.length > 0) headers['content-type'] = 'application/json';
    return headers;
  }

  /**
   * A prepared request about to go: a cancel is built now (it needs a live
   * id), a stamp too far from now is signed again.
   */
  ready(pre: Prepared, now: number): Prepared {
    if (pre.op === 'cancel') {
      this.signedInline++;
      return this.build('cancel', pre.key, now);
    }
    if (pre.op !== 'hello' && Math.abs(pre.tsMs - now) > PRESIGN_SLACK_MS) {
      this.signedInline++;
      pre.headers = this.sign(pre.key, pre.method, pre.target, pre.body, now);
      pre.tsMs = now;
    }
    return pre;
  }
}

/**
 * Signing ahead: `presign` requests built and signed before the run, each
 * stamped with the time it is planned to go (open loop: its due time, in one
 * queue; closed loop: round robin into the connections' queues at the
 * expected rate). Returns the open loop's queue and the thread CPU it took.
 */
function signAhead(
  task: WorkerTask, req: Requests, keys: KeyState[], conns: Slot[], presign: number,
): { openQueue: Prepared[]; cpuMs: number } {
  const openQueue: Prepared[] = [];
  const c0 = threadCpu();
  const rate = task.mode === 'open' ? task.rate : (task.presignRate ?? 0);
  if (!(rate > 0)) throw new Error('signing ahead needs the expected rate (presignRate) in a closed loop');
  // Stamps count from when the run is expected to start: after the signing,
  // whose length is estimated from a first few requests (built, then dropped).
  const w0 = performance.now();
  const probe = Math.min(200, presign);
  for (let i = 0; i < probe; i++) req.build(req.pickOp(), keys[i % keys.length]!, Date.now());
  const perMs = (performance.now() - w0) / probe;
  const origin = Date.now() + perMs * presign + 100;
  // A cancel needs a live order id, known only when it goes: it is kept as a placeholder and built then.
  const ahead = (key: KeyState, tsMs: number): Prepared => {
    const op = req.pickOp();
    return op === 'cancel' ? { op, key, method: 'DELETE', target: '', body: '', headers: {}, tsMs: 0 } : req.build(op, key, tsMs);
  };
  if (task.mode === 'open') {
    const intervalMs = 1000 / rate;
    for (let k = 0; k < presign; k++)
      openQueue.push(ahead(keys[(task.firstConnection + k) % keys.length]!, Math.round(origin + k * intervalMs)));
  } else {
    // Round robin over the connections: the i-th request of each is planned at i / (rate / connections).
    const gapMs = conns.length / rate;
    for (let j = 0; j < presign; j++) {
      const c = conns[j % conns.length]!;
      c.queue.push(ahead(c.key, Math.round(origin + Math.floor(j / conns.length) * gapMs)));
    }
  }
  const c1 = threadCpu();
  return { openQueue, cpuMs: c1.userMs + c1.systemMs - c0.userMs - c0.systemMs };
}

export default async function runShard(task: WorkerTask): Promise<WorkerResult> {
  const req = new Requests(task);
  const keys: KeyState[] = task.keys.map((k) => ({
    keyId: k.keyId,
    key: createSecretKey(Buffer.from(k.secret, 'base64')),
    live: [],
  }));
  const hist = new Histogram();
  const sendLag = new Histogram();
  const statuses: Record<string, number> = {};
  const ops: Record<string, number> = {};
  const byOp: Record<string, Histogram> = {};
  let sent = 0;
  let completed = 0;
  let errors = 0;
  let unsent = 0;
  let cutOff = 0;
  if (task.path !== 'hello' && (keys.length === 0 || task.markets.length === 0)) {
    throw new Error('signed load needs at least one key and one market');
  }

  const factory = connFactory(task.transport, task.baseUrl, Math.max(1, task.connections));
  const conns: Slot[] = [];
  for (let i = 0; i < task.connections; i++) {
    const key = keys.length > 0 ? keys[(task.firstConnection + i) % keys.length]! : (undefined as unknown as KeyState);
    conns.push({ conn: factory.open(), key, queue: [], next: 0 });
  }
  await Promise.all(conns.map((c) => c.conn.warm()));

  // ---------------------------------------------------------------- signing ahead
  const presign = task.path === 'hello' ? 0 : Math.max(0, Math.floor(task.presign ?? 0));
  const presigning = presign > 0;
  /** Open loop: the signed requests in due order (request k goes k-th). */
  const { openQueue, cpuMs: presignCpuMs } = presigning ? signAhead(task, req, keys, conns, presign) : { openQueue: [], cpuMs: 0 };
  let openNext = 0;
  // Ready; wait for every shard (the run's CPU windows start at go).
  if (task.gate !== undefined) await arriveAndWait(task.gate);

  const cpu0 = threadCpu();
  const t0 = performance.now();
  const tEnd = t0 + task.durationMs;
  let lastAnswer = t0;
  let inFlight = 0;
  let finished: () => void = () => undefined;
  const allDone = new Promise<void>((resolve) => (finished = resolve));
  let stopped = false;

  /** Builds (or takes `pre`) and sends one request on `c`; `startedAt` is the latency origin. */
  function fire(c: Slot, startedAt: number, onFree: () => void, pre?: Prepared): void {
    let r: Prepared;
    if (pre !== undefined) r = req.ready(pre, Date.now());
    else {
      if (presigning) req.signedInline++;
      r = req.build(req.pickOp(), c.key, Date.now());
    }
    const op = r.op;
    const key = r.key;
    ops[op] = (ops[op] ?? 0) + 1;
    sent++;
    inFlight++;
    c.conn.send(r.method, r.target, r.headers, r.body, (status, text) => {
      const now = performance.now();
      inFlight--;
      if (status === 0) {
        errors++;
        statuses['error'] = (statuses['error'] ?? 0) + 1;
        // Cut off at the end of the grace period: a stall must not vanish
        // from the percentiles, so it counts at its age now (a lower bound).
        if (stopped) {
          cutOff++;
          hist.record((now - startedAt) * 1000);
        }
      } else {
        completed++;
        lastAnswer = now;
        hist.record((now - startedAt) * 1000);
        (byOp[op] ??= new Histogram()).record((now - startedAt) * 1000);
        const s = String(status);
        statuses[s] = (statuses[s] ?? 0) + 1;
        if (op === 'place' && status === 201) rememberOrder(key, text);
      }
      if (stopped) {
        if (inFlight === 0) finished();
        return;
      }
      onFree();
    });
  }

  function rememberOrder(key: KeyState, text: string): void {
    let r: { order_id?: string; status?: string };
    try {
      r = JSON.parse(text) as { order_id?: string; status?: string };
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      statuses['bad_body'] = (statuses['bad_body'] ?? 0) + 1; // a 201 that is not JSON: a server bug to report
      return;
    }
    if ((r.status === 'resting' || r.status === 'partially_filled') && typeof r.order_id === 'string') {
      if (key.live.length >= LIVE_MAX) key.live.shift();
      key.live.push(r.order_id);
    }
  }

  // The open loop's end: every request due before the deadline that was not
  // sent is counted unsent (idempotent; also run when the deadline passes
  // before the schedule's last timer has fired).
  let closeSchedule = (): void => undefined;

  // ---------------------------------------------------------------- closed loop
  if (task.mode === 'closed') {
    const loop = (c: Slot): void => {
      const now = performance.now();
      if (now >= tEnd) {
        if (inFlight === 0) finished();
        return;
      }
      fire(c, now, () => loop(c), c.next < c.queue.length ? c.queue[c.next++] : undefined);
    };
    for (const c of conns) loop(c);
  } else {
    // -------------------------------------------------------------- open loop
    // A due request takes the connection idle longest (FIFO, so load spreads
    // over every connection) and the next key in rotation (so no key exceeds
    // rate / keys and the per-key buckets do not shape the measurement).
    const intervalMs = 1000 / task.rate;
    const due: number[] = []; // intended send times waiting for a free connection
    let dueHead = 0;
    const idle: Slot[] = conns.slice();
    let idleHead = 0;
    let keyNext = task.firstConnection;
    let k = 0;
    const send = (c: Slot, intended: number): void => {
      if (keys.length > 0) {
        c.key = keys[keyNext % keys.length]!;
        keyNext++;
      }
      sendLag.record((performance.now() - intended) * 1000);
      fire(c, intended, () => next(c), openNext < openQueue.length ? openQueue[openNext++] : undefined);
    };
    const next = (c: Slot): void => {
      if (dueHead < due.length && performance.now() < tEnd) {
        const intended = due[dueHead++]!;
        if (dueHead > 4096 && dueHead * 2 > due.length) {
          due.splice(0, dueHead);
          dueHead = 0;
        }
        send(c, intended);
      } else {
        idle.push(c);
        if (performance.now() >= tEnd && inFlight === 0) finished();
      }
    };
    const tick = (): void => {
      const now = performance.now();
      for (;;) {
        const intended = t0 + k * intervalMs;
        if (intended > now || intended >= tEnd) break;
        due.push(intended);
        k++;
      }
      while (idleHead < idle.length && dueHead < due.length) {
        const c = idle[idleHead++]!;
        if (idleHead > 4096 && idleHead * 2 > idle.length) {
          idle.splice(0, idleHead);
          idleHead = 0;
        }
        send(c, due[dueHead++]!);
      }
      const nextAt = t0 + k * intervalMs;
      if (nextAt < tEnd) {
        setTimeout(tick, Math.max(0, nextAt - performance.now()));
      } else {
        // Every request of the run is scheduled; whatever is still queued at
        // the end is recorded at its age then, as a lower bound.
        setTimeout(
          () => {
            closeSchedule();
            if (inFlight === 0) finished();
          },
          Math.max(0, tEnd - performance.now()),
        );
      }
    };
    closeSchedule = (): void => {
      for (let intended = t0 + k * intervalMs; intended < tEnd; intended = t0 + k * intervalMs) {
        due.push(intended);
        k++;
      }
      for (; dueHead < due.length; dueHead++) {
        hist.record((tEnd - due[dueHead]!) * 1000);
        unsent++;
      }
    };
    tick();
  }

  // Bound the run: at the deadline no new request starts (the loops check
  // tEnd); after the grace period whatever is in flight is cut off.
  await new Promise<void>((resolve) => setTimeout(resolve, Math.max(0, tEnd - performance.now())));
  stopped = true;
  closeSchedule();
  if (inFlight === 0) finished();
  let graceTimer: NodeJS.Timeout | undefined;
  await Promise.race([allDone, new Promise<void>((resolve) => (graceTimer = setTimeout(resolve, task.graceMs)))]);
  clearTimeout(graceTimer);
  factory.destroyAll();
  // Destroyed connections report their in-flight request as an error on the
  // next turns of the loop; give them those turns before counting.
  if (inFlight > 0) await new Promise<void>((resolve) => setTimeout(resolve, 20));
  const cpu1 = threadCpu();

  return {
    workerIndex: task.workerIndex,
    histogram: hist.toData(),
    sendLag: sendLag.toData(),
    statuses,
    ops,
    byOp: Object.fromEntries(Object.entries(byOp).map(([k, h]) => [k, h.toData()])),
    sent,
    completed,
    errors,
    unsent,
    cutOff,
    elapsedMs: Math.max(lastAnswer, tEnd) - t0,
    cpu: { userMs: cpu1.userMs - cpu0.userMs, systemMs: cpu1.systemMs - cpu0.systemMs, scope: cpu1.scope },
    presigned: presign,
    presignCpuMs,
    signedInline: req.signedInline,
  };
}
