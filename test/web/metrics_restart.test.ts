// The console's charts across an exchange restart (src/web/console/metrics.ts):
// the operator token is kept in data/admin-token, so an open console scrapes
// the restarted exchange, whose counters start again from zero. A counter that
// went down was reset (as Prometheus' rate() reads it): the figures count from
// zero, never a negative rate, and the routes still answering stay listed.
// DOM-free, so it runs in `npm test`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MetricsHistory } from '../../src/web/console/metrics.js';

/** A scrape with `n` get_balance answers so far, all under 64 µs, from a process started at `start`. */
function exposition(n: number, start: number): string {
  return [
    '# HELP dx_http_responses_total x',
    '# TYPE dx_http_responses_total counter',
    `dx_http_responses_total{status="200",code=""} ${n}`,
    '# HELP dx_http_request_duration_seconds x',
    '# TYPE dx_http_request_duration_seconds histogram',
    `dx_http_request_duration_seconds_bucket{lane="rest",route="get_balance",le="0.000064"} ${n}`,
    `dx_http_request_duration_seconds_bucket{lane="rest",route="get_balance",le="+Inf"} ${n}`,
    `dx_http_request_duration_seconds_sum{lane="rest",route="get_balance"} ${n * 0.00005}`,
    `dx_http_request_duration_seconds_count{lane="rest",route="get_balance"} ${n}`,
    '# HELP process_start_time_seconds x',
    '# TYPE process_start_time_seconds gauge',
    `process_start_time_seconds ${start}`,
    '',
  ].join('\n');
}

test('console metrics: after the exchange restarts, the request rate is not negative and the busy route stays in the table', () => {
  const h = new MetricsHistory();
  const t0 = 1_700_000_000_000;
  h.add(exposition(50_000, 1_699_990_000), t0);
  h.add(exposition(51_000, 1_699_990_000), t0 + 1000);
  // Restarted: 100 answers in the new process's first second.
  const p = h.add(exposition(100, 1_700_000_001), t0 + 2000);
  assert.ok(p.requests_per_s >= 0, `HTTP requests/s ${p.requests_per_s}`);
  assert.equal(p.p99['rest/get_balance'], 0.064, 'p99 of the answers since the restart');
  assert.deepEqual(h.routes.map((r) => r.route), ['rest/get_balance'], 'the route answering since the restart is listed');
});
