// DxOrderStream: binary order entry over a DxWebSocket (native-layout/LAYOUT.md,
// "Binary order entry"). It agrees on the layout fingerprint with
// start_binary (again after every reconnect), encodes commands with
// FrameEncoder, sends every command issued in one turn of the event loop as
// one frame (up to the exchange's max_records_per_frame), and resolves each
// command with its EntryResult, matched by correlation id; answers may come
// in any order. A command whose connection drops before its answer fails
// with DxConnectionLost (its outcome is unknown: use client_order_id). Runs
// in the caller's thread.

import { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder, type EntryResultObject } from './binary_codec.js';
import type { CancelAllQuery, OrderRequest, U64 } from './types.js';
import { DxConnectionLost, DxWebSocket, DxWsError, type DxWebSocketOptions } from './websocket.js';

interface Waiting {
  resolve: (r: EntryResultObject) => void;
  reject: (e: Error) => void;
}

/**
 * The exchange answers a record by its correlation alone, and every stream on a connection sees every answer frame:
 * the streams sharing a DxWebSocket draw their correlations from one counter, so that none takes another's answer.
 */
const correlations = new WeakMap<DxWebSocket, { next: number }>();

export class DxOrderStream {
  private encoder: FrameEncoder | null = null;
  private readonly waiting = new Map<number, Waiting>();
  /** Correlations of the commands encoded but not yet sent. */
  private unsent: number[] = [];
  private readonly correlation: { next: number };
  private flushScheduled = false;
  private maxRecords = 1;
  /** The connection's account (start_binary's answer): header.account of every record. */
  account = 0;
  /** The exchange's cap on commands in flight per connection (start_binary's answer). */
  maxInFlight = 0;
  /** The exchange's layout_mismatch of the last reconnect's start_binary (binary entry refused there); null once agreed. */
  refusal: DxWsError | null = null;

  private constructor(readonly ws: DxWebSocket) {
    let c = correlations.get(ws);
    if (c === undefined) correlations.set(ws, (c = { next: 1 }));
    this.correlation = c;
    ws.onBinary((frame) => this.onFrame(frame));
  }

  /**
   * Opens a connection (or uses one), agrees on the layout, and keeps doing
   * so after every reconnect. Rejects with DxWsError layout_mismatch when
   * the exchange speaks another native layout than this client was built with.
   */
  static async open(o: DxWebSocketOptions | DxWebSocket): Promise<DxOrderStream> {
    const ws = o instanceof DxWebSocket ? o : new DxWebSocket(o);
    const s = new DxOrderStream(ws);
    // A stream whose open was refused stays out of the connection's later reconnects (its start would fail them all).
    let refused = false;
    // Commands sent on a connection that dropped cannot be answered on the next one.
    ws.onDisconnect(() => s.failUnanswered());
    ws.onOpen(async (reconnected) => {
      if (refused) return;
      try {
        await s.start();
      } catch (e) {
        // Another layout after a reconnect (the exchange came back from a deploy): binary entry stays refused on this
        // connection, which its subscriptions and JSON commands keep; this stream's commands fail with the refusal.
        if (!reconnected || !(e instanceof DxWsError && e.codeName === 'layout_mismatch')) throw e;
        s.refusal = e;
      }
    });
    try {
      if (!ws.connected) await ws.connect();
      else await s.start();
    } catch (e) {
      refused = true;
      throw e;
    }
    return s;
  }

  private async start(): Promise<void> {
    const r = await this.ws.command('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT });
    if (r.type === 'error') throw DxWsError.of(r.msg);
    if (r.type !== 'ok' || !('account_id' in r.msg)) throw new Error(`start_binary: unexpected reply ${JSON.stringify(r)}`);
    this.account = r.msg.account_id;
    this.maxRecords = r.msg.max_records_per_frame;
    this.maxInFlight = r.msg.max_in_flight;
    this.encoder = new FrameEncoder(this.account);
    this.refusal = null;
  }

  place(req: OrderRequest): Promise<EntryResultObject> {
    return this.issue((e, c) => e.place(c, req));
  }

  cancel(orderId: U64 | number): Promise<EntryResultObject> {
    return this.issue((e, c) => e.cancel(c, orderId));
  }

  decrease(orderId: U64 | number, newQty: number): Promise<EntryResultObject> {
    return this.issue((e, c) => e.decrease(c, orderId, newQty));
  }

  cancelAll(q: CancelAllQuery = {}): Promise<EntryResultObject> {
    return this.issue((e, c) => e.cancelAll(c, q));
  }

  /** Commands sent and not answered yet. */
  get inFlight(): number {
    return this.waiting.size;
  }

  private issue(encode: (e: FrameEncoder, correlation: number) => void): Promise<EntryResultObject> {
    const e = this.encoder;
    if (e === null || !this.ws.connected) return Promise.reject(this.refusal ?? new DxConnectionLost('binary order'));
    const c = this.correlation.next;
    try {
      encode(e, c);
    } catch (err) {
      // A field out of range: the encoder checked it before writing anything, so nothing of this command is sent.
      return Promise.reject(err);
    }
    this.correlation.next = (c + 1) >>> 0 || 1;
    this.unsent.push(c);
    if (e.count >= this.maxRecords) this.flush();
    else if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(() => this.flush());
    }
    return new Promise((resolve, reject) => this.waiting.set(c, { resolve, reject }));
  }

  /** Sends the commands encoded so far as one frame. */
  flush(): void {
    this.flushScheduled = false;
    const e = this.encoder;
    if (e === null || e.count === 0) return;
    const sent = this.ws.sendBinary(e.bytes());
    e.reset();
    const list = this.unsent;
    this.unsent = [];
    if (!sent) for (const c of list) this.fail(c);
  }

  private onFrame(frame: Buffer): void {
    for (const r of decodeResults(frame)) {
      const w = this.waiting.get(r.correlation);
      if (w === undefined) continue;
      this.waiting.delete(r.correlation);
      w.resolve(r);
    }
  }

  private fail(c: number): void {
    const w = this.waiting.get(c);
    if (w === undefined) return;
    this.waiting.delete(c);
    w.reject(new DxConnectionLost('binary order'));
  }

  private failUnanswered(): void {
    this.encoder = null;
    this.unsent = [];
    for (const c of [...this.waiting.keys()]) this.fail(c);
  }

  /** Closes the connection (no reconnect); unanswered commands fail with DxConnectionLost. */
  async close(): Promise<void> {
    await this.ws.close();
    this.failUnanswered();
  }
}
