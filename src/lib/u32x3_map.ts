// U32x3Map: open-addressing hash map from a key of three u32 words to a
// non-negative int32 value, in one typed array (no allocation per operation;
// grows by doubling). Linear probing with backward-shift deletion, so there
// are no tombstones. Used for order_id -> slot, (account, client_order_id) ->
// slot, (account, market) -> position slot and (account,
// client_withdrawal_id) -> wid.
//
// Entries are interleaved, four int32 words each (a, b, c, value), with value
// -1 marking an empty entry: a probe touches one cache line, not one per
// column. The order index holds a million entries, far beyond the caches, so
// this is what its lookups and the retention evictions (deletes) cost.

const STRIDE = 4;
const EMPTY = -1;

export class U32x3Map {
  private t: Int32Array;
  private mask: number;
  size = 0;

  constructor(capacityPow2 = 1024) {
    let cap = 16;
    while (cap < capacityPow2) cap <<= 1;
    this.t = new Int32Array(cap * STRIDE).fill(EMPTY);
    this.mask = cap - 1;
  }

  private slotOf(a: number, b: number, c: number): number {
    let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13) ^ b, 0xc2b2ae35);
    h = Math.imul(h ^ (h >>> 16) ^ c, 0x27d4eb2f);
    h ^= h >>> 15;
    return h & this.mask;
  }

  /** The value for the key, or -1 when absent. */
  get(a: number, b: number, c: number): number {
    const t = this.t;
    const mask = this.mask;
    a |= 0;
    b |= 0;
    c |= 0;
    for (let i = this.slotOf(a, b, c); ; i = (i + 1) & mask) {
      const e = i * STRIDE;
      const v = t[e + 3]!;
      if (v === EMPTY) return -1;
      if (t[e] === a && t[e + 1] === b && t[e + 2] === c) return v;
    }
  }

  set(a: number, b: number, c: number, v: number): void {
    if (!(v >= 0 && v <= 0x7fffffff)) throw new Error(`u32x3_map: value must be a non-negative int32, got ${v}`);
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    const t = this.t;
    const mask = this.mask;
    a |= 0;
    b |= 0;
    c |= 0;
    for (let i = this.slotOf(a, b, c); ; i = (i + 1) & mask) {
      const e = i * STRIDE;
      if (t[e + 3] === EMPTY) {
        t[e] = a;
        t[e + 1] = b;
        t[e + 2] = c;
        t[e + 3] = v;
        this.size++;
        return;
      }
      if (t[e] === a && t[e + 1] === b && t[e + 2] === c) {
        t[e + 3] = v;
        return;
      }
    }
  }

  delete(a: number, b: number, c: number): boolean {
    const t = this.t;
    const mask = this.mask;
    a |= 0;
    b |= 0;
    c |= 0;
    let i = this.slotOf(a, b, c);
    for (; ; i = (i + 1) & mask) {
      const e = i * STRIDE;
      if (t[e + 3] === EMPTY) return false;
      if (t[e] === a && t[e + 1] === b && t[e + 2] === c) break;
    }
    // Backward-shift: pull later entries of the probe run into the hole.
    let hole = i;
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const e = j * STRIDE;
      if (t[e + 3] === EMPTY) break;
      const home = this.slotOf(t[e]!, t[e + 1]!, t[e + 2]!);
      // Move j into the hole when its home is not in the cyclic range (hole, j].
      const inRange = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!inRange) {
        const h = hole * STRIDE;
        t[h] = t[e]!;
        t[h + 1] = t[e + 1]!;
        t[h + 2] = t[e + 2]!;
        t[h + 3] = t[e + 3]!;
        hole = j;
      }
    }
    t[hole * STRIDE + 3] = EMPTY;
    this.size--;
    return true;
  }

  /** Calls fn for every entry (order unspecified; key words as u32). Not for hot paths. */
  forEach(fn: (a: number, b: number, c: number, v: number) => void): void {
    const t = this.t;
    for (let e = 0; e < t.length; e += STRIDE) if (t[e + 3] !== EMPTY) fn(t[e]! >>> 0, t[e + 1]! >>> 0, t[e + 2]! >>> 0, t[e + 3]!);
  }

  private grow(): void {
    const old = this.t;
    const cap = (this.mask + 1) * 2;
    this.t = new Int32Array(cap * STRIDE).fill(EMPTY);
    this.mask = cap - 1;
    this.size = 0;
    for (let e = 0; e < old.length; e += STRIDE) if (old[e + 3] !== EMPTY) this.set(old[e]!, old[e + 1]!, old[e + 2]!, old[e + 3]!);
  }
}
