// GET /metrics: the Prometheus text exposition of the control plane, merged
// across threads. A unit part drives the slices directly; the black-box part
// runs an exchange with two gateway threads, makes requests whose counts it
// knows (successes, 401s, 429s), pauses the engine to hold a request, and
// reads the counters back.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { StageTimes } from '../../src/gateway/core.js';
import { allocateMetrics, MetricsRegistry, type MetricsSpec } from '../../src/metrics/metrics.js';
import type { LatencyReport } from '../../src/wire/control_plane.js';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, raw, signedRaw } from '../support/harness.js';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses the text format strictly enough to catch malformed output: HELP and TYPE before samples, one family at a time. */
function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  assert.ok(text.endsWith('\n'), 'the exposition ends with a newline');
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  let family = '';
  for (const line of text.slice(0, -1).split('\n')) {
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) \S.*$/.exec(line);
    if (m) {
      assert.ok(!types.has(m[1]!), `family ${m[1]} appears once`);
      family = m[1]!;
      continue;
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram)$/.exec(line);
    if (m) {
      assert.equal(m[1], family, 'TYPE follows its HELP');
      types.set(m[1]!, m[2]!);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|\+Inf)$/.exec(line);
    assert.ok(m, `a sample line: ${JSON.stringify(line)}`);
    const name = m[1]!;
    assert.ok(
      name === family || (types.get(family) === 'histogram' && /^(.*)_(bucket|sum|count)$/.exec(name)?.[1] === family),
      `${name} belongs to family ${family}`,
    );
    const labels: Record<string, string> = {};
    if (m[2])
      for (const kv of m[2].match(/[a-z_]+="(?:[^"\\]|\\.)*"/g) ?? [])
        labels[kv.slice(0, kv.indexOf('='))] = kv.slice(kv.indexOf('=') + 2, -1);
    samples.push({ name, labels, value: m[3] === '+Inf' ? Infinity : Number(m[3]) });
  }
  return { samples, types };
}

function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const s = samples.find((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  return s?.value;
}

/** Stage times of a request answered `total` µs after its head, passing no other stage (as a refusal before verification). */
function took(total: number): StageTimes {
  return { tHead: 1000, tVerified: NaN, tPublished: NaN, tSequenced: NaN, tDurable: NaN, tApplied: NaN, tReplied: 1000 + total };
}

test('metrics registry: counts from two slices are merged; buckets are cumulative and end at +Inf = count', () => {
  const spec: MetricsSpec = {
    lanes: [{ lane: 'admin', routes: ['health'] }, { lane: 'rest', routes: ['get_balance', 'place_order'] }],
    slices: [{ name: 'control', lane: 'admin' }, { name: 'gw0', lane: 'rest' }, { name: 'gw1', lane: 'rest' }],
  };
  const reg = new MetricsRegistry(allocateMetrics(spec), spec, {});
  const g0 = reg.thread(1);
  const g1 = reg.thread(2);
  g0.onResponse('get_balance', 200, null, took(80));
  g1.onResponse('get_balance', 200, null, took(3000));
  g1.onResponse('get_balance', 429, 'rate_limited', took(50));
  g0.onResponse('place_order', 201, null, took(700_000));
  g0.onResponse('', 404, 'not_found', took(10));
  g1.onResponse('no_such_route_name', 200, null, took(10));
  g0.wsConnections(+3);
  g1.wsConnections(+2);
  g1.wsConnections(-1);
  const { samples, types } = parse(reg.render());
  assert.equal(types.get('dx_http_request_duration_seconds'), 'histogram');
  assert.equal(value(samples, 'dx_http_request_duration_seconds_count', { lane: 'rest', route: 'get_balance' }), 3);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'get_balance', le: '0.000064' }), 1, '0.05 ms');
  assert.equal(
    value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'get_balance', le: '0.000096' }),
    2,
    '0.08 ms and 0.05 ms',
  );
  assert.equal(value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'get_balance', le: '0.002048' }), 2);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'get_balance', le: '0.003072' }), 3);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'get_balance', le: '+Inf' }), 3);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'place_order', le: '0.524288' }), 0);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_bucket', { route: 'place_order', le: '0.786432' }), 1);
  assert.ok(Math.abs(value(samples, 'dx_http_request_duration_seconds_sum', { route: 'place_order' })! - 0.7) < 1e-9);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_count', { lane: 'rest', route: '(unmatched)' }), 1);
  assert.equal(value(samples, 'dx_http_request_duration_seconds_count', { lane: 'rest', route: '(other)' }), 1);
  assert.equal(
    value(samples, 'dx_http_request_duration_seconds_count', { lane: 'admin', route: 'health' }),
    undefined,
    'routes never called are left out',
  );
  assert.equal(value(samples, 'dx_http_responses_total', { status: '200', code: '' }), 3);
  assert.equal(value(samples, 'dx_http_responses_total', { status: '201', code: '' }), 1);
  assert.equal(value(samples, 'dx_http_responses_total', { status: '429', code: 'rate_limited' }), 1);
  assert.equal(value(samples, 'dx_http_responses_total', { status: '404', code: 'not_found' }), 1);
  assert.equal(value(samples, 'dx_rate_limited_total'), 1);
  assert.equal(value(samples, 'dx_ws_connections'), 4);
  // Buckets never decrease.
  for (const route of ['get_balance', 'place_order']) {
    const b = samples.filter((s) => s.name === 'dx_http_request_duration_seconds_bucket' && s.labels.route === route).map((s) => s.value);
    assert.deepEqual([...b].sort((x, y) => x - y), b, `${route} buckets are cumulative`);
  }
});

test('metrics registry: a sequenced request is split into its stages, which add up to the whole', () => {
  const spec: MetricsSpec = { lanes: [{ lane: 'rest', routes: ['place_order', 'get_balance'] }], slices: [{ name: 'gw0', lane: 'rest' }] };
  const reg = new MetricsRegistry(allocateMetrics(spec), spec, {});
  const g = reg.thread(0);
  // head 0, verified +40, published +10, sequenced +100, durable +300, applied +50, replied +20 µs.
  g.onResponse('place_order', 201, null, {
    tHead: 5000,
    tVerified: 5040,
    tPublished: 5050,
    tSequenced: 5150,
    tDurable: 5450,
    tApplied: 5500,
    tReplied: 5520,
  });
  // A read: verified, then answered.
  g.onResponse('get_balance', 200, null, {
    tHead: 0,
    tVerified: 30,
    tPublished: NaN,
    tSequenced: NaN,
    tDurable: NaN,
    tApplied: NaN,
    tReplied: 45,
  });
  const report = reg.latency();
  const get = (route: string, stage: string): { count: number; sum_us: number } | undefined =>
    report.histograms.find((h) => h.route === route && h.stage === stage);
  const want: Record<string, number> = { total: 520, verify: 40, publish: 10, sequence: 100, durable: 300, apply: 50, reply: 20 };
  for (const [stage, us] of Object.entries(want))
    assert.deepEqual(get('place_order', stage), { ...get('place_order', stage), count: 1, sum_us: us }, stage);
  assert.equal(get('get_balance', 'verify')?.sum_us, 30);
  assert.equal(get('get_balance', 'reply')?.sum_us, 15);
  assert.equal(get('get_balance', 'sequence'), undefined, 'a read has no engine stages');
  const { samples, types } = parse(reg.render());
  assert.equal(types.get('dx_request_stage_seconds'), 'histogram');
  assert.equal(value(samples, 'dx_request_stage_seconds_count', { route: 'place_order', stage: 'durable' }), 1);
  assert.equal(value(samples, 'dx_request_stage_seconds_bucket', { route: 'place_order', stage: 'durable', le: '0.000256' }), 0);
  assert.equal(value(samples, 'dx_request_stage_seconds_bucket', { route: 'place_order', stage: 'durable', le: '0.000384' }), 1);
  assert.ok(Math.abs(value(samples, 'dx_request_stage_seconds_sum', { route: 'place_order', stage: 'sequence' })! - 0.0001) < 1e-12);
});

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ gateways: 2, response_budget_ms: 5000 });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

async function scrape(): Promise<Sample[]> {
  const r = await raw(tx.ex.admin_port, { method: 'GET', target: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8');
  return parse(r.text).samples;
}

test('GET /metrics: needs the operator token, and merges the gateway threads\' counts of responses, rate-limit refusals and ' +
  'latencies', async () => {
  const unauth = await raw(tx.ex.admin_port, { method: 'GET', target: '/metrics' });
  assert.equal(unauth.status, 401);
  assert.equal(unauth.json.error.code, 'unauthorized');

  const before_ = await scrape();
  const base = (name: string, labels: Record<string, string> = {}): number => value(before_, name, labels) ?? 0;
  const k = await newAccount(tx);
  // Reads on fresh connections, so the kernel spreads them over both gateway threads; burst 200, then 429s.
  const statuses: number[] = [];
  for (let i = 0; i < 400; i += 50) {
    const batch = await Promise.all(Array.from({ length: 50 }, () => signedRaw(tx.port, k, 'GET', '/v1/portfolio/balance')));
    statuses.push(...batch.map((r) => r.status));
  }
  const ok = statuses.filter((s) => s === 200).length;
  const limited = statuses.filter((s) => s === 429).length;
  assert.equal(ok + limited, 400);
  assert.ok(limited >= 20, `the read bucket ran dry (${limited} refusals)`);
  const bad = await signedRaw(tx.port, { keyId: k.keyId, secret: Buffer.alloc(32, 1).toString('base64') }, 'GET', '/v1/portfolio/balance');
  assert.equal(bad.status, 401);

  const after_ = await scrape();
  const grew = (name: string, labels: Record<string, string> = {}): number => (value(after_, name, labels) ?? 0) - base(name, labels);
  assert.equal(grew('dx_http_request_duration_seconds_count', { lane: 'rest', route: 'get_balance' }), 401);
  assert.equal(grew('dx_http_responses_total', { status: '429', code: 'rate_limited' }), limited);
  assert.equal(grew('dx_rate_limited_total'), limited);
  assert.equal(grew('dx_http_responses_total', { status: '401', code: 'unauthorized' }), 1);
  assert.ok(grew('dx_http_responses_total', { status: '200', code: '' }) >= ok, 'successes counted (the admin calls of the set-up too)');
  assert.ok(
    (value(after_, 'dx_http_request_duration_seconds_count', { lane: 'admin', route: 'create_account' }) ?? 0) >= 1,
    'control-plane requests are counted in their lane',
  );
  assert.ok((value(after_, 'dx_engine_seq') ?? 0) > 0);
  assert.ok((value(after_, 'dx_engine_commands_total') ?? 0) > 0);
  assert.ok(value(after_, 'dx_engine_commands_per_second') !== undefined);
  assert.ok(value(after_, 'dx_durable_seq') !== undefined, 'durable_seq is shown');
  assert.equal(value(after_, 'dx_ws_connections'), 0);
  for (const p of ['timer', 'control', 'gateway-0', 'gateway-1']) {
    assert.equal(value(after_, 'dx_command_ring_capacity_bytes', { producer: p }), 1 << 20, `ring of ${p}`);
  }
  assert.ok(after_.some((s) => s.name === 'dx_event_ring_lag_bytes'), 'event ring consumers are listed');
});

test('GET /metrics: the control plane counts its 405 answers as it counts every other answer', async () => {
  const before_ = await scrape();
  const labels = { status: '405', code: 'method_not_allowed' };
  const H = { authorization: `Bearer ${ADMIN_TOKEN}` };
  for (let i = 0; i < 3; i++) assert.equal((await raw(tx.ex.admin_port, { method: 'DELETE', target: '/metrics', headers: H })).status, 405);
  const count = (samples: Sample[]): number => value(samples, 'dx_http_responses_total', labels) ?? 0;
  assert.equal(count(await scrape()) - count(before_), 3);
});

test('GET /metrics: a request held by a paused engine shows as engine lag and held requests', async () => {
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  tx.ex.pipeline.control.setPaused(true);
  const held = k.client.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 10, qty: 1 });
  let lag = 0;
  let count = 0;
  const seen = await eventually(async () => {
    const s = await scrape();
    lag = value(s, 'dx_engine_lag_seconds') ?? 0;
    count = value(s, 'dx_held_requests') ?? 0;
    return lag >= 0.2 && count >= 1;
  }, 4000, 50);
  tx.ex.pipeline.control.setPaused(false);
  assert.ok(seen, `engine lag ${lag} s with ${count} held`);
  assert.equal((await held).status, 'resting', 'the held order is answered once the engine runs');
  assert.ok(await eventually(async () => (value(await scrape(), 'dx_engine_lag_seconds') ?? 1) === 0, 3000, 50), 'the lag falls back to 0');
});

test('GET /admin/latency: placements are timed through every stage across the threads, and the stages add up to the whole', async () => {
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  const read = async (): Promise<LatencyReport> => {
    const r = await raw(tx.ex.admin_port, { method: 'GET', target: '/admin/latency', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.equal(r.status, 200);
    return r.json as LatencyReport;
  };
  const sumOf = (rep: LatencyReport, stage: string): { count: number; sum_us: number } => {
    let count = 0;
    let sum = 0;
    for (const h of rep.histograms) {
      if (h.lane === 'rest' && h.route === 'place_order' && h.stage === stage) {
        count += h.count;
        sum += h.sum_us;
      }
    }
    return { count, sum_us: sum };
  };
  const before_ = await read();
  const n = 20;
  for (let i = 0; i < n; i++) await k.client.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 10 + (i % 5), qty: 1 });
  // The gateway records a request right after its reply is written, so the
  // last placement's figures may land a moment after the client has its answer.
  let after_ = await read();
  for (const until = Date.now() + 2000; sumOf(after_, 'total').count - sumOf(before_, 'total').count < n && Date.now() < until;) {
    await new Promise((r) => setTimeout(r, 5));
    after_ = await read();
  }
  const grew = (stage: string): { count: number; sum_us: number } => {
    const a = sumOf(after_, stage);
    const b = sumOf(before_, stage);
    return { count: a.count - b.count, sum_us: a.sum_us - b.sum_us };
  };
  const total = grew('total');
  assert.equal(total.count, n);
  let parts = 0;
  for (const stage of ['verify', 'publish', 'sequence', 'durable', 'apply', 'reply']) {
    const g = grew(stage);
    assert.equal(g.count, n, `every placement passed stage ${stage}`);
    parts += g.sum_us;
  }
  // Each stage is rounded to the µs; a negative one (clocks of two threads disagreeing) would count as 0 and break the sum.
  assert.ok(Math.abs(parts - total.sum_us) <= 4 * n, `stages ${parts} µs vs whole ${total.sum_us} µs`);
  assert.ok(after_.journal_fsync === null || after_.journal_fsync.count > 0);
  const text = (await raw(tx.ex.admin_port, { method: 'GET', target: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } }))
    .text;
  const { samples } = parse(text);
  assert.ok((value(samples, 'dx_request_stage_seconds_count', { lane: 'rest', route: 'place_order', stage: 'sequence' }) ?? 0) >= n);
});
