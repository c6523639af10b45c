// RecordRings: bounded histories of fixed-shape records, one per owner (the
// public trade tape of each market, the fills of each account), all kept in
// one store: a Float64 row for safe-integer fields and a Uint32 row for the
// rest per record, in blocks of BLOCK records, the blocks in segments of
// SEGMENT_RECORDS records that are allocated as the store fills and never
// copied. Runs on the thread that owns the Views (a gateway thread or the
// control plane).
//
// Why one store and not a ring per owner: a read model of a million accounts
// that have traded held two million small typed arrays, and a snapshot
// captured and serialized each one on its own: 17 s of the control plane's
// time at a million accounts (bench/engine_scale.ts, docs/reliability.md).
// Here a snapshot copies a few hundred segments whatever the owner count, an
// owner that traded once holds one block (BLOCK records), and a full store
// grows by a segment, not by copying what it holds.
//
// Every record of an owner gets an ordinal (0, 1, 2, ... in push order) that
// never changes; it is the stable sort key behind list cursors. An owner
// keeps its newest `max` records: ordinals [retainedFrom, total). A block
// holds the ordinals [base, base + BLOCK) of one owner (base a multiple of
// BLOCK); an owner's blocks are linked oldest to newest, and a block whose
// every ordinal is below retainedFrom goes back to the free list.

import { assert } from '../lib/assert.js';
import { grown, nextCapacity } from '../lib/grow.js';

/** Records per block (a power of two): what an owner with a single record holds. */
const BLOCK_SHIFT = 2;
const BLOCK = 1 << BLOCK_SHIFT;
export const RECORDS_PER_BLOCK = BLOCK;
/** Records per segment of the rows (a power of two, a multiple of BLOCK). */
const SEGMENT_SHIFT = 14;
const SEGMENT_RECORDS = 1 << SEGMENT_SHIFT;
const SEGMENT_MASK = SEGMENT_RECORDS - 1;

/** The fields of a ring per owner, as snapshots before RecordRings held them (fromRingPerOwner). */
export interface RingPerOwner {
  total: number;
  cap: number;
  max: number;
  f64Stride: number;
  u32Stride: number;
  f64: Float64Array;
  u32: Uint32Array;
}

export class RecordRings {
  /** Per owner: records ever pushed, the next record's ordinal (0 for an owner never seen). */
  total = new Float64Array(0);
  /** Per owner: its newest block, -1 when it has none. */
  newest = new Int32Array(0);
  /** Per owner: its oldest block, -1 when it has none. */
  oldest = new Int32Array(0);
  /** Per block: the ordinal of its first record. */
  base = new Float64Array(0);
  /** Per block: the owner's next older block (of a free block: the next free one), -1 at the end. */
  older = new Int32Array(0);
  /** Per block: the owner's next newer block, -1 at the newest. */
  newer = new Int32Array(0);
  /** Blocks handed out so far, free ones included. */
  blocks = 0;
  /** The first free block, -1 when none. */
  free = -1;
  /** The rows, SEGMENT_RECORDS records per segment. */
  f64: Float64Array[] = [];
  u32: Uint32Array[] = [];
  /** The block slotOf found last (a cache for walking an owner's records in order; reset by every push). */
  private lastOwner = -1;
  private lastBlock = -1;

  constructor(
    /** Most records retained per owner. */
    readonly max: number,
    /** Float64 fields per record. */
    readonly f64Stride: number,
    /** Uint32 fields per record. */
    readonly u32Stride: number,
  ) {
    assert(max >= 1 && Number.isInteger(max), 'record rings: max must be a positive integer');
  }

  /** Records the owner ever pushed: the next record's ordinal. */
  totalOf(owner: number): number {
    return owner < this.total.length ? this.total[owner]! : 0;
  }

  /** Ordinal of the owner's oldest retained record (== totalOf when it has none). */
  retainedFrom(owner: number): number {
    const t = this.totalOf(owner);
    return t > this.max ? t - this.max : 0;
  }

  /** Reserves the owner's next record and returns its index (for the field accessors). */
  push(owner: number): number {
    if (owner >= this.total.length) this.growOwners(owner + 1);
    this.lastOwner = -1;
    const n = this.total[owner]!;
    let b = this.newest[owner]!;
    if (b === -1 || n >= this.base[b]! + BLOCK) {
      const nb = this.takeBlock();
      this.base[nb] = n - (n % BLOCK);
      this.older[nb] = b;
      this.newer[nb] = -1;
      if (b === -1) this.oldest[owner] = nb;
      else this.newer[b] = nb;
      this.newest[owner] = nb;
      b = nb;
    }
    this.total[owner] = n + 1;
    // Blocks wholly below the new retainedFrom go back to the free list.
    const from = n + 1 - this.max;
    for (let old = this.oldest[owner]!; this.base[old]! + BLOCK <= from; old = this.oldest[owner]!) {
      const next = this.newer[old]!;
      this.oldest[owner] = next;
      this.older[next] = -1;
      this.older[old] = this.free;
      this.free = old;
    }
    return (b << BLOCK_SHIFT) | (n - this.base[b]!);
  }

  /** The index of a retained ordinal of the owner. */
  slotOf(owner: number, n: number): number {
    assert(n >= this.retainedFrom(owner) && n < this.totalOf(owner), 'record rings: ordinal not retained');
    let b: number;
    if (owner === this.lastOwner && this.base[this.lastBlock]! <= n) {
      b = this.lastBlock;
      while (this.base[b]! + BLOCK <= n) b = this.newer[b]!;
    } else {
      b = this.newest[owner]!;
      while (this.base[b]! > n) b = this.older[b]!;
    }
    this.lastOwner = owner;
    this.lastBlock = b;
    return (b << BLOCK_SHIFT) | (n - this.base[b]!);
  }

  f64At(r: number, field: number): number {
    return this.f64[r >>> SEGMENT_SHIFT]![(r & SEGMENT_MASK) * this.f64Stride + field]!;
  }

  setF64(r: number, field: number, x: number): void {
    this.f64[r >>> SEGMENT_SHIFT]![(r & SEGMENT_MASK) * this.f64Stride + field] = x;
  }

  u32At(r: number, field: number): number {
    return this.u32[r >>> SEGMENT_SHIFT]![(r & SEGMENT_MASK) * this.u32Stride + field]!;
  }

  setU32(r: number, field: number, x: number): void {
    this.u32[r >>> SEGMENT_SHIFT]![(r & SEGMENT_MASK) * this.u32Stride + field] = x;
  }

  /** Records retained over every owner (O(owners): metrics and the soak, never a hot path). */
  retainedRecords(): number {
    let sum = 0;
    for (let o = 0; o < this.total.length; o++) sum += this.total[o]! - this.retainedFrom(o);
    return sum;
  }

  /**
   * The store holding what a snapshot written before 2026-11-28 kept as one
   * ring per owner (a RecordRing: record n at slot n % cap of its own two
   * rows, the newest min(total, cap) retained): the same records under the
   * same ordinals, so cursors handed out before the upgrade still page on.
   */
  static fromRingPerOwner(rings: readonly (RingPerOwner | undefined)[], max: number, f64Stride: number, u32Stride: number): RecordRings {
    // The rings' own cap (the configuration they were written under) stays the store's, as a snapshot's store keeps its max.
    const first = rings.find((r) => r !== undefined && r !== null);
    const out = new RecordRings(first?.max ?? max, f64Stride, u32Stride);
    rings.forEach((ring, owner) => {
      if (ring === undefined || ring === null) return;
      assert(ring.max === out.max, 'record rings: the old rings have different caps');
      assert(ring.f64Stride === f64Stride && ring.u32Stride === u32Stride, 'record rings: the old ring has another record shape');
      // Retained: the newest min(total, cap) records; cap reaches max before anything is overwritten.
      const from = Math.max(ring.total - ring.cap, 0);
      if (from === ring.total) return;
      if (owner >= out.total.length) out.growOwners(owner + 1);
      out.total[owner] = from;
      for (let n = from; n < ring.total; n++) {
        const r = out.push(owner);
        const slot = n % ring.cap;
        for (let k = 0; k < f64Stride; k++) out.setF64(r, k, ring.f64[slot * f64Stride + k]!);
        for (let k = 0; k < u32Stride; k++) out.setU32(r, k, ring.u32[slot * u32Stride + k]!);
      }
    });
    return out;
  }

  private growOwners(need: number): void {
    const n = nextCapacity(this.total.length, need);
    this.total = grown(this.total, n);
    this.newest = grown(this.newest, n, -1);
    this.oldest = grown(this.oldest, n, -1);
  }

  private takeBlock(): number {
    if (this.free !== -1) {
      const b = this.free;
      this.free = this.older[b]!;
      return b;
    }
    const b = this.blocks++;
    if (b >= this.base.length) {
      const n = nextCapacity(this.base.length, b + 1);
      this.base = grown(this.base, n);
      this.older = grown(this.older, n);
      this.newer = grown(this.newer, n);
    }
    if ((b << BLOCK_SHIFT) >>> SEGMENT_SHIFT === this.f64.length) {
      this.f64.push(new Float64Array(SEGMENT_RECORDS * this.f64Stride));
      this.u32.push(new Uint32Array(SEGMENT_RECORDS * this.u32Stride));
    }
    return b;
  }
}
