// mulberry32: a small seeded generator of uniform numbers in [0, 1). A seed
// names one stream (the demo's price path, a test's random trading), so a
// run can be repeated exactly. Not for secrets.

export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
