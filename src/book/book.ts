// Book: for every market two bid ladders (YES, NO) indexed by tick 1..99. A
// level holds its aggregate quantity and a FIFO of order slots (linked through
// OrderSlab.prev/next). `best` caches each ladder's highest non-empty tick
// (0 = empty). Engine thread and gateway read models. Invariants: a level's
// qty equals the sum of its orders' remaining; best is the highest non-empty
// level; a YES-ladder best y and NO-ladder best n never satisfy y + n >= 100
// between commands (no crossed book at rest).

import * as assertModule from '../lib/assert.js';
import * as growModule from '../lib/grow.js';
import * as intrusiveListModule from '../lib/intrusive_list.js';
import type { OrderSlab } from './orders.js';
import * as ordersModule from './orders.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const { checks, fail } = assertModule;
const { grown, nextCapacity } = growModule;
const { NIL, pushTailPacked: pushTail, unlinkPacked: unlink } = intrusiveListModule;
const { B_LADDER, B_LADDER_TICK, B_ON_BOOK, LB, LW, W_MARKET, W_NEXT, W_PREV, W_REMAINING } = ordersModule;

/** Ticks per ladder row: index 0 is unused so that a tick is its own index. */
export const LADDER_ROW = 100;
// The module's own uses read private copies: an exported binding (LADDER_ROW,
// the class Book itself) is read from its module cell at every use in
// optimized code (docs/engine-performance.md, "Imported bindings").
const ROW = LADDER_ROW;

/** Level index of (market, ladder, tick): Book.level, for this module's own calls. */
function levelIndex(market: number, ladder: number, tick: number): number {
  return ((market << 1) | ladder) * ROW + tick;
}

/** The other side of the 100-cent pair: YES price y is NO price 100 - y. */
export function oppositeTick(t: number): number {
  return 100 - t;
}

export class Book {
  private marketCapacity = 0;
  levelQty = new Float64Array(0);
  levelHead = new Int32Array(0);
  levelTail = new Int32Array(0);
  levelCount = new Uint32Array(0);
  best = new Uint8Array(0);

  constructor(marketCapacity: number) {
    this.ensureMarkets(marketCapacity);
  }

  ensureMarkets(n: number): void {
    if (n < this.marketCapacity) return;
    const cap = nextCapacity(this.marketCapacity, n + 1);
    const levels = cap * 2 * LADDER_ROW;
    this.levelQty = grown(this.levelQty, levels);
    this.levelHead = grown(this.levelHead, levels, NIL);
    this.levelTail = grown(this.levelTail, levels, NIL);
    this.levelCount = grown(this.levelCount, levels);
    this.best = grown(this.best, cap * 2);
    this.marketCapacity = cap;
  }

  /** Level index of (market, ladder, tick). */
  static level(market: number, ladder: number, tick: number): number {
    return levelIndex(market, ladder, tick);
  }

  /** Appends the order at the tail of its level (it joins the queue last). */
  append(o: OrderSlab, slot: number): void {
    if (!(o.u8[(slot << LB) | B_ON_BOOK] === 0)) fail('book: the order is already on the book');
    const market = o.u32[(slot << LW) | W_MARKET]!;
    const ladder = o.u8[(slot << LB) | B_LADDER]!;
    const tick = o.u8[(slot << LB) | B_LADDER_TICK]!;
    const lv = levelIndex(market, ladder, tick);
    pushTail(this.levelHead, this.levelTail, o.i32, LW, W_PREV, W_NEXT, lv, slot);
    this.levelQty[lv] = this.levelQty[lv]! + o.u32[(slot << LW) | W_REMAINING]!;
    this.levelCount[lv] = this.levelCount[lv]! + 1;
    o.u8[(slot << LB) | B_ON_BOOK] = 1;
    const bi = (market << 1) | ladder;
    if (tick > this.best[bi]!) this.best[bi] = tick;
    if (checks.costly) this.checkLevel(o, lv);
  }

  /** Removes the order from its level; `qty` is what it still counted for there. */
  remove(o: OrderSlab, slot: number, qty: number): void {
    if (!(o.u8[(slot << LB) | B_ON_BOOK] === 1)) fail('book: remove of an order that is not on the book');
    const market = o.u32[(slot << LW) | W_MARKET]!;
    const ladder = o.u8[(slot << LB) | B_LADDER]!;
    const tick = o.u8[(slot << LB) | B_LADDER_TICK]!;
    const lv = levelIndex(market, ladder, tick);
    unlink(this.levelHead, this.levelTail, o.i32, LW, W_PREV, W_NEXT, lv, slot);
    o.i32[(slot << LW) | W_PREV] = NIL;
    o.i32[(slot << LW) | W_NEXT] = NIL;
    o.u8[(slot << LB) | B_ON_BOOK] = 0;
    const left = this.levelQty[lv]! - qty;
    if (!(left >= 0)) fail('book: a level total went negative');
    this.levelQty[lv] = left;
    const c = this.levelCount[lv]! - 1;
    this.levelCount[lv] = c;
    if (c === 0) {
      const bi = (market << 1) | ladder;
      if (this.best[bi] === tick) {
        let t = tick - 1;
        const row = ((market << 1) | ladder) * ROW;
        while (t > 0 && this.levelCount[row + t] === 0) t--;
        this.best[bi] = t;
      }
    }
    if (checks.costly) this.checkLevel(o, lv);
  }

  /** Reduces a resting order's level total by qty (a partial fill or a decrease). */
  reduce(o: OrderSlab, slot: number, qty: number): void {
    const lv = levelIndex(o.u32[(slot << LW) | W_MARKET]!, o.u8[(slot << LB) | B_LADDER]!, o.u8[(slot << LB) | B_LADDER_TICK]!);
    const left = this.levelQty[lv]! - qty;
    if (!(left > 0)) fail('book: a reduce emptied or overdrew a level that keeps the order');
    this.levelQty[lv] = left;
    if (checks.costly) this.checkLevel(o, lv);
  }

  /** Costly check: the level's links run both ways, its orders rest there, and its count and total match them. */
  private checkLevel(o: OrderSlab, lv: number): void {
    let n = 0;
    let qty = 0;
    let prev = NIL;
    for (let x = this.levelHead[lv]!; x !== NIL; x = o.i32[(x << LW) | W_NEXT]!) {
      const at = levelIndex(o.u32[(x << LW) | W_MARKET]!, o.u8[(x << LB) | B_LADDER]!, o.u8[(x << LB) | B_LADDER_TICK]!);
      if (!(o.i32[(x << LW) | W_PREV] === prev && o.u8[(x << LB) | B_ON_BOOK] === 1 && at === lv))
        fail('book: a level links an order that does not rest there');
      qty += o.u32[(x << LW) | W_REMAINING]!;
      n++;
      prev = x;
    }
    if (this.levelTail[lv] !== prev || n !== this.levelCount[lv] || qty !== this.levelQty[lv]) fail('book: a level count or total is off');
  }
}
