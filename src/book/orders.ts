// OrderSlab: every live and retained order in struct-of-arrays form, indexed
// by slot, with a free list. Engine thread (and gateway read models, which
// run the same evolve). Invariants: a slot is either free or holds exactly one
// order; `prev/next` link a resting order into its ladder level (FIFO), and
// `aprev/anext` link it into one of its account's lists (live, terminal or
// rejected); the free list reuses `next`. A free slot has id 0 (order ids
// are seqs, from 1), which is what the liveness assertions check.

import * as assertModule from '../lib/assert.js';
import * as growModule from '../lib/grow.js';
import * as intrusiveListModule from '../lib/intrusive_list.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const { fail } = assertModule;
const { grown, nextCapacity } = growModule;
const { NIL } = intrusiveListModule;

// Re-exported from the list module, not from the const above: exporting the
// const would make it a module cell again.
export { NIL } from '../lib/intrusive_list.js';

export class OrderSlab {
  capacity = 0;
  count = 0;
  private freeHead = NIL;
  private top = 0;

  id = new Float64Array(0);
  account = new Uint32Array(0);
  market = new Uint32Array(0);
  qty = new Uint32Array(0);
  remaining = new Uint32Array(0);
  filled = new Uint32Array(0);
  groupId = new Uint32Array(0);
  tick = new Uint8Array(0);
  side = new Uint8Array(0);
  outcome = new Uint8Array(0);
  tif = new Uint8Array(0);
  stp = new Uint8Array(0);
  postOnly = new Uint8Array(0);
  hasCoid = new Uint8Array(0);
  hasMaxCost = new Uint8Array(0);
  ladder = new Uint8Array(0);
  ladderTick = new Uint8Array(0);
  status = new Uint8Array(0);
  reason = new Uint8Array(0);
  onBook = new Uint8Array(0);
  feePerShare = new Uint16Array(0);
  rejectCode = new Uint16Array(0);
  reservedCash = new Float64Array(0);
  maxCost = new Float64Array(0);
  coidHi = new Uint32Array(0);
  coidLo = new Uint32Array(0);
  expHi = new Uint32Array(0);
  expLo = new Uint32Array(0);
  createdTsHi = new Uint32Array(0);
  createdTsLo = new Uint32Array(0);
  lastUpdateSeq = new Float64Array(0);
  /** The order's position slot in Accounts (cached so fills need no hash lookup). */
  posSlot = new Int32Array(0);
  prev = new Int32Array(0);
  next = new Int32Array(0);
  aprev = new Int32Array(0);
  anext = new Int32Array(0);

  constructor(capacity: number) {
    this.grow(capacity);
  }

  alloc(): number {
    let slot = this.freeHead;
    if (slot !== NIL) {
      if (!(this.id[slot] === 0)) fail('orders: the free list holds a slot in use');
      this.freeHead = this.next[slot]!;
    } else {
      if (this.top === this.capacity) this.grow(this.capacity * 2);
      slot = this.top++;
    }
    this.prev[slot] = NIL;
    this.next[slot] = NIL;
    this.aprev[slot] = NIL;
    this.anext[slot] = NIL;
    this.onBook[slot] = 0;
    this.count++;
    return slot;
  }

  free(slot: number): void {
    if (!(slot >= 0 && slot < this.top)) fail('orders: free of a slot out of range');
    if (!(this.id[slot] !== 0)) fail('orders: free of a slot that is already free');
    this.id[slot] = 0;
    this.next[slot] = this.freeHead;
    this.freeHead = slot;
    this.count--;
  }

  /** True when `slot` holds an order (live or retained). */
  isUsed(slot: number): boolean {
    return slot >= 0 && slot < this.top && this.id[slot] !== 0;
  }

  /** Slots ever handed out (live or free); iteration bound for audits. */
  get highWater(): number {
    return this.top;
  }

  // Explicit assignments: computed-key writes would turn this object into a
  // slow dictionary-mode object and make every field access a lookup.
  private grow(n: number): void {
    const cap = nextCapacity(this.capacity, n);
    this.id = grown(this.id, cap);
    this.account = grown(this.account, cap);
    this.market = grown(this.market, cap);
    this.qty = grown(this.qty, cap);
    this.remaining = grown(this.remaining, cap);
    this.filled = grown(this.filled, cap);
    this.groupId = grown(this.groupId, cap);
    this.tick = grown(this.tick, cap);
    this.side = grown(this.side, cap);
    this.outcome = grown(this.outcome, cap);
    this.tif = grown(this.tif, cap);
    this.stp = grown(this.stp, cap);
    this.postOnly = grown(this.postOnly, cap);
    this.hasCoid = grown(this.hasCoid, cap);
    this.hasMaxCost = grown(this.hasMaxCost, cap);
    this.ladder = grown(this.ladder, cap);
    this.ladderTick = grown(this.ladderTick, cap);
    this.status = grown(this.status, cap);
    this.reason = grown(this.reason, cap);
    this.onBook = grown(this.onBook, cap);
    this.feePerShare = grown(this.feePerShare, cap);
    this.rejectCode = grown(this.rejectCode, cap);
    this.reservedCash = grown(this.reservedCash, cap);
    this.maxCost = grown(this.maxCost, cap);
    this.coidHi = grown(this.coidHi, cap);
    this.coidLo = grown(this.coidLo, cap);
    this.expHi = grown(this.expHi, cap);
    this.expLo = grown(this.expLo, cap);
    this.createdTsHi = grown(this.createdTsHi, cap);
    this.createdTsLo = grown(this.createdTsLo, cap);
    this.lastUpdateSeq = grown(this.lastUpdateSeq, cap);
    this.posSlot = grown(this.posSlot, cap);
    this.prev = grown(this.prev, cap);
    this.next = grown(this.next, cap);
    this.aprev = grown(this.aprev, cap);
    this.anext = grown(this.anext, cap);
    this.capacity = cap;
  }
}
