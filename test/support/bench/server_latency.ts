// server_latency: the exchange's own latency figures for a benchmark run,
// beside the load generator's. The exchange keeps per route and per stage a
// log-linear histogram (src/metrics, 16 sub-buckets per power of two: within
// 6.25%); GET /admin/latency returns them with their buckets. A benchmark
// reads them before and after a run and takes the difference, so the server's
// p50/p99/p99.9/max of exactly that window sit next to the client's, and a
// generator stall can neither hide nor fake a server stall. Main thread of
// the bench runner.

import { nearestRank } from '../../../src/lib/log_histogram.js';
import type { LatencyReport } from '../../../src/wire/control_plane.js';

export type { LatencyReport };

/** Where the control plane is. */
export interface AdminEndpoint {
  adminBase: string;
  token: string;
}

export async function readLatency(ex: AdminEndpoint): Promise<LatencyReport> {
  const r = await fetch(`${ex.adminBase}/admin/latency`, { headers: { authorization: `Bearer ${ex.token}` } });
  if (r.status !== 200) throw new Error(`GET /admin/latency: ${r.status} ${await r.text()}`);
  return (await r.json()) as LatencyReport;
}

/** Server-side figures of one stage over a window (µs); a percentile is its bucket's highest value, so never below the truth. */
export interface ServerSummary {
  count: number;
  mean_us: number;
  p50_us: number;
  p90_us: number;
  p99_us: number;
  p999_us: number;
  /** The highest bucket that gained a value in the window (its highest value). */
  max_us: number;
}

/** Which histograms to add up: a lane, and a route and stage (default: every route, stage total). */
export interface Select {
  lane?: string;
  routes?: readonly string[];
  stage?: string;
}

function matches(h: LatencyReport['histograms'][number], s: Select): boolean {
  return h.lane === (s.lane ?? 'rest') && (s.routes === undefined || s.routes.includes(h.route)) && h.stage === (s.stage ?? 'total');
}

/** The buckets (highest µs -> count) the selected histograms gained between `before` and `after`, and their sum. */
function gained(before: LatencyReport, after: LatencyReport, s: Select): { buckets: Map<number, number>; sum: number } {
  const buckets = new Map<number, number>();
  let sum = 0;
  const add = (r: LatencyReport, sign: number): void => {
    for (const h of r.histograms) {
      if (!matches(h, s)) continue;
      sum += sign * h.sum_us;
      for (const [hi, c] of h.buckets) buckets.set(hi, (buckets.get(hi) ?? 0) + sign * c);
    }
  };
  add(after, 1);
  add(before, -1);
  return { buckets, sum };
}

export function serverSummary(before: LatencyReport, after: LatencyReport, s: Select = {}): ServerSummary {
  const { buckets, sum } = gained(before, after, s);
  const sorted = [...buckets].filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
  let count = 0;
  for (const [, c] of sorted) count += c;
  const at = (p: number): number => {
    if (count === 0) return 0;
    const rank = nearestRank(p, count);
    let seen = 0;
    for (const [hi, c] of sorted) {
      seen += c;
      if (seen >= rank) return hi;
    }
    return sorted[sorted.length - 1]![0];
  };
  return {
    count, mean_us: count === 0 ? 0 : Math.round(sum / count),
    p50_us: at(50), p90_us: at(90), p99_us: at(99), p999_us: at(99.9), max_us: count === 0 ? 0 : sorted[sorted.length - 1]![0],
  };
}

/** Every stage of one route over the window (stages nobody passed have count 0). */
export function serverStages(before: LatencyReport, after: LatencyReport, lane: string, route: string): Record<string, ServerSummary> {
  const out: Record<string, ServerSummary> = {};
  for (const stage of ['total', 'verify', 'publish', 'sequence', 'durable', 'apply', 'reply'])
    out[stage] = serverSummary(before, after, { lane, routes: [route], stage });
  return out;
}

/** The journal's fsync durations over the window. */
export function fsyncSummary(before: LatencyReport, after: LatencyReport): ServerSummary {
  const wrap = (r: LatencyReport): LatencyReport => ({ histograms: r.journal_fsync ? [r.journal_fsync] : [], journal_fsync: null });
  return serverSummary(wrap(before), wrap(after), { lane: 'journal', stage: 'fsync' });
}

/** Puts `<prefix>server_{p50,p99,p999,max}_us` (and count) of a summary into a metrics record. */
export function putServer(metrics: Record<string, number>, prefix: string, s: ServerSummary, suffix = ''): void {
  metrics[`${prefix}server_p50_us${suffix}`] = s.p50_us;
  metrics[`${prefix}server_p99_us${suffix}`] = s.p99_us;
  metrics[`${prefix}server_p999_us${suffix}`] = s.p999_us;
  metrics[`${prefix}server_max_us${suffix}`] = s.max_us;
  metrics[`${prefix}server_count${suffix}`] = s.count;
}

/** One line per stage: "verify p50/p99 12/40 us; publish ...". */
export function stagesLine(stages: Record<string, ServerSummary>): string {
  return (
    Object.entries(stages)
      .filter(([, s]) => s.count > 0)
      .map(([k, s]) => `${k} ${s.p50_us}/${s.p99_us}/${s.max_us}`)
      .join('; ') + ' (p50/p99/max µs)'
  );
}
