// gateway_read: a read-heavy mix through the REST gateway of a running
// exchange (separate process, loopback, durability none), beside the uWS
// hello-world ceiling measured in the same run by the same load generator.
// Main thread of the bench runner; the load generator's piscina workers
// (test/support/loadgen) do all the sending. Reports, never asserts.
//
// One run:
//   1. hello: the ceiling (gateway_place's helloPhase: probes at 8/16/32
//      connections, REPEATS runs at the best).
//   2. exchange: one market with a trading round; `keys` accounts with a
//      deposit, one read+trade key and seeded YES and NO shares; a short
//      closed loop of placements fills the book and every account's order
//      list, so the reads below return real data.
//   3. the mix, per request: orderbook depth 10 (30%), balance (20%), own
//      orders ?limit=20 (25%), one market (15%), a signed placement (10%).
//      Closed-loop probes pick the connection count (no 429, each key below
//      80% of its read bucket), REPEATS closed-loop runs give requests_per_s,
//      then an open loop at half of that, latency from the intended send
//      time, overall and per op.
//   4. ratio requests / hello, CPU of server and load generator.
//
// Every key is bound to one connection in the closed loop (the load
// generator's rule), so a connection may send at most 100 reads/s (the read
// bucket) and 50 writes/s: the probes only accept a count that keeps each
// key under 80% of the read bucket.

import { performance } from 'node:perf_hooks';
import { runLoad, type LoadResult, type ReadMix } from '../test/support/loadgen/loadgen.js';
import {
  addCounts, cpuMetrics, helloPhase, loadExchange, measured, okCount, okRate, round1, settings, triple, type Measured, type Settings,
} from './gateway_place.js';
import type { ExchangeProcess } from '../test/support/exchange.js';
import { startBenchExchange } from './lib/population.js';
import { probeList } from './lib/probes.js';
import { environment, type BenchResult } from './lib/result.js';
import { median, putLatencyUs, relativeSpread } from '../test/support/bench/stats.js';

const DURABILITY_LABEL = 'durability: none';
const MIX = { place: 10, cancel: 0, read: 90 } as const;
const READS: ReadMix = { book: 30, balance: 20, orders: 25, market: 15 };
const CONNECTIONS = [128, 256, 512] as const;
const SPREAD_FLAG = 0.1;
const MID = 50;
const SPREAD = 5;
const OPS = ['read_book', 'read_balance', 'read_orders', 'read_market', 'place'] as const;
const OP_LABEL: Record<(typeof OPS)[number], string> = {
  read_book: 'book',
  read_balance: 'balance',
  read_orders: 'orders',
  read_market: 'market',
  place: 'place',
};

interface ExchangeReads {
  setup_ms: number;
  keys: number;
  prefill_orders: number;
  connections: number;
  probes: { connections: number; per_s: number; per_key_per_s: number; statuses: Record<string, number>; accepted: boolean }[];
  runs: Measured<LoadResult>[];
  open: Measured<LoadResult>;
  open_rate: number;
}

async function exchangeReads(s: Settings, seed: number): Promise<ExchangeReads> {
  const ex: ExchangeProcess = await startBenchExchange({ gateways: s.gateways, durability: 'none' });
  try {
    const { target, market, setup, keys, nextSeed, slice } = await loadExchange(ex, s, seed);
    const closed = (mix: { place: number; cancel: number; read: number }, connections: number, durationMs: number): Promise<LoadResult> => {
      const run = slice(connections);
      return runLoad({
        baseUrl: ex.base, keys: run.keys, markets: [market], mode: 'closed', connections, durationMs, mix, reads: READS, workers: s.workers,
        seed: run.seed, mid: MID, spread: SPREAD,
      });
    };
    const alive = (): void => {
      if (!ex.child.running) throw new Error(`the exchange died: ${ex.stderrTail().slice(-2000)}`);
    };

    // Prefill: placements on every key (each key's order list and the book get content), within the write bucket's burst.
    const prefillConns = Math.min(keys.length, 512);
    const prefill = await closed({ place: 1, cancel: 0, read: 0 }, prefillConns, Math.min(s.probe_ms, 2000));
    alive();

    const probes: ExchangeReads['probes'] = [];
    for (const c of CONNECTIONS) {
      if (c > keys.length) continue;
      const m = await measured(s, target, () => closed(MIX, c, s.probe_ms));
      alive();
      const perS = okRate(m.value);
      const perKey = perS / c;
      // Keys never throttle (loadExchange: bench/lib/tiers.ts): a 429 is a fault, the count is not taken.
      const accepted = (m.value.statuses['429'] ?? 0) === 0;
      probes.push({ connections: c, per_s: perS, per_key_per_s: round1(perKey), statuses: m.value.statuses, accepted });
    }
    const ok = probes.filter((p) => p.accepted).sort((a, b) => b.per_s - a.per_s);
    const connections = ok.length > 0 ? ok[0]!.connections : Math.max(...probes.map((p) => p.connections));
    const measuredRuns: Measured<LoadResult>[] = [];
    for (let i = 0; i < s.repeats; i++) {
      measuredRuns.push(await measured(s, target, () => closed(MIX, connections, s.run_ms)));
      alive();
    }
    const openRate = Math.max(1, Math.round(median(measuredRuns.map((m) => okRate(m.value))) / 2));
    const open = await measured(s, target, () => runLoad({
      baseUrl: ex.base, keys, markets: [market], mode: 'open', rate: openRate, connections, durationMs: s.open_ms,
      mix: MIX, reads: READS, workers: s.workers, seed: nextSeed(), mid: MID, spread: SPREAD,
    }));
    alive();
    return {
      setup_ms: setup.setup_ms,
      keys: keys.length,
      prefill_orders: okCount(prefill.statuses),
      connections,
      probes,
      runs: measuredRuns,
      open,
      open_rate: openRate,
    };
  } finally {
    const how = await ex.stop();
    if (how.killed || how.code !== 0)
      process.stderr.write(
        `gateway_read: the exchange ended with code ${how.code} signal ` +
          `${how.signal}${how.killed ? ' (SIGKILL after SIGTERM timed out)' : ''}\n`,
      );
  }
}

/** Share of answered requests that were reads, from the op counts. */
function readShare(r: LoadResult): number {
  let reads = 0;
  let all = 0;
  for (const [k, v] of Object.entries(r.ops)) {
    all += v;
    if (k.startsWith('read_')) reads += v;
  }
  return all === 0 ? 0 : reads / all;
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const s = settings(opts.quick === true);
  const seed = 0x5eed_0a0d;
  const t0 = performance.now();
  const hello = await helloPhase(s, seed);
  const ex = await exchangeReads(s, seed);
  const wallS = Math.round((performance.now() - t0) / 1000);

  const metrics: Record<string, number> = {};
  const notes: string[] = [
    `${DURABILITY_LABEL}: the exchange ran with --durability none (the 10% placements of the mix include no fsync).`,
  ];
  const flag = (what: string): void => {
    notes.push(`FLAG ${what}`);
  };
  const rates = ex.runs.map((m) => okRate(m.value));
  const helloRates = hello.runs.map((m) => okRate(m.value));
  const med = triple(metrics, 'requests_per_s', rates);
  const helloMed = median(helloRates);
  metrics.reads_per_s = round1(med * median(ex.runs.map((m) => readShare(m.value))));
  metrics.connections = ex.connections;
  const o = ex.open.value;
  const us = (ms: number): number => Math.round(ms * 1000);
  metrics.open_rate_per_s = ex.open_rate;
  metrics.open_achieved_per_s = okRate(o);
  putLatencyUs(metrics, '', o.latency_ms);
  for (const op of OPS) {
    const l = o.latency_by_op_ms[op];
    if (l === undefined) continue;
    putLatencyUs(metrics, `open_${OP_LABEL[op]}_`, l, ['p50', 'p99', 'p999']);
  }
  metrics.open_send_lag_p50_us = us(o.send_lag_ms.p50);
  metrics.open_send_lag_p99_us = us(o.send_lag_ms.p99);
  metrics.open_sent = o.sent;
  metrics.open_unsent = o.unsent;
  metrics.open_errors = o.errors;
  for (const [k, v] of Object.entries(o.statuses)) metrics[`open_status_${k}`] = v;
  cpuMetrics(metrics, 'run', ex.runs, rates);
  // Unprefixed names for the report's side-by-side table.
  metrics.server_cpu_pct = metrics.run_server_cpu_pct!;
  metrics.generator_cpu_pct = metrics.run_generator_cpu_pct!;
  if (metrics.run_server_cpu_us_per_req !== undefined) metrics.server_cpu_us_per_req = metrics.run_server_cpu_us_per_req;
  if (metrics.run_generator_cpu_us_per_req !== undefined) metrics.generator_cpu_us_per_req = metrics.run_generator_cpu_us_per_req;
  metrics.gateway_thread_cpu_pct = round1(median(ex.runs.map((m) => m.gateway_pct)));
  metrics.engine_thread_cpu_pct = round1(median(ex.runs.map((m) => m.engine_pct)));
  metrics.generator_workers_cores = Math.round(median(ex.runs.map((m) => m.value.generator_cpu.workers_cores)) * 1000) / 1000;
  cpuMetrics(metrics, 'open', [ex.open], [okRate(o)]);
  const statuses: Record<string, number> = {};
  const ops: Record<string, number> = {};
  for (const m of ex.runs) {
    addCounts(statuses, m.value.statuses);
    addCounts(ops, m.value.ops);
  }
  for (const [k, v] of Object.entries(statuses)) metrics[`status_${k}`] = v;
  for (const [k, v] of Object.entries(ops)) metrics[`ops_${k}`] = v;
  for (const p of ex.probes) metrics[`probe_c${p.connections}_per_s`] = p.per_s;
  metrics.keys = ex.keys;
  metrics.prefill_orders = ex.prefill_orders;
  metrics.setup_ms = ex.setup_ms;
  metrics.gateways = s.gateways;
  metrics.loadgen_workers = s.workers;
  metrics.run_ms = s.run_ms;
  metrics.open_ms = s.open_ms;
  metrics.repeats = s.repeats;
  metrics.wall_s = wallS;
  const helloM: Record<string, number> = {};
  triple(helloM, 'requests_per_s', helloRates);
  cpuMetrics(helloM, 'x', hello.runs, helloRates);
  const ratio = helloMed > 0 ? med / helloMed : NaN;

  notes.push(
    `mix per request: ${MIX.place}% signed placements, ${MIX.read}% reads split ${Object.entries(READS)
      .map(([k, v]) => `${k} ${v}`)
      .join(' / ')} (orderbook depth 10, balance, own orders ?limit=20, one market); ops in the closed-loop runs: ${JSON.stringify(ops)}.`,
  );
  notes.push(
    `prefill: ${ex.prefill_orders} placements before the measured runs (so the book and each key's order list hold data); the mix's ` +
      `placements add more during the run.`,
  );
  notes.push(
    `connections: probes (${s.probe_ms} ms) ` +
      `${probeList(ex.probes)}; chosen ${ex.connections} (the best with no 429; every key on a tier that never throttles).`,
  );
  notes.push(
    `hello ceiling: ${Math.round(helloMed)}/s at ${hello.connections} connections (generator-bound on 2 cores: see gateway_place). ` +
      `requests / hello = ${(ratio * 100).toFixed(1)}%.`,
  );
  const opP99 = OPS.filter((op) => metrics[`open_${OP_LABEL[op]}_p99_us`] !== undefined)
    .map((op) => `${OP_LABEL[op]} ${metrics[`open_${OP_LABEL[op]}_p99_us`]}`)
    .join(', ');
  notes.push(
    `open loop at ${ex.open_rate}/s for ${s.open_ms} ms, latency from the intended send time: p50/p99/p99.9 ` +
      `${metrics.p50_us}/${metrics.p99_us}/${metrics.p999_us} us; per op p99 ${opP99} us; the generator sent late by p99 ` +
      `${metrics.open_send_lag_p99_us} us.`,
  );
  notes.push(
    `CPU: server = the exchange process (gateway thread ${metrics.gateway_thread_cpu_pct}%, busiest other thread ` +
      `${metrics.engine_thread_cpu_pct}%), generator = this process, % of one core; ${metrics.generator_workers_cores} cores for the ` +
      `generator's workers.`,
  );
  for (const [name, xs] of [['requests_per_s', rates], ['hello_requests_per_s', helloRates]] as const) {
    if (xs.length > 1 && relativeSpread(xs) > SPREAD_FLAG)
      flag(
        `${name} spread ${(relativeSpread(xs) * 100).toFixed(1)}% over ${xs.length} runs (> ${SPREAD_FLAG * 100}%): ` +
          `${xs.map((x) => Math.round(x)).join(', ')}`,
      );
  }
  const bad = Object.entries(statuses).filter(([k]) => !/^2/.test(k));
  if (bad.length > 0) flag(`closed-loop answers that were not 2xx: ${JSON.stringify(Object.fromEntries(bad))}`);
  const openBad = Object.entries(o.statuses).filter(([k]) => !/^2/.test(k));
  if (openBad.length > 0 || o.unsent > 0) flag(`open loop: non-2xx ${JSON.stringify(Object.fromEntries(openBad))}, unsent ${o.unsent}`);
  if (ex.probes.every((p) => !p.accepted))
    flag(`no probed connection count kept every key under its read bucket; ran at ${ex.connections}`);
  const all = [...hello.runs, ...ex.runs, ex.open];
  const noisy = all.filter((m) => m.foreign_pct > 25);
  if (noisy.length > 0)
    flag(
      `${noisy.length} run(s) shared the machine with other processes (foreign CPU up to ` +
        `${Math.max(...noisy.map((m) => m.foreign_pct))}% of a core)`,
    );

  const env = environment();
  return {
    name: 'gateway_read',
    node: env.node,
    machine: env.machine,
    workload: `${DURABILITY_LABEL}. Exchange as a separate process (${s.gateways} gateway thread(s)), one market, ${ex.keys} accounts ` +
      `with one key each; a read-heavy mix (${MIX.read}% reads: orderbook, balance, own orders, market; ${MIX.place}% placements) from ` +
      `test/support/loadgen (${s.workers} piscina worker, raw transport): ${s.repeats} x ${s.run_ms} ms closed loop at ` +
      `${ex.connections} connections, then an open loop at half that rate (${ex.open_rate}/s, ${s.open_ms} ms), latency from the ` +
      `intended send time. Peer in the same run: the uWS hello-world server (${hello.connections} connections). All on 127.0.0.1, ` +
      `seed ${seed}.`,
    metrics,
    peers: {
      uws_hello: {
        requests_per_s: helloM.requests_per_s!,
        requests_per_s_min: helloM.requests_per_s_min!,
        requests_per_s_max: helloM.requests_per_s_max!,
        requests_per_s_spread_pct: helloM.requests_per_s_spread_pct!,
        connections: hello.connections,
        server_cpu_pct: helloM.x_server_cpu_pct!,
        generator_cpu_pct: helloM.x_generator_cpu_pct!,
        ...(helloM.x_server_cpu_us_per_req !== undefined
          ? { server_cpu_us_per_req: helloM.x_server_cpu_us_per_req, generator_cpu_us_per_req: helloM.x_generator_cpu_us_per_req! }
          : {}),
      },
    },
    ratios: { vs_uws_hello: Math.round(ratio * 1000) / 1000 },
    notes,
  };
}
