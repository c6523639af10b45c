// model: what every projection and query group of the read model shares: the
// read model's data (ViewsData, the fields of a Views), its configuration,
// the query arguments, and the checks every query makes. Gateway and
// control-plane threads (whoever owns a Views), recovery and tools.
//
// The data is the Views object's own fields because a snapshot is that
// object graph (src/journal/state_codec.ts encodes a Views field by field):
// projections and query groups are functions over it, never objects stored
// in it, so splitting code changes no snapshot.

import type { ExchangeState } from '../engine/state.js';
import { CODES } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type * as Q from '../wire/queries.js';
import type { Candlesticks } from '../wire/responses.js';
import { ViewError } from './cursor.js';
import type { RecordRings } from './record_rings.js';

export interface ViewsConfig {
  /** Trades retained per market on the public tape. */
  tape_cap: number;
  /** Fills retained per account (both roles together). */
  fill_cap: number;
}

export const DEFAULT_VIEWS_CONFIG: Readonly<ViewsConfig> = Object.freeze({ tape_cap: 1000, fill_cap: 1000 });

/**
 * The read model's data: the engine state folded with evolve plus the
 * projections the engine does not keep. Written only by Views.apply (and the
 * fold functions it calls); every field is carried by snapshots.
 */
export interface ViewsData {
  readonly state: ExchangeState;
  readonly config: ViewsConfig;
  /** The public tape of every market (owner = market_id, tape.ts). */
  readonly tapes: RecordRings;
  /** The fills of every account (owner = account_id, fills.ts). */
  readonly fillRings: RecordRings;
  // Each account's position slots, linked in creation order (positions.ts).
  posSeen: number;
  posHead: Int32Array;
  posTail: Int32Array;
  posNext: Int32Array;
}

// ---- query arguments ---------------------------------------------------------------

export type PageQuery = Q.Parsed<Q.PageQuery>;
export type MarketsQuery = Q.Parsed<Q.MarketsQuery>;
export type RoundsQuery = Q.Parsed<Q.RoundsQuery>;
export type PositionsQuery = Q.Parsed<Q.PositionsQuery>;
export type FillsQuery = Q.Parsed<Q.FillsQuery<number>>;
export interface CandlesQuery {
  period: Candlesticks['period'];
  /** u64 ns as [hi, lo] halves (the REST query parser's form). */
  start_ts?: [number, number];
  end_ts?: [number, number];
}
/** client_order_id as [hi, lo] halves. */
export type OrdersQuery = Q.Parsed<Q.OrdersQuery<[number, number]>>;

// ---- checks every query makes ----------------------------------------------------------

/** The gateway validates limit (1..1000); anything else here is our bug. */
export function checkLimit(limit: number): void {
  assert(Number.isInteger(limit) && limit >= 1, 'views: limit must be a positive integer');
}

/** Bit mask of the names' indexes in `names`; throws invalid_field on an unknown name. */
export function statusMask(field: string, values: readonly string[] | undefined, names: readonly string[]): number {
  if (values === undefined || values.length === 0) return -1;
  let mask = 0;
  for (const v of values) {
    const i = names.indexOf(v);
    if (i < 0) throw new ViewError('invalid_field', field, `unknown status ${JSON.stringify(v)}; one of ${names.join(', ')}`);
    mask |= 1 << i;
  }
  return mask;
}

/** True when the account was ever created (deleted ones included). */
export function accountKnown(s: ExchangeState, account: number): boolean {
  return Number.isInteger(account) && account >= 1 && account <= s.accounts.count;
}

export function marketExists(s: ExchangeState, id: number): boolean {
  return Number.isInteger(id) && s.markets.exists(id);
}

/** The reject code's name for its num ('' when none). */
export function codeName(num: number): string {
  for (const c of CODES) if (c.num === num) return c.code;
  return '';
}
