// Helpers for the black-box tests of the exchange's public surfaces, on an
// exchange from the launcher (exchange.ts): the usual set-up steps through
// the public surfaces only (control plane for accounts, markets and
// deposits; the client library for normal calls; node:http with hand-made
// headers for malformed requests) and the assertions on what comes back.
// Test process, main thread.

import { closeFetchConnections } from '../../src/client/transport.js';
export { closeFetchConnections };
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { DxApiError, DxClient, KeysClient } from '../../src/client/index.js';
import type { OrderRequest, Scope } from '../../src/client/types.js';
import { ErrorEnvelope } from '../../src/wire/responses.js';
import type { TestExchange } from './exchange.js';
import { assertWireShape } from './wire_shapes.js';

// ---- accounts, keys, markets ----------------------------------------------------

export interface Key {
  accountId: number;
  keyId: number;
  secret: string;
  client: DxClient;
  keys: KeysClient;
}

export async function newKey(tx: TestExchange, accountId: number, scopes: Scope[] = ['read', 'trade']): Promise<Key> {
  const k = await tx.admin.createKey(accountId, scopes);
  return keyFrom(tx, accountId, k.key_id, k.secret);
}

export function keyFrom(tx: TestExchange, accountId: number, keyId: number, secret: string): Key {
  return {
    accountId, keyId, secret,
    client: new DxClient({ baseUrl: tx.base, keyId, secret }),
    keys: new KeysClient({ baseUrl: tx.accountsBase, keyId, secret }),
  };
}

/** A new account with `deposit` cents and one key. */
export async function newAccount(tx: TestExchange, o: { deposit?: string; scopes?: Scope[] } = {}): Promise<Key> {
  const { account_id } = await tx.admin.createAccount();
  const deposit = o.deposit ?? '100000000';
  if (deposit !== '0') await tx.admin.deposit(account_id, { amount: deposit, ref: `test-${account_id}` });
  return newKey(tx, account_id, o.scopes ?? ['read', 'trade']);
}

/** Round close time an hour from now, in ns (the wire's timestamp unit). */
export function closeInAnHour(): string {
  return String(BigInt(Date.now() + 3_600_000) * 1_000_000n);
}

/** A market (with a trading round unless `round` is false). */
export async function newMarket(
  tx: TestExchange,
  o: { title?: string; category?: number; position_limit?: number; fee_schedule_id?: number; round?: boolean } = {},
): Promise<number> {
  const { market_id } = await tx.admin.createMarket({
    title: o.title ?? 'BTC above strike',
    category: o.category ?? 1,
    position_limit: o.position_limit ?? 0,
    fee_schedule_id: o.fee_schedule_id ?? 0,
  });
  if (o.round !== false) await tx.admin.openRound(market_id, { strike: '6000000000000', close_ts: closeInAnHour() });
  return market_id;
}

export function order(market_id: number, o: Partial<OrderRequest> = {}): OrderRequest {
  return { market_id, side: 'buy', outcome: 'yes', tick: 40, qty: 1, ...o };
}

// ---- raw HTTP --------------------------------------------------------------------

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  json: any;
}

export interface RawRequest {
  method: string;
  /** The request target exactly as written on the wire (path?query). */
  target: string;
  body?: string | Buffer;
  headers?: Record<string, string | string[]>;
  /** Default: a fresh connection (agent false). */
  agent?: Agent | false;
  signal?: AbortSignal;
}

/** One request over node:http: any method, any body (even on GET), hand-made headers. */
export function raw(port: number, r: RawRequest): Promise<RawReply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | string[]> = { ...(r.headers ?? {}) };
    if (r.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-length')) {
      headers['content-length'] = String(Buffer.byteLength(r.body));
    }
    const req = httpRequest({
      host: '127.0.0.1', port, method: r.method, path: r.target, headers, agent: r.agent ?? false, signal: r.signal,
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = undefined;
        if (text.length > 0) {
          try {
            json = JSON.parse(text);
          } catch (e) {
            if (!(e instanceof SyntaxError)) throw e;
            json = undefined; // not JSON: the test looks at `text`
          }
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (r.body !== undefined) req.write(r.body);
    req.end();
  });
}

/**
 * Writes `text` as is on a fresh TCP connection and returns every byte the
 * server sends until it closes the connection or `ms` pass (for requests
 * node:http cannot make, such as duplicated headers).
 */
export function rawSocket(port: number, text: string, ms = 300): Promise<string> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1', () => s.write(text));
    let out = '';
    s.on('data', (d: Buffer) => (out += d.toString('latin1')));
    const timer = setTimeout(() => s.destroy(), ms);
    s.on('close', () => {
      clearTimeout(timer);
      resolve(out);
    });
    s.on('error', () => s.destroy());
  });
}

/** The three signature headers, computed independently of the client library. */
export function signHeaders(
  k: { keyId: number; secret: string }, method: string, target: string, body: string | Buffer = '', tsMs = Date.now(),
): Record<string, string> {
  const ts = String(tsMs);
  const sig = createHmac('sha256', Buffer.from(k.secret, 'base64'))
    .update(Buffer.concat([Buffer.from(`${ts}\n${method}\n${target}\n`), Buffer.from(body)])).digest('base64');
  return { 'DX-ACCESS-KEY': String(k.keyId), 'DX-ACCESS-TIMESTAMP': ts, 'DX-ACCESS-SIGNATURE': sig };
}

/** A signed raw request; `sign` overrides what is signed (to tamper), `ts` the timestamp. */
export function signedRaw(
  port: number,
  k: { keyId: number; secret: string },
  method: string,
  target: string,
  body?: string | Buffer,
  o: {
    sign?: { method?: string; target?: string; body?: string };
    ts?: number;
    agent?: Agent | false;
    headers?: Record<string, string>;
  } = {},
): Promise<RawReply> {
  const h = signHeaders(k, o.sign?.method ?? method, o.sign?.target ?? target, o.sign?.body ?? body ?? '', o.ts ?? Date.now());
  const headers: Record<string, string> = { ...h, ...(o.headers ?? {}) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  return raw(port, { method, target, body, headers, agent: o.agent });
}

// ---- assertions ------------------------------------------------------------------

/** The error envelope: `{error: {code, num, origin, message, details}}` with the given code and status. */
export function assertErrorReply(r: RawReply, status: number, code: string, o: { num?: number | null; origin?: string } = {}): void {
  assert.equal(r.status, status, `expected ${status} ${code}, got ${r.status} ${r.text}`);
  assertEnvelope(r.json, code, o);
}

/** The envelope's shape (the one wire-shape checker), then its code, num and origin. */
export function assertEnvelope(body: unknown, code: string, o: { num?: number | null; origin?: string } = {}): void {
  const e = assertWireShape(ErrorEnvelope, body, 'error envelope').error;
  assert.equal(e.code, code);
  if (o.num !== undefined) assert.equal(e.num, o.num, `num of ${code}`);
  else if (o.origin === 'gateway' || o.origin === undefined) assert.equal(e.num, null, `a gateway error has num null (${code})`);
  assert.equal(e.origin, o.origin ?? 'gateway', `origin of ${code}`);
}

/** Awaits a client call that must fail with a DxApiError of this status and code; returns it. */
export async function rejects(
  p: Promise<unknown>,
  status: number,
  code: string,
  o: { num?: number | null; origin?: string } = {},
): Promise<DxApiError> {
  try {
    const v = await p;
    assert.fail(`expected ${status} ${code}, got success ${JSON.stringify(v)}`);
  } catch (e) {
    if (!(e instanceof DxApiError)) throw e;
    assert.equal(e.status, status, `expected ${status} ${code}, got ${e.message}`);
    assert.equal(e.code, code, e.message);
    assert.equal(e.origin, o.origin ?? 'gateway', `origin of ${code}`);
    assert.equal(e.num, o.num === undefined ? null : o.num, `num of ${code}`);
    return e;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Polls `cond` every few ms until it holds or `ms` pass; returns whether it held. */
export async function eventually(cond: () => boolean | Promise<boolean>, ms = 2000, every = 10): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() > until) return false;
    await sleep(every);
  }
}
