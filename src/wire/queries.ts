// queries: the query options of the REST lane's list reads, declared once for
// the two sides that hold them: the client (`src/client/types.ts`), which
// sends them as query strings, and the read models (`src/views/model.ts`),
// which receive them parsed and checked by the gateway (src/gateway/query.ts
// validates each parameter). The parameter names are the wire's. A u64 value
// is `Id`: a decimal string on the client side, parsed numbers on the read
// side. Types only: no thread runs this file.

/** Every list read pages: an opaque cursor from the previous page, 1..1000 items (default 100). */
export interface PageQuery {
  cursor?: string;
  limit?: number;
}

export interface MarketsQuery extends PageQuery {
  /** Market status names (closed, trading, frozen, proposed), sent comma-separated; any of them matches. */
  status?: string[];
}

export interface RoundsQuery extends PageQuery {
  /** Series filter, 0..65535. */
  category?: number;
}

export interface PositionsQuery extends PageQuery {
  market_id?: number;
}

export interface FillsQuery<Id> extends PageQuery {
  market_id?: number;
  order_id?: Id;
}

export interface OrdersQuery<Id> extends PageQuery {
  market_id?: number;
  /** Order status names (resting, partially_filled, filled, canceled, rejected), sent comma-separated; any of them matches. */
  status?: string[];
  client_order_id?: Id;
}

/** A query as the read models receive it: the gateway has applied the default limit. */
export type Parsed<Q extends PageQuery> = Q & { limit: number };
