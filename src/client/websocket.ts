// DxWebSocket: the client of the WebSocket lane (/v1/ws): a signed upgrade,
// the data channels (subscribe, data messages delivered with the channel and
// market they belong to), JSON order entry (the REST bodies, errors thrown as
// DxApiError), and staying connected: after an unexpected close it reconnects
// with exponential backoff (with jitter), subscribes again to everything it
// had, and resumes the user channel from the last exchange seq it delivered
// (resume_from_seq; the exchange answers resumed: false with a fresh
// user_snapshot when it no longer holds what was missed). Commands in flight
// when a connection drops are failed with DxConnectionLost: their outcome is
// unknown (look placements up by client_order_id). Runs in the caller's
// thread, over the `ws` package (Node 20 has no WebSocket client).

import WebSocket from 'ws';
import { DxApiError } from './errors.js';
import { authHeaders, decodeSecret } from './sign.js';
import type {
  BatchCancelResult, BatchPlaceResult, CancelAllQuery, CancelResult, DecreaseResult, ErrorBody, OrderRequest, Placement, SequencedAck, U64,
  WsDataMessage, WsErrorBody, WsReply, WsServerMessage,
} from './types.js';

/** The close code of a revoked key's connections; the client does not reconnect after it. */
export const WS_CLOSE_KEY_REVOKED = 4003;

/** Sockets corked until the end of the current turn (sendInTurn). */
const corkedThisTurn = new WeakSet<WebSocket>();

/**
 * Sends one text frame; the frames sent on a socket in one turn of the event loop leave in one write: the socket
 * stays corked until the turn ends (process.nextTick). A burst of commands then costs one system call instead of one
 * per frame (in the ws_orders benchmark's client, 3.2-3.8 against 7.5-8.5 µs of CPU per placement). `_socket` is the
 * ws package's net.Socket; without one the frame is sent as it is. The benchmark's own client sends with it too.
 */
export function sendInTurn(ws: WebSocket, text: string): void {
  if (!corkedThisTurn.has(ws)) {
    const socket = (ws as unknown as { _socket?: { cork(): void; uncork(): void } | null })._socket;
    if (socket) {
      socket.cork();
      corkedThisTurn.add(ws);
      process.nextTick(() => {
        corkedThisTurn.delete(ws);
        socket.uncork();
      });
    }
  }
  ws.send(text);
}

/** A command failed because the connection dropped before its answer: it may or may not have taken effect. */
export class DxConnectionLost extends Error {
  constructor(what: string) {
    super(`${what}: the WebSocket connection was lost before the answer; the outcome is unknown`);
    this.name = 'DxConnectionLost';
  }
}

/** An error reply `{type: "error", msg: {code, name, msg}}` of the lane's own commands (subscribe, start_binary, ...). */
export class DxWsError extends Error {
  constructor(readonly code: number, readonly codeName: string, message: string, readonly msg: WsErrorBody) {
    super(`${codeName} (${code}): ${message}`);
    this.name = 'DxWsError';
  }

  static of(body: WsErrorBody): DxWsError {
    return new DxWsError(body.code, body.name, body.msg, body);
  }
}

/** A text message of the lane (src/wire/ws.ts declares each): narrow on `type` to read its msg. */
export type WsMessage = WsServerMessage;

export interface DxWebSocketOptions {
  /** The REST base (`http://host:port`) or the lane's own URL (`ws://host:port/v1/ws`). */
  url: string;
  keyId: number;
  /** The 32 secret bytes, or their base64 text. */
  secret: Uint8Array | string;
  /** Reconnect after an unexpected close (default true), with backoff from minMs doubling up to maxMs. */
  reconnect?: boolean;
  backoff?: { minMs?: number; maxMs?: number };
  /** Clock for the signature's timestamp, Unix ms. */
  now?: () => number;
  /**
   * Liveness: a ping every keepaliveMs (default 10 s); a connection from which nothing (a message, ping or pong) arrived
   * over a whole period is dead and is ended (then reconnected). 0: none. Also the handshake's timeout.
   */
  keepaliveMs?: number;
}

/** A subscription as the client remembers it, to subscribe again after a reconnect. */
export interface Subscription {
  channel: string;
  /** The market of a per-market stream; 0 for oracle, user and all-market streams. */
  market_id: number;
  /** The sid on the current connection (changes with every reconnect). */
  sid: number;
}

export type DataHandler = (m: WsDataMessage, sub: Subscription) => void;

interface Held {
  resolve: (m: WsReply) => void;
  reject: (e: Error) => void;
  what: string;
}

interface Wanted {
  channel: string;
  market_ids?: number[];
}

export class DxWebSocket {
  private ws: WebSocket | null = null;
  private readonly secret: Uint8Array;
  private readonly target: string;
  private readonly base: string;
  private nextId = 1;
  private readonly held = new Map<number, Held>();
  private readonly wanted: Wanted[] = [];
  private readonly bySid = new Map<number, Subscription>();
  /** Sids this connection asked to end: a later `existing` reply of one is not ended twice (a new subscription may reuse one). */
  private readonly endedSids = new Set<number>();
  private readonly handlers: DataHandler[] = [];
  private readonly binaryHandlers: ((frame: Buffer) => void)[] = [];
  private readonly openHandlers: ((reconnected: boolean) => void | Promise<void>)[] = [];
  private readonly closeHandlers: ((code: number) => void)[] = [];
  private closing = false;
  /** The socket whose handshake is under way (close() abandons it). */
  private connecting: WebSocket | null = null;
  private attempt = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  /**
   * The highest exchange seq of which every user-channel message was delivered (resume_from_seq after a reconnect); 0
   * before any. A command's messages share its seq (a mass cancel's orders, a fill's order, position and balance), so a
   * seq is complete only once a later one (or a snapshot at it) arrives.
   */
  userSeq = 0;
  /** The seq whose messages are arriving now (not known complete), and how many of them were delivered. */
  private groupSeq = 0;
  private groupDelivered = 0;
  /** After a resume from userSeq: the messages of groupSeq the replay sends again first, which were delivered before. */
  private skipLeft = 0;
  /** Connections opened so far (1 after connect(), +1 per reconnect). */
  connections = 0;

  constructor(private readonly o: DxWebSocketOptions) {
    this.secret = decodeSecret(o.secret);
    const u = new URL(o.url);
    u.protocol = u.protocol === 'https:' || u.protocol === 'wss:' ? 'wss:' : 'ws:';
    if (u.pathname === '/' || u.pathname === '') u.pathname = '/v1/ws';
    this.target = u.pathname + u.search;
    this.base = `${u.protocol}//${u.host}`;
  }

  /** Opens the first connection; rejects with DxApiError when the upgrade is refused (401, 403, 429, 503). */
  connect(): Promise<void> {
    // A connection still closing (close frame exchanged, its close event to come) is given up now: what it held fails.
    const old = this.ws;
    if (old !== null && old.readyState !== WebSocket.OPEN) {
      this.onClose(old, (old as unknown as { _closeCode?: number })._closeCode ?? 1006);
      old.terminate();
    }
    this.closing = false;
    // Between reconnects (the backoff timer pending, or its handshake under way) this connect takes the reconnect's place:
    // opening one beside it would leave one of the two orphaned (open, fed to the handlers, never closed).
    const replacing = this.timer !== null || this.connecting !== null;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const c = this.connecting;
    this.connecting = null;
    c?.terminate();
    const p = this.open(false, replacing);
    // In the reconnect's place, a failure leaves the next attempt to the backoff, as the reconnect's own would.
    if (replacing) p.catch(() => (this.ws === null ? this.scheduleReconnect() : undefined));
    return p;
  }

  private open(reconnected: boolean, replacing = false): Promise<void> {
    return new Promise((resolve, reject) => {
      const headers = authHeaders(this.o.keyId, this.secret, 'GET', this.target, '', (this.o.now ?? Date.now)());
      const keepMs = this.o.keepaliveMs ?? 10_000;
      const ws = new WebSocket(this.base + this.target, {
        headers: { ...headers }, perMessageDeflate: false, ...(keepMs > 0 ? { handshakeTimeout: keepMs } : {}),
      });
      this.connecting = ws;
      let settled = false;
      ws.once('unexpected-response', (req, res) => {
        const chunks: Buffer[] = [];
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('end', () => {
          if (this.connecting === ws) this.connecting = null;
          res.socket.destroy();
          req.destroy();
          settled = true;
          reject(refusal(res.statusCode ?? 0, Buffer.concat(chunks).toString('utf8')));
        });
      });
      ws.once('error', (e) => {
        if (this.connecting === ws) this.connecting = null;
        if (!settled) {
          settled = true;
          // close() abandoned the handshake: the same error as a connection lost, not ws's own.
          reject(this.closing ? new DxConnectionLost('connect') : e);
        }
      });
      ws.once('open', () => {
        settled = true;
        if (this.connecting === ws) this.connecting = null;
        if (this.closing) {
          // close() was called while this handshake was under way: it must not come back to life.
          ws.terminate();
          reject(new DxConnectionLost('connect'));
          return;
        }
        this.ws = ws;
        this.connections++;
        ws.on('message', (data: Buffer, isBinary: boolean) => this.onMessage(data, isBinary));
        ws.on('close', (code: number) => this.onClose(ws, code));
        ws.on('error', () => { /* a close follows */ });
        if (keepMs > 0) keepAlive(ws, keepMs);
        this.restore(reconnected).then(() => {
          this.attempt = 0;
          resolve();
        }, (e: unknown) => {
          // A subscription refused again (rate_limited, a cap): this connection would stay silent. End it; its close
          // schedules the next attempt, with a longer backoff.
          // The first connect() rejects: nothing of it may stay open or come back (the caller holds no live client).
          if (!reconnected && !replacing) this.stop();
          ws.terminate();
          reject(e);
        });
      });
    });
  }

  /** After a (re)connect: subscribe again to everything wanted, the user channel resumed, then tell the open handlers. */
  private async restore(reconnected: boolean): Promise<void> {
    this.bySid.clear();
    this.endedSids.clear();
    // A copy: unsubscribe() may take entries out of `wanted` while this awaits.
    for (const w of [...this.wanted]) {
      if (!this.wanted.includes(w)) continue;
      await this.endUnwanted(await this.subscribeNow(w, reconnected));
    }
    for (const h of this.openHandlers) await h(reconnected);
  }

  private onMessage(data: Buffer, isBinary: boolean): void {
    if (isBinary) {
      for (const h of this.binaryHandlers) h(data);
      return;
    }
    const m = JSON.parse(data.toString('utf8')) as WsServerMessage;
    if (!('sid' in m)) {
      // A reply (a data message is the one kind with a sid).
      const h = m.id === null ? undefined : this.held.get(m.id);
      if (h !== undefined) {
        this.held.delete(m.id!);
        h.resolve(m);
      }
      return;
    }
    const sub = this.bySid.get(m.sid);
    if (sub === undefined) return;
    if (sub.channel === 'user' && !this.userMessage(m)) return;
    for (const h of this.handlers) h(m, sub);
  }

  /**
   * The user channel's resume_from_seq: the last whole seq. The replay sends the partly delivered one (groupSeq) again,
   * and the messages of it delivered before are skipped (userMessage).
   */
  resumePoint(): string {
    this.skipLeft = this.groupSeq > this.userSeq ? this.groupDelivered : 0;
    return String(this.userSeq);
  }

  /** Tracks the user channel's resume point; false for a message a resume sent again (delivered before the drop). */
  private userMessage(m: WsMessage): boolean {
    if (m.type === 'user_snapshot') {
      // Everything up to its as_of_seq, whole.
      const s = Number((m.msg as { as_of_seq: string }).as_of_seq);
      if (s > this.userSeq) this.userSeq = s;
      this.groupSeq = 0;
      this.groupDelivered = 0;
      this.skipLeft = 0;
      return true;
    }
    const s = Number('seq' in m.msg ? m.msg.seq : 0);
    if (s === this.groupSeq && this.skipLeft > 0) {
      this.skipLeft--;
      return false;
    }
    this.skipLeft = 0;
    if (s > this.groupSeq) {
      if (this.groupSeq > this.userSeq) this.userSeq = this.groupSeq;
      this.groupSeq = s;
      this.groupDelivered = 0;
    }
    this.groupDelivered++;
    return true;
  }

  private onClose(ws: WebSocket, code: number): void {
    if (this.ws !== ws) return;
    this.ws = null;
    // 4003: the key was revoked, for good (docs/websocket.md): every reconnect would be refused 401.
    if (code === WS_CLOSE_KEY_REVOKED) this.closing = true;
    for (const [id, h] of this.held) {
      this.held.delete(id);
      h.reject(new DxConnectionLost(h.what));
    }
    for (const h of this.closeHandlers) h(code);
    this.scheduleReconnect();
  }

  /** The next attempt after min x 2^attempt ms (at most max), each wait jittered down by up to half. */
  private scheduleReconnect(): void {
    if (this.closing || this.o.reconnect === false || this.timer !== null || this.connecting !== null) return;
    const min = this.o.backoff?.minMs ?? 250;
    const max = this.o.backoff?.maxMs ?? 30_000;
    const wait = Math.min(max, min * 2 ** this.attempt++) * (0.5 + Math.random() / 2);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.closing) return;
      this.open(true).catch(() => {
        // Refused or unreachable: try again later. A socket that opened and then failed closes, which schedules too.
        if (this.ws === null) this.scheduleReconnect();
      });
    }, wait);
  }

  /** Data messages of every subscription, with the subscription they belong to. */
  onData(h: DataHandler): void {
    this.handlers.push(h);
  }

  /** Binary frames (order entry answers; see DxOrderStream). */
  onBinary(h: (frame: Buffer) => void): void {
    this.binaryHandlers.push(h);
  }

  /** Called after every (re)connect once the subscriptions are restored; `reconnected` false the first time. */
  onOpen(h: (reconnected: boolean) => void | Promise<void>): void {
    this.openHandlers.push(h);
  }

  /** Called when a connection is lost or closed (before any reconnect), with the close code (4003: key revoked, no reconnect). */
  onDisconnect(h: (code: number) => void): void {
    this.closeHandlers.push(h);
  }

  get connected(): boolean {
    return this.ws !== null && this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends {id, cmd, params} and resolves with its first reply (subscribed, ok, error or order_result). */
  command(cmd: string, params?: Record<string, unknown>): Promise<WsReply> {
    const ws = this.ws;
    if (ws === null) return Promise.reject(new DxConnectionLost(cmd));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.held.set(id, { resolve, reject, what: cmd });
      sendInTurn(ws, JSON.stringify(params === undefined ? { id, cmd } : { id, cmd, params }));
    });
  }

  /** Sends a binary frame (DxOrderStream); false when there is no connection. */
  sendBinary(frame: Uint8Array): boolean {
    if (this.ws === null) return false;
    this.ws.send(frame, { binary: true });
    return true;
  }

  /**
   * Subscribes to channels (market_ids for the per-market ones) and
   * remembers them for reconnects. Resolves with the subscriptions made;
   * rejects with DxWsError when refused.
   */
  async subscribe(channels: string[], market_ids?: number[]): Promise<Subscription[]> {
    const out: Subscription[] = [];
    // The exchange answers a market named twice once: name it once, or the replies counted would never all arrive.
    if (market_ids !== undefined) market_ids = [...new Set(market_ids)];
    for (const channel of channels) {
      const w: Wanted = market_ids !== undefined && channel !== 'user' && channel !== 'oracle' ? { channel, market_ids } : { channel };
      // Wanted from now on, so that an unsubscribe() while the subscribe is in flight takes it back.
      this.wanted.push(w);
      let subs: Subscription[];
      try {
        subs = await this.subscribeNow(w, false);
      } catch (e) {
        const i = this.wanted.indexOf(w);
        if (i >= 0) this.wanted.splice(i, 1);
        throw e;
      }
      out.push(...await this.endUnwanted(subs));
    }
    return out;
  }

  /** The streams of `subs` still wanted; ends the others (unsubscribed while their subscribe was in flight, their sid unknown). */
  private async endUnwanted(subs: Subscription[]): Promise<Subscription[]> {
    const stale = subs.filter((s) => !this.isWanted(s));
    // One already ended on this connection (an `existing` reply after its unsubscribe): forget it, do not end it again.
    for (const s of stale) if (this.endedSids.has(s.sid)) this.bySid.delete(s.sid);
    const live = stale.filter((s) => !this.endedSids.has(s.sid));
    if (live.length > 0) await this.unsubscribe(live);
    return stale.length === 0 ? subs : subs.filter((s) => this.isWanted(s));
  }

  /**
   * Ends subscriptions (as subscribe() returned them, or as data messages carry them) and forgets them, so that a
   * reconnect does not make them again. Resolves once the exchange answered; rejects with DxWsError when refused.
   */
  async unsubscribe(subs: readonly Pick<Subscription, 'channel' | 'market_id'>[]): Promise<void> {
    const sids: number[] = [];
    const ending: Subscription[] = [];
    for (const s of subs) {
      for (let i = this.wanted.length - 1; i >= 0; i--) {
        const w = this.wanted[i]!;
        if (w.channel !== s.channel) continue;
        if (w.market_ids === undefined) {
          if (s.market_id === 0) this.wanted.splice(i, 1);
        } else if (w.market_ids.includes(s.market_id)) {
          w.market_ids = w.market_ids.filter((m) => m !== s.market_id);
          if (w.market_ids.length === 0) this.wanted.splice(i, 1);
        }
      }
      // The sid on the current connection (it changes with every reconnect).
      for (const [sid, cur] of this.bySid) {
        if (cur.channel === s.channel && cur.market_id === s.market_id) {
          sids.push(sid);
          ending.push(cur);
          this.bySid.delete(sid);
        }
      }
    }
    if (sids.length === 0 || this.ws === null) return;
    for (const sid of sids) this.endedSids.add(sid);
    const ws = this.ws;
    const r = await this.command('unsubscribe', { sids });
    if (r.type === 'error') {
      // Refused (rate_limited, say): the streams are still on, so a retry after retry_after_ms must find their sids.
      if (this.ws === ws) {
        for (const cur of ending) {
          this.endedSids.delete(cur.sid);
          this.bySid.set(cur.sid, cur);
        }
      }
      throw DxWsError.of(r.msg);
    }
    // The replies to every command sent before this one came first, and the `existing` checks they lead to
    // (endUnwanted) run in this turn's microtasks: after them no reply can name these sids as existing, so they are
    // forgotten (each cycle of a stream gets a new sid: kept, they would grow with the connection's life).
    setImmediate(() => {
      if (this.ws === ws) for (const sid of sids) this.endedSids.delete(sid);
    });
  }

  private isWanted(s: Pick<Subscription, 'channel' | 'market_id'>): boolean {
    return this.wanted.some(
      (w) => w.channel === s.channel && (w.market_ids === undefined ? s.market_id === 0 : w.market_ids.includes(s.market_id)),
    );
  }

  private async subscribeNow(w: Wanted, resume: boolean): Promise<Subscription[]> {
    const params: Record<string, unknown> = { channels: [w.channel] };
    if (w.market_ids !== undefined) params.market_ids = w.market_ids;
    if (w.channel === 'user' && resume && this.userSeq > 0) params.resume_from_seq = this.resumePoint();
    const ws = this.ws;
    if (ws === null) throw new DxConnectionLost('subscribe');
    // The replies come first, then each stream's data: register each sid as its reply arrives.
    const id = this.nextId++;
    const count = w.market_ids?.length ?? 1;
    const subs: Subscription[] = [];
    await new Promise<void>((resolve, reject) => {
      const take = (m: WsReply): void => {
        if (m.type === 'error') {
          reject(DxWsError.of(m.msg));
          return;
        }
        if (m.type !== 'subscribed') {
          reject(new Error(`subscribe: unexpected ${m.type} reply`));
          return;
        }
        const sub: Subscription = { channel: m.msg.channel, market_id: m.msg.market_id ?? 0, sid: m.msg.sid };
        // A new subscription (not `existing`) may carry a sid this connection ended before: the stream outlived it.
        if (m.msg.existing !== true) this.endedSids.delete(sub.sid);
        this.bySid.set(sub.sid, sub);
        subs.push(sub);
        if (subs.length === count) resolve();
        else this.held.set(id, { resolve: take, reject, what: 'subscribe' });
      };
      this.held.set(id, { resolve: take, reject, what: 'subscribe' });
      sendInTurn(ws, JSON.stringify({ id, cmd: 'subscribe', params }));
    });
    return subs;
  }

  // ---- JSON order entry: the REST bodies; errors as DxApiError -------------------------

  private async order<T>(cmd: string, params: Record<string, unknown>): Promise<T> {
    const r = await this.command(cmd, params);
    if (r.type === 'error') throw DxWsError.of(r.msg);
    if (r.type === 'order_result' && 'error' in r.msg) throw new DxApiError(r.status, r.msg.error, `ws ${cmd}`);
    return r.msg as T;
  }

  placeOrder(req: OrderRequest): Promise<Placement> {
    return this.order('place_order', { ...req });
  }

  /** Up to 20 orders as independent commands; index-aligned results (items may be {error}). */
  batchPlaceOrders(orders: OrderRequest[]): Promise<BatchPlaceResult> {
    return this.order('batch_place_orders', { orders });
  }

  cancelOrder(orderId: U64): Promise<CancelResult> {
    return this.order('cancel_order', { order_id: orderId });
  }

  batchCancelOrders(orderIds: U64[]): Promise<BatchCancelResult> {
    return this.order('batch_cancel_orders', { order_ids: orderIds });
  }

  decreaseOrder(orderId: U64, newQty: number): Promise<DecreaseResult> {
    return this.order('decrease_order', { order_id: orderId, new_qty: newQty });
  }

  cancelAll(q: CancelAllQuery = {}): Promise<SequencedAck> {
    return this.order('cancel_all', { ...q });
  }

  /** No more reconnects, and a handshake under way is abandoned. */
  private stop(): void {
    this.closing = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const c = this.connecting;
    this.connecting = null;
    c?.terminate();
  }

  /** Closes for good (no reconnect); commands still held fail with DxConnectionLost. */
  async close(): Promise<void> {
    this.stop();
    const ws = this.ws;
    if (ws === null) return;
    await new Promise<void>((resolve) => {
      ws.once('close', () => resolve());
      ws.close(1000);
      setTimeout(() => {
        ws.terminate();
        resolve();
      }, 2000).unref();
    });
  }
}

/** A refused upgrade as the DxApiError its envelope describes. */
function refusal(status: number, text: string): DxApiError {
  try {
    const body = JSON.parse(text) as { error?: ErrorBody };
    if (body.error !== undefined) return new DxApiError(status, body.error, 'GET /v1/ws');
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
  }
  return new DxApiError(
    status,
    { code: `http_${status}`, num: null, origin: 'client', message: text.slice(0, 200), details: null },
    'GET /v1/ws',
  );
}

/**
 * Pings every `ms` and ends the connection when nothing (a message, ping or
 * pong) came over a whole period: a link that drops everything gives no
 * close, and a subscriber that only reads would otherwise wait for ever. The
 * close that follows reconnects.
 */
function keepAlive(ws: WebSocket, ms: number): void {
  let heard = true;
  const hear = (): void => {
    heard = true;
  };
  ws.on('message', hear).on('ping', hear).on('pong', hear);
  const beat = setInterval(() => {
    if (!heard) {
      ws.terminate();
      return;
    }
    heard = false;
    ws.ping();
  }, ms);
  beat.unref();
  ws.once('close', () => clearInterval(beat));
}
