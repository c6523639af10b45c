// report: renders bench/results/REPORT.md from the benchmarks' results
// (bench/report.ts reads the JSON files and writes the file; bench/run.ts
// calls it after its runs). Main thread of the bench runner.
//
// Per benchmark: the machine, Node version, date, workload, a table of our
// figures (median of the repeated runs with [min–max] where the benchmark
// repeated them) beside every peer measured in the same run, the ratios the
// run computed, and the flags: any `*spread_pct` above SPREAD_FLAG_PCT and
// every note of the benchmark that starts with "FLAG". A summary at the top
// checks the targets of issues 8, 13 and 15 (met / NOT met / not measured). Figures are
// copied from the JSON as measured; nothing here re-measures or asserts.

import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchResult } from './result.js';

/** Runs whose (max - min) / median exceeds this are flagged. */
export const SPREAD_FLAG_PCT = 10;

// ------------------------------------------------------------------ formatting

type Unit = 'rate' | 'ns' | 'us' | 'ms' | 'pct' | 'count' | 'mib' | 'x' | 'plain';

function unitOf(key: string): Unit {
  if (key.endsWith('_per_s')) return 'rate';
  if (key.endsWith('_ns')) return 'ns';
  if (key.endsWith('_us')) return 'us';
  if (key.endsWith('_ms')) return 'ms';
  if (key.endsWith('_pct')) return 'pct';
  if (key.endsWith('_mib')) return 'mib';
  if (key.endsWith('_count') || key.startsWith('gc_count')) return 'count';
  // A unit followed by a case or load suffix (server_p50_us_none, client_p99_us_10pct, server_cpu_pct_fsync, gc_ms_timed).
  const infix = /_(ns|us|ms|pct|mib)_[a-z0-9_]+$/.exec(key);
  if (infix !== null) return infix[1] as Unit;
  return 'plain';
}

function group(x: number, digits = 0): string {
  return x.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** A latency in ns, shown in the unit that keeps 3 significant digits. */
function latency(ns: number): string {
  if (ns < 1000) return `${group(ns)} ns`;
  if (ns < 1e6) return `${group(ns / 1000, ns < 1e4 ? 2 : 1)} µs`;
  if (ns < 1e9) return `${group(ns / 1e6, ns < 1e7 ? 2 : 1)} ms`;
  return `${group(ns / 1e9, 2)} s`;
}

export function fmt(x: number | undefined, unit: Unit): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  switch (unit) {
    case 'rate':
      if (Math.abs(x) >= 1e6) return `${group(x / 1e6, 2)} M/s`;
      if (Math.abs(x) >= 1e4) return `${group(x / 1e3, 1)} k/s`;
      return `${group(x, 0)}/s`;
    case 'ns':
      return latency(x);
    case 'us':
      return latency(x * 1e3);
    case 'ms':
      return latency(x * 1e6);
    case 'pct':
      return `${group(x, 1)}%`;
    case 'count':
      return group(x, 0);
    case 'mib':
      return `${group(x, 1)} MiB`;
    case 'x':
      return `${group(x, 2)}x`;
    case 'plain':
      return group(x, 3);
  }
}

/** Markdown table cell text: no pipes or newlines. */
function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

// ------------------------------------------------------------------ table specs

/** A metric key, or candidates tried in order (benchmarks written by others may name things slightly differently). */
type Key = string | readonly string[];

interface Row {
  label: string;
  /** Our metric (result.metrics). */
  ours?: Key;
  /** Explicit min/max keys; default `<key>_min` / `<key>_max`. */
  oursMin?: string;
  oursMax?: string;
  /**
   * Per peer: its metric (result.peers[peer]); a key starting with "@" is read from our metrics instead (a benchmark that kept the peer's
   * figures there).
   */
  peers?: Record<string, Key>;
  unit?: Unit;
}

interface Spec {
  /** Column heading of our figures. */
  ours: string;
  /** Peer column headings by peer key, in column order (peers not listed get a column named by their key). */
  peers: Record<string, string>;
  rows: Row[];
}

const LAT_ROWS = (prefix: string, suffix: string, peers: readonly string[], label = 'open loop'): Row[] =>
  (['p50', 'p99', 'p999', 'max'] as const).map((p) => ({
    label: `${label} ${p === 'p999' ? 'p99.9' : p}`,
    ours: `${prefix}${p}${suffix}`,
    peers: Object.fromEntries(peers.map((peer) => [peer, `${p}${suffix}`])),
  }));

const PLACE_ROWS = (): Row[] => [
  {
    label: 'placements/s, closed loop (2xx)',
    ours: 'placements_per_s',
    peers: { fastify_place: 'placements_per_s', uws_hello: 'requests_per_s' },
  },
  {
    label: 'connections',
    ours: ['exchange_connections', 'connections'],
    peers: { fastify_place: 'connections', uws_hello: 'connections' },
    unit: 'count',
  },
  { label: 'open-loop rate (half of own peak)', ours: 'open_rate_per_s', peers: { fastify_place: 'open_rate_per_s' } },
  ...LAT_ROWS('', '_us', ['fastify_place']),
  {
    label: 'server CPU, closed loop',
    ours: 'place_server_cpu_pct',
    peers: { fastify_place: 'server_cpu_pct', uws_hello: 'server_cpu_pct' },
  },
  {
    label: 'load generator CPU, closed loop',
    ours: 'place_generator_cpu_pct',
    peers: { fastify_place: 'generator_cpu_pct', uws_hello: 'generator_cpu_pct' },
  },
  {
    label: 'server CPU µs per request',
    ours: 'place_server_cpu_us_per_req',
    peers: { fastify_place: 'server_cpu_us_per_req', uws_hello: 'server_cpu_us_per_req' },
    unit: 'plain',
  },
  {
    label: 'generator CPU µs per request',
    ours: 'place_generator_cpu_us_per_req',
    peers: { fastify_place: 'generator_cpu_us_per_req', uws_hello: 'generator_cpu_us_per_req' },
    unit: 'plain',
  },
  { label: 'server CPU, open loop', ours: 'open_server_cpu_pct', peers: { fastify_place: 'open_server_cpu_pct' } },
  { label: 'load generator CPU, open loop', ours: 'open_generator_cpu_pct', peers: { fastify_place: 'open_generator_cpu_pct' } },
  { label: 'reads/s (orderbook + balance), closed loop', ours: 'reads_per_s' },
  { label: 'server CPU µs per read', ours: 'read_server_cpu_us_per_req', unit: 'plain' },
  { label: 'uWS hello with wrk: requests/s', ours: 'hello_wrk_requests_per_s' },
  { label: 'uWS hello with wrk: server CPU µs per request', ours: 'hello_wrk_server_cpu_us_per_req', unit: 'plain' },
  { label: 'uWS hello with wrk: wrk CPU µs per request', ours: 'hello_wrk_generator_cpu_us_per_req', unit: 'plain' },
];

const SPECS: Record<string, Spec> = {
  engine_match: {
    ours: 'dx engine (decide, events written and applied)',
    peers: { nodejs_order_book: 'nodejs-order-book' },
    rows: [
      { label: 'commands/s', ours: 'commands_per_s', peers: { nodejs_order_book: 'commands_per_s' } },
      { label: 'commands per CPU second', ours: 'commands_per_cpu_s', peers: { nodejs_order_book: 'commands_per_cpu_s' } },
      ...(['p50', 'p99', 'p999', 'max'] as const).map(
        (p): Row => ({
          label: `latency ${p === 'p999' ? 'p99.9' : p}`,
          ours: `${p}_ns`,
          peers: { nodejs_order_book: `${p}_ns` },
        }),
      ),
      { label: 'GCs in timed runs', ours: 'gc_count_timed', peers: { nodejs_order_book: 'gc_count_timed' }, unit: 'count' },
      { label: 'GC time in timed runs', ours: 'gc_ms_timed', peers: { nodejs_order_book: 'gc_ms_timed' } },
      { label: 'heap growth in a timed run (max)', ours: 'heap_delta_max_mib' },
    ],
  },
  ring_handoff: {
    ours: 'SpscRing',
    peers: { worker_postmessage: 'worker postMessage' },
    rows: [
      {
        label: '64 B records/s, one way',
        ours: 'spsc_1p1c_64b_records_per_s',
        oursMin: 'spsc_1p1c_64b_min_records_per_s',
        oursMax: 'spsc_1p1c_64b_max_records_per_s',
      },
      {
        label: '64 B records/s, batches of 16',
        ours: 'spsc_1p1c_64b_batch16_records_per_s',
        oursMin: 'spsc_1p1c_64b_batch16_min_records_per_s',
        oursMax: 'spsc_1p1c_64b_batch16_max_records_per_s',
      },
      ...(['spin_spin', 'poll_spin', 'poll_parked', 'poll_parked_nospin'] as const).flatMap((v): Row[] =>
        (['p50', 'p99', 'p999'] as const).map((p) => ({
          label: `round trip ${v} ${p === 'p999' ? 'p99.9' : p}`,
          ours: `spsc_rtt_${v}_${p}_ns`,
          peers: { worker_postmessage: `rtt_${p}_ns` },
        })),
      ),
      { label: 'single-thread cost per record', ours: 'spsc_single_thread_64b_ns_per_record', unit: 'ns' },
    ],
  },
  gateway_place: {
    ours: 'dx (uWS gateway + rings + engine worker)',
    peers: { fastify_place: 'Fastify on node:http, same logic in-process', uws_hello: 'uWS hello-world (ceiling)' },
    rows: PLACE_ROWS(),
  },
  durable_place: {
    ours: 'dx, --durability fsync',
    peers: {
      durability_none_benchmarks_only: 'dx, --durability none (benchmarks only)',
      uws_hello: 'uWS hello-world (ceiling)',
      fastify_place: 'Fastify on node:http, same logic in-process',
    },
    rows: [
      {
        label: 'placements/s, closed loop (2xx)',
        ours: ['fsync_placements_per_s', 'durable_placements_per_s', 'placements_per_s'],
        peers: { durability_none_benchmarks_only: 'placements_per_s', uws_hello: 'requests_per_s', fastify_place: 'placements_per_s' },
      },
      {
        label: 'connections',
        ours: ['fsync_connections', 'connections'],
        peers: { durability_none_benchmarks_only: '@none_connections', uws_hello: 'connections', fastify_place: 'connections' },
        unit: 'count',
      },
      {
        label: 'open-loop rate (half of own peak)',
        ours: ['fsync_open_rate_per_s', 'open_rate_per_s'],
        peers: { durability_none_benchmarks_only: 'open_rate_per_s', fastify_place: 'open_rate_per_s' },
      },
      ...(['p50', 'p99', 'p999', 'max'] as const).map(
        (q): Row => ({
          label: `open loop ${q === 'p999' ? 'p99.9' : q}`,
          ours: [`fsync_${q}_us`, `${q}_us`],
          peers: { durability_none_benchmarks_only: q === 'max' ? '@none_max_us' : `${q}_us`, fastify_place: `${q}_us` },
        }),
      ),
      ...(['p50', 'p99', 'p999'] as const).map(
        (q): Row => ({
          label: `the disk alone: 4 KiB append + fdatasync ${q === 'p999' ? 'p99.9' : q}`,
          ours: `disk_fdatasync_4k_${q}_us`,
        }),
      ),
      ...(['p99', 'p999', 'max'] as const).map(
        (q): Row => ({
          label: `the disk over a long window (a sync every ms) ${q === 'p999' ? 'p99.9' : q}`,
          ours: `disk_window_fdatasync_4k_${q}_us`,
        }),
      ),
      { label: 'the disk over a long window: syncs over 10 ms per minute', ours: 'disk_window_stalls_per_min', unit: 'count' },
      { label: 'the disk: that window, seconds', ours: 'disk_window_s', unit: 'count' },
      ...([1, 10, 25, 50] as const).flatMap((pct) => [
        { label: `open loop at ${pct}% of peak: rate`, ours: `fsync_at_${pct}pct_rate_per_s` },
        ...(['p50', 'p99', 'p999'] as const).map(
          (q): Row => ({ label: `open loop at ${pct}% of peak ${q === 'p999' ? 'p99.9' : q}, client`, ours: `client_${q}_us_${pct}pct` }),
        ),
        ...(['p50', 'p99', 'p999', 'max'] as const).map(
          (q): Row => ({ label: `open loop at ${pct}% of peak ${q === 'p999' ? 'p99.9' : q}, server`, ours: `server_${q}_us_${pct}pct` }),
        ),
      ]),
      {
        label: 'server CPU, closed loop',
        ours: ['fsync_server_cpu_pct', 'place_server_cpu_pct'],
        peers: { durability_none_benchmarks_only: '@none_server_cpu_pct', uws_hello: 'server_cpu_pct', fastify_place: 'server_cpu_pct' },
      },
      {
        label: 'load generator CPU, closed loop',
        ours: ['fsync_generator_cpu_pct', 'place_generator_cpu_pct'],
        peers: {
          durability_none_benchmarks_only: '@none_generator_cpu_pct',
          uws_hello: 'generator_cpu_pct',
          fastify_place: 'generator_cpu_pct',
        },
      },
      { label: 'recovery, s per million journaled events (spawn to ready)', ours: 'recovery_s_per_million_events', unit: 'plain' },
      { label: 'replay alone, s per million events', ours: 'replay_s_per_million_events', unit: 'plain' },
      { label: 'start from a snapshot, spawn to ready', ours: 'from_snapshot_spawn_to_ready_ms', unit: 'ms' },
      { label: 'journal replayed (events)', ours: 'journal_events', unit: 'count' },
    ],
  },
  lone_place: {
    ours: 'dx, one placement at a time (server-side unless said)',
    peers: {},
    rows: [
      ...(['none', 'fsync', 'none_wait_spin', 'none_wait_backoff', 'none_wait_park'] as const).flatMap((c): Row[] => [
        { label: `${c}: server p50`, ours: `server_p50_us_${c}` },
        { label: `${c}: server p99`, ours: `server_p99_us_${c}` },
        { label: `${c}: server max`, ours: `server_max_us_${c}` },
        { label: `${c}: client p50`, ours: `client_p50_us_${c}` },
        { label: `${c}: client p99`, ours: `client_p99_us_${c}` },
        { label: `${c}: server CPU while placing`, ours: `server_cpu_pct_${c}` },
      ]),
      { label: 'the disk alone: 4 KiB append + fdatasync p50', ours: 'disk_fdatasync_4k_p50_us' },
      { label: 'the disk alone: 4 KiB append + fdatasync p99', ours: 'disk_fdatasync_4k_p99_us' },
    ],
  },
  idle: {
    ours: 'dx, idle (all threads)',
    peers: {},
    rows: [
      { label: 'idle CPU, default wait, 60 s', ours: 'idle_cpu_pct' },
      { label: 'idle CPU, --wait spin', ours: 'idle_cpu_pct_wait_spin' },
      { label: 'idle CPU, --wait backoff', ours: 'idle_cpu_pct_wait_backoff' },
      { label: 'idle CPU, --wait park', ours: 'idle_cpu_pct_wait_park' },
    ],
  },
  gateway_read: {
    ours: 'dx (uWS gateway, read model)',
    peers: { uws_hello: 'uWS hello-world (ceiling)' },
    rows: [
      { label: 'requests/s, closed loop (2xx)', ours: 'requests_per_s', peers: { uws_hello: 'requests_per_s' } },
      { label: 'of which reads/s', ours: 'reads_per_s' },
      { label: 'connections', ours: 'connections', peers: { uws_hello: 'connections' }, unit: 'count' },
      { label: 'open-loop rate (half of own peak)', ours: 'open_rate_per_s' },
      ...LAT_ROWS('', '_us', []),
      ...(['book', 'balance', 'orders', 'market', 'place'] as const).map(
        (op): Row => ({ label: `open loop p99, ${op}`, ours: `open_${op}_p99_us` }),
      ),
      { label: 'server CPU, closed loop', ours: 'server_cpu_pct', peers: { uws_hello: 'server_cpu_pct' } },
      { label: 'load generator CPU, closed loop', ours: 'generator_cpu_pct', peers: { uws_hello: 'generator_cpu_pct' } },
      { label: 'server CPU µs per request', ours: 'server_cpu_us_per_req', peers: { uws_hello: 'server_cpu_us_per_req' }, unit: 'plain' },
      {
        label: 'generator CPU µs per request',
        ours: 'generator_cpu_us_per_req',
        peers: { uws_hello: 'generator_cpu_us_per_req' },
        unit: 'plain',
      },
      { label: 'server CPU, open loop', ours: 'open_server_cpu_pct' },
      { label: 'load generator CPU, open loop', ours: 'open_generator_cpu_pct' },
    ],
  },
};

/** ws_fanout: one group of rows per subscriber count (metric keys `s<N>_...`). */
function wsFanoutSpec(r: BenchResult): Spec {
  const counts = [
    ...new Set(
      Object.keys(r.metrics)
        .map((k) => /^s([0-9]+)_/.exec(k)?.[1])
        .filter((x): x is string => x !== undefined),
    ),
  ]
    .map(Number)
    .sort((a, b) => b - a);
  const rows: Row[] = [];
  for (const n of counts) {
    const p = `s${n}_`;
    rows.push(
      { label: `${n} subscribers: messages delivered/s`, ours: `${p}delivered_msgs_per_s` },
      { label: `${n} subscribers: book deltas/s`, ours: `${p}deltas_per_s` },
      { label: `${n} subscribers: delivered % (worst run)`, ours: `${p}delivered_pct_min`, unit: 'pct' },
      ...(['p50', 'p99', 'p999', 'max'] as const).map(
        (q): Row => ({ label: `${n} subscribers: placement -> delta ${q === 'p999' ? 'p99.9' : q}`, ours: `${p}${q}_us` }),
      ),
      { label: `${n} subscribers: exchange CPU`, ours: `${p}server_cpu_pct` },
      { label: `${n} subscribers: gateway thread CPU`, ours: `${p}gateway_thread_cpu_pct` },
      { label: `${n} subscribers: client side CPU (subscribers + flow)`, ours: `${p}client_cpu_pct` },
    );
  }
  return { ours: 'dx WebSocket lane', peers: {}, rows };
}

/** engine_scale: one group of rows per case (metric keys `o<orders>_m<markets>_a<accounts>_...`), then recovery and snapshot. */
function engineScaleSpec(r: BenchResult): Spec {
  const caseOf = (k: string): string | undefined => /^(o[0-9]+[km]?_m[0-9]+_a[0-9]+[km]?)_commands_per_s$/.exec(k)?.[1];
  const cases = [
    ...new Set(
      Object.keys(r.metrics)
        .map(caseOf)
        .filter((x): x is string => x !== undefined),
    ),
  ];
  const rows: Row[] = [];
  for (const c of cases) {
    const m = r.metrics;
    const n = (k: string): string => group(m[`${c}_${k}`] ?? NaN);
    const label = `${n('resting_orders')} orders, ${n('markets')} markets, ${n('accounts')} accounts`;
    rows.push(
      { label: `${label}: commands/s`, ours: `${c}_commands_per_s` },
      ...(['p50', 'p99', 'p999', 'max'] as const).map(
        (q): Row => ({
          label: `${label}: ${q === 'p999' ? 'p99.9' : q}`,
          ours: `${c}_${q}_ns`,
        }),
      ),
    );
  }
  rows.push(
    { label: 'throughput at 1 M orders, 1,000 markets / at 1 k orders', ours: 'ratio_1m_orders_1000_markets_vs_1k', unit: 'x' },
    { label: 'worst single command (any case), wall clock', ours: 'max_command_ns' },
    { label: 'worst single command (any case), bounded by its CPU time', ours: 'max_command_cpu_ns' },
    { label: 'worst single command while tables grow (default sizes)', ours: 'growth_max_command_ns' },
    { label: 'resident bytes per resting order', ours: 'bytes_per_resting_order', unit: 'plain' },
    { label: 'resident bytes per account', ours: 'bytes_per_account', unit: 'plain' },
    { label: 'GCs over the long run', ours: 'gc_count_long_run', unit: 'count' },
    { label: 'journaled events (recovery case)', ours: 'journal_events', unit: 'count' },
    { label: 'recovery: plan (scan + checksums), s', ours: 'recovery_plan_s', unit: 'plain' },
    { label: 'recovery: replay into a read model, s', ours: 'recovery_replay_views_s', unit: 'plain' },
    { label: 'recovery: replay into the engine state, s', ours: 'recovery_replay_engine_s', unit: 'plain' },
    { label: 'snapshot of the read model: resting orders', ours: 'snapshot_resting_orders', unit: 'count' },
    { label: 'snapshot: encode, s', ours: 'snapshot_encode_s', unit: 'plain' },
    { label: 'snapshot: write + fsync, s', ours: 'snapshot_write_s', unit: 'plain' },
    { label: 'snapshot: size', ours: 'snapshot_mib', unit: 'mib' },
    { label: 'snapshot: read back and decode, s', ours: 'snapshot_load_s', unit: 'plain' },
  );
  return { ours: 'dx engine (engine thread form)', peers: {}, rows };
}

const SPEC_BUILDERS: Record<string, (r: BenchResult) => Spec> = { ws_fanout: wsFanoutSpec, engine_scale: engineScaleSpec };

/** Rows for a benchmark without a spec: throughputs and latency percentiles, ours and every peer's. */
function genericRows(r: BenchResult): Row[] {
  const skip = /(_min|_max|_spread)(_|$)|probe|_min_|_max_/;
  const figureKey = (k: string): boolean => k.endsWith('_per_s') || k.endsWith('_per_req') || /(^|_)(p50|p99|p999|max)_(ns|us|ms)$/.test(k);
  const keys = Object.keys(r.metrics).filter((k) => !skip.test(k) && figureKey(k));
  const rows: Row[] = [];
  const peerNames = Object.keys(r.peers);
  const seen = new Set<string>();
  for (const k of keys) {
    const peers: Record<string, string> = {};
    for (const p of peerNames) if (r.peers[p]![k] !== undefined) peers[p] = k;
    rows.push({ label: k, ours: k, peers });
    seen.add(k);
  }
  // Peer figures with no counterpart of ours still get a row.
  for (const p of peerNames) {
    for (const k of Object.keys(r.peers[p]!)) {
      if (seen.has(k) || skip.test(k) || !figureKey(k)) continue;
      seen.add(k);
      const peers: Record<string, string> = {};
      for (const q of peerNames) if (r.peers[q]![k] !== undefined) peers[q] = k;
      rows.push({ label: k, peers });
    }
  }
  return rows.slice(0, 40);
}

function pick(obj: Record<string, number> | undefined, key: Key | undefined): { key: string; value: number } | null {
  if (obj === undefined || key === undefined) return null;
  for (const k of typeof key === 'string' ? [key] : key) {
    const v = obj[k];
    if (typeof v === 'number' && Number.isFinite(v)) return { key: k, value: v };
  }
  return null;
}

/** "median [min–max]" (or just the value) plus a spread flag. */
function figure(
  obj: Record<string, number> | undefined,
  key: Key | undefined,
  unit: Unit | undefined,
  minKey?: string,
  maxKey?: string,
): string {
  const p = pick(obj, key);
  if (p === null) return '';
  const u = unit ?? unitOf(p.key);
  let s = fmt(p.value, u);
  const lo = obj![minKey ?? `${p.key}_min`];
  const hi = obj![maxKey ?? `${p.key}_max`];
  if (typeof lo === 'number' && typeof hi === 'number' && (lo !== p.value || hi !== p.value)) {
    s += ` [${fmt(lo, u)} – ${fmt(hi, u)}]`;
    if (p.value > 0 && ((hi - lo) / p.value) * 100 > SPREAD_FLAG_PCT) s += ' ⚠';
  }
  const sp = obj![`${p.key}_spread_pct`];
  if (typeof sp === 'number' && sp > SPREAD_FLAG_PCT && !s.endsWith('⚠')) s += ' ⚠';
  return s;
}

// ------------------------------------------------------------------ targets of issues 8, 13 and 15

interface TargetCheck {
  bench: string;
  target: string;
  measured: string;
  status: 'met' | 'NOT met' | 'not measured';
}

function latencyMs(m: Record<string, number>, p: 'p99' | 'p999', prefix = ''): number | null {
  const ms = pick(m, [`${prefix}${p}_ms`]);
  if (ms) return ms.value;
  const us = pick(m, [`${prefix}${p}_us`]);
  if (us) return us.value / 1000;
  const ns = pick(m, [`${prefix}${p}_ns`]);
  return ns ? ns.value / 1e6 : null;
}

function check(bench: string, target: string, value: number | null, ok: (v: number) => boolean, show: (v: number) => string): TargetCheck {
  if (value === null || !Number.isFinite(value)) return { bench, target, measured: '–', status: 'not measured' };
  return { bench, target, measured: show(value), status: ok(value) ? 'met' : 'NOT met' };
}

/** engine_match and engine_scale: throughput, latency, the peer ratio, scale and memory per order. */
function engineTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const em = byName.get('engine_match');
  out.push(
    check(
      'engine_match',
      '>= 5,000,000 commands/s with full features',
      em?.metrics.commands_per_s ?? null,
      (v) => v >= 5e6,
      (v) => fmt(v, 'rate'),
    ),
  );
  const p999 = em?.metrics.p999_ns;
  out.push(
    check(
      'engine_match',
      'p99 <= 1 µs, p99.9 <= 3 µs',
      em?.metrics.p99_ns ?? null,
      (v) => v <= 1000 && (p999 ?? Infinity) <= 3000,
      (v) => `${fmt(v, 'ns')} / ${fmt(p999, 'ns')}`,
    ),
  );
  out.push(
    check(
      'engine_match',
      '>= 40x nodejs-order-book (same run)',
      em?.ratios.vs_nodejs_order_book ?? null,
      (v) => v >= 40,
      (v) => fmt(v, 'x'),
    ),
  );
  const es = byName.get('engine_scale');
  const esm = es?.metrics;
  const ratio = esm?.ratio_1m_orders_1000_markets_vs_1k ?? null;
  out.push(
    check(
      'engine_scale',
      'at 1 M resting orders and 1,000 markets, >= 70% of the 1 k-order throughput',
      ratio,
      (v) => v >= 0.7,
      (v) => `${group(v * 100, 1)}%`,
    ),
  );
  out.push(
    check(
      'engine_scale',
      'no single command over 1 ms of CPU at any size (the wall clock also counts the host descheduling the thread)',
      esm?.max_command_cpu_ns ?? esm?.max_command_ns ?? null,
      (v) => v <= 1e6,
      (v) => fmt(v, 'ns'),
    ),
  );
  out.push(
    check(
      'engine_scale',
      '<= 200 bytes per resting order',
      esm?.bytes_per_resting_order ?? null,
      (v) => v <= 200,
      (v) => `${group(v, 1)} B`,
    ),
  );
  return out;
}

/** durable_place against the hello-world ceiling, and its placement latency at half of peak with fsync on. */
function durablePlaceTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const dp = byName.get('durable_place');
  // The ceiling should come from the same run (a uws_hello peer or ratio of durable_place); failing that,
  // gateway_place's hello run is used and the figure says so.
  let dpRatio: number | null = null;
  let dpSource = '';
  if (dp) {
    const fsyncRate = pick(dp.metrics, ['fsync_placements_per_s', 'durable_placements_per_s', 'placements_per_s'])?.value;
    const own = pick(dp.ratios, ['vs_uws_hello', 'fsync_vs_uws_hello', 'durable_vs_uws_hello']);
    const hello = dp.peers.uws_hello?.requests_per_s;
    const otherHello = byName.get('gateway_place')?.peers.uws_hello?.requests_per_s;
    if (own) dpRatio = own.value;
    else if (fsyncRate !== undefined && hello !== undefined && hello > 0) dpRatio = fsyncRate / hello;
    else if (fsyncRate !== undefined && otherHello !== undefined && otherHello > 0) {
      dpRatio = fsyncRate / otherHello;
      dpSource = ' (hello ceiling from the gateway_place run, not the same run)';
    }
  }
  out.push(
    check(
      'durable_place',
      'signed durable placements >= 40% of the uWS hello-world ceiling',
      dpRatio,
      (v) => v >= 0.4,
      (v) => `${group(v * 100, 1)}%${dpSource}`,
    ),
  );
  const dpLat = (p: 'p99' | 'p999'): number | null => (dp ? (latencyMs(dp.metrics, p, 'fsync_') ?? latencyMs(dp.metrics, p)) : null);
  out.push(
    check(
      'durable_place',
      'placement p99 <= 2 ms at half of peak, fsync on',
      dpLat('p99'),
      (v) => v <= 2,
      (v) => `${group(v, 2)} ms`,
    ),
  );
  out.push(
    check(
      'durable_place',
      'placement p99.9 <= 5 ms at half of peak, fsync on',
      dpLat('p999'),
      (v) => v <= 5,
      (v) => `${group(v, 2)} ms`,
    ),
  );
  return out;
}

/** ws_fanout: messages/s to 1,000 subscribers. */
function wsFanoutTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const ws = byName.get('ws_fanout');
  let wsRate: number | null = null;
  let subs: number | undefined;
  if (ws) {
    // `s<N>_delivered_msgs_per_s` per subscriber count: the one at 1,000 (or the largest); else any messages/s figure.
    const per = Object.keys(ws.metrics)
      .map((k) => /^s([0-9]+)_delivered_msgs_per_s$/.exec(k))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => ({ n: Number(m[1]), v: ws.metrics[m[0]]! }))
      .sort((a, b) => b.n - a.n);
    const at = per.find((x) => x.n === 1000) ?? per[0];
    if (at !== undefined) {
      wsRate = at.v;
      subs = at.n;
    } else {
      const k = Object.keys(ws.metrics).find((x) => /(msgs|messages?)_per_s$/.test(x) && !/_(min|max)(_|$)/.test(x));
      wsRate = k !== undefined ? ws.metrics[k]! : null;
      subs = ws.metrics.subscribers;
    }
  }
  out.push(
    check(
      'ws_fanout',
      `>= 2,000,000 messages/s to 1,000 subscribers${subs !== undefined ? ` (run: ${subs})` : ''}`,
      wsRate,
      (v) => v >= 2e6 && (subs === undefined || subs >= 1000),
      (v) => fmt(v, 'rate'),
    ),
  );
  return out;
}

/** ws_orders: WebSocket order entry against REST, CPU per placement, latency at half of peak. */
function wsOrdersTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const wo = byName.get('ws_orders');
  const wm = wo?.metrics ?? {};
  out.push(
    check(
      'ws_orders',
      'JSON over WebSocket >= 3x REST placements/s (same run, fsync)',
      wo?.ratios.json_vs_rest ?? null,
      (v) => v >= 3,
      (v) => fmt(v, 'x'),
    ),
  );
  out.push(
    check(
      'ws_orders',
      'binary over WebSocket >= 10x REST placements/s (same run, fsync)',
      wo?.ratios.binary_vs_rest ?? null,
      (v) => v >= 10,
      (v) => fmt(v, 'x'),
    ),
  );
  out.push(
    check(
      'ws_orders',
      'server CPU per binary placement <= 5 us',
      wm.binary_server_cpu_us_per_placement ?? null,
      (v) => v <= 5,
      (v) => `${group(v, 1)} us`,
    ),
  );
  out.push(
    check(
      'ws_orders',
      'server CPU per JSON placement <= 15 us',
      wm.json_server_cpu_us_per_placement ?? null,
      (v) => v <= 15,
      (v) => `${group(v, 1)} us`,
    ),
  );
  for (const mode of ['json', 'binary'] as const) {
    const limit = wm.latency_target_ms;
    out.push(
      check(
        'ws_orders',
        `${mode} server p99 at half peak <= 1 ms + disk fdatasync p99${limit !== undefined ? ` (${group(limit, 2)} ms)` : ''}`,
        wm[`${mode}_half_peak_server_p99_ms`] ?? null,
        (v) => limit !== undefined && v <= limit,
        (v) => `${group(v, 2)} ms`,
      ),
    );
  }
  return out;
}

/** memory: no GC and a stable heap in a long engine run; gateway_place as the durability-none reference. */
function memoryAndReferenceTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const em = byName.get('engine_match');
  const mem = byName.get('memory');
  out.push(
    check(
      'memory',
      'engine allocates nothing in steady state: no GC in a long match loop',
      mem?.metrics.engine_long_gc_count ?? em?.metrics.gc_count_timed ?? null,
      (v) => v === 0,
      (v) =>
        `${v} ` +
          'GCs' +
            (mem?.metrics.engine_long_commands !== undefined
              ? ` over ${group(mem.metrics.engine_long_commands)} commands`
              : ' (engine_match timed runs)'),
    ),
  );
  out.push(
    check(
      'memory',
      'engine heap stable over the long run (growth < 1 MiB)',
      mem?.metrics.engine_long_heap_delta_mib ?? em?.metrics.heap_delta_max_mib ?? null,
      (v) => v < 1,
      (v) => fmt(v, 'mib'),
    ),
  );
  const gp = byName.get('gateway_place');
  if (gp) {
    out.push(
      check(
        'gateway_place (durability none: reference)',
        'placements >= 40% of the uWS hello-world ceiling',
        gp.ratios.vs_uws_hello ?? null,
        (v) => v >= 0.4,
        (v) => `${group(v * 100, 1)}%`,
      ),
    );
    out.push(
      check(
        'gateway_place (durability none: reference)',
        'placement p99 <= 2 ms / p99.9 <= 5 ms at half of peak',
        latencyMs(gp.metrics, 'p99'),
        (v) => v <= 2 && (latencyMs(gp.metrics, 'p999') ?? Infinity) <= 5,
        (v) => `${group(v, 2)} / ${group(latencyMs(gp.metrics, 'p999') ?? NaN, 2)} ms`,
      ),
    );
  }
  return out;
}

/** Issue 13 (low latency end to end): durable_place server-side tails at 1-50% of peak, against the disk's fdatasync p99. */
function durableLatencyTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const dp = byName.get('durable_place');
  const dm = dp?.metrics ?? {};
  const diskP99 = dm.disk_fdatasync_4k_p99_us;
  const budget = (ms: number): string => (diskP99 !== undefined ? ` (${group(ms * 1000 + diskP99, 0)} µs)` : '');
  const underDisk =
    (ms: number) =>
    (v: number): boolean =>
      diskP99 !== undefined && v <= ms * 1000 + diskP99;
  for (const pct of [1, 10, 25] as const) {
    out.push(
      check(
        'durable_place',
        `server-side p99 at ${pct}% of peak <= 1 ms + disk fdatasync p99${budget(1)}`,
        dm[`server_p99_us_${pct}pct`] ?? null,
        underDisk(1),
        (v) => `${group(v, 0)} µs`,
      ),
    );
    out.push(
      check(
        'durable_place',
        `server-side p99.9 at ${pct}% of peak <= 3 ms + disk fdatasync p99${budget(3)}`,
        dm[`server_p999_us_${pct}pct`] ?? null,
        underDisk(3),
        (v) => `${group(v, 0)} µs`,
      ),
    );
  }
  out.push(
    check(
      'durable_place',
      `server-side p99 at 50% of peak <= 2 ms + disk fdatasync p99${budget(2)}`,
      dm.server_p99_us_50pct ?? null,
      underDisk(2),
      (v) => `${group(v, 0)} µs`,
    ),
  );
  out.push(
    check(
      'durable_place',
      'client-side p99 at 10% of peak <= 3 ms',
      dm.client_p99_us_10pct ?? null,
      (v) => v <= 3000,
      (v) => `${group(v, 0)} µs`,
    ),
  );
  return out;
}

/** Issue 13: a lone placement's server-side latency, durability none and fsync. */
function lonePlaceTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const lp = byName.get('lone_place')?.metrics ?? {};
  out.push(
    check(
      'lone_place',
      'a lone placement, durability none: server-side p50 <= 100 µs',
      lp.server_p50_us_none ?? null,
      (v) => v <= 100,
      (v) => `${group(v, 0)} µs`,
    ),
  );
  out.push(
    check(
      'lone_place',
      'a lone placement, durability none: server-side p99 <= 300 µs',
      lp.server_p99_us_none ?? null,
      (v) => v <= 300,
      (v) => `${group(v, 0)} µs`,
    ),
  );
  const lpDisk = lp.disk_fdatasync_4k_p50_us;
  out.push(
    check(
      'lone_place',
      `a lone placement, fsync: server-side p50 <= disk fdatasync p50 + 100 ` +
        `µs${lpDisk !== undefined ? ` (${group(lpDisk + 100, 0)} µs)` : ''}`,
      lp.server_p50_us_fsync ?? null,
      (v) => lpDisk !== undefined && v <= lpDisk + 100,
      (v) => `${group(v, 0)} µs`,
    ),
  );
  return out;
}

/** Issue 13: gateway_place server CPU per placement and per read against a hello request. */
function gatewayCpuTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const gp = byName.get('gateway_place');
  const gm = gp?.metrics ?? {};
  out.push(
    check(
      'gateway_place',
      'server CPU per placement <= 2.5x per hello request (same generator, same run)',
      gm.place_cpu_vs_hello ?? null,
      (v) => v <= 2.5,
      (v) => `${fmt(v, 'x')} (${group(gm.place_server_cpu_us_per_req ?? NaN, 1)} / ${group(gm.hello_server_cpu_us_per_req ?? NaN, 1)} µs)`,
    ),
  );
  out.push(
    check(
      'gateway_place',
      'server CPU per read <= 1.5x per hello request (same generator, same run)',
      gm.read_cpu_vs_hello ?? null,
      (v) => v <= 1.5,
      (v) => `${fmt(v, 'x')} (${group(gm.read_server_cpu_us_per_req ?? NaN, 1)} / ${group(gm.hello_server_cpu_us_per_req ?? NaN, 1)} µs)`,
    ),
  );
  return out;
}

/** Issue 15: replication on NATS JetStream. */
function replicationTargets(byName: Map<string, BenchResult>): TargetCheck[] {
  const out: TargetCheck[] = [];
  const rp = byName.get('replicated_place');
  if (rp) {
    out.push(
      check(
        'replicated_place',
        'replicated durable placements >= 70% of local-only (same run)',
        rp.ratios.replicated_vs_local ?? null,
        (v) => v >= 0.7,
        (v) => `${group(v * 100, 1)}%`,
      ),
    );
    out.push(
      check(
        'replicated_place',
        'server-side p99 added by replication <= 2 ms at half of peak',
        rp.metrics.added_server_p99_us ?? null,
        (v) => v <= 2000,
        (v) => `${group(v / 1000, 2)} ms`,
      ),
    );
    out.push(
      check(
        'replicated_place',
        'failover: first acknowledged write on the new primary <= 5 s after the kill',
        rp.metrics.failover_ms ?? null,
        (v) => v <= 5000,
        (v) => `${group(v, 0)} ms`,
      ),
    );
    out.push(
      check(
        'replicated_place',
        'a replica serves reads at >= 90% of a primary gateway thread',
        rp.ratios.replica_vs_primary_reads ?? null,
        (v) => v >= 0.9,
        (v) => `${group(v * 100, 1)}%`,
      ),
    );
    out.push(
      check(
        'replicated_place',
        'replica lag p99 <= 50 ms under placement load',
        rp.metrics.replica_lag_p99_ms ?? null,
        (v) => v <= 50,
        (v) => `${group(v, 1)} ms`,
      ),
    );
  }
  return out;
}

/** Every target of the report, in the order of its table. */
function targets(byName: Map<string, BenchResult>): TargetCheck[] {
  const dp = byName.get('durable_place');
  const out: TargetCheck[] = [
    ...engineTargets(byName),
    ...durablePlaceTargets(byName),
    ...wsFanoutTargets(byName),
    ...wsOrdersTargets(byName),
    ...memoryAndReferenceTargets(byName),
    ...durableLatencyTargets(byName),
    ...lonePlaceTargets(byName),
    ...gatewayCpuTargets(byName),
  ];
  out.push(
    check(
      'durable_place',
      'signed durable placements >= 40% of the uWS hello-world ceiling measured with wrk (same run)',
      dp?.ratios.vs_uws_hello_wrk ?? null,
      (v) => v >= 0.4,
      (v) => `${group(v * 100, 1)}%`,
    ),
  );
  const idle = byName.get('idle');
  out.push(
    check(
      'idle',
      'idle exchange <= 2% of one core over 60 s (all threads)',
      idle?.metrics.idle_cpu_pct ?? null,
      (v) => v <= 2,
      (v) => `${group(v, 2)}%`,
    ),
  );
  out.push(...replicationTargets(byName));
  return out;
}

// ------------------------------------------------------------------ sections

function flags(r: BenchResult): string[] {
  const out: string[] = [];
  const own = (r.notes ?? []).filter((n) => n.startsWith('FLAG')).join('\n');
  const scan = (who: string, m: Record<string, number>): void => {
    for (const [k, v] of Object.entries(m)) {
      if (!(k === 'spread_pct' || k.endsWith('_spread_pct')) || !(v > SPREAD_FLAG_PCT)) continue;
      // The benchmark's own FLAG note usually says the same (with the runs): keep that one only.
      if (own.includes(`${v}%`) || own.includes(`${(Math.round(v * 10) / 10).toFixed(1)}%`)) continue;
      out.push(`${who}${k} = ${group(v, 1)}% (> ${SPREAD_FLAG_PCT}%)`);
    }
  };
  scan('', r.metrics);
  for (const [p, m] of Object.entries(r.peers)) scan(`${p}.`, m);
  for (const n of r.notes ?? []) if (n.startsWith('FLAG')) out.push(n.replace(/^FLAG:?\s*/, ''));
  return out;
}

function header(r: BenchResult): string[] {
  const lines: string[] = [];
  const m = r.machine;
  lines.push(`- machine: ${m.cpus} CPUs, ${m.model}, ${m.mem_gib} GiB; Node ${r.node}`);
  lines.push(
    `- run: ` +
      (r.date ?? 'date not recorded') +
        (r.wall_s !== undefined ? `, ${r.wall_s} s` : '') +
        (r.quick ? ' — **--quick run: checks the tooling, not figures to quote**' : ''),
  );
  if (r.workload !== '') lines.push(`- workload: ${r.workload}`);
  return lines;
}

/** Table rows whose figure spread over SPREAD_FLAG_PCT (filled by table(), read by section()). */
let spreadRows: string[] = [];

function table(r: BenchResult, spec: Spec): string[] {
  const peerKeys = [...Object.keys(spec.peers).filter((p) => p in r.peers), ...Object.keys(r.peers).filter((p) => !(p in spec.peers))];
  const rows = spec.rows
    .map((row) => ({
      row,
      ours: row.ours !== undefined ? figure(r.metrics, row.ours, row.unit, row.oursMin, row.oursMax) : '',
      peers: peerKeys.map((p) => {
        const k = row.peers?.[p];
        if (k === undefined) return '';
        const keys = typeof k === 'string' ? [k] : [...k];
        if (keys.every((x) => x.startsWith('@')))
          return figure(
            r.metrics,
            keys.map((x) => x.slice(1)),
            row.unit,
          );
        return figure(r.peers[p], keys, row.unit);
      }),
    }))
    .filter((x) => x.ours !== '' || x.peers.some((c) => c !== ''));
  if (rows.length === 0) return ['(no figures in the result)'];
  const head = ['figure', spec.ours, ...peerKeys.map((p) => spec.peers[p] ?? p)];
  const out = [`| ${head.map(cell).join(' | ')} |`, `|${head.map((_h, i) => (i === 0 ? '---' : '---:')).join('|')}|`];
  for (const x of rows) {
    out.push(`| ${[x.row.label, x.ours || '–', ...x.peers.map((c) => c || '–')].map(cell).join(' | ')} |`);
    const who = [
      x.ours.endsWith('⚠') ? spec.ours : null,
      ...x.peers.map((c, i) => (c.endsWith('⚠') ? (spec.peers[peerKeys[i]!] ?? peerKeys[i]!) : null)),
    ].filter((w) => w !== null);
    if (who.length > 0) spreadRows.push(`${x.row.label} (${who.join(', ')})`);
  }
  return out;
}

function ratioLines(r: BenchResult): string[] {
  const e = Object.entries(r.ratios).filter(([, v]) => Number.isFinite(v));
  if (e.length === 0) return [];
  return [`Ratios measured in this run (ours / theirs; > 1 = ours is better): ${e.map(([k, v]) => `\`${k}\` ${fmt(v, 'x')}`).join(', ')}.`];
}

/** The memory benchmark: one row per thread, then the steady-state figures. */
function memorySection(r: BenchResult): string[] {
  const m = r.metrics;
  const threads = new Map<string, Record<string, number>>();
  for (const [k, v] of Object.entries(m)) {
    const x = /^thread_(.+?)_(heap_used_mib|heap_total_mib|heap_used_after_gc_mib|external_mib|array_buffers_mib|reported)$/.exec(k);
    if (!x) continue;
    const t = threads.get(x[1]!) ?? {};
    t[x[2]!] = v;
    threads.set(x[1]!, t);
  }
  const out: string[] = [];
  out.push(
    `Exchange process at ${group(m.resting_orders ?? NaN)} resting orders and ${group(m.accounts ?? NaN)} accounts: resident ` +
      `${fmt(m.process_rss_mib, 'mib')} (idle before the load: ${fmt(m.process_rss_idle_mib, 'mib')}).`,
  );
  out.push('');
  if (threads.size > 0) {
    out.push(
      '| thread | heap used | heap used after a full GC | heap total | external | array buffers |',
      '|---|---:|---:|---:|---:|---:|',
    );
    for (const [name, t] of threads) {
      if (t.reported === 0) {
        out.push(`| ${cell(name)} | could not report | | | | |`);
        continue;
      }
      out.push(
        `| ${cell(name)} | ${fmt(t.heap_used_mib, 'mib')} | ` +
          `${t.heap_used_after_gc_mib === undefined ? 'no GC run (thread busy or parked)' : fmt(t.heap_used_after_gc_mib, 'mib')} | ` +
            `${fmt(t.heap_total_mib, 'mib')} | ${fmt(t.external_mib, 'mib')} | ${fmt(t.array_buffers_mib, 'mib')} |`,
      );
    }
    out.push(
      '',
      'External and array-buffer figures count every SharedArrayBuffer (rings, buckets, metrics) in each thread that maps it, so they do ' +
        'not add up; resident memory is for the whole process.',
    );
  }
  if (m.engine_long_commands !== undefined) {
    out.push(
      '',
      `Engine steady state (in process, one long match loop on one engine): ${group(m.engine_long_commands)} commands, ` +
        `${fmt(m.engine_long_gc_count, 'count')} GCs started inside the loop (${fmt(m.engine_long_gc_ms, 'ms')}), heap used ` +
          `${fmt(m.engine_long_heap_before_mib, 'mib')} -> ${fmt(m.engine_long_heap_after_mib, 'mib')} (growth ` +
            `${fmt(m.engine_long_heap_delta_mib, 'mib')}).`,
    );
  }
  if (m.engine_thread_heap_samples !== undefined) {
    out.push(
      '',
      `Engine thread of the running exchange under ${fmt(m.engine_thread_load_per_s, 'rate')} placements: heap used ` +
        `${fmt(m.engine_thread_heap_first_mib, 'mib')} -> ${fmt(m.engine_thread_heap_last_mib, 'mib')} over ` +
          `${m.engine_thread_heap_samples} samples 250 ms apart (largest rise between samples ` +
            `${fmt(m.engine_thread_heap_max_rise_mib, 'mib')}; ${fmt(m.engine_thread_heap_drops, 'count')} drops: a drop is a GC in that ` +
              `thread, so something there allocates); idle with the same sampling: growth ` +
                `${fmt(m.engine_thread_idle_heap_growth_mib, 'mib')}. The samples are in the JSON notes.`,
    );
  }
  return out;
}

function section(r: BenchResult): string[] {
  const out = [`## ${r.name}`, '', ...header(r), ''];
  spreadRows = [];
  if (r.name === 'memory') out.push(...memorySection(r));
  else {
    out.push(...table(r, SPECS[r.name] ?? SPEC_BUILDERS[r.name]?.(r) ?? { ours: 'dx', peers: {}, rows: genericRows(r) }));
  }
  const rl = ratioLines(r);
  if (rl.length > 0) out.push('', ...rl);
  const f = flags(r);
  if (spreadRows.length > 0 && f.length === 0) f.push(`runs spread over ${SPREAD_FLAG_PCT}%: ${spreadRows.join('; ')}`);
  if (f.length > 0) out.push('', '**Flags** (treat these figures with care):', '', ...f.map((x) => `- ⚠ ${x}`));
  const targetNotes = (r.notes ?? []).filter((n) => /^target|targets/i.test(n));
  if (targetNotes.length > 0) out.push('', "The benchmark's own target notes:", '', ...targetNotes.map((n) => `- ${n}`));
  out.push('', `Everything else (every metric, every note) is in \`bench/results/${r.name}.json\`.`, '');
  return out;
}

// ------------------------------------------------------------------ the report

function hasSpreadCell(r: BenchResult): boolean {
  if (r.name === 'memory') return false;
  spreadRows = [];
  table(r, SPECS[r.name] ?? SPEC_BUILDERS[r.name]?.(r) ?? { ours: 'dx', peers: {}, rows: genericRows(r) });
  const any = spreadRows.length > 0;
  spreadRows = [];
  return any;
}

/**
 * The report's Markdown. `dir` is where the results were read: the profile
 * summaries in it (profile-*.md) are linked at the end (none without it).
 */
export function renderReport(results: readonly BenchResult[], expected: readonly string[], dir?: string): string {
  const byName = new Map(results.map((r) => [r.name, r]));
  const order = [
    ...expected.filter((n) => byName.has(n)),
    ...results
      .map((r) => r.name)
      .filter((n) => !expected.includes(n))
      .sort(),
  ];
  const out: string[] = [];
  out.push('# dx benchmark report', '');
  out.push(
    `Written ${new Date().toISOString()} by \`bench/report.ts\` from \`bench/results/*.json\` (\`npm run bench\` runs every benchmark ` +
      `and rewrites this file; \`node dist/bench/report.js\` rewrites it from the JSON alone).`,
  );
  out.push(
    `Each peer was measured in the same run as our figures. Repeated runs show as median [min – max]; ⚠ marks a spread above ` +
      `${SPREAD_FLAG_PCT}% ((max − min) / median) or a benchmark's own FLAG note. Latencies under load are open loop: measured from the ` +
        `intended send time at half of the measured peak, so a stall is charged to every request it delays.`,
  );
  const quick = results.filter((r) => r.quick).map((r) => r.name);
  if (quick.length > 0) out.push('', `**Quick runs (tooling checks, not figures to quote): ${quick.join(', ')}.**`);
  const machines = new Set(results.map((r) => `${r.machine.cpus} CPUs, ${r.machine.model}, ${r.machine.mem_gib} GiB, Node ${r.node}`));
  if (machines.size > 1)
    out.push('', `**The results come from ${machines.size} different machines or Node versions:** ${[...machines].join('; ')}.`);
  out.push('', '## Targets (issues 8, 13 and 15)', '', '| benchmark | target | measured | status |', '|---|---|---:|---|');
  for (const t of targets(byName))
    out.push(
      `| ${cell(t.bench)} | ${cell(t.target)} | ${cell(t.measured)} | ` +
        `${t.status === 'met' ? 'met' : t.status === 'NOT met' ? '**NOT met**' : 'not measured'} |`,
    );
  const missing = expected.filter((n) => !byName.has(n));
  if (missing.length > 0) out.push('', `Not run (no result file): ${missing.map((n) => `\`${n}\``).join(', ')}.`);
  const flagged = results.filter((r) => flags(r).length > 0 || hasSpreadCell(r)).map((r) => r.name);
  if (flagged.length > 0) out.push('', `Flagged (noisy or suspect): ${flagged.map((n) => `\`${n}\``).join(', ')}; see each section.`);
  out.push('');
  for (const n of order) out.push(...section(byName.get(n)!));
  const profiles =
    dir !== undefined && existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => /^profile-.*\.md$/.test(f))
          .sort()
      : [];
  if (profiles.length > 0) {
    out.push('## Profiles', '');
    for (const p of profiles)
      out.push(
        `- [${p}](${p}) (${statSync(join(dir!, p)).mtime.toISOString()}); the matching \`.cpuprofile\` opens in Chrome DevTools or VS ` +
          `Code (see the README)`,
      );
    out.push('');
  }
  return out.join('\n');
}
