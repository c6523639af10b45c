// TimerHeap: indexed binary min-heap of ids (order slots, accounts, markets)
// keyed by a u64 time as (hi, lo) with the id as tie-break, in typed arrays.
// Supports removal and re-keying by id in O(log n), so a canceled gtd order or
// a refreshed dead-man timer leaves nothing behind. Pure: any thread.

import { grown } from './grow.js';

export class TimerHeap {
  private heap: Int32Array; // heap position -> id
  private pos: Int32Array; // id -> heap position, -1 when absent
  private keyHi: Uint32Array;
  private keyLo: Uint32Array;
  size = 0;

  constructor(idCapacity = 1024) {
    this.heap = new Int32Array(idCapacity);
    this.pos = new Int32Array(idCapacity).fill(-1);
    this.keyHi = new Uint32Array(idCapacity);
    this.keyLo = new Uint32Array(idCapacity);
  }

  has(id: number): boolean {
    return id < this.pos.length && this.pos[id]! >= 0;
  }

  /** The smallest id, or -1 when empty. */
  peek(): number {
    return this.size > 0 ? this.heap[0]! : -1;
  }

  hiOf(id: number): number {
    return this.keyHi[id]!;
  }

  loOf(id: number): number {
    return this.keyLo[id]!;
  }

  /** True when the smallest key is <= (hi, lo). */
  dueAt(hi: number, lo: number): boolean {
    if (this.size === 0) return false;
    const id = this.heap[0]!;
    const h = this.keyHi[id]!;
    return h < hi || (h === hi && this.keyLo[id]! <= lo);
  }

  /** Scratch of dueIds(): the ids it found (static: never part of a heap's state, so never in a snapshot). */
  static found: Int32Array<ArrayBuffer> = new Int32Array(64);
  private static walk: Int32Array<ArrayBuffer> = new Int32Array(64);

  /**
   * The ids keyed <= (hi, lo) into TimerHeap.found (its first n entries, in
   * no particular order); returns n. Given the smallest key, the ids keyed
   * exactly that. A walk of the heap pruned where a key is larger: O(n).
   */
  dueIds(hi: number, lo: number): number {
    let n = 0;
    let top = 0;
    if (this.size === 0) return 0;
    let walk = TimerHeap.walk;
    walk[top++] = 0;
    while (top > 0) {
      const i = walk[--top]!;
      const id = this.heap[i]!;
      const h = this.keyHi[id]!;
      if (h > hi || (h === hi && this.keyLo[id]! > lo)) continue;
      if (n === TimerHeap.found.length) TimerHeap.found = grown(TimerHeap.found, 2 * n);
      TimerHeap.found[n++] = id;
      if (top + 2 > walk.length) walk = TimerHeap.walk = grown(walk, 2 * walk.length);
      const l = 2 * i + 1;
      if (l < this.size) walk[top++] = l;
      if (l + 1 < this.size) walk[top++] = l + 1;
    }
    return n;
  }

  /** Inserts id, or re-keys it when present. */
  set(id: number, hi: number, lo: number): void {
    if (id >= this.pos.length) this.grow(id + 1);
    if (this.pos[id]! >= 0) {
      this.removeAt(this.pos[id]!);
    }
    this.keyHi[id] = hi;
    this.keyLo[id] = lo;
    const i = this.size++;
    this.heap[i] = id;
    this.pos[id] = i;
    this.up(i);
  }

  remove(id: number): void {
    if (id < this.pos.length && this.pos[id]! >= 0) this.removeAt(this.pos[id]!);
  }

  private less(a: number, b: number): boolean {
    const ha = this.keyHi[a]!;
    const hb = this.keyHi[b]!;
    if (ha !== hb) return ha < hb;
    const la = this.keyLo[a]!;
    const lb = this.keyLo[b]!;
    if (la !== lb) return la < lb;
    return a < b;
  }

  private removeAt(i: number): void {
    const id = this.heap[i]!;
    this.pos[id] = -1;
    const last = --this.size;
    if (i === last) return;
    const moved = this.heap[last]!;
    this.heap[i] = moved;
    this.pos[moved] = i;
    this.up(i);
    this.down(this.pos[moved]!);
  }

  private up(i: number): void {
    const heap = this.heap;
    const id = heap[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      const pid = heap[p]!;
      if (!this.less(id, pid)) break;
      heap[i] = pid;
      this.pos[pid] = i;
      i = p;
    }
    heap[i] = id;
    this.pos[id] = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = this.size;
    const id = heap[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.less(heap[r]!, heap[l]!)) c = r;
      const cid = heap[c]!;
      if (!this.less(cid, id)) break;
      heap[i] = cid;
      this.pos[cid] = i;
      i = c;
    }
    heap[i] = id;
    this.pos[id] = i;
  }

  private grow(min: number): void {
    let cap = this.pos.length * 2;
    while (cap < min) cap *= 2;
    const heap = new Int32Array(cap);
    heap.set(this.heap);
    const pos = new Int32Array(cap).fill(-1);
    pos.set(this.pos);
    const kh = new Uint32Array(cap);
    kh.set(this.keyHi);
    const kl = new Uint32Array(cap);
    kl.set(this.keyLo);
    this.heap = heap;
    this.pos = pos;
    this.keyHi = kh;
    this.keyLo = kl;
  }
}
