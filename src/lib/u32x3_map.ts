// U32x3Map: open-addressing hash map from a key of three u32 words to a
// non-negative int32 value, in one typed array (no allocation per operation;
// grows by doubling). Linear probing with backward-shift deletion, so there
// are no tombstones. Used for order_id -> slot, (account, client_order_id) ->
// slot, (account, market) -> position slot and (account,
// client_withdrawal_id) -> wid.
//
// Entries are interleaved, four int32 words each (a, b, c, value + 1), with
// 0 marking an empty entry (so a new table is zero pages, committed as it
// fills, and growing one writes nothing up front): a probe touches one cache
// line, not one per column. The order index holds a million entries, far beyond the caches, so
// this is what its lookups and the retention evictions (deletes) cost.
//
// Growth is incremental: when the table is half full a table twice its size
// takes over, and every later write moves the entries of a few slots of the
// old one into it (a move is an insert there and a delete here, so both keep
// the linear-probing invariant) until the old one is empty. A key lives in
// exactly one of the two; a lookup that misses the new one tries the old one.
// Rehashing half a million keys at once took ~100 ms on the engine thread
// and on every read model at the same seq, a stall of every answer (the
// client_order_id index of a book that grew past 524,288 orders). Gets never
// move entries, so the tables' state depends only on the writes, which
// evolve makes identically on every copy of the state.

const STRIDE = 4;
const EMPTY = 0;
/** The encoding of `t` (value + 1, 0 empty); a state from before it (value, -1 empty) is converted on decode (upgradeDecoded). */
const ENCODING = 2;
/** Old-table slots a write moves (their entries) while growing: the old table is empty long before the new one is half full. */
const MOVE_SLOTS = 8;

export class U32x3Map {
  private t: Int32Array;
  private mask: number;
  /** While growing: the previous table, entries still to move into `t` (null otherwise). */
  private old: Int32Array | null = null;
  private oldMask = 0;
  /** Old-table slots below this are empty (moved). */
  private moveAt = 0;
  /** Entries in `old`. */
  private oldSize = 0;
  /** Entries in both tables. */
  size = 0;
  private encoding = ENCODING;

  constructor(capacityPow2 = 1024) {
    if (!(capacityPow2 <= 1 << 30)) throw new RangeError(`U32x3Map: capacity ${capacityPow2} above 2^30`);
    let cap = 16;
    while (cap < capacityPow2) cap *= 2;
    this.t = new Int32Array(cap * STRIDE);
    this.mask = cap - 1;
  }

  /**
   * A map decoded from a snapshot written before the encoding of value + 1
   * (value, -1 empty, no growth fields): converted in place. Called by the
   * state codec for every decoded U32x3Map.
   */
  static upgradeDecoded(m: U32x3Map): void {
    if (m.encoding === ENCODING) return;
    const t = m.t;
    for (let e = 3; e < t.length; e += STRIDE) t[e] = t[e] === -1 ? EMPTY : t[e]! + 1;
    m.old = null;
    m.oldMask = 0;
    m.moveAt = 0;
    m.oldSize = 0;
    m.encoding = ENCODING;
  }

  private static slotOf(a: number, b: number, c: number, mask: number): number {
    let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13) ^ b, 0xc2b2ae35);
    h = Math.imul(h ^ (h >>> 16) ^ c, 0x27d4eb2f);
    h ^= h >>> 15;
    return h & mask;
  }

  /** Entry offset of the key in table t, or -1. */
  private static find(t: Int32Array, mask: number, a: number, b: number, c: number): number {
    for (let i = U32x3Map.slotOf(a, b, c, mask); ; i = (i + 1) & mask) {
      const e = i * STRIDE;
      if (t[e + 3] === EMPTY) return -1;
      if (t[e] === a && t[e + 1] === b && t[e + 2] === c) return e;
    }
  }

  /** The value for the key, or -1 when absent. */
  get(a: number, b: number, c: number): number {
    a |= 0;
    b |= 0;
    c |= 0;
    const e = U32x3Map.find(this.t, this.mask, a, b, c);
    if (e >= 0) return (this.t[e + 3]! - 1) | 0;
    const old = this.old;
    if (old === null) return -1;
    const o = U32x3Map.find(old, this.oldMask, a, b, c);
    return o >= 0 ? (old[o + 3]! - 1) | 0 : -1;
  }

  set(a: number, b: number, c: number, v: number): void {
    if (!(v >= 0 && v <= 0x7fffffff)) throw new Error(`u32x3_map: value must be a non-negative int32, got ${v}`);
    a |= 0;
    b |= 0;
    c |= 0;
    const stored = (v + 1) | 0;
    if (this.old !== null) {
      this.move(MOVE_SLOTS);
      const old = this.old;
      if (old !== null) {
        const o = U32x3Map.find(old, this.oldMask, a, b, c);
        if (o >= 0) {
          old[o + 3] = stored;
          return;
        }
      }
    }
    const e = U32x3Map.find(this.t, this.mask, a, b, c);
    if (e >= 0) {
      this.t[e + 3] = stored;
      return;
    }
    // A new key (in neither table): make room, then insert.
    const inNew = this.old !== null ? this.size - this.oldSize : this.size;
    if ((inNew + 1) * 2 > this.mask + 1) this.grow();
    U32x3Map.insert(this.t, this.mask, a, b, c, stored);
    this.size++;
  }

  /** Puts (a, b, c) -> stored (value + 1) into table t; true when the key was new. */
  private static insert(t: Int32Array, mask: number, a: number, b: number, c: number, v: number): boolean {
    for (let i = U32x3Map.slotOf(a, b, c, mask); ; i = (i + 1) & mask) {
      const e = i * STRIDE;
      if (t[e + 3] === EMPTY) {
        t[e] = a;
        t[e + 1] = b;
        t[e + 2] = c;
        t[e + 3] = v;
        return true;
      }
      if (t[e] === a && t[e + 1] === b && t[e + 2] === c) {
        t[e + 3] = v;
        return false;
      }
    }
  }

  delete(a: number, b: number, c: number): boolean {
    a |= 0;
    b |= 0;
    c |= 0;
    if (this.old !== null) this.move(MOVE_SLOTS);
    let e = U32x3Map.find(this.t, this.mask, a, b, c);
    if (e >= 0) {
      U32x3Map.removeAt(this.t, this.mask, e / STRIDE);
      this.size--;
      return true;
    }
    const old = this.old;
    if (old === null) return false;
    e = U32x3Map.find(old, this.oldMask, a, b, c);
    if (e < 0) return false;
    U32x3Map.removeAt(old, this.oldMask, e / STRIDE);
    this.size--;
    if (--this.oldSize === 0) this.old = null;
    return true;
  }

  /** Empties slot i of table t, pulling later entries of its probe run back (backward shift). */
  private static removeAt(t: Int32Array, mask: number, i: number): void {
    let hole = i;
    for (let j = (i + 1) & mask; ; j = (j + 1) & mask) {
      const e = j * STRIDE;
      if (t[e + 3] === EMPTY) break;
      const home = U32x3Map.slotOf(t[e]!, t[e + 1]!, t[e + 2]!, mask);
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
  }

  /**
   * Moves the entries of up to `slots` old-table slots into the new table.
   * A delete at the scan position may pull a later entry into it, so the
   * position is looked at again until it is empty; the slots below it stay
   * empty (nothing shifts backwards across an empty slot).
   */
  private move(slots: number): void {
    const old = this.old!;
    const end = this.oldMask + 1;
    while (slots > 0 && this.moveAt < end) {
      const e = this.moveAt * STRIDE;
      if (old[e + 3] === EMPTY) {
        this.moveAt++;
        slots--;
        continue;
      }
      U32x3Map.insert(this.t, this.mask, old[e]!, old[e + 1]!, old[e + 2]!, old[e + 3]!);
      U32x3Map.removeAt(old, this.oldMask, this.moveAt);
      this.oldSize--;
      slots--;
    }
    if (this.oldSize === 0) this.old = null;
  }

  /** Calls fn for every entry (order unspecified; key words as u32). Not for hot paths. */
  forEach(fn: (a: number, b: number, c: number, v: number) => void): void {
    for (const t of this.old === null ? [this.t] : [this.t, this.old]) {
      for (let e = 0; e < t.length; e += STRIDE)
        if (t[e + 3] !== EMPTY) fn(t[e]! >>> 0, t[e + 1]! >>> 0, t[e + 2]! >>> 0, (t[e + 3]! - 1) | 0);
    }
  }

  /** A table twice the size takes over; the entries follow a few per write. */
  private grow(): void {
    // The previous growth has not finished (it cannot, by the sizes, but be sure): finish it first.
    if (this.old !== null) this.move(Infinity);
    this.old = this.t;
    this.oldMask = this.mask;
    this.oldSize = this.size;
    this.moveAt = 0;
    const cap = (this.mask + 1) * 2;
    // Zeros: nothing is written up front, pages are committed as entries arrive.
    this.t = new Int32Array(cap * STRIDE);
    this.mask = cap - 1;
    if (this.oldSize === 0) this.old = null;
  }
}
