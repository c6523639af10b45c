// gateway_ab: compares the placement path of two builds of the exchange,
// alternating exchange processes (A, B, A, B, ...) in one run so that a
// noisy host slows both alike: tools/engine_ab does the same for the
// engine alone. Main thread of a CLI; the load generator's piscina workers
// (test/support/loadgen) do the sending, and the generator is this build's
// for both sides, so only the exchange differs.
//
//   node dist/bench/gateway_ab.js <dist A> <dist B> [--rounds 3] [--rate 2000] [--open-ms 8000]
//                                 [--closed-ms 5000] [--connections 256] [--keys 512] [--unthrottled]
//
// Each process (a build's dist/src/main/exchange.js, durability none, demo
// off, one market, `keys` funded traders with seeded shares, as
// bench/gateway_place.ts loads it) gets a short warm-up, then:
//   - an open loop at a fixed `rate` of signed placements (every key in
//     rotation, signed ahead): server CPU per placement and the latency
//     p50/p99 from the intended send time, the figure that tolerates a
//     shared machine best (the same work whatever the host does);
//   - a closed loop at `connections` (a fresh slice of keys, signed ahead):
//     placements/s and server CPU per placement.
// Prints one line per process and the medians of each side with B/A. Both
// builds must accept the flags of test/support/exchange.ts and the control
// plane of bench/lib/population.ts (true from 4ae70ce on). Exit code 2 on a
// usage error.

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseCommandLine, parseOrUsage, UsageError } from '../src/lib/command_line.js';
import { runLoad, type LoadResult } from '../test/support/loadgen/loadgen.js';
import { loadExchange, measured, MID, okRate, round1, settings, SPREAD, type Measured, type Settings } from './gateway_place.js';
import { startBenchExchange } from './lib/population.js';
import { median } from '../test/support/bench/stats.js';

const USAGE =
  'usage: node dist/bench/gateway_ab.js <dist A> <dist B> [--rounds 3] [--rate 2000] [--open-ms 8000] [--closed-ms 5000] ' +
  '[--connections 256] [--keys 512] [--unthrottled]';

const OPTIONS = {
  rounds: { type: 'string' },
  rate: { type: 'string' },
  'open-ms': { type: 'string' },
  'closed-ms': { type: 'string' },
  connections: { type: 'string' },
  keys: { type: 'string' },
  unthrottled: { type: 'boolean' },
} as const;

const WARM_MS = 2000;

interface Options {
  a: string;
  b: string;
  rounds: number;
  rate: number;
  openMs: number;
  closedMs: number;
  connections: number;
  keys: number;
  unthrottled: boolean;
}

function parse(argv: string[]): Options {
  const { values, positionals: pos } = parseCommandLine(argv, OPTIONS);
  const num = (name: keyof typeof OPTIONS, dflt: number, min: number): number => {
    const raw = values[name];
    if (raw === undefined) return dflt;
    const v = Number(raw);
    if (!Number.isInteger(v) || v < min) throw new UsageError(`--${name}: expected an integer >= ${min}`);
    return v;
  };
  if (pos.length !== 2) throw new UsageError('two builds to compare are needed');
  const [a, b] = pos.map((p) => resolve(p)) as [string, string];
  for (const d of [a, b])
    if (!existsSync(exchangeScript(d))) throw new UsageError(`${d} has no src/main/exchange.js (a dist directory is expected)`);
  const o = {
    a,
    b,
    rounds: num('rounds', 3, 1),
    rate: num('rate', 2000, 1),
    openMs: num('open-ms', 8000, 500),
    closedMs: num('closed-ms', 5000, 500),
    connections: num('connections', 256, 1),
    keys: num('keys', 512, 2),
    unthrottled: values.unthrottled === true,
  };
  if (o.connections > o.keys) throw new UsageError('--connections may not exceed --keys (each connection writes with its own key)');
  return o;
}

function exchangeScript(dist: string): string {
  return resolve(dist, 'src', 'main', 'exchange.js');
}

/** One exchange process's figures. */
interface Side {
  open_server_us: number;
  open_p50_us: number;
  open_p99_us: number;
  closed_per_s: number;
  closed_server_us: number;
}

/** Server CPU per 2xx answer, in µs. */
function serverUsPerOk(m: Measured<LoadResult>): number {
  return round1(((m.server_pct / 100) * 1e6) / Math.max(1, okRate(m.value)));
}

/** Starts `dist`'s exchange, loads it, warms it up, then measures the open and the closed loop. */
async function measureBuild(o: Options, s: Settings, dist: string, seed: number): Promise<Side> {
  const ex = await startBenchExchange({ gateways: s.gateways, durability: 'none' }, undefined, exchangeScript(dist));
  try {
    const { target, market, keys, nextSeed, slice } = await loadExchange(ex, { keys: o.keys, seed_shares: 1000 }, seed, o.unthrottled);
    const mix = { place: 1, cancel: 0, read: 0 };
    const common = { baseUrl: ex.base, markets: [market], mix, workers: s.workers, mid: MID, spread: SPREAD };
    const closed = (durationMs: number, start?: () => void): Promise<LoadResult> => {
      const run = slice(o.connections);
      return runLoad({ ...common, keys: run.keys, seed: run.seed, mode: 'closed', connections: o.connections, durationMs, onStart: start });
    };
    await closed(WARM_MS);
    const open = await measured(s, target, (start) =>
      runLoad({
        ...common, keys, seed: nextSeed(), mode: 'open', rate: o.rate, connections: o.connections, durationMs: o.openMs,
        presign: true, onStart: start,
      }),
    );
    const closedRun = await measured(s, target, (start) => closed(o.closedMs, start));
    if (!ex.child.running) throw new Error(`the exchange of ${dist} died: ${ex.stderrTail().slice(-2000)}`);
    return {
      open_server_us: serverUsPerOk(open),
      open_p50_us: Math.round(open.value.latency_ms.p50 * 1000),
      open_p99_us: Math.round(open.value.latency_ms.p99 * 1000),
      closed_per_s: okRate(closedRun.value),
      closed_server_us: serverUsPerOk(closedRun),
    };
  } finally {
    await ex.stop();
  }
}

async function main(argv: string[]): Promise<number> {
  const o = parseOrUsage(() => parse(argv), USAGE);
  if (o === null) return 2;
  // Alternation is this tool's defence against a shared host: no waiting for a quiet machine, no redone runs.
  const s: Settings = { ...settings(false), max_attempts: 1, quiet_wait_ms: 0 };
  const sides: Record<'A' | 'B', Side[]> = { A: [], B: [] };
  for (let i = 0; i < o.rounds; i++) {
    for (const [tag, dist] of [['A', o.a], ['B', o.b]] as const) {
      const r = await measureBuild(o, s, dist, 0x5eed + i);
      sides[tag].push(r);
      console.log(
        `round ${i + 1} ${tag} ${dist}: open ${o.rate}/s server ${r.open_server_us} us/placement, p50 ${r.open_p50_us} us, ` +
          `p99 ${r.open_p99_us} us; closed ${o.connections} conns ${Math.round(r.closed_per_s)}/s, ` +
          `server ${r.closed_server_us} us/placement`,
      );
    }
  }
  const keys: (keyof Side)[] = ['open_server_us', 'open_p50_us', 'open_p99_us', 'closed_per_s', 'closed_server_us'];
  for (const k of keys) {
    const a = median(sides.A.map((x) => x[k]));
    const b = median(sides.B.map((x) => x[k]));
    console.log(`${k}: A ${a}  B ${b}  B/A ${(b / a).toFixed(3)}`);
  }
  console.log(`(medians of ${o.rounds} rounds; ${s.gateways} gateway thread(s), ${s.workers} load worker(s), ${o.keys} keys` +
      `${o.unthrottled ? ', unthrottled tier' : ', default tier'})`);
  return 0;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exitCode = await main(process.argv.slice(2));
}
