// REST lane, black box: authentication (every failure is 401 unauthorized),
// scopes (403), replay refusal, the order of checks of docs/ARCHITECTURE.md section 8 (401 -> 429
// -> 403 -> 400/413), revocation on every gateway thread, and
// read-your-writes across connections. Two gateway threads share the public
// port; the kernel spreads connections between them, so tests that must reach
// both use many persistent connections (one node:http Agent with one socket
// each).

import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import {
  assertErrorReply, newAccount, newKey, newMarket, raw, signHeaders, signedRaw, sleep, type Key, type RawReply,
} from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;
const agents: Agent[] = [];

before(async () => {
  tx = await startTestExchange({ gateways: 2 });
  k = await newAccount(tx);
  market = await newMarket(tx);
});

after(async () => {
  for (const a of agents) a.destroy();
  await tx.stop();
});

/** `n` persistent connections (one socket each). */
function connections(n: number): Agent[] {
  const out = Array.from({ length: n }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
  agents.push(...out);
  return out;
}

const ORDER = (o: Record<string, unknown> = {}): string =>
  JSON.stringify({ market_id: market, side: 'buy', outcome: 'yes', tick: 30, qty: 1, ...o });

function unauthorized(r: RawReply, what: string): void {
  assert.equal(r.status, 401, `${what}: expected 401, got ${r.status} ${r.text}`);
  assertErrorReply(r, 401, 'unauthorized');
}

test('auth: a request missing any of the three headers is 401 unauthorized', async () => {
  const h = signHeaders(k, 'GET', '/v1/portfolio/balance');
  for (const drop of ['DX-ACCESS-KEY', 'DX-ACCESS-TIMESTAMP', 'DX-ACCESS-SIGNATURE']) {
    const headers = { ...h };
    delete headers[drop as keyof typeof headers];
    unauthorized(await raw(tx.port, { method: 'GET', target: '/v1/portfolio/balance', headers }), `without ${drop}`);
  }
  unauthorized(await raw(tx.port, { method: 'GET', target: '/v1/markets' }), 'no headers, market data');
  unauthorized(await raw(tx.port, { method: 'POST', target: '/v1/portfolio/orders', body: ORDER() }), 'no headers, placement');
});

test('auth: an unknown or malformed key id is 401 unauthorized', async () => {
  for (const keyId of ['99999', '0', 'abc', '-1', '1.0', '']) {
    const h = signHeaders({ keyId: 1, secret: k.secret }, 'GET', '/v1/exchange/status');
    h['DX-ACCESS-KEY'] = keyId;
    unauthorized(await raw(tx.port, { method: 'GET', target: '/v1/exchange/status', headers: h }), `key ${JSON.stringify(keyId)}`);
  }
});

test('auth: a bad signature is 401 unauthorized', async () => {
  const other = Buffer.alloc(32, 9).toString('base64');
  unauthorized(await signedRaw(tx.port, { keyId: k.keyId, secret: other }, 'GET', '/v1/portfolio/balance'), 'another secret');
  const h = signHeaders(k, 'GET', '/v1/portfolio/balance');
  for (const sig of [
    'not base64!',
    h['DX-ACCESS-SIGNATURE']!.replace(/=+$/, ''),
    `${h['DX-ACCESS-SIGNATURE']}AA`,
    Buffer.alloc(32).toString('base64'),
  ]) {
    unauthorized(
      await raw(tx.port, { method: 'GET', target: '/v1/portfolio/balance', headers: { ...h, 'DX-ACCESS-SIGNATURE': sig } }),
      `signature ${sig}`,
    );
  }
  assert.equal(
    (await raw(tx.port, { method: 'GET', target: '/v1/portfolio/balance', headers: h })).status,
    200,
    'the untouched request passes',
  );
});

test('auth: a timestamp more than 5 s old is 401 unauthorized', async () => {
  unauthorized(await signedRaw(tx.port, k, 'GET', '/v1/portfolio/balance', undefined, { ts: Date.now() - 6000 }), '6 s old');
  unauthorized(await signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', ORDER(), { ts: Date.now() - 60_000 }), 'a minute old');
  assert.equal(
    (await signedRaw(tx.port, k, 'GET', '/v1/portfolio/balance', undefined, { ts: Date.now() - 4000 })).status,
    200,
    '4 s old is inside the window',
  );
});

test('auth: a timestamp more than 5 s in the future is 401 unauthorized', async () => {
  unauthorized(await signedRaw(tx.port, k, 'GET', '/v1/portfolio/balance', undefined, { ts: Date.now() + 6000 }), '6 s ahead');
  assert.equal(
    (await signedRaw(tx.port, k, 'GET', '/v1/portfolio/balance', undefined, { ts: Date.now() + 4000 })).status,
    200,
    '4 s ahead is inside the window',
  );
  const h = signHeaders(k, 'GET', '/v1/portfolio/balance');
  for (const ts of ['abc', '', `${Date.now()}.5`, `+${Date.now()}`]) {
    unauthorized(
      await raw(tx.port, { method: 'GET', target: '/v1/portfolio/balance', headers: { ...h, 'DX-ACCESS-TIMESTAMP': ts } }),
      `timestamp ${ts}`,
    );
  }
});

test('auth: a body changed after signing is 401 unauthorized', async () => {
  const r = await signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', ORDER({ qty: 900 }), { sign: { body: ORDER({ qty: 1 }) } });
  unauthorized(r, 'tampered qty');
  const sp = await signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', `${ORDER()} `, { sign: { body: ORDER() } });
  unauthorized(sp, 'a trailing space');
  const none = await signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders/batch', '{"order_ids":["1"]}', { sign: { body: '' } });
  unauthorized(none, 'a body signed as empty');
  assert.equal((await k.client.orders({ market_id: market })).orders.length, 0, 'nothing was placed');
});

test('auth: a query or path or method changed after signing is 401 unauthorized', async () => {
  unauthorized(
    await signedRaw(tx.port, k, 'GET', '/v1/markets?limit=6', undefined, { sign: { target: '/v1/markets?limit=5' } }),
    'query value',
  );
  unauthorized(await signedRaw(tx.port, k, 'GET', '/v1/markets?limit=5', undefined, { sign: { target: '/v1/markets' } }), 'query added');
  unauthorized(await signedRaw(tx.port, k, 'GET', '/v1/markets', undefined, { sign: { target: '/v1/markets?limit=5' } }), 'query removed');
  unauthorized(
    await signedRaw(tx.port, k, 'DELETE', `/v1/portfolio/orders?market_id=${market}`, undefined, {
      sign: { target: '/v1/portfolio/orders?market_id=9' },
    }),
    'cancel-all scope',
  );
  unauthorized(await signedRaw(tx.port, k, 'GET', '/v1/portfolio/fills', undefined, { sign: { target: '/v1/portfolio/orders' } }), 'path');
  unauthorized(await signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders', undefined, { sign: { method: 'GET' } }), 'method');
});

test('auth: a key lacking the required scope is 403 missing_scope', async () => {
  const reader = await newKey(tx, k.accountId, ['read']);
  assertErrorReply(await signedRaw(tx.port, reader, 'POST', '/v1/portfolio/orders', ORDER()), 403, 'missing_scope');
  assertErrorReply(
    await signedRaw(tx.port, k, 'POST', '/v1/withdrawals', '{"client_withdrawal_id":"1","amount":"1","destination":"d"}'),
    403,
    'missing_scope',
  );
});

test('auth: a replayed mutation (the same signature sent twice) is 401 unauthorized, on the same or another connection', async () => {
  const [a, b] = connections(2);
  const body = ORDER({ tick: 31, client_order_id: '8080' });
  const headers = { ...signHeaders(k, 'POST', '/v1/portfolio/orders', body), 'content-type': 'application/json' };
  const first = await raw(tx.port, { method: 'POST', target: '/v1/portfolio/orders', body, headers, agent: a });
  assert.equal(first.status, 201, first.text);
  unauthorized(await raw(tx.port, { method: 'POST', target: '/v1/portfolio/orders', body, headers, agent: a }), 'replay, same connection');
  unauthorized(
    await raw(tx.port, { method: 'POST', target: '/v1/portfolio/orders', body, headers, agent: b }),
    'replay, another connection',
  );
  unauthorized(await raw(tx.port, { method: 'POST', target: '/v1/portfolio/orders', body, headers }), 'replay, a fresh connection');
  const cancelBody = JSON.stringify({ order_ids: [first.json.order_id] });
  const ch = { ...signHeaders(k, 'DELETE', '/v1/portfolio/orders/batch', cancelBody), 'content-type': 'application/json' };
  assert.equal((await raw(tx.port, { method: 'DELETE', target: '/v1/portfolio/orders/batch', body: cancelBody, headers: ch })).status, 200);
  unauthorized(
    await raw(tx.port, { method: 'DELETE', target: '/v1/portfolio/orders/batch', body: cancelBody, headers: ch }),
    'replayed cancel',
  );
  const listed = await k.client.orders({ client_order_id: '8080' });
  assert.equal(listed.orders.length, 1, 'the order was placed once');
});

test('auth: a repeated GET with the same signature is served (only mutations are replay-checked)', async () => {
  const headers = signHeaders(k, 'GET', '/v1/portfolio/balance');
  for (let i = 0; i < 3; i++) assert.equal((await raw(tx.port, { method: 'GET', target: '/v1/portfolio/balance', headers })).status, 200);
});

test('auth: a revoked key is refused on every gateway thread within a second', async () => {
  const owner = await newAccount(tx);
  const created = await owner.keys.createKey({ label: 'to revoke' });
  const victim = { keyId: created.key_id, secret: created.secret };
  const conns = connections(16);
  for (const agent of conns) {
    const r = await signedRaw(tx.port, victim, 'GET', '/v1/portfolio/balance', undefined, { agent });
    assert.equal(r.status, 200, 'the key works on every connection before');
  }
  await owner.keys.revokeKey(created.key_id);
  const deadline = Date.now() + 1000;
  const refusedAt: number[] = [];
  for (const agent of conns) {
    for (;;) {
      const r = await signedRaw(tx.port, victim, 'GET', '/v1/portfolio/balance', undefined, { agent });
      if (r.status === 401) break;
      assert.equal(r.status, 200);
      assert.ok(Date.now() < deadline, 'refused within a second of the revocation');
      await sleep(20);
    }
    refusedAt.push(Date.now());
  }
  assert.ok(Math.max(...refusedAt) <= deadline);
  for (const agent of conns) {
    unauthorized(
      await signedRaw(tx.port, victim, 'POST', '/v1/portfolio/orders', ORDER({ tick: 2 }), { agent }),
      'a write after revocation',
    );
  }
  assert.equal((await owner.client.balance()).available, '100000000', 'the owner\'s other key still works');
});

test('auth: deleting an account revokes all its keys on every connection', async () => {
  const a = await newAccount(tx, { deposit: '0' });
  const second = await newKey(tx, a.accountId, ['read']);
  const conns = connections(8);
  for (const agent of conns) assert.equal((await signedRaw(tx.port, a, 'GET', '/v1/portfolio/balance', undefined, { agent })).status, 200);
  await tx.admin.deleteAccount(a.accountId);
  for (const agent of conns) {
    unauthorized(await signedRaw(tx.port, a, 'GET', '/v1/portfolio/balance', undefined, { agent }), 'first key');
    unauthorized(await signedRaw(tx.port, second, 'GET', '/v1/portfolio/balance', undefined, { agent }), 'second key');
  }
});

// ---- order of checks ------------------------------------------------------------------

test('auth: order of checks: a bad signature with an invalid body is 401, not 400', async () => {
  const bad = { keyId: k.keyId, secret: Buffer.alloc(32, 1).toString('base64') };
  unauthorized(await signedRaw(tx.port, bad, 'POST', '/v1/portfolio/orders', '{"not json'), 'bad signature, bad JSON');
  unauthorized(await signedRaw(tx.port, bad, 'POST', '/v1/portfolio/orders', ORDER({ colour: 1 })), 'bad signature, unknown field');
  unauthorized(await signedRaw(tx.port, bad, 'DELETE', '/v1/portfolio/orders', '{"order_ids":[]}'), 'bad signature, body on cancel-all');
  unauthorized(await signedRaw(tx.port, bad, 'GET', '/v1/markets?bogus=1'), 'bad signature, unknown query parameter');
  const big = JSON.stringify({ pad: 'x'.repeat(70 * 1024) });
  const noKey = await raw(tx.port, {
    method: 'POST',
    target: '/v1/portfolio/orders',
    body: big,
    headers: { 'content-type': 'application/json' },
  });
  unauthorized(noKey, 'no credentials, 70 KiB body');
});

test('auth: order of checks: a bad signature with a 70 KiB body is 401, not 413', async () => {
  const bad = { keyId: k.keyId, secret: Buffer.alloc(32, 1).toString('base64') };
  const big = JSON.stringify({ orders: [], pad: 'x'.repeat(70 * 1024) });
  unauthorized(
    await signedRaw(tx.port, bad, 'POST', '/v1/portfolio/orders/batch', big),
    'a known key id, a forged signature, a 70 KiB body',
  );
});

test('auth: order of checks: an exhausted bucket with an invalid body is 429, not 400', async () => {
  const key = await newKey(tx, k.accountId);
  const bare = await newMarket(tx, { round: false });
  const twenty = JSON.stringify({ orders: Array.from({ length: 20 }, () => JSON.parse(ORDER({ market_id: bare }))) });
  for (let i = 0; i < 5; i++) assert.equal((await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', twenty)).status, 201);
  // What refilled meanwhile (50/s) is spent by the first few; the rest find the bucket empty.
  const rs = await Promise.all(
    Array.from({ length: 60 }, (_, i) =>
      signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders', i % 2 ? `{"not json ${i}` : ORDER({ colour: i })),
    ),
  );
  const limited = rs.filter((r) => r.status === 429);
  for (const r of rs) assert.ok(r.status === 400 || r.status === 429, `${r.status} ${r.text}`);
  assert.ok(limited.length >= 30, `most of the invalid requests met an empty bucket (${limited.length} of 60)`);
  for (const r of limited) assertErrorReply(r, 429, 'rate_limited');
  assert.ok(limited.some((r) => r.json && rs.indexOf(r) % 2 === 1), 'bad JSON meets 429');
  assert.ok(limited.some((r) => rs.indexOf(r) % 2 === 0), 'an unknown field meets 429');
});

test('auth: order of checks: a read-only key posting an invalid order is 403, not 400', async () => {
  const reader = await newKey(tx, k.accountId, ['read']);
  assertErrorReply(await signedRaw(tx.port, reader, 'POST', '/v1/portfolio/orders', '{"not json'), 403, 'missing_scope');
  assertErrorReply(await signedRaw(tx.port, reader, 'POST', '/v1/portfolio/orders', ORDER({ tick: 0, colour: 1 })), 403, 'missing_scope');
  assertErrorReply(await signedRaw(tx.port, reader, 'DELETE', '/v1/portfolio/orders?bogus=1', '{"x":1}'), 403, 'missing_scope');
});

test('auth: forged requests on a key id do not drain that key\'s bucket', async () => {
  const key = await newKey(tx, k.accountId);
  const forged = { keyId: key.keyId, secret: Buffer.alloc(32, 3).toString('base64') };
  const flood = await Promise.all(
    Array.from({ length: 150 }, (_, i) =>
      signedRaw(tx.port, forged, 'POST', '/v1/portfolio/orders', ORDER({ client_order_id: String(i + 1) })),
    ),
  );
  for (const r of flood) unauthorized(r, 'forged');
  const bare = await newMarket(tx, { round: false });
  const twenty = JSON.stringify({ orders: Array.from({ length: 20 }, () => JSON.parse(ORDER({ market_id: bare }))) });
  for (let i = 0; i < 5; i++) {
    const r = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', twenty);
    assert.equal(r.status, 201, `batch ${i}: the whole burst of 100 write tokens is still there (${r.text})`);
  }
});

// ---- read-your-writes -----------------------------------------------------------------

test('consistency: a write acknowledged on one connection is visible to an immediate read on another, as of a seq at least the ' +
  'write\'s', async () => {
  const a = await newAccount(tx);
  const writers = connections(10);
  const readers = connections(10);
  for (let i = 0; i < 10; i++) {
    const body = ORDER({ tick: 20 + i, client_order_id: String(5000 + i) });
    const w = await signedRaw(tx.port, a, 'POST', '/v1/portfolio/orders', body, { agent: writers[i] });
    assert.equal(w.status, 201, w.text);
    const seq = BigInt(w.json.seq);
    const r = await signedRaw(tx.port, a, 'GET', `/v1/portfolio/orders?client_order_id=${5000 + i}`, undefined, { agent: readers[i] });
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.json.orders.map((o: { order_id: string }) => o.order_id),
      [w.json.order_id],
      `order ${i} is visible on the other connection`,
    );
    assert.ok(BigInt(r.json.as_of_seq) >= seq, `as_of_seq ${r.json.as_of_seq} >= write seq ${seq}`);
    const b = await signedRaw(tx.port, a, 'GET', '/v1/portfolio/balance', undefined, { agent: readers[(i + 5) % 10] });
    assert.ok(BigInt(b.json.as_of_seq) >= seq);
    const book = await signedRaw(tx.port, a, 'GET', `/v1/markets/${market}/orderbook?depth=99`, undefined, {
      agent: readers[(i + 3) % 10],
    });
    assert.ok(book.json.yes.some((l: [number, number]) => l[0] === 20 + i), 'the order is on the book read from another connection');

    const cb = JSON.stringify({ order_ids: [w.json.order_id] });
    const c = await signedRaw(tx.port, a, 'DELETE', '/v1/portfolio/orders/batch', cb, { agent: readers[i] });
    assert.equal(c.status, 200);
    const cseq = BigInt(c.json.results[0].seq);
    const after = await signedRaw(tx.port, a, 'GET', `/v1/portfolio/orders?client_order_id=${5000 + i}`, undefined, { agent: writers[i] });
    assert.equal(after.json.orders[0].reason, 'user_canceled', 'the cancel is visible on the first connection');
    assert.ok(BigInt(after.json.as_of_seq) >= cseq);
  }
});
