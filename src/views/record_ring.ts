// RecordRing: a bounded history of fixed-shape records (the public trade tape
// of one market, the fills of one account) in two typed arrays, one Float64
// row for safe-integer fields and one Uint32 row for the rest. Runs on the
// thread that owns the Views (a gateway thread or the control plane).
//
// Every record gets an ordinal (0, 1, 2, ... in push order) that never
// changes; it is the stable sort key behind list cursors. The ring keeps the
// newest `max` records: ordinals [retainedFrom, total). Storage starts small
// and doubles until it reaches `max` (most accounts never trade much), then
// wraps. Invariant: while cap < max nothing has been overwritten (total <=
// cap), so record n always lives at slot n % cap.

import { assert } from '../lib/assert.js';

export class RecordRing {
  /** Records ever pushed; the next record's ordinal. */
  total = 0;
  /** Current storage capacity in records (grows to `max`). */
  private cap: number;
  f64: Float64Array;
  u32: Uint32Array;

  constructor(
    /** Most records retained. */
    readonly max: number,
    /** Float64 fields per record. */
    readonly f64Stride: number,
    /** Uint32 fields per record. */
    readonly u32Stride: number,
    initial = 16,
  ) {
    assert(max >= 1 && Number.isInteger(max), 'record ring: max must be a positive integer');
    this.cap = Math.min(initial, max);
    this.f64 = new Float64Array(this.cap * f64Stride);
    this.u32 = new Uint32Array(this.cap * u32Stride);
  }

  /** Ordinal of the oldest retained record (== total when empty). */
  get retainedFrom(): number {
    return this.total > this.cap ? this.total - this.cap : 0;
  }

  /** Reserves the next record and returns its slot (index into the rows, before the stride). */
  push(): number {
    if (this.total === this.cap && this.cap < this.max) this.grow();
    const slot = this.total % this.cap;
    this.total++;
    return slot;
  }

  /** Slot of a retained ordinal. */
  slotOf(n: number): number {
    assert(n >= this.retainedFrom && n < this.total, 'record ring: ordinal not retained');
    return n % this.cap;
  }

  private grow(): void {
    // No wrap happened yet (total == cap), so the copy keeps every slot.
    const cap = Math.min(this.cap * 2, this.max);
    const f = new Float64Array(cap * this.f64Stride);
    f.set(this.f64);
    const u = new Uint32Array(cap * this.u32Stride);
    u.set(this.u32);
    this.f64 = f;
    this.u32 = u;
    this.cap = cap;
  }
}
