// positions: the per-account position list projection. The engine state
// indexes position slots only by (account, market), so listing an account's
// positions needs each account's slots linked in creation order (slots are
// never freed). Also the position query and the position numbers the
// WebSocket fan-out compares. Runs on the thread that owns the Views.

import { NIL, pushTailSingly } from '../lib/intrusive_list.js';
import { OUTCOME_NAMES } from '../layout/records.js';
import { grown, nextCapacity } from '../lib/grow.js';
import type { Position, PositionsPage } from '../wire/responses.js';
import { CursorKind, cursorScope, decodeCursor, encodeCursor } from './cursor.js';
import { accountKnown, checkLimit, type PositionsQuery, type ViewsData } from './model.js';

/** The empty lists of a new read model, sized for the engine's account capacity. */
export function initPositionLists(v: ViewsData): void {
  v.posHead = grown(v.posHead, nextCapacity(0, v.state.config.account_capacity), NIL);
  v.posTail = grown(v.posTail, v.posHead.length, NIL);
  v.posNext = grown(v.posNext, nextCapacity(0, v.state.config.account_capacity), NIL);
}

/** Fold, after evolve: links position slots created since the last event into their account's list. */
export function linkNewPositions(v: ViewsData): void {
  const acc = v.state.accounts;
  const n = acc.posCount;
  if (n > v.posNext.length) v.posNext = grown(v.posNext, nextCapacity(v.posNext.length, n), NIL);
  for (let p = v.posSeen; p < n; p++) {
    const a = acc.pAccount[p]!;
    if (a >= v.posHead.length) {
      const cap = nextCapacity(v.posHead.length, a + 1);
      v.posHead = grown(v.posHead, cap, NIL);
      v.posTail = grown(v.posTail, cap, NIL);
    }
    pushTailSingly(v.posHead, v.posTail, v.posNext, a, p);
  }
  v.posSeen = n;
}

/** Every non-empty (market, outcome) of the account, ascending by market then yes before no; sort key market_id * 2 + outcome. */
export function positionEntries(
  v: ViewsData, account: number, market: number | undefined, after: number,
): { key: number; item: Position }[] {
  const acc = v.state.accounts;
  const out: { key: number; item: Position }[] = [];
  if (!accountKnown(v.state, account) || account >= v.posHead.length) return out;
  const add = (p: number): void => {
    const m = acc.pMarket[p]!;
    for (let outcome = 0; outcome < 2; outcome++) {
      const key = m * 2 + outcome;
      if (key <= after) continue;
      const free = acc.pFree[2 * p + outcome]!;
      const res = acc.pReserved[2 * p + outcome]!;
      if (free === 0 && res === 0) continue;
      out.push({ key, item: { market_id: m, outcome: OUTCOME_NAMES[outcome]!, free, reserved_for_sale: res } });
    }
  };
  if (market !== undefined) {
    const p = Number.isInteger(market) && market >= 0 ? acc.findPosition(account, market) : -1;
    if (p >= 0) add(p);
  } else {
    for (let p = v.posHead[account]!; p !== NIL; p = v.posNext[p]!) add(p);
    out.sort((x, y) => x.key - y.key);
  }
  return out;
}

export function positionsPage(v: ViewsData, account: number, q: PositionsQuery): PositionsPage {
  checkLimit(q.limit);
  const scope = cursorScope(account, q);
  const after = decodeCursor(CursorKind.positions, q.cursor, scope);
  const all = positionEntries(v, account, q.market_id, after);
  const page = all.slice(0, q.limit);
  const cursor = all.length > q.limit ? encodeCursor(CursorKind.positions, page[page.length - 1]!.key, scope) : '';
  return { positions: page.map((e) => e.item), cursor, as_of_seq: String(v.state.seq) };
}

/**
 * The account's shares in one market into out: [free yes, reserved yes, free
 * no, reserved no], zeros when it holds none (the WebSocket fan-out compares
 * them per command; nothing is allocated).
 */
export function positionNumbers(v: ViewsData, account: number, market: number, out: Float64Array): void {
  const acc = v.state.accounts;
  const p = accountKnown(v.state, account) ? acc.findPosition(account, market) : -1;
  for (let outcome = 0; outcome < 2; outcome++) {
    out[2 * outcome] = p >= 0 ? acc.pFree[2 * p + outcome]! : 0;
    out[2 * outcome + 1] = p >= 0 ? acc.pReserved[2 * p + outcome]! : 0;
  }
}
