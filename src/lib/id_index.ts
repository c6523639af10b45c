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
// spans two cache lines; id 0 marks an empty entry (seqs start at 1). It
// doubles when more than half as many ids as it has entries are indexed.
// Engine thread and read models (through evolve); no allocation except
// growth.

import { U32x3Map } from './u32x3_map.js';

const TWO32 = 4294967296;

export class IdIndex {
  private t: Float64Array;
  private mask: number;
  private overflow = new U32x3Map(16);
  /** Ids indexed (table and overflow). */
  size = 0;

  constructor(capacity = 1024) {
    let cap = 16;
    while (cap < capacity) cap *= 2;
    this.t = new Float64Array(cap * 2);
    this.mask = cap - 1;
  }

  /** The slot of id, or -1 when absent. */
  get(id: number): number {
    const e = (id & this.mask) << 1;
    const t = this.t;
    // id 0 would match an empty entry.
    if (t[e] === id && id !== 0) return t[e + 1]! | 0;
    if (this.overflow.size === 0) return -1;
    return this.overflow.get(id >>> 0, Math.floor(id / TWO32), 0);
  }

  /** Indexes a new id (an id not present; ids are safe integers >= 1). */
  set(id: number, slot: number): void {
    if (!(id >= 1 && Number.isSafeInteger(id))) throw new Error(`id_index: ids are safe integers >= 1, got ${id}`);
    if ((this.size + 1) * 2 > this.mask + 1) this.grow();
    this.place(id, slot);
    this.size++;
  }

  /** Drops id; false when it was not indexed. */
  delete(id: number): boolean {
    const e = (id & this.mask) << 1;
    const t = this.t;
    if (t[e] === id && id !== 0) {
      t[e] = 0;
      t[e + 1] = 0;
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

  private grow(): void {
    const old = this.t;
    const overflow = this.overflow;
    const cap = (this.mask + 1) * 2;
    this.t = new Float64Array(cap * 2);
    this.mask = cap - 1;
    this.overflow = new U32x3Map(16);
    for (let e = 0; e < old.length; e += 2) if (old[e] !== 0) this.place(old[e]!, old[e + 1]!);
    overflow.forEach((lo, hi, _c, slot) => this.place(hi * TWO32 + lo, slot));
  }
}
