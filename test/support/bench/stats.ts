// stats: order statistics over samples in a Float64Array. Bench runner only.
// Percentiles use the nearest-rank definition (the smallest sample with at
// least p% of the samples at or below it), so every reported value is a value
// that was actually measured. Inputs are never reordered: we sort a copy.

import { nearestRank } from '../../../src/lib/log_histogram.js';

/** A sorted copy (ascending, numeric). */
export function sortedCopy(xs: Float64Array): Float64Array {
  return Float64Array.from(xs).sort();
}

/** Nearest-rank percentile (0 < p <= 100) of an already sorted array; NaN when empty. */
export function percentileSorted(sorted: Float64Array, p: number): number {
  const n = sorted.length;
  if (n === 0) return NaN;
  let rank = nearestRank(p, n);
  if (rank > n) rank = n;
  return sorted[rank - 1]!;
}

/** Nearest-rank percentile of unsorted samples (sorts a copy). */
export function percentile(xs: Float64Array, p: number): number {
  return percentileSorted(sortedCopy(xs), p);
}

/** Several percentiles with one sort; keys are the requested p values. */
export function percentiles(xs: Float64Array, ps: readonly number[]): Map<number, number> {
  const s = sortedCopy(xs);
  const out = new Map<number, number>();
  for (const p of ps) out.set(p, percentileSorted(s, p));
  return out;
}

/** Median (mean of the two middle samples for an even count); NaN when empty. */
export function median(xs: Float64Array | readonly number[]): number {
  const s = Float64Array.from(xs).sort();
  const n = s.length;
  if (n === 0) return NaN;
  return n % 2 === 1 ? s[(n - 1) >> 1]! : (s[n / 2 - 1]! + s[n / 2]!) / 2;
}

export function min(xs: Float64Array | readonly number[]): number {
  let m = Infinity;
  for (const x of xs) if (x < m) m = x;
  return m;
}

export function max(xs: Float64Array | readonly number[]): number {
  let m = -Infinity;
  for (const x of xs) if (x > m) m = x;
  return m;
}

export function mean(xs: Float64Array | readonly number[]): number {
  let s = 0;
  for (const x of xs) s += x;
  return xs.length === 0 ? NaN : s / xs.length;
}

/**
 * CPU µs per request over repeated runs: each run's own CPU (% of a core)
 * over its own requests per second, then the median run; never one run's
 * CPU over another's rate. NaN when no run answered.
 */
export function cpuUsPerReq(pcts: number[], perS: number[]): number {
  const xs: number[] = [];
  pcts.forEach((pct, i) => {
    if (perS[i]! > 0) xs.push(((pct / 100) * 1e6) / perS[i]!);
  });
  return xs.length > 0 ? median(xs) : NaN;
}

/** (max - min) / median of repeated runs: the spread we flag above 10%. */
export function relativeSpread(xs: Float64Array | readonly number[]): number {
  return (max(xs) - min(xs)) / median(xs);
}

export type LatencyQuantile = 'p50' | 'p99' | 'p999' | 'max';

/**
 * Writes the quantiles of a latency summary given in ms (the load
 * generator's) as rounded microseconds under `${prefix}${q}_us`, the key
 * shape every HTTP benchmark reports and the report reads.
 */
export function putLatencyUs(
  metrics: Record<string, number>, prefix: string, ms: Readonly<Record<LatencyQuantile, number>>,
  qs: readonly LatencyQuantile[] = ['p50', 'p99', 'p999', 'max'],
): void {
  for (const q of qs) metrics[`${prefix}${q}_us`] = Math.round(ms[q] * 1000);
}
