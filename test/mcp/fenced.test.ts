// A node that replication fenced (a former primary) answers nothing more on
// the MCP lane, reads and protocol messages included: 503 not_primary and the
// connection closed, as on REST; and every REST operation's answer, reads
// included, is one the OpenAPI document lists under 503. Driven through
// mountMcp and mountRest on a
// stand-in for the uWS App and a core whose role is fenced (a real fenced
// node exits within moments, too soon to test it black box); the routes,
// the tools, authentication and the error envelope are the real ones.

import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ApiError } from '../../src/gateway/envelope.js';
import { mountRest, type LaneOptions } from '../../src/gateway/http.js';
import { ROUTES } from '../../src/gateway/routes.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../../src/gateway/uws.js';
import { mountMcp } from '../../src/mcp/http.js';
import { buildOpenApi } from '../../src/openapi/openapi.js';
import { documentAjv } from '../support/wire_shapes.js';

const secret = randomBytes(32);
const core = {
  fenced: true,
  assertWritable(): never {
    throw new ApiError('not_primary', 'this node is a former primary: send writes to the primary', { primary_url: '', role: 'fenced' });
  },
  drain: (): void => undefined,
  kick: (): void => undefined,
  tracing: null,
  views: {
    asOfSeq: 41,
    keyRow: (): number => 0,
    keySecret: (): Buffer => secret,
    keyInfo: () => ({ revoked: false, row: 0, account_id: 1, scopes: 0xff }),
    exchangeStatus: () => ({ exchange_active: true, as_of_seq: '41' }),
  },
};
const lane = {
  core, buckets: { take: () => 0 }, replay: { firstUse: () => 'first', lookup: () => 'first' }, limits: { response_budget_ms: 1000 },
  routes: ROUTES,
} as unknown as LaneOptions;
type Handler = (res: HttpResponse, req: HttpRequest) => void;
const handlers = new Map<string, Handler>();
const app = { any: (pattern: string, h: Handler) => handlers.set(pattern, h) } as unknown as TemplatedApp;
mountMcp(app, lane);
mountRest(app, lane);

/** One signed request through the handler of `pattern`: its status line, body and whether the connection closes. */
type Answer = { status: string; body: string; close: boolean };
async function call(pattern: string, method: string, path: string, body: string): Promise<Answer> {
  const ts = String(Date.now());
  const sig = createHmac('sha256', secret).update(`${ts}\n${method}\n${path}\n${body}`).digest('base64');
  const headers: Record<string, string> = {
    'dx-access-key': '7', 'dx-access-timestamp': ts, 'dx-access-signature': sig, 'content-length': String(body.length), host: 'x',
  };
  const req = {
    getHeader: (h: string) => headers[h] ?? '', getCaseSensitiveMethod: () => method, getUrl: () => path, getQuery: () => '',
    forEach: (cb: (k: string, v: string) => void) => Object.entries(headers).forEach(([k, v]) => cb(k, v)),
  };
  const out = { status: '', body: '', close: false };
  let onData: (chunk: ArrayBuffer, last: boolean) => void = () => undefined;
  const res = {
    onAborted: () => res, onData: (cb: typeof onData) => ((onData = cb), res), cork: (fn: () => void) => (fn(), res),
    writeStatus: (st: string) => ((out.status = st), res), writeHeader: () => res,
    end: (b?: string, close?: boolean) => ((out.body = b ?? ''), (out.close = close === true), res), endWithoutBody: () => res,
  };
  handlers.get(pattern)!(res as unknown as HttpResponse, req as unknown as HttpRequest);
  const buf = Buffer.from(body);
  onData(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length) as ArrayBuffer, true);
  await new Promise((r) => setTimeout(r, 20));
  return out;
}

test('fenced: the MCP lane answers every message 503 not_primary and closes the connection, as REST does', async () => {
  const rest = await call('/v1/*', 'GET', '/v1/exchange/status', '');
  assert.deepEqual([rest.status, rest.close, JSON.parse(rest.body).error.code], ['503 Service Unavailable', true, 'not_primary']);
  for (const msg of [
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_exchange_status', arguments: {} } },
    { jsonrpc: '2.0', id: 2, method: 'ping' },
  ]) {
    const r = await call('/v1/mcp', 'POST', '/v1/mcp', JSON.stringify(msg));
    assert.deepEqual([r.status, r.close, JSON.parse(r.body).error.code], ['503 Service Unavailable', true, 'not_primary'], r.body);
  }
});

test('fenced: every REST operation, reads included, answers 503 not_primary, which the OpenAPI document lists under 503', async () => {
  const doc = buildOpenApi() as any;
  const ajv = documentAjv(doc, { closed: true });
  for (const r of ROUTES) {
    const path = r.path.replace('{market_id}', '1').replace('{order_id}', '1').replace('{client_withdrawal_id}', '1');
    const a = await call('/v1/*', r.method, path, '');
    const body = JSON.parse(a.body);
    assert.equal(a.status, '503 Service Unavailable', `${r.name}: ${a.body}`);
    assert.equal(body.error.code, 'not_primary');
    const resp = doc.paths[r.path][r.method.toLowerCase()].responses['503'];
    assert.ok(ajv.compile(resp.content['application/json'].schema)(body), r.name);
    assert.ok(resp['x-dx-error-codes'].includes('not_primary'), `${r.name} (${r.method}): not_primary is not listed for 503 ` +
      `(listed: ${resp['x-dx-error-codes'].join(', ')})`);
  }
});
