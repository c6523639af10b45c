// test/support/loadgen/ws_order_worker: the WebSocket order load of ws_orders, against a
// stand-in server (the `ws` package on 127.0.0.1) that answers every
// place_order with 201 but holds its answers during a stall at the start of
// the run. The open loop's client latency (ws_orders' *_half_peak_client_*)
// must count every placement the schedule made due, from its intended time,
// as the REST load generator does (test/support/loadgen: requests it could
// not send are recorded at their age), so that a stall is charged to every
// placement it delayed.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Worker } from 'node:worker_threads';
import { WebSocketServer, type WebSocket } from 'ws';
import type { OrderWorkerData, OrderWorkerReport } from '../support/loadgen/ws_order_worker.js';
import { Histogram } from '../support/loadgen/histogram.js';

const STALL_MS = 500;

test('ws_order_worker: the open loop records every due placement, also those a stall held back', { timeout: 30_000 }, async () => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise<void>((resolve) => wss.once('listening', () => resolve()));
  let stallUntil = 0;
  const held: { ws: WebSocket; id: number }[] = [];
  let maxHeld = 0;
  const answer = (ws: WebSocket, id: number): void => ws.send(`{"id":${id},"type":"order_result","status":201,"msg":{}}`);
  wss.on('connection', (ws) => {
    ws.on('message', (data: Buffer) => {
      const s = data.toString();
      for (const line of s.split('\n')) {
        const m = /^\{"id":([0-9]+),"cmd":"([a-z_]+)"/.exec(line);
        if (m === null) continue;
        const id = Number(m[1]);
        if (stallUntil === 0) {
          // The first placement starts the stall: its answers and every one after it wait until it ends.
          stallUntil = performance.now() + STALL_MS;
          setTimeout(() => {
            for (const h of held.splice(0)) answer(h.ws, h.id);
          }, STALL_MS);
        }
        if (performance.now() < stallUntil) maxHeld = Math.max(maxHeld, held.push({ ws, id }));
        else answer(ws, id);
      }
    });
  });
  const port = (wss.address() as { port: number }).port;
  const data: OrderWorkerData = {
    url: `ws://127.0.0.1:${port}`,
    mode: 'json',
    market_id: 1,
    keys: [{ key_id: 1, secret: Buffer.alloc(32, 1).toString('base64'), account_id: 1 }],
    layout_fingerprint: '',
    seed: 7,
    mid: 50,
    spread: 5,
    cancel_every: 1_000_000,
  };
  const w = new Worker(new URL('../support/loadgen/ws_order_worker.js', import.meta.url), { workerData: data });
  try {
    const next = (): Promise<{ type: string } & Partial<OrderWorkerReport>> =>
      new Promise((resolve, reject) => {
        w.once('message', resolve);
        w.once('error', reject);
      });
    assert.equal((await next()).type, 'ready');
    const reported = next();
    w.postMessage({ type: 'run', loop: 'open', window: 0, rate: 4000, duration_ms: 1000 });
    const r = (await reported) as OrderWorkerReport;
    const h = new Histogram();
    h.merge(r.latency);
    const due = r.sent + r.behind;
    assert.ok(due > 3500, `the schedule made ${due} placements due`);
    assert.ok(maxHeld >= 900, `the stall filled the connection's window (${maxHeld} answers held)`);
    assert.equal(
      h.total,
      due,
      `latency samples ${h.total} of ${due} due placements (sent ${r.sent}, behind ${r.behind}); p50 ${h.percentile(50)} us, ` +
        `p90 ${h.percentile(90)} us`,
    );
  } finally {
    await w.terminate();
    await new Promise<void>((resolve) => wss.close(() => resolve()));
  }
});
