// replicated_place: what replication on NATS JetStream costs and buys, in one
// run (issue 15). A 3-node NATS cluster (test/support/nats_cluster.ts,
// /usr/sbin/nats-server, temporary stores) on this machine, and exchange
// processes on 127.0.0.1 (tools/crash_test.ts ExchangeServer):
//
//   1. durable placements: a local-only exchange (--durability fsync,
//      --replicate off) beside a replicated primary (--durability fsync,
//      --replicate on, stream with 3 replicas), the same population, closed
//      loops interleaved (local, replicated, replicated, local, ...); then an
//      open loop on each at the same rate, half of the replicated peak:
//      latency from the load generator and, server-side, from each server's
//      own request histogram (dx_http_request_duration_seconds of
//      place_order, delta over the run); the primary's publish-to-quorum ack
//      histogram (dx_replication_ack_seconds).
//   2. followers under that load: a standby and a read replica follow the
//      primary while a closed loop of placements runs; each one's apply lag
//      (sequencer stamp to applied, dx_replication_apply_lag_seconds, delta);
//      WebSocket fan-out from the replica: subscribers of the market's
//      orderbook_delta on the replica's port (bench/lib/ws_subscriber_worker).
//   3. reads: the same closed-loop read mix against one gateway thread of the
//      primary and of the replica, interleaved.
//   4. failover: SIGKILL of the primary (with the default lease 3000 ms and
//      heartbeat 500 ms) to the first acknowledged write on the new primary,
//      a few times (the killed node comes back as the standby).
// Every process shares the machine's cores with the NATS servers and the load
// generator: the figures are this machine's, the notes say so. Main thread
// of the bench runner; reports, never asserts.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminClient } from '../src/client/admin_client.js';
import { closeFetchConnections } from '../src/client/transport.js';
import { ExchangeProcess } from '../test/support/exchange.js';
import { runLoad, type LoadResult, type ReadMix } from '../test/support/loadgen/loadgen.js';
import { NatsCluster, natsServerInstalled, natsServerVersion } from '../test/support/nats_cluster.js';
import { okRate, round1, round3, settings as gatewaySettings } from './gateway_place.js';
import { createTraders, openMarket } from './lib/population.js';
import { CpuWindow, waitQuiet } from './lib/process_stats.js';
import { environment, type BenchResult } from './lib/result.js';
import { max as maxOf, median, min as minOf, relativeSpread } from '../test/support/bench/stats.js';
import type { SubscriberReport, SubscriberWorkerData } from './lib/ws_subscriber_worker.js';

const TOKEN = 'replicated-place-bench-token-0123456789';
const MID = 50;
const SPREAD = 5;
const READS: ReadMix = { book: 30, balance: 20, orders: 25, market: 25 };
const LEASE_MS = 3000;
const HEARTBEAT_MS = 500;

interface Settings {
  quick: boolean;
  repeats: number;
  run_ms: number;
  open_ms: number;
  keys: number;
  place_connections: number;
  read_connections: number;
  gateways: number;
  workers: number;
  seed_shares: number;
  ws_subscribers: number;
  failovers: number;
  quiet_wait_ms: number;
  /** nats-server --version of the binary the cluster runs. */
  nats_version: string;
}

function settings(quick: boolean): Settings {
  const g = gatewaySettings(quick);
  return {
    quick, repeats: quick ? 1 : 3, run_ms: quick ? 2500 : 8000, open_ms: quick ? 2500 : 8000, keys: quick ? 256 : 512,
    place_connections: quick ? 128 : 256, read_connections: quick ? 64 : 128, gateways: 1, workers: g.workers, seed_shares: 2000,
    ws_subscribers: quick ? 20 : 100, failovers: quick ? 1 : 3, quiet_wait_ms: quick ? 3000 : 20_000,
    nats_version: natsServerVersion(),
  };
}

// ------------------------------------------------------------------ Prometheus histograms

type Hist = { le: number[]; cum: number[]; count: number };

/** A histogram's cumulative buckets from the text exposition (the series whose labels include `match`). */
function histogram(text: string, name: string, match = ''): Hist {
  const le: number[] = [];
  const cum: number[] = [];
  let count = 0;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${name}_bucket{`) && line.includes(match)) {
      const m = /le="([^"]+)"\} ([0-9.e+]+)$/.exec(line);
      if (m) {
        le.push(m[1] === '+Inf' ? Infinity : Number(m[1]));
        cum.push(Number(m[2]));
      }
    } else if (line.startsWith(`${name}_count`) && line.includes(match)) {
      count = Number(line.split(' ').pop());
    }
  }
  return { le, cum, count };
}

function histDelta(a: Hist, b: Hist): Hist {
  return { le: b.le, cum: b.cum.map((c, i) => c - (a.cum[i] ?? 0)), count: b.count - a.count };
}

/** The q-quantile of a bucketed histogram, linear within its bucket (seconds); NaN when empty. */
function quantile(h: Hist, q: number): number {
  const total = h.cum[h.cum.length - 1] ?? 0;
  if (total <= 0) return NaN;
  const rank = q * total;
  let prevLe = 0;
  let prevCum = 0;
  for (let i = 0; i < h.le.length; i++) {
    if (h.cum[i]! >= rank) {
      const upper = Number.isFinite(h.le[i]!) ? h.le[i]! : prevLe * 2;
      const inBucket = h.cum[i]! - prevCum;
      return inBucket <= 0 ? upper : prevLe + ((rank - prevCum) / inBucket) * (upper - prevLe);
    }
    prevLe = h.le[i]!;
    prevCum = h.cum[i]!;
  }
  return prevLe;
}

// ------------------------------------------------------------------ processes

interface Node {
  name: string;
  dir: string;
  server: ExchangeProcess;
}

async function startNode(name: string, dir: string, s: Settings, mode: 'off' | 'on' | 'replica', nats: NatsCluster | null): Promise<Node> {
  const repl =
    mode === 'off'
      ? {}
      : { replicate: mode, nats_urls: nats!.urls.join(','), node_name: name, lease_ms: LEASE_MS, heartbeat_ms: HEARTBEAT_MS };
  const server = new ExchangeProcess(
    { data_dir: dir, admin_token: TOKEN, durability: 'fsync', demo: false, gateways: s.gateways, snapshot_every: 1_000_000_000, ...repl },
    { logLevel: 'info' },
  );
  await server.ready(600_000);
  return { name, dir, server };
}

async function role(n: Node): Promise<string> {
  try {
    return ((await (await fetch(`${n.server.base}/health`, { signal: AbortSignal.timeout(1000) })).json()) as { role: string }).role;
  } catch (e) {
    if (e instanceof Error) return 'down';
    throw e;
  }
}

async function waitRole(n: Node, want: string, timeoutMs: number): Promise<void> {
  const until = performance.now() + timeoutMs;
  while (await role(n) !== want) {
    if (performance.now() > until) throw new Error(`${n.name} is not ${want} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

function admin(n: Node): AdminClient {
  return n.server.admin(60_000);
}

interface Population {
  market: number;
  keys: { keyId: number; secret: string }[];
}

async function populate(n: Node, s: Settings): Promise<Population> {
  const a = admin(n);
  const market = await openMarket(a);
  const setup = await createTraders(n.server, s.keys, {
    deposit_cents: 100_000_000,
    seed_shares: s.seed_shares,
    market_id: market,
    concurrency: 32,
    adminTimeoutMs: 60_000,
  });
  return { market, keys: setup.traders.map((t) => ({ keyId: t.key_id, secret: t.secret })) };
}

let runs = 0;

function placeLoad(
  base: string,
  p: Population,
  s: Settings,
  mode: 'closed' | 'open',
  durationMs: number,
  rate?: number,
): Promise<LoadResult> {
  const seed = (0x51ed2705 + 0x9e3779b1 * ++runs) >>> 0;
  return runLoad({
    baseUrl: base,
    keys: p.keys,
    markets: [p.market],
    mode,
    connections: s.place_connections,
    durationMs,
    ...(rate ? { rate } : {}),
    mix: { place: 1, cancel: 0, read: 0 },
    workers: s.workers,
    seed,
    mid: MID,
    spread: SPREAD,
  });
}

function readLoad(base: string, p: Population, s: Settings): Promise<LoadResult> {
  const seed = (0x2545f491 + 0x9e3779b1 * ++runs) >>> 0;
  return runLoad({
    baseUrl: base, keys: p.keys, markets: [p.market], mode: 'closed', connections: s.read_connections, durationMs: s.run_ms,
    mix: { place: 0, cancel: 0, read: 1 }, reads: READS, workers: s.workers, seed, mid: MID, spread: SPREAD,
  });
}

interface Measured {
  value: LoadResult;
  server_pct: number;
  nats_pct: number;
  machine_pct: number;
}

async function measured(s: Settings, server: number, nats: NatsCluster | null, fn: () => Promise<LoadResult>): Promise<Measured> {
  await waitQuiet([server, process.pid, ...(nats ? [0, 1, 2].map((i) => nats.pid(i)) : [])], {
    maxWaitMs: s.quiet_wait_ms,
    windowMs: 500,
    windows: 2,
  });
  const pids: Record<string, number> = { server };
  if (nats) for (let i = 0; i < nats.size; i++) if (nats.pid(i) > 0) pids[`nats${i}`] = nats.pid(i);
  const w = new CpuWindow(pids);
  const value = await fn();
  const c = w.stop();
  let natsPct = 0;
  for (const [k, v] of Object.entries(c.process_pct)) if (k.startsWith('nats')) natsPct += v;
  return { value, server_pct: c.process_pct.server!, nats_pct: round1(natsPct), machine_pct: c.machine_pct };
}

// ------------------------------------------------------------------ WebSocket subscribers on the replica

class Subscribers {
  readonly worker: Worker;
  private waiters: ((m: unknown) => void)[] = [];

  constructor(data: SubscriberWorkerData) {
    this.worker = new Worker(new URL('./lib/ws_subscriber_worker.js', import.meta.url), { workerData: data });
    this.worker.on('message', (m: unknown) => this.waiters.shift()?.(m));
  }

  private ask<T>(msg: Record<string, unknown>): Promise<T> {
    return new Promise((res) => {
      this.waiters.push(res as (m: unknown) => void);
      if (msg.type !== 'ready') this.worker.postMessage(msg);
    });
  }

  async ready(): Promise<void> {
    const m = await this.ask<{ type: string; message?: string }>({ type: 'ready' });
    if (m.type !== 'ready') throw new Error(`subscribers: ${m.message ?? m.type}`);
  }

  start(): void {
    this.worker.postMessage({ type: 'start' });
  }

  stop(): Promise<SubscriberReport> {
    return this.ask({ type: 'stop' });
  }

  quiet(ms: number, maxMs: number): Promise<unknown> {
    return this.ask({ type: 'quiet', ms, max_ms: maxMs });
  }

  async close(): Promise<void> {
    const exited = new Promise((r) => this.worker.once('exit', r));
    this.worker.postMessage({ type: 'close' });
    await exited;
  }
}

// ------------------------------------------------------------------ the run

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  if (!natsServerInstalled()) throw new Error('replicated_place needs nats-server (Debian package nats-server, /usr/sbin/nats-server)');
  const s = settings(opts.quick === true);
  const t0 = performance.now();
  const dir = mkdtempSync(join(tmpdir(), 'dx-bench-repl-'));
  const nats = await NatsCluster.start({ dir: join(dir, 'nats') });
  const nodes: Node[] = [];
  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  try {
    // ---- 1. durable placements, local-only vs replicated
    const local = await startNode('local', join(dir, 'local'), s, 'off', null);
    nodes.push(local);
    const a = await startNode('a', join(dir, 'a'), s, 'on', nats);
    nodes.push(a);
    await waitRole(a, 'primary', 60_000);
    const popLocal = await populate(local, s);
    const popRepl = await populate(a, s);
    const place: Record<'local' | 'replicated', Measured[]> = { local: [], replicated: [] };
    for (let i = 0; i < s.repeats; i++) {
      const order: ('local' | 'replicated')[] = i % 2 === 0 ? ['local', 'replicated'] : ['replicated', 'local'];
      for (const m of order) {
        const n = m === 'local' ? local : a;
        place[m].push(
          await measured(s, n.server.pid, nats, () => placeLoad(n.server.base, m === 'local' ? popLocal : popRepl, s, 'closed', s.run_ms)),
        );
      }
    }
    const localRates = place.local.map((m) => okRate(m.value));
    const replRates = place.replicated.map((m) => okRate(m.value));
    const localMed = median(localRates);
    const replMed = median(replRates);
    metrics.replicated_placements_per_s = round1(replMed);
    metrics.local_placements_per_s = round1(localMed);
    metrics.replicated_placements_per_s_min = round1(minOf(replRates));
    metrics.replicated_placements_per_s_max = round1(maxOf(replRates));
    metrics.local_placements_per_s_min = round1(minOf(localRates));
    metrics.local_placements_per_s_max = round1(maxOf(localRates));
    metrics.replicated_server_cpu_pct = round1(median(place.replicated.map((m) => m.server_pct)));
    metrics.local_server_cpu_pct = round1(median(place.local.map((m) => m.server_pct)));
    metrics.replicated_nats_cpu_pct = round1(median(place.replicated.map((m) => m.nats_pct)));

    // Open loop at the same rate on both: half of the replicated peak.
    const rate = Math.max(1, Math.round(replMed / 2));
    const openRun = async (n: Node, p: Population, perS: number): Promise<{ m: Measured; server: Hist; ack: Hist }> => {
      const before = await admin(n).metrics();
      const m = await measured(s, n.server.pid, nats, () => placeLoad(n.server.base, p, s, 'open', s.open_ms, perS));
      const after = await admin(n).metrics();
      const route = 'route="place_order"';
      return {
        m,
        server: histDelta(
          histogram(before, 'dx_http_request_duration_seconds', route),
          histogram(after, 'dx_http_request_duration_seconds', route),
        ),
        ack: histDelta(histogram(before, 'dx_replication_ack_seconds'), histogram(after, 'dx_replication_ack_seconds')),
      };
    };
    const openLocal = await openRun(local, popLocal, rate);
    const openRepl = await openRun(a, popRepl, rate);
    // A quarter of the peak: how much of the tail at half of the peak is queueing on the shared cores.
    const low = Math.max(1, Math.round(replMed / 4));
    const lowLocal = await openRun(local, popLocal, low);
    const lowRepl = await openRun(a, popRepl, low);
    const us = (sec: number): number => Math.round(sec * 1e6);
    metrics.open_rate_per_s = rate;
    metrics.local_server_p50_us = us(quantile(openLocal.server, 0.5));
    metrics.local_server_p99_us = us(quantile(openLocal.server, 0.99));
    metrics.replicated_server_p50_us = us(quantile(openRepl.server, 0.5));
    metrics.replicated_server_p99_us = us(quantile(openRepl.server, 0.99));
    metrics.added_server_p99_us = metrics.replicated_server_p99_us - metrics.local_server_p99_us;
    metrics.local_client_p50_us = us(openLocal.m.value.latency_ms.p50 / 1000);
    metrics.local_client_p99_us = us(openLocal.m.value.latency_ms.p99 / 1000);
    metrics.replicated_client_p50_us = us(openRepl.m.value.latency_ms.p50 / 1000);
    metrics.replicated_client_p99_us = us(openRepl.m.value.latency_ms.p99 / 1000);
    metrics.added_client_p99_us = metrics.replicated_client_p99_us - metrics.local_client_p99_us;
    metrics.ack_p50_us = us(quantile(openRepl.ack, 0.5));
    metrics.ack_p99_us = us(quantile(openRepl.ack, 0.99));
    metrics.quarter_rate_per_s = low;
    metrics.quarter_local_server_p99_us = us(quantile(lowLocal.server, 0.99));
    metrics.quarter_replicated_server_p99_us = us(quantile(lowRepl.server, 0.99));
    metrics.quarter_added_server_p99_us = metrics.quarter_replicated_server_p99_us - metrics.quarter_local_server_p99_us;
    metrics.quarter_local_server_p50_us = us(quantile(lowLocal.server, 0.5));
    metrics.quarter_replicated_server_p50_us = us(quantile(lowRepl.server, 0.5));
    metrics.quarter_ack_p99_us = us(quantile(lowRepl.ack, 0.99));
    metrics.open_send_lag_p99_us_local = us(openLocal.m.value.send_lag_ms.p99 / 1000);
    metrics.open_send_lag_p99_us_replicated = us(openRepl.m.value.send_lag_ms.p99 / 1000);
    await closeFetchConnections();
    await local.server.terminate(30_000);
    nodes.splice(nodes.indexOf(local), 1);

    // ---- 2. followers under the placement load: a standby and a read replica
    const b = await startNode('b', join(dir, 'b'), s, 'on', nats);
    nodes.push(b);
    const r = await startNode('r', join(dir, 'r'), s, 'replica', nats);
    nodes.push(r);
    await waitRole(b, 'standby', 30_000);
    const subs = new Subscribers({
      port: r.server.port,
      market_id: popRepl.market,
      sample_connections: 0,
      keys: Array.from({ length: s.ws_subscribers }, (_v, i) => ({
        key_id: popRepl.keys[i % popRepl.keys.length]!.keyId,
        secret: popRepl.keys[i % popRepl.keys.length]!.secret,
      })),
    });
    await subs.ready();
    const lagBefore = { r: await admin(r).metrics(), b: await admin(b).metrics() };
    subs.start();
    const tLag = performance.now();
    const lagRun = await measured(s, a.server.pid, nats, () => placeLoad(a.server.base, popRepl, s, 'closed', s.run_ms));
    const lagWall = (performance.now() - tLag) / 1000;
    await subs.quiet(300, 10_000);
    const ws = await subs.stop();
    const lagAfter = { r: await admin(r).metrics(), b: await admin(b).metrics() };
    const lagR = histDelta(
      histogram(lagBefore.r, 'dx_replication_apply_lag_seconds'),
      histogram(lagAfter.r, 'dx_replication_apply_lag_seconds'),
    );
    const lagB = histDelta(
      histogram(lagBefore.b, 'dx_replication_apply_lag_seconds'),
      histogram(lagAfter.b, 'dx_replication_apply_lag_seconds'),
    );
    metrics.replica_lag_p50_ms = round1(quantile(lagR, 0.5) * 1000);
    metrics.replica_lag_p99_ms = round1(quantile(lagR, 0.99) * 1000);
    metrics.standby_lag_p50_ms = round1(quantile(lagB, 0.5) * 1000);
    metrics.standby_lag_p99_ms = round1(quantile(lagB, 0.99) * 1000);
    metrics.lag_load_placements_per_s = okRate(lagRun.value);
    metrics.replica_ws_subscribers = s.ws_subscribers;
    metrics.replica_ws_msgs_per_s = round1(ws.frames / lagWall);
    metrics.replica_ws_closes = Object.values(ws.closes).reduce((x, y) => x + y, 0);
    await subs.close();

    // ---- 3. reads: one gateway thread of the primary vs of the replica
    const reads: Record<'primary' | 'replica', Measured[]> = { primary: [], replica: [] };
    for (let i = 0; i < s.repeats; i++) {
      const order: ('primary' | 'replica')[] = i % 2 === 0 ? ['primary', 'replica'] : ['replica', 'primary'];
      for (const m of order) {
        const n = m === 'primary' ? a : r;
        reads[m].push(await measured(s, n.server.pid, nats, () => readLoad(n.server.base, popRepl, s)));
      }
    }
    const pReads = reads.primary.map((m) => okRate(m.value));
    const rReads = reads.replica.map((m) => okRate(m.value));
    metrics.primary_reads_per_s = round1(median(pReads));
    metrics.replica_reads_per_s = round1(median(rReads));
    metrics.replica_vs_primary_reads = round3(median(rReads) / median(pReads));
    metrics.replica_server_cpu_pct = round1(median(reads.replica.map((m) => m.server_pct)));
    metrics.primary_read_server_cpu_pct = round1(median(reads.primary.map((m) => m.server_pct)));
    await closeFetchConnections();

    // ---- 4. failover: SIGKILL the primary, first acknowledged write on the new one
    await r.server.terminate(30_000);
    nodes.splice(nodes.indexOf(r), 1);
    const failovers: number[] = [];
    let primary = a;
    let standby = b;
    for (let i = 0; i < s.failovers; i++) {
      await waitRole(standby, 'standby', 60_000);
      // Steady heartbeats on both sides before the kill.
      await sleep(2 * HEARTBEAT_MS);
      const killAt = performance.now();
      await primary.server.kill();
      const probe = admin(standby);
      for (;;) {
        try {
          await probe.oracleTick({ source_id: 62, price: '100000000' });
          break;
        } catch (e) {
          if (!(e instanceof Error)) throw e;
          if (performance.now() - killAt > 60_000) throw new Error(`no acknowledged write on ${standby.name} within 60 s: ${e.message}`);
          await sleep(5);
        }
      }
      failovers.push(Math.round(performance.now() - killAt));
      const restarted = await startNode(primary.name, primary.dir, s, 'on', nats);
      nodes.splice(nodes.indexOf(primary), 1, restarted);
      [primary, standby] = [standby, restarted];
    }
    metrics.failover_ms = median(failovers);
    metrics.failover_ms_min = minOf(failovers);
    metrics.failover_ms_max = maxOf(failovers);
    metrics.failovers = failovers.length;
    metrics.lease_ms = LEASE_MS;
    metrics.heartbeat_ms = HEARTBEAT_MS;

    const ratio = replMed / localMed;
    metrics.repeats = s.repeats;
    metrics.run_ms = s.run_ms;
    metrics.open_ms = s.open_ms;
    metrics.keys = s.keys;
    metrics.place_connections = s.place_connections;
    metrics.read_connections = s.read_connections;
    metrics.gateways = s.gateways;
    metrics.loadgen_workers = s.workers;
    metrics.wall_s = Math.round((performance.now() - t0) / 1000);

    notes.push(
      `target replicated durable placements >= 70% of local-only durable placements: ${(ratio * 100).toFixed(1)}% ` +
        `(${Math.round(replMed)}/s vs ${Math.round(localMed)}/s, medians of ${s.repeats} interleaved closed-loop runs of ${s.run_ms} ms, ` +
        `${s.place_connections} connections) — ${ratio >= 0.7 ? 'met' : 'NOT met'}. Runs: replicated ` +
        `[${replRates.map(Math.round).join(', ')}], local [${localRates.map(Math.round).join(', ')}].`,
    );
    notes.push(
      `target server-side p99 added by replication <= 2 ms at half of peak: open loop at ${rate}/s (half the replicated peak) on both, ` +
        `p99 of each server's own place_order histogram (bucket bounds 0.1/0.25/0.5/1/2.5/5/10/25/50/100 ms..., interpolated): ` +
        `replicated ${metrics.replicated_server_p99_us} us vs local ${metrics.local_server_p99_us} us = ` +
        `+${metrics.added_server_p99_us} us — ${metrics.added_server_p99_us <= 2000 ? 'met' : 'NOT met'}. The load generator saw ` +
        `p50/p99 ${metrics.replicated_client_p50_us}/${metrics.replicated_client_p99_us} us vs ` +
        `${metrics.local_client_p50_us}/${metrics.local_client_p99_us} us (+${metrics.added_client_p99_us} us at p99). Publish ` +
        `to quorum ack on the primary: p50 ${metrics.ack_p50_us} us, p99 ${metrics.ack_p99_us} us. At a quarter of the peak ` +
        `(${low}/s): server p50/p99 replicated ` +
        `${metrics.quarter_replicated_server_p50_us}/${metrics.quarter_replicated_server_p99_us} us vs local ` +
        `${metrics.quarter_local_server_p50_us}/${metrics.quarter_local_server_p99_us} us ` +
        `(+${metrics.quarter_added_server_p99_us} us at p99; ack p99 ${metrics.quarter_ack_p99_us} us).`,
    );
    notes.push(
      `target failover <= 5 s (SIGKILL of the primary to the first acknowledged write on the new primary, lease ${LEASE_MS} ms, ` +
        `heartbeat ${HEARTBEAT_MS} ms, an oracle tick through the control plane as the probe): [${failovers.join(', ')}] ms, median ` +
        `${metrics.failover_ms} ms — ${metrics.failover_ms <= 5000 ? 'met' : 'NOT met'}.`,
    );
    notes.push(
      `target a replica serves reads at >= 90% of a primary gateway thread: ${(metrics.replica_vs_primary_reads * 100).toFixed(1)}% ` +
        `(${metrics.replica_reads_per_s}/s vs ${metrics.primary_reads_per_s}/s, read mix book 30 / balance 20 / own orders 25 / market ` +
        `25, ${s.read_connections} connections, ${s.repeats} interleaved closed-loop runs of ${s.run_ms} ms each, one gateway thread ` +
        `each, no writes meanwhile) — ${metrics.replica_vs_primary_reads >= 0.9 ? 'met' : 'NOT met'}.`,
    );
    notes.push(
      `target replica lag p99 <= 50 ms under the placement load: ${metrics.replica_lag_p99_ms} ms (p50 ${metrics.replica_lag_p50_ms} ms; ` +
        `the standby ${metrics.standby_lag_p99_ms} ms) while ${metrics.lag_load_placements_per_s} placements/s ran on the primary ` +
        `(closed loop, ${s.place_connections} connections); lag = apply time on the follower - the sequencer's stamp of the batch's ` +
        `last event (same clock: one machine), from each follower's dx_replication_apply_lag_seconds histogram (delta over the run, ` +
        `interpolated within buckets) — ${metrics.replica_lag_p99_ms <= 50 ? 'met' : 'NOT met'}.`,
    );
    notes.push(
      `WebSocket fan-out from the replica during that load: ${s.ws_subscribers} subscribers of the market's orderbook_delta on the ` +
        `replica's port received ${metrics.replica_ws_msgs_per_s} msgs/s (${ws.frames} frames, closes ${JSON.stringify(ws.closes)}).`,
    );
    notes.push(
      `one machine: the 3 NATS servers (${metrics.replicated_nats_cpu_pct}% of a core in the replicated closed loops), the exchanges, ` +
        `the followers and the load generator (${s.workers} worker(s)) share ${environment().machine.cpus} cores, so the replicated ` +
        `figures pay for NATS' CPU on the same cores (in a deployment NATS and the followers are other hosts). Server CPU in the closed ` +
        `loops: replicated ${metrics.replicated_server_cpu_pct}%, local ${metrics.local_server_cpu_pct}% of a core. nats-server ` +
        `${s.nats_version}, no sync_interval: acks mean a quorum's page cache (docs/replication.md, "What \"durable\" means").`,
    );
    if (Math.abs(metrics.quarter_added_server_p99_us - metrics.added_server_p99_us) > 2000) {
      notes.push(
        `FLAG the p99 added by replication differs by more than 2 ms between half (${metrics.added_server_p99_us} us) and a quarter ` +
          `(${metrics.quarter_added_server_p99_us} us) of the peak: one open loop per point on shared cores, the tail is ` +
          `noise-dominated; read both.`,
      );
    }
    for (const [name, xs] of [
      ['replicated_placements_per_s', replRates],
      ['local_placements_per_s', localRates],
      ['replica_reads_per_s', rReads],
      ['primary_reads_per_s', pReads],
    ] as const) {
      if (xs.length > 1 && relativeSpread(xs) > 0.1)
        notes.push(
          `FLAG ${name} spread ${(relativeSpread(xs) * 100).toFixed(1)}% over ${xs.length} runs: ` +
            `${xs.map((x) => Math.round(x)).join(', ')}`,
        );
    }
    if (s.quick) notes.push('QUICK run: short runs, for checking the tooling; not figures to quote.');
    const env = environment();
    return {
      name: 'replicated_place',
      node: env.node,
      machine: env.machine,
      workload: `A 3-node NATS JetStream cluster (nats-server ${s.nats_version}, 127.0.0.1, stream R3 file storage) and exchange ` +
        `processes (--durability fsync, ${s.gateways} gateway thread each): a local-only exchange beside a replicated primary, ` +
        `${s.keys} funded accounts each, tools/loadgen signed placements (closed loops interleaved, ${s.repeats} x ${s.run_ms} ms; an ` +
        `open loop at half the replicated peak on both); then a standby and a read replica following under a closed placement loop with ` +
        `${s.ws_subscribers} WebSocket subscribers on the replica; reads on the primary vs the replica; ${s.failovers} primary ` +
        `SIGKILLs (lease ${LEASE_MS} ms).`,
      metrics,
      peers: {
        local_only_durable: {
          placements_per_s: round1(localMed),
          server_p99_us: metrics.local_server_p99_us,
          client_p99_us: metrics.local_client_p99_us,
        },
      },
      ratios: { replicated_vs_local: round3(ratio), replica_vs_primary_reads: metrics.replica_vs_primary_reads },
      notes,
    };
  } finally {
    await closeFetchConnections();
    for (const n of nodes) if (n.server.running) await n.server.kill();
    await nats.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
