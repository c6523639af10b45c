// tiers: the rate tier the benchmarks give their keys (custom, set through
// the control plane or a SetKeyTier command), so that a benchmark measures
// the request path rather than 429s whatever its connections per key; the
// token bucket is still taken on every request. Benchmarks and their peers.

import { RateTier, SetKeyTier } from '../../src/layout/records.js';
import type { Mem } from '../../src/lib/mem.js';

/** Figures no benchmark reaches: 10,000,000 requests/s sustained, the same burst, for reads and writes alike. */
export const UNTHROTTLED = { sustained_rate_per_s: 10_000_000, burst: 10_000_000 };

/** A SetKeyTier command's fields (at o in m): keyId on the UNTHROTTLED custom tier, for benchmarks that run the engine in-process. */
export function writeUnthrottledTier(m: Mem, o: number, keyId: number): void {
  SetKeyTier.set_key_id(m, o, keyId);
  SetKeyTier.set_tier(m, o, RateTier.custom);
  SetKeyTier.set_read_rate_per_s(m, o, UNTHROTTLED.sustained_rate_per_s);
  SetKeyTier.set_read_burst(m, o, UNTHROTTLED.burst);
  SetKeyTier.set_write_rate_per_s(m, o, UNTHROTTLED.sustained_rate_per_s);
  SetKeyTier.set_write_burst(m, o, UNTHROTTLED.burst);
}
