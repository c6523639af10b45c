// verify(state): the O(n) self-check of the book and the money invariants.
// Run after every command in tests and simulators (the VERIFY switch of the
// engine thread); off in production. Returns the list of violations (empty
// when the state is sound) so that a test can print all of them at once.

import { Book } from '../book/book.js';
import { NIL } from '../book/orders.js';
import { Side, WithdrawalStatus } from '../layout/records.js';
import type { ExchangeState } from './state.js';

export function verify(s: ExchangeState): string[] {
  const bad: string[] = [];
  const acc = s.accounts;
  const ord = s.orders;
  const mk = s.markets;
  const book = s.book;

  // Money: cash + 100 x open pairs + fees == deposits - confirmed withdrawals.
  let cash = 0;
  for (let a = 1; a <= acc.count; a++) {
    if (acc.available[a]! < 0) bad.push(`account ${a}: available ${acc.available[a]} < 0`);
    if (acc.reserved[a]! < 0) bad.push(`account ${a}: reserved ${acc.reserved[a]} < 0`);
    cash += acc.available[a]! + acc.reserved[a]!;
  }
  let pairs = 0;
  for (let market = 1; market <= mk.count; market++) pairs += mk.openInterest[market]!;
  if (cash + 100 * pairs + acc.feesCollected !== acc.deposits - acc.withdrawn) {
    bad.push(
      `money: cash ${cash} + 100 x pairs ${pairs} + fees ${acc.feesCollected} != deposits ${acc.deposits} - withdrawn ${acc.withdrawn}`,
    );
  }

  // Reservations recomputed from live orders and pending withdrawals.
  const reserved = new Float64Array(acc.count + 1);
  const posRes = new Float64Array(acc.posCount * 2);
  const posBuy = new Float64Array(acc.posCount * 2);
  for (let a = 1; a <= acc.count; a++) {
    for (let slot = acc.liveHead[a]!; slot !== NIL; slot = ord.anext[slot]!) {
      if (ord.account[slot] !== a) bad.push(`order ${ord.id[slot]}: on account ${a}'s live list but belongs to ${ord.account[slot]}`);
      if (ord.onBook[slot] !== 1) bad.push(`order ${ord.id[slot]}: live but not on the book`);
      if (ord.remaining[slot]! <= 0) bad.push(`order ${ord.id[slot]}: live with remaining ${ord.remaining[slot]}`);
      const p = acc.findPosition(a, ord.market[slot]!);
      const k = 2 * p + ord.outcome[slot]!;
      if (ord.side[slot] === Side.buy) {
        reserved[a] = reserved[a]! + ord.reservedCash[slot]!;
        const expect = ord.remaining[slot]! * (ord.tick[slot]! + ord.feePerShare[slot]!);
        if (ord.reservedCash[slot] !== expect) bad.push(`order ${ord.id[slot]}: reserves ${ord.reservedCash[slot]}, expected ${expect}`);
        posBuy[k] = posBuy[k]! + ord.remaining[slot]!;
      } else {
        posRes[k] = posRes[k]! + ord.remaining[slot]!;
      }
    }
  }
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
        for (let slot = book.levelHead[lv]!; slot !== NIL; slot = ord.next[slot]!) {
          sum += ord.remaining[slot]!;
          count++;
          if (ord.prev[slot] !== prev) bad.push(`level ${market}/${ladder}/${t}: broken prev link at order ${ord.id[slot]}`);
          if (ord.market[slot] !== market || ord.ladder[slot] !== ladder || ord.ladderTick[slot] !== t)
            bad.push(`order ${ord.id[slot]}: on the wrong level`);
          if (ord.id[slot]! <= prevId) bad.push(`level ${market}/${ladder}/${t}: not in time priority at order ${ord.id[slot]}`);
          prevId = ord.id[slot]!;
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
