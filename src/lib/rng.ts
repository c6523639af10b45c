// rng: the one seeded pseudo-random generator of the repository (mulberry32:
// 32 bits of state, one multiply-xorshift round per draw). A seed names one
// stream (the demo's price path, a test's random trading, a benchmark's
// workload, the differential test's command streams, the crash test's
// choices), so a run can be repeated exactly. Not for secrets. Pure: any
// thread; the engine does not use it (it reads no randomness at all).

const TWO32 = 4294967296;

export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** The next 32 random bits as an unsigned integer. */
  u32(): number {
    const a = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** Uniform in [0, 1). */
  float(): number {
    return this.u32() / TWO32;
  }

  /** Uniform integer in [lo, hi], both included. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.float() * (hi - lo + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** One element of a non-empty list, uniformly. */
  pick<T>(xs: readonly T[]): T {
    if (xs.length === 0) throw new Error('rng: pick from an empty list');
    return xs[Math.floor(this.float() * xs.length)]!;
  }

  /** One value of weighted [value, weight] pairs, with probability weight / total. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.float() * total;
    for (const [v, w] of items) {
      if (r < w) return v;
      r -= w;
    }
    return items[items.length - 1]![0];
  }

  /** `bytes` random bytes as lower-case hex. */
  hex(bytes: number): string {
    let s = '';
    for (let i = 0; i < bytes; i++) s += this.int(0, 255).toString(16).padStart(2, '0');
    return s;
  }
}

/** The same generator as a plain function returning uniforms in [0, 1), for code that takes a `() => number`. */
export function mulberry32(seed: number): () => number {
  const r = new Rng(seed);
  return () => r.float();
}
