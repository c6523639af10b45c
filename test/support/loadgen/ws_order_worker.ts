// ws_order_worker: a worker thread of the ws_orders benchmark holding the
// WebSocket order-entry connections (the `ws` package, signed upgrade), in
// JSON (one place_order per text frame) or binary (PlaceOrder records, every
// record sent in one turn of the loop in one frame, start_binary first).
// Closed loop: `window` placements in flight per connection, a new one sent
// for each answer; open loop: placements at `rate` per second over all
// connections, sent on a 1 ms tick from the intended schedule. Every
// `cancel_every` placements a connection sends a cancel-all of its account
// (not counted), so that the book stays bounded over millions of placements.
// The JSON frames of one turn leave in one write (sendInTurn, as DxWebSocket
// sends them): measured, a frame per write cost the client 7.5-8.5 µs per
// placement against 3.2-3.8 µs, CPU this shared machine took from the server.
// Placements look like the REST load generator's (test/support/loadgen):
// YES-space prices around a mid, both outcomes, 70% buys, qty 1..10, a
// fresh client_order_id each. Bench runner only (worker thread).
//
// Messages from the parent: {type: 'run', loop, window, rate, duration_ms}
// answers {type: 'report', ...} when the run and its grace are over;
// {type: 'close'} ends every socket and the thread.

import { createHmac } from 'node:crypto';
import { parentPort, workerData } from 'node:worker_threads';
import WebSocket from 'ws';
import { sendInTurn } from '../../../src/client/websocket.js';
import { CancelAll, EntryResult, EntryStatus, Header, PlaceOrder, T_ENTRY_RESULT, T_PLACE_ORDER } from '../../../src/layout/records.js';
import { memOf, type Mem } from '../../../src/lib/mem.js';
import { mulberry32 } from '../../../src/lib/rng.js';
import { Histogram, type HistogramData } from './histogram.js';

export interface OrderWorkerData {
  url: string;
  mode: 'json' | 'binary';
  market_id: number;
  /** One key (and its account) per connection. */
  keys: { key_id: number; secret: string; account_id: number }[];
  layout_fingerprint: string;
  seed: number;
  mid: number;
  spread: number;
  cancel_every: number;
}

export interface OrderRunRequest {
  type: 'run';
  loop: 'closed' | 'open';
  /** Closed loop: placements in flight per connection. */
  window: number;
  /** Open loop: placements per second over this worker's connections. */
  rate: number;
  duration_ms: number;
}

export interface OrderWorkerReport {
  type: 'report';
  /** Placements answered ok (201 / status ok) within the duration. */
  ok: number;
  /** Answers by kind: '201', '422 insufficient_position', 'refused shed', ... */
  outcomes: Record<string, number>;
  sent: number;
  /**
   * Open loop: placements due that were never sent (their connection's window stayed full until the end); each is in `latency` at its
   * age at the end (a lower bound). Placements sent late, once the window had room, are in `latency` from their intended time.
   */
  behind: number;
  /** Client-side latency of ok placements, µs (open loop: from the intended send time; and the `behind` ones at their age). */
  latency: HistogramData;
  elapsed_ms: number;
}

const d = workerData as OrderWorkerData;
/** The worker's own stream, seeded per worker. */
const rand = mulberry32(d.seed);

interface Order {
  side: number;
  outcome: number;
  tick: number;
  qty: number;
}

function nextOrder(): Order {
  let p = d.mid + Math.floor(rand() * (2 * d.spread + 1)) - d.spread;
  p = p < 1 ? 1 : p > 99 ? 99 : p;
  const outcome = rand() < 0.5 ? 0 : 1;
  return { side: rand() < 0.7 ? 0 : 1, outcome, tick: outcome === 0 ? p : 100 - p, qty: 1 + Math.floor(rand() * 10) };
}

const SIDES = ['buy', 'sell'];
const OUTCOMES = ['yes', 'no'];
// client_order_id = (nonce << 32) | counter; the nonce differs per worker and run.
const nonceHi = ((Math.floor(rand() * 0x1000000) << 8) | (d.seed & 0xff)) >>> 0;
let coidLo = 0;

class Conn {
  ws!: WebSocket;
  inFlight = 0;
  sinceCancel = 0;
  nextId = 1;
  /** Send time (performance.now() or the intended time) by id / correlation. */
  readonly sentAt = new Map<number, number>();
  readonly cancels = new Set<number>();
  /** Open loop: intended send times of due placements waiting for room in the window (from `backlogHead`). */
  backlog: number[] = [];
  backlogHead = 0;
  // Binary: the frame being built this turn.
  readonly mem: Mem = memOf(new ArrayBuffer(128 * PlaceOrder.SIZE));
  len = 0;
  flushScheduled = false;
  constructor(readonly key: OrderWorkerData['keys'][number]) {}
}

const conns: Conn[] = [];
let run: {
  req: OrderRunRequest;
  start: number;
  end: number;
  ok: number;
  sent: number;
  behind: number;
  outcomes: Record<string, number>;
  hist: Histogram;
  /** Past the duration: nothing more is sent; answers still in flight are recorded (latency) but not counted in ok. */
  closing: boolean;
} | null = null;

function count(kind: string): void {
  const o = run!.outcomes;
  o[kind] = (o[kind] ?? 0) + 1;
}

function open(key: OrderWorkerData['keys'][number]): Promise<Conn> {
  return new Promise((resolve, reject) => {
    const ts = String(Date.now());
    const sig = createHmac('sha256', Buffer.from(key.secret, 'base64')).update(`${ts}\nGET\n/v1/ws\n`).digest('base64');
    const ws = new WebSocket(`${d.url}/v1/ws`, {
      headers: { 'DX-ACCESS-KEY': String(key.key_id), 'DX-ACCESS-TIMESTAMP': ts, 'DX-ACCESS-SIGNATURE': sig }, perMessageDeflate: false,
    });
    const c = new Conn(key);
    c.ws = ws;
    ws.once('error', reject);
    ws.once('open', () => {
      ws.on('message', (data: Buffer, isBinary: boolean) => (isBinary ? onBinary(c, data) : onText(c, data, resolve)));
      if (d.mode === 'binary')
        ws.send(JSON.stringify({ id: 0, cmd: 'start_binary', params: { layout_fingerprint: d.layout_fingerprint } }));
      else resolve(c);
    });
  });
}

function onText(c: Conn, data: Buffer, started: (c: Conn) => void): void {
  const s = data.toString('latin1');
  if (s.startsWith('{"id":0,')) {
    if (!s.includes('"type":"ok"')) throw new Error(`start_binary refused: ${s}`);
    started(c);
    return;
  }
  // {"id":N,"type":"order_result","status":S,"msg":...}
  const comma = s.indexOf(',');
  const id = Number(s.slice(6, comma));
  const at = s.indexOf('"status":', comma) + 9;
  const status = Number(s.slice(at, at + 3));
  if (c.cancels.delete(id)) {
    c.inFlight--;
    return afterAnswer(c);
  }
  const t = c.sentAt.get(id);
  c.sentAt.delete(id);
  c.inFlight--;
  if (run !== null && t !== undefined) {
    if (status === 201) {
      run.ok++;
      run.hist.record(Math.round((performance.now() - t) * 1000));
      count('201');
    } else {
      const m = /"code":"([a-z_]+)"/.exec(s);
      count(`${status} ${m?.[1] ?? ''}`);
    }
  }
  afterAnswer(c);
}

function onBinary(c: Conn, data: Buffer): void {
  const m = memOf(new Uint8Array(data).buffer);
  for (let o = 0; o < data.byteLength; o += Header.len(m, o)) {
    if (Header.type(m, o) !== T_ENTRY_RESULT) throw new Error('not an EntryResult');
    const corr = Header.correlation(m, o);
    c.inFlight--;
    if (c.cancels.delete(corr)) continue;
    const t = c.sentAt.get(corr);
    c.sentAt.delete(corr);
    if (run === null || t === undefined) continue;
    const st = EntryResult.status(m, o);
    if (st === EntryStatus.ok) {
      run.ok++;
      run.hist.record(Math.round((performance.now() - t) * 1000));
      count('ok');
    } else {
      count(`${['ok', 'rejected', 'refused', 'timeout'][st]} ${EntryResult.code(m, o)}`);
    }
  }
  afterAnswer(c);
}

/** Closed loop: refill the connection's window; open loop: send what waited for room in it, from its intended time. */
function afterAnswer(c: Conn): void {
  const r = run;
  if (r === null || r.closing || performance.now() >= r.end) return;
  if (r.req.loop === 'closed') {
    while (c.inFlight < r.req.window) send(c, performance.now());
    return;
  }
  while (c.backlogHead < c.backlog.length && c.inFlight < OPEN_WINDOW) send(c, c.backlog[c.backlogHead++]!);
  if (c.backlogHead === c.backlog.length) {
    c.backlog = [];
    c.backlogHead = 0;
  }
}

function send(c: Conn, intended: number): void {
  if (c.sinceCancel >= d.cancel_every) {
    c.sinceCancel = 0;
    sendCancelAll(c);
  }
  c.sinceCancel++;
  const o = nextOrder();
  const id = c.nextId++;
  c.sentAt.set(id, intended);
  c.inFlight++;
  run!.sent++;
  const lo = coidLo++ >>> 0;
  if (d.mode === 'json') {
    const coid = (BigInt(nonceHi) << 32n) | BigInt(lo);
    sendInTurn(
      c.ws,
      `{"id":${id},"cmd":"place_order","params":{"market_id":${d.market_id},"side":"${SIDES[o.side]}","outcome":"${OUTCOMES[o.outcome]}",` +
        `"tick":${o.tick},"qty":${o.qty},"client_order_id":"${coid}"}}`,
    );
    return;
  }
  const m = c.mem;
  const at = claim(c, PlaceOrder.SIZE);
  Header.set_len(m, at, PlaceOrder.SIZE);
  Header.set_type(m, at, T_PLACE_ORDER);
  Header.set_correlation(m, at, id);
  Header.set_account(m, at, c.key.account_id);
  PlaceOrder.set_market_id(m, at, d.market_id);
  PlaceOrder.set_qty(m, at, o.qty);
  PlaceOrder.set_tick(m, at, o.tick);
  PlaceOrder.set_side(m, at, o.side);
  PlaceOrder.set_outcome(m, at, o.outcome);
  PlaceOrder.set_has_client_order_id(m, at, 1);
  PlaceOrder.set_client_order_id(m, at, nonceHi, lo);
}

function sendCancelAll(c: Conn): void {
  const id = c.nextId++;
  c.cancels.add(id);
  c.inFlight++;
  if (d.mode === 'json') {
    sendInTurn(c.ws, `{"id":${id},"cmd":"cancel_all","params":{"market_id":${d.market_id}}}`);
    return;
  }
  const at = claim(c, CancelAll.SIZE);
  Header.set_len(c.mem, at, CancelAll.SIZE);
  Header.set_type(c.mem, at, CancelAll.TYPE);
  Header.set_correlation(c.mem, at, id);
  Header.set_account(c.mem, at, c.key.account_id);
  CancelAll.set_market_id(c.mem, at, d.market_id);
}

/** Room for one record in this turn's frame (sent at the end of the turn, or when it holds 128 records). */
function claim(c: Conn, size: number): number {
  if (c.len + size > c.mem.u8.length) flushFrame(c);
  const at = c.len;
  c.mem.u8.fill(0, at, at + size);
  c.len += size;
  if (!c.flushScheduled) {
    c.flushScheduled = true;
    setImmediate(() => flushFrame(c));
  }
  return at;
}

function flushFrame(c: Conn): void {
  c.flushScheduled = false;
  if (c.len === 0) return;
  c.ws.send(c.mem.u8.subarray(0, c.len), { binary: true });
  c.len = 0;
}

/** Open loop: placements in flight per connection at most (under the exchange's cap of 1,000). */
const OPEN_WINDOW = 900;

function openLoop(r: NonNullable<typeof run>): void {
  const perMs = r.req.rate / 1000;
  let due = 0;
  let k = 0;
  const tick = (): void => {
    const now = performance.now();
    if (run !== r || now >= r.end) return;
    const target = Math.floor((now - r.start) * perMs);
    // Each placement's intended time is on the schedule, so a late tick charges its delay to every placement it held back.
    for (; due < target; due++) {
      const c = conns[k++ % conns.length]!;
      // A full window (a stall): the placement waits for room and keeps its intended time.
      if (c.inFlight >= OPEN_WINDOW || c.backlogHead < c.backlog.length) c.backlog.push(r.start + due / perMs);
      else send(c, r.start + due / perMs);
    }
    setTimeout(tick, 1);
  };
  tick();
}

parentPort!.on('message', (msg: OrderRunRequest | { type: 'close' }) => {
  if (msg.type === 'close') {
    for (const c of conns) c.ws.close(1000);
    setTimeout(() => process.exit(0), 200);
    return;
  }
  const start = performance.now();
  const r = {
    req: msg,
    start,
    end: start + msg.duration_ms,
    ok: 0,
    sent: 0,
    behind: 0,
    outcomes: {} as Record<string, number>,
    hist: new Histogram(),
    closing: false,
  };
  run = r;
  if (msg.loop === 'closed') for (const c of conns) afterAnswer(c);
  else openLoop(r);
  setTimeout(() => {
    // ok (the rate) counts what was answered within the duration; the stragglers' latencies are still recorded (a slow answer
    // at the end must not drop out of the percentiles), then the report goes once they are in.
    const okAtEnd = r.ok;
    const elapsed = performance.now() - start;
    r.closing = true;
    // Due but never sent: recorded at their age now, a lower bound (a stall longer than the run must not drop out).
    for (const c of conns) {
      for (let i = c.backlogHead; i < c.backlog.length; i++) {
        r.hist.record(Math.round((r.end - c.backlog[i]!) * 1000));
        r.behind++;
      }
      c.backlog = [];
      c.backlogHead = 0;
    }
    const drained = (): void => {
      if (conns.every((c) => c.inFlight === 0) || performance.now() > r.end + 5000) {
        run = null;
        parentPort!.postMessage({
          type: 'report', ok: okAtEnd, outcomes: { ...r.outcomes }, sent: r.sent, behind: r.behind, latency: r.hist.toData(),
          elapsed_ms: elapsed,
        } satisfies OrderWorkerReport);
      } else setTimeout(drained, 10);
    };
    drained();
  }, msg.duration_ms);
});

const ready = await Promise.all(d.keys.map((k) => open(k)));
conns.push(...ready);
parentPort!.postMessage({ type: 'ready' });
