// http: the request lifecycle of the signed REST lane on a uWebSockets.js
// App (gateway threads). uWS rules followed here: headers, URL and query are
// read synchronously in the handler; onAborted is attached before anything
// asynchronous; body chunks are copied (uWS neuters them after the callback);
// every write after an await happens inside res.cork; per-request state lives
// in a plain object, never on `res`.
//
// Order of checks (docs/ARCHITECTURE.md section 8): 401 credentials -> 429 bucket (charged only
// after the signature verifies) -> 403 scope -> 400/413 body and query.
//
// Clients must not pipeline: this uWS build closes a connection that sends a
// second request while the first is held (documented in docs/rest.md).

import { Scope } from '../layout/records.js';
import { checkMac, checkTimestamp, KeyMacs, type ReplayGuard } from './auth.js';
import type { HmacSha256 } from '../lib/hmac_sha256.js';
import { ViewError, type Views } from '../views/views.js';
import { BUCKET_READ, BUCKET_WRITE, keyLimits, type TokenBuckets } from './buckets.js';
import type { GatewayCore, StageTimes } from './core.js';
import { monoUs } from '../lib/mono_clock.js';
import { ApiError } from './envelope.js';
import { takeMinSeq, type QueryValues } from './query.js';
import {
  batchCap, bodyJson, matchRoute, parseRouteQuery, validateBody, type GatewayLimits, type Route, type RequestCtx, type Reply,
} from './routes.js';
import { parseJson } from './schemas.js';
import { scopeNames } from '../wire/keys.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

export const BODY_CAP_BYTES = 64 * 1024;
/** Longest a read with min_seq is held for this node to apply that seq (then 503 replica_lagging). */
export const MIN_SEQ_WAIT_MS = 200;

const STATUS_TEXT: Record<number, string> = {
  200: '200 OK', 201: '201 Created', 202: '202 Accepted', 204: '204 No Content', 304: '304 Not Modified', 400: '400 Bad Request',
  401: '401 Unauthorized', 403: '403 Forbidden', 404: '404 Not Found', 405: '405 Method Not Allowed', 409: '409 Conflict',
  413: '413 Payload Too Large', 422: '422 Unprocessable Entity', 429: '429 Too Many Requests', 500: '500 Internal Server Error',
  503: '503 Service Unavailable', 504: '504 Gateway Timeout',
};

export function statusLine(status: number): string {
  return STATUS_TEXT[status] ?? `${status} Status`;
}

export interface Observer {
  /** Called once per answered request (metrics), after its reply was written (`t.tReplied` set). */
  onResponse(route: string, status: number, code: string | null, t: StageTimes): void;
}

/**
 * What every lane of a gateway thread shares (REST, WebSocket, MCP) and the
 * keys service on the control plane: the core, the key's token buckets, the
 * replay guard, the limits and the routes it serves.
 */
export interface LaneOptions {
  core: GatewayCore;
  buckets: TokenBuckets;
  replay: ReplayGuard;
  limits: GatewayLimits;
  routes: readonly Route[];
  observer?: Observer;
  log?: (fields: Record<string, unknown>) => void;
  /** True once the thread is shutting down: new requests get 503 and their connection is closed. */
  stopping?: () => boolean;
}

/** One request being received or held, with its stage times. Plain object; never stored on `res`. */
export interface InFlight extends StageTimes {
  aborted: boolean;
  done: boolean;
  method: string;
  path: string;
  target: string;
  query: string;
  keyHeader: string;
  tsHeader: string;
  sigHeader: string;
  authorization: string;
  contentLengths: number;
  /**
   * The body's pieces so far, copied into one buffer that doubles as it fills (up to BODY_CAP_BYTES); null before the
   * first piece that is not the last. One copy per request, not per piece: a body sent a byte per packet, before any
   * signature is checked, holds about its own size (an object per piece held over 100 bytes per byte).
   */
  held: Buffer | null;
  size: number;
  tooLarge: boolean;
  routeName: string;
  /** The request signature being computed as the body streams in (REST lane). */
  mac: HmacSha256 | null;
  /** Close the connection after answering (shutting down). */
  closeAfter?: boolean;
}

/** The request line and the headers the lanes read (synchronously: uWS invalidates req after the handler returns). */
export function inFlightOf(req: HttpRequest, routeName: string): InFlight {
  const f: InFlight = {
    aborted: false,
    done: false,
    method: req.getCaseSensitiveMethod().toUpperCase(),
    path: req.getUrl(),
    target: '',
    query: req.getQuery() ?? '',
    keyHeader: '',
    tsHeader: '',
    sigHeader: '',
    authorization: '',
    contentLengths: 0,
    held: null,
    size: 0,
    tooLarge: false,
    routeName,
    mac: null,
    tHead: monoUs(),
    tVerified: NaN,
    tPublished: NaN,
    tSequenced: NaN,
    tDurable: NaN,
    tApplied: NaN,
    tReplied: NaN,
  };
  f.target = f.query.length > 0 ? `${f.path}?${f.query}` : f.path;
  req.forEach((k, v) => {
    switch (k) {
      case 'dx-access-key': f.keyHeader = v; break;
      case 'dx-access-timestamp': f.tsHeader = v; break;
      case 'dx-access-signature': f.sigHeader = v; break;
      case 'authorization': f.authorization = v; break;
      case 'content-length': f.contentLengths++; break;
    }
  });
  return f;
}

/** Two Content-Length headers: which one framed the body is ambiguous (request smuggling behind a proxy), so 400 invalid_field. */
export function refuseDuplicateLength(f: InFlight): void {
  if (f.contentLengths > 1)
    throw new ApiError('invalid_field', 'duplicate Content-Length', { field: 'content-length', reason: 'duplicate' });
}

/**
 * Reads a request: headers, URL and query synchronously, then the body
 * (capped at BODY_CAP_BYTES), then calls onBody once. Chunks before the last
 * are copied into one buffer (uWS neuters a chunk after its callback); a body
 * that arrives in one chunk is handed over as a view of it, without a copy,
 * so `raw` is valid only while onBody runs: every caller parses it at once.
 */
export function receive(
  res: HttpResponse,
  req: HttpRequest,
  onBody: (f: InFlight, raw: Buffer) => void,
  onHeaders?: (f: InFlight) => void,
): void {
  const f = inFlightOf(req, '');
  res.onAborted(() => {
    f.aborted = true;
  });
  onHeaders?.(f);
  res.onData((chunk, isLast) => {
    const view = Buffer.from(chunk);
    if (f.mac !== null && view.length > 0) f.mac.update(view);
    if (!f.tooLarge) {
      const had = f.size;
      f.size += view.length;
      if (f.size > BODY_CAP_BYTES) {
        f.tooLarge = true;
        f.held = null;
      } else if (view.length > 0 && (!isLast || f.held !== null)) {
        hold(f, had, view);
      }
    }
    if (!isLast) return;
    if (f.tooLarge) onBody(f, EMPTY);
    else onBody(f, f.held === null ? view : f.held.subarray(0, f.size));
  });
}

/** Copies a piece of the body after the `had` bytes already held, growing the buffer (doubling, up to the cap) to fit. */
function hold(f: InFlight, had: number, view: Buffer): void {
  let h = f.held;
  if (h === null || h.length < f.size) {
    // Not from Buffer's shared pool: a held body must not keep a pool slab of other requests' bytes alive.
    const grown = Buffer.allocUnsafeSlow(Math.min(BODY_CAP_BYTES, Math.max(1024, f.size * 2)));
    if (h !== null) h.copy(grown, 0, 0, had);
    f.held = h = grown;
  }
  view.copy(h, had);
}

const EMPTY = Buffer.alloc(0);

// Replies that become ready outside their own request's uWS callback (a
// completion drained while another connection's request was being handled)
// are queued and written from a setImmediate, outside every uWS callback:
// uWS cannot cork a socket while another one is corked, and an uncorked reply
// goes out as many small writes (measured: ~19 sendto calls per reply).
const replyQueue: (() => void)[] = [];
let flushScheduled = false;

function flushReplies(): void {
  flushScheduled = false;
  const q = replyQueue.splice(0, replyQueue.length);
  for (let i = 0; i < q.length; i++) q[i]!();
}

export function deferReply(write: () => void): void {
  replyQueue.push(write);
  if (!flushScheduled) {
    flushScheduled = true;
    setImmediate(flushReplies);
  }
}

export function send(
  res: HttpResponse,
  flight: { aborted: boolean; done: boolean; method?: string; closeAfter?: boolean },
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  if (flight.aborted || flight.done) return;
  flight.done = true;
  const json = body === undefined ? '' : bodyJson(body);
  res.cork(() => {
    res.writeStatus(statusLine(status));
    res.writeHeader('content-type', 'application/json');
    if (headers) for (const k in headers) res.writeHeader(k, headers[k]!);
    // A response to HEAD carries no body (RFC 9110 9.3.2).
    if (flight.method === 'HEAD') endHead(res, Buffer.byteLength(json), flight.closeAfter === true);
    else if (flight.closeAfter === true) res.end(json, true);
    else endOrWait(res, flight, json);
  });
}

/**
 * Ends a response to HEAD: its Content-Length is the body's it does not send.
 * Not endWithoutBody(length): uWS v20.30 then waits for `length` body bytes
 * that never come, so the response never completes (the connection's next
 * request is closed unanswered, and it never reaches the idle timeout).
 */
export function endHead(res: HttpResponse, length: number, closeConnection = false): void {
  // Closing anyway (Connection: close): the old call, which the client closes on.
  if (closeConnection) {
    res.endWithoutBody(length, true);
    return;
  }
  // No argument at all (undefined is read as a length): uWS writes no Content-Length of its own and completes the response.
  res.writeHeader('content-length', String(length));
  res.endWithoutBody();
}

/**
 * res.end buffers whatever the socket does not take: a client that pipelines
 * requests and never reads would make uWS hold every reply. tryEnd writes
 * what the socket takes now and keeps the response pending (uWS closes a
 * connection that sends another request meanwhile, so such a client holds
 * one reply plus the kernel's socket buffer); the rest follows onWritable.
 * The REST lane's replies and the static files.
 */
export function endOrWait(res: HttpResponse, flight: { aborted: boolean }, body: string | Uint8Array): void {
  const start = res.getWriteOffset();
  const total = typeof body === 'string' ? Buffer.byteLength(body) : body.length;
  const [ok, done] = res.tryEnd(body, total);
  if (ok || done) return;
  const bytes = typeof body === 'string' ? Buffer.from(body) : body;
  res.onWritable((offset) => {
    if (flight.aborted) return true;
    return res.tryEnd(bytes.subarray(offset - start), total)[0];
  });
}

function sendError(res: HttpResponse, f: InFlight, e: ApiError, obs: Observer | undefined, headers?: Record<string, string>): void {
  send(res, f, e.status, e.body(), headers);
  observe(obs, f, e.status, e.code);
}

/** Stamps the reply as written and tells the observer (metrics). */
export function observe(obs: Observer | undefined, f: InFlight, status: number, code: string | null, route = f.routeName): void {
  f.tReplied = monoUs();
  obs?.onResponse(route, status, code, f);
}

/** Registers the REST lane (every route of `opts.routes`) on the App. */
export function mountRest(app: TemplatedApp, opts: LaneOptions, pattern = '/v1/*'): void {
  app.any(pattern, (res: HttpResponse, req: HttpRequest) =>
    receive(
      res,
      req,
      (f, raw) => onRequest(res, f, raw, opts),
      (f) => startRequestSignature(opts.core, f),
    ),
  );
}

/** This thread's key midstates (module state: each worker thread loads its own copy). */
const macs = new KeyMacs();

/**
 * Starts the request's signature as soon as the headers are known, so the
 * body is hashed as it streams in and an oversized one is still
 * authenticated (the REST and MCP lanes).
 */
export function startRequestSignature(core: GatewayCore, f: InFlight): void {
  core.drain();
  startMac(core.views, f);
}

/** Starts f.mac for the request's key (none for an unknown key or missing credentials: authenticate refuses those). */
export function startMac(views: Pick<Views, 'keyRow' | 'keySecret'>, f: InFlight): void {
  const keyId = /^[0-9]{1,10}$/.test(f.keyHeader) ? Number(f.keyHeader) : -1;
  if (keyId <= 0 || f.tsHeader === '' || f.sigHeader === '') return;
  const row = views.keyRow(keyId);
  const secret = row < 0 ? null : views.keySecret(keyId);
  if (secret !== null) f.mac = macs.start(row, secret, f.tsHeader, f.method, f.target);
}

/**
 * Log lines a client can cause (a failed sign-in, a replayed signature) are
 * written at most CLIENT_LOG_BURST at once and CLIENT_LOG_PER_S a second on
 * each thread; the rest are counted, and the next line written carries the
 * count (`suppressed`), so an unauthenticated flood cannot fill the disk
 * through the structured log. A count nothing else reports within
 * CLIENT_LOG_FLUSH_MS of its first left-out line gets a line of its own
 * (`client_log_suppressed`), so a flood that stops is still counted. Module
 * state: one budget per thread.
 */
const CLIENT_LOG_BURST = 50;
const CLIENT_LOG_PER_S = 10;
export const CLIENT_LOG_FLUSH_MS = 1000;
let clientLogTokens = CLIENT_LOG_BURST;
let clientLogAt = 0;
let clientLogSuppressed = 0;
let clientLogFlush: NodeJS.Timeout | null = null;
/** The log of the last left-out line: the one its count goes to. */
let clientLogSink: (fields: Record<string, unknown>) => void = () => {};

/** Writes the count of left-out lines now, if any (the timer's work; also called as a thread stops, before the timer could fire). */
export function flushClientLog(): void {
  if (clientLogFlush !== null) clearTimeout(clientLogFlush);
  clientLogFlush = null;
  if (clientLogSuppressed === 0) return;
  clientLogSink({ event: 'client_log_suppressed', suppressed: clientLogSuppressed });
  clientLogSuppressed = 0;
}

export function logClientProblem(log: ((fields: Record<string, unknown>) => void) | undefined, fields: Record<string, unknown>): void {
  if (log === undefined) return;
  const now = Date.now();
  // A wall clock stepped back refills nothing (it must not drive the budget below zero for as long as the step).
  clientLogTokens = Math.min(CLIENT_LOG_BURST, clientLogTokens + (Math.max(0, now - clientLogAt) * CLIENT_LOG_PER_S) / 1000);
  clientLogAt = now;
  if (clientLogTokens < 1) {
    clientLogSuppressed++;
    clientLogSink = log;
    clientLogFlush ??= setTimeout(flushClientLog, CLIENT_LOG_FLUSH_MS).unref();
    return;
  }
  clientLogTokens--;
  if (clientLogSuppressed > 0) {
    log({ ...fields, suppressed: clientLogSuppressed });
    clientLogSuppressed = 0;
  } else {
    log(fields);
  }
}

/** The authenticated caller of one request. */
export interface Caller {
  keyId: number;
  /**
   * The key's row in the state: its index in the per-key tables (token
   * buckets, WebSocket counts); key ids keep growing, rows are reused.
   */
  keyRow: number;
  account: number;
  /** Scope bits of the key. */
  scopes: number;
}

/**
 * How a request's signature meets the replay guard: `record` (single use: a
 * mutation, or a WebSocket sign-in carried in a URL), `lookup` (may repeat,
 * but not once a single-use credential has used it: a header-signed
 * WebSocket upgrade signs the same string as a URL sign-in), `none` (reads).
 */
export type ReplayMode = 'record' | 'lookup' | 'none';

/**
 * 401: key, timestamp window, signature and replay (ReplayMode; by default
 * recorded for a mutation). The same check for the REST, MCP and WebSocket
 * lanes.
 */
export function authenticate(
  opts: LaneOptions, f: InFlight, routeName: string, now: number, replay: ReplayMode = f.method !== 'GET' ? 'record' : 'none',
): Caller {
  const keyId = /^[0-9]{1,10}$/.test(f.keyHeader) ? Number(f.keyHeader) : -1;
  const key = keyId > 0 ? opts.core.views.keyInfo(keyId) : null;
  const mac = f.mac;
  f.mac = null;
  try {
    if (key === null || key.revoked || f.tsHeader === '' || f.sigHeader === '')
      throw new ApiError('unauthorized', 'missing or invalid credentials');
    const why = mac === null ? 'no key at header time' : checkTimestamp(f.tsHeader, now) ?? checkMac(mac, f.sigHeader);
    if (why !== null) {
      logClientProblem(opts.log, { event: 'auth_failed', key_id: keyId, reason: why, route: routeName });
      throw new ApiError('unauthorized', 'missing or invalid credentials');
    }
    // The signature matched: mac.digest holds its bytes.
    const seen = replay === 'record' ? opts.replay.firstUse(mac!.digest, Number(f.tsHeader), now)
      : replay === 'lookup' ? opts.replay.lookup(mac!.digest, now) : 'first';
    if (seen === 'replayed') {
      logClientProblem(opts.log, { event: 'auth_failed', key_id: keyId, reason: 'replayed signature', route: routeName });
      throw new ApiError('unauthorized', 'missing or invalid credentials');
    }
    if (seen === 'full') {
      logClientProblem(opts.log, { event: 'replay_guard_full', key_id: keyId, route: routeName });
      throw new ApiError('shed', 'the replay guard has no room to remember this signature: retry with a new timestamp');
    }
    if (seen === 'early') {
      const floor = opts.replay.notBefore;
      logClientProblem(opts.log, { event: 'auth_early', key_id: keyId, route: routeName, not_before_ms: floor });
      throw new ApiError('shed', `this node started or took over moments ago: a mutation must be signed at ${floor} ms or later ` +
        '(one signed before may have been used on the node before); sign it again', { retry_after_ms: String(Math.max(1, floor - now)) });
    }
    if (seen === 'stepped') {
      const after = opts.replay.signAfter(now);
      logClientProblem(opts.log, { event: 'auth_stepped', key_id: keyId, route: routeName, sign_after_ms: after });
      throw new ApiError('shed', `the wall clock stepped back: a mutation stamped before ${after} ms may have been used and ` +
        'forgotten, so it cannot be told from a replay; sign it again then', { retry_after_ms: String(Math.max(1, after - now)) });
    }
    return { keyId, keyRow: key.row, account: key.account_id, scopes: key.scopes };
  } finally {
    if (mac !== null) macs.release(mac);
  }
}

/** 429 (one token of the operation's bucket; an admitted batch pays the rest in invokeRoute) then 403 (scope). */
export function admitRoute(opts: LaneOptions, route: Route, caller: Caller, now: number): void {
  const bucket = route.scope === Scope.read ? BUCKET_READ : BUCKET_WRITE;
  const wait = opts.buckets.take(caller, bucket, 1, now);
  if (wait > 0) throw new ApiError('rate_limited', 'rate limit exceeded', { retry_after_ms: String(wait) });
  if ((caller.scopes & route.scope) === 0)
    throw new ApiError('missing_scope', `this operation needs scope ${scopeNames(route.scope).join(' or ')}`);
}

/**
 * An admitted request with its body and query validated: the route's
 * prepare (the checks its schema cannot express), the rest of a batch's
 * cost, then the route's handler. The one call path of an operation,
 * whichever lane (REST or MCP) carried it.
 */
export function invokeRoute(
  opts: LaneOptions,
  route: Route,
  caller: Caller,
  params: string[],
  query: QueryValues,
  body: unknown,
  now: number,
  times: StageTimes | null = null,
): Reply | Promise<Reply> {
  if (route.scope !== Scope.read) opts.core.assertWritable();
  const prepared = route.prepare?.(body);
  const extra = route.writeCost(body) - 1;
  if (extra > 0) {
    const cap = batchCap(keyLimits(opts.core.views, caller.keyRow).write);
    if (extra + 1 > cap) {
      const field = Object.keys(body as object)[0]!;
      throw new ApiError('invalid_field', `this key's batch_cap is ${cap} (its write burst)`, { field, reason: `at most ${cap} items` });
    }
    // admitRoute took the first item's token: refused, it goes back, and the wait is until the whole batch fits.
    const w = opts.buckets.take(caller, BUCKET_WRITE, extra, now, 1);
    if (w > 0) throw new ApiError('rate_limited', 'rate limit exceeded for this batch size', { retry_after_ms: String(w) });
  }
  const ctx: RequestCtx = {
    keyId: caller.keyId,
    keyRow: caller.keyRow,
    account: caller.account,
    scopes: caller.scopes,
    params,
    query,
    body,
    prepared,
  };
  const core = opts.core;
  // The commands the handler submits (synchronously, before its first await) carry these stage times.
  core.tracing = times;
  core.callerKey = caller.keyId;
  try {
    return route.handler(ctx, core, opts.limits);
  } finally {
    core.tracing = null;
    core.callerKey = 0;
  }
}

/** A thrown client mistake as the ApiError it is answered with; null for anything else (a bug: 500). */
export function asApiError(e: unknown): ApiError | null {
  if (e instanceof ApiError) return e;
  if (e instanceof ViewError) return new ApiError(e.code, e.message, { field: e.field, reason: e.reason });
  return null;
}

function onRequest(res: HttpResponse, f: InFlight, raw: Buffer, opts: LaneOptions): void {
  const { core, observer } = opts;
  try {
    if (opts.stopping?.()) {
      f.closeAfter = true;
      throw new ApiError('shed', 'the exchange is shutting down');
    }
    if (core.fenced) {
      f.closeAfter = true;
      core.assertWritable();
    }
    // Apply every published event first: a key created a moment ago
    // authenticates, and a read sees every write acknowledged before it.
    core.drain();
    const match = matchRoute(opts.routes, f.method, f.path);
    if (match === null) throw new ApiError('not_found', `no route ${f.method} ${f.path}`);
    if ('allowed' in match) {
      sendError(res, f, new ApiError('method_not_allowed', `${f.method} is not allowed on ${f.path}`), observer, {
        allow: match.allowed.join(', '),
      });
      return;
    }
    const route = match.route;
    f.routeName = route.name;

    // 401: key, timestamp, signature, replay. Then 429 (one token now; an
    // admitted batch pays the rest after validation) and 403 (scope).
    const now = Date.now();
    const caller = authenticate(opts, f, route.name, now);
    admitRoute(opts, route, caller, now);

    // Body, then query: a body where none is taken is 400 unexpected_body however large (a batch cancel without /batch too).
    refuseDuplicateLength(f);
    let body: unknown;
    if (route.body === 'empty' || route.body === 'none') {
      if (f.tooLarge || raw.length > 0) throw new ApiError('unexpected_body', `${f.method} ${route.path} takes no body`);
    } else {
      if (f.tooLarge) throw new ApiError('body_too_large', `body exceeds ${BODY_CAP_BYTES} bytes`);
      if (raw.length === 0) throw new ApiError('invalid_json', 'a JSON body is required');
      body = validateBody(route, parseJson(raw));
    }
    // min_seq (reads): hold the read until this node has applied that seq
    // (a write acknowledged by another node), at most MIN_SEQ_WAIT_MS.
    const q = f.method === 'GET' ? takeMinSeq(f.query) : { min_seq: 0, rest: f.query };
    const query = parseRouteQuery(route, q.rest);
    f.tVerified = monoUs();
    if (q.min_seq > core.views.asOfSeq) {
      core.waitApplied(q.min_seq, MIN_SEQ_WAIT_MS).then((ok) => deferReply(() => {
        try {
          afterMinSeq(core, caller, q.min_seq, ok);
          const held = invokeRoute(opts, route, caller, match.params, query, body, Date.now(), f);
          if (held instanceof Promise)
            held.then(
              (r) => deferReply(() => finish(res, f, r, observer)),
              (e) => deferReply(() => fail(res, f, e, opts)),
            );
          else finish(res, f, held, observer);
        } catch (e) {
          fail(res, f, e, opts);
        }
      }));
      return;
    }
    const out = invokeRoute(opts, route, caller, match.params, query, body, now, f);
    if (out instanceof Promise) {
      core.kick();
      out.then((r) => deferReply(() => finish(res, f, r, observer)), (e) => deferReply(() => fail(res, f, e, opts)));
    } else {
      finish(res, f, out, observer);
    }
  } catch (e) {
    fail(res, f, e, opts);
  }
}

/**
 * A read held for its min_seq, once the wait is over: 503 replica_lagging when the seq was not applied in time, 401 when
 * the key was revoked (or evicted) meanwhile. It authenticated before the wait, but it is answered from a state after
 * the revocation, and a revoked key is refused from the moment its thread applies the revocation.
 */
function afterMinSeq(core: GatewayCore, caller: Caller, minSeq: number, applied: boolean): void {
  if (!applied)
    throw new ApiError(
      'replica_lagging',
      `this node has not applied seq ${minSeq} within ${MIN_SEQ_WAIT_MS} ms (it is at ${core.views.asOfSeq})`,
      { min_seq: String(minSeq), as_of_seq: String(core.views.asOfSeq) },
    );
  const key = core.views.keyInfo(caller.keyId);
  if (key === null || key.revoked) throw new ApiError('unauthorized', 'missing or invalid credentials');
}

export function finish(res: HttpResponse, f: InFlight, r: Reply, obs: Observer | undefined): void {
  send(res, f, r.status, r.body);
  observe(obs, f, r.status, null);
}

export function fail(
  res: HttpResponse,
  f: InFlight,
  e: unknown,
  opts: { observer?: Observer; log?: (fields: Record<string, unknown>) => void },
): void {
  const api = asApiError(e);
  if (api !== null) {
    sendError(res, f, api, opts.observer);
    return;
  }
  opts.log?.({ event: 'handler_fault', route: f.routeName, error: (e as Error)?.stack ?? String(e) });
  send(res, f, 500, new ApiError('internal').body());
  observe(opts.observer, f, 500, 'internal');
}
