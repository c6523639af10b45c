// ws_subscriber_worker: a worker thread of the ws_fanout benchmark holding
// many WebSocket subscribers on raw TCP sockets: a hand-made signed handshake,
// one subscribe command, then a minimal frame parser that counts text frames
// (no JSON parsing) and answers pings. A few sampling connections also read
// the as_of_seq of each message and stamp its arrival (process.hrtime, the
// same monotonic clock as the driver's send stamps), for delivery latency.
// Bench runner only (worker thread).
//
// Messages from the parent: {type: 'start'} resets the counters, {type:
// 'mark'} reports them, {type: 'stop'} reports them with the latency samples,
// {type: 'quiet', ms, max_ms} answers {type: 'quiet', waited_ms} once no
// frame arrived for ms (or max_ms passed), {type: 'close'} ends every socket
// and the thread.

import { createHash, createHmac, randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { parentPort, workerData } from 'node:worker_threads';

export interface SubscriberWorkerData {
  port: number;
  market_id: number;
  /** One entry per connection. */
  keys: { key_id: number; secret: string }[];
  /** Connections (the first ones) that stamp every message's arrival. */
  sample_connections: number;
}

export interface SubscriberReport {
  type: 'report';
  frames: number;
  bytes: number;
  /** Close frames or socket ends by code ('eof' when the socket ended without a close frame). */
  closes: Record<string, number>;
  /** Pairs (as_of_seq, arrival ns) of the sampling connections; stop only. */
  samples?: Float64Array;
  /** Thread id, for per-thread CPU accounting. */
  tid: number;
}

const d = workerData as SubscriberWorkerData;
let frames = 0;
let bytes = 0;
let lastFrameAt = 0;
const closes: Record<string, number> = {};
let samples = new Float64Array(1 << 16);
let sampleCount = 0;
const sockets: Socket[] = [];

/** This thread's kernel id ("/proc/thread-self" -> "<pid>/task/<tid>"); 0 off Linux. */
function tid(): number {
  try {
    return Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}

/** A masked client text (or pong) frame. */
function frame(payload: Buffer, opcode = 1): Buffer {
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? 2 : 4;
  const out = Buffer.alloc(head + 4 + len);
  out[0] = 0x80 | opcode;
  if (len < 126) out[1] = 0x80 | len;
  else {
    out[1] = 0x80 | 126;
    out.writeUInt16BE(len, 2);
  }
  mask.copy(out, head);
  for (let i = 0; i < len; i++) out[head + 4 + i] = payload[i]! ^ mask[i & 3]!;
  return out;
}

const SEQ_KEY = Buffer.from('"as_of_seq":"');

function open(index: number, key: { key_id: number; secret: string }): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = connect(d.port, '127.0.0.1');
    sockets.push(s);
    s.setNoDelay(true);
    const ts = String(Date.now());
    const sig = createHmac('sha256', Buffer.from(key.secret, 'base64')).update(`${ts}\nGET\n/v1/ws\n`).digest('base64');
    const wsKey = randomBytes(16).toString('base64');
    const accept = createHash('sha1').update(`${wsKey}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    const sampling = index < d.sample_connections;
    let handshake = true;
    let ready = false;
    let pending: Buffer | null = null;
    s.on('connect', () => {
      s.write(
        `GET /v1/ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ` +
          `${wsKey}\r\nSec-WebSocket-Version: 13\r\n` +
          `DX-ACCESS-KEY: ${key.key_id}\r\nDX-ACCESS-TIMESTAMP: ${ts}\r\nDX-ACCESS-SIGNATURE: ${sig}\r\n\r\n`,
      );
    });
    s.on('error', (e) => {
      if (!ready) reject(e);
    });
    s.on('end', () => {
      closes.eof = (closes.eof ?? 0) + 1;
    });
    s.on('data', (chunk: Buffer) => {
      let buf = pending === null ? chunk : Buffer.concat([pending, chunk]);
      pending = null;
      let p = 0;
      if (handshake) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) {
          pending = buf;
          return;
        }
        const head = buf.subarray(0, end).toString('latin1');
        if (!head.startsWith('HTTP/1.1 101') || !head.includes(accept)) {
          reject(new Error(`handshake refused: ${head.split('\r\n')[0]} ${buf.subarray(end + 4).toString('utf8').slice(0, 200)}`));
          s.destroy();
          return;
        }
        handshake = false;
        p = end + 4;
        s.write(
          frame(
            Buffer.from(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ids: [d.market_id] } })),
          ),
        );
      }
      const n = buf.length;
      while (p + 2 <= n) {
        const b0 = buf[p]!;
        let len = buf[p + 1]! & 0x7f;
        let h = 2;
        if (len === 126) {
          if (p + 4 > n) break;
          len = buf.readUInt16BE(p + 2);
          h = 4;
        } else if (len === 127) {
          if (p + 10 > n) break;
          len = Number(buf.readBigUInt64BE(p + 2));
          h = 10;
        }
        if (p + h + len > n) break;
        const op = b0 & 0x0f;
        const start = p + h;
        if (op === 1) {
          frames++;
          lastFrameAt = performance.now();
          bytes += len;
          if (!ready && buf[start + 9] === 0x6f /* the first data message, '{"type":"orderbook_snapshot"...' (a reply has '{"id"') */) {
            ready = true;
            resolve();
          } else if (sampling) {
            const k = buf.indexOf(SEQ_KEY, start);
            if (k >= 0 && k < start + len) {
              let seq = 0;
              for (let i = k + SEQ_KEY.length; buf[i] !== 0x22; i++) seq = seq * 10 + (buf[i]! - 48);
              if (sampleCount * 2 + 2 > samples.length) {
                const bigger = new Float64Array(samples.length * 2);
                bigger.set(samples);
                samples = bigger;
              }
              samples[sampleCount * 2] = seq;
              samples[sampleCount * 2 + 1] = Number(process.hrtime.bigint());
              sampleCount++;
            }
          }
        } else if (op === 9) {
          s.write(frame(Buffer.from(buf.subarray(start, start + len)), 0xa));
        } else if (op === 8) {
          const code = len >= 2 ? buf.readUInt16BE(start) : 1005;
          closes[String(code)] = (closes[String(code)] ?? 0) + 1;
        }
        p = start + len;
      }
      if (p < n) pending = Buffer.from(buf.subarray(p));
      buf = chunk; // drop the reference to a concatenated buffer
    });
  });
}

function report(withSamples: boolean): SubscriberReport {
  const r: SubscriberReport = { type: 'report', frames, bytes, closes: { ...closes }, tid: myTid };
  if (withSamples) r.samples = samples.slice(0, sampleCount * 2);
  return r;
}

const myTid = tid();

parentPort!.on('message', (msg: { type: string }) => {
  switch (msg.type) {
    case 'start':
      frames = 0;
      bytes = 0;
      sampleCount = 0;
      for (const k of Object.keys(closes)) delete closes[k];
      return;
    case 'mark':
      parentPort!.postMessage(report(false));
      return;
    case 'stop':
      parentPort!.postMessage(report(true));
      return;
    case 'quiet': {
      const { ms, max_ms } = msg as unknown as { ms: number; max_ms: number };
      const t0 = performance.now();
      const check = (): void => {
        const now = performance.now();
        if (now - lastFrameAt >= ms || now - t0 >= max_ms) parentPort!.postMessage({ type: 'quiet', waited_ms: Math.round(now - t0) });
        else setTimeout(check, 20);
      };
      check();
      return;
    }
    case 'close':
      for (const s of sockets) s.destroy();
      parentPort!.close();
      return;
  }
});

(async () => {
  // Connect in small waves: a thousand simultaneous handshakes only test the accept queue.
  const WAVE = 50;
  for (let i = 0; i < d.keys.length; i += WAVE) {
    await Promise.all(d.keys.slice(i, i + WAVE).map((k, j) => open(i + j, k)));
  }
  parentPort!.postMessage({ type: 'ready', connections: sockets.length, tid: myTid });
})().catch((e: Error) => parentPort!.postMessage({ type: 'error', message: e.message }));
