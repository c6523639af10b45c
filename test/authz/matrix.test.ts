// Who can reach what: every REST route, the keys service, the control plane,
// the MCP lane and the WebSocket lane (the upgrade, each order command, the
// user channel), called with every kind of credential (none, a bad
// signature, a stale timestamp, a replay, read, trade, another account's
// key, a revoked key, the admin token), against the contract's scope table.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ROUTES, type Route } from '../../src/gateway/routes.js';
import { KEY_ROUTES } from '../../src/keys_service/routes.js';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order, raw, signHeaders, signedRaw, sleep, type Key } from '../support/harness.js';
import { WsClient, type UpgradeRefusal } from '../ws/ws_client.js';
import { Scope } from '../../src/layout/records.js';

let tx: TestExchange;
let a: Key; // account A, read+trade
let aRead: Key;
let aTrade: Key;
let aWithdraw: Key;
let aWithdrawOnly: Key;
let aRevoked: Key;
let b: Key; // account B
let market: number;
let aOrder: string;
let aWid: string;

before(async () => {
  tx = await startTestExchange();
  market = await newMarket(tx);
  a = await newAccount(tx);
  b = await newAccount(tx);
  aRead = await newKey(tx, a.accountId, ['read']);
  aTrade = await newKey(tx, a.accountId, ['trade']);
  aWithdraw = await newKey(tx, a.accountId, ['read', 'withdraw']);
  aWithdrawOnly = await newKey(tx, a.accountId, ['withdraw']);
  aRevoked = await newKey(tx, a.accountId, ['read', 'trade', 'withdraw']);
  await a.keys.revokeKey(aRevoked.keyId);
  aOrder = (await a.client.placeOrder(order(market, { tick: 20, qty: 5, client_order_id: '777' }))).order_id;
  const w = await signedRaw(tx.port, aWithdraw, 'POST', '/v1/withdrawals',
    JSON.stringify({ client_withdrawal_id: '55', amount: '100', destination: 'dest-a' }));
  assert.equal(w.status, 201, w.text);
  aWid = '55';
});

after(async () => {
  await tx.stop();
});

function req(r: Route): { target: string; body?: string } {
  const path = r.path.replace('{market_id}', String(market)).replace('{order_id}', aOrder).replace('{client_withdrawal_id}', aWid)
    .replace('{key_id}', '1');
  switch (r.name) {
    case 'place_order': return { target: path, body: JSON.stringify(order(market, { tick: 3 })) };
    case 'place_batch': return { target: path, body: JSON.stringify({ orders: [order(market, { tick: 3 })] }) };
    case 'cancel_batch': return { target: path, body: JSON.stringify({ order_ids: [aOrder] }) };
    case 'decrease_order': return { target: path, body: JSON.stringify({ new_qty: 4 }) };
    case 'arm_deadman': return { target: path, body: JSON.stringify({ timeout_ms: 60000 }) };
    case 'request_withdrawal': return { target: path, body: JSON.stringify({ client_withdrawal_id: '56', amount: '1', destination: 'x' }) };
    case 'create_key': return { target: path, body: JSON.stringify({ scopes: ['read'] }) };
    default: return { target: path };
  }
}

test('matrix: no credentials, bad signature, stale timestamp, revoked key, admin token: 401 on every REST route', async () => {
  const bad: string[] = [];
  for (const r of ROUTES) {
    const { target, body } = req(r);
    const h = { 'content-type': 'application/json' };
    const variants: [string, Record<string, string>][] = [
      ['none', h],
      ['admin', { ...h, authorization: `Bearer ${ADMIN_TOKEN}` }],
      ['badsig', { ...h, ...signHeaders({ keyId: a.keyId, secret: Buffer.alloc(32, 1).toString('base64') }, r.method, target, body) }],
      ['stale', { ...h, ...signHeaders(a, r.method, target, body, Date.now() - 6000) }],
      ['future', { ...h, ...signHeaders(a, r.method, target, body, Date.now() + 6000) }],
      ['revoked', { ...h, ...signHeaders(aRevoked, r.method, target, body) }],
    ];
    for (const [name, headers] of variants) {
      const res = await raw(tx.port, { method: r.method, target, body, headers });
      if (res.status !== 401 || res.json?.error?.code !== 'unauthorized') {
        bad.push(`${name} ${r.method} ${target}: ${res.status} ${res.text}`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

test('matrix: scopes per REST route (read, trade, withdraw keys)', async () => {
  const bad: string[] = [];
  for (const r of ROUTES) {
    const keys = [
      ['read', aRead, Scope.read], ['trade', aTrade, Scope.trade], ['withdraw', aWithdraw, Scope.read | Scope.withdraw],
    ] as const;
    for (const [name, k, bits] of keys) {
      const { target, body } = req(r);
      const res = await signedRaw(tx.port, k, r.method, target, body);
      const allowed = (bits & r.scope) !== 0;
      if (allowed && (res.status === 401 || res.status === 403)) bad.push(`${name} ${r.name}: ${res.status} ${res.text}`);
      if (!allowed && (res.status !== 403 || res.json?.error?.code !== 'missing_scope')) {
        bad.push(`${name} ${r.name}: ${res.status} ${res.text}`);
      }
    }
  }
  assert.deepEqual(bad, []);
});

test('matrix: another account\'s key on A\'s order, withdrawal and key ids learns nothing', async () => {
  const oid = (await a.client.placeOrder(order(market, { tick: 21, qty: 5, client_order_id: '778' }))).order_id;
  const r1 = await signedRaw(tx.port, b, 'GET', `/v1/portfolio/orders/${oid}/queue_position`);
  assert.equal(r1.json?.error?.code, 'unknown_order', r1.text);
  const r2 = await signedRaw(tx.port, b, 'POST', `/v1/portfolio/orders/${oid}/decrease`, '{"new_qty":1}');
  assert.equal(r2.json?.error?.code, 'unknown_order', r2.text);
  const r3 = await signedRaw(tx.port, b, 'DELETE', '/v1/portfolio/orders/batch', JSON.stringify({ order_ids: [oid] }));
  assert.equal(r3.json?.results?.[0]?.error?.code, 'unknown_order', r3.text);
  const r4 = await signedRaw(tx.port, b, 'GET', `/v1/withdrawals/${aWid}`);
  assert.equal(r4.status, 404, r4.text);
  const r5 = await signedRaw(tx.port, b, 'GET', '/v1/portfolio/orders?client_order_id=778');
  assert.deepEqual(r5.json?.orders, [], r5.text);
  const r6 = await signedRaw(tx.port, b, 'GET', `/v1/portfolio/fills?order_id=${oid}`);
  assert.deepEqual(r6.json?.fills, [], r6.text);
  const r7 = await signedRaw(tx.ex.accounts_port, b, 'DELETE', `/keys/${a.keyId}`);
  assert.equal(r7.json?.error?.code, 'unknown_key', r7.text);
  // A's client_order_id is B's to use: B's own new order, nothing about A's.
  const own = JSON.stringify(order(market, { tick: 22, client_order_id: '778' }));
  const r8 = await signedRaw(tx.port, b, 'POST', '/v1/portfolio/orders', own);
  assert.equal(r8.status, 201, r8.text);
  assert.notEqual(r8.json.order_id, oid);
  assert.equal((await a.client.orders({ client_order_id: '778' })).orders[0]!.remaining_qty, 5);
});

test('matrix: keys service and control plane', async () => {
  const got: string[] = [];
  for (const r of KEY_ROUTES) {
    const { target, body } = req(r);
    for (const [name, headers] of [
      ['none', {}], ['admin', { authorization: `Bearer ${ADMIN_TOKEN}` }],
      ['stale', signHeaders(a, r.method, target, body, Date.now() - 6000)], ['revoked', signHeaders(aRevoked, r.method, target, body)],
    ] as const) {
      const res = await raw(tx.ex.accounts_port, { method: r.method, target, body, headers: { ...headers } });
      if (res.status !== 401) got.push(`keys ${name} ${r.name}: ${res.status} ${res.text}`);
    }
  }
  for (const [m, t] of [['GET', '/admin/accounts/1'], ['POST', '/admin/accounts'], ['GET', '/metrics']] as const) {
    const res = await signedRaw(tx.ex.admin_port, a, m, t, m === 'POST' ? '{}' : undefined);
    if (res.status !== 401) got.push(`admin with key ${m} ${t}: ${res.status} ${res.text}`);
  }
  assert.deepEqual(got, []);
});

test('matrix: keys service scope refusals name a scope the operation takes', async () => {
  const c = await signedRaw(tx.ex.accounts_port, aWithdrawOnly, 'POST', '/keys', JSON.stringify({ scopes: ['read'] }));
  const d = await signedRaw(tx.ex.accounts_port, aWithdrawOnly, 'DELETE', `/keys/${aWithdrawOnly.keyId}`);
  for (const r of [c, d]) {
    assert.equal(r.status, 403);
    assert.doesNotMatch(r.json.error.message, /withdraw/, 'a withdraw-only key is told it lacks withdraw');
  }
});

test('matrix: a replayed keys-service mutation and a replayed MCP call are 401', async () => {
  const body = JSON.stringify({ scopes: ['read'], label: 'replay' });
  const headers = { ...signHeaders(a, 'POST', '/keys', body), 'content-type': 'application/json' };
  const first = await raw(tx.ex.accounts_port, { method: 'POST', target: '/keys', body, headers });
  assert.equal(first.status, 201, first.text);
  const again = await raw(tx.ex.accounts_port, { method: 'POST', target: '/keys', body, headers });
  assert.equal(again.status, 401, again.text);
  const mcpBody = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'cancel_all_orders', arguments: {} } });
  const mh = {
    ...signHeaders(a, 'POST', '/v1/mcp', mcpBody), 'content-type': 'application/json', accept: 'application/json, text/event-stream',
  };
  assert.equal((await raw(tx.port, { method: 'POST', target: '/v1/mcp', body: mcpBody, headers: mh })).status, 200);
  assert.equal((await raw(tx.port, { method: 'POST', target: '/v1/mcp', body: mcpBody, headers: mh })).status, 401);
  const stale = { ...signHeaders(a, 'POST', '/v1/mcp', mcpBody, Date.now() - 6000), 'content-type': 'application/json' };
  assert.equal((await raw(tx.port, { method: 'POST', target: '/v1/mcp', body: mcpBody, headers: stale })).status, 401);
  const rev = { ...signHeaders(aRevoked, 'POST', '/v1/mcp', mcpBody), 'content-type': 'application/json' };
  assert.equal((await raw(tx.port, { method: 'POST', target: '/v1/mcp', body: mcpBody, headers: rev })).status, 401);
});

test('matrix: MCP tools per scope', async () => {
  const { TOOLS } = await import('../../src/mcp/tools.js');
  const bad: string[] = [];
  let id = 10;
  for (const t of TOOLS) {
    const r = t.route;
    const args: Record<string, unknown> = {};
    for (const n of t.pathNames) args[n] = n === 'market_id' ? market : n === 'order_id' ? aOrder : aWid;
    const { body } = req(r);
    if (body !== undefined) Object.assign(args, JSON.parse(body));
    const keys = [['read', aRead, Scope.read], ['trade', aTrade, Scope.trade], ['b', b, Scope.read | Scope.trade]] as const;
    for (const [name, k, bits] of keys) {
      const msg = JSON.stringify({ jsonrpc: '2.0', id: id++, method: 'tools/call', params: { name: r.name, arguments: args } });
      const res = await signedRaw(tx.port, k, 'POST', '/v1/mcp', msg, { headers: { accept: 'application/json, text/event-stream' } });
      const text: string = res.json?.result?.content?.[0]?.text ?? res.text;
      const allowed = (bits & r.scope) !== 0;
      if (allowed === text.includes('missing_scope')) bad.push(`${name} ${r.name}: ${text}`);
      const mentions = text.includes(`"order_id":"${aOrder}"`) && !text.includes('unknown_order');
      if (name === 'b' && mentions) bad.push(`b sees A's data via ${r.name}: ${text}`);
    }
  }
  assert.deepEqual(bad, []);
});

async function refusal(k: { keyId: number; secret: string }, o: Parameters<typeof WsClient.connect>[2] = {}): Promise<number> {
  try {
    const c = await WsClient.connect(tx, k, o);
    await c.close();
    return 101;
  } catch (e) {
    return (e as UpgradeRefusal).status;
  }
}

test('ws matrix: upgrades', async () => {
  assert.equal(await refusal(a, { headers: null }), 401);
  assert.equal(await refusal(a, { headers: null, target: '/v1/ws', ts: Date.now() }), 401);
  assert.equal(await refusal(a, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'DX-ACCESS-SIGNATURE': 'x' } }), 401);
  assert.equal(await refusal(a, { ts: Date.now() - 6000 }), 401);
  assert.equal(await refusal({ keyId: a.keyId, secret: b.secret }), 401);
  assert.equal(await refusal(aTrade), 403);
  assert.equal(await refusal(aWithdrawOnly), 403);
  assert.equal(await refusal(aRead), 101);
});

test('ws matrix: order commands per scope and another account\'s ids; user channel is the account\'s own', async () => {
  const aOrder = (await a.client.placeOrder(order(market, { tick: 10, qty: 3, client_order_id: '91' }))).order_id;
  const reader = await WsClient.connect(tx, aRead);
  const other = await WsClient.connect(tx, b);
  const sub = await other.call('subscribe', { channels: ['user'] });
  assert.equal(sub.type, 'subscribed');
  // What B's key gets for each command: its own orders are placed, A's ids are unknown to it.
  const unknown = (o: { msg: unknown }): unknown => (o.msg as { error?: { code: string } }).error?.code;
  const itemUnknown = (o: { msg: unknown }): unknown => (o.msg as { results: { error?: { code: string } }[] }).results[0]!.error?.code;
  const cases: [string, Record<string, unknown>, number, ((o: { msg: unknown }) => unknown) | null][] = [
    ['place_order', order(market, { tick: 2 }), 201, null],
    ['cancel_order', { order_id: aOrder }, 404, unknown],
    ['batch_cancel_orders', { order_ids: [aOrder] }, 200, itemUnknown],
    ['decrease_order', { order_id: aOrder, new_qty: 1 }, 404, unknown],
    ['cancel_all', {}, 202, null],
    ['batch_place_orders', { orders: [order(market, { tick: 2 })] }, 201, null],
  ];
  for (const [cmd, params, status, code] of cases) {
    const r = await reader.call(cmd, params);
    assert.equal(r.status, 403, `read-only ${cmd}: ${JSON.stringify(r)}`);
    const o = await other.call(cmd, params);
    assert.equal(o.status, status, `B ${cmd}: ${JSON.stringify(o)}`);
    if (code !== null) assert.equal(code(o), 'unknown_order', `B ${cmd}: ${JSON.stringify(o)}`);
  }
  await sleep(200);
  const list = await a.client.orders({ client_order_id: '91' });
  assert.equal(list.orders[0]!.remaining_qty, 3, 'A\'s order untouched');
  assert.equal(list.orders[0]!.reason, '');
  const leaked = other.all.filter((m) => {
    const t = JSON.stringify(m);
    return t.includes(`"order_id":"${aOrder}"`) && !t.includes('unknown_order');
  });
  assert.deepEqual(leaked, []);
  await reader.close();
  await other.close();
});
