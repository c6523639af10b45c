// lane: the trader page's WebSocket client of /v1/ws. Signs in with the
// query form (browsers cannot set headers on an upgrade), subscribes streams
// on demand, routes data messages to their handlers by sid, and checks each
// subscription's per-message seq: a gap on `orderbook_delta` or `user` asks
// for a fresh snapshot (update_subscription get_snapshot) and drops messages
// until it arrives; a gap elsewhere is reported so the page re-reads REST.
// A dropped connection is reopened with a fresh signature and every
// subscription is made again (new snapshots). A revoked key (close 4003)
// stops it. Browser main thread.

import type { WsDataMessage, WsServerMessage } from '../../client/types.js';

/** What signs the WebSocket sign-in (SignedApi): a fresh URL each time. */
export interface WsSigner {
  wsUrl(): Promise<string>;
}

/** A message is missing on a channel without snapshots (seq: the one that came instead); the page re-reads REST. */
export interface LaneGap {
  type: 'gap';
  sid: number;
  seq: number;
}

/** A data message of the subscription (narrow on `type` to read its msg), or a gap. */
export type Handler = (m: WsDataMessage | LaneGap) => void;

export type LaneStatus = 'connecting' | 'live' | 'reconnecting' | 'revoked' | 'stopped';

const SNAPSHOTS = new Set(['orderbook_snapshot', 'user_snapshot']);
const RESYNCABLE = new Set(['orderbook_delta', 'user']);

interface Sub {
  channel: string;
  marketId: number | null;
  handlers: Set<Handler>;
  sid: number | null;
  /** -1: the next message starts the count; -2: waiting for a requested snapshot. */
  lastSeq: number;
}

export class Lane {
  status: LaneStatus = 'connecting';
  onStatus: (s: LaneStatus) => void = () => {};
  /** A command refused by the server (a bug or a market that vanished): shown, not thrown. */
  onError: (text: string) => void = () => {};
  private ws: WebSocket | null = null;
  private readonly subs = new Map<string, Sub>();
  private readonly bySid = new Map<number, Sub>();
  private readonly pending = new Map<number, Sub>();
  /** get_snapshot commands in flight, by id. */
  private readonly asks = new Map<number, Sub>();
  /** unsubscribe commands in flight, by id: the sid each ends and its stream's key. */
  private readonly ends = new Map<number, { sid: number; key: string }>();
  /** Sids this connection has asked to end: a later `existing` reply of one is not ended twice (a new subscription may reuse one). */
  private readonly ended = new Set<number>();
  private nextId = 1;
  private retryMs = 500;
  private stopped = false;
  private timer: ReturnType<typeof setTimeout> | null = null;

  constructor(private readonly api: WsSigner) {}

  start(): void {
    void this.connect();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.ws?.close(1000, 'signed out');
    this.setStatus('stopped');
  }

  /** Subscribes a handler to a stream; returns the function that ends it. */
  subscribe(channel: string, marketId: number | null, handler: Handler): () => void {
    const key = `${channel}:${marketId ?? '*'}`;
    let sub = this.subs.get(key);
    if (sub === undefined) {
      sub = { channel, marketId, handlers: new Set(), sid: null, lastSeq: -1 };
      this.subs.set(key, sub);
      this.sendSubscribe(sub);
    }
    sub.handlers.add(handler);
    const s = sub;
    return () => {
      s.handlers.delete(handler);
      if (s.handlers.size > 0) return;
      this.subs.delete(key);
      if (s.sid !== null) {
        this.bySid.delete(s.sid);
        this.end(s.sid, key);
      }
    };
  }

  /** Ends a stream on this connection, once. */
  private end(sid: number, key: string): void {
    if (this.ended.has(sid)) return;
    this.ended.add(sid);
    const id = this.nextId++;
    this.ends.set(id, { sid, key });
    this.send({ id, cmd: 'unsubscribe', params: { sids: [sid] } });
  }

  private setStatus(s: LaneStatus): void {
    this.status = s;
    this.onStatus(s);
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    let url: string;
    try {
      url = await this.api.wsUrl();
    } catch (e) {
      this.onError(`cannot sign the WebSocket sign-in: ${(e as Error).message}`);
      return;
    }
    // Stopped (signed out) while the URL was being signed: open nothing with the key.
    if (this.stopped) return;
    const ws = new WebSocket(url);
    this.ws = ws;
    ws.onopen = () => {
      this.retryMs = 500;
      this.setStatus('live');
      this.bySid.clear();
      this.pending.clear();
      this.asks.clear();
      this.ends.clear();
      this.ended.clear();
      for (const sub of this.subs.values()) {
        sub.sid = null;
        sub.lastSeq = -1;
        this.sendSubscribe(sub);
      }
    };
    ws.onmessage = (ev) => this.onMessage(ev.data as string);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      if (this.stopped) return;
      if (ev.code === 4003) {
        this.setStatus('revoked');
        return;
      }
      this.setStatus('reconnecting');
      this.timer = setTimeout(() => void this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    };
  }

  private send(cmd: unknown): void {
    if (this.ws !== null && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(cmd));
  }

  private sendSubscribe(sub: Sub): void {
    if (this.ws === null || this.ws.readyState !== WebSocket.OPEN) return; // made on open
    const id = this.nextId++;
    this.pending.set(id, sub);
    const params: Record<string, unknown> = { channels: [sub.channel] };
    if (sub.marketId !== null) params.market_ids = [sub.marketId];
    this.send({ id, cmd: 'subscribe', params });
  }

  private onMessage(text: string): void {
    const m = JSON.parse(text) as WsServerMessage;
    if (m.type === 'subscribed') {
      const sub = m.id === null ? undefined : this.pending.get(m.id);
      if (m.id !== null) this.pending.delete(m.id);
      // A new subscription (not `existing`) may carry a sid this connection ended before: the stream outlived it.
      if (m.msg.existing !== true) this.ended.delete(m.msg.sid);
      const key = sub === undefined ? `${m.msg.channel}:${m.msg.market_id ?? '*'}` : `${sub.channel}:${sub.marketId ?? '*'}`;
      const current = sub === undefined ? undefined : this.subs.get(key);
      if (sub === undefined || current !== sub) {
        // Unsubscribed meanwhile: end the stream the server just made, unless the stream was subscribed again
        // (that later subscribe is answered with this same sid, `existing`, and keeps it).
        if (current === undefined) this.end(m.msg.sid, key);
        return;
      }
      sub.sid = m.msg.sid;
      this.bySid.set(sub.sid, sub);
      if (m.msg.existing === true && RESYNCABLE.has(sub.channel)) {
        // The stream's snapshot went to an earlier subscription of it: ask for one of our own.
        this.askSnapshot(sub);
      } else {
        sub.lastSeq = -1;
      }
      return;
    }
    if (m.type === 'error') {
      const sub = m.id === null ? undefined : (this.pending.get(m.id) ?? this.asks.get(m.id));
      const ending = m.id === null ? undefined : this.ends.get(m.id);
      if (m.id !== null) {
        this.pending.delete(m.id);
        this.asks.delete(m.id);
        this.ends.delete(m.id);
      }
      // An unsubscribe refused for want of a read token: sent again (else the stream keeps coming on this connection).
      if (ending !== undefined && m.msg.code === 8) this.endLater(ending.sid, ending.key, Number(m.msg.retry_after_ms ?? '1000'));
      // Refused for want of a read token: made again once one returns (else the stream stays silent for good).
      if (sub !== undefined && m.msg.code === 8) this.retryLater(sub, Number(m.msg.retry_after_ms ?? '1000'));
      this.onError(`WebSocket: ${m.msg.name ?? m.msg.code}: ${m.msg.msg}`);
      return;
    }
    if (m.type === 'ok' && m.id !== null) {
      this.asks.delete(m.id);
      // Every reply to a command sent before the unsubscribe came first: no later reply names its sid as existing.
      const ended = this.ends.get(m.id);
      if (ended !== undefined) this.ended.delete(ended.sid);
      this.ends.delete(m.id);
    }
    if (!('sid' in m)) return; // ok, order_result: nothing to route
    const sub = this.bySid.get(m.sid);
    if (sub === undefined) return;
    if (SNAPSHOTS.has(m.type)) {
      sub.lastSeq = m.seq;
    } else if (sub.lastSeq === -2) {
      return; // waiting for the snapshot asked for
    } else if (sub.lastSeq >= 0 && m.seq !== sub.lastSeq + 1) {
      this.onGap(sub, m.seq);
      if (RESYNCABLE.has(sub.channel)) return;
    } else {
      sub.lastSeq = m.seq;
    }
    for (const h of sub.handlers) h(m);
  }

  private askSnapshot(sub: Sub): void {
    sub.lastSeq = -2;
    const id = this.nextId++;
    this.asks.set(id, sub);
    this.send({ id, cmd: 'update_subscription', params: { sid: sub.sid, action: 'get_snapshot' } });
  }

  /** A subscribe or get_snapshot of a stream still shown, refused rate_limited: sent again after `ms` on the same connection. */
  private retryLater(sub: Sub, ms: number): void {
    const ws = this.ws;
    setTimeout(() => {
      if (this.stopped || this.ws !== ws || this.subs.get(`${sub.channel}:${sub.marketId ?? '*'}`) !== sub) return;
      if (sub.sid === null) this.sendSubscribe(sub);
      else if (sub.lastSeq === -2) this.askSnapshot(sub);
    }, retryDelay(ms));
  }

  /** An unsubscribe refused rate_limited: sent again after `ms` on the same connection (unless the stream is shown again). */
  private endLater(sid: number, key: string, ms: number): void {
    const ws = this.ws;
    this.ended.delete(sid);
    setTimeout(() => {
      // Shown again (its subscribe answered or still on its way, answered `existing` with this sid): kept.
      if (this.stopped || this.ws !== ws || this.bySid.has(sid) || this.subs.has(key)) return;
      this.end(sid, key);
    }, retryDelay(ms));
  }

  /** A message is missing: ask for a snapshot where the channel has one, else tell the handlers. */
  private onGap(sub: Sub, seq: number): void {
    if (RESYNCABLE.has(sub.channel)) {
      this.askSnapshot(sub);
      return;
    }
    sub.lastSeq = seq;
    const gap: LaneGap = { type: 'gap', sid: sub.sid!, seq };
    for (const h of sub.handlers) h(gap);
  }
}

/** The wait before a command refused rate_limited is sent again: its retry_after_ms, within 50 ms..10 s (1 s when unreadable). */
function retryDelay(ms: number): number {
  return Math.min(Math.max(Number.isFinite(ms) ? ms : 1000, 50), 10_000);
}
