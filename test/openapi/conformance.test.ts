// Real answers of a running exchange against the OpenAPI document: a
// scenario exercises every operation (and the MCP endpoint) and a range of
// errors over plain signed HTTP; each answer's status must be documented for
// its operation, an error's code must be one the document lists for that
// operation and status, and the body must validate against the documented
// schema made closed (an undocumented field fails). Also: the control plane
// serves the same document. One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, test } from 'node:test';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import { ROUTES } from '../../src/gateway/routes.js';
import { buildOpenApi } from '../../src/openapi/openapi.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order, raw, signedRaw, type Key, type RawReply } from '../support/harness.js';
import { documentAjv } from '../support/wire_shapes.js';

const doc = buildOpenApi() as any;
const ajv = documentAjv(doc, { closed: true });
const validators = new Map<string, ValidateFunction>();
const templates = Object.keys(doc.paths)
  .map((t) => ({ t, re: new RegExp(`^${t.replace(/\{[^}]+\}/g, '[^/]+')}$`), params: (t.match(/\{/g) ?? []).length }))
  .sort((a, b) => a.params - b.params);

/** Operations answered with their documented success status at least once. */
const succeeded = new Set<string>();
let checked = 0;

let tx: TestExchange;
let maker: Key;
let taker: Key;

before(async () => {
  tx = await startTestExchange();
  maker = await newAccount(tx);
  taker = await newAccount(tx);
});

after(async () => {
  await tx.stop();
});

/** Validates one real answer against the document; returns it. */
function conform(method: string, target: string, r: RawReply): RawReply {
  const path = target.split('?')[0]!;
  const tpl = templates.find((x) => x.re.test(path));
  assert.ok(tpl, `${path} is in the document`);
  const op = doc.paths[tpl.t][method.toLowerCase()];
  assert.ok(op, `${method} ${tpl.t} is in the document`);
  const resp = op.responses[String(r.status)];
  assert.ok(resp, `${op.operationId}: status ${r.status} is documented (${r.text.slice(0, 200)})`);
  const schema = resp.content?.['application/json']?.schema;
  if (schema === undefined) {
    assert.equal(r.text, '', `${op.operationId} ${r.status} has no body`);
  } else {
    const key = `${op.operationId} ${r.status}`;
    let v = validators.get(key);
    if (v === undefined) validators.set(key, (v = ajv.compile(schema)));
    assert.ok(v(r.json), `${key}: ${JSON.stringify(v.errors)} in ${r.text.slice(0, 400)}`);
  }
  if (r.status >= 400 && resp['x-dx-error-codes']) {
    assert.ok(resp['x-dx-error-codes'].includes(r.json.error.code), `${op.operationId}: ${r.json.error.code} is listed for ${r.status}`);
  }
  if (r.status < 300) succeeded.add(op.operationId);
  checked++;
  return r;
}

async function call(
  k: { keyId: number; secret: string },
  method: string,
  target: string,
  body?: unknown,
  o: { status?: number } = {},
): Promise<any> {
  const text = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const r = conform(method, target, await signedRaw(tx.port, k, method, target, text));
  if (o.status !== undefined) assert.equal(r.status, o.status, `${method} ${target}: ${r.text.slice(0, 300)}`);
  return r.json;
}

test('conformance: every operation\'s real success answers match the document', async () => {
  const m = await newMarket(tx);
  await tx.admin.oracleTick({ source_id: 0, price: '6000000000000' });
  const withdrawer = await newKey(tx, taker.accountId, ['read', 'withdraw']);

  const rest = await call(maker, 'POST', '/v1/portfolio/orders', order(m, { outcome: 'no', tick: 60, qty: 5, client_order_id: '11' }), {
    status: 201,
  });
  assert.equal(rest.status, 'resting');
  const fill = await call(taker, 'POST', '/v1/portfolio/orders', order(m, { outcome: 'yes', tick: 40, qty: 3, tif: 'ioc' }), {
    status: 201,
  });
  assert.equal(fill.status, 'filled');
  const partial = await call(taker, 'POST', '/v1/portfolio/orders', order(m, { outcome: 'yes', tick: 40, qty: 4 }), { status: 201 });
  assert.equal(partial.status, 'partially_filled');
  await call(taker, 'POST', '/v1/portfolio/orders', order(m, { side: 'sell', outcome: 'yes', tick: 70, qty: 1 }), { status: 201 });
  const crossing = await call(maker, 'POST', '/v1/portfolio/orders', order(m, { outcome: 'yes', tick: 75, qty: 1, post_only: true }), {
    status: 201,
  });
  assert.equal(crossing.status, 'canceled');
  assert.equal(crossing.reason, 'post_only_cross');
  const batch = await call(
    maker,
    'POST',
    '/v1/portfolio/orders/batch',
    { orders: [order(m, { tick: 10, qty: 2, group_id: 3 }), order(m, { tick: 11, qty: 2 }), order(999_999)] },
    { status: 201 },
  );
  assert.ok(batch.results[2].error);

  for (const target of [
    '/v1/exchange/status',
    '/v1/exchange/schedule',
    '/v1/exchange/retention',
    '/v1/account/limits',
    '/v1/markets?status=trading,closed&limit=5',
    `/v1/markets/${m}`,
    `/v1/markets/${m}/orderbook?depth=3`,
    `/v1/markets/${m}/trades?limit=2`,
    `/v1/markets/${m}/candlesticks?period=1h`,
    `/v1/markets/${m}/candlesticks?start_ts=${Date.now() - 3_600_000}000000&end_ts=${Date.now()}000000`,
    '/v1/oracle/price',
    '/v1/rounds?category=1',
    `/v1/rounds/${m}`,
    '/v1/portfolio/balance',
    '/v1/portfolio/positions',
    `/v1/portfolio/fills?market_id=${m}`,
    '/v1/portfolio/orders',
    '/v1/portfolio/orders?status=canceled',
    '/v1/portfolio/deadman',
    '/v1/funding/deposit_address',
  ]) {
    await call(maker, 'GET', target, undefined, { status: 200 });
    await call(taker, 'GET', target, undefined, { status: 200 });
  }
  const page = await call(maker, 'GET', '/v1/portfolio/orders?limit=1', undefined, { status: 200 });
  assert.notEqual(page.cursor, '');
  await call(maker, 'GET', `/v1/portfolio/orders?limit=1&cursor=${encodeURIComponent(page.cursor)}`, undefined, { status: 200 });

  const resting = batch.results[0].order_id as string;
  await call(maker, 'GET', `/v1/portfolio/orders/${resting}/queue_position`, undefined, { status: 200 });
  const second = batch.results[1].order_id as string;
  await call(maker, 'POST', `/v1/portfolio/orders/${second}/decrease`, { new_qty: 1 }, { status: 200 });
  await call(maker, 'DELETE', '/v1/portfolio/orders/batch', { order_ids: [second, rest.order_id] }, { status: 200 });
  await call(maker, 'POST', '/v1/portfolio/deadman', { timeout_ms: 60000 }, { status: 200 });
  await call(maker, 'GET', '/v1/portfolio/deadman', undefined, { status: 200 });
  await call(maker, 'DELETE', '/v1/portfolio/deadman', undefined, { status: 200 });
  await call(maker, 'DELETE', `/v1/portfolio/orders?market_id=${m}&group_id=3`, undefined, { status: 202 });
  await call(
    withdrawer,
    'POST',
    '/v1/withdrawals',
    { client_withdrawal_id: '77', amount: '150', destination: 'bank:NL00' },
    { status: 201 },
  );
  await call(withdrawer, 'GET', '/v1/withdrawals/77', undefined, { status: 200 });
  for (const k of [maker, taker]) {
    for (const target of ['/v1/portfolio/orders', '/v1/portfolio/fills', '/v1/portfolio/positions', '/v1/portfolio/balance'])
      await call(k, 'GET', target, undefined, { status: 200 });
  }

  assert.deepEqual([...succeeded].sort(), ROUTES.map((r) => r.name).sort(), 'every operation answered with success at least once');
});

test('conformance: error answers match the document (status listed, code listed for it, envelope shape)', async () => {
  const m = await newMarket(tx);
  const bare = await newMarket(tx, { round: false });
  const reader = await newKey(tx, maker.accountId, ['read']);
  const broke = await newAccount(tx, { deposit: '0' });

  await call(maker, 'POST', '/v1/portfolio/orders', { ...order(m), colour: 'red' }, { status: 400 });
  await call(maker, 'POST', '/v1/portfolio/orders', '{"market_id":', { status: 400 });
  await call(maker, 'GET', '/v1/portfolio/orders?limit=0', undefined, { status: 400 });
  await call(maker, 'GET', '/v1/portfolio/orders?colour=red', undefined, { status: 400 });
  await call(maker, 'DELETE', '/v1/portfolio/orders', { order_ids: ['1'] }, { status: 400 });
  conform('GET', '/v1/portfolio/balance', await raw(tx.port, { method: 'GET', target: '/v1/portfolio/balance' }));
  await call(reader, 'POST', '/v1/portfolio/orders', order(m), { status: 403 });
  await call(maker, 'POST', '/v1/withdrawals', { client_withdrawal_id: '1', amount: '1', destination: 'x' }, { status: 403 });
  await call(maker, 'GET', '/v1/markets/999999', undefined, { status: 404 });
  await call(maker, 'GET', '/v1/markets/999999/orderbook', undefined, { status: 404 });
  await call(maker, 'GET', '/v1/markets/999999/candlesticks', undefined, { status: 404 });
  await call(maker, 'GET', `/v1/markets/${m}/candlesticks?period=2m`, undefined, { status: 400 });
  await call(maker, 'GET', `/v1/rounds/${bare}`, undefined, { status: 404 });
  await call(maker, 'GET', '/v1/portfolio/orders/999999/queue_position', undefined, { status: 404 });
  await call(maker, 'POST', '/v1/portfolio/orders/999999/decrease', { new_qty: 0 }, { status: 404 });
  await call(maker, 'GET', '/v1/withdrawals/4242', undefined, { status: 404 });
  await call(maker, 'POST', '/v1/portfolio/orders', order(m, { tick: 2, client_order_id: '900' }), { status: 201 });
  const dup = await call(maker, 'POST', '/v1/portfolio/orders', order(m, { tick: 2, client_order_id: '900' }), { status: 409 });
  assert.equal(dup.error.code, 'duplicate_client_order_id');
  await call(maker, 'POST', '/v1/portfolio/orders', order(bare), { status: 409 });
  await call(broke, 'POST', '/v1/portfolio/orders', order(m), { status: 422 });
  const w = await newKey(tx, broke.accountId, ['read', 'withdraw']);
  await call(w, 'POST', '/v1/withdrawals', { client_withdrawal_id: '5', amount: '100', destination: 'x' }, { status: 422 });
  await call(maker, 'POST', '/v1/portfolio/orders', JSON.stringify({ ...order(m), pad: 'x'.repeat(70_000) }), { status: 413 });
  await call(maker, 'DELETE', '/v1/portfolio/orders', JSON.stringify({ pad: 'x'.repeat(70_000) }), { status: 400 });

  const flood = await newKey(tx, maker.accountId);
  const twenty = Array.from({ length: 20 }, (_, i) => String(700_000_000 + i));
  // 20 write tokens a call against a burst of 100 refilled at 50/s: the bucket
  // runs dry after about five calls however slowly this machine sends them.
  let limited: any = null;
  for (let i = 0; i < 50 && limited === null; i++) {
    const r = await call(flood, 'DELETE', '/v1/portfolio/orders/batch', { order_ids: twenty });
    if (r.error) limited = r;
  }
  assert.ok(limited, 'the write bucket ran dry (429)');
  assert.equal(limited.error.code, 'rate_limited');
  assert.match(limited.error.details.retry_after_ms, /^[0-9]+$/);
  assert.ok(checked > 20);
});

test('conformance: the MCP endpoint\'s answers match the document', async () => {
  const init = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
  };
  const r = await call(maker, 'POST', '/v1/mcp', init, { status: 200 });
  assert.equal(r.result.protocolVersion, '2025-11-25');
  await call(maker, 'POST', '/v1/mcp', { jsonrpc: '2.0', method: 'notifications/initialized' }, { status: 202 });
  await call(
    maker,
    'POST',
    '/v1/mcp',
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_balance', arguments: {} } },
    { status: 200 },
  );
  await call(maker, 'POST', '/v1/mcp', [{ jsonrpc: '2.0', id: 3, method: 'ping' }], { status: 400 });
  conform('POST', '/v1/mcp', await raw(tx.port, { method: 'POST', target: '/v1/mcp', body: '{}' }));
});

test('conformance: the control plane serves the same document at GET /admin/openapi.json', async () => {
  const served = await tx.admin.request('GET', '/admin/openapi.json');
  assert.deepEqual(served, JSON.parse(JSON.stringify(doc)));
  const anonymous = await raw(tx.ex.admin_port, { method: 'GET', target: '/admin/openapi.json' });
  assert.equal(anonymous.status, 401, 'the control plane needs its bearer token');
});

test('conformance: a read on a kept-alive connection while the exchange stops is a 503 shed the document lists', async () => {
  const t2 = await startTestExchange();
  const k = await newAccount(t2);
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    assert.equal((await signedRaw(t2.port, k, 'GET', '/v1/portfolio/balance', undefined, { agent })).status, 200);
    const stopping = t2.stop();
    // The gateway learns of the stop from a message: until then the connection is served as before.
    let r = await signedRaw(t2.port, k, 'GET', '/v1/portfolio/balance', undefined, { agent });
    for (let i = 0; i < 100 && r.status === 200; i++) {
      await new Promise((res) => setTimeout(res, 10));
      r = await signedRaw(t2.port, k, 'GET', '/v1/portfolio/balance', undefined, { agent });
    }
    assert.equal(r.status, 503, r.text);
    assert.equal(r.json.error.code, 'shed');
    conform('GET', '/v1/portfolio/balance', r);
    await stopping;
  } finally {
    agent.destroy();
  }
});
