// REST lane, black box: every error of the spec and of native-layout/codes.json with
// its HTTP status, code, num and origin. Gateway errors have num null and
// origin gateway; core rejects carry their num and origin core. Malformed
// requests are hand-made over node:http (signed by the harness, not by the
// client library). One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import {
  assertErrorReply, newAccount, newKey, newMarket, order, rawSocket, rejects, signHeaders, signedRaw, sleep, type Key,
} from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;

before(async () => {
  tx = await startTestExchange();
  k = await newAccount(tx);
  market = await newMarket(tx);
});

after(async () => {
  await tx.stop();
});

const ORDER = (o: Record<string, unknown> = {}): string =>
  JSON.stringify({ market_id: market, side: 'buy', outcome: 'yes', tick: 40, qty: 1, ...o });

function post(target: string, body: string, key: Key = k): ReturnType<typeof signedRaw> {
  return signedRaw(tx.port, key, 'POST', target, body);
}

function get(target: string, key: Key = k): ReturnType<typeof signedRaw> {
  return signedRaw(tx.port, key, 'GET', target);
}

// ---- 400 ---------------------------------------------------------------------------

test('errors: an unknown body field is 400 unknown_field naming the field', async () => {
  const r = await post('/v1/portfolio/orders', ORDER({ colour: 'red' }));
  assertErrorReply(r, 400, 'unknown_field');
  assert.equal(r.json.error.details?.field, 'colour');
  const nested = await post('/v1/portfolio/orders/batch', JSON.stringify({ orders: [JSON.parse(ORDER({ amend: true }))] }));
  assertErrorReply(nested, 400, 'unknown_field');
  assert.match(String(nested.json.error.details?.field), /amend/);
  const dm = await post('/v1/portfolio/deadman', '{"timeout_ms":5000,"extra":1}');
  assertErrorReply(dm, 400, 'unknown_field');
});

test('errors: an unknown query parameter is 400 unknown_field naming the parameter', async () => {
  const r = await get('/v1/markets?colour=red');
  assertErrorReply(r, 400, 'unknown_field');
  assert.equal(r.json.error.details?.field, 'colour');
  assertErrorReply(await get('/v1/exchange/status?verbose=1'), 400, 'unknown_field');
  assertErrorReply(await signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders?side=buy'), 400, 'unknown_field');
});

test('errors: a body field of the wrong type or range is 400 invalid_field with details.field and details.reason', async () => {
  const cases: [string, string, string][] = [
    ['/v1/portfolio/orders', ORDER({ tick: 0 }), 'tick'],
    ['/v1/portfolio/orders', ORDER({ tick: 100 }), 'tick'],
    ['/v1/portfolio/orders', ORDER({ tick: 40.5 }), 'tick'],
    ['/v1/portfolio/orders', ORDER({ qty: 0 }), 'qty'],
    ['/v1/portfolio/orders', ORDER({ side: 'hold' }), 'side'],
    ['/v1/portfolio/orders', ORDER({ market_id: String(market) }), 'market_id'],
    ['/v1/portfolio/orders', ORDER({ client_order_id: 5 }), 'client_order_id'],
    ['/v1/portfolio/orders', ORDER({ client_order_id: '-1' }), 'client_order_id'],
    ['/v1/portfolio/orders', ORDER({ client_order_id: '18446744073709551616' }), 'client_order_id'],
    ['/v1/portfolio/orders', ORDER({ tif: 'day' }), 'tif'],
    ['/v1/portfolio/deadman', '{"timeout_ms":999}', 'timeout_ms'],
    ['/v1/portfolio/deadman', '{"timeout_ms":60001}', 'timeout_ms'],
    ['/v1/portfolio/orders/1/decrease', '{"new_qty":-1}', 'new_qty'],
  ];
  for (const [target, body, field] of cases) {
    const r = await post(target, body);
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, field, `${body}: details.field`);
    assert.equal(typeof r.json.error.details?.reason, 'string', `${body}: details.reason`);
  }
});

test('errors: a query parameter of the wrong type or range is 400 invalid_field with details.field', async () => {
  const cases: [string, string][] = [
    ['/v1/markets?limit=0', 'limit'],
    ['/v1/markets?limit=1001', 'limit'],
    ['/v1/markets?limit=ten', 'limit'],
    ['/v1/markets?status=open', 'status'],
    [`/v1/markets/${market}/orderbook?depth=0`, 'depth'],
    [`/v1/markets/${market}/orderbook?depth=100`, 'depth'],
    ['/v1/rounds?category=65536', 'category'],
    ['/v1/portfolio/orders?status=resting,done', 'status'],
    ['/v1/portfolio/orders?client_order_id=abc', 'client_order_id'],
    ['/v1/portfolio/fills?order_id=99999999999999999999999', 'order_id'],
  ];
  for (const [target, field] of cases) {
    const r = await get(target);
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, field, `${target}: details.field`);
  }
});

test('errors: a malformed cursor, or one from another listing, is 400 invalid_field naming cursor', async () => {
  const m2 = await newMarket(tx);
  await k.client.placeBatch([order(m2, { tick: 7 }), order(m2, { tick: 8 })]);
  const page = await k.client.orders({ limit: 1 });
  assert.notEqual(page.cursor, '', 'an orders cursor to reuse elsewhere');
  const targets = [
    '/v1/portfolio/orders?cursor=not-a-cursor',
    '/v1/portfolio/fills?cursor=x',
    '/v1/portfolio/positions?cursor=x',
    '/v1/markets?cursor=zz',
    '/v1/rounds?cursor=AAAA',
    `/v1/markets/${market}/trades?cursor=bad`,
    `/v1/portfolio/fills?cursor=${encodeURIComponent(page.cursor)}`,
    `/v1/markets?cursor=${encodeURIComponent(page.cursor)}`,
  ];
  for (const target of targets) {
    const r = await get(target);
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, 'cursor', target);
  }
});

test('errors: a duplicated query parameter is 400 invalid_field', async () => {
  const r = await get('/v1/markets?limit=5&limit=6');
  assertErrorReply(r, 400, 'invalid_field');
  assert.equal(r.json.error.details?.field, 'limit');
});

test('errors: contradictory order flags are 400 invalid_field', async () => {
  const future = String(BigInt(Date.now() + 60_000) * 1_000_000n);
  const cases: [Record<string, unknown>, string][] = [
    [{ post_only: true, tif: 'ioc' }, 'post_only'],
    [{ post_only: true, tif: 'fok' }, 'post_only'],
    [{ tif: 'gtd' }, 'expiry_ts'],
    [{ expiry_ts: future }, 'expiry_ts'],
    [{ side: 'sell', max_cost: '100' }, 'max_cost'],
  ];
  for (const [extra, field] of cases) {
    const r = await post('/v1/portfolio/orders', ORDER(extra));
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, field, JSON.stringify(extra));
  }
});

test('errors: a batch cancel holding an id above 2^64-1 is refused whole with 400 invalid_field; nothing is canceled', async () => {
  const placed = await k.client.placeOrder(order(market, { tick: 31 }));
  const r = await signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders/batch', JSON.stringify({
    order_ids: [placed.order_id, '99999999999999999999'],
  }));
  assertErrorReply(r, 400, 'invalid_field');
  assert.equal(r.json.error.details?.field, 'order_ids.1');
  const live = (await k.client.orders()).orders.find((o) => o.order_id === placed.order_id);
  assert.ok(live !== undefined, 'the valid id in the refused batch is still live');
  await k.client.cancelBatch([placed.order_id]);
});

test('errors: a batch refused for an item\'s contradictory flags costs one write token, as a batch its schema refuses does', async () => {
  const key = await newKey(tx, k.accountId);
  const bare = await newMarket(tx, { round: false });
  const bad = (n: number) => Array.from({ length: 20 }, (_, i) => order(bare, i === 7 ? { post_only: true, tif: 'ioc' } : { qty: n + 1 }));
  // Burst 100: at 20 tokens each the sixth refused batch would be 429; at one each, all eight are 400.
  for (let i = 0; i < 8; i++) {
    const r = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', JSON.stringify({ orders: bad(i) }));
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, 'orders.7.post_only');
  }
  const single = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders', JSON.stringify(order(bare)));
  assert.notEqual(single.status, 429, single.text);
});

test('errors: a batch above a custom write burst is 400 invalid_field, not a 429 that never clears; batch_cap says the cap', async () => {
  const key = await newAccount(tx);
  await tx.admin.setKeyTier(key.keyId, {
    tier: 'custom', read: { sustained_rate_per_s: 100, burst: 200 }, write: { sustained_rate_per_s: 10, burst: 5 },
  });
  const limits = await signedRaw(tx.port, key, 'GET', '/v1/account/limits');
  assert.equal(limits.json.batch_cap, 5, limits.text);
  const orders = (n: number) => JSON.stringify({ orders: Array.from({ length: n }, (_, i) => order(market, { tick: 10 + i })) });
  for (let i = 0; i < 3; i++) {
    const r = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', orders(6));
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, 'orders');
  }
  const ids = JSON.stringify({ order_ids: ['1', '2', '3', '4', '5', '6'] });
  const c = await signedRaw(tx.port, key, 'DELETE', '/v1/portfolio/orders/batch', ids);
  assertErrorReply(c, 400, 'invalid_field');
  assert.equal(c.json.error.details?.field, 'order_ids');
  await sleep(600); // the bucket fills up whole (5 at 10 a second)
  const five = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', orders(5));
  assert.equal(five.status, 201, five.text);
});

test('errors: a body that is not JSON is 400 invalid_json', async () => {
  assertErrorReply(await post('/v1/portfolio/orders', '{"market_id":'), 400, 'invalid_json');
  assertErrorReply(await post('/v1/portfolio/orders', "{'market_id':1}"), 400, 'invalid_json');
  assertErrorReply(await post('/v1/portfolio/orders', ''), 400, 'invalid_json');
});

test('errors: a body that is not valid UTF-8 is 400 invalid_json; nothing is kept with U+FFFD for the bytes sent', async () => {
  const w = await newKey(tx, k.accountId, ['read', 'withdraw']);
  const body = Buffer.concat([
    Buffer.from('{"client_withdrawal_id":"9","amount":"10","destination":"ab'), Buffer.from([0xff, 0xfe]), Buffer.from('"}'),
  ]);
  assertErrorReply(await signedRaw(tx.port, w, 'POST', '/v1/withdrawals', body), 400, 'invalid_json');
  assertErrorReply(await signedRaw(tx.port, w, 'GET', '/v1/withdrawals/9'), 404, 'not_found');
  // U+FFFD itself, sent as UTF-8, is text like any other.
  const sent = JSON.stringify({ client_withdrawal_id: '10', amount: '10', destination: 'ab\uFFFD' });
  const ok = await signedRaw(tx.port, w, 'POST', '/v1/withdrawals', sent);
  assert.equal(ok.status, 201, ok.text);
  assert.equal(ok.json.destination, 'ab\uFFFD');
});

test('errors: __proto__ and constructor keys are 400 invalid_json', async () => {
  const proto = `{"__proto__":{"tick":1},${ORDER().slice(1)}`;
  assertErrorReply(await post('/v1/portfolio/orders', proto), 400, 'invalid_json');
  const ctor = `{"constructor":{"prototype":{}},${ORDER().slice(1)}`;
  assertErrorReply(await post('/v1/portfolio/orders', ctor), 400, 'invalid_json');
  const deep = JSON.stringify({ orders: [{ ...JSON.parse(ORDER()) }] }).replace('"tick"', '"__proto__":{},"tick"');
  assertErrorReply(await post('/v1/portfolio/orders/batch', deep), 400, 'invalid_json');
});

test('errors: JSON nested deeper than the cap is 400 invalid_json', async () => {
  const body = `${'['.repeat(40)}${']'.repeat(40)}`;
  assertErrorReply(await post('/v1/portfolio/orders', body), 400, 'invalid_json');
});

test('errors: a 70 KiB body is 413 body_too_large', async () => {
  const body = JSON.stringify({ orders: [], pad: 'x'.repeat(70 * 1024) });
  assertErrorReply(await post('/v1/portfolio/orders/batch', body), 413, 'body_too_large');
  const status = await get('/v1/exchange/status');
  assert.equal(status.status, 200, 'the connection-level cap leaves the server serving');
});

test('errors: a body on cancel-all is 400 unexpected_body, checked before the query', async () => {
  const body = JSON.stringify({ order_ids: ['1'] });
  const r = await signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders?market_id=abc&bogus=1', body);
  assertErrorReply(r, 400, 'unexpected_body');
  const plain = await signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders', body);
  assertErrorReply(plain, 400, 'unexpected_body');
});

test('errors: a body on a GET is 400 unexpected_body', async () => {
  const r = await signedRaw(tx.port, k, 'GET', '/v1/exchange/status', '{"a":1}');
  assertErrorReply(r, 400, 'unexpected_body');
  const list = await signedRaw(tx.port, k, 'GET', '/v1/portfolio/orders', '{}');
  assertErrorReply(list, 400, 'unexpected_body');
});

test('errors: a body over the 64 KiB cap on a route that takes none is 400 unexpected_body too, not 413', async () => {
  const big = JSON.stringify({ order_ids: ['1'], pad: 'x'.repeat(70 * 1024) });
  const bodiless = [['DELETE', '/v1/portfolio/orders'], ['GET', '/v1/portfolio/balance'], ['DELETE', '/v1/portfolio/deadman']];
  for (const [method, target] of bodiless) {
    assertErrorReply(await signedRaw(tx.port, k, method!, target!, big), 400, 'unexpected_body');
  }
});

test('errors: a zero client_order_id, expiry_ts or withdrawal amount is 400 invalid_field naming the field (the bound the document ' +
  'states)', async () => {
  for (const field of ['client_order_id', 'expiry_ts']) {
    const r = await post('/v1/portfolio/orders', ORDER({ tif: 'gtd', expiry_ts: '9000000000000000000', [field]: '0' }));
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, field);
  }
  const withdrawer = await newKey(tx, k.accountId, ['read', 'withdraw']);
  const w = await post('/v1/withdrawals', JSON.stringify({ client_withdrawal_id: '1', amount: '000', destination: 'x' }), withdrawer);
  assertErrorReply(w, 400, 'invalid_field');
  assert.equal(w.json.error.details?.field, 'amount');
});

test('errors: a duplicated Content-Length header is 400 invalid_field', async () => {
  const body = ORDER({ tick: 3 });
  const h = signHeaders(k, 'POST', '/v1/portfolio/orders', body);
  const head = Object.entries(h).map(([n, v]) => `${n}: ${v}\r\n`).join('');
  const text = `POST /v1/portfolio/orders HTTP/1.1\r\nHost: x\r\nConnection: close\r\n${head}Content-Length: ` +
    `${body.length}\r\nContent-Length: ${body.length}\r\n\r\n${body}`;
  const out = await rawSocket(tx.port, text);
  assert.match(out, /^HTTP\/1\.1 400 /, out.slice(0, 200));
  assert.match(out, /"code":"invalid_field"/);
  assert.equal(
    (await k.client.orders({ market_id: market, status: ['resting'] })).orders.filter((o) => o.tick === 3).length,
    0,
    'nothing was placed',
  );
});

// ---- 404 / 405 -------------------------------------------------------------------------

test('errors: an unknown route is 404 not_found, including the retired cancel_batch path', async () => {
  assertErrorReply(await get('/v1/nope'), 404, 'not_found');
  assertErrorReply(await get('/v1/markets/1/ticker'), 404, 'not_found');
  assertErrorReply(await get('/v2/markets'), 404, 'not_found');
  assertErrorReply(await post('/v1/portfolio/orders/cancel_batch', '{"order_ids":["1"]}'), 404, 'not_found');
});

test('errors: a known path with another method is 405 method_not_allowed with an Allow header', async () => {
  const cases: [string, string, string[]][] = [
    ['PUT', '/v1/portfolio/orders', ['DELETE', 'GET', 'POST']],
    ['PATCH', '/v1/markets', ['GET']],
    ['GET', '/v1/portfolio/orders/batch', ['DELETE', 'POST']],
    ['POST', '/v1/withdrawals/5', ['GET']],
    ['GET', '/v1/withdrawals', ['POST']],
    ['PUT', '/v1/portfolio/deadman', ['DELETE', 'GET', 'POST']],
  ];
  for (const [method, target, allowed] of cases) {
    const r = await signedRaw(tx.port, k, method, target);
    assertErrorReply(r, 405, 'method_not_allowed');
    const allow = String(r.headers.allow ?? '');
    assert.deepEqual(allow.split(',').map((s) => s.trim()).filter((s) => s).sort(), allowed, `${method} ${target}: Allow ${allow}`);
  }
});

test('errors: a HEAD request is answered without a body', async () => {
  // RFC 9110 9.3.2: a response to HEAD carries no content. A body here is read
  // by the client as the start of the next response on the connection.
  const h = signHeaders(k, 'HEAD', '/v1/markets');
  const head = Object.entries(h).map(([n, v]) => `${n}: ${v}\r\n`).join('');
  const out = await rawSocket(tx.port, `HEAD /v1/markets HTTP/1.1\r\nHost: x\r\n${head}\r\n`);
  const [status, rest] = [out.slice(0, out.indexOf('\r\n')), out.slice(out.indexOf('\r\n\r\n') + 4)];
  assert.match(status, /^HTTP\/1\.1 (405|200|404) /, out.slice(0, 200));
  assert.equal(rest, '', `no bytes after the head of a HEAD response, got ${JSON.stringify(rest.slice(0, 80))}`);
});

test('errors: an unknown market is 404 unknown_market on the market, orderbook and trades reads and on a placement', async () => {
  for (const target of ['/v1/markets/9999', '/v1/markets/9999/orderbook', '/v1/markets/9999/trades']) {
    assertErrorReply(await get(target), 404, 'unknown_market', { num: 265, origin: 'core' });
  }
  await rejects(k.client.placeOrder(order(9999)), 404, 'unknown_market', { num: 265, origin: 'core' });
});

test('errors: a market that never opened a round, or an unknown one, is 404 round_not_found', async () => {
  const bare = await newMarket(tx, { round: false });
  await rejects(k.client.round(bare), 404, 'round_not_found');
  await rejects(k.client.round(9999), 404, 'round_not_found');
});

test('errors: an unknown, foreign or terminal order is 404 unknown_order on decrease and queue position', async () => {
  const other = await newAccount(tx);
  const foreign = await other.client.placeOrder(order(market, { tick: 3 }));
  const mine = await k.client.placeOrder(order(market, { tick: 3 }));
  await k.client.cancelBatch([mine.order_id]);
  for (const id of ['424242424', foreign.order_id, mine.order_id, '18446744073709551615']) {
    await rejects(k.client.decrease(id, 0), 404, 'unknown_order', { num: 260, origin: 'core' });
    await rejects(k.client.queuePosition(id), 404, 'unknown_order', { num: 260, origin: 'core' });
  }
  assert.equal(
    (await other.client.orders({ status: ['resting'] })).orders[0]?.order_id,
    foreign.order_id,
    'the foreign order is untouched',
  );
});

// ---- core rejects --------------------------------------------------------------------------

test('errors: a buy beyond available cash is 422 insufficient_balance and is kept as a rejected order', async () => {
  const poor = await newAccount(tx, { deposit: '100' });
  await rejects(poor.client.placeOrder(order(market, { tick: 40, qty: 3, client_order_id: '55' })), 422, 'insufficient_balance', {
    num: 261,
    origin: 'core',
  });
  const rej = await poor.client.orders({ status: ['rejected'] });
  assert.equal(rej.orders.length, 1);
  assert.equal(rej.orders[0]!.reason, 'insufficient_balance');
  assert.equal((await poor.client.balance()).available, '100');
});

test('errors: a sell beyond free shares is 422 insufficient_position', async () => {
  await rejects(k.client.placeOrder(order(market, { side: 'sell', tick: 60, qty: 1 })), 422, 'insufficient_position', {
    num: 262,
    origin: 'core',
  });
});

test('errors: a buy past the market\'s position limit is 422 position_limit_exceeded', async () => {
  const m = await newMarket(tx, { position_limit: 10 });
  await k.client.placeOrder(order(m, { tick: 10, qty: 8 }));
  await rejects(k.client.placeOrder(order(m, { tick: 10, qty: 3 })), 422, 'position_limit_exceeded', { num: 263, origin: 'core' });
  const ok = await k.client.placeOrder(order(m, { tick: 10, qty: 2 }));
  assert.equal(ok.status, 'resting', 'up to the limit is allowed');
});

test('errors: an order on a market whose round is not trading is 409 market_not_trading', async () => {
  const bare = await newMarket(tx, { round: false });
  await rejects(k.client.placeOrder(order(bare)), 409, 'market_not_trading', { num: 264, origin: 'core' });
  const frozen = await newMarket(tx);
  await tx.admin.freezeRound(frozen);
  await rejects(k.client.placeOrder(order(frozen)), 409, 'market_not_trading', { num: 264, origin: 'core' });
});

test('errors: a reused client_order_id is 409 duplicate_client_order_id with details.order_id, live, terminal or rejected', async () => {
  const a = await newAccount(tx, { deposit: '10000' });
  const live = await a.client.placeOrder(order(market, { tick: 4, client_order_id: '700' }));
  const e1 = await rejects(a.client.placeOrder(order(market, { tick: 5, client_order_id: '700' })), 409, 'duplicate_client_order_id', {
    num: 266,
    origin: 'core',
  });
  assert.equal(e1.details?.order_id, live.order_id);
  assert.equal(e1.details?.status, 'resting', 'details carry the order\'s state');
  await a.client.cancelBatch([live.order_id]);
  const e2 = await rejects(a.client.placeOrder(order(market, { client_order_id: '700' })), 409, 'duplicate_client_order_id', {
    num: 266,
    origin: 'core',
  });
  assert.equal(e2.details?.order_id, live.order_id, 'a terminal order keeps its client_order_id');
  assert.equal(e2.details?.status, 'canceled');
  await rejects(a.client.placeOrder(order(market, { tick: 99, qty: 1000, client_order_id: '701' })), 422, 'insufficient_balance', {
    num: 261,
    origin: 'core',
  });
  const rejected = (await a.client.orders({ client_order_id: '701' })).orders[0];
  assert.ok(rejected, 'the rejected order is retained with its client_order_id');
  const e3 = await rejects(a.client.placeOrder(order(market, { client_order_id: '701' })), 409, 'duplicate_client_order_id', {
    num: 266,
    origin: 'core',
  });
  assert.equal(e3.details?.order_id, rejected.order_id);
  assert.equal(e3.details?.status, 'rejected');
  const other = await newAccount(tx);
  const p = await other.client.placeOrder(order(market, { tick: 4, client_order_id: '700' }));
  assert.equal(p.status, 'resting', 'client ids are per account');
});

test('errors: a gtd order whose expiry_ts is not in the future is 422 expiry_in_past', async () => {
  const past = String(BigInt(Date.now() - 1000) * 1_000_000n);
  await rejects(k.client.placeOrder(order(market, { tif: 'gtd', expiry_ts: past })), 422, 'expiry_in_past', { num: 267, origin: 'core' });
  const future = String(BigInt(Date.now() + 60_000) * 1_000_000n);
  const ok = await k.client.placeOrder(order(market, { tick: 2, tif: 'gtd', expiry_ts: future }));
  assert.equal(ok.status, 'resting');
});

test('errors: a withdrawal above available cash is 422 withdrawal_exceeds_available', async () => {
  const a = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  await rejects(a.client.withdraw({ client_withdrawal_id: '1', amount: '1001', destination: 'd' }), 422, 'withdrawal_exceeds_available', {
    num: 268,
    origin: 'core',
  });
  await a.client.withdraw({ client_withdrawal_id: '2', amount: '600', destination: 'd' });
  await rejects(a.client.withdraw({ client_withdrawal_id: '3', amount: '401', destination: 'd' }), 422, 'withdrawal_exceeds_available', {
    num: 268,
    origin: 'core',
  });
});

test('errors: text bound for a fixed record field holding U+0000, or longer than the field in UTF-8 bytes, is 400 invalid_field; ' +
  'nothing is stored', async () => {
  const a = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  const nul = await rejects(
    a.client.withdraw({ client_withdrawal_id: '1', amount: '1', destination: 'bc1qexample\u0000suffix' }), 400, 'invalid_field');
  assert.equal(nul.details?.field, 'destination');
  // 43 three-byte characters: 129 bytes in a 128-byte field.
  const long = await rejects(
    a.client.withdraw({ client_withdrawal_id: '1', amount: '1', destination: '€'.repeat(43) }), 400, 'invalid_field');
  assert.equal(long.details?.field, 'destination');
  const surrogate = await rejects(
    a.client.withdraw({ client_withdrawal_id: '1', amount: '1', destination: 'bc1q\ud800' }), 400, 'invalid_field');
  assert.equal(surrogate.details?.field, 'destination');
  // Nothing was held: the id is still free, and the same destination without the NUL is a new withdrawal.
  const w = await a.client.withdraw({ client_withdrawal_id: '1', amount: '1', destination: 'bc1qexample' });
  assert.equal(w.destination, 'bc1qexample');
  assert.equal((await a.client.balance()).available, '999');
});

test('errors: a reused client_withdrawal_id with another body is 409 duplicate_client_withdrawal_id naming the withdrawal', async () => {
  const a = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  const w = await a.client.withdraw({ client_withdrawal_id: '9', amount: '100', destination: 'd' });
  const e = await rejects(
    a.client.withdraw({ client_withdrawal_id: '9', amount: '200', destination: 'd' }),
    409,
    'duplicate_client_withdrawal_id',
    { num: 275, origin: 'core' },
  );
  assert.equal(e.details?.wid, w.wid);
  assert.equal((await a.client.balance()).available, '900', 'only the first withdrawal moved money');
});

test('errors: an unknown client_withdrawal_id, or another account\'s, is 404 not_found', async () => {
  assertErrorReply(await get('/v1/withdrawals/123456'), 404, 'not_found');
  const a = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  await a.client.withdraw({ client_withdrawal_id: '4242', amount: '1', destination: 'd' });
  assert.equal((await a.client.withdrawal('4242')).status, 'pending');
  assertErrorReply(await get('/v1/withdrawals/4242'), 404, 'not_found');
});

// ---- 403 -----------------------------------------------------------------------------------

test('errors: a key without the operation\'s scope is 403 missing_scope', async () => {
  const reader = await newKey(tx, k.accountId, ['read']);
  const trader = k;
  const withdrawer = await newKey(tx, k.accountId, ['withdraw']);
  const calls: [string, () => Promise<unknown>][] = [
    ['place', () => reader.client.placeOrder(order(market))],
    ['batch place', () => reader.client.placeBatch([order(market)])],
    ['cancel-all', () => reader.client.cancelAll()],
    ['batch cancel', () => reader.client.cancelBatch(['1'])],
    ['decrease', () => reader.client.decrease('1', 0)],
    ['arm deadman', () => reader.client.armDeadman(5000)],
    ['disarm deadman', () => reader.client.disarmDeadman()],
    ['withdraw with read', () => reader.client.withdraw({ client_withdrawal_id: '1', amount: '1', destination: 'd' })],
    ['withdraw with read and trade', () => trader.client.withdraw({ client_withdrawal_id: '1', amount: '1', destination: 'd' })],
    ['read with withdraw only', () => withdrawer.client.balance()],
    ['list with withdraw only', () => withdrawer.client.markets()],
  ];
  for (const [what, call] of calls) {
    const e = await rejects(call(), 403, 'missing_scope');
    assert.match(e.message, /scope/, what);
  }
});

// ---- 429 -----------------------------------------------------------------------------------

test('errors: an empty write bucket is 429 rate_limited with details.retry_after_ms a decimal string and no Retry-After ' +
  'header', async () => {
  const key = await newKey(tx, k.accountId);
  const bare = await newMarket(tx, { round: false });
  const twenty = Array.from({ length: 20 }, () => order(bare));
  let limited: Awaited<ReturnType<typeof signedRaw>> | null = null;
  for (let i = 0; i < 10 && limited === null; i++) {
    const r = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', JSON.stringify({ orders: twenty }));
    if (r.status === 429) limited = r;
    else assert.equal(r.status, 201, r.text);
  }
  assert.ok(limited, 'the write bucket ran out');
  assertErrorReply(limited, 429, 'rate_limited');
  const ms = limited.json.error.details?.retry_after_ms;
  assert.equal(typeof ms, 'string', 'retry_after_ms is a string');
  assert.match(ms, /^[0-9]+$/);
  assert.ok(Number(ms) >= 1);
  assert.equal(limited.headers['retry-after'], undefined, 'no Retry-After header');
});

test('errors: an empty read bucket is 429 rate_limited on GETs', async () => {
  const key = await newKey(tx, k.accountId, ['read']);
  // Burst 200, 100/s: 400 GETs at once cannot all be admitted.
  const rs = await Promise.all(Array.from({ length: 400 }, () => get('/v1/exchange/status', key)));
  const limited = rs.filter((r) => r.status === 429);
  assert.ok(limited.length > 0, 'the read bucket ran out');
  assert.ok(rs.filter((r) => r.status === 200).length >= 200, 'the burst was admitted');
  for (const r of rs) assert.ok(r.status === 200 || r.status === 429, `${r.status} ${r.text}`);
  assertErrorReply(limited[0]!, 429, 'rate_limited');
  assert.match(limited[0]!.json.error.details?.retry_after_ms, /^[0-9]+$/);
  assert.equal(limited[0]!.headers['retry-after'], undefined);
});

test('errors: a core reject in a batch item carries the same code, num and origin as the whole-request error', async () => {
  const bare = await newMarket(tx, { round: false });
  const r = await k.client.placeBatch([order(bare), order(9999)]);
  const [a, b] = r.results as unknown as { error: { code: string; num: number; origin: string } }[];
  assert.deepEqual([a!.error.code, a!.error.num, a!.error.origin], ['market_not_trading', 264, 'core']);
  assert.deepEqual([b!.error.code, b!.error.num, b!.error.origin], ['unknown_market', 265, 'core']);
});
