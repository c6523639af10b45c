// IdIndex: order_id -> slot for live and retained orders. Order ids are seqs,
// so consecutive orders carry nearly consecutive ids: a direct-mapped table
// indexed by the id's low bits puts them in consecutive entries (inserts and
// the retention evictions of old ids walk memory in order, and a lookup is
// one load with no hashing). An id whose entry is held by an older order
// still live or retained (ids that far apart: a table's length of commands)
// goes to an overflow hash map instead, so the table never probes or
// clusters; when the overflow is empty a miss costs nothing more.
//
// The table interleaves (id, slot) in one Float64Array, so an entry never
// spans two cache lines; id 0 marks an empty entry (seqs start at 1).
//
// The table is sized by the ids it holds, not by what the exchange may
// hold: ids keep rising, so over a table's length of commands every entry
// of it is written once, and a table sized for the most orders (8 Mi
// entries, 128 MiB, in the engine and in every read model) became resident
// page by page as the seqs went by, and went into every snapshot up to the
// newest id. It doubles when more than an eighth as many ids as it has
// entries are indexed (a direct-mapped table collides at about its load:
// at a half, one id in six went to the overflow on the engine_match stream,
// and the engine ran 14% slower than with the large table; at an eighth,
// about one in a hundred), up to the size given for the most ids. It grows
// incrementally: a table twice the size takes over, and every
// later write moves a few of the old one's entries into it (a full
// rehash of millions of ids at once would stall the engine thread and every
// read model at the same seq). An id lives in exactly one of the new table,
// the old one and the overflow. Gets never move entries, so the layout
// depends only on the writes, which evolve makes identically on every copy
// of the state. Engine thread and read models (through evolve); no
// allocation except growth.

import { U32x3Map } from './u32x3_map.js';

const TWO32 = 4294967296;
/** Old-table entries a write moves while growing: the old table is empty by the time the new one is an eighth full. */
const MOVE_ENTRIES = 8;
/** The table grows when more than 1 / 2^LOAD_SHIFT of its entries would hold ids. */
const LOAD_SHIFT = 3;

export class IdIndex {
  private t: Float64Array;
  private mask: number;
  private overflow = new U32x3Map(16);
  /** While growing: the previous table, entries still to move into `t` (null otherwise). */
  private old: Float64Array | null = null;
  private oldMask = 0;
  /** Old-table entries below this have moved (are empty). */
  private moveAt = 0;
  /** The largest table's mask (entries - 1). */
  private maxMask: number;
  /** Ids indexed (both tables and the overflow). */
  size = 0;

  /** capacity: the first table's entries; maxCapacity: the most entries a table may grow to (both rounded up to powers of two). */
  constructor(capacity = 1024, maxCapacity = 1 << 23) {
    const cap = pow2AtLeast(capacity);
    this.t = new Float64Array(cap * 2);
    this.mask = cap - 1;
    this.maxMask = Math.max(cap, pow2AtLeast(maxCapacity)) - 1;
  }

  /**
   * An index decoded from a snapshot written before incremental growth (no
   * `old` field; its table sized for the most orders): rebuilt into a table
   * sized for its ids, so that a recovered exchange does not keep the large
   * table. Called by the state codec for every decoded IdIndex.
   */
  static upgradeDecoded(x: IdIndex): void {
    // A snapshot from before the table's growth had a bound.
    if (x.maxMask === undefined) x.maxMask = Math.max(x.mask, (1 << 23) - 1);
    if (x.old !== undefined) return;
    const t = x.t;
    const overflow = x.overflow;
    const cap = Math.min(pow2AtLeast(x.size << LOAD_SHIFT), x.maxMask + 1);
    x.t = new Float64Array(cap * 2);
    x.mask = cap - 1;
    x.overflow = new U32x3Map(16);
    x.old = null;
    x.oldMask = 0;
    x.moveAt = 0;
    for (let e = 0; e < t.length; e += 2) if (t[e] !== 0) x.place(t[e]!, t[e + 1]!);
    overflow.forEach((lo, hi, _c, slot) => x.place(hi * TWO32 + lo, slot));
  }

  /** The slot of id, or -1 when absent. */
  get(id: number): number {
    const e = (id & this.mask) << 1;
    const t = this.t;
    // id 0 would match an empty entry.
    if (t[e] === id && id !== 0) return t[e + 1]! | 0;
    if (this.old === null && this.overflow.size === 0) return -1;
    return this.getElsewhere(id);
  }

  /** A miss in the table: the old table while growing, then the overflow. */
  private getElsewhere(id: number): number {
    const old = this.old;
    if (old !== null) {
      const o = (id & this.oldMask) << 1;
      if (old[o] === id && id !== 0) return old[o + 1]! | 0;
    }
    if (this.overflow.size === 0) return -1;
    return this.overflow.get(id >>> 0, Math.floor(id / TWO32), 0);
  }

  /** Indexes a new id (an id not present; ids are safe integers >= 1). */
  set(id: number, slot: number): void {
    if (!(id >= 1 && Number.isSafeInteger(id))) throw new Error(`id_index: ids are safe integers >= 1, got ${id}`);
    if (this.old !== null) this.move(MOVE_ENTRIES);
    // A growth under way finishes first (it does within a sixteenth of the new table's entries in writes).
    if (this.old === null && this.mask < this.maxMask && (this.size + 1) << LOAD_SHIFT > this.mask + 1) this.grow();
    this.place(id, slot);
    this.size++;
  }

  /** Drops id; false when it was not indexed. */
  delete(id: number): boolean {
    if (this.old !== null) this.move(MOVE_ENTRIES);
    const e = (id & this.mask) << 1;
    const t = this.t;
    const old = this.old;
    const o = (id & this.oldMask) << 1;
    if (t[e] === id && id !== 0) {
      t[e] = 0;
      t[e + 1] = 0;
    } else if (old !== null && old[o] === id && id !== 0) {
      old[o] = 0;
      old[o + 1] = 0;
    } else if (this.overflow.size === 0 || !this.overflow.delete(id >>> 0, Math.floor(id / TWO32), 0)) {
      return false;
    }
    this.size--;
    return true;
  }

  /** Ids held in the overflow map (tests and audits). */
  get overflowSize(): number {
    return this.overflow.size;
  }

  /** Entries of the table (the old one's while growing not counted): its memory is 16 bytes each. */
  get tableEntries(): number {
    return this.mask + 1;
  }

  /** Every (id, slot) pair, interleaved, in ascending id order: what the index holds, whatever its layout. Not for hot paths. */
  pairsById(): Float64Array {
    const ids = new Float64Array(this.size);
    let n = 0;
    for (const t of this.old === null ? [this.t] : [this.t, this.old]) {
      for (let e = 0; e < t.length; e += 2) if (t[e] !== 0) ids[n++] = t[e]!;
    }
    this.overflow.forEach((lo, hi) => {
      ids[n++] = hi * TWO32 + lo;
    });
    if (n !== this.size) throw new Error(`id_index: holds ${n} ids, its size says ${this.size}`);
    ids.sort();
    const out = new Float64Array(n * 2);
    for (let i = 0; i < n; i++) {
      out[2 * i] = ids[i]!;
      out[2 * i + 1] = this.get(ids[i]!);
    }
    return out;
  }

  private place(id: number, slot: number): void {
    const e = (id & this.mask) << 1;
    const t = this.t;
    if (t[e] === 0) {
      t[e] = id;
      t[e + 1] = slot;
    } else {
      this.overflow.set(id >>> 0, Math.floor(id / TWO32), 0, slot);
    }
  }

  /** Moves up to n old-table entries (the ids among them) into the table or the overflow. */
  private move(n: number): void {
    const old = this.old!;
    const end = Math.min(old.length, this.moveAt + n * 2);
    let e = this.moveAt;
    for (; e < end; e += 2) {
      if (old[e] === 0) continue;
      this.place(old[e]!, old[e + 1]!);
      old[e] = 0;
      old[e + 1] = 0;
    }
    this.moveAt = e;
    if (e >= old.length) {
      this.old = null;
      this.oldMask = 0;
      this.moveAt = 0;
    }
  }

  /** A table twice the size takes over; the old one's ids follow a few per write. Only when no growth is under way (set). */
  private grow(): void {
    this.old = this.t;
    this.oldMask = this.mask;
    this.moveAt = 0;
    const cap = (this.mask + 1) * 2;
    // Zeros: nothing is written up front, pages are committed as entries arrive.
    this.t = new Float64Array(cap * 2);
    this.mask = cap - 1;
  }
}

function pow2AtLeast(n: number): number {
  let cap = 16;
  while (cap < n) cap *= 2;
  return cap;
}
