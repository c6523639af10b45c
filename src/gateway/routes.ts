// routes: every REST operation (docs/rest.md, openapi.json), as a table. Each
// operation names its scope, its closed schemas (body and query), its rate
// cost and one handler; the HTTP server (http.ts) and the MCP lane call the
// same handlers. Reads are served from the thread's read model at as_of_seq;
// writes are encoded into the thread's command ring and answered from their
// completion records. Gateway threads.

import {
  ArmDeadman, CancelAll, CancelOrder, CompletionStatus, DecreaseOrder, DisarmDeadman, ORDER_STATUS_NAMES, CANCEL_REASON_NAMES,
  Outcome, PlaceOrder, RequestWithdrawal, Scope, Side, Stp, T_ARM_DEADMAN, T_CANCEL_ALL, T_CANCEL_ORDER, T_DECREASE_ORDER,
  T_DISARM_DEADMAN, T_PLACE_ORDER, T_REQUEST_WITHDRAWAL, Tif,
} from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { keyLimits, type BucketSpec } from './buckets.js';
import type { CommandWriter, Completion, CompletionWaiter, GatewayCore } from './core.js';
import { ApiError, codeByNum, errorObject } from './envelope.js';
import { parseQuery, pathId, u64Halves, type QueryParam, type QueryValues } from './query.js';
import { compile, safeField, storedText, u64Field, u64FieldHalves, validate, type Checker } from './schemas.js';
import { hiLoToString } from '../lib/u64.js';
import {
  BatchCancelBody, BatchPlaceBody, DeadmanBody, DecreaseBody, PlaceOrderBody, WithdrawalBody, type BatchCancelRequest,
  type BatchPlaceRequest, type DeadmanRequest, type DecreaseRequest, type PlaceOrderRequest, type WithdrawalRequest,
} from '../wire/requests.js';
import { scopeNames } from '../wire/keys.js';
import type * as R from '../wire/responses.js';
import { CANDLE_PERIODS } from '../wire/responses.js';
import { MAX_CANDLE_PERIODS, type Views } from '../views/views.js';
import type { TSchema } from '@sinclair/typebox';
import type { OperationName, ResponseOf } from './operation_schemas.js';

export const BATCH_CAP = 20;

/**
 * The most items one batch of a key can hold: BATCH_CAP, or its write burst
 * when that is lower (a custom tier). A batch takes one token per item at
 * once, so a bigger one could never be admitted: it is refused 400, not 429.
 */
export function batchCap(write: BucketSpec): number {
  return Math.min(BATCH_CAP, write.burst);
}

/** An answer: its status and the body to serialize (typed per operation in the table, see `route`). */
export interface Reply<B = unknown> {
  status: number;
  body: B;
}

export interface RequestCtx {
  keyId: number;
  /** The key's row: its index in the per-key tables (token buckets, rate tier). */
  keyRow: number;
  account: number;
  scopes: number;
  params: string[];
  query: QueryValues;
  body: unknown;
  /** What the route's `prepare` made of the body (undefined without one). */
  prepared: unknown;
}

export interface GatewayLimits {
  response_budget_ms: number;
}

export interface Route {
  /** Operation name (MCP tool name). */
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  /** Path with `{param}` segments. */
  path: string;
  segments: string[];
  scope: number;
  /** 'none': no body allowed; 'empty': must be empty (checked before the query); else a closed schema. */
  body: 'none' | 'empty' | Checker<TSchema>;
  query: readonly QueryParam[];
  /** Write-bucket cost of an admitted request (batches: N). 0 = read bucket, cost 1. */
  writeCost: (body: unknown) => number;
  /**
   * The checks a schema cannot express (each batch item's cross-field
   * rules), run after the body's schema and before a batch's other N - 1
   * tokens are charged: a batch they refuse costs one token, as a batch
   * its schema refuses does. The handler finds the result in ctx.prepared.
   */
  prepare?: (body: unknown) => unknown;
  description: string;
  handler: (ctx: RequestCtx, g: GatewayCore, limits: GatewayLimits) => Reply | Promise<Reply>;
}

const ORDER_STATUSES = ['resting', 'partially_filled', 'filled', 'canceled', 'rejected'] as const;
const MARKET_STATUSES = ['closed', 'trading', 'frozen', 'proposed'] as const;
const PAGE: QueryParam[] = [{ name: 'cursor', kind: 'cursor' }, { name: 'limit', kind: 'limit' }];

const checkers = {
  place: compile(PlaceOrderBody),
  batchPlace: compile(BatchPlaceBody),
  batchCancel: compile(BatchCancelBody),
  decrease: compile(DecreaseBody),
  deadman: compile(DeadmanBody),
  withdrawal: compile(WithdrawalBody),
};

function ok<B>(body: B, status = 200): Reply<B> {
  return { status, body };
}

/** The path's market id, 0..2^32-1: an id no market has (0 among them) is 404 unknown_market from the lookup, as the contract says. */
function marketParam(ctx: RequestCtx): number {
  return pathId('market_id', ctx.params[0]!, 0);
}

/** An order id path segment: any u64; ids above 2^53 cannot exist (they are seqs). */
function orderParam(raw: string): number {
  const [hi, lo] = u64Halves('order_id', raw);
  if (hi >= 0x200000) throw new ApiError('unknown_order', 'no such order', { order_id: raw });
  return hi * 4294967296 + lo;
}

// ---- placement encoding ----------------------------------------------------

/** One validated order, ready to be written into the command ring (GatewayCore.hold's CommandWriter). */
class EncodedOrder implements CommandWriter {
  constructor(
    readonly client_order_id: string,
    private readonly market: number,
    private readonly qty: number,
    private readonly group: number,
    private readonly tick: number,
    private readonly side: number,
    private readonly outcome: number,
    private readonly tif: number,
    private readonly stp: number,
    private readonly postOnly: number,
    private readonly hasCoid: number,
    private readonly hasMax: number,
    private readonly coidHi: number,
    private readonly coidLo: number,
    private readonly expHi: number,
    private readonly expLo: number,
    private readonly maxCost: number,
  ) {}

  write(m: Mem, o: number): void {
    PlaceOrder.set_market_id(m, o, this.market);
    PlaceOrder.set_qty(m, o, this.qty);
    PlaceOrder.set_group_id(m, o, this.group);
    PlaceOrder.set_tick(m, o, this.tick);
    PlaceOrder.set_side(m, o, this.side);
    PlaceOrder.set_outcome(m, o, this.outcome);
    PlaceOrder.set_tif(m, o, this.tif);
    PlaceOrder.set_stp(m, o, this.stp);
    PlaceOrder.set_post_only(m, o, this.postOnly);
    PlaceOrder.set_has_client_order_id(m, o, this.hasCoid);
    PlaceOrder.set_has_max_cost(m, o, this.hasMax);
    PlaceOrder.set_client_order_id(m, o, this.coidHi, this.coidLo);
    PlaceOrder.set_expiry_ts(m, o, this.expHi, this.expLo);
    PlaceOrder.set_max_cost(m, o, this.maxCost);
  }
}

function badOrderField(prefix: string, f: string, reason: string): never {
  throw new ApiError('invalid_field', `invalid ${prefix}${f}: ${reason}`, { field: `${prefix}${f}`, reason });
}

/** Cross-field rules of a placement (src/engine/README.md, "PlaceOrder", step 3) and the encoder of one order. */
function encodeOrder(req: PlaceOrderRequest, field: string): EncodedOrder {
  const tif = req.tif ?? 'gtc';
  const postOnly = req.post_only === true;
  if (postOnly && (tif === 'ioc' || tif === 'fok')) badOrderField(field, 'post_only', 'post_only cannot be combined with ioc or fok');
  if (tif === 'gtd' && req.expiry_ts === undefined) badOrderField(field, 'expiry_ts', 'gtd needs expiry_ts');
  if (tif !== 'gtd' && req.expiry_ts !== undefined) badOrderField(field, 'expiry_ts', 'expiry_ts needs tif gtd');
  if (req.max_cost !== undefined) {
    if (req.side === 'sell') badOrderField(field, 'max_cost', 'max_cost applies to buys only');
    if (postOnly) badOrderField(field, 'max_cost', 'a max_cost order never rests, so it cannot be post_only');
    if (tif === 'gtd') badOrderField(field, 'max_cost', 'a max_cost order never rests, so it cannot be gtd');
  }
  let coidHi = 0;
  let coidLo = 0;
  if (req.client_order_id !== undefined) {
    const v = u64FieldHalves(req.client_order_id, `${field}client_order_id`);
    coidHi = v[0]!;
    coidLo = v[1]!;
    if (coidHi === 0 && coidLo === 0) badOrderField(field, 'client_order_id', 'must be at least 1 (0 means none)');
  }
  let expHi = 0;
  let expLo = 0;
  if (req.expiry_ts !== undefined) {
    const v = u64FieldHalves(req.expiry_ts, `${field}expiry_ts`);
    expHi = v[0]!;
    expLo = v[1]!;
    if (expHi === 0 && expLo === 0) badOrderField(field, 'expiry_ts', 'must be at least 1');
  }
  // A budget above 2^53-1 cents cannot bind: clamp it.
  let maxCost = 0;
  if (req.max_cost !== undefined) {
    const v = u64Field(req.max_cost, `${field}max_cost`);
    maxCost = v > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(v);
  }
  return new EncodedOrder(
    req.client_order_id !== undefined ? hiLoToString(coidHi, coidLo) : '0',
    req.market_id,
    req.qty,
    req.group_id ?? 0,
    req.tick,
    req.side === 'buy' ? Side.buy : Side.sell,
    req.outcome === 'yes' ? Outcome.yes : Outcome.no,
    Tif[tif],
    Stp[req.stp ?? 'cancel_taker'],
    postOnly ? 1 : 0,
    req.client_order_id !== undefined ? 1 : 0,
    req.max_cost !== undefined ? 1 : 0,
    coidHi,
    coidLo,
    expHi,
    expLo,
    maxCost,
  );
}

/** A rejected completion as an ApiError (core codes with their num and details). */
function rejection(c: Completion, g: GatewayCore, account: number): ApiError {
  const info = codeByNum(c.code_num);
  if (info.code === 'duplicate_client_order_id') {
    return new ApiError(info.code, 'client_order_id is already used by a retained order', {
      order_id: String(c.order_id), status: ORDER_STATUS_NAMES[c.order_status] ?? '', order: g.views.order(account, c.order_id),
    });
  }
  if (info.code === 'duplicate_client_withdrawal_id') return new ApiError(info.code, undefined, { wid: String(c.result) });
  if (info.code === 'unknown_order')
    return new ApiError(info.code, 'order id unknown, foreign or already terminal', { order_id: String(c.order_id) });
  return new ApiError(info.code);
}

/**
 * A reply body that writes its own JSON, the same text JSON.stringify would:
 * the hottest replies (a placement, an order book), where building the text
 * by hand costs about half of JSON.stringify's walk (docs/latency.md).
 */
export abstract class JsonBody {
  abstract json(): string;
}

/**
 * A placement's answer, as the REST body and the WebSocket order_result's
 * msg. Its JSON is written by hand (json()): every field is a number, a
 * decimal string or a fixed name, so nothing needs escaping, and
 * JSON.stringify of the object was most of a reply's serialization (about
 * 400 ns against 50-100). Anything else that serializes it (a batch's
 * results, MCP) sees the same fields in the same order.
 */
export class PlacementBody extends JsonBody implements R.Placement {
  declare reason?: R.Placement['reason'];

  constructor(
    readonly order_id: string,
    readonly client_order_id: string,
    readonly status: R.Placement['status'],
    readonly seq: string,
    readonly filled_qty: number,
    readonly resting_qty: number,
    readonly fills: R.PlacementFill[],
  ) {
    super();
  }

  json(): string {
    let s = `{"order_id":"${this.order_id}","client_order_id":"${this.client_order_id}","status":"${this.status}","seq":"${this.seq}",` +
      `"filled_qty":${this.filled_qty},"resting_qty":${this.resting_qty},"fills":[`;
    const fills = this.fills;
    for (let i = 0; i < fills.length; i++) {
      const f = fills[i]!;
      s += `${i === 0 ? '' : ','}{"tick_yes":${f.tick_yes},"qty":${f.qty},"path":"${f.path}"}`;
    }
    return this.reason === undefined ? `${s}]}` : `${s}],"reason":"${this.reason}"}`;
  }
}

/** An order book's reply (get_orderbook): its JSON is written once, on first use (it may answer many reads: bookAsOf). */
export class OrderbookBody extends JsonBody implements R.Orderbook {
  readonly market_id: number;
  readonly yes: [number, number][];
  readonly no: [number, number][];
  readonly as_of_seq: string;
  // Private fields: not part of the body's shape (JSON.stringify and MCP's structured content see the four above only).
  #json: string | null = null;
  readonly #seq: number;

  constructor(b: R.Orderbook, seq: number) {
    super();
    this.market_id = b.market_id;
    this.yes = b.yes;
    this.no = b.no;
    this.as_of_seq = b.as_of_seq;
    this.#seq = seq;
  }

  /** True when this is the book as of the read model's seq `seq` (nothing applied since). */
  isAsOf(seq: number): boolean {
    return this.#seq === seq;
  }

  json(): string {
    this.#json ??=
      `{"market_id":${this.market_id},"yes":${levelsJson(this.yes)},"no":${levelsJson(this.no)},"as_of_seq":"${this.as_of_seq}"}`;
    return this.#json;
  }
}

/**
 * The last order book answered per market and depth on each read model (a
 * gateway thread's), kept while the model applies nothing: the answer is then
 * the same to the byte (as_of_seq included), so a crowd of clients polling a
 * book pays for its walk and its JSON once per change of the model, not once
 * per read. At most BOOK_CACHE_ENTRIES per model (then it starts over).
 */
const bookCache = new WeakMap<Views, Map<number, OrderbookBody>>();
const BOOK_CACHE_ENTRIES = 4096;

/** The order book of market `id` to `depth` levels as of the model's seq, null for an unknown market. */
function bookAsOf(views: Views, id: number, depth: number): OrderbookBody | null {
  let cache = bookCache.get(views);
  if (cache === undefined) bookCache.set(views, (cache = new Map()));
  const key = id * 128 + depth;
  const seq = views.asOfSeq;
  const hit = cache.get(key);
  if (hit !== undefined && hit.isAsOf(seq)) return hit;
  const b = views.orderbook(id, depth);
  if (b === null) return null;
  if (cache.size >= BOOK_CACHE_ENTRIES) cache.clear();
  const body = new OrderbookBody(b, seq);
  cache.set(key, body);
  return body;
}

function levelsJson(levels: readonly (readonly [number, number])[]): string {
  let s = '[';
  for (let i = 0; i < levels.length; i++) s += `${i === 0 ? '' : ','}[${levels[i]![0]},${levels[i]![1]}]`;
  return `${s}]`;
}

/** A reply body as JSON: a JsonBody by hand, anything else by JSON.stringify. */
export function bodyJson(body: unknown): string {
  return body instanceof JsonBody ? body.json() : JSON.stringify(body);
}

function placementBody(c: Completion, clientOrderId: string): PlacementBody {
  // A placement's completion is never 'rejected' (that is a reject code, answered as an error).
  const status = ORDER_STATUS_NAMES[c.order_status] as R.Placement['status'];
  const body = new PlacementBody(String(c.order_id), clientOrderId, status, String(c.seq), c.filled_qty, c.resting_qty, c.fills);
  if (c.reason !== 0) body.reason = CANCEL_REASON_NAMES[c.reason]!;
  return body;
}

/**
 * Holds one placement and settles its promise with the placement's answer
 * (or the ApiError it is answered with): one object and one promise per
 * order, whatever the lane.
 */
class PlacementWaiter implements CompletionWaiter {
  constructor(
    private readonly g: GatewayCore,
    private readonly account: number,
    private readonly clientOrderId: string,
    private readonly settle: (r: R.Placement | ApiError) => void,
  ) {}

  complete(c: Completion | null): void {
    if (c === null) {
      this.settle(new ApiError(
        'sequencing_timeout',
        'no sequenced outcome within the response budget; check GET /v1/portfolio/orders?client_order_id=',
      ));
    } else if (c.status === CompletionStatus.rejected) {
      this.settle(rejection(c, this.g, this.account));
    } else {
      this.settle(placementBody(c, this.clientOrderId));
    }
  }
}

/** Places one order; resolves with its answer or the ApiError it gets (a refusal to hold it, 503 shed, rejects the promise). */
function placeOne(g: GatewayCore, account: number, enc: EncodedOrder): Promise<R.Placement | ApiError> {
  return new Promise((resolve) => {
    g.hold(T_PLACE_ORDER, PlaceOrder.SIZE, account, true, enc, new PlacementWaiter(g, account, enc.client_order_id, resolve));
  });
}

function itemError(e: unknown): R.ItemError {
  if (e instanceof ApiError) return { error: errorObject(e.code, e.message, e.details) };
  throw e;
}

// ---- the table ---------------------------------------------------------------

/**
 * A route as the table writes it: its name is an operation of
 * operation_schemas.ts, and its handler answers that operation's response
 * schema (`ResponseOf`), so a handler that returns another shape, or a route
 * without an operation, does not compile.
 */
interface RouteSpec<N extends OperationName> extends Omit<Route, 'segments' | 'name' | 'handler'> {
  name: N;
  handler: (ctx: RequestCtx, g: GatewayCore, limits: GatewayLimits) => Reply<ResponseOf<N>> | Promise<Reply<ResponseOf<N>>>;
}

function route<N extends OperationName>(r: RouteSpec<N>): Route {
  return { ...r, segments: r.path.split('/').filter((s) => s.length > 0) };
}

const none = (): number => 0;
const one = (): number => 1;

export const ROUTES: Route[] = [
  route({
    name: 'get_exchange_status', method: 'GET', path: '/v1/exchange/status', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'Exchange status: exchange_active (always true in v1) and as_of_seq.',
    handler: (_c, g) => ok(g.views.exchangeStatus()),
  }),
  route({
    name: 'get_exchange_schedule',
    method: 'GET',
    path: '/v1/exchange/schedule',
    scope: Scope.read,
    body: 'none',
    query: [],
    writeCost: none,
    description: 'Static list of maintenance windows (none are scheduled).',
    handler: (_c, g) => ok({ maintenance_windows: [], as_of_seq: String(g.views.asOfSeq) } satisfies R.ExchangeSchedule),
  }),
  route({
    name: 'get_retention', method: 'GET', path: '/v1/exchange/retention', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'Retention caps of the live listings (tape_cap, terminal_cap, reject_cap, fill_cap).',
    handler: (_c, g) => ok(g.views.retention()),
  }),
  route({
    name: 'get_account_limits', method: 'GET', path: '/v1/account/limits', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'The calling key\'s scopes, rate tier, effective read and write token buckets, batch cap and response budget.',
    handler: (c, g, l) => {
      const t = keyLimits(g.views, c.keyRow);
      return ok({
        scopes: scopeNames(c.scopes),
        tier: t.tier,
        read: t.read,
        write: t.write,
        batch_cap: batchCap(t.write),
        response_budget_ms: l.response_budget_ms,
      } satisfies R.AccountLimits);
    },
  }),
  route({
    name: 'list_markets', method: 'GET', path: '/v1/markets', scope: Scope.read, body: 'none', writeCost: none,
    query: [{ name: 'status', kind: 'statuses', values: MARKET_STATUSES }, ...PAGE],
    description: 'Markets with best bid/ask, last trade, volume and open interest; filter by comma-separated status.',
    handler: (c, g) =>
      ok(
        g.views.markets({
          status: c.query.status as string[] | undefined,
          cursor: c.query.cursor as string | undefined,
          limit: c.query.limit as number,
        }),
      ),
  }),
  route({
    name: 'get_market', method: 'GET', path: '/v1/markets/{market_id}', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'One market.',
    handler: (c, g) => {
      const m = g.views.market(marketParam(c));
      if (!m) throw new ApiError('unknown_market', 'no such market');
      return ok(m);
    },
  }),
  route({
    name: 'get_orderbook', method: 'GET', path: '/v1/markets/{market_id}/orderbook', scope: Scope.read, body: 'none', writeCost: none,
    query: [{ name: 'depth', kind: 'depth' }],
    description: 'L2 book: YES bids and NO bids as [tick, qty], best first. A NO bid at t is a YES ask at 100 - t.',
    handler: (c, g) => {
      const b = bookAsOf(g.views, marketParam(c), c.query.depth as number);
      if (!b) throw new ApiError('unknown_market', 'no such market');
      return ok(b);
    },
  }),
  route({
    name: 'list_trades',
    method: 'GET',
    path: '/v1/markets/{market_id}/trades',
    scope: Scope.read,
    body: 'none',
    writeCost: none,
    query: PAGE,
    description: 'Public trade tape of a market, newest first.',
    handler: (c, g) => {
      const t = g.views.trades(marketParam(c), { cursor: c.query.cursor as string | undefined, limit: c.query.limit as number });
      if (!t) throw new ApiError('unknown_market', 'no such market');
      return ok(t);
    },
  }),
  route({
    name: 'get_candlesticks', method: 'GET', path: '/v1/markets/{market_id}/candlesticks', scope: Scope.read, body: 'none', writeCost: none,
    query: [
      { name: 'period', kind: 'choice', values: CANDLE_PERIODS, default: '1m' },
      { name: 'start_ts', kind: 'u64' },
      { name: 'end_ts', kind: 'u64' },
    ],
    description: `OHLC candles of tick_yes with volume and trade count per period (1m, 5m, 1h, 1d; UTC-aligned), oldest first, from the `
      + 'retained trade tape (the newest tape_cap trades of the market); periods without trades are omitted; '
      + `at most ${MAX_CANDLE_PERIODS} periods per request.`,
    handler: (c, g) => {
      const r = g.views.candles(marketParam(c), {
        period: c.query.period as R.Candlesticks['period'],
        start_ts: c.query.start_ts as [number, number] | undefined,
        end_ts: c.query.end_ts as [number, number] | undefined,
      });
      if (!r) throw new ApiError('unknown_market', 'no such market');
      return ok(r);
    },
  }),
  route({
    name: 'get_oracle_price', method: 'GET', path: '/v1/oracle/price', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'Oracle reference price (x 1e8), fresh source count and seq; zeros before any tick.',
    handler: (_c, g) => ok(g.views.oraclePrice()),
  }),
  route({
    name: 'list_rounds', method: 'GET', path: '/v1/rounds', scope: Scope.read, body: 'none', writeCost: none,
    query: [{ name: 'category', kind: 'category' }, ...PAGE],
    description: 'Rounds by round_number, descending; optional category (series) filter.',
    handler: (c, g) =>
      ok(
        g.views.rounds({
          category: c.query.category as number | undefined,
          cursor: c.query.cursor as string | undefined,
          limit: c.query.limit as number,
        }),
      ),
  }),
  route({
    name: 'get_round', method: 'GET', path: '/v1/rounds/{market_id}', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'A market\'s current round in any status.',
    handler: (c, g) => {
      const r = g.views.round(marketParam(c));
      if (!r) throw new ApiError('round_not_found', 'the market never opened a round, the round was evicted, or the market is unknown');
      return ok(r);
    },
  }),
  route({
    name: 'get_balance', method: 'GET', path: '/v1/portfolio/balance', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'Available and reserved cash, in cents.',
    handler: (c, g) => ok(g.views.balance(c.account)),
  }),
  route({
    name: 'list_positions', method: 'GET', path: '/v1/portfolio/positions', scope: Scope.read, body: 'none', writeCost: none,
    query: [{ name: 'market_id', kind: 'market_id' }, ...PAGE],
    description: 'Positions per (market, outcome): free shares and shares reserved for sale.',
    handler: (c, g) =>
      ok(
        g.views.positions(c.account, {
          market_id: (c.query.market_id as number | undefined) || undefined,
          cursor: c.query.cursor as string | undefined,
          limit: c.query.limit as number,
        }),
      ),
  }),
  route({
    name: 'list_fills', method: 'GET', path: '/v1/portfolio/fills', scope: Scope.read, body: 'none', writeCost: none,
    query: [{ name: 'market_id', kind: 'market_id' }, { name: 'order_id', kind: 'u64' }, ...PAGE],
    description: 'The caller\'s fills in either role, newest first, with fees and match path.',
    handler: (c, g) => {
      const oid = c.query.order_id as [number, number] | undefined;
      return ok(g.views.fills(c.account, {
        market_id: (c.query.market_id as number | undefined) || undefined,
        order_id: oid ? oid[0] * 4294967296 + oid[1] : undefined,
        cursor: c.query.cursor as string | undefined, limit: c.query.limit as number,
      }));
    },
  }),
  route({
    name: 'list_orders', method: 'GET', path: '/v1/portfolio/orders', scope: Scope.read, body: 'none', writeCost: none,
    query: [
      { name: 'market_id', kind: 'market_id' },
      { name: 'status', kind: 'statuses', values: ORDER_STATUSES },
      { name: 'client_order_id', kind: 'u64' },
      ...PAGE,
    ],
    description: 'The caller\'s retained orders (live, terminal and rejected), newest first; filter by market, comma-separated status, ' +
      'client_order_id.',
    handler: (c, g) => ok(g.views.orders(c.account, {
      market_id: (c.query.market_id as number | undefined) || undefined,
      status: c.query.status as string[] | undefined,
      client_order_id: c.query.client_order_id as [number, number] | undefined,
      cursor: c.query.cursor as string | undefined, limit: c.query.limit as number,
    })),
  }),
  route({
    name: 'place_order', method: 'POST', path: '/v1/portfolio/orders', scope: Scope.trade, body: checkers.place, query: [], writeCost: one,
    description: 'Place an order. Execution outcomes (post_only_cross, fok_infeasible, ioc_remainder, self_trade_prevention, ' +
      'max_cost_infeasible) are 201 with status canceled and a reason.',
    handler: (c, g) =>
      new Promise((resolve, reject) => {
        const enc = encodeOrder(c.body as PlaceOrderRequest, '');
        const settle = (r: R.Placement | ApiError): void => (r instanceof ApiError ? reject(r) : resolve(ok(r, 201)));
        g.hold(T_PLACE_ORDER, PlaceOrder.SIZE, c.account, true, enc, new PlacementWaiter(g, c.account, enc.client_order_id, settle));
      }),
  }),
  route({
    name: 'cancel_all_orders', method: 'DELETE', path: '/v1/portfolio/orders', scope: Scope.trade, body: 'empty', writeCost: one,
    query: [{ name: 'market_id', kind: 'market_id' }, { name: 'group_id', kind: 'group_id' }],
    description:
      "Cancel all of the caller's resting orders, optionally scoped by market_id and group_id (0 or absent = all). The body must be empty.",
    handler: async (c, g) => {
      const market = (c.query.market_id as number | undefined) ?? 0;
      const group = (c.query.group_id as number | undefined) ?? 0;
      const r = await g.submit(T_CANCEL_ALL, CancelAll.SIZE, c.account, true, (m, o) => {
        CancelAll.set_market_id(m, o, market);
        CancelAll.set_group_id(m, o, group);
      });
      if (r === null) throw new ApiError('sequencing_timeout');
      if (r.status === CompletionStatus.rejected) throw rejection(r, g, c.account);
      return ok({ seq: String(r.seq) } satisfies R.SequencedAck, 202);
    },
  }),
  route({
    name: 'place_batch', method: 'POST', path: '/v1/portfolio/orders/batch', scope: Scope.trade, body: checkers.batchPlace, query: [],
    writeCost: (b) => (b as { orders: unknown[] }).orders.length,
    prepare: (b) => (b as BatchPlaceRequest).orders.map((o, i) => encodeOrder(o, `orders.${i}.`)),
    description: 'Place up to 20 orders as independent commands; results are index-aligned placement responses or {error}.',
    handler: async (c, g) => {
      const encoded = c.prepared as EncodedOrder[];
      if (g.wouldShed(encoded.length)) throw new ApiError('shed', 'the exchange is shedding load; retry the batch with backoff');
      const results = await Promise.all(encoded.map(async (enc) => {
        try {
          const r = await placeOne(g, c.account, enc);
          return r instanceof ApiError ? itemError(r) : r;
        } catch (e) {
          return itemError(e);
        }
      }));
      return ok({ results } satisfies R.BatchPlaceResult, 201);
    },
  }),
  route({
    name: 'cancel_batch', method: 'DELETE', path: '/v1/portfolio/orders/batch', scope: Scope.trade, body: checkers.batchCancel, query: [],
    writeCost: (b) => (b as { order_ids: unknown[] }).order_ids.length,
    description: 'Cancel up to 20 orders by id as independent commands; results are index-aligned {status, canceled_qty, seq} or {error} ' +
      '(unknown_order).',
    handler: async (c, g) => {
      const ids = (c.body as BatchCancelRequest).order_ids;
      const results = await Promise.all(ids.map(async (raw) => {
        try {
          const id = orderParam(raw);
          const r = await g.submit(T_CANCEL_ORDER, CancelOrder.SIZE, c.account, false, (m, o) => CancelOrder.set_order_id(m, o, id));
          if (r === null) return itemError(new ApiError('sequencing_timeout'));
          if (r.status === CompletionStatus.rejected) return itemError(rejection(r, g, c.account));
          return { status: 'canceled', canceled_qty: r.result, seq: String(r.seq) } satisfies R.CancelResult;
        } catch (e) {
          return itemError(e);
        }
      }));
      return ok({ results } satisfies R.BatchCancelResult);
    },
  }),
  route({
    name: 'decrease_order',
    method: 'POST',
    path: '/v1/portfolio/orders/{order_id}/decrease',
    scope: Scope.trade,
    body: checkers.decrease,
    query: [],
    writeCost: one,
    description: 'Reduce a resting order to new_qty (an absolute target, so resends are idempotent); time priority is kept; 0 cancels.',
    handler: async (c, g) => {
      const id = orderParam(c.params[0]!);
      const newQty = (c.body as DecreaseRequest).new_qty;
      const r = await g.submit(T_DECREASE_ORDER, DecreaseOrder.SIZE, c.account, false, (m, o) => {
        DecreaseOrder.set_order_id(m, o, id);
        DecreaseOrder.set_new_qty(m, o, newQty);
      });
      if (r === null) throw new ApiError('sequencing_timeout');
      if (r.status === CompletionStatus.rejected) throw rejection(r, g, c.account);
      return ok({ status: 'decreased', new_qty: r.result, seq: String(r.seq) } satisfies R.DecreaseResult);
    },
  }),
  route({
    name: 'get_queue_position',
    method: 'GET',
    path: '/v1/portfolio/orders/{order_id}/queue_position',
    scope: Scope.read,
    body: 'none',
    query: [],
    writeCost: none,
    description: 'Shares ahead of a resting order at its price level.',
    handler: (c, g) => {
      const q = g.views.queuePosition(c.account, orderParam(c.params[0]!));
      if (!q) throw new ApiError('unknown_order', 'order id unknown, foreign or not resting', { order_id: c.params[0] });
      return ok(q);
    },
  }),
  route({
    name: 'arm_deadman',
    method: 'POST',
    path: '/v1/portfolio/deadman',
    scope: Scope.trade,
    body: checkers.deadman,
    query: [],
    writeCost: one,
    description: 'Arm or refresh the dead-man timer; if not refreshed within timeout_ms every order of the account is canceled once. ' +
      'Refresh at a third of the timeout.',
    handler: async (c, g) => {
      const t = (c.body as DeadmanRequest).timeout_ms;
      const r = await g.submit(T_ARM_DEADMAN, ArmDeadman.SIZE, c.account, false, (m, o) => ArmDeadman.set_timeout_ms(m, o, t));
      if (r === null) throw new ApiError('sequencing_timeout');
      if (r.status === CompletionStatus.rejected) throw rejection(r, g, c.account);
      const firesAt = hiLoToString(r.result_ts_hi, r.result_ts_lo);
      return ok({ armed: true, timeout_ms: t, fires_at_ts: firesAt, seq: String(r.seq) } satisfies R.DeadmanArmed);
    },
  }),
  route({
    name: 'disarm_deadman', method: 'DELETE', path: '/v1/portfolio/deadman', scope: Scope.trade, body: 'none', query: [], writeCost: one,
    description: 'Disarm the dead-man timer without cancelling (idempotent).',
    handler: async (c, g) => {
      const r = await g.submit(T_DISARM_DEADMAN, DisarmDeadman.SIZE, c.account, false, () => {});
      if (r === null) throw new ApiError('sequencing_timeout');
      if (r.status === CompletionStatus.rejected) throw rejection(r, g, c.account);
      return ok({ armed: false, seq: String(r.seq) } satisfies R.DeadmanDisarmed);
    },
  }),
  route({
    name: 'get_deadman', method: 'GET', path: '/v1/portfolio/deadman', scope: Scope.read, body: 'none', query: [], writeCost: none,
    description: 'Dead-man timer status.',
    handler: (c, g) => ok(g.views.deadman(c.account)),
  }),
  route({
    name: 'get_deposit_address',
    method: 'GET',
    path: '/v1/funding/deposit_address',
    scope: Scope.read,
    body: 'none',
    query: [],
    writeCost: none,
    description: 'The account\'s deposit address; deposits are credited by the operator.',
    handler: (c, g) => ok(g.views.depositAddress(c.account)),
  }),
  route({
    name: 'request_withdrawal',
    method: 'POST',
    path: '/v1/withdrawals',
    scope: Scope.withdraw,
    body: checkers.withdrawal,
    query: [],
    writeCost: one,
    description:
      'Request a withdrawal; the amount moves to reserved until the operator confirms or fails it. Idempotent by client_withdrawal_id.',
    handler: async (c, g) => {
      const b = c.body as WithdrawalRequest;
      const [hi, lo] = u64Halves('client_withdrawal_id', b.client_withdrawal_id);
      const amount = safeField(b.amount, 'amount', 1);
      const destination = storedText(b.destination, 'destination', 128);
      const r = await g.submit(T_REQUEST_WITHDRAWAL, RequestWithdrawal.SIZE, c.account, false, (m, o) => {
        RequestWithdrawal.set_client_withdrawal_id(m, o, hi, lo);
        RequestWithdrawal.set_amount(m, o, amount);
        RequestWithdrawal.set_destination(m, o, destination);
      });
      if (r === null) throw new ApiError('sequencing_timeout');
      if (r.status === CompletionStatus.rejected) throw rejection(r, g, c.account);
      const w = g.views.withdrawal(c.account, hi, lo);
      const created = {
        wid: String(r.result), client_withdrawal_id: b.client_withdrawal_id, status: 'pending', seq: String(r.seq),
      } satisfies R.WithdrawalCreated;
      return ok(w ?? created, 201);
    },
  }),
  route({
    name: 'get_withdrawal',
    method: 'GET',
    path: '/v1/withdrawals/{client_withdrawal_id}',
    scope: Scope.read,
    body: 'none',
    query: [],
    writeCost: none,
    description: 'A withdrawal by its client_withdrawal_id.',
    handler: (c, g) => {
      const [hi, lo] = u64Halves('client_withdrawal_id', c.params[0]!);
      const w = g.views.withdrawal(c.account, hi, lo);
      if (!w) throw new ApiError('not_found', 'no withdrawal with that client_withdrawal_id');
      return ok(w);
    },
  }),
];

export interface RouteMatch {
  route: Route;
  params: string[];
}

/**
 * Matches of paths without parameters (placements, balance, order lists),
 * per route table, path and method: the scan below splits the path and tries
 * every route of its length on each request; a path that matched a route
 * with no `{param}` gives the same match every time. Only matches of a
 * route's own path string are kept (not `//v1/...` variants), so the memo
 * holds at most one entry per route whatever paths clients send.
 */
const staticMatches = new WeakMap<readonly Route[], Map<string, Map<string, RouteMatch>>>();
const NO_PARAMS: string[] = Object.freeze([]) as unknown as string[];

/** Finds the route for (method, path); allowed methods when only the path matches. */
export function matchRoute(routes: readonly Route[], method: string, path: string): RouteMatch | { allowed: string[] } | null {
  let memo = staticMatches.get(routes);
  const hit = memo?.get(path)?.get(method);
  if (hit !== undefined) return hit;
  const m = scanRoutes(routes, method, path);
  if (m !== null && 'route' in m && m.params.length === 0 && path === m.route.path) {
    if (memo === undefined) staticMatches.set(routes, (memo = new Map()));
    let byMethod = memo.get(path);
    if (byMethod === undefined) memo.set(path, (byMethod = new Map()));
    const shared = { route: m.route, params: NO_PARAMS };
    byMethod.set(method, shared);
    return shared;
  }
  return m;
}

function scanRoutes(routes: readonly Route[], method: string, path: string): RouteMatch | { allowed: string[] } | null {
  const segs = path.split('/').filter((s) => s.length > 0);
  let allowed: string[] | null = null;
  for (const r of routes) {
    if (!literalsMatch(r.segments, segs)) continue;
    if (r.method === method) return { route: r, params: paramsOf(r.segments, segs) };
    (allowed ??= []).push(r.method);
  }
  return allowed ? { allowed } : null;
}

const BRACE = 0x7b;

/** Same segment count, and every literal segment of the route equal to the path's. */
function literalsMatch(want: readonly string[], segs: readonly string[]): boolean {
  if (want.length !== segs.length) return false;
  for (let i = 0; i < want.length; i++) if (want[i]!.charCodeAt(0) !== BRACE && want[i] !== segs[i]) return false;
  return true;
}

/** The path's segments at the route's `{param}` places, in order. */
function paramsOf(want: readonly string[], segs: readonly string[]): string[] {
  const params: string[] = [];
  for (let i = 0; i < want.length; i++) if (want[i]!.charCodeAt(0) === BRACE) params.push(segs[i]!);
  return params;
}

export function parseRouteQuery(r: Route, raw: string): QueryValues {
  return parseQuery(raw, r.query);
}

export function validateBody(r: Route, body: unknown): unknown {
  if (r.body === 'none' || r.body === 'empty') return undefined;
  return validate(r.body, body);
}

export { ApiError };
