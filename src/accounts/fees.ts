// fees: the fee formula and the worst-case fee reserved by buys. Engine
// thread (decide) and anywhere fees are explained; pure integer arithmetic.
//
// fee = ceil(bps x qty x p x (100 - p) / 1,000,000) cents, p = the fill's price
// in the payer's own outcome space. p(100-p) is symmetric, so the YES price
// gives the same fee as the NO price.

/** ceil(x / 1e6) for a non-negative integer x < 2^53, exact. */
function ceilMillionth(x: number): number {
  let f = Math.floor(x / 1_000_000);
  let r = x - f * 1_000_000;
  if (r < 0) {
    f -= 1;
    r += 1_000_000;
  } else if (r >= 1_000_000) {
    f += 1;
    r -= 1_000_000;
  }
  return r > 0 ? f + 1 : f;
}

export function feeCents(bps: number, qty: number, p: number): number {
  if (bps === 0) return 0;
  return ceilMillionth(bps * qty * p * (100 - p));
}

/**
 * Worst-case fee per share a buy at `tick` reserves: fills happen at p <= tick. The caller passes 0 for a
 * rate the order can never pay (the taker rate of a post_only order, the maker rate of one that never rests).
 */
export function feePerShare(takerBps: number, makerBps: number, tick: number): number {
  const bps = takerBps > makerBps ? takerBps : makerBps;
  if (bps === 0) return 0;
  const w = tick <= 50 ? tick * (100 - tick) : 2500;
  return ceilMillionth(bps * w);
}

/** Most shares (<= cap) with q x p + fee(q) <= budget; 0 when none. */
export function affordableQty(budget: number, cap: number, p: number, bps: number): number {
  if (budget <= 0 || cap <= 0) return 0;
  let q = Math.floor((budget * 1_000_000) / (p * 1_000_000 + bps * p * (100 - p)));
  if (q > cap) q = cap;
  while (q > 0 && q * p + feeCents(bps, q, p) > budget) q--;
  while (q < cap && (q + 1) * p + feeCents(bps, q + 1, p) <= budget) q++;
  return q;
}
