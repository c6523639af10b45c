// rounds: the oracle and round queries of the read model: the oracle price,
// the round list, one market's current round, one round by number, and the
// operator's series list and oracle sources. Runs on the thread that owns
// the Views.

import { ORACLE_SOURCES } from '../engine/markets.js';
import { ROUND_OUTCOME_NAMES, ROUND_STATUS_NAMES } from '../layout/records.js';
import { hiLoToString } from '../lib/u64.js';
import type { AdminOracle, OracleSource, SeriesItem, SeriesList } from '../wire/control_plane.js';
import type { OraclePrice, Round, RoundsPage, RoundWithSeq } from '../wire/responses.js';
import { CursorKind, cursorScope, decodeCursor, encodeCursor } from './cursor.js';
import { checkLimit, marketExists, type RoundsQuery, type ViewsData } from './model.js';

export function oraclePrice(v: ViewsData): OraclePrice {
  const mk = v.state.markets;
  // Before the first tick these are 0, 0, 0: "never" on the wire (docs/rest.md).
  return { price: String(mk.oraclePrice), fresh_source_count: mk.oracleFresh, seq: String(mk.oracleSeq) };
}

/** The oracle's price, fresh source count and seq into out, as numbers (the fan-out compares them per command; nothing is allocated). */
export function oracleNumbers(v: ViewsData, out: Float64Array): void {
  const mk = v.state.markets;
  out[0] = mk.oraclePrice;
  out[1] = mk.oracleFresh;
  out[2] = mk.oracleSeq;
}

/**
 * The reference price and every source that ever ticked, ascending
 * source_id, with its last tick and whether it is still fresh. O(sources);
 * operator read.
 */
export function adminOracle(v: ViewsData): AdminOracle {
  const s = v.state;
  const mk = s.markets;
  const sources: OracleSource[] = [];
  for (let id = 0; id < ORACLE_SOURCES; id++) {
    if (mk.srcSeen[id] !== 1) continue;
    // A source is in the expiry heap from its tick until the engine expires it.
    const ts = hiLoToString(mk.srcTsHi[id]!, mk.srcTsLo[id]!);
    sources.push({ source_id: id, price: String(mk.srcPrice[id]!), ts, fresh: s.oracleExpiries.has(id) });
  }
  return {
    ...oraclePrice(v), staleness_ms: s.config.oracle_staleness_ms, quorum: s.config.oracle_quorum, sources, as_of_seq: String(s.seq),
  };
}

/** The round in row r (src/engine/markets.ts). */
function roundView(v: ViewsData, r: number): Round {
  const mk = v.state.markets;
  const market = mk.rMarket[r]!;
  const outcome = mk.rOutcome[r]!;
  return {
    round_number: String(mk.rNumber[r]!),
    market_id: market,
    category: mk.category[market]!,
    // A retained round is past 'none' (index 0), and its outcome is 'none' only until proposed, shown as "".
    status: ROUND_STATUS_NAMES[mk.rStatus[r]!] as Round['status'],
    strike: String(mk.rStrike[r]!),
    open_ts: hiLoToString(mk.rOpenHi[r]!, mk.rOpenLo[r]!),
    close_ts: hiLoToString(mk.rCloseHi[r]!, mk.rCloseLo[r]!),
    outcome: outcome === 0 ? '' : ROUND_OUTCOME_NAMES[outcome] as Round['outcome'],
    settle_price: String(mk.rSettlePrice[r]!),
    proposed_ts: hiLoToString(mk.rProposedHi[r]!, mk.rProposedLo[r]!),
    settled_ts: hiLoToString(mk.rSettledHi[r]!, mk.rSettledLo[r]!),
  };
}

/**
 * Retained rounds in descending round_number, optionally of one category
 * (series). The rows are few (at most round_cap + 2 x markets), so a page
 * collects the matching ones and sorts them. The cursor is the round_number
 * of the next round to serve, plus one.
 */
export function roundsPage(v: ViewsData, q: RoundsQuery): RoundsPage {
  checkLimit(q.limit);
  const mk = v.state.markets;
  const scope = cursorScope(0, q);
  const before = decodeCursor(CursorKind.rounds, q.cursor, scope);
  const upTo = before < 0 ? Infinity : before - 1;
  const rows: number[] = [];
  for (let r = 0; r < mk.roundTop; r++) {
    const n = mk.rNumber[r]!;
    if (n === 0 || mk.rEvicted[r] === 1 || n > upTo) continue;
    if (q.category !== undefined && mk.category[mk.rMarket[r]!] !== q.category) continue;
    rows.push(r);
  }
  rows.sort((a, b) => mk.rNumber[b]! - mk.rNumber[a]!);
  const out = rows.slice(0, q.limit).map((r) => roundView(v, r));
  const cursor = rows.length > q.limit ? encodeCursor(CursorKind.rounds, mk.rNumber[rows[q.limit]!]! + 1, scope) : '';
  return { rounds: out, cursor, as_of_seq: String(v.state.seq) };
}

/**
 * Every series (markets whose rounds open by themselves), ascending by
 * market_id: category, round length, whether it still opens rounds, and its
 * current round (null before the first or once evicted). Operator read.
 */
export function seriesList(v: ViewsData): SeriesList {
  const mk = v.state.markets;
  const out: SeriesItem[] = [];
  for (let id = 1; id <= mk.count; id++) {
    const period = mk.seriesPeriodS[id]!;
    if (period === 0) continue;
    out.push({
      category: mk.category[id]!, market_id: id, title: mk.title[id]!, period_s: period, active: mk.seriesActive[id] === 1,
      round: marketRound(v, id),
    });
  }
  return { series: out, as_of_seq: String(v.state.seq) };
}

/** One round by round_number (WebSocket rounds channel); null when unknown or evicted. */
export function roundRecord(v: ViewsData, roundNumber: number): Round | null {
  if (!Number.isSafeInteger(roundNumber) || roundNumber < 1) return null;
  const r = v.state.markets.roundRow(roundNumber);
  return r < 0 ? null : roundView(v, r);
}

/** An existing market's current round in any status; null before its first round or once evicted. */
export function marketRound(v: ViewsData, marketId: number): Round | null {
  const r = v.state.markets.round[marketId]!;
  return r < 0 || v.state.markets.rEvicted[r] === 1 ? null : roundView(v, r);
}

/** The market's current round in any status; null when unknown market, no round yet, or evicted. */
export function currentRound(v: ViewsData, marketId: number): RoundWithSeq | null {
  if (!marketExists(v.state, marketId)) return null;
  const round = marketRound(v, marketId);
  return round === null ? null : { ...round, as_of_seq: String(v.state.seq) };
}
