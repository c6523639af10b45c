// LogHistogram: log-linear buckets in the style of HdrHistogram over a plain
// Float64Array, which may be a view into a SharedArrayBuffer (the metrics
// slices, one writer each) or an array of its own (the load generator). Not
// thread-safe: one writer; a reader of a shared one may see a count one
// record old, which is fine for monitoring.
//
// Values are non-negative numbers (latencies in microseconds here), rounded
// to integers. Values below 2^subBits each get an exact bucket; above, each
// power-of-two range [2^k, 2^(k+1)) is cut into 2^subBits equal buckets, so a
// bucket is at most 1/2^subBits of its lower bound wide (subBits 4: 6.25%,
// 7: 0.79%). Values above 2^maxBits - 1 are clamped to it and counted in
// `clamped`. Reported percentiles are the highest value equivalent to the
// bucket that holds the rank (never below the truth), capped at the recorded
// maximum.
//
// Words: counts[0..buckets), then total, sum, min, max, clamped.

const W_TOTAL = 0;
const W_SUM = 1;
const W_MIN = 2;
const W_MAX = 3;
const W_CLAMPED = 4;
const STAT_WORDS = 5;

export interface LogHistogramShape {
  /** log2 of the sub-buckets per power of two. */
  subBits: number;
  /** Largest value kept: 2^maxBits - 1 (at most 32). */
  maxBits: number;
}

/** Buckets of a shape. */
export function bucketCount(s: LogHistogramShape): number {
  return (s.maxBits - 1 - s.subBits) * (1 << s.subBits) + 2 * (1 << s.subBits);
}

/** Float64 words one histogram of this shape takes. */
export function histogramWords(s: LogHistogramShape): number {
  return bucketCount(s) + STAT_WORDS;
}

/**
 * The nearest rank (1-based) of percentile p (0..100) among n values:
 * ceil(p/100 * n), at least 1. p/100 * n is computed in floating point, where
 * 99.9 / 100 * 1000 is 999.0000000000001; a relative slack far below any real
 * fractional part keeps such a product on its integer.
 */
export function nearestRank(p: number, n: number): number {
  const x = (p * n) / 100;
  return Math.max(1, Math.ceil(x - x * 1e-12));
}

/** The bucket index of an integer value in [0, 2^maxBits). */
export function bucketOf(subBits: number, v: number): number {
  const sub = 1 << subBits;
  if (v < sub) return v;
  const msb = 31 - Math.clz32(v);
  const shift = msb - subBits;
  return shift * sub + (v >>> shift);
}

/** The highest value that maps to bucket i. */
export function bucketHighest(subBits: number, i: number): number {
  const sub = 1 << subBits;
  if (i < 2 * sub) return i;
  const shift = Math.floor(i / sub) - 1;
  const j = i - shift * sub; // in [sub, 2 sub)
  return (j + 1) * 2 ** shift - 1;
}

export class LogHistogram {
  readonly buckets: number;
  private readonly maxValue: number;

  /** Over `words` (histogramWords(shape) long); a fresh array when omitted. Words are not cleared. */
  constructor(readonly shape: LogHistogramShape, readonly words: Float64Array = new Float64Array(histogramWords(shape))) {
    if (shape.maxBits > 32 || shape.subBits < 1 || shape.subBits >= shape.maxBits) throw new RangeError('log histogram: bad shape');
    this.buckets = bucketCount(shape);
    if (words.length < this.buckets + STAT_WORDS) throw new RangeError('log histogram: too few words');
    this.maxValue = 2 ** shape.maxBits - 1;
  }

  /** Records one value (rounded; negatives and NaN count as 0). */
  record(value: number): void {
    let v = Math.round(value);
    if (!(v >= 0)) v = 0;
    const w = this.words;
    const b = this.buckets;
    if (v > this.maxValue) {
      v = this.maxValue;
      w[b + W_CLAMPED]!++;
    }
    w[bucketOf(this.shape.subBits, v)]!++;
    const n = w[b + W_TOTAL]!;
    w[b + W_SUM]! += v;
    if (n === 0 || v < w[b + W_MIN]!) w[b + W_MIN] = v;
    if (v > w[b + W_MAX]!) w[b + W_MAX] = v;
    w[b + W_TOTAL] = n + 1;
  }

  get total(): number {
    return this.words[this.buckets + W_TOTAL]!;
  }

  get sum(): number {
    return this.words[this.buckets + W_SUM]!;
  }

  get min(): number {
    return this.total === 0 ? 0 : this.words[this.buckets + W_MIN]!;
  }

  get max(): number {
    return this.words[this.buckets + W_MAX]!;
  }

  get clamped(): number {
    return this.words[this.buckets + W_CLAMPED]!;
  }

  count(i: number): number {
    return this.words[i]!;
  }

  /** The highest value that maps to bucket i. */
  highest(i: number): number {
    return bucketHighest(this.shape.subBits, i);
  }

  mean(): number {
    return this.total === 0 ? 0 : this.sum / this.total;
  }

  /**
   * The value at percentile p (0..100): the smallest recorded value such that
   * at least p% of the values are at or below it (rank = ceil(p/100 * n)),
   * reported as its bucket's highest equivalent value, capped at max. 0 when empty.
   */
  percentile(p: number): number {
    const n = this.total;
    if (n === 0) return 0;
    if (p >= 100) return this.max;
    const rank = nearestRank(p, n);
    const w = this.words;
    let seen = 0;
    for (let i = 0; i < this.buckets; i++) {
      seen += w[i]!;
      if (seen >= rank) return Math.min(this.highest(i), this.max);
    }
    return this.max;
  }

  /** Count of recorded values <= v (exact when v is a bucket's highest value). */
  countAtOrBelow(v: number): number {
    const w = this.words;
    const last = v >= this.maxValue ? this.buckets - 1 : bucketOf(this.shape.subBits, Math.max(0, Math.floor(v)));
    let c = 0;
    for (let i = 0; i <= last; i++) c += w[i]!;
    return c;
  }

  /** Adds another histogram of the same shape (counts and statistics); `other` may be the words a worker sent back. */
  merge(other: { readonly words: Float64Array }): void {
    const o = other.words;
    const b = this.buckets;
    if (o.length !== this.words.length) throw new RangeError('log histogram: merging different shapes');
    if (o[b + W_TOTAL] === 0) return;
    const w = this.words;
    for (let i = 0; i < b; i++) w[i]! += o[i]!;
    const wasEmpty = w[b + W_TOTAL] === 0;
    w[b + W_TOTAL]! += o[b + W_TOTAL]!;
    w[b + W_SUM]! += o[b + W_SUM]!;
    w[b + W_CLAMPED]! += o[b + W_CLAMPED]!;
    if (wasEmpty || o[b + W_MIN]! < w[b + W_MIN]!) w[b + W_MIN] = o[b + W_MIN]!;
    if (o[b + W_MAX]! > w[b + W_MAX]!) w[b + W_MAX] = o[b + W_MAX]!;
  }

  /** Non-empty buckets as [highest value, count] pairs, ascending. */
  nonEmpty(): [number, number][] {
    const out: [number, number][] = [];
    for (let i = 0; i < this.buckets; i++) if (this.words[i]! > 0) out.push([this.highest(i), this.words[i]!]);
    return out;
  }

  clear(): void {
    this.words.fill(0, 0, this.buckets + STAT_WORDS);
  }
}
