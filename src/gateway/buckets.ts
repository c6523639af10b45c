// TokenBuckets: per-key read and write buckets shared by every gateway thread
// through one SharedArrayBuffer, so a key gets the same limits whichever
// connection, thread or lane it uses (REST, WebSocket JSON and binary order
// entry, MCP all draw from these). Charged only after the signature verifies.
// Each key has a spinlock word (Atomics.compareExchange) guarding its two
// buckets' Float64 state (tokens, last refill ms); the lock's acquire/release
// order the plain Float64 accesses between threads.
//
// The tables are indexed by the key's row (Caller.keyRow), and rows are
// reused: a row also records the key_id its buckets belong to, and the first
// take by another key id (a new key in the row of an evicted one) starts
// both buckets full, as for a key never seen, instead of inheriting the
// evicted key's tokens.
//
// Figures come from the key's rate tier (RateTier): the operator sets it with
// a sequenced command (SetKeyTier), every thread folds its event into its
// read model, and take() reads the tier from the calling thread's own read
// model (a TierSource). Every thread folds the same events in the same order,
// so they agree on a key's figures; only the token state needs sharing.
// Named tiers' figures are this file's table; custom ones travel in the
// event. A lower burst takes effect at the next take (tokens are capped).

import { RATE_TIER_NAMES, RateTier } from '../layout/records.js';

export interface BucketSpec {
  sustained_rate_per_s: number;
  burst: number;
}

export interface TierFigures {
  read: BucketSpec;
  write: BucketSpec;
}

export type RateTierName = (typeof RATE_TIER_NAMES)[number];

/** The figures of tier `default` (docs/rest.md). */
export const READ_BUCKET: BucketSpec = { sustained_rate_per_s: 100, burst: 200 };
export const WRITE_BUCKET: BucketSpec = { sustained_rate_per_s: 50, burst: 100 };

/** Figures of the named tiers, indexed by RateTier (custom carries its own). */
export const RATE_TIERS: Readonly<Record<Exclude<RateTierName, 'custom'>, TierFigures>> = {
  default: { read: READ_BUCKET, write: WRITE_BUCKET },
  market_maker: { read: { sustained_rate_per_s: 500, burst: 1000 }, write: { sustained_rate_per_s: 2000, burst: 4000 } },
  institutional: { read: { sustained_rate_per_s: 2000, burst: 4000 }, write: { sustained_rate_per_s: 10_000, burst: 20_000 } },
};

const NAMED: readonly (readonly BucketSpec[])[] = [
  [RATE_TIERS.default.read, RATE_TIERS.default.write],
  [RATE_TIERS.market_maker.read, RATE_TIERS.market_maker.write],
  [RATE_TIERS.institutional.read, RATE_TIERS.institutional.write],
];

/** The key a take charges: its id (the buckets' owner) and its row (their index). */
export interface BucketKey {
  readonly keyId: number;
  readonly keyRow: number;
}

export const BUCKET_READ = 0;
export const BUCKET_WRITE = 1;

/** Where a key's tier is read from: the thread's read model (Views). */
export interface TierSource {
  /** RateTier of the key in row keyRow (0 = default, also for a row < 0). */
  keyTier(keyRow: number): number;
  /** Custom figure i of the key in row keyRow: 0 read rate, 1 read burst, 2 write rate, 3 write burst. */
  keyFigure(keyRow: number, i: number): number;
}

/** A key's tier and effective figures (GET /v1/account/limits, the control plane). */
export function keyLimits(src: TierSource, keyRow: number): { tier: RateTierName; read: BucketSpec; write: BucketSpec } {
  const tier = src.keyTier(keyRow);
  const spec = (bucket: number): BucketSpec => (tier === RateTier.custom
    ? { sustained_rate_per_s: src.keyFigure(keyRow, bucket * 2), burst: src.keyFigure(keyRow, bucket * 2 + 1) }
    : NAMED[tier]![bucket]!);
  return { tier: RATE_TIER_NAMES[tier]!, read: spec(BUCKET_READ), write: spec(BUCKET_WRITE) };
}

/** Float64s of state per row. */
const ROW = 5;

export class TokenBuckets {
  static allocate(maxKeys = 1 << 16): SharedArrayBuffer {
    return new SharedArrayBuffer(maxKeys * 4 + maxKeys * ROW * 8);
  }

  private readonly locks: Int32Array;
  /**
   * Per row (ROW Float64s): the owner's key_id, read tokens, read last ms,
   * write tokens, write last ms (0 ms = never used: full bucket).
   */
  private readonly state: Float64Array;
  readonly maxKeys: number;

  /** `tiers`: the thread's read model; null gives every key the default tier (tools, peers). */
  constructor(readonly sab: SharedArrayBuffer, private readonly tiers: TierSource | null = null) {
    this.maxKeys = sab.byteLength / (4 + ROW * 8);
    this.locks = new Int32Array(sab, 0, this.maxKeys);
    this.state = new Float64Array(sab, this.maxKeys * 4, this.maxKeys * ROW);
  }

  /**
   * Takes `cost` tokens from the key's bucket. Returns 0 when granted, else
   * the milliseconds until enough tokens will be there (>= 1). `taken`: the
   * tokens the same command already took (a batch's first item); refused,
   * they go back with it, so the wait is until the whole command fits.
   */
  take(key: BucketKey, bucket: number, cost: number, nowMs: number, taken = 0): number {
    const keyRow = key.keyRow;
    if (keyRow < 0 || keyRow >= this.maxKeys) return 1000;
    const src = this.tiers;
    const tier = src === null ? 0 : src.keyTier(keyRow);
    let rate: number;
    let burst: number;
    if (tier === RateTier.custom) {
      rate = src!.keyFigure(keyRow, bucket * 2);
      burst = src!.keyFigure(keyRow, bucket * 2 + 1);
    } else {
      const spec = NAMED[tier]![bucket]!;
      rate = spec.sustained_rate_per_s;
      burst = spec.burst;
    }
    const row = keyRow * ROW;
    const i = row + 1 + bucket * 2;
    const locks = this.locks;
    while (Atomics.compareExchange(locks, keyRow, 0, 1) !== 0) { /* spin: a few loads and stores */ }
    try {
      const s = this.state;
      if (s[row] !== key.keyId) {
        // A new key in this row: both buckets start full.
        s[row] = key.keyId;
        s[row + 2] = 0;
        s[row + 4] = 0;
      }
      let tokens: number;
      if (s[i + 1] === 0) {
        tokens = burst;
      } else {
        const elapsed = nowMs - s[i + 1]!;
        tokens = s[i]! + (elapsed > 0 ? (elapsed * rate) / 1000 : 0);
        if (tokens > burst) tokens = burst;
      }
      s[i + 1] = nowMs;
      if (tokens >= cost) {
        s[i] = tokens - cost;
        return 0;
      }
      s[i] = Math.min(burst, tokens + taken);
      return Math.max(1, Math.ceil(((cost - tokens) * 1000) / rate));
    } finally {
      // Release: our Float64 writes happen before the next holder reads them.
      Atomics.store(locks, keyRow, 0);
    }
  }
}
