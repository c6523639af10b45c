// OrderSlab: every live and retained order, indexed by slot, with a free list.
// The fields of a slot are packed together: one buffer of STRIDE (128) bytes
// per slot, read and written through typed views at module-constant offsets,
// so that touching a cold order (a cancel, the maker at a level's head, a
// neighbour relinked in a level or an account list) costs one or two cache
// misses, not one per field. The fields the matching, cancel and relink paths
// touch are in the slot's first 64 bytes; the rest (what an order keeps for
// the read side) in the second 64. Engine thread (and gateway read models,
// which run the same evolve). Invariants: a slot is either free or holds
// exactly one order; `prev/next` link a resting order into its ladder level
// (FIFO), and `aprev/anext` link it into one of its account's lists (live,
// terminal or rejected); the free list reuses `next`. A free slot has id 0
// (order ids are seqs, from 1), which is what the liveness assertions check.
//
// Addressing: field X of slot s is `u8[(s << LB) | B_X]`, `u16[(s << LH) | H_X]`,
// `u32[(s << LW) | W_X]` (or `i32`, for the links and posSlot) or
// `f64[(s << LF) | F_X]`. Only `u8` is stored (state codec, state hash); the
// other views alias it, are not enumerable, and are rebuilt on decode
// (OrderSlab.fromDecoded), which also converts a snapshot written in the
// older one-array-per-field layout.

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

/** Bytes per slot, and the slot stride in each view's elements. */
export const STRIDE = 128;
export const SB = 128;
export const SH = 64;
export const SW = 32;
export const SF = 16;
/** The same strides as shifts: a slot's index in a view is `slot << L*`, a field's `(slot << L*) | offset` (no overflow checks). */
export const LB = 7;
export const LH = 6;
export const LW = 5;
export const LF = 4;
/** The most slots: `slot << LB` must stay a positive int32 (and the buffer within 2 GiB). */
export const MAX_SLOTS = 1 << 24;

// First cache line (bytes 0..63): what matching, cancels and relinks touch; in a matching-only state
// (ExchangeState.matchingOnly) an order without a client_order_id or an expiry never touches the second.
export const F_ID = 0; //              bytes 0..7
export const F_RESERVED_CASH = 1; //   bytes 8..15
export const W_ACCOUNT = 4; //         bytes 16..19
export const W_MARKET = 5;
export const W_REMAINING = 6;
export const W_GROUP_ID = 7;
/** The order's position slot in Accounts (cached so fills need no hash lookup); i32. */
export const W_POS_SLOT = 8;
export const W_PREV = 9; //            i32 links, bytes 36..51
export const W_NEXT = 10;
export const W_APREV = 11;
export const W_ANEXT = 12;
export const H_FEE_PER_SHARE = 26; //  bytes 52..53
export const B_TICK = 54;
export const B_SIDE = 55;
export const B_OUTCOME = 56;
export const B_STATUS = 57;
export const B_ON_BOOK = 58;
export const B_LADDER = 59;
export const B_LADDER_TICK = 60;
export const B_TIF = 61;
export const B_REASON = 62;
export const B_HAS_COID = 63;
// Second cache line (bytes 64..127): kept for the read side, client_order_id and expiry.
export const F_LAST_UPDATE_SEQ = 8; // bytes 64..71
export const F_MAX_COST = 9; //        bytes 72..79
export const W_QTY = 20; //            bytes 80..83
export const W_FILLED = 21;
export const W_COID_HI = 22;
export const W_COID_LO = 23;
export const W_EXP_HI = 24;
export const W_EXP_LO = 25;
export const W_CREATED_TS_HI = 26;
export const W_CREATED_TS_LO = 27; //  bytes 108..111
export const H_REJECT_CODE = 56; //    bytes 112..113
export const B_STP = 114;
export const B_POST_ONLY = 115;
export const B_HAS_MAX_COST = 116; //  bytes 117..127 unused (always 0)

// Private copies for this module's own uses (an exported const is a module cell).
const LB_ = LB;
const LW_ = LW;
const LF_ = LF;
const ID = F_ID;
const PREV = W_PREV;
const NEXT = W_NEXT;
const APREV = W_APREV;
const ANEXT = W_ANEXT;
const ON_BOOK = B_ON_BOOK;

type View = 'u8' | 'u16' | 'u32' | 'i32' | 'f64';

/**
 * Every field: its name in the older one-array-per-field layout (snapshots written before the packing), its view and its
 * index in a slot in that view's elements. Used to convert such snapshots, and by tests.
 */
export const ORDER_FIELDS: readonly (readonly [name: string, view: View, at: number])[] = [
  ['id', 'f64', F_ID], ['account', 'u32', W_ACCOUNT], ['market', 'u32', W_MARKET], ['qty', 'u32', W_QTY],
  ['remaining', 'u32', W_REMAINING], ['filled', 'u32', W_FILLED], ['groupId', 'u32', W_GROUP_ID], ['tick', 'u8', B_TICK],
  ['side', 'u8', B_SIDE], ['outcome', 'u8', B_OUTCOME], ['tif', 'u8', B_TIF], ['stp', 'u8', B_STP], ['postOnly', 'u8', B_POST_ONLY],
  ['hasCoid', 'u8', B_HAS_COID], ['hasMaxCost', 'u8', B_HAS_MAX_COST], ['ladder', 'u8', B_LADDER], ['ladderTick', 'u8', B_LADDER_TICK],
  ['status', 'u8', B_STATUS], ['reason', 'u8', B_REASON], ['onBook', 'u8', B_ON_BOOK], ['feePerShare', 'u16', H_FEE_PER_SHARE],
  ['rejectCode', 'u16', H_REJECT_CODE], ['reservedCash', 'f64', F_RESERVED_CASH], ['maxCost', 'f64', F_MAX_COST],
  ['coidHi', 'u32', W_COID_HI], ['coidLo', 'u32', W_COID_LO], ['expHi', 'u32', W_EXP_HI], ['expLo', 'u32', W_EXP_LO],
  ['createdTsHi', 'u32', W_CREATED_TS_HI], ['createdTsLo', 'u32', W_CREATED_TS_LO], ['lastUpdateSeq', 'f64', F_LAST_UPDATE_SEQ],
  ['posSlot', 'i32', W_POS_SLOT], ['prev', 'i32', W_PREV], ['next', 'i32', W_NEXT], ['aprev', 'i32', W_APREV], ['anext', 'i32', W_ANEXT],
];

const STRIDE_OF: Record<View, number> = { u8: SB, u16: SH, u32: SW, i32: SW, f64: SF };


export class OrderSlab {
  capacity = 0;
  count = 0;
  private freeHead = NIL;
  private top = 0;
  /** The slots, STRIDE bytes each: the one stored field; also the byte view. */
  u8 = new Uint8Array(0);
  declare u16: Uint16Array;
  declare u32: Uint32Array;
  declare i32: Int32Array;
  declare f64: Float64Array;

  constructor(capacity: number) {
    // The views over `u8` that are not stored: not enumerable, and defined with a view of their own type (not null) so that V8
    // keeps each field's type precise and optimized code needs no map check on it.
    const hidden = { writable: true, enumerable: false, configurable: false };
    Object.defineProperty(this, 'u16', { ...hidden, value: new Uint16Array(0) });
    Object.defineProperty(this, 'u32', { ...hidden, value: new Uint32Array(0) });
    Object.defineProperty(this, 'i32', { ...hidden, value: new Int32Array(0) });
    Object.defineProperty(this, 'f64', { ...hidden, value: new Float64Array(0) });
    this.views();
    this.grow(capacity);
  }

  alloc(): number {
    let slot = this.freeHead;
    const i32 = this.i32;
    if (slot !== NIL) {
      if (!(this.f64[(slot << LF_) | ID] === 0)) fail('orders: the free list holds a slot in use');
      this.freeHead = i32[(slot << LW_) | NEXT]!;
    } else {
      if (this.top === this.capacity) this.grow(this.capacity * 2);
      slot = this.top++;
    }
    const w = slot << LW_;
    const links = this.i32;
    links[w | PREV] = NIL;
    links[w | NEXT] = NIL;
    links[w | APREV] = NIL;
    links[w | ANEXT] = NIL;
    this.u8[(slot << LB_) | ON_BOOK] = 0;
    this.count++;
    return slot;
  }

  free(slot: number): void {
    if (!(slot >= 0 && slot < this.top)) fail('orders: free of a slot out of range');
    if (!(this.f64[(slot << LF_) | ID] !== 0)) fail('orders: free of a slot that is already free');
    this.f64[(slot << LF_) | ID] = 0;
    this.i32[(slot << LW_) | NEXT] = this.freeHead;
    this.freeHead = slot;
    this.count--;
  }

  /** True when `slot` holds an order (live or retained). */
  isUsed(slot: number): boolean {
    return slot >= 0 && slot < this.top && this.f64[(slot << LF_) | ID] !== 0;
  }

  /** Slots ever handed out (live or free); iteration bound for audits. */
  get highWater(): number {
    return this.top;
  }

  /** The slab a snapshot decoded into (fields as stored, no views): a constructed slab that adopts them; see the file header. */
  static fromDecoded(x: OrderSlab): OrderSlab {
    const s = new OrderSlab(0);
    const old = x as unknown as Record<string, ArrayLike<number>>;
    s.capacity = x.capacity;
    s.count = x.count;
    s.freeHead = x.freeHead;
    s.top = x.top;
    if (x.u8 instanceof Uint8Array) {
      if (x.capacity > MAX_SLOTS || x.u8.length !== x.capacity * STRIDE) fail('orders: a decoded slab\'s bytes do not match its capacity');
      s.u8 = x.u8;
      s.views();
    } else {
      // The older layout: one typed array per field, each `capacity` long.
      if (x.capacity > MAX_SLOTS) fail(`orders: a decoded slab of more than ${MAX_SLOTS} slots`);
      s.u8 = new Uint8Array(x.capacity * STRIDE);
      s.views();
      for (const [name, view, at] of ORDER_FIELDS) {
        const col = old[name];
        if (col === undefined || col.length !== x.capacity) fail(`orders: a decoded slab in the older layout lacks ${name}`);
        const out = s[view];
        const stride = STRIDE_OF[view];
        for (let slot = 0; slot < x.capacity; slot++) out[slot * stride + at] = col[slot]!;
      }
    }
    return s;
  }

  private views(): void {
    const b = this.u8.buffer;
    this.u16 = new Uint16Array(b);
    this.u32 = new Uint32Array(b);
    this.i32 = new Int32Array(b);
    this.f64 = new Float64Array(b);
  }

  private grow(n: number): void {
    const cap = nextCapacity(this.capacity, n);
    if (cap > MAX_SLOTS) fail(`orders: more than ${MAX_SLOTS} order slots (order_capacity ${n})`);
    this.u8 = grown(this.u8, cap * STRIDE);
    this.views();
    this.capacity = cap;
  }
}
