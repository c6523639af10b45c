// U32x3Map: open-addressing hash map from a key of three u32 words to an int32
// value, in typed arrays (no allocation per operation; grows by doubling).
// Linear probing with backward-shift deletion, so there are no tombstones.
// Used for order_id -> slot, (account, client_order_id) -> slot,
// (account, market) -> position slot and (account, client_withdrawal_id) -> wid.

export class U32x3Map {
  private ka: Uint32Array;
  private kb: Uint32Array;
  private kc: Uint32Array;
  private vals: Int32Array;
  private used: Uint8Array;
  private mask: number;
  size = 0;

  constructor(capacityPow2 = 1024) {
    let cap = 16;
    while (cap < capacityPow2) cap <<= 1;
    this.ka = new Uint32Array(cap);
    this.kb = new Uint32Array(cap);
    this.kc = new Uint32Array(cap);
    this.vals = new Int32Array(cap);
    this.used = new Uint8Array(cap);
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
    let i = this.slotOf(a, b, c);
    const used = this.used;
    while (used[i] === 1) {
      if (this.ka[i] === a && this.kb[i] === b && this.kc[i] === c) return this.vals[i]!;
      i = (i + 1) & this.mask;
    }
    return -1;
  }

  set(a: number, b: number, c: number, v: number): void {
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    let i = this.slotOf(a, b, c);
    const used = this.used;
    while (used[i] === 1) {
      if (this.ka[i] === a && this.kb[i] === b && this.kc[i] === c) {
        this.vals[i] = v;
        return;
      }
      i = (i + 1) & this.mask;
    }
    used[i] = 1;
    this.ka[i] = a;
    this.kb[i] = b;
    this.kc[i] = c;
    this.vals[i] = v;
    this.size++;
  }

  delete(a: number, b: number, c: number): boolean {
    const mask = this.mask;
    let i = this.slotOf(a, b, c);
    const used = this.used;
    while (used[i] === 1) {
      if (this.ka[i] === a && this.kb[i] === b && this.kc[i] === c) break;
      i = (i + 1) & mask;
    }
    if (used[i] !== 1) return false;
    // Backward-shift: pull later entries of the probe run into the hole.
    let hole = i;
    let j = (i + 1) & mask;
    while (used[j] === 1) {
      const home = this.slotOf(this.ka[j]!, this.kb[j]!, this.kc[j]!);
      // Move j into the hole when its home is not in the cyclic range (hole, j].
      const inRange = hole <= j ? home > hole && home <= j : home > hole || home <= j;
      if (!inRange) {
        this.ka[hole] = this.ka[j]!;
        this.kb[hole] = this.kb[j]!;
        this.kc[hole] = this.kc[j]!;
        this.vals[hole] = this.vals[j]!;
        hole = j;
      }
      j = (j + 1) & mask;
    }
    used[hole] = 0;
    this.size--;
    return true;
  }

  /** Calls fn for every entry (order unspecified). Not for hot paths. */
  forEach(fn: (a: number, b: number, c: number, v: number) => void): void {
    for (let i = 0; i <= this.mask; i++) if (this.used[i] === 1) fn(this.ka[i]!, this.kb[i]!, this.kc[i]!, this.vals[i]!);
  }

  private grow(): void {
    const { ka, kb, kc, vals, used } = this;
    const cap = (this.mask + 1) * 2;
    this.ka = new Uint32Array(cap);
    this.kb = new Uint32Array(cap);
    this.kc = new Uint32Array(cap);
    this.vals = new Int32Array(cap);
    this.used = new Uint8Array(cap);
    this.mask = cap - 1;
    this.size = 0;
    for (let i = 0; i < used.length; i++) if (used[i] === 1) this.set(ka[i]!, kb[i]!, kc[i]!, vals[i]!);
  }
}
