// idle: the CPU an idle exchange uses, every thread of the process, from
// /proc (utime + stime, 10 ms ticks). An exchange process with the demo off
// and the default wait strategies gets one market with a trading round open
// (a round close timer an hour away) and a few funded accounts, answers a few
// placements, then nobody talks to it for IDLE_MS; its CPU over that window is
// idle_cpu_pct (% of one core). For the wait-strategy comparison
// (docs/latency.md) the same is measured, over a shorter window, with every
// role spinning and with every role backing off. Main thread of the bench
// runner; reports, never asserts.

import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { DxClient } from '../src/client/client.js';
import { closeFetchConnections } from '../src/client/transport.js';
import { waitRoles } from '../src/main/config.js';
import { spawnExchange } from '../test/support/exchange.js';
import { createTraders, openMarket } from './lib/population.js';
import { CpuWindow, waitQuiet } from './lib/process_stats.js';
import { environment, type BenchResult } from './lib/result.js';

const TOKEN = 'idle-bench-token-0123456789';
const SETTLE_MS = 2000;

interface IdleCase {
  name: string;
  wait: string;
  ms: number;
}

interface IdleResult {
  c: IdleCase;
  pct: number;
  machine_pct: number;
  threads: { comm: string; tid: number; pct: number }[];
}

async function idleCase(c: IdleCase, quietMs: number): Promise<IdleResult> {
  const dir = mkdtempSync(join(tmpdir(), `dx-bench-idle-${c.name}-`));
  const ex = await spawnExchange(
    { data_dir: dir, admin_token: TOKEN, wait: c.wait, demo: false },
    { logLevel: 'warn', readyTimeoutMs: 60_000 },
  );
  try {
    const market = await openMarket(ex.admin(30_000));
    const setup = await createTraders(ex, 4, { deposit_cents: 1_000_000, seed_shares: 0, market_id: market, concurrency: 4 });
    const t = setup.traders[0]!;
    const client = new DxClient({ baseUrl: ex.base, keyId: t.key_id, secret: t.secret, timeoutMs: 10_000 });
    for (let i = 0; i < 10; i++) await client.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 20, qty: 1 });
    await closeFetchConnections();
    await sleep(SETTLE_MS);
    await waitQuiet([ex.pid, process.pid], { maxWaitMs: quietMs, windowMs: 500, windows: 2 });
    const w = new CpuWindow({ server: ex.pid });
    await sleep(c.ms);
    const cpu = w.stop();
    if (!ex.running) throw new Error(`the ${c.name} exchange died: ${ex.stderrTail().slice(-2000)}`);
    return { c, pct: cpu.process_pct.server!, machine_pct: cpu.machine_pct, threads: cpu.threads.server ?? [] };
  } finally {
    await ex.terminate(30_000);
    rmSync(dir, { recursive: true, force: true });
  }
}

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const quick = opts.quick === true;
  const t0 = performance.now();
  const idleMs = quick ? 5000 : 60_000;
  const shortMs = quick ? 3000 : 10_000;
  const cases: IdleCase[] = [
    { name: 'default', wait: 'auto', ms: idleMs },
    { name: 'wait_spin', wait: 'spin', ms: shortMs },
    { name: 'wait_backoff', wait: 'backoff', ms: shortMs },
    { name: 'wait_park', wait: 'park', ms: shortMs },
  ];
  const results: IdleResult[] = [];
  for (const c of cases) results.push(await idleCase(c, quick ? 3000 : 20_000));
  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  for (const r of results) {
    const key = r.c.name === 'default' ? 'idle_cpu_pct' : `idle_cpu_pct_${r.c.name}`;
    metrics[key] = r.pct;
    metrics[`${key === 'idle_cpu_pct' ? 'idle' : `idle_${r.c.name}`}_window_ms`] = r.c.ms;
    notes.push(
      `${r.c.name} (--wait ${r.c.wait}): ${r.pct}% of one core over ${r.c.ms / 1000} s, all threads (machine ${r.machine_pct}%); threads ` +
        `that used any CPU: ${r.threads.length === 0 ? 'none' : r.threads.map((t) => `${t.comm}/${t.tid} ${t.pct}%`).join(', ')}.`,
    );
  }
  const auto = waitRoles('auto', availableParallelism(), Math.max(1, availableParallelism() - 1));
  notes.push(
    `the default wait (auto) on this machine (${availableParallelism()} cores): engine ${auto.engine}, journal ${auto.journal}, gateway ` +
      `${auto.gateway}.`,
  );
  notes.push(
    `target idle exchange <= 2% of one core over 60 s (all threads): ${metrics.idle_cpu_pct}% — ` +
      `${metrics.idle_cpu_pct! <= 2 ? 'met' : 'NOT met'}.`,
  );
  notes.push('CPU from /proc/<pid>/stat (utime + stime of the whole process, 10 ms ticks: one tick over 60 s is 0.017% of a core).');
  if (quick) notes.push('QUICK run: short windows, for checking the tooling; not figures to quote.');
  const env = environment();
  return {
    name: 'idle',
    node: env.node,
    machine: env.machine,
    workload: `An exchange process (demo off, durability fsync, default gateways) with one market and a trading round (closing in an ` +
      `hour), 4 funded accounts and 10 resting orders placed ${SETTLE_MS / 1000} s before the window; then no client traffic for ` +
        `${idleMs / 1000} s, CPU of every thread from /proc. The same with --wait spin, backoff and park for ${shortMs / 1000} s each ` +
          `(fresh exchanges).`,
    metrics,
    peers: {},
    ratios: {},
    notes,
    wall_s: Math.round((performance.now() - t0) / 1000),
  };
}
