// A WebSocket test client over the `ws` package (a real, independent client):
// signs the upgrade like any REST request (GET /v1/ws, empty body), keeps
// every received text message in arrival order (binary frames apart, as
// bytes), and lets a test wait for the next message matching a predicate.
// Every text message is checked against the declaration of its type
// (src/wire/ws.ts, closed, by the one wire-shape checker): a message that
// does not match fails the next wait and the close, so every WebSocket test
// checks the shape of every message it receives. Test process only.

import assert from 'node:assert/strict';
import WebSocket from 'ws';
import type { TestExchange } from '../support/exchange.js';
import { signHeaders } from '../support/harness.js';
import { wsMessageProblem } from '../support/wire_shapes.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Msg = any;

export interface UpgradeRefusal {
  status: number;
  body: Msg;
}

export class WsClient {
  readonly all: Msg[] = [];
  /** Received text messages that do not match their declaration (wsMessageProblem). */
  readonly shapeProblems: string[] = [];
  /** Binary frames received, in order. */
  readonly frames: Buffer[] = [];
  private frameWaiters: (() => void)[] = [];
  private readonly taken = new Set<number>();
  private waiters: { pred: (m: Msg) => boolean; resolve: (m: Msg) => void; from: number }[] = [];
  private nextId = 1;
  closed: { code: number; reason: string } | null = null;
  private closeWaiters: ((c: { code: number; reason: string }) => void)[] = [];

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        this.frames.push(data);
        for (const w of this.frameWaiters.splice(0)) w();
        return;
      }
      const m = JSON.parse(data.toString('utf8'));
      const problem = wsMessageProblem(m);
      if (problem !== null) this.shapeProblems.push(problem);
      const i = this.all.length;
      this.all.push(m);
      for (const w of this.waiters) {
        if (!this.taken.has(i) && w.pred(m)) {
          this.taken.add(i);
          this.waiters = this.waiters.filter((x) => x !== w);
          w.resolve(m);
          break;
        }
      }
    });
    ws.on('close', (code: number, reason: Buffer) => {
      this.closed = { code, reason: reason.toString('utf8') };
      for (const r of this.closeWaiters) r(this.closed);
      this.closeWaiters = [];
    });
    ws.on('error', () => { /* a close follows; tests look at the close code */ });
  }

  /** Opens a signed connection; rejects with an UpgradeRefusal when the server answers the upgrade with an HTTP status. */
  static connect(
    tx: Pick<TestExchange, 'port'>,
    key: { keyId: number; secret: string },
    o: { target?: string; signTarget?: string; ts?: number; headers?: Record<string, string> | null } = {},
  ): Promise<WsClient> {
    const target = o.target ?? '/v1/ws';
    const headers =
      o.headers === null ? {} : { ...signHeaders(key, 'GET', o.signTarget ?? target, '', o.ts ?? Date.now()), ...(o.headers ?? {}) };
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${tx.port}${target}`, { headers, perMessageDeflate: false });
      const c = new WsClient(ws);
      ws.once('open', () => resolve(c));
      ws.once('unexpected-response', (req, res) => {
        const chunks: Buffer[] = [];
        const socket = res.socket;
        res.on('data', (b: Buffer) => chunks.push(b));
        res.on('end', () => {
          // The client must end a refused handshake's connection itself (the server closes it too).
          socket.destroy();
          req.destroy();
          const text = Buffer.concat(chunks).toString('utf8');
          let body: Msg = text;
          try {
            body = JSON.parse(text);
          } catch (e) {
            if (!(e instanceof SyntaxError)) throw e;
          }
          const r: UpgradeRefusal = { status: res.statusCode ?? 0, body };
          reject(r);
        });
      });
      ws.once('error', (e) => reject(e));
    });
  }

  sendRaw(data: string | Buffer, binary = false): void {
    this.ws.send(data, { binary });
  }

  /** Sends {id, cmd, params} and returns the id. */
  send(cmd: string, params?: Record<string, unknown>, id = this.nextId++): number {
    const body: Record<string, unknown> = { id, cmd };
    if (params !== undefined) body.params = params;
    this.ws.send(JSON.stringify(body));
    return id;
  }

  /** The next not-yet-taken message matching pred (already received or arriving within ms). */
  next(pred: (m: Msg) => boolean, ms = 3000, what = 'a message'): Promise<Msg> {
    if (this.shapeProblems.length > 0) return Promise.reject(new assert.AssertionError({ message: this.shapeProblems.join('\n') }));
    for (let i = 0; i < this.all.length; i++) {
      if (!this.taken.has(i) && pred(this.all[i])) {
        this.taken.add(i);
        return Promise.resolve(this.all[i]);
      }
    }
    return new Promise((resolve, reject) => {
      const w = { pred, resolve: (m: Msg) => { clearTimeout(t); resolve(m); }, from: this.all.length };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`timed out waiting for ${what}; received: ${JSON.stringify(this.all.slice(-8))}`));
      }, ms);
      this.waiters.push(w);
    });
  }

  /** The next reply (subscribed, ok or error) to command id. */
  reply(id: number, ms = 3000): Promise<Msg> {
    return this.next((m) => m.id === id, ms, `a reply to command ${id}`);
  }

  /** Sends a command and waits for its first reply. */
  async call(cmd: string, params?: Record<string, unknown>): Promise<Msg> {
    return this.reply(this.send(cmd, params));
  }

  /** Sends a command, expects an error reply with this code and name. */
  async expectError(cmd: string, params: Record<string, unknown> | undefined, code: number, name: string): Promise<Msg> {
    const r = await this.call(cmd, params);
    assert.equal(r.type, 'error', `expected error ${code} ${name}, got ${JSON.stringify(r)}`);
    assert.equal(r.msg.code, code, JSON.stringify(r));
    assert.equal(r.msg.name, name, JSON.stringify(r));
    assert.equal(typeof r.msg.msg, 'string');
    return r;
  }

  /** Data messages of a sid received so far, in order (taken or not). */
  data(sid: number): Msg[] {
    return this.all.filter((m) => m.sid === sid && m.id === undefined);
  }

  /** Resolves once at least n binary frames arrived. */
  async framesUntil(n: number, ms = 3000): Promise<Buffer[]> {
    const until = Date.now() + ms;
    while (this.frames.length < n) {
      const left = until - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${n} binary frames (got ${this.frames.length})`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, left);
        this.frameWaiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.frames;
  }

  waitClose(ms = 5000): Promise<{ code: number; reason: string }> {
    if (this.closed) return Promise.resolve(this.closed);
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error('timed out waiting for the close')), ms);
      this.closeWaiters.push((c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
  }

  async close(): Promise<void> {
    if (!this.closed) {
      this.ws.close(1000);
      // No close frame back in time: end the socket outright.
      await this.waitClose().catch(() => this.ws.terminate());
    }
    assert.deepEqual(this.shapeProblems, [], 'every message received matches its declaration (src/wire/ws.ts)');
  }
}

/** Asserts that every data message of a sid carries seq 1, 2, 3, ... from `first` on, without a gap. */
export function assertSeqs(msgs: Msg[], first = 1): void {
  msgs.forEach((m, i) => assert.equal(m.seq, first + i, `seq gap at message ${i}: ${JSON.stringify(m)}`));
}
