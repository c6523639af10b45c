// WsLane: the WebSocket lane (/v1/ws) of one gateway thread: the signed
// upgrade, the command protocol (protocol.ts), subscriptions, and the writing
// of what the Fanout renders. Gateway threads only; never blocks.
//
// Upgrade: the same checks and order as REST (http.ts authenticate: 401
// before anything else, then 429 on the read bucket, then 403 without scope
// read), plus the per-key connection cap (429); res.upgrade is called only
// after all of them passed, so a refused client never gets a socket. The
// credentials come in the three DX-ACCESS-* headers or, for browsers (which
// cannot set headers on an upgrade), in the query `?key=&ts=&sig=`, signed
// over the bare path; a query signature is usable once (replay guard).
//
// Writing: the Fanout only queues. The queue is written here outside every
// uWS callback (a setImmediate, or the pump) so that sockets can be corked;
// inside a connection's own message callback (where a subscription must see
// everything up to its snapshot first) public messages are published and the
// connection's own messages written directly. Public messages go out with
// App.publish (uWS copies one buffer to every subscriber, in C++); private
// ones with WebSocket.send.
//
// Delivery latency: while any subscription exists the pump drains the event
// ring from the event loop, spinning a few turns after work and then parking
// on the ring's doorbell (GatewayCore.bellWatch), so an idle lane costs
// no CPU and a published event is fanned out within one loop turn.
//
// Order entry: JSON order commands run the REST operations' own steps
// (orders.ts); binary frames carry native-layout command records
// (binary.ts) once start_binary agreed on the layout fingerprint. Answers are
// queued when their completion is drained and written like everything else.
// A connection holds at most max_in_flight order commands; more are shed.
//
// Back-pressure: uWS silently skips a subscriber whose buffer is over
// maxBackpressure. The lane therefore sets maxBackpressure (with
// closeOnBackpressureLimit as a last resort) far above its own limit and
// closes a connection whose unsent bytes pass slow_consumer_bytes with 4008,
// checked after every private write and by a sweep every SWEEP_MS.

import {
  asApiError,
  authenticate,
  inFlightOf,
  logClientProblem,
  send,
  startRequestSignature,
  type InFlight,
  type LaneOptions,
  type Observer,
} from '../gateway/http.js';
import { stageTimes, type GatewayCore } from '../gateway/core.js';
import { monoUs } from '../lib/mono_clock.js';
import { ApiError } from '../gateway/envelope.js';
import { BUCKET_READ, keyLimits } from '../gateway/buckets.js';
import type { HttpRequest, HttpResponse, TemplatedApp, Uws } from '../gateway/uws.js';
import { Scope } from '../layout/records.js';
import { memOf } from '../lib/mem.js';
import { BinaryBatch, BinaryOrders, FINGERPRINT_TEXT, frameProblem, type BinaryPeer } from './binary.js';
import { runOrderCommand } from './orders.js';
import type { WebSocket, us_socket_context_t } from 'uWebSockets.js';
import { Fanout, type Peer, type Stream, type UserSub } from './fanout.js';
import { KEY_CONNECTIONS, KEY_SUBSCRIPTIONS, KeyCounts } from './key_counts.js';
import {
  MARKET_CHANNELS, WS_PATH, WsClose, WsCommandError, commandId, errorReply, frameText, parseCommand, reply, wsConfig,
  type Channel, type Command, type Envelope, type OrderCmd, type UpdateCmd, type WsConfig,
} from './protocol.js';
import type { Subscribed } from '../wire/ws.js';

/**
 * A user snapshot costs one read token per this many open orders (the
 * command's own token included; at most the key's read burst less one): it
 * lists every open order, rendered on the gateway thread in one message
 * (20,000 orders: about 8 MB and 150-340 ms of the thread).
 */
export const SNAPSHOT_ORDERS_PER_TOKEN = 100;
/** Empty pump polls (each one event-loop turn) before parking on the doorbell. */
const SPIN_POLLS = 64;
/** Longest park of the pump (a safety net: the engine rings the doorbell when it publishes). */
const PARK_MS = 20;
/** Period of the slow-consumer sweep. */
const SWEEP_MS = 25;
/** Period of the retained-log expiry. */
const EXPIRE_MS = 1000;

export interface WsLaneOptions {
  /** The thread's lane options: the same core, buckets, replay guard and log as REST and MCP. */
  lane: LaneOptions;
  /** uWS module (for DISABLED compression). */
  uws: Uws;
  /** Per-key counts shared by the gateway threads (KeyCounts.allocate()); null: this thread only. */
  keyCounts: SharedArrayBuffer | null;
  config?: Partial<WsConfig>;
  /** True once the thread is shutting down: upgrades get 503. */
  stopping?: () => boolean;
  /** Called with +1 when a connection opens and -1 when it closes (metrics). */
  onConnections?: (delta: number) => void;
  /** Answered order commands (metrics lane `ws`: the command's name, or `binary` per record). */
  observer?: Observer;
}

interface PublicSub {
  readonly sid: number;
  readonly channel: Exclude<Channel, 'user'>;
  readonly stream: Stream;
}
interface UserSubscription {
  readonly sid: number;
  readonly channel: 'user';
  readonly user: UserSub;
}
type Sub = PublicSub | UserSubscription;

/** One WebSocket connection (the uWS user data). */
class Conn implements Peer, BinaryPeer {
  ws: WebSocket<{ conn: Conn }> | null = null;
  readonly out: (string | BinaryBatch)[] = [];
  queued = false;
  open = true;
  revoked = false;
  readonly subs = new Map<number, Sub>();
  /** Public topic -> sid of this connection's subscription to it. */
  readonly byTopic = new Map<string, number>();
  user: UserSubscription | null = null;
  /** Order commands held for their outcome. */
  inFlight = 0;
  /**
   * Bytes of the largest message written since the connection's backlog was
   * last under slow_consumer_bytes: one message larger than the limit (a
   * user snapshot of many open orders) is not a slow consumer by itself.
   */
  allowance = 0;
  /** True once start_binary agreed on the layout: binary frames are order entry. */
  binary = false;
  /** Binary answers not yet written: the batch answers are appended to (answers()). */
  private results = new BinaryBatch();
  /** A written batch kept for reuse. */
  private spare: BinaryBatch | null = null;
  /** keyRow: the key's row, its index in the per-key tables (token buckets, counts), as at the upgrade. */
  constructor(readonly keyId: number, readonly keyRow: number, readonly account: number, readonly scopes: number) {}

  answers(): BinaryBatch {
    const b = this.results;
    if (!b.queued || this.out[this.out.length - 1] === b) return b;
    // Messages were queued behind this batch (a later command's user-channel events): the next answers go after them.
    const fresh = this.spare ?? new BinaryBatch();
    this.spare = null;
    this.results = fresh;
    return fresh;
  }

  /** A batch was written and reset: kept for reuse unless it is still the one answers go to. */
  written(b: BinaryBatch): void {
    if (b !== this.results) this.spare = b;
  }
}

interface Deferred {
  conn: Conn;
  env: Envelope;
}

export class WsLane {
  readonly cfg: WsConfig;
  readonly fanout: Fanout;
  private readonly lane: LaneOptions;
  private readonly counts: KeyCounts;
  private readonly conns = new Set<Conn>();
  private readonly byKey = new Map<number, Set<Conn>>();
  /** Subscriptions on this thread (the pump runs while there are any). */
  private subscriptions = 0;
  private readonly deferred: Deferred[] = [];
  private readonly closing: { conn: Conn; code: number; reason: string }[] = [];
  private readonly binaryOrders: BinaryOrders;
  private flushScheduled = false;
  private pumping = false;
  /** The pump's watch on the core's bell (one waitAsync at most, no V8 timeout). */
  private readonly watch: ReturnType<GatewayCore['bellWatch']>;
  private emptyPolls = 0;
  private sweepTimer: NodeJS.Timeout | null = null;
  /** performance.now() of the last expiry of the user logs: the resume window is measured on this thread's monotonic clock. */
  private lastExpire = -Infinity;
  private stopped = false;
  /** Counters (metrics, tests). */
  slowClosed = 0;
  revokedClosed = 0;

  constructor(private readonly app: TemplatedApp, private readonly opts: WsLaneOptions) {
    this.cfg = wsConfig(opts.config);
    this.lane = opts.lane;
    this.watch = this.lane.core.bellWatch(() => this.poll());
    this.counts = new KeyCounts(opts.keyCounts ?? KeyCounts.allocate());
    this.fanout = new Fanout(this.lane.core.views, this.cfg);
    this.fanout.onQueued = this.scheduleFlush;
    this.fanout.onRevoked = (keyId) => this.onRevoked(keyId);
    this.lane.core.onApplied = this.fanout.onEvent;
    const queued = (peer: BinaryPeer, batch: BinaryBatch): void => this.queueBinary(peer as Conn, batch);
    this.binaryOrders = new BinaryOrders(this.lane, this.cfg.max_in_flight, queued, opts.observer);
  }

  /** Registers /v1/ws on the App (before any catch-all route). */
  mount(): void {
    const cfg = this.cfg;
    this.app.ws<{ conn: Conn }>(WS_PATH, {
      maxPayloadLength: cfg.max_command_bytes,
      idleTimeout: cfg.idle_timeout_s,
      sendPingsAutomatically: cfg.idle_timeout_s > 0,
      compression: this.opts.uws.DISABLED,
      // Far above slow_consumer_bytes, which the lane enforces itself with a
      // documented close code; uWS would otherwise drop messages silently.
      maxBackpressure: Math.max(64 << 20, cfg.slow_consumer_bytes * 16),
      closeOnBackpressureLimit: 1,
      upgrade: (res, req, context) => this.onUpgrade(res, req, context),
      open: (ws) => this.onOpen(ws),
      message: (ws, message, isBinary) => this.onMessage(ws, message, isBinary),
      close: (ws) => this.onClose(ws),
    });
  }

  // ---- connection lifecycle --------------------------------------------------------

  private onUpgrade(res: HttpResponse, req: HttpRequest, context: us_socket_context_t): void {
    const f = inFlightOf(req, 'ws');
    const wsKey = req.getHeader('sec-websocket-key');
    const wsProtocol = req.getHeader('sec-websocket-protocol');
    const wsExtensions = req.getHeader('sec-websocket-extensions');
    res.onAborted(() => {
      f.aborted = true;
    });
    try {
      if (this.opts.stopping?.() || this.stopped) throw new ApiError('shed', 'the exchange is shutting down');
      const inQuery = f.keyHeader === '' && f.tsHeader === '' && f.sigHeader === '' && f.query !== '';
      if (inQuery) this.queryCredentials(f);
      // The REST lane's own 401 check (key, revocation, ±5 s, signature over an empty body).
      startRequestSignature(this.lane.core, f);
      const now = Date.now();
      // A signature carried in a URL may be logged or kept in a history: each one opens one connection, and
      // (headers sign the same string) it is no header credential afterwards either.
      const caller = authenticate(this.lane, f, 'ws', now, inQuery ? 'record' : 'lookup');
      const wait = this.lane.buckets.take(caller, BUCKET_READ, 1, now);
      if (wait > 0) throw new ApiError('rate_limited', 'rate limit exceeded', { retry_after_ms: String(wait) });
      if ((caller.scopes & Scope.read) === 0) throw new ApiError('missing_scope', 'the WebSocket lane needs scope read');
      const cap = this.cfg.max_connections_per_key;
      if (!this.counts.tryAdd(caller.keyRow, KEY_CONNECTIONS, 1, cap)) {
        throw new ApiError('rate_limited', `at most ${cap} WebSocket connections per key`, {
          retry_after_ms: '1000',
          max_connections_per_key: cap,
        });
      }
      f.done = true;
      res.upgrade({ conn: new Conn(caller.keyId, caller.keyRow, caller.account, caller.scopes) }, wsKey, wsProtocol, wsExtensions, context);
    } catch (e) {
      // A refused handshake's connection is of no further use to a WebSocket client: close it after the answer.
      f.closeAfter = true;
      const api = asApiError(e);
      if (api === null) {
        this.lane.log?.({ event: 'ws_upgrade_fault', error: (e as Error)?.stack ?? String(e) });
        send(res, f, 500, new ApiError('internal').body());
        return;
      }
      send(res, f, api.status, api.body());
    }
  }

  /**
   * Browser sign-in (browsers cannot set headers on an upgrade): the query
   * is exactly `key`, `ts` and `sig`, each once, percent-encoded, carrying
   * the three header values; the signed target is then the bare path, so
   * the signed string is `ts\nGET\n/v1/ws\n`. Anything else in the query is
   * 401, like any other bad credential (the reason goes to the log).
   */
  private queryCredentials(f: InFlight): void {
    const got: Record<string, string> = {};
    const refuse = (reason: string): never => {
      // The key as the client sent it, cut: a 100 KB value must not become a 100 KB log line.
      const keyId = got.key === undefined ? null : got.key.slice(0, 32);
      logClientProblem(this.lane.log, { event: 'auth_failed', key_id: keyId, reason, route: 'ws' });
      throw new ApiError('unauthorized', 'missing or invalid credentials');
    };
    for (const part of f.query.split('&')) {
      const eq = part.indexOf('=');
      const name = eq < 0 ? part : part.slice(0, eq);
      if (name !== 'key' && name !== 'ts' && name !== 'sig') refuse(`query parameter ${JSON.stringify(name.slice(0, 32))} on a sign-in`);
      if (name in got) refuse(`query parameter ${name} given twice`);
      try {
        got[name] = decodeURIComponent(part.slice(eq + 1));
      } catch (e) {
        if (!(e instanceof URIError)) throw e;
        refuse(`bad percent-encoding of ${name}`);
      }
    }
    f.keyHeader = got.key ?? '';
    f.tsHeader = got.ts ?? '';
    f.sigHeader = got.sig ?? '';
    f.target = f.path;
  }

  private onOpen(ws: WebSocket<{ conn: Conn }>): void {
    const conn = ws.getUserData().conn;
    conn.ws = ws;
    this.conns.add(conn);
    let set = this.byKey.get(conn.keyId);
    if (set === undefined) this.byKey.set(conn.keyId, (set = new Set()));
    set.add(conn);
    this.opts.onConnections?.(1);
    if (this.sweepTimer === null) this.sweepTimer = setInterval(this.sweep, SWEEP_MS);
    // A key revoked (or revoked and already evicted) between the upgrade and now is caught here.
    const views = this.lane.core.views;
    if (views.keyAccount(conn.keyId) === 0 || views.keyRevoked(conn.keyId)) this.end(conn, WsClose.key_revoked, 'key revoked');
  }

  private onClose(ws: WebSocket<{ conn: Conn }>): void {
    const conn = ws.getUserData().conn;
    if (!conn.open) return;
    conn.open = false;
    conn.out.length = 0;
    const now = performance.now();
    for (const sub of conn.subs.values()) this.dropSub(conn, sub, now);
    conn.subs.clear();
    conn.byTopic.clear();
    this.counts.remove(conn.keyRow, KEY_CONNECTIONS, 1);
    this.conns.delete(conn);
    this.opts.onConnections?.(-1);
    const set = this.byKey.get(conn.keyId);
    set?.delete(conn);
    if (set !== undefined && set.size === 0) this.byKey.delete(conn.keyId);
    conn.ws = null;
    if (this.conns.size === 0 && this.sweepTimer !== null) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = null;
    }
  }

  /** Closes a connection with a code and reason, now (outside callbacks) or at the next flush. */
  private end(conn: Conn, code: number, reason: string): void {
    if (!conn.open) return;
    this.closing.push({ conn, code, reason });
    this.scheduleFlush();
  }

  private onRevoked(keyId: number): void {
    const set = this.byKey.get(keyId);
    if (set === undefined) return;
    for (const conn of set) {
      // At once, as the revocation is applied: no command of it runs and no private message sequenced after it is queued.
      conn.revoked = true;
      this.end(conn, WsClose.key_revoked, 'key revoked');
    }
  }

  /** Ends every connection (thread shutdown). */
  close(): void {
    // The answers queued so far (held commands answered during the stop) go out before the close frames.
    this.flush(true);
    this.stopped = true;
    for (const conn of [...this.conns]) conn.ws?.end(WsClose.going_away, 'the exchange is shutting down');
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.sweepTimer = null;
  }

  get connectionCount(): number {
    return this.conns.size;
  }

  get subscriptionCount(): number {
    return this.subscriptions;
  }

  // ---- commands ------------------------------------------------------------------------

  private onMessage(ws: WebSocket<{ conn: Conn }>, message: ArrayBuffer, isBinary: boolean): void {
    const conn = ws.getUserData().conn;
    if (!conn.open) return;
    // Every revocation published so far first: a revoked key's connection runs nothing more and closes (4003), as REST
    // authenticates every request. Binary frames do not drain here (measured: a drain per frame cost 9% of the binary
    // lane's throughput); they see a revocation once this thread's next drain applied it (docs/websocket.md).
    if (!isBinary) this.lane.core.drain();
    if (conn.revoked) {
      this.runCloses();
      return;
    }
    if (isBinary) {
      this.onBinary(conn, message);
      return;
    }
    const text = frameText(message);
    let env: Envelope | null = null;
    let err: WsCommandError | null = null;
    let id: number | null = null;
    try {
      env = parseCommand(text, this.cfg);
      id = env.id;
    } catch (e) {
      if (!(e instanceof WsCommandError)) throw e;
      err = e;
      id = lenientId(text);
    }
    // Order commands pay the write bucket, as their REST operations do (orders.ts).
    if (env !== null && env.command.cmd === 'order') {
      this.order(conn, env.id, env.command);
      this.writeOut(conn);
      return;
    }
    // Every other command frame costs one read token, well-formed or not.
    const wait = this.lane.buckets.take(conn, BUCKET_READ, 1, Date.now());
    if (wait > 0) {
      this.writeDirect(conn, errorReply(id, 'rate_limited', 'rate limit exceeded', { retry_after_ms: String(wait) }));
      return;
    }
    if (err !== null || env === null) {
      this.writeDirect(conn, errorReply(id, err!.code, err!.message));
      return;
    }
    // Everything published up to now goes out first: a new subscription's
    // snapshot then covers exactly what its stream has sent before it.
    this.lane.core.drain();
    if (this.fanout.midCommand) {
      // The ring holds a half-published command (a huge one): answer once it is whole.
      this.deferred.push({ conn, env });
      this.startPump();
      return;
    }
    this.flush(false);
    if (!conn.open) return;
    this.execute(conn, env);
    this.writeOut(conn);
    this.runCloses();
  }

  /** A JSON order command: answered now when refused, else once its outcome is durable. */
  private order(conn: Conn, id: number | null, c: OrderCmd): void {
    const times = stageTimes();
    const observer = this.opts.observer;
    runOrderCommand(this.lane, conn, id, c.name, c.params, this.cfg.max_in_flight, Date.now(), times, (frame, status, code) => {
      times.tReplied = monoUs();
      observer?.onResponse(c.name, status, code, times);
      this.fanout.queue(conn, frame);
      this.scheduleFlush();
    });
  }

  /** A binary frame: command records once start_binary agreed on the layout; anything unreadable closes the connection. */
  private onBinary(conn: Conn, message: ArrayBuffer): void {
    const headUs = monoUs();
    const bytes = message.byteLength;
    let problem: string | null;
    if (!conn.binary) problem = 'binary frames carry order records only after start_binary';
    else if (bytes % 8 !== 0) problem = `a frame of ${bytes} bytes is not a whole number of records (records are multiples of 8 bytes)`;
    else problem = frameProblem(memOf(message), bytes, this.cfg.max_records_per_frame);
    if (problem !== null) {
      this.writeDirect(conn, errorReply(null, 'malformed_frame', problem));
      this.end(conn, WsClose.malformed_frame, 'malformed binary frame');
      this.runCloses();
      return;
    }
    this.binaryOrders.frame(conn, memOf(message), bytes, Date.now(), headUs);
    this.writeOut(conn);
  }

  /** A connection's binary batch gained its first answer since it was last written. */
  private queueBinary(conn: Conn, batch: BinaryBatch): void {
    if (!conn.open) return;
    conn.out.push(batch);
    if (!conn.queued) {
      conn.queued = true;
      this.fanout.peers.push(conn);
    }
    this.scheduleFlush();
  }

  private startBinary(conn: Conn, id: number | null, fingerprint: string): void {
    if (fingerprint !== FINGERPRINT_TEXT) {
      // The client now speaks another layout: its binary frames are refused from here on, as the error says.
      conn.binary = false;
      throw new WsCommandError(
        'layout_mismatch',
        `this exchange speaks native layout ${FINGERPRINT_TEXT}, the client ${fingerprint}: ` +
          "rebuild the client from this exchange's native-layout (LAYOUT.md); binary frames stay refused",
        { layout_fingerprint: FINGERPRINT_TEXT },
      );
    }
    conn.binary = true;
    this.fanout.queue(
      conn,
      reply(id, 'ok', {
        layout_fingerprint: FINGERPRINT_TEXT,
        account_id: conn.account,
        max_records_per_frame: this.cfg.max_records_per_frame,
        max_in_flight: this.cfg.max_in_flight,
      }),
    );
  }

  private execute(conn: Conn, env: Envelope): void {
    try {
      const c: Command = env.command;
      switch (c.cmd) {
        case 'subscribe': return this.subscribe(conn, env.id, c.channels, c.market_ids, c.resume_from_seq);
        case 'unsubscribe': return this.unsubscribe(conn, env.id, c.sids);
        case 'update_subscription': return this.update(conn, env.id, c);
        case 'start_binary': return this.startBinary(conn, env.id, c.layout_fingerprint);
        case 'order': return this.order(conn, env.id, c);
      }
    } catch (e) {
      if (e instanceof WsCommandError) {
        this.fanout.queue(conn, errorReply(env.id, e.code, e.message, e.extra));
        return;
      }
      this.lane.log?.({ event: 'ws_command_fault', error: (e as Error)?.stack ?? String(e) });
      this.fanout.queue(conn, errorReply(env.id, 'internal', 'a fault of the exchange; logged'));
    }
  }

  /**
   * Subscribes the connection to each (channel, market) stream, all or
   * nothing: channels and markets are checked, then the key's cap, before
   * anything changes. market_ids are the per-market channels' (oracle and
   * user ignore them, docs/websocket.md).
   */
  private subscribe(conn: Conn, id: number | null, channels: readonly Channel[], marketIds: number[] | null, resume: number | null): void {
    const views = this.lane.core.views;
    if (marketIds !== null && channels.some((c) => c !== 'oracle' && c !== 'user')) {
      for (const m of marketIds) if (!views.marketExists(m)) throw new WsCommandError('unknown_market', `no market ${m}`);
    }
    if (resume !== null && resume > views.asOfSeq) {
      throw new WsCommandError('bad_params', `resume_from_seq ${resume} is ahead of the exchange (as_of_seq ${views.asOfSeq})`);
    }
    const plan: { channel: Channel; market: number; topic: string | null }[] = [];
    let fresh = 0;
    for (const channel of channels) {
      if (channel === 'user') {
        plan.push({ channel, market: 0, topic: null });
        if (conn.user === null) fresh++;
        continue;
      }
      const markets = MARKET_CHANNELS.has(channel) && marketIds !== null ? marketIds : [0];
      for (const market of markets) {
        const topic = Fanout.topic(channel, market);
        plan.push({ channel, market, topic });
        if (!conn.byTopic.has(topic)) fresh++;
      }
    }
    this.admitSubscriptions(conn, fresh, conn.user === null && channels.includes('user') && !this.canResume(conn, resume));
    const after: (() => void)[] = [];
    for (const p of plan) {
      if (p.channel === 'user') {
        if (conn.user !== null) {
          this.fanout.queue(conn, reply(id, 'subscribed', { channel: 'user', sid: conn.user.sid, existing: true }));
          continue;
        }
        const resumed = this.canResume(conn, resume);
        const sid = this.fanout.allocateSid();
        const sub: UserSubscription = { sid, channel: 'user', user: { peer: conn, sid, account: conn.account, seq: 0 } };
        this.addSub(conn, sub);
        conn.user = sub;
        this.fanout.queue(conn, reply(id, 'subscribed', { channel: 'user', sid: sub.sid, resumed }));
        after.push(() => {
          const lg = this.fanout.userLog(conn.account);
          if (resumed) lg.replay(resume!, (type, body) => this.fanout.sendUser(sub.user, type, body));
          else this.fanout.sendUser(sub.user, 'user_snapshot', this.fanout.userSnapshotBody(conn.account, false));
          this.fanout.addUserSub(lg, sub.user);
        });
        continue;
      }
      const existing = conn.byTopic.get(p.topic!);
      const msg: Pick<Subscribed, 'channel' | 'market_id'> = { channel: p.channel };
      if (p.market !== 0) msg.market_id = p.market;
      if (existing !== undefined) {
        this.fanout.queue(conn, reply(id, 'subscribed', { ...msg, sid: existing, existing: true }));
        continue;
      }
      const stream = this.fanout.join(p.channel as Exclude<Channel, 'user'>, p.market);
      const sub: PublicSub = { sid: stream.sid, channel: stream.channel as Exclude<Channel, 'user'>, stream };
      this.addSub(conn, sub);
      conn.byTopic.set(stream.topic, sub.sid);
      this.fanout.queue(conn, reply(id, 'subscribed', { ...msg, sid: sub.sid }));
      after.push(() => {
        if (stream.channel === 'orderbook_delta') this.fanout.queue(conn, this.fanout.orderbookSnapshot(stream));
        conn.ws!.subscribe(stream.topic);
      });
    }
    // Replies first, then each subscription's first data.
    for (const f of after) f();
  }

  /**
   * Counts `fresh` new subscriptions against the key's cap and, when one is a user subscription with a snapshot, charges
   * the snapshot: all or nothing (a refused charge takes the count back).
   */
  private admitSubscriptions(conn: Conn, fresh: number, userSnapshot: boolean): void {
    const cap = this.cfg.max_subscriptions_per_key;
    if (fresh > 0 && !this.counts.tryAdd(conn.keyRow, KEY_SUBSCRIPTIONS, fresh, cap)) {
      const has = this.counts.get(conn.keyRow, KEY_SUBSCRIPTIONS);
      const why = `at most ${cap} subscriptions per key (this command adds ${fresh}, the key has ${has})`;
      throw new WsCommandError('too_many_subscriptions', why);
    }
    if (!userSnapshot) return;
    try {
      this.chargeSnapshot(conn);
    } catch (e) {
      this.counts.remove(conn.keyRow, KEY_SUBSCRIPTIONS, fresh);
      throw e;
    }
  }

  /** Whether a user subscription from resume_from_seq `resume` replays the retained log instead of a snapshot. */
  private canResume(conn: Conn, resume: number | null): boolean {
    const log = this.fanout.existingLog(conn.account);
    return resume !== null && log !== undefined && resume >= log.coveredFrom;
  }

  /**
   * The read tokens of a user snapshot beyond the command's own: one per SNAPSHOT_ORDERS_PER_TOKEN open orders in all,
   * at most the key's read burst less one (a fresh connection, whose upgrade took one, can always subscribe);
   * rate_limited when the bucket cannot pay them (it then pays nothing).
   */
  private chargeSnapshot(conn: Conn): void {
    const views = this.lane.core.views;
    const cap = keyLimits(views, conn.keyRow).read.burst - 1;
    const extra = Math.min(cap, Math.ceil(views.openOrderCount(conn.account) / SNAPSHOT_ORDERS_PER_TOKEN)) - 1;
    if (extra <= 0) return;
    // The command took its own token: refused, it goes back, and the wait is until the whole snapshot fits.
    const wait = this.lane.buckets.take(conn, BUCKET_READ, extra, Date.now(), 1);
    if (wait > 0) {
      throw new WsCommandError('rate_limited', `a user snapshot of this account costs ${extra + 1} read tokens`, {
        retry_after_ms: String(wait),
      });
    }
  }

  private addSub(conn: Conn, sub: Sub): void {
    conn.subs.set(sub.sid, sub);
    this.subscriptions++;
    this.startPump();
  }

  /** Ends one subscription (its key's count is released by the caller). */
  private dropSub(conn: Conn, sub: Sub, nowMs: number): void {
    this.subscriptions--;
    this.counts.remove(conn.keyRow, KEY_SUBSCRIPTIONS, 1);
    if (sub.channel === 'user') {
      this.fanout.removeUserSub(sub.user, nowMs);
      conn.user = null;
      return;
    }
    if (conn.open && conn.ws !== null) conn.ws.unsubscribe(sub.stream.topic);
    this.fanout.leave(sub.stream);
  }

  private unsubscribe(conn: Conn, id: number | null, sids: number[]): void {
    for (const s of sids) if (!conn.subs.has(s)) throw new WsCommandError('unknown_sid', `no subscription ${s} on this connection`);
    const now = performance.now();
    for (const s of sids) {
      const sub = conn.subs.get(s)!;
      conn.subs.delete(s);
      if (sub.channel !== 'user') conn.byTopic.delete(sub.stream.topic);
      this.dropSub(conn, sub, now);
    }
    this.fanout.queue(conn, reply(id, 'ok', { sids }));
  }

  private update(conn: Conn, id: number | null, c: UpdateCmd): void {
    const sub = conn.subs.get(c.sid);
    if (sub === undefined) throw new WsCommandError('unknown_sid', `no subscription ${c.sid} on this connection`);
    if (c.action === 'get_snapshot') {
      if (sub.channel === 'user') {
        this.chargeSnapshot(conn);
        this.fanout.queue(conn, reply(id, 'ok', { sid: c.sid, action: c.action }));
        this.fanout.sendUser(sub.user, 'user_snapshot', this.fanout.userSnapshotBody(conn.account, false));
        return;
      }
      if (sub.channel !== 'orderbook_delta') {
        throw new WsCommandError('bad_params', `channel ${sub.channel} has no snapshot (get_snapshot is for orderbook_delta and user)`);
      }
      this.fanout.queue(conn, reply(id, 'ok', { sid: c.sid, action: c.action }));
      this.fanout.queue(conn, this.fanout.orderbookSnapshot(sub.stream));
      return;
    }
    if (sub.channel === 'user' || !MARKET_CHANNELS.has(sub.channel) || sub.stream.market === 0) {
      throw new WsCommandError(
        'bad_params',
        `${c.action} needs the sid of a ${[...MARKET_CHANNELS].join(', ')} subscription to one market`,
      );
    }
    if (c.action === 'add_markets') {
      this.subscribe(conn, id, [sub.channel], c.market_ids, null);
      return;
    }
    // delete_markets: every listed market must be subscribed on this channel.
    const sids: number[] = [];
    for (const m of c.market_ids!) {
      const s = conn.byTopic.get(Fanout.topic(sub.channel, m));
      if (s === undefined) throw new WsCommandError('bad_params', `this connection has no ${sub.channel} subscription to market ${m}`);
      sids.push(s);
    }
    const now = performance.now();
    for (const s of sids) {
      const x = conn.subs.get(s)! as PublicSub;
      conn.subs.delete(s);
      conn.byTopic.delete(x.stream.topic);
      this.dropSub(conn, x, now);
    }
    this.fanout.queue(conn, reply(id, 'ok', { sid: c.sid, action: c.action, sids }));
  }

  // ---- writing ---------------------------------------------------------------------------

  private readonly scheduleFlush = (): void => {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(this.flushNow);
  };

  private readonly flushNow = (): void => {
    this.flushScheduled = false;
    this.flush(true);
  };

  /**
   * Publishes the queued public messages in order, writes each peer's
   * private queue, then performs pending closes. corkPeers: outside every
   * uWS callback (each peer's writes become one syscall).
   */
  private flush(corkPeers: boolean): void {
    const f = this.fanout;
    const n = f.msgs.length;
    if (n > 0) {
      const app = this.app;
      const topics = f.topics;
      const msgs = f.msgs;
      for (let i = 0; i < n; i++) app.publish(topics[i]!, msgs[i]!, false, false);
      topics.length = 0;
      msgs.length = 0;
    }
    const peers = f.peers;
    if (peers.length > 0) {
      for (let i = 0; i < peers.length; i++) {
        const conn = peers[i] as Conn;
        conn.queued = false;
        const ws = conn.ws;
        if (!conn.open || ws === null) {
          conn.out.length = 0;
          continue;
        }
        if (corkPeers) ws.cork(() => this.writeQueue(conn, ws));
        else this.writeQueue(conn, ws);
      }
      peers.length = 0;
    }
    this.runCloses();
  }

  /** Writes a connection's queue now (its own callback, or a flush). */
  private writeOut(conn: Conn): void {
    if (conn.queued || conn.out.length > 0) {
      const ws = conn.ws;
      if (conn.open && ws !== null) this.writeQueue(conn, ws);
      // It stays in fanout.peers if it was there; the next flush finds an empty queue.
    }
  }

  private writeQueue(conn: Conn, ws: WebSocket<{ conn: Conn }>): void {
    const out = conn.out;
    // Under the limit before this batch: the messages written when it was over are all sent (asked only while an
    // allowance stands, so the order lanes' answer batches make no extra call into uWS).
    if (conn.allowance > 0 && ws.getBufferedAmount() <= this.cfg.slow_consumer_bytes) conn.allowance = 0;
    for (let i = 0; i < out.length; i++) {
      const x = out[i]!;
      let sent: number;
      if (typeof x === 'string') {
        if (x.length > conn.allowance) conn.allowance = x.length; // characters: the large messages (snapshots) are ASCII
        sent = ws.send(x, false, false);
      } else {
        // uWS copies the bytes: the batch starts over for the next answers.
        sent = ws.send(x.bytes(), true, false);
        x.reset();
        conn.written(x);
      }
      // 2 = dropped by uWS's own limit: never leave a client silently behind.
      if (sent === 2) {
        out.length = 0;
        this.slow(conn);
        return;
      }
    }
    out.length = 0;
    this.checkBacklog(conn, ws);
  }

  /** 4008 when the unsent bytes pass slow_consumer_bytes beyond the largest message being sent. */
  private checkBacklog(conn: Conn, ws: WebSocket<{ conn: Conn }>): void {
    const buffered = ws.getBufferedAmount();
    const limit = this.cfg.slow_consumer_bytes;
    if (buffered <= limit) conn.allowance = 0;
    else if (buffered > limit + conn.allowance) this.slow(conn);
  }

  /** Sends one reply at once, inside the connection's own callback. */
  private writeDirect(conn: Conn, msg: string): void {
    this.fanout.queue(conn, msg);
    this.writeOut(conn);
  }

  private slow(conn: Conn): void {
    this.slowClosed++;
    this.end(conn, WsClose.slow_consumer, `slow consumer: more than ${this.cfg.slow_consumer_bytes} bytes unsent`);
  }

  private runCloses(): void {
    const c = this.closing;
    if (c.length === 0) return;
    const list = c.splice(0, c.length);
    for (const { conn, code, reason } of list) {
      if (!conn.open || conn.ws === null) continue;
      if (code === WsClose.key_revoked) this.revokedClosed++;
      // end() runs the close handler at once: the connection leaves every stream.
      conn.ws.end(code, reason);
    }
  }

  private readonly sweep = (): void => {
    // Also takes the allowance of a connection back under the limit (its large message sent): public channels write
    // through uWS topics, not writeQueue.
    for (const conn of this.conns) {
      if (conn.open && conn.ws !== null) this.checkBacklog(conn, conn.ws);
    }
    this.runCloses();
    const now = performance.now();
    if (now - this.lastExpire >= EXPIRE_MS) {
      this.lastExpire = now;
      this.fanout.expireLogs(now);
    }
  };

  // ---- the pump ----------------------------------------------------------------------------

  private startPump(): void {
    if (this.pumping || this.stopped) return;
    this.pumping = true;
    this.emptyPolls = 0;
    setImmediate(this.poll);
  }

  private readonly poll = (): void => {
    if (this.stopped) {
      this.pumping = false;
      return;
    }
    const n = this.lane.core.drain();
    if (this.deferred.length > 0 && !this.fanout.midCommand) {
      // What this drain rendered goes out first, as in onMessage: a deferred subscribe's snapshot covers it.
      this.flush(true);
      this.runDeferred();
    }
    this.flush(true);
    if (this.subscriptions === 0 && this.deferred.length === 0) {
      this.pumping = false;
      return;
    }
    if (n > 0) {
      this.emptyPolls = 0;
      setImmediate(this.poll);
      return;
    }
    // Spin a few turns only after work: a park that timed out with nothing to do parks again at once.
    if (this.emptyPolls < SPIN_POLLS) {
      this.emptyPolls++;
      setImmediate(this.poll);
      return;
    }
    // Parked on the bell (PARK_MS: a safety net; the journal rings the bell when events become durable).
    if (!this.watch.watch(PARK_MS)) setImmediate(this.poll);
  };

  private runDeferred(): void {
    const list = this.deferred.splice(0, this.deferred.length);
    for (const { conn, env } of list) {
      if (!conn.open) continue;
      this.execute(conn, env);
    }
  }
}

/** Registers the WebSocket lane on a gateway thread's App; call before the catch-all route. */
export function mountWs(app: TemplatedApp, opts: WsLaneOptions): WsLane {
  const lane = new WsLane(app, opts);
  lane.mount();
  return lane;
}

/** The id of a command that failed to parse, if one can be read. */
function lenientId(text: string): number | null {
  try {
    return commandId(JSON.parse(text));
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  }
}
