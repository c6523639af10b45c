// verify(state): the O(n) self-check of the book and the money invariants.
// Run after every command in tests and simulators (the VERIFY switch of the
// engine thread); off in production. Returns the list of violations (empty
// when the state is sound) so that a test can print all of them at once.

import { Book } from '../book/book.js';
import * as ordersModule from '../book/orders.js';
import { Side, WithdrawalStatus } from '../layout/records.js';
import type { ExchangeState } from './state.js';

// Field offsets as module constants (an imported binding is a module cell read at every use; docs/engine-performance.md).
const {
  NIL, B_LADDER, B_LADDER_TICK, B_ON_BOOK, B_OUTCOME, B_SIDE, B_TICK, F_ID, F_RESERVED_CASH, H_FEE_PER_SHARE, LB, LF, LH, LW,
  W_ACCOUNT, W_ANEXT, W_MARKET, W_NEXT, W_PREV, W_REMAINING,
} = ordersModule;

/** The money of every account together and the open pairs: the terms of the money identity verify checks. */
export interface MoneyTotals {
  available: number;
  reserved: number;
  /** YES+NO pairs outstanding over every market (open interest), each backed by 100 cents. */
  pairs: number;
}

export function moneyTotals(s: ExchangeState): MoneyTotals {
  const acc = s.accounts;
  const mk = s.markets;
  let available = 0;
  let reserved = 0;
  for (let a = 1; a <= acc.count; a++) {
    available += acc.available[a]!;
    reserved += acc.reserved[a]!;
  }
  let pairs = 0;
  for (let market = 1; market <= mk.count; market++) pairs += mk.openInterest[market]!;
  return { available, reserved, pairs };
}

/** Whether cash + 100 x open pairs + fees == deposits - confirmed withdrawals, for totals `t` of state s. */
export function moneyBalanced(s: ExchangeState, t: MoneyTotals): boolean {
  const acc = s.accounts;
  return t.available + t.reserved + 100 * t.pairs + acc.feesCollected === acc.deposits - acc.withdrawn;
}

export function verify(s: ExchangeState): string[] {
  const bad: string[] = [];
  const acc = s.accounts;
  const ord = s.orders;
  const mk = s.markets;
  const book = s.book;

  // Money: cash + 100 x open pairs + fees == deposits - confirmed withdrawals.
  for (let a = 1; a <= acc.count; a++) {
    if (acc.available[a]! < 0) bad.push(`account ${a}: available ${acc.available[a]} < 0`);
    if (acc.reserved[a]! < 0) bad.push(`account ${a}: reserved ${acc.reserved[a]} < 0`);
  }
  // Deposit refs: each account remembers at most deposit_ref_cap, and the index holds exactly the remembered ones.
  let refs = 0;
  for (let a = 1; a <= acc.count; a++) {
    if (acc.dCount[a]! > s.config.deposit_ref_cap) bad.push(`account ${a}: ${acc.dCount[a]} deposit refs > ${s.config.deposit_ref_cap}`);
    refs += acc.dCount[a]!;
  }
  if (refs !== acc.depositRefIndex.size) bad.push(`deposit refs: accounts hold ${refs}, the index ${acc.depositRefIndex.size}`);
  const money = moneyTotals(s);
  if (!moneyBalanced(s, money)) {
    const cash = money.available + money.reserved;
    bad.push(`money: cash ${cash} + 100 x pairs ${money.pairs} + fees ${acc.feesCollected} != deposits ${acc.deposits} - ` +
      `withdrawn ${acc.withdrawn}`);
  }

  // Reservations recomputed from live orders and pending withdrawals.
  const reserved = new Float64Array(acc.count + 1);
  const posRes = new Float64Array(acc.posCount * 2);
  const posBuy = new Float64Array(acc.posCount * 2);
  for (let a = 1; a <= acc.count; a++)
    for (let x = acc.liveHead[a]!; x !== NIL; x = ord.i32[(x << LW) | W_ANEXT]!) checkLive(s, a, x, bad, reserved, posRes, posBuy);
  for (let w = 0; w < acc.wTop; w++) {
    if (acc.wWid[w] === 0 || acc.wStatus[w] !== WithdrawalStatus.pending) continue;
    reserved[acc.wAccount[w]!] = reserved[acc.wAccount[w]!]! + acc.wAmount[w]!;
  }
  for (let a = 1; a <= acc.count; a++) {
    if (reserved[a] !== acc.reserved[a])
      bad.push(`account ${a}: reserved ${acc.reserved[a]} but orders and withdrawals hold ${reserved[a]}`);
  }

  // Positions: no negatives; reserved_for_sale and buying match open orders; supply == open interest.
  const yesSupply = new Float64Array(mk.count + 1);
  const noSupply = new Float64Array(mk.count + 1);
  for (let p = 0; p < acc.posCount; p++) {
    const market = acc.pMarket[p]!;
    for (let outcome = 0; outcome < 2; outcome++) {
      const k = 2 * p + outcome;
      if (acc.pFree[k]! < 0 || acc.pReserved[k]! < 0 || acc.pBuying[k]! < 0)
        bad.push(`position ${acc.pAccount[p]}/${market}/${outcome}: negative`);
      if (acc.pReserved[k] !== posRes[k])
        bad.push(`position ${acc.pAccount[p]}/${market}/${outcome}: reserved_for_sale ${acc.pReserved[k]} != open sells ${posRes[k]}`);
      if (acc.pBuying[k] !== posBuy[k])
        bad.push(`position ${acc.pAccount[p]}/${market}/${outcome}: buying ${acc.pBuying[k]} != open buys ${posBuy[k]}`);
    }
    yesSupply[market] = yesSupply[market]! + acc.pFree[2 * p]! + acc.pReserved[2 * p]!;
    noSupply[market] = noSupply[market]! + acc.pFree[2 * p + 1]! + acc.pReserved[2 * p + 1]!;
  }
  for (let market = 1; market <= mk.count; market++) {
    const oi = mk.openInterest[market]!;
    if (yesSupply[market] !== oi || noSupply[market] !== oi)
      bad.push(`market ${market}: YES supply ${yesSupply[market]}, NO supply ${noSupply[market]}, open interest ${oi}`);
  }

  // Book: level totals, counts, best ticks, no crossed book at rest.
  for (let market = 1; market <= mk.count; market++) {
    const best = [0, 0];
    for (let ladder = 0; ladder < 2; ladder++) {
      for (let t = 1; t < 100; t++) {
        const lv = Book.level(market, ladder, t);
        let sum = 0;
        let count = 0;
        let prev = NIL;
        let prevId = 0;
        for (let slot = book.levelHead[lv]!; slot !== NIL; slot = ord.i32[(slot << LW) | W_NEXT]!) {
          sum += ord.u32[(slot << LW) | W_REMAINING]!;
          count++;
          const id = ord.f64[(slot << LF) | F_ID]!;
          if (ord.i32[(slot << LW) | W_PREV] !== prev) bad.push(`level ${market}/${ladder}/${t}: broken prev link at order ${id}`);
          const b = slot << LB;
          if (ord.u32[(slot << LW) | W_MARKET] !== market || ord.u8[b | B_LADDER] !== ladder || ord.u8[b | B_LADDER_TICK] !== t)
            bad.push(`order ${id}: on the wrong level`);
          if (id <= prevId) bad.push(`level ${market}/${ladder}/${t}: not in time priority at order ${id}`);
          prevId = id;
          prev = slot;
        }
        if (book.levelTail[lv] !== prev) bad.push(`level ${market}/${ladder}/${t}: tail mismatch`);
        if (sum !== book.levelQty[lv]) bad.push(`level ${market}/${ladder}/${t}: total ${book.levelQty[lv]} != sum of orders ${sum}`);
        if (count !== book.levelCount[lv]) bad.push(`level ${market}/${ladder}/${t}: count ${book.levelCount[lv]} != ${count}`);
        if (count > 0) best[ladder] = t;
      }
      if (book.best[(market << 1) | ladder] !== best[ladder])
        bad.push(`market ${market} ladder ${ladder}: best ${book.best[(market << 1) | ladder]} != ${best[ladder]}`);
    }
    if (best[0]! > 0 && best[1]! > 0 && best[0]! + best[1]! >= 100)
      bad.push(`market ${market}: crossed book at rest (${best[0]} + ${best[1]})`);
  }
  return bad;
}

/** The checks of a live order at `slot` on account a's live list, with its reservations added up. */
function checkLive(
  s: ExchangeState, a: number, slot: number, bad: string[], reserved: Float64Array, posRes: Float64Array, posBuy: Float64Array,
): void {
  const { u8, u16, u32, f64 } = s.orders;
  const id = f64[(slot << LF) | F_ID]!;
  const rem = u32[(slot << LW) | W_REMAINING]!;
  const owner = u32[(slot << LW) | W_ACCOUNT]!;
  if (owner !== a) bad.push(`order ${id}: on account ${a}'s live list but belongs to ${owner}`);
  if (u8[(slot << LB) | B_ON_BOOK] !== 1) bad.push(`order ${id}: live but not on the book`);
  if (rem <= 0) bad.push(`order ${id}: live with remaining ${rem}`);
  const p = s.accounts.findPosition(a, u32[(slot << LW) | W_MARKET]!);
  const k = 2 * p + u8[(slot << LB) | B_OUTCOME]!;
  if (u8[(slot << LB) | B_SIDE] === Side.buy) {
    const held = f64[(slot << LF) | F_RESERVED_CASH]!;
    reserved[a] = reserved[a]! + held;
    const expect = rem * (u8[(slot << LB) | B_TICK]! + u16[(slot << LH) | H_FEE_PER_SHARE]!);
    if (held !== expect) bad.push(`order ${id}: reserves ${held}, expected ${expect}`);
    posBuy[k] = posBuy[k]! + rem;
  } else {
    posRes[k] = posRes[k]! + rem;
  }
}
