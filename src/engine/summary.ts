// summarize(state): a canonical, plain-object picture of the state for the
// differential test (compared with the reference model) and for tools.
// Not for hot paths.
// Test and tool threads.

import * as ordersModule from '../book/orders.js';
import { Book } from '../book/book.js';
import { hiLoToString } from '../lib/u64.js';
import type { ExchangeState } from './state.js';

// Field offsets as module constants (an imported binding is a module cell read at every use; docs/engine-performance.md).
const { NIL, B_OUTCOME, B_SIDE, B_TICK, F_ID, LB, LF, LW, W_ANEXT, W_FILLED, W_MARKET, W_NEXT, W_REMAINING } = ordersModule;

export interface Summary {
  seq: number;
  fees_collected: number;
  open_pairs_total: number;
  accounts: { account_id: number; available: number; reserved: number; deleted: boolean }[];
  positions: { account_id: number; market_id: number; outcome: number; free: number; reserved_for_sale: number }[];
  orders: {
    order_id: number;
    account_id: number;
    market_id: number;
    side: number;
    outcome: number;
    tick: number;
    remaining: number;
    filled: number;
  }[];
  book: { market_id: number; ladder: number; tick: number; qty: number; order_ids: number[] }[];
  markets: { market_id: number; status: number; round_number: number; volume: number; open_interest: number; last_tick_yes: number }[];
  deadman: { account_id: number; fires_at_ts: string }[];
  withdrawals: { wid: number; account_id: number; amount: number; status: number }[];
  series: { market_id: number; category: number; period_s: number; active: boolean }[];
  /** The reference as of the last oracle event (OracleTicked or OracleSourceExpired). */
  oracle: { price: number; fresh_source_count: number; seq: number };
}

export function summarize(s: ExchangeState): Summary {
  const acc = s.accounts;
  const ord = s.orders;
  const mk = s.markets;
  const out: Summary = {
    seq: s.seq, fees_collected: acc.feesCollected, open_pairs_total: 0,
    accounts: [], positions: [], orders: [], book: [], markets: [], deadman: [], withdrawals: [], series: [],
    oracle: { price: mk.oraclePrice, fresh_source_count: mk.oracleFresh, seq: mk.oracleSeq },
  };
  for (let a = 1; a <= acc.count; a++) {
    out.accounts.push({ account_id: a, available: acc.available[a]!, reserved: acc.reserved[a]!, deleted: acc.deleted[a] === 1 });
    if (acc.deadArmed[a] === 1) out.deadman.push({ account_id: a, fires_at_ts: hiLoToString(acc.deadHi[a]!, acc.deadLo[a]!) });
    for (let slot = acc.liveHead[a]!; slot !== NIL; slot = ord.i32[(slot << LW) | W_ANEXT]!) {
      out.orders.push({
        order_id: ord.f64[(slot << LF) | F_ID]!, account_id: a, market_id: ord.u32[(slot << LW) | W_MARKET]!,
        side: ord.u8[(slot << LB) | B_SIDE]!, outcome: ord.u8[(slot << LB) | B_OUTCOME]!,
        tick: ord.u8[(slot << LB) | B_TICK]!, remaining: ord.u32[(slot << LW) | W_REMAINING]!, filled: ord.u32[(slot << LW) | W_FILLED]!,
      });
    }
  }
  out.orders.sort((x, y) => x.order_id - y.order_id);
  for (let p = 0; p < acc.posCount; p++) {
    for (let outcome = 0; outcome < 2; outcome++) {
      const free = acc.pFree[2 * p + outcome]!;
      const res = acc.pReserved[2 * p + outcome]!;
      if (free !== 0 || res !== 0) {
        out.positions.push({ account_id: acc.pAccount[p]!, market_id: acc.pMarket[p]!, outcome, free, reserved_for_sale: res });
      }
    }
  }
  out.positions.sort((x, y) => x.account_id - y.account_id || x.market_id - y.market_id || x.outcome - y.outcome);
  for (let market = 1; market <= mk.count; market++) {
    for (let ladder = 0; ladder < 2; ladder++) {
      for (let t = 1; t < 100; t++) {
        const lv = Book.level(market, ladder, t);
        if (s.book.levelCount[lv] === 0) continue;
        const ids: number[] = [];
        for (let x = s.book.levelHead[lv]!; x !== NIL; x = ord.i32[(x << LW) | W_NEXT]!) ids.push(ord.f64[(x << LF) | F_ID]!);
        out.book.push({ market_id: market, ladder, tick: t, qty: s.book.levelQty[lv]!, order_ids: ids });
      }
    }
    const r = mk.round[market]!;
    const st = r < 0 ? 0 : mk.rStatus[r]!;
    out.markets.push({
      market_id: market, status: st >= 1 && st <= 3 ? st : 0, round_number: r < 0 ? 0 : mk.rNumber[r]!, volume: mk.volume[market]!,
      open_interest: mk.openInterest[market]!, last_tick_yes: mk.lastTickYes[market]!,
    });
    out.open_pairs_total += mk.openInterest[market]!;
    if (mk.seriesPeriodS[market]! > 0) {
      out.series.push({
        market_id: market,
        category: mk.category[market]!,
        period_s: mk.seriesPeriodS[market]!,
        active: mk.seriesActive[market] === 1,
      });
    }
  }
  for (let w = 0; w < acc.wTop; w++) {
    if (acc.wWid[w] === 0) continue;
    out.withdrawals.push({ wid: acc.wWid[w]!, account_id: acc.wAccount[w]!, amount: acc.wAmount[w]!, status: acc.wStatus[w]! });
  }
  out.withdrawals.sort((x, y) => x.wid - y.wid);
  return out;
}
