// The console's reading of GET /metrics (src/web/console/metrics.ts) on a
// real exchange's exposition: gauges, request rate, ring occupancy and the
// per-route latency table from histogram deltas. DOM-free, so it runs in
// `npm test`.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { MetricsHistory, parseProm } from '../../src/web/console/metrics.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange();
});

after(async () => {
  await tx.stop();
});

test('console metrics: the exposition parses into samples with labels', async () => {
  const text = await tx.admin.metrics();
  const s = parseProm(text);
  const seq = s.find((x) => x.name === 'dx_engine_seq');
  assert.ok(seq && seq.value >= 0);
  const ring = s.find((x) => x.name === 'dx_command_ring_capacity_bytes' && x.labels.producer === 'gateway-0');
  assert.ok(ring && ring.value > 0, 'labels are read');
  assert.deepEqual(parseProm('# HELP x y\nx_total{a="q\\"uote",b="2"} 3\nplain 4.5\n'), [
    { name: 'x_total', labels: { a: 'q"uote', b: '2' }, value: 3 }, { name: 'plain', labels: {}, value: 4.5 },
  ]);
});

test('console metrics: two scrapes give the request rate, the engine figures and latency by route', async () => {
  const h = new MetricsHistory(5);
  const t0 = Date.now();
  h.add(await tx.admin.metrics(), t0);
  const k = await newAccount(tx);
  for (let i = 0; i < 20; i++) await k.client.balance();
  const p = h.add(await tx.admin.metrics(), t0 + 2000);
  const health = await tx.admin.health();
  assert.equal(p.engine_seq, Number(health.seq));
  assert.ok(p.requests_per_s >= 20 / 2, `at least 20 requests in 2 s, got ${p.requests_per_s}/s`);
  assert.ok(p.command_ring_pct >= 0 && p.command_ring_pct <= 100);
  const balance = h.routes.find((r) => r.route === 'rest/get_balance');
  assert.ok(balance, `rest/get_balance in ${JSON.stringify(h.routes.map((r) => r.route))}`);
  assert.ok(balance.per_s >= 10 && balance.p99_ms !== null && balance.p99_ms > 0 && balance.mean_ms > 0);
  assert.ok(p.p99['rest/get_balance']! > 0);
  assert.equal(h.points.length, 2);
  for (let i = 0; i < 6; i++) h.add(await tx.admin.metrics(), t0 + 3000 + i * 1000);
  assert.equal(h.points.length, 5, 'keeps the last `keep` points');
});
