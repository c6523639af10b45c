// operation_schemas: what the routes table (routes.ts) does not say about an
// operation but its descriptions need: the schemas of its path and query
// parameters, its success status and response schema, the error codes it
// can answer, and its merged input schema (path parameters + query
// parameters + body fields in one closed object: the MCP tool's inputSchema).
// The MCP lane and the OpenAPI generator both read this one table; a test
// checks that it covers every route. Build time (and MCP start-up); gateway
// threads and tools.

import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox';
import { Scope } from '../layout/records.js';
import type { QueryParam } from './query.js';
import * as R from '../wire/responses.js';
import type { Route } from './routes.js';
import { U64String } from '../wire/requests.js';
import { MAX_CANDLE_PERIODS } from '../views/views.js';

const U32_MAX = 4294967295;

export interface OperationDoc {
  /** Short human-readable title (OpenAPI summary, MCP tool title). */
  title: string;
  tag: 'exchange' | 'markets' | 'portfolio' | 'orders' | 'funding';
  /** HTTP status of success. */
  status: number;
  response: TSchema;
  /** Error codes beyond the ones every operation of its kind can answer (commonErrors). */
  errors: readonly string[];
  /** Advice for a caller (agent or human) beyond the route's description. */
  hint?: string;
}

const SEQUENCED_NOTE =
  'The answer reports the sequenced outcome. On 504 sequencing_timeout the command may still be sequenced: check with the reads before ' +
    'retrying.';

/**
 * Per operation name, its documentation. `satisfies` keeps each entry's own
 * response schema type, so routes.ts types a handler's answer from it
 * (`ResponseOf<name>`): a handler that returns another shape does not compile.
 */
export const OPERATIONS = {
  get_exchange_status: { title: 'Exchange status', tag: 'exchange', status: 200, response: R.ExchangeStatus, errors: [] },
  get_exchange_schedule: { title: 'Maintenance schedule', tag: 'exchange', status: 200, response: R.ExchangeSchedule, errors: [] },
  get_retention: { title: 'Retention caps', tag: 'exchange', status: 200, response: R.RetentionLimits, errors: [] },
  get_account_limits: {
    title: 'Limits of the calling key', tag: 'exchange', status: 200, response: R.AccountLimits, errors: [],
    hint: 'Call this first: it tells which scopes the key has and how many requests per second it may make.',
  },
  list_markets: {
    title: 'List markets', tag: 'markets', status: 200, response: R.MarketsPage, errors: [],
    hint: 'Use status ["trading"] to find markets that accept orders.',
  },
  get_market: { title: 'Get a market', tag: 'markets', status: 200, response: R.MarketWithSeq, errors: ['unknown_market'] },
  get_orderbook: { title: 'Order book', tag: 'markets', status: 200, response: R.Orderbook, errors: ['unknown_market'] },
  list_trades: { title: 'Public trades', tag: 'markets', status: 200, response: R.TradesPage, errors: ['unknown_market'] },
  get_candlesticks: {
    title: 'Price candles', tag: 'markets', status: 200, response: R.Candlesticks, errors: ['unknown_market'],
    hint: 'For a price history: one candle per period with trades (OHLC of tick_yes, volume, trade_count), oldest first. '
      + 'Built from the retained trade tape (tape_cap trades per market, see get_retention): check truncated and retained_from_ts.',
  },
  get_oracle_price: { title: 'Oracle reference price', tag: 'markets', status: 200, response: R.OraclePrice, errors: [] },
  list_rounds: { title: 'List rounds', tag: 'markets', status: 200, response: R.RoundsPage, errors: [] },
  get_round: { title: 'Current round of a market', tag: 'markets', status: 200, response: R.RoundWithSeq, errors: ['round_not_found'] },
  get_balance: { title: 'Cash balance', tag: 'portfolio', status: 200, response: R.Balance, errors: [] },
  list_positions: { title: 'Positions', tag: 'portfolio', status: 200, response: R.PositionsPage, errors: [] },
  list_fills: { title: 'Your fills', tag: 'portfolio', status: 200, response: R.FillsPage, errors: [] },
  list_orders: {
    title: 'Your orders', tag: 'portfolio', status: 200, response: R.OrdersPage, errors: [],
    hint: 'After a timeout, ask with client_order_id to learn whether the placement landed.',
  },
  place_order: {
    title: 'Place an order', tag: 'orders', status: 201, response: R.Placement,
    errors: ['unknown_market', 'market_not_trading', 'duplicate_client_order_id', 'insufficient_balance', 'insufficient_position',
      'position_limit_exceeded', 'expiry_in_past', 'order_capacity_exceeded', 'shed', 'sequencing_timeout'],
    hint: 'A buy reserves tick x qty cents plus the worst-case fee it can pay (taker unless post_only, maker unless ioc, fok or '
      + 'max_cost). Always set a fresh client_order_id: a retry with the same id is refused 409 duplicate_client_order_id with the '
      + 'original order, so an order is never doubled. ' + SEQUENCED_NOTE,
  },
  cancel_all_orders: {
    title: 'Cancel all orders',
    tag: 'orders',
    status: 202,
    response: R.SequencedAck,
    errors: ['unexpected_body', 'shed', 'sequencing_timeout'],
    hint: 'Answers with the seq of the mass cancel; the individual cancels are visible through list_orders.',
  },
  place_batch: {
    title: 'Place up to 20 orders', tag: 'orders', status: 201, response: R.BatchPlaceResult, errors: ['shed'],
    hint: 'Costs one write token per order. Partial success is normal: check every item of results.',
  },
  cancel_batch: {
    title: 'Cancel up to 20 orders by id', tag: 'orders', status: 200, response: R.BatchCancelResult, errors: [],
    hint: 'Costs one write token per id.',
  },
  decrease_order: {
    title: 'Decrease an order', tag: 'orders', status: 200, response: R.DecreaseResult, errors: ['unknown_order', 'sequencing_timeout'],
    hint: 'There is no amend: to increase or reprice, cancel and place a new order.',
  },
  get_queue_position: {
    title: 'Queue position of an order',
    tag: 'orders',
    status: 200,
    response: R.QueuePosition,
    errors: ['unknown_order'],
  },
  arm_deadman: { title: 'Arm the dead-man timer', tag: 'orders', status: 200, response: R.DeadmanArmed, errors: ['sequencing_timeout'] },
  disarm_deadman: {
    title: 'Disarm the dead-man timer',
    tag: 'orders',
    status: 200,
    response: R.DeadmanDisarmed,
    errors: ['sequencing_timeout'],
  },
  get_deadman: { title: 'Dead-man timer status', tag: 'orders', status: 200, response: R.DeadmanState, errors: [] },
  get_deposit_address: { title: 'Deposit address', tag: 'funding', status: 200, response: R.DepositAddress, errors: [] },
  request_withdrawal: {
    title: 'Request a withdrawal', tag: 'funding', status: 201, response: R.WithdrawalCreated,
    errors: ['duplicate_client_withdrawal_id', 'withdrawal_exceeds_available', 'sequencing_timeout'],
    hint: 'Needs a key with the withdraw scope (user-created keys never have it).',
  },
  get_withdrawal: { title: 'Withdrawal status', tag: 'funding', status: 200, response: R.Withdrawal, errors: ['not_found'] },
} satisfies Readonly<Record<string, OperationDoc>>;

/** The name of a REST operation (a route of routes.ts, an MCP tool). */
export type OperationName = keyof typeof OPERATIONS;

/** The answer body of an operation, as its response schema declares it. */
export type ResponseOf<N extends OperationName> = Static<(typeof OPERATIONS)[N]['response']>;

export function operationDoc(route: Route): OperationDoc {
  const d = (OPERATIONS as Readonly<Record<string, OperationDoc>>)[route.name];
  if (d === undefined) throw new Error(`operation_schemas: no entry for route ${route.name}`);
  return d;
}

/** The codes every operation of this shape can answer (besides its own `errors`). */
export function commonErrors(route: Route): string[] {
  // shed: every request while the exchange stops (http.ts), and a mutation the replay guard cannot take (auth.ts).
  const out = ['unknown_field', 'invalid_field', 'unauthorized', 'missing_scope', 'rate_limited', 'internal', 'shed'];
  if (route.body === 'none' || route.body === 'empty') out.push('unexpected_body');
  else out.push('invalid_json', 'body_too_large');
  // With replication (src/replication): a write sent to a standby or replica, and any request to a fenced former primary
  // (http.ts answers it not_primary, reads included); a read's min_seq not reached in time.
  out.push('not_primary');
  if (route.method === 'GET') out.push('replica_lagging');
  return out;
}

// ---- parameters ------------------------------------------------------------------

const PATH_PARAMS: Readonly<Record<string, TSchema>> = {
  market_id: Type.Integer({ minimum: 0, maximum: U32_MAX, description: 'market id (0 is no market: 404)' }),
  order_id: Type.String({ pattern: U64String.pattern, description: 'order id (u64 decimal string)' }),
  client_withdrawal_id: Type.String({ pattern: U64String.pattern, description: 'your client_withdrawal_id (u64 decimal string)' }),
};

/** Names of the `{param}` segments of a route, in path order. */
export function pathParamNames(route: Route): string[] {
  return route.segments.filter((s) => s.startsWith('{')).map((s) => s.slice(1, -1));
}

export function pathParamSchema(name: string): TSchema {
  const s = PATH_PARAMS[name];
  if (s === undefined) throw new Error(`operation_schemas: no schema for path parameter ${name}`);
  return s;
}

const QUERY_DOCS: Readonly<Record<string, string>> = {
  market_id: 'only this market; 0 or absent = all',
  group_id: 'only orders of this group; 0 or absent = all',
  order_id: 'only fills of this order (u64 decimal string)',
  client_order_id: 'only the order with this client_order_id (u64 decimal string)',
  category: 'only rounds of this series',
  period: 'candle length',
  start_ts: 'first period: the one holding this time, ns since the epoch (u64 decimal string); '
    + `default: the period ${MAX_CANDLE_PERIODS - 1} periods before end_ts`,
  end_ts: 'last period: the one holding this time, ns since the epoch (u64 decimal string); '
    + 'default: the exchange\'s last event time (or start_ts when later)',
};

/** The schema of one query parameter (what the REST query parser accepts, typed). */
export function queryParamSchema(p: QueryParam): TSchema {
  const doc = QUERY_DOCS[p.name];
  switch (p.kind) {
    case 'limit': return Type.Integer({ minimum: 1, maximum: 1000, default: 100, description: 'page size' });
    case 'cursor': return Type.String({ description: 'opaque cursor from the previous page; omit for the first page' });
    case 'depth': return Type.Integer({ minimum: 1, maximum: 99, default: 10, description: 'price levels per side' });
    case 'market_id': return Type.Integer({ minimum: 0, maximum: U32_MAX, description: doc ?? 'market id; 0 = all' });
    case 'group_id': return Type.Integer({ minimum: 0, maximum: U32_MAX, description: doc ?? 'group id; 0 = all' });
    case 'category': return Type.Integer({ minimum: 0, maximum: 65535, description: doc ?? 'series id' });
    case 'u64': return Type.String({ pattern: U64String.pattern, description: doc ?? 'u64 decimal string' });
    case 'choice':
      return Type.Union(p.values!.map((v) => Type.Literal(v)), {
        ...(p.default === undefined ? {} : { default: p.default }), description: `${doc ?? p.name}: one of ${p.values!.join(', ')}`,
      });
    case 'statuses':
      return Type.Array(Type.Union(p.values!.map((v) => Type.Literal(v))), {
        minItems: 1, description: `any of these statuses (sent comma-separated on REST): ${p.values!.join(', ')}`,
      });
  }
}

/** The body schema's properties (none for bodiless routes). */
export function bodyProperties(route: Route): Record<string, TSchema> {
  if (route.body === 'none' || route.body === 'empty') return {};
  const s = route.body.schema as unknown as TObject;
  return s.properties;
}

/**
 * Path parameters, query parameters and body fields merged into one closed
 * object (the MCP tool input). Names never collide (checked here).
 */
export function inputSchema(route: Route): TObject {
  const props: Record<string, TSchema> = {};
  const add = (name: string, s: TSchema): void => {
    if (name in props) throw new Error(`operation_schemas: ${route.name} has two inputs named ${name}`);
    props[name] = s;
  };
  for (const n of pathParamNames(route)) add(n, pathParamSchema(n));
  for (const q of route.query) add(q.name, Type.Optional(queryParamSchema(q)));
  const body = bodyProperties(route);
  for (const n of Object.keys(body)) add(n, body[n]!);
  return Type.Object(props, { additionalProperties: false });
}

export function scopeName(bits: number): 'read' | 'trade' | 'withdraw' {
  return bits === Scope.read ? 'read' : bits === Scope.trade ? 'trade' : 'withdraw';
}
