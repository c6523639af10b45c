// TokenBuckets: per-key read and write buckets shared by every gateway thread
// through one SharedArrayBuffer, so a key gets the same limits whichever
// connection (thread) it uses. Charged only after the signature verifies.
// Each key has a spinlock word (Atomics.compareExchange) guarding its two
// buckets' Float64 state (tokens, last refill ms); the lock's acquire/release
// order the plain Float64 accesses between threads.

export interface BucketSpec {
  sustained_rate_per_s: number;
  burst: number;
}

export const READ_BUCKET: BucketSpec = { sustained_rate_per_s: 100, burst: 200 };
export const WRITE_BUCKET: BucketSpec = { sustained_rate_per_s: 50, burst: 100 };

export const BUCKET_READ = 0;
export const BUCKET_WRITE = 1;

export class TokenBuckets {
  static allocate(maxKeys = 1 << 16): SharedArrayBuffer {
    return new SharedArrayBuffer(maxKeys * 4 + maxKeys * 4 * 8);
  }

  private readonly locks: Int32Array;
  /** Per key: read tokens, read last ms, write tokens, write last ms (0 ms = never used: full bucket). */
  private readonly state: Float64Array;
  readonly maxKeys: number;
  private readonly specs: readonly BucketSpec[];

  constructor(readonly sab: SharedArrayBuffer, read: BucketSpec = READ_BUCKET, write: BucketSpec = WRITE_BUCKET) {
    this.maxKeys = sab.byteLength / 36;
    this.locks = new Int32Array(sab, 0, this.maxKeys);
    this.state = new Float64Array(sab, this.maxKeys * 4, this.maxKeys * 4);
    this.specs = [read, write];
  }

  spec(bucket: number): BucketSpec {
    return this.specs[bucket]!;
  }

  /**
   * Takes `cost` tokens from the key's bucket. Returns 0 when granted, else
   * the milliseconds until enough tokens will be there (>= 1).
   */
  take(keyId: number, bucket: number, cost: number, nowMs: number): number {
    if (keyId < 0 || keyId >= this.maxKeys) return 1000;
    const spec = this.specs[bucket]!;
    const i = keyId * 4 + bucket * 2;
    const locks = this.locks;
    while (Atomics.compareExchange(locks, keyId, 0, 1) !== 0) { /* spin: a few loads and stores */ }
    try {
      const s = this.state;
      let tokens: number;
      if (s[i + 1] === 0) {
        tokens = spec.burst;
      } else {
        const elapsed = nowMs - s[i + 1]!;
        tokens = s[i]! + (elapsed > 0 ? (elapsed * spec.sustained_rate_per_s) / 1000 : 0);
        if (tokens > spec.burst) tokens = spec.burst;
      }
      s[i + 1] = nowMs;
      if (tokens >= cost) {
        s[i] = tokens - cost;
        return 0;
      }
      s[i] = tokens;
      return Math.max(1, Math.ceil(((cost - tokens) * 1000) / spec.sustained_rate_per_s));
    } finally {
      // Release: our Float64 writes happen before the next holder reads them.
      Atomics.store(locks, keyId, 0);
    }
  }
}
