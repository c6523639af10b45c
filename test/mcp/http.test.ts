// MCP lane over Streamable HTTP (POST /v1/mcp), driven with the official
// @modelcontextprotocol/sdk client (StreamableHTTPClientTransport with a fetch
// that signs every request) and, for what the SDK will not send, with signed
// raw requests: initialize, tools/list (every operation, schemas,
// annotations), reads and writes through tools matching the REST lane, the
// closed input schemas, scopes, isError mapping, -32602, 405 on GET and
// DELETE, 202 for notifications, 400 for a bad MCP-Protocol-Version and for
// a batch, 401 for a bad signature, and rate-limit costs equal to REST's.
// One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { isItemError } from '../../src/client/index.js';
import { ROUTES } from '../../src/gateway/routes.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertErrorReply, newAccount, newKey, newMarket, order, raw, rejects, signedRaw, type Key } from '../support/harness.js';
import { callError, callOk, connectMcp, stable, type McpSession } from './mcp_harness.js';

let tx: TestExchange;
let trader: Key;
let other: Key;
let reader: Key;
let market: number;
let mcp: McpSession;
let readerMcp: McpSession;

/** Every read and write of the spec's endpoint table plus the exchange's additions, by operation name. */
const SPEC_OPERATIONS = [
  'get_exchange_status',
  'get_exchange_schedule',
  'get_retention',
  'get_account_limits',
  'list_markets',
  'get_market',
  'get_orderbook',
  'list_trades',
  'get_oracle_price',
  'list_rounds',
  'get_round',
  'get_balance',
  'list_positions',
  'list_fills',
  'list_orders',
  'place_order',
  'cancel_all_orders',
  'place_batch',
  'cancel_batch',
  'decrease_order',
  'get_queue_position',
  'arm_deadman',
  'disarm_deadman',
  'get_deadman',
  'get_deposit_address',
  'request_withdrawal',
  'get_withdrawal',
];

before(async () => {
  tx = await startTestExchange();
  trader = await newAccount(tx);
  other = await newAccount(tx);
  reader = await newKey(tx, trader.accountId, ['read']);
  market = await newMarket(tx);
  mcp = await connectMcp(tx, trader);
  readerMcp = await connectMcp(tx, reader);
});

after(async () => {
  await mcp?.close();
  await readerMcp?.close();
  await tx.stop();
});

function mcpPost(k: { keyId: number; secret: string }, body: unknown, headers: Record<string, string> = {}): ReturnType<typeof signedRaw> {
  const text = typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body);
  return signedRaw(tx.port, k, 'POST', '/v1/mcp', text, { headers: { accept: 'application/json, text/event-stream', ...headers } });
}

// ---- initialize, tools/list ---------------------------------------------------------

test('mcp: initialize negotiates 2025-11-25 and declares tools, serverInfo and instructions about ticks, ladders and cents', () => {
  assert.equal(mcp.transport.protocolVersion, '2025-11-25');
  const info = mcp.client.getServerVersion();
  assert.equal(info?.name, 'dx');
  assert.match(String(info?.version), /^[0-9]+\.[0-9]+\.[0-9]+/);
  assert.ok(mcp.client.getServerCapabilities()?.tools, 'capabilities.tools');
  const text = mcp.client.getInstructions() ?? '';
  for (const needle of ['ticks 1..99', 'cents', 'YES bids', 'NO bids', '100 - t', 'client_order_id', 'isError']) {
    assert.ok(text.includes(needle), `instructions mention ${needle}`);
  }
});

test('mcp: initialize with a version the server does not speak answers its own; a malformed initialize is -32602', async () => {
  const r = await mcpPost(trader, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '1999-01-01', capabilities: {}, clientInfo: { name: 'x', version: '1' } },
  });
  assert.equal(r.status, 200);
  assert.match(String(r.headers['content-type']), /^application\/json/);
  assert.equal(r.json.result.protocolVersion, '2025-11-25');
  assert.equal(r.headers['mcp-session-id'], undefined, 'stateless: no session');
  const bad = await mcpPost(trader, { jsonrpc: '2.0', id: 2, method: 'initialize', params: {} });
  assert.equal(bad.json.error.code, -32602);
});

test('mcp: tools/list has one tool per REST operation, named after it, with closed input schemas, output schemas and ' +
  'annotations', async () => {
  const { tools } = await mcp.client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ROUTES.map((r) => r.name).sort(), 'one tool per route');
  for (const op of SPEC_OPERATIONS) assert.ok(names.includes(op), `tool ${op}`);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal((t.inputSchema as Record<string, unknown>).additionalProperties, false, `${t.name}: closed input schema`);
    assert.equal(t.outputSchema?.type, 'object', `${t.name}: outputSchema`);
    assert.ok((t.description ?? '').length > 60, `${t.name}: a description an agent can act on`);
    assert.match(t.description ?? '', /scope (read|trade|withdraw)/, `${t.name}: names its scope`);
    const a = t.annotations!;
    const route = ROUTES.find((r) => r.name === t.name)!;
    assert.equal(a.readOnlyHint, route.method === 'GET', `${t.name}: readOnlyHint on reads only`);
    if (a.readOnlyHint) assert.equal(a.destructiveHint, false, `${t.name}: a read is not destructive`);
  }
  const byName = new Map(tools.map((t) => [t.name, t]));
  for (const n of ['place_order', 'place_batch', 'cancel_all_orders', 'request_withdrawal'])
    assert.equal(byName.get(n)!.annotations!.destructiveHint, true, `${n} destructive`);
  for (const n of ['decrease_order', 'disarm_deadman']) assert.equal(byName.get(n)!.annotations!.idempotentHint, true, `${n} idempotent`);
  assert.equal(byName.get('place_order')!.annotations!.idempotentHint, false);
  // The merged input: path parameters + query + body, same names as REST.
  const place = byName.get('place_order')!.inputSchema as { properties: Record<string, unknown>; required: string[] };
  assert.deepEqual(
    Object.keys(place.properties).sort(),
    [
      'client_order_id',
      'expiry_ts',
      'group_id',
      'market_id',
      'max_cost',
      'outcome',
      'post_only',
      'qty',
      'side',
      'stp',
      'tick',
      'tif',
    ].sort(),
  );
  assert.deepEqual([...place.required].sort(), ['market_id', 'outcome', 'qty', 'side', 'tick']);
  const book = byName.get('get_orderbook')!;
  assert.deepEqual((book.inputSchema as { required: string[] }).required, ['market_id']);
  assert.ok('depth' in (book.inputSchema.properties ?? {}));
  const level = (book.outputSchema!.properties as any).yes.items;
  assert.equal(level.prefixItems.length, 2, '[tick, qty] is a prefixItems tuple');
  assert.equal(level.items, undefined);
  const decrease = byName.get('decrease_order')!.inputSchema as { properties: Record<string, unknown>; required: string[] };
  assert.deepEqual([...decrease.required].sort(), ['new_qty', 'order_id']);
});

test('mcp: ping answers an empty result', async () => {
  assert.deepEqual(await mcp.client.ping(), {});
});

// ---- reads and writes match REST ------------------------------------------------------

test('mcp: reads through tools equal the REST answers', async () => {
  const pairs: [string, Record<string, unknown>, () => Promise<unknown>][] = [
    ['get_exchange_status', {}, () => trader.client.exchangeStatus()],
    ['get_retention', {}, () => trader.client.retention()],
    ['get_account_limits', {}, () => trader.client.limits()],
    ['list_markets', { status: ['trading'] }, () => trader.client.markets({ status: ['trading'] })],
    ['get_market', { market_id: market }, () => trader.client.market(market)],
    ['get_orderbook', { market_id: market, depth: 5 }, () => trader.client.orderbook(market, 5)],
    ['list_trades', { market_id: market, limit: 10 }, () => trader.client.trades(market, { limit: 10 })],
    ['get_candlesticks', { market_id: market, period: '5m' }, () => trader.client.candles(market, { period: '5m' })],
    ['get_oracle_price', {}, () => trader.client.oraclePrice()],
    ['list_rounds', { category: 1 }, () => trader.client.rounds({ category: 1 })],
    ['get_round', { market_id: market }, () => trader.client.round(market)],
    ['get_balance', {}, () => trader.client.balance()],
    ['list_positions', {}, () => trader.client.positions()],
    ['list_fills', { market_id: market }, () => trader.client.fills({ market_id: market })],
    ['list_orders', { status: ['resting', 'partially_filled'] }, () => trader.client.orders({ status: ['resting', 'partially_filled'] })],
    ['get_deposit_address', {}, () => trader.client.request('GET', '/v1/funding/deposit_address')],
  ];
  for (const [tool, args, rest] of pairs) {
    const viaMcp = await callOk(mcp, tool, args);
    assert.deepEqual(stable(viaMcp), stable(await rest()), `${tool} matches REST`);
  }
  const account = await callOk(mcp, 'get_account_limits');
  assert.deepEqual(account.scopes, ['read', 'trade']);
});

test('mcp: an order placed through a tool is the order REST lists; queue position, decrease and cancel act on it', async () => {
  const placed = await callOk(mcp, 'place_order', {
    market_id: market,
    side: 'buy',
    outcome: 'yes',
    tick: 31,
    qty: 7,
    client_order_id: '7001',
  });
  assert.equal(placed.status, 'resting');
  assert.equal(placed.client_order_id, '7001');
  assert.equal(placed.resting_qty, 7);
  const listed = await trader.client.orders({ client_order_id: '7001' });
  assert.equal(listed.orders.length, 1);
  assert.equal(listed.orders[0]!.order_id, placed.order_id);
  assert.equal(listed.orders[0]!.tick, 31);

  const q = await callOk(mcp, 'get_queue_position', { order_id: placed.order_id });
  assert.deepEqual(stable(q), stable(await trader.client.queuePosition(placed.order_id)));

  const dec = await callOk(mcp, 'decrease_order', { order_id: placed.order_id, new_qty: 3 });
  assert.equal(dec.status, 'decreased');
  assert.equal(dec.new_qty, 3);
  const again = await callOk(mcp, 'decrease_order', { order_id: placed.order_id, new_qty: 3 });
  assert.equal(again.new_qty, 3, 'decrease is idempotent');
  assert.equal((await trader.client.orders({ client_order_id: '7001' })).orders[0]!.remaining_qty, 3);

  const c = await callOk(mcp, 'cancel_batch', { order_ids: [placed.order_id, '999999999'] });
  assert.equal(c.results[0].status, 'canceled');
  assert.equal(c.results[0].canceled_qty, 3);
  assert.equal(c.results[1].error.code, 'unknown_order');
  assert.equal((await trader.client.orders({ client_order_id: '7001' })).orders[0]!.reason, 'user_canceled');
});

test('mcp: a trade through tools fills like REST: fills, positions and balance agree', async () => {
  const m = await newMarket(tx);
  const rest = await other.client.placeOrder(order(m, { side: 'buy', outcome: 'no', tick: 60, qty: 4 }));
  assert.equal(rest.status, 'resting');
  const taken = await callOk(mcp, 'place_order', { market_id: m, side: 'buy', outcome: 'yes', tick: 40, qty: 4, tif: 'ioc' });
  assert.equal(taken.status, 'filled');
  assert.deepEqual(taken.fills, [{ tick_yes: 40, qty: 4, path: 'mint' }]);
  const fills = await callOk(mcp, 'list_fills', { market_id: m });
  assert.deepEqual(stable(fills), stable(await trader.client.fills({ market_id: m })));
  assert.equal(fills.fills[0].role, 'taker');
  const pos = await callOk(mcp, 'list_positions', { market_id: m });
  assert.deepEqual(pos.positions, [{ market_id: m, outcome: 'yes', free: 4, reserved_for_sale: 0 }]);
  const book = await callOk(mcp, 'get_orderbook', { market_id: m });
  assert.deepEqual(book.no, [], 'the NO bid was taken');
  const trades = await callOk(mcp, 'list_trades', { market_id: m });
  assert.equal(trades.trades[0].tick_yes, 40);
});

test('mcp: batch place, cancel-all and the dead-man timer through tools', async () => {
  const m = await newMarket(tx);
  // One item failing the closed schema refuses the whole batch, as on REST.
  const refused = await callError(
    mcp,
    'place_batch',
    { orders: [{ market_id: m, side: 'buy', outcome: 'yes', tick: 0, qty: 1 }] },
    'invalid_field',
  );
  assert.match(String(refused.details.field), /orders\.0\.tick/);

  const ok = await callOk(mcp, 'place_batch', { orders: [
    { market_id: m, side: 'buy', outcome: 'yes', tick: 10, qty: 1, group_id: 5 },
    { market_id: m, side: 'buy', outcome: 'yes', tick: 11, qty: 1, group_id: 6 },
    { market_id: 999_999, side: 'buy', outcome: 'yes', tick: 11, qty: 1 },
  ] });
  assert.equal(ok.results.length, 3);
  assert.equal(ok.results[0].status, 'resting');
  assert.equal(ok.results[2].error.code, 'unknown_market');
  const ack = await callOk(mcp, 'cancel_all_orders', { market_id: m, group_id: 5 });
  assert.match(ack.seq, /^[0-9]+$/);
  const live = await trader.client.orders({ market_id: m, status: ['resting'] });
  assert.deepEqual(live.orders.map((o) => o.group_id), [6], 'only group 5 was canceled');

  const armed = await callOk(mcp, 'arm_deadman', { timeout_ms: 60000 });
  assert.equal(armed.armed, true);
  assert.equal(armed.timeout_ms, 60000);
  const state = await callOk(mcp, 'get_deadman');
  assert.equal(state.armed, true);
  assert.equal(state.fires_at_ts, armed.fires_at_ts);
  assert.equal((await trader.client.deadman()).fires_at_ts, armed.fires_at_ts);
  assert.equal((await callOk(mcp, 'disarm_deadman')).armed, false);
  assert.equal((await callOk(mcp, 'disarm_deadman')).armed, false, 'disarm is idempotent');
  assert.equal((await trader.client.deadman()).armed, false);
  await callOk(mcp, 'cancel_all_orders');
});

test('mcp: a withdrawal through a tool needs the withdraw scope and is the one REST reads', async () => {
  await callError(mcp, 'request_withdrawal', { client_withdrawal_id: '51', amount: '100', destination: 'bank-1' }, 'missing_scope');
  const w = await newKey(tx, trader.accountId, ['read', 'withdraw']);
  const s = await connectMcp(tx, w);
  try {
    const created = await callOk(s, 'request_withdrawal', { client_withdrawal_id: '51', amount: '100', destination: 'bank-1' });
    assert.equal(created.status, 'pending');
    assert.equal(created.client_withdrawal_id, '51');
    const viaTool = await callOk(s, 'get_withdrawal', { client_withdrawal_id: '51' });
    assert.deepEqual(stable(viaTool), stable(await w.client.withdrawal('51')));
    await callError(s, 'get_withdrawal', { client_withdrawal_id: '52' }, 'not_found');
  } finally {
    await s.close();
  }
});

// ---- refusals --------------------------------------------------------------------------

test('mcp: the closed input schema refuses an unknown argument (unknown_field) and a bad value (invalid_field); nothing is ' +
  'placed', async () => {
  const before = (await trader.client.orders()).orders.length;
  const unknown = await callError(
    mcp,
    'place_order',
    { market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1, colour: 'red' },
    'unknown_field',
  );
  assert.equal(unknown.details.field, 'colour');
  assert.equal(unknown.num, null);
  assert.equal(unknown.origin, 'gateway');
  const bad = await callError(mcp, 'place_order', { market_id: market, side: 'buy', outcome: 'yes', tick: 100, qty: 1 }, 'invalid_field');
  assert.equal(bad.details.field, 'tick');
  await callError(mcp, 'place_order', { market_id: market, side: 'buy', outcome: 'yes', tick: 30 }, 'invalid_field');
  await callError(mcp, 'get_balance', { verbose: true }, 'unknown_field');
  await callError(mcp, 'list_orders', { limit: 1001 }, 'invalid_field');
  await callError(mcp, 'list_orders', { status: ['open'] }, 'invalid_field');
  await callError(mcp, 'get_market', {}, 'invalid_field');
  // A lone surrogate is valid JSON but no query string can carry it.
  const surrogate = await callError(mcp, 'list_markets', { cursor: '\ud800' }, 'invalid_field');
  assert.equal(surrogate.details.field, 'cursor');
  // Cross-field rules are the REST handler's own.
  const combo = await callError(
    mcp,
    'place_order',
    { market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1, post_only: true, tif: 'ioc' },
    'invalid_field',
  );
  assert.equal(combo.details.field, 'post_only');
  // The body's transport hygiene, as REST's, inside the tool's result (not a JSON-RPC parse error): prototype keys and nesting
  // deeper than 8 counted from the arguments.
  const proto = await callError(mcp, 'place_order', { market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1, constructor: 1 },
    'invalid_json');
  assert.match(proto.message, /forbidden key constructor/);
  let deep: unknown = 1;
  for (let i = 0; i < 10; i++) deep = { d: deep };
  const one = { market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1 };
  await callError(mcp, 'place_batch', { orders: [one], deep }, 'invalid_json');
  // Market 0 is an id no market has: 404 as on REST, not a schema refusal.
  await callError(mcp, 'get_market', { market_id: 0 }, 'unknown_market');
  await callError(mcp, 'get_round', { market_id: 0 }, 'round_not_found');
  assert.equal((await trader.client.orders()).orders.length, before, 'no order was placed');
});

test('mcp: scopes are enforced per tool: a read-only key reads but every write is missing_scope', async () => {
  await callOk(readerMcp, 'get_balance');
  const e = await callError(
    readerMcp,
    'place_order',
    { market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1 },
    'missing_scope',
  );
  assert.equal(e.num, null);
  await callError(readerMcp, 'cancel_all_orders', {}, 'missing_scope');
  await callError(readerMcp, 'arm_deadman', { timeout_ms: 5000 }, 'missing_scope');
  // The scope is checked before the arguments, as on REST (403 before 400).
  await callError(readerMcp, 'place_order', { nonsense: 1 }, 'missing_scope');
});

test('mcp: REST errors become isError results carrying the envelope (core rejects with num and origin core)', async () => {
  const unknown = await callError(mcp, 'get_market', { market_id: 987654 }, 'unknown_market');
  assert.equal(unknown.num, 265);
  assert.equal(unknown.origin, 'core');
  await callError(mcp, 'get_round', { market_id: 987654 }, 'round_not_found');
  const rej = await callError(mcp, 'place_order', { market_id: 987654, side: 'buy', outcome: 'yes', tick: 30, qty: 1 }, 'unknown_market');
  assert.equal(rej.num, 265);
  const broke = await newAccount(tx, { deposit: '0' });
  const s = await connectMcp(tx, broke);
  try {
    const e = await callError(
      s,
      'place_order',
      { market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1 },
      'insufficient_balance',
    );
    assert.equal(e.num, 261);
    await callError(s, 'decrease_order', { order_id: '123456789', new_qty: 0 }, 'unknown_order');
  } finally {
    await s.close();
  }
  await callOk(mcp, 'place_order', { market_id: market, side: 'buy', outcome: 'yes', tick: 5, qty: 1, client_order_id: '8001' });
  const dup = await callError(
    mcp,
    'place_order',
    { market_id: market, side: 'buy', outcome: 'yes', tick: 5, qty: 1, client_order_id: '8001' },
    'duplicate_client_order_id',
  );
  assert.match(String(dup.details.order_id), /^[0-9]+$/);
});

test('mcp: an unknown tool and malformed tools/call params are JSON-RPC -32602', async () => {
  await assert.rejects(mcp.client.callTool({ name: 'no_such_tool', arguments: {} }), (e: unknown) => {
    assert.ok(e instanceof McpError, String(e));
    assert.equal(e.code, ErrorCode.InvalidParams);
    assert.match(e.message, /unknown tool no_such_tool/);
    return true;
  });
  const noName = await mcpPost(trader, { jsonrpc: '2.0', id: 'a', method: 'tools/call', params: { arguments: {} } });
  assert.equal(noName.status, 200);
  assert.deepEqual({ id: noName.json.id, code: noName.json.error.code }, { id: 'a', code: -32602 });
  const arrayArgs = await mcpPost(trader, {
    jsonrpc: '2.0',
    id: 'b',
    method: 'tools/call',
    params: { name: 'get_balance', arguments: [1] },
  });
  assert.equal(arrayArgs.json.error.code, -32602);
  const badParams = await mcpPost(trader, { jsonrpc: '2.0', id: 'c', method: 'tools/call', params: 'get_balance' });
  assert.equal(badParams.json.error.code, -32602);
  const unknownMethod = await mcpPost(trader, { jsonrpc: '2.0', id: 'd', method: 'resources/list' });
  assert.equal(unknownMethod.json.error.code, -32601);
});

// ---- transport ----------------------------------------------------------------------------

test('mcp: GET and DELETE on /v1/mcp answer 405 with Allow: POST', async () => {
  for (const method of ['GET', 'DELETE']) {
    const r = await signedRaw(tx.port, trader, method, '/v1/mcp', undefined, { headers: { accept: 'text/event-stream' } });
    assertErrorReply(r, 405, 'method_not_allowed');
    assert.equal(r.headers.allow, 'POST');
  }
  const unsigned = await raw(tx.port, { method: 'GET', target: '/v1/mcp' });
  assert.equal(unsigned.status, 405);
});

test('mcp: a notification is answered 202 with no body; a response from the client too', async () => {
  const n = await mcpPost(trader, { jsonrpc: '2.0', method: 'notifications/initialized' });
  assert.equal(n.status, 202);
  assert.equal(n.text, '');
  const r = await mcpPost(trader, { jsonrpc: '2.0', id: 99, result: {} });
  assert.equal(r.status, 202);
});

test('mcp: an unsupported MCP-Protocol-Version is 400; a supported one is served', async () => {
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };
  const bad = await mcpPost(trader, ping, { 'mcp-protocol-version': '1900-01-01' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.error.code, -32600);
  assert.match(bad.json.error.message, /MCP-Protocol-Version/);
  const worse = await mcpPost(trader, { ...ping, id: 2 }, { 'mcp-protocol-version': 'not-a-version' });
  assert.equal(worse.status, 400);
  const good = await mcpPost(trader, { ...ping, id: 3 }, { 'mcp-protocol-version': '2025-11-25' });
  assert.equal(good.status, 200);
  assert.deepEqual(good.json, { jsonrpc: '2.0', id: 3, result: {} });
});

test('mcp: a batch array, invalid JSON and a non-JSON-RPC object are 400 with a JSON-RPC error', async () => {
  const batch = await mcpPost(trader, [{ jsonrpc: '2.0', id: 1, method: 'ping' }, { jsonrpc: '2.0', id: 2, method: 'ping' }]);
  assert.equal(batch.status, 400);
  assert.equal(batch.json.error.code, -32600);
  assert.equal(batch.json.id, null);
  assert.match(batch.json.error.message, /batch/);
  const garbage = await mcpPost(trader, '{"jsonrpc": "2.0", ');
  assert.equal(garbage.status, 400);
  assert.equal(garbage.json.error.code, -32700);
  // JSON is UTF-8: a tool call whose argument holds bytes that are not is a parse error, never run with U+FFFD in their place.
  const call = JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/call', params: { name: 'get_balance', arguments: { x: 'ab' } } });
  const at = call.indexOf('ab') + 1;
  const notUtf8 = await mcpPost(trader, Buffer.concat([Buffer.from(call.slice(0, at)), Buffer.from([0xff]), Buffer.from(call.slice(at))]));
  assert.equal(notUtf8.status, 400, notUtf8.text);
  assert.equal(notUtf8.json.error.code, -32700);
  assert.match(notUtf8.json.error.message, /UTF-8/);
  const notRpc = await mcpPost(trader, { hello: 'world' });
  assert.equal(notRpc.status, 400);
  assert.equal(notRpc.json.error.code, -32600);
  // With a usable id it is answered with that id (JSON-RPC 2.0), 200.
  const withId = await mcpPost(trader, { id: 5, method: 'ping' });
  assert.equal(withId.status, 200);
  assert.deepEqual([withId.json.id, withId.json.error.code], [5, -32600]);
});

test('mcp: signed exactly like REST: a bad signature, a replay and a revoked key are 401 envelopes', async () => {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' });
  const tampered = await signedRaw(tx.port, trader, 'POST', '/v1/mcp', body, { sign: { body: body.replace('ping', 'pong') } });
  assertErrorReply(tampered, 401, 'unauthorized');
  const unsigned = await raw(tx.port, { method: 'POST', target: '/v1/mcp', body, headers: { 'content-type': 'application/json' } });
  assertErrorReply(unsigned, 401, 'unauthorized');
  const ts = Date.now();
  const first = await signedRaw(tx.port, trader, 'POST', '/v1/mcp', body, { ts });
  assert.equal(first.status, 200);
  const replay = await signedRaw(tx.port, trader, 'POST', '/v1/mcp', body, { ts });
  assertErrorReply(replay, 401, 'unauthorized');
  const gone = await newKey(tx, trader.accountId);
  await gone.keys.revokeKey(gone.keyId);
  const revoked = await mcpPost(gone, { jsonrpc: '2.0', id: 1, method: 'ping' });
  assertErrorReply(revoked, 401, 'unauthorized');
});

test('mcp: a foreign Origin is 403; a query string is refused', async () => {
  const r = await mcpPost(trader, { jsonrpc: '2.0', id: 1, method: 'ping' }, { origin: 'http://evil.example' });
  assert.equal(r.status, 403);
  const same = await mcpPost(trader, { jsonrpc: '2.0', id: 2, method: 'ping' }, { origin: `http://127.0.0.1:${tx.port}` });
  assert.equal(same.status, 200);
  const body = JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' });
  const q = await signedRaw(tx.port, trader, 'POST', '/v1/mcp?x=1', body);
  assertErrorReply(q, 400, 'unknown_field');
});

test("mcp: a tool call costs the REST twin's tokens: five 20-id cancel batches through MCP empty the write bucket that REST then finds " +
  "empty", async () => {
  const key = await newKey(tx, trader.accountId);
  // The default write burst (100) refilling at 1 a second, not 50: on a loaded machine the six calls below took long
  // enough at 50 a second to refill the 20 tokens the refusal depends on.
  const read = { sustained_rate_per_s: 100, burst: 200 };
  await tx.admin.setKeyTier(key.keyId, { tier: 'custom', read, write: { sustained_rate_per_s: 1, burst: 100 } });
  const s = await connectMcp(tx, key);
  try {
    const twenty = Array.from({ length: 20 }, (_, i) => String(800_000_000 + i));
    for (let i = 0; i < 5; i++) {
      const r = await callOk(s, 'cancel_batch', { order_ids: twenty });
      assert.ok(r.results.every((x: unknown) => isItemError(x as never)));
    }
    const limited = await callError(s, 'cancel_batch', { order_ids: twenty }, 'rate_limited');
    assert.match(String(limited.details.retry_after_ms), /^[0-9]+$/);
    await rejects(key.client.cancelBatch(twenty), 429, 'rate_limited');
    // The read bucket is separate: reads still work.
    await callOk(s, 'get_balance');
  } finally {
    await s.close();
  }
});

test('mcp: a REST round close is visible through the tools at once (one read model)', async () => {
  const m = await newMarket(tx);
  await tx.admin.freezeRound(m);
  const r = await callOk(mcp, 'get_round', { market_id: m });
  assert.equal(r.status, 'frozen');
  const e = await callError(mcp, 'place_order', { market_id: m, side: 'buy', outcome: 'yes', tick: 30, qty: 1 }, 'market_not_trading');
  assert.equal(e.num, 264);
});
