// Histogram: log-linear buckets in the style of HdrHistogram, for latency
// percentiles of the load generator. Each load worker records into its own
// histogram; the main thread merges them. Not thread-safe (one owner).
//
// Layout: values are non-negative integers (the load generator records
// microseconds). Values below 2^SUB_BITS each get an exact bucket. Above,
// each power-of-two range [2^k, 2^(k+1)) is cut into 2^SUB_BITS equal
// buckets, so a bucket is at most 1/128 of its lower bound wide: every
// reported value is within 0.79% of the true one. Values up to 2^32 - 1
// (71 minutes in µs) are kept; larger ones are clamped and counted in
// `clamped`.
//
// Reported percentiles are the highest value equivalent to the bucket that
// holds the rank (HdrHistogram's convention: never below the truth), capped
// at the recorded maximum.

const SUB_BITS = 7;
const SUB_COUNT = 1 << SUB_BITS; // 128
const MAX_VALUE = 0xffffffff;
// Highest index: value 2^32 - 1 has msb 31, shift 24, sub 255: 24 * 128 + 255.
const BUCKETS = (31 - SUB_BITS) * SUB_COUNT + 2 * SUB_COUNT;

/** The bucket index of a value in [0, 2^32). */
function indexOf(v: number): number {
  if (v < SUB_COUNT) return v;
  const msb = 31 - Math.clz32(v);
  const shift = msb - SUB_BITS;
  return shift * SUB_COUNT + (v >>> shift);
}

/** The highest value that maps to bucket `i`. */
function highestOf(i: number): number {
  if (i < 2 * SUB_COUNT) return i;
  const shift = Math.floor(i / SUB_COUNT) - 1;
  const sub = i - shift * SUB_COUNT; // in [128, 256)
  return (sub + 1) * 2 ** shift - 1;
}

/** The plain-data form a worker sends back to the main thread (structured clone). */
export interface HistogramData {
  counts: Float64Array;
  total: number;
  min: number;
  max: number;
  sum: number;
  clamped: number;
}

export class Histogram {
  readonly counts = new Float64Array(BUCKETS);
  total = 0;
  min = Infinity;
  max = 0;
  sum = 0;
  clamped = 0;

  /** Records one value (rounded to an integer; negatives count as 0). */
  record(value: number): void {
    let v = Math.round(value);
    if (!(v >= 0)) v = 0; // also catches NaN
    if (v > MAX_VALUE) {
      v = MAX_VALUE;
      this.clamped++;
    }
    this.counts[indexOf(v)]!++;
    this.total++;
    this.sum += v;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
  }

  /**
   * The value at percentile p (0..100): the smallest recorded value such that
   * at least p% of the values are at or below it (rank = ceil(p/100 * n)),
   * reported as its bucket's highest equivalent value, capped at max.
   * 0 when empty.
   */
  percentile(p: number): number {
    if (this.total === 0) return 0;
    if (p >= 100) return this.max;
    const rank = Math.max(1, Math.ceil((p / 100) * this.total));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i]!;
      if (seen >= rank) return Math.min(highestOf(i), this.max);
    }
    return this.max;
  }

  mean(): number {
    return this.total === 0 ? 0 : this.sum / this.total;
  }

  merge(other: HistogramData): void {
    for (let i = 0; i < BUCKETS; i++) this.counts[i]! += other.counts[i]!;
    this.total += other.total;
    this.sum += other.sum;
    this.clamped += other.clamped;
    if (other.total > 0) {
      if (other.min < this.min) this.min = other.min;
      if (other.max > this.max) this.max = other.max;
    }
  }

  toData(): HistogramData {
    return {
      counts: this.counts,
      total: this.total,
      min: this.min,
      max: this.max,
      sum: this.sum,
      clamped: this.clamped,
    };
  }

  static fromData(d: HistogramData): Histogram {
    const h = new Histogram();
    h.merge(d);
    return h;
  }
}
