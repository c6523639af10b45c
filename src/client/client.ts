// DxClient: the typed REST client of the exchange (`{base_url}/v1/...`), one
// method per REST operation (docs/rest.md, openapi.json). Runs in the
// caller's thread.
//
// - Every request is signed (sign.ts) over the exact target and body sent.
// - Non-2xx answers throw DxApiError; execution outcomes (post-only cross,
//   FOK, IOC remainder, STP, max cost) are 201 placements with status
//   `canceled` and a `reason`, never exceptions.
// - One request at a time per connection, never pipelined (see transport.ts):
//   the server closes a connection that pipelines behind a held request.
// - Timeouts: a placement that times out on the client may still have been
//   sequenced. Send a `client_order_id` and, after a timeout, either retry
//   (a used id answers 409 `duplicate_client_order_id` with the order) or ask
//   `orders({client_order_id})`.

import type { KeyObject } from 'node:crypto';
import { createSecretKey } from 'node:crypto';
import { authHeaders, decodeSecret, nextMutationTs } from './sign.js';
import { buildQuery, HttpTransport, type Query } from './transport.js';
import type {
  AccountLimits,
  Balance,
  BatchCancelResult,
  BatchPlaceResult,
  Candlesticks,
  CandlesQuery,
  CancelAllQuery,
  DeadmanArmed,
  DeadmanDisarmed,
  DeadmanState,
  DecreaseResult,
  DepositAddress,
  ExchangeSchedule,
  ExchangeStatus,
  Fill,
  FillsPage,
  FillsQuery,
  Market,
  MarketsPage,
  MarketsQuery,
  MarketWithSeq,
  OraclePrice,
  Order,
  Orderbook,
  OrderRequest,
  OrdersPage,
  OrdersQuery,
  PageQuery,
  Placement,
  Position,
  PositionsPage,
  PositionsQuery,
  QueuePosition,
  RetentionLimits,
  Round,
  RoundsPage,
  RoundsQuery,
  RoundWithSeq,
  SequencedAck,
  Trade,
  TradesPage,
  U64,
  WithdrawalCreated,
  WithdrawalRequest,
  Withdrawal,
} from './types.js';

export interface DxClientOptions {
  /** e.g. `http://127.0.0.1:8080`; a path part is kept as a prefix of every target (and signed). */
  baseUrl: string;
  keyId: number;
  /** The 32 secret bytes, or their base64 text as handed out by the keys service. */
  secret: Uint8Array | string;
  /** Per-request deadline, default 10,000 ms. */
  timeoutMs?: number;
  /** Defaults to global fetch (undici: keep-alive, no pipelining). */
  fetch?: typeof fetch;
  /**
   * Clock for the DX-ACCESS-TIMESTAMP header, Unix ms. Override to correct a
   * skewed local clock (the replay window is +-5000 ms).
   */
  now?: () => number;
}

/** What `paginate(kind, query)` takes and yields for each list endpoint. */
export interface PageKinds {
  markets: { query: MarketsQuery; item: Market };
  trades: { query: PageQuery & { market_id: number }; item: Trade };
  rounds: { query: RoundsQuery; item: Round };
  positions: { query: PositionsQuery; item: Position };
  fills: { query: FillsQuery; item: Fill };
  orders: { query: OrdersQuery; item: Order };
}

/** Runs `fetchPage` with each returned cursor until the server answers "" and yields every item. */
export async function* paginatePages<P extends { cursor: string }, I>(
  fetchPage: (cursor: string | undefined) => Promise<P>,
  items: (page: P) => readonly I[],
  start?: string,
): AsyncGenerator<I, void, undefined> {
  let cursor: string | undefined = start === '' ? undefined : start;
  for (;;) {
    const page: P = await fetchPage(cursor);
    for (const item of items(page)) yield item;
    if (page.cursor === '' || page.cursor === undefined) return;
    if (page.cursor === cursor) throw new Error(`pagination did not advance (cursor ${page.cursor})`);
    cursor = page.cursor;
  }
}

export class DxClient {
  readonly keyId: number;
  private readonly key: KeyObject;
  private readonly http: HttpTransport;
  private readonly now: () => number;
  private lastMutationTs = 0;

  constructor(opts: DxClientOptions) {
    this.keyId = opts.keyId;
    this.key = createSecretKey(decodeSecret(opts.secret));
    this.now = opts.now ?? Date.now;
    this.http = new HttpTransport(opts, (method, target, body) => {
      let ts = Math.floor(this.now());
      // The server refuses a mutation whose exact signature it has already
      // seen inside the replay window (docs/ARCHITECTURE.md section 8). Two identical mutations in
      // the same millisecond (two cancel-alls, say) would sign identically,
      // so mutation timestamps are made strictly increasing per client. The
      // drift this can add is one ms per mutation above 1000/s, far beyond
      // the write rate limit.
      if (method !== 'GET') {
        ts = nextMutationTs(ts, this.lastMutationTs);
        this.lastMutationTs = ts;
      }
      return authHeaders(this.keyId, this.key, method, target, body, ts) as unknown as Record<string, string>;
    });
  }

  /**
   * Any call: `request('GET', '/v1/markets?limit=5')`. `body` is sent as is
   * when a string, JSON-encoded otherwise. Returns the parsed JSON body.
   */
  request<T = unknown>(method: string, pathWithQuery: string, body?: unknown): Promise<T> {
    return this.http.call<T>(method, pathWithQuery, body);
  }

  private get<T>(path: string, q?: Query): Promise<T> {
    return this.http.call<T>('GET', path + buildQuery(q));
  }

  // ------------------------------------------------------------ exchange

  exchangeStatus(): Promise<ExchangeStatus> {
    return this.get('/v1/exchange/status');
  }

  exchangeSchedule(): Promise<ExchangeSchedule> {
    return this.get('/v1/exchange/schedule');
  }

  retention(): Promise<RetentionLimits> {
    return this.get('/v1/exchange/retention');
  }

  limits(): Promise<AccountLimits> {
    return this.get('/v1/account/limits');
  }

  // ------------------------------------------------------------ markets

  markets(q: MarketsQuery = {}): Promise<MarketsPage> {
    return this.get('/v1/markets', { status: q.status, cursor: q.cursor, limit: q.limit });
  }

  market(marketId: number): Promise<MarketWithSeq> {
    return this.get(`/v1/markets/${u32(marketId)}`);
  }

  /** `depth` levels per side, 1..99, default 10 on the server. */
  orderbook(marketId: number, depth?: number): Promise<Orderbook> {
    return this.get(`/v1/markets/${u32(marketId)}/orderbook`, { depth });
  }

  trades(marketId: number, q: PageQuery = {}): Promise<TradesPage> {
    return this.get(`/v1/markets/${u32(marketId)}/trades`, { cursor: q.cursor, limit: q.limit });
  }

  /** OHLC candles of the YES price from the retained tape (see Candlesticks.truncated). */
  candles(marketId: number, q: CandlesQuery = {}): Promise<Candlesticks> {
    return this.get(`/v1/markets/${u32(marketId)}/candlesticks`, { period: q.period, start_ts: q.start_ts, end_ts: q.end_ts });
  }

  oraclePrice(): Promise<OraclePrice> {
    return this.get('/v1/oracle/price');
  }

  rounds(q: RoundsQuery = {}): Promise<RoundsPage> {
    return this.get('/v1/rounds', { category: q.category, cursor: q.cursor, limit: q.limit });
  }

  /** The market's current round in any status; 404 `round_not_found` when there is none. */
  round(marketId: number): Promise<RoundWithSeq> {
    return this.get(`/v1/rounds/${u32(marketId)}`);
  }

  // ------------------------------------------------------------ portfolio reads

  balance(): Promise<Balance> {
    return this.get('/v1/portfolio/balance');
  }

  positions(q: PositionsQuery = {}): Promise<PositionsPage> {
    return this.get('/v1/portfolio/positions', { market_id: q.market_id, cursor: q.cursor, limit: q.limit });
  }

  fills(q: FillsQuery = {}): Promise<FillsPage> {
    return this.get('/v1/portfolio/fills', {
      market_id: q.market_id,
      order_id: q.order_id,
      cursor: q.cursor,
      limit: q.limit,
    });
  }

  /** Without `status`, every retained order (live and terminal), newest first. */
  orders(q: OrdersQuery = {}): Promise<OrdersPage> {
    return this.get('/v1/portfolio/orders', {
      market_id: q.market_id,
      status: q.status,
      client_order_id: q.client_order_id,
      cursor: q.cursor,
      limit: q.limit,
    });
  }

  queuePosition(orderId: U64): Promise<QueuePosition> {
    return this.get(`/v1/portfolio/orders/${u64(orderId)}/queue_position`);
  }

  // ------------------------------------------------------------ orders

  /** 201 with the sequenced outcome; `status: 'canceled'` + `reason` for execution outcomes. */
  placeOrder(req: OrderRequest): Promise<Placement> {
    return this.http.call('POST', '/v1/portfolio/orders', req);
  }

  /** Up to 20 orders; the results are index-aligned, each a Placement or `{error}`. */
  placeBatch(orders: OrderRequest[]): Promise<BatchPlaceResult> {
    return this.http.call('POST', '/v1/portfolio/orders/batch', { orders });
  }

  /**
   * Mass cancel, optionally scoped (0 or absent = all). The body is empty:
   * the server refuses a body here with 400 `unexpected_body`.
   */
  cancelAll(q: CancelAllQuery = {}): Promise<SequencedAck> {
    return this.http.call('DELETE', '/v1/portfolio/orders' + buildQuery({ market_id: q.market_id, group_id: q.group_id }));
  }

  /** Up to 20 ids; index-aligned results, unknown/foreign/terminal ids as `{error: {code: 'unknown_order'}}`. */
  cancelBatch(orderIds: U64[]): Promise<BatchCancelResult> {
    return this.http.call('DELETE', '/v1/portfolio/orders/batch', { order_ids: orderIds });
  }

  /** `newQty` is the absolute target remaining quantity (idempotent); 0 cancels. */
  decrease(orderId: U64, newQty: number): Promise<DecreaseResult> {
    return this.http.call('POST', `/v1/portfolio/orders/${u64(orderId)}/decrease`, { new_qty: newQty });
  }

  // ------------------------------------------------------------ dead-man timer

  /** Arms or refreshes (1000..60000 ms). Refresh at about a third of the timeout. */
  armDeadman(timeoutMs: number): Promise<DeadmanArmed> {
    return this.http.call('POST', '/v1/portfolio/deadman', { timeout_ms: timeoutMs });
  }

  /** Disarms without cancelling (idempotent). */
  disarmDeadman(): Promise<DeadmanDisarmed> {
    return this.http.call('DELETE', '/v1/portfolio/deadman');
  }

  deadman(): Promise<DeadmanState> {
    return this.get('/v1/portfolio/deadman');
  }

  // ------------------------------------------------------------ funding

  depositAddress(): Promise<DepositAddress> {
    return this.get('/v1/funding/deposit_address');
  }

  /** Needs a key with the `withdraw` scope; idempotent by `client_withdrawal_id`. */
  withdraw(req: WithdrawalRequest): Promise<WithdrawalCreated> {
    return this.http.call('POST', '/v1/withdrawals', req);
  }

  withdrawal(clientWithdrawalId: U64): Promise<Withdrawal> {
    return this.get(`/v1/withdrawals/${u64(clientWithdrawalId)}`);
  }

  // ------------------------------------------------------------ pagination

  /**
   * Every item of a list endpoint, following `cursor` until "".
   * `for await (const o of client.paginate('orders', {status: ['resting']})) ...`
   */
  paginate<K extends keyof PageKinds>(kind: K, query: PageKinds[K]['query']): AsyncGenerator<PageKinds[K]['item'], void, undefined>;
  paginate(kind: keyof PageKinds, query: PageQuery & Record<string, unknown>): AsyncGenerator<unknown, void, undefined> {
    const q = query as never;
    const start = query.cursor; // a caller resuming a listing starts from its cursor
    switch (kind) {
      case 'markets':
        return paginatePages((cursor) => this.markets({ ...(q as MarketsQuery), cursor }), (p) => p.markets, start);
      case 'trades': {
        const t = q as PageKinds['trades']['query'];
        return paginatePages((cursor) => this.trades(t.market_id, { limit: t.limit, cursor }), (p) => p.trades, start);
      }
      case 'rounds':
        return paginatePages((cursor) => this.rounds({ ...(q as RoundsQuery), cursor }), (p) => p.rounds, start);
      case 'positions':
        return paginatePages((cursor) => this.positions({ ...(q as PositionsQuery), cursor }), (p) => p.positions, start);
      case 'fills':
        return paginatePages((cursor) => this.fills({ ...(q as FillsQuery), cursor }), (p) => p.fills, start);
      case 'orders':
        return paginatePages((cursor) => this.orders({ ...(q as OrdersQuery), cursor }), (p) => p.orders, start);
    }
  }
}

/** A path segment for a u32 id; a non-integer is a caller bug that would hit the wrong route. */
function u32(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`not a u32 id: ${n}`);
  return String(n);
}

/** A path segment for a u64 id (decimal string). */
function u64(s: U64): string {
  if (typeof s !== 'string' || !/^[0-9]{1,20}$/.test(s)) throw new RangeError(`not a u64 decimal string: ${String(s)}`);
  return s;
}
