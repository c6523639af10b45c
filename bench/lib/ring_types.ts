// Result shape of the ring benchmarks (the lead unifies bench result types later).

export interface BenchResult {
  name: string;
  node: string;
  workload: string;
  metrics: Record<string, number>;
  peers: Record<string, Record<string, number>>;
  ratios: Record<string, number>;
}

/** Percentiles of a sample, by sorting a copy: p in [0, 1]. */
export function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1));
  return sorted[i]!;
}

export function sortedCopy(a: Float64Array): Float64Array {
  return Float64Array.from(a).sort();
}

export function median(xs: readonly number[]): number {
  const s = xs.slice().sort((a, b) => a - b);
  const m = s.length >>> 1;
  return s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}
