// The benchmark report and the profile summary on hand-made inputs: peers
// side by side with ratios, spread flags, targets met / not met / not
// measured, missing benchmarks named; a CPU profile's self and total time
// (a recursive function counted once per sample).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { summarize, type CpuProfile } from '../support/bench/cpuprofile.js';
import type { BenchResult } from '../support/bench/result.js';
import { fmt, renderReport } from '../support/bench/report.js';

const MACHINE = { cpus: 2, model: 'test cpu', mem_gib: 4 };

function result(
  name: string,
  metrics: Record<string, number>,
  peers: Record<string, Record<string, number>> = {},
  ratios: Record<string, number> = {},
  notes: string[] = [],
): BenchResult {
  return {
    name,
    node: 'v20.0.0',
    machine: MACHINE,
    workload: `${name} workload`,
    metrics,
    peers,
    ratios,
    notes,
    date: '2026-01-01T00:00:00.000Z',
    quick: false,
  };
}

test('report: peers of one run sit beside our figures, with min-max, ratios and a spread flag', () => {
  const text = renderReport(
    [
      result(
        'gateway_place',
        { placements_per_s: 20000, placements_per_s_min: 15000, placements_per_s_max: 21000, p99_us: 1500, p999_us: 4000 },
        { fastify_place: { placements_per_s: 4000, p99_us: 9000 }, uws_hello: { requests_per_s: 45000 } },
        { vs_uws_hello: 0.444, vs_fastify_place: 5 },
      ),
    ],
    ['gateway_place', 'durable_place'],
  );
  const row = text.split('\n').find((l) => l.startsWith('| placements/s'))!;
  assert.match(row, /20 k\/s \[15 k\/s – 21 k\/s\] ⚠ \| 4,000\/s \| 45 k\/s/);
  assert.match(text, /`vs_fastify_place` 5x/);
  assert.match(text, /runs spread over 10%: placements\/s, closed loop \(2xx\)/);
  assert.match(text, /Not run \(no result file\): `durable_place`/);
  assert.match(text, /\| durable_place \| placement p99 <= 2 ms at half of peak, fsync on \| – \| not measured \|/);
  assert.match(text, /gateway_place \(durability none: reference\) \| placements >= 40% of the uWS hello-world ceiling \| 44.4% \| met \|/);
});

test("report: engine targets are checked against the run's own figures", () => {
  const text = renderReport(
    [
      result(
        'engine_match',
        { commands_per_s: 12e6, p99_ns: 900, p999_ns: 2500, gc_count_timed: 0 },
        { nodejs_order_book: { commands_per_s: 1e6 } },
        { vs_nodejs_order_book: 12 },
      ),
      result('engine_scale', {
        o1k_m10_a10k_commands_per_s: 3e6,
        o1k_m10_a10k_resting_orders: 1000,
        o1k_m10_a10k_markets: 10,
        o1k_m10_a10k_accounts: 10000,
        ratio_1m_orders_1000_markets_vs_1k: 0.5,
        max_command_ns: 1_400_000,
        max_command_cpu_ns: 400_000,
        bytes_per_resting_order: 150,
      }),
    ],
    [],
  );
  assert.match(text, /\| engine_match \| >= 5,000,000 commands\/s with full features \| 12 M\/s \| met \|/);
  assert.match(text, /\| engine_match \| p99 <= 1 µs, p99.9 <= 3 µs \| 900 ns \/ 2.5 µs \| met \|/);
  assert.match(text, /\| engine_match \| >= 40x nodejs-order-book \(same run\) \| 12x \| \*\*NOT met\*\* \|/);
  assert.match(
    text,
    /\| engine_scale \| at 1 M resting orders and 1,000 markets, >= 70% of the 1 k-order throughput \| 50% \| \*\*NOT met\*\* \|/,
  );
  assert.match(
    text,
    /\| engine_scale \| no single command over 1 ms of CPU at any size \(the wall clock also counts [^|]*\| 400 µs \| met \|/,
  );
  assert.match(text, /\| 1,000 orders, 10 markets, 10,000 accounts: commands\/s \| 3 M\/s/);
});

test('report: issue 13 targets are checked against the disk floor and the hello CPU of the same run', () => {
  const text = renderReport(
    [
      result(
        'durable_place',
        {
          disk_fdatasync_4k_p50_us: 300,
          disk_fdatasync_4k_p99_us: 500,
          server_p99_us_1pct: 1400,
          server_p999_us_1pct: 3600,
          server_p99_us_10pct: 1600,
          server_p99_us_50pct: 2400,
          client_p99_us_10pct: 3100,
        },
        {},
        { vs_uws_hello_wrk: 0.25 },
      ),
      result('lone_place', { server_p50_us_none: 90, server_p99_us_none: 320, server_p50_us_fsync: 420, disk_fdatasync_4k_p50_us: 300 }),
      result('gateway_place', {
        place_cpu_vs_hello: 2.4,
        place_server_cpu_us_per_req: 24,
        hello_server_cpu_us_per_req: 10,
        read_cpu_vs_hello: 1.6,
        read_server_cpu_us_per_req: 16,
      }),
      result('idle', { idle_cpu_pct: 0.5 }),
    ],
    [],
  );
  const row = (target: string): string => text.split('\n').find((l) => l.includes(target))!;
  assert.match(row('server-side p99 at 1% of peak'), /1,500 µs\) \| 1,400 µs \| met \|/);
  assert.match(row('server-side p99.9 at 1% of peak'), /3,500 µs\) \| 3,600 µs \| \*\*NOT met\*\* \|/);
  assert.match(row('server-side p99 at 10% of peak'), /\*\*NOT met\*\*/);
  assert.match(row('server-side p99 at 25% of peak'), /not measured/);
  assert.match(row('server-side p99 at 50% of peak'), /2,500 µs\) \| 2,400 µs \| met \|/);
  assert.match(row('client-side p99 at 10% of peak'), /3,100 µs \| \*\*NOT met\*\*/);
  assert.match(row('measured with wrk'), /25% \| \*\*NOT met\*\*/);
  assert.match(row('durability none: server-side p50'), /90 µs \| met/);
  assert.match(row('durability none: server-side p99'), /320 µs \| \*\*NOT met\*\*/);
  assert.match(row('fsync: server-side p50'), /\(400 µs\) \| 420 µs \| \*\*NOT met\*\*/);
  assert.match(row('CPU per placement'), /2.4x \(24 \/ 10 µs\) \| met/);
  assert.match(row('CPU per read'), /1.6x \(16 \/ 10 µs\) \| \*\*NOT met\*\*/);
  assert.match(row('idle exchange'), /0.5% \| met/);
});

test('report: units follow the metric suffix', () => {
  assert.equal(fmt(1_234_567, 'rate'), '1.23 M/s');
  assert.equal(fmt(950, 'ns'), '950 ns');
  assert.equal(fmt(1500, 'us'), '1.5 ms');
  assert.equal(fmt(2.5, 'ms'), '2.5 ms');
  assert.equal(fmt(NaN, 'rate'), '–');
});

test('profile summary: self time at the leaf, total time once per sample even through recursion', () => {
  const frame = (id: number, functionName: string, children: number[] = []): CpuProfile['nodes'][number] => ({
    id,
    callFrame: {
      functionName,
      scriptId: '1',
      url: functionName === '(root)' ? '' : 'file:///repo/dist/src/x.js',
      lineNumber: id,
      columnNumber: 0,
    },
    children,
  });
  // root -> a -> b -> a(again, same function) ; root -> c
  const nodes = [
    frame(1, '(root)', [2, 5]),
    frame(2, 'a', [3]),
    frame(3, 'b', [4]),
    { ...frame(4, 'a'), callFrame: { ...frame(2, 'a').callFrame } },
    frame(5, 'c'),
  ];
  const p: CpuProfile = { nodes, startTime: 0, endTime: 400, samples: [4, 4, 3, 5], timeDeltas: [0, 100, 100, 100] };
  const s = summarize(p, '/repo');
  const a = s.rows.find((r) => r.name === 'a')!;
  const b = s.rows.find((r) => r.name === 'b')!;
  const c = s.rows.find((r) => r.name === 'c')!;
  // Sample i lasts until sample i+1 (100 us each; the last one gets the mean, 100 us).
  assert.equal(a.self_ms, 0.2);
  assert.equal(a.total_ms, 0.3); // three samples have a on the stack, the recursion is not counted twice
  assert.equal(b.self_ms, 0.1);
  assert.equal(b.total_ms, 0.3);
  assert.equal(c.self_ms, 0.1);
  assert.equal(a.where, 'dist/src/x.js:3');
  assert.equal(s.sampled_ms, 0.4);
});
