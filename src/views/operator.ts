// operator: the control plane's listings for the operator console (GET
// /admin/markets, /admin/oracle, /admin/withdrawals), answered from the
// control-plane thread's Views. Scans are O(markets), O(sources) and
// O(withdrawals): operator reads, never on a trading path. Control-plane
// (main) thread.

import { WithdrawalStatus } from '../layout/records.js';
import { ORACLE_SOURCES } from '../engine/markets.js';
import { hiLoToString } from '../lib/u64.js';
import type { MarketView, RoundView, Views } from './views.js';

type OperatorMarket = MarketView & { round: RoundView | null; series_period_s: number };

export interface OracleSourceView {
  source_id: number;
  price: string;
  ts: string;
  fresh: boolean;
}

/** Every market in ascending market_id with its current round (null before the first or once evicted). */
export function operatorMarkets(views: Views): { markets: OperatorMarket[]; as_of_seq: string } {
  const mk = views.state.markets;
  const out: OperatorMarket[] = [];
  let cursor: string | undefined;
  do {
    const page = views.markets({ limit: 1000, cursor });
    for (const m of page.markets) {
      const r = views.round(m.market_id);
      let round: RoundView | null = null;
      if (r !== null) {
        const { as_of_seq: _seq, ...rest } = r;
        round = rest;
      }
      out.push({ ...m, round, series_period_s: mk.seriesPeriodS[m.market_id]! });
    }
    cursor = page.cursor === '' ? undefined : page.cursor;
  } while (cursor !== undefined);
  return { markets: out, as_of_seq: String(views.asOfSeq) };
}

/** The reference price and every source that ever ticked, with its last tick and whether it is still fresh. */
export function operatorOracle(views: Views): {
  price: string; fresh_source_count: number; seq: string; staleness_ms: number; quorum: number; sources: OracleSourceView[];
  as_of_seq: string;
} {
  const s = views.state;
  const mk = s.markets;
  const sources: OracleSourceView[] = [];
  for (let id = 0; id < ORACLE_SOURCES; id++) {
    if (mk.srcSeen[id] !== 1) continue;
    // A source is in the expiry heap from its tick until the engine expires it.
    const ts = hiLoToString(mk.srcTsHi[id]!, mk.srcTsLo[id]!);
    sources.push({ source_id: id, price: String(mk.srcPrice[id]!), ts, fresh: s.oracleExpiries.has(id) });
  }
  return {
    ...views.oraclePrice(), staleness_ms: s.config.oracle_staleness_ms, quorum: s.config.oracle_quorum, sources,
    as_of_seq: String(views.asOfSeq),
  };
}

/** Pending withdrawals (waiting for confirm or fail), oldest first. */
export function pendingWithdrawals(views: Views): { withdrawals: NonNullable<ReturnType<Views['withdrawalByWid']>>[]; as_of_seq: string } {
  const acc = views.state.accounts;
  const out: NonNullable<ReturnType<Views['withdrawalByWid']>>[] = [];
  for (let wid = 1; wid <= acc.withdrawalCount; wid++) {
    if (acc.wStatus[wid] !== WithdrawalStatus.pending) continue;
    out.push(views.withdrawalByWid(wid)!);
  }
  return { withdrawals: out, as_of_seq: String(views.asOfSeq) };
}
