// A node that replication fenced (a former primary) answers every request,
// reads included, 503 not_primary (docs/replication.md, "The old primary"):
// the document must list that code under 503 for every operation, so the
// answer conforms. Driven through mountRest on a stand-in for the uWS App
// and a core whose role is fenced, as test/mcp/fenced.test.ts does (a real
// fenced node exits within moments).

import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ApiError } from '../../src/gateway/envelope.js';
import { mountRest, type LaneOptions } from '../../src/gateway/http.js';
import { ROUTES } from '../../src/gateway/routes.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../../src/gateway/uws.js';
import { buildOpenApi } from '../../src/openapi/openapi.js';
import { documentAjv } from '../support/wire_shapes.js';

const doc = buildOpenApi() as any;
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
    asOfSeq: 41, keyRow: (): number => 0, keySecret: (): Buffer => secret,
    keyInfo: () => ({ revoked: false, row: 0, account_id: 1, scopes: 0xff }),
  },
};
const lane = {
  core, buckets: { take: () => 0 }, replay: { firstUse: () => 'first', lookup: () => 'first' }, limits: { response_budget_ms: 1000 },
  routes: ROUTES,
} as unknown as LaneOptions;
let handler: (res: HttpResponse, req: HttpRequest) => void = () => undefined;
mountRest({ any: (_p: string, h: typeof handler) => (handler = h) } as unknown as TemplatedApp, lane);

async function call(method: string, path: string): Promise<{ status: number; body: any }> {
  const ts = String(Date.now());
  const sig = createHmac('sha256', secret).update(`${ts}\n${method}\n${path}\n`).digest('base64');
  const headers: Record<string, string> = { 'dx-access-key': '7', 'dx-access-timestamp': ts, 'dx-access-signature': sig };
  const req = {
    getHeader: (h: string) => headers[h] ?? '', getCaseSensitiveMethod: () => method, getUrl: () => path, getQuery: () => '',
    forEach: (cb: (k: string, v: string) => void) => Object.entries(headers).forEach(([k, v]) => cb(k, v)),
  };
  const out = { status: 0, body: undefined as any };
  let onData: (chunk: ArrayBuffer, last: boolean) => void = () => undefined;
  const res = {
    onAborted: () => res, onData: (cb: typeof onData) => ((onData = cb), res), cork: (fn: () => void) => (fn(), res),
    writeStatus: (st: string) => ((out.status = Number(st.slice(0, 3))), res), writeHeader: () => res,
    end: (b?: string) => ((out.body = JSON.parse(b ?? 'null')), res), endWithoutBody: () => res,
  };
  handler(res as unknown as HttpResponse, req as unknown as HttpRequest);
  onData(new ArrayBuffer(0), true);
  await new Promise((r) => setTimeout(r, 5));
  return out;
}

test('openapi: a fenced node\'s 503 not_primary to every operation, reads included, is an answer the document lists', async () => {
  const ajv = documentAjv(doc, { closed: true });
  for (const r of ROUTES) {
    const path = r.path.replace('{market_id}', '1').replace('{order_id}', '1').replace('{client_withdrawal_id}', '1');
    const a = await call(r.method, path);
    assert.equal(a.status, 503, `${r.name}: ${JSON.stringify(a.body)}`);
    assert.equal(a.body.error.code, 'not_primary');
    const resp = doc.paths[r.path][r.method.toLowerCase()].responses['503'];
    assert.ok(ajv.compile(resp.content['application/json'].schema)(a.body), r.name);
    assert.ok(resp['x-dx-error-codes'].includes('not_primary'), `${r.name} (${r.method}): not_primary is not listed for 503 ` +
      `(listed: ${resp['x-dx-error-codes'].join(', ')})`);
  }
});
