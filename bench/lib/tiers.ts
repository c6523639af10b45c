// tiers: the rate tier the benchmarks give their keys (custom, set through
// the control plane or a SetKeyTier command), so that a benchmark measures
// the request path rather than 429s whatever its connections per key; the
// token bucket is still taken on every request. Benchmarks and their peers.

/** Figures no benchmark reaches: 10,000,000 requests/s sustained, the same burst, for reads and writes alike. */
export const UNTHROTTLED = { sustained_rate_per_s: 10_000_000, burst: 10_000_000 };
