// The load generator against a tiny node:http server on 127.0.0.1 (port 0)
// in this process: runs are bounded by their duration, counts add up, the
// signed mix signs correctly and cancels only its own orders, and open-loop
// latency is measured from the intended send time, so a server stall shows
// in the percentiles (while a closed loop hides it: coordinated omission).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import { after, before, test } from 'node:test';
import { parseArgs, runLoad, type LoadResult } from '../support/loadgen/loadgen.js';

const KEYS = [
  { keyId: 1, secret: Buffer.alloc(32, 1) },
  { keyId: 2, secret: Buffer.alloc(32, 2) },
];

interface ServerState {
  requests: number;
  badSignatures: number;
  unknownCancels: number;
  placed: Set<string>;
  /** Requests that arrived on a connection whose previous request was still unanswered. */
  pipelined: number;
  byRoute: Record<string, number>;
  /** Responses are held from stallFromMs to stallUntilMs after the first request. */
  stallFromMs: number;
  stallUntilMs: number;
  firstAt: number;
  held: (() => void)[];
}

let server: Server;
let base = '';
let st: ServerState;
let nextOrderId = 1000;

function reset(stallFromMs = Infinity, stallMs = 0): void {
  st = {
    requests: 0,
    badSignatures: 0,
    unknownCancels: 0,
    placed: new Set(),
    pipelined: 0,
    byRoute: {},
    stallFromMs,
    stallUntilMs: stallFromMs + stallMs,
    firstAt: 0,
    held: [],
  };
}

function answer(res: ServerResponse, status: number, body: string): void {
  const now = performance.now();
  const t = now - st.firstAt;
  const send = (): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(body);
  };
  if (t >= st.stallFromMs && t < st.stallUntilMs) {
    if (st.held.length === 0) {
      setTimeout(() => {
        const held = st.held;
        st.held = [];
        for (const f of held) f();
      }, st.stallUntilMs - t);
    }
    st.held.push(send);
  } else send();
}

before(async () => {
  reset();
  const busy = new WeakSet<object>();
  server = createServer((req, res) => {
    // node:http emits a pipelined request at once and queues its response,
    // so a request on a socket with one outstanding means the client pipelined.
    if (busy.has(req.socket)) st.pipelined++;
    busy.add(req.socket);
    res.on('finish', () => busy.delete(req.socket));
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      if (st.requests++ === 0) st.firstAt = performance.now();
      const route = `${req.method} ${req.url!.split('?')[0]!.replace(/\/[0-9]+(\/|$)/, '/{id}$1')}`;
      st.byRoute[route] = (st.byRoute[route] ?? 0) + 1;
      if (req.url === '/') return answer(res, 201, '{"hello":"world"}');
      const key = KEYS.find((k) => String(k.keyId) === req.headers['dx-access-key']);
      const ts = String(req.headers['dx-access-timestamp']);
      const want = key && createHmac('sha256', key.secret).update(`${ts}\n${req.method}\n${req.url}\n${body}`).digest('base64');
      if (!key || req.headers['dx-access-signature'] !== want || Math.abs(Number(ts) - Date.now()) > 5000) st.badSignatures++;
      if (req.method === 'POST' && req.url === '/v1/portfolio/orders') {
        const o = JSON.parse(body) as { client_order_id: string };
        const id = String(nextOrderId++);
        st.placed.add(id);
        return answer(
          res,
          201,
          JSON.stringify({
            order_id: id,
            client_order_id: o.client_order_id,
            status: 'resting',
            seq: id,
            filled_qty: 0,
            resting_qty: 1,
            fills: [],
          }),
        );
      }
      if (req.method === 'DELETE' && req.url === '/v1/portfolio/orders/batch') {
        const { order_ids } = JSON.parse(body) as { order_ids: string[] };
        for (const id of order_ids) if (!st.placed.delete(id)) st.unknownCancels++;
        return answer(res, 200, JSON.stringify({ results: order_ids.map((id) => ({ status: 'canceled', canceled_qty: 1, seq: id })) }));
      }
      answer(res, 200, '{"available":"0","reserved":"0","as_of_seq":"1"}');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function sumStatuses(r: LoadResult): number {
  return Object.values(r.statuses).reduce((a, b) => a + b, 0);
}

async function timed(run: () => Promise<LoadResult>): Promise<{ r: LoadResult; wallMs: number }> {
  const t0 = performance.now();
  const r = await run();
  return { r, wallMs: performance.now() - t0 };
}

test('loadgen: a closed loop over two workers and two keys stops on time, signs correctly and cancels only its own orders', async () => {
  reset();
  const { r, wallMs } = await timed(() =>
    runLoad({
      baseUrl: base,
      keys: KEYS,
      markets: [1, 2, 3],
      mode: 'closed',
      connections: 4,
      workers: 2,
      durationMs: 1000,
      graceMs: 500,
      mix: { place: 50, cancel: 30, read: 20 },
      seed: 1,
    }),
  );
  assert.ok(wallMs < 1000 + 500 + 2000, `run took ${wallMs} ms`);
  assert.ok(r.elapsed_ms <= 1000 + 500 + 50, `elapsed ${r.elapsed_ms}`);
  assert.equal(r.workers, 2);
  assert.ok(r.completed > 50, `completed ${r.completed}`);
  assert.equal(r.errors, 0);
  assert.equal(sumStatuses(r), r.completed);
  assert.equal(r.completed, st.requests, 'every request the server answered was counted once');
  assert.equal(r.latency_ms.count, r.completed);
  assert.equal(st.badSignatures, 0);
  assert.equal(st.pipelined, 0, 'one request at a time per connection');
  assert.equal(st.unknownCancels, 0, 'cancels name only orders this run placed');
  assert.ok(
    (r.ops['place'] ?? 0) > 0 && (r.ops['cancel'] ?? 0) > 0 && (r.ops['read_book'] ?? 0) + (r.ops['read_balance'] ?? 0) > 0,
    JSON.stringify(r.ops),
  );
  assert.ok((r.statuses['201'] ?? 0) > 0 && (r.statuses['200'] ?? 0) > 0);
  assert.ok(r.latency_ms.p50 > 0 && r.latency_ms.p50 <= r.latency_ms.p90 && r.latency_ms.p99 <= r.latency_ms.max);
  assert.equal(r.generator_cpu.per_worker_ms.length, 2);
  assert.ok(r.generator_cpu.workers_ms > 0 && r.generator_cpu.process_ms > 0);
});

test('loadgen: an open loop sends exactly rate x duration requests on schedule', async () => {
  reset();
  const { r, wallMs } = await timed(() =>
    runLoad({
      baseUrl: base,
      keys: KEYS,
      markets: [1],
      mode: 'open',
      rate: 300,
      connections: 4,
      workers: 1,
      durationMs: 1000,
      graceMs: 500,
      mix: { place: 1, cancel: 1, read: 1 },
      seed: 2,
    }),
  );
  assert.ok(wallMs < 1000 + 500 + 2000, `run took ${wallMs} ms`);
  assert.equal(r.sent + r.unsent, 300);
  // Exact: every due request is sent or counted unsent, every sent one is
  // answered or an error, and each is timed. Loose: how many got out, since
  // `npm test` runs files two at a time on two cores and a machine busy with
  // other work starves the generator's event loop (seen: 244 of 300 out in
  // time); the bounds only show an open loop at about the rate, never above it.
  assert.ok(r.completed >= 150, `completed ${r.completed}`);
  assert.equal(r.completed + r.errors, r.sent);
  assert.equal(r.latency_ms.count, r.completed + r.unsent);
  assert.ok(r.throughput_per_s >= 150 && r.throughput_per_s < 345, `throughput ${r.throughput_per_s}`);
  assert.equal(st.badSignatures, 0);
  assert.equal(r.target_rate_per_s, 300);
});

test('loadgen: signing ahead (closed loop): every request verifies, the run starts after the signing, cancels are built when ' +
  'sent', async () => {
  reset();
  let started = 0;
  let startedAt = 0;
  const t0 = performance.now();
  const r = await runLoad({
    baseUrl: base,
    keys: KEYS,
    markets: [1, 2],
    mode: 'closed',
    connections: 4,
    workers: 2,
    durationMs: 800,
    graceMs: 500,
    mix: { place: 3, cancel: 1, read: 1 },
    seed: 5,
    presign: true,
    expectedRate: 400,
    onStart: () => {
      started++;
      startedAt = performance.now();
      assert.equal(st.requests, 0, 'nothing is sent before every worker has signed ahead');
    },
  });
  assert.equal(started, 1);
  assert.ok(startedAt > t0);
  assert.equal(st.badSignatures, 0);
  assert.equal(st.unknownCancels, 0, 'cancels name only orders this run placed');
  assert.equal(r.errors, 0);
  // 400/s x 0.8 s x 1.25 headroom over 2 shards (+1 each).
  assert.equal(r.presign.signed, 2 * (Math.ceil(200 * 0.8 * 1.25) + 1));
  assert.ok(r.presign.cpu_ms >= 0);
  // The server here answers thousands a second, more than the 400/s signed for: the rest are signed when sent, and counted.
  assert.ok(r.completed > r.presign.signed, `completed ${r.completed}, signed ${r.presign.signed}`);
  assert.ok(r.presign.inline >= r.completed - r.presign.signed, `inline ${r.presign.inline}`);
  assert.ok((r.ops['cancel'] ?? 0) > 0 && (r.ops['place'] ?? 0) > 0, JSON.stringify(r.ops));
});

test('loadgen: signing ahead (open loop): every due request is signed for its due time and verifies', async () => {
  reset();
  let started = 0;
  const r = await runLoad({
    baseUrl: base,
    keys: KEYS,
    markets: [1],
    mode: 'open',
    rate: 300,
    connections: 4,
    workers: 1,
    durationMs: 1000,
    graceMs: 500,
    mix: { place: 1, cancel: 0, read: 1 },
    seed: 6,
    presign: true,
    onStart: () => started++,
  });
  assert.equal(started, 1);
  assert.equal(r.sent + r.unsent, 300);
  assert.equal(r.presign.signed, 301);
  assert.equal(r.presign.inline, 0, 'every request sent was signed ahead');
  assert.equal(st.badSignatures, 0);
  assert.ok(r.completed >= 270, `completed ${r.completed}`);
});

test('loadgen: open-loop latency includes queueing behind a server stall; a closed loop hides it', async () => {
  const STALL_MS = 500;
  reset(300, STALL_MS);
  const open = await runLoad({
    baseUrl: base,
    keys: [],
    markets: [],
    mode: 'open',
    rate: 400,
    connections: 4,
    workers: 1,
    durationMs: 1500,
    graceMs: 1000,
    mix: { place: 0, cancel: 0, read: 1 },
    path: 'hello',
  });
  assert.equal(open.errors, 0);
  assert.equal(st.pipelined, 0, 'a stalled connection gets no second request');
  // About 200 requests fall due during the stall and wait up to 500 ms behind
  // it; their latency counts from when they were due.
  assert.ok(open.latency_ms.p99 >= 0.7 * STALL_MS, `open p99 ${open.latency_ms.p99}`);
  assert.ok(open.latency_ms.p90 >= 0.2 * STALL_MS, `open p90 ${open.latency_ms.p90}`);
  assert.ok(open.latency_ms.max >= 0.9 * STALL_MS, `open max ${open.latency_ms.max}`);

  reset(300, STALL_MS);
  const closed = await runLoad({
    baseUrl: base,
    keys: [],
    markets: [],
    mode: 'closed',
    connections: 4,
    workers: 1,
    durationMs: 1500,
    graceMs: 1000,
    mix: { place: 0, cancel: 0, read: 1 },
    path: 'hello',
  });
  // Only the 4 requests in flight see the stall; the loop simply sends less.
  assert.ok(closed.latency_ms.max >= 0.7 * STALL_MS, `closed max ${closed.latency_ms.max}`);
  assert.ok(closed.latency_ms.p99 < open.latency_ms.p99 / 2, `closed p99 ${closed.latency_ms.p99} vs open ${open.latency_ms.p99}`);
});

test('loadgen: node:http and fetch transports work too (hello path)', async () => {
  for (const transport of ['http', 'fetch'] as const) {
    reset();
    const r = await runLoad({
      baseUrl: base,
      keys: [],
      markets: [],
      mode: 'closed',
      connections: 2,
      workers: 1,
      durationMs: 300,
      graceMs: 300,
      mix: { place: 0, cancel: 0, read: 1 },
      path: 'hello',
      transport,
    });
    assert.equal(r.transport, transport);
    assert.ok(r.completed > 5, `${transport}: ${r.completed}`);
    assert.equal(r.statuses['201'], r.completed);
    assert.equal(st.requests, r.completed);
    assert.equal(st.pipelined, 0, transport);
  }
});

test('loadgen: refuses a non-loopback target and parses its command line', async () => {
  await assert.rejects(
    runLoad({
      baseUrl: 'http://192.0.2.1:8080',
      keys: [],
      markets: [],
      mode: 'closed',
      connections: 1,
      durationMs: 10,
      mix: { place: 0, cancel: 0, read: 1 },
      path: 'hello',
    }),
    /non-loopback/,
  );
  const o = parseArgs([
    '--url',
    'http://127.0.0.1:8080',
    '--key',
    `7:${Buffer.alloc(32, 9).toString('base64')}`,
    '--markets',
    '1,2',
    '--mode',
    'open',
    '--rate',
    '500',
    '--connections',
    '8',
    '--duration',
    '250ms',
    '--mix',
    'place=5,cancel=1,read=4',
    '--transport',
    'http',
  ]);
  assert.deepEqual(
    [o.baseUrl, o.keys[0]!.keyId, o.markets, o.mode, o.rate, o.connections, o.durationMs, o.mix, o.transport],
    ['http://127.0.0.1:8080', 7, [1, 2], 'open', 500, 8, 250, { place: 5, cancel: 1, read: 4 }, 'http'],
  );
  assert.throws(() => parseArgs(['--url']), /needs a value/);
  assert.throws(() => parseArgs(['--bogus']), /unknown flag/);
});
