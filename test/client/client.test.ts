// DxClient, KeysClient and AdminClient against a local node:http server
// that records every request and verifies its signature independently
// (createHmac over the raw request target and body as received).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { AdminClient, DxApiError, DxClient, isItemError, KeysClient } from '../../src/client/index.js';

const SECRET = Buffer.alloc(32, 7);
const KEY_ID = 42;

interface Seen {
  method: string;
  url: string;
  body: string;
  headers: IncomingMessage['headers'];
  sigOk: boolean;
}

let server: Server;
let base = '';
const seen: Seen[] = [];
let reply: (s: Seen, res: ServerResponse) => void = defaultReply;

function defaultReply(_s: Seen, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end('{"ok":true}');
}

function json(res: ServerResponse, status: number, v: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(v));
}

before(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const ts = String(req.headers['dx-access-timestamp'] ?? '');
      const want = createHmac('sha256', SECRET).update(`${ts}\n${req.method}\n${req.url}\n${body}`).digest('base64');
      const s: Seen = {
        method: req.method!,
        url: req.url!,
        body,
        headers: req.headers,
        sigOk: req.headers['dx-access-key'] === String(KEY_ID) && req.headers['dx-access-signature'] === want,
      };
      seen.push(s);
      reply(s, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function client(extra: Partial<ConstructorParameters<typeof DxClient>[0]> = {}): DxClient {
  return new DxClient({ baseUrl: base, keyId: KEY_ID, secret: SECRET.toString('base64'), ...extra });
}

async function last<T>(call: () => Promise<T>): Promise<Seen> {
  reply = defaultReply;
  seen.length = 0;
  await call();
  assert.equal(seen.length, 1);
  return seen[0]!;
}

test('client: every endpoint sends the method, target and body of the contract, signed over exactly what was sent', async () => {
  const c = client();
  const order = { market_id: 3, side: 'buy', outcome: 'yes', tick: 40, qty: 5, client_order_id: '12' } as const;
  const table: [string, () => Promise<unknown>, string, string, string][] = [
    ['exchangeStatus', () => c.exchangeStatus(), 'GET', '/v1/exchange/status', ''],
    ['exchangeSchedule', () => c.exchangeSchedule(), 'GET', '/v1/exchange/schedule', ''],
    ['retention', () => c.retention(), 'GET', '/v1/exchange/retention', ''],
    ['limits', () => c.limits(), 'GET', '/v1/account/limits', ''],
    ['markets', () => c.markets({ status: ['trading', 'proposed'], limit: 5 }), 'GET', '/v1/markets?status=trading,proposed&limit=5', ''],
    ['markets()', () => c.markets(), 'GET', '/v1/markets', ''],
    ['market', () => c.market(9), 'GET', '/v1/markets/9', ''],
    ['orderbook', () => c.orderbook(9, 3), 'GET', '/v1/markets/9/orderbook?depth=3', ''],
    ['trades', () => c.trades(9, { cursor: 'a+b/c=', limit: 2 }), 'GET', '/v1/markets/9/trades?cursor=a%2Bb%2Fc%3D&limit=2', ''],
    ['oraclePrice', () => c.oraclePrice(), 'GET', '/v1/oracle/price', ''],
    ['rounds', () => c.rounds({ category: 65535 }), 'GET', '/v1/rounds?category=65535', ''],
    ['round', () => c.round(4), 'GET', '/v1/rounds/4', ''],
    ['balance', () => c.balance(), 'GET', '/v1/portfolio/balance', ''],
    ['positions', () => c.positions({ market_id: 2 }), 'GET', '/v1/portfolio/positions?market_id=2', ''],
    [
      'fills',
      () => c.fills({ market_id: 2, order_id: '18446744073709551615' }),
      'GET',
      '/v1/portfolio/fills?market_id=2&order_id=18446744073709551615',
      '',
    ],
    [
      'orders',
      () => c.orders({ market_id: 1, status: ['resting', 'partially_filled'], client_order_id: '77', limit: 1000 }),
      'GET',
      '/v1/portfolio/orders?market_id=1&status=resting,partially_filled&client_order_id=77&limit=1000',
      '',
    ],
    ['placeOrder', () => c.placeOrder(order), 'POST', '/v1/portfolio/orders', JSON.stringify(order)],
    ['placeBatch', () => c.placeBatch([order, order]), 'POST', '/v1/portfolio/orders/batch', JSON.stringify({ orders: [order, order] })],
    ['cancelAll', () => c.cancelAll({ market_id: 3, group_id: 2 }), 'DELETE', '/v1/portfolio/orders?market_id=3&group_id=2', ''],
    ['cancelAll()', () => c.cancelAll(), 'DELETE', '/v1/portfolio/orders', ''],
    ['cancelBatch', () => c.cancelBatch(['5', '6']), 'DELETE', '/v1/portfolio/orders/batch', '{"order_ids":["5","6"]}'],
    ['decrease', () => c.decrease('5', 0), 'POST', '/v1/portfolio/orders/5/decrease', '{"new_qty":0}'],
    ['queuePosition', () => c.queuePosition('5'), 'GET', '/v1/portfolio/orders/5/queue_position', ''],
    ['armDeadman', () => c.armDeadman(3000), 'POST', '/v1/portfolio/deadman', '{"timeout_ms":3000}'],
    ['disarmDeadman', () => c.disarmDeadman(), 'DELETE', '/v1/portfolio/deadman', ''],
    ['deadman', () => c.deadman(), 'GET', '/v1/portfolio/deadman', ''],
    ['depositAddress', () => c.depositAddress(), 'GET', '/v1/funding/deposit_address', ''],
    [
      'withdraw',
      () => c.withdraw({ client_withdrawal_id: '9', amount: '500', destination: 'addr-1' }),
      'POST',
      '/v1/withdrawals',
      '{"client_withdrawal_id":"9","amount":"500","destination":"addr-1"}',
    ],
    ['withdrawal', () => c.withdrawal('9'), 'GET', '/v1/withdrawals/9', ''],
    ['request', () => c.request('GET', '/v1/markets?limit=1'), 'GET', '/v1/markets?limit=1', ''],
  ];
  for (const [name, call, method, url, body] of table) {
    const s = await last(call);
    assert.equal(s.method, method, name);
    assert.equal(s.url, url, name);
    assert.equal(s.body, body, name);
    assert.ok(s.sigOk, `${name}: signature verifies over the received target and body`);
    assert.equal(s.headers['content-type'], body === '' ? undefined : 'application/json', name);
  }
});

test('client: a base URL with a path keeps it as a prefix of the target, and the prefix is signed', async () => {
  const s = await last(() => client({ baseUrl: base + '/api/' }).balance());
  assert.equal(s.url, '/api/v1/portfolio/balance');
  assert.ok(s.sigOk);
});

test('client: ids that would hit the wrong route are refused before sending', () => {
  const c = client();
  assert.throws(() => c.market(1.5), RangeError);
  assert.throws(() => c.decrease('5/../6', 1), RangeError);
  assert.throws(() => c.withdrawal('-1'), RangeError);
});

test('client: identical mutations in one millisecond get distinct timestamps (no replay refusal)', async () => {
  const c = client({ now: () => 1_700_000_000_000 });
  seen.length = 0;
  reply = defaultReply;
  await c.cancelAll();
  await c.cancelAll();
  await c.balance();
  await c.balance();
  const ts = seen.map((s) => Number(s.headers['dx-access-timestamp']));
  assert.deepEqual(ts, [1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_000, 1_700_000_000_000]);
  assert.notEqual(seen[0]!.headers['dx-access-signature'], seen[1]!.headers['dx-access-signature']);
  assert.ok(seen.every((s) => s.sigOk));
});

test('client: a non-2xx answer throws DxApiError with the status and the envelope', async () => {
  const c = client();
  reply = (_s, res) =>
    json(res, 429, {
      error: { code: 'rate_limited', num: null, origin: 'gateway', message: 'slow down', details: { retry_after_ms: '250' } },
    });
  const e = await c.balance().then(
    () => assert.fail('resolved'),
    (err: unknown) => err,
  );
  assert.ok(e instanceof DxApiError);
  assert.equal(e.status, 429);
  assert.equal(e.code, 'rate_limited');
  assert.equal(e.num, null);
  assert.equal(e.origin, 'gateway');
  assert.equal(e.retryAfterMs, 250);
  assert.equal(e.body.message, 'slow down');
  assert.equal(e.request, 'GET /v1/portfolio/balance');

  reply = (_s, res) =>
    json(res, 404, { error: { code: 'unknown_order', num: 260, origin: 'core', message: 'no such order', details: null } });
  await assert.rejects(c.decrease('8', 1), (err: unknown) => err instanceof DxApiError && err.status === 404 && err.num === 260);

  reply = (_s, res) => {
    res.writeHead(502, { 'content-type': 'text/html' });
    res.end('<html>bad gateway</html>');
  };
  await assert.rejects(c.balance(), (err: unknown) => err instanceof DxApiError && err.code === 'http_502' && err.origin === 'client');
  reply = defaultReply;
});

test('client: batch results keep per-item errors as values; isItemError tells them apart', async () => {
  const c = client();
  reply = (_s, res) =>
    json(res, 200, {
      results: [
        { status: 'canceled', canceled_qty: 3, seq: '10' },
        { error: { code: 'unknown_order', num: 260, origin: 'core', message: 'x', details: null } },
      ],
    });
  const r = await c.cancelBatch(['1', '2']);
  assert.equal(r.results.length, 2);
  assert.equal(isItemError(r.results[0]), false);
  assert.equal(isItemError(r.results[1]), true);
  reply = defaultReply;
});

test('client: paginate follows cursor until the empty string and yields every item', async () => {
  const c = client();
  reply = (s, res) => {
    const u = new URL(s.url, 'http://x');
    const cursor = u.searchParams.get('cursor');
    assert.equal(u.searchParams.get('status'), 'resting');
    if (cursor === null) json(res, 200, { orders: [{ order_id: '1' }, { order_id: '2' }], cursor: 'p2', as_of_seq: '5' });
    else if (cursor === 'p2') json(res, 200, { orders: [{ order_id: '3' }], cursor: 'p3', as_of_seq: '5' });
    else json(res, 200, { orders: [], cursor: '', as_of_seq: '5' });
  };
  seen.length = 0;
  const ids: string[] = [];
  for await (const o of c.paginate('orders', { status: ['resting'], limit: 2 })) ids.push(o.order_id);
  assert.deepEqual(ids, ['1', '2', '3']);
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => s.sigOk));
  // A listing resumed from a cursor starts there, not on the first page again.
  seen.length = 0;
  const rest: string[] = [];
  for await (const o of c.paginate('orders', { status: ['resting'], limit: 2, cursor: 'p2' })) rest.push(o.order_id);
  assert.deepEqual(rest, ['3']);
  assert.equal(new URL(seen[0]!.url, 'http://x').searchParams.get('cursor'), 'p2');

  reply = (_s, res) => json(res, 200, { trades: [{ seq: '1' }], cursor: '', as_of_seq: '1' });
  seen.length = 0;
  const trades = [];
  for await (const t of c.paginate('trades', { market_id: 4 })) trades.push(t);
  assert.equal(trades.length, 1);
  assert.equal(seen[0]!.url, '/v1/markets/4/trades');
  reply = defaultReply;
});

test('accounts client: key management is signed like the REST surface', async () => {
  const a = new KeysClient({ baseUrl: base, keyId: KEY_ID, secret: SECRET });
  let s = await last(() => a.createKey({ label: 'bot', scopes: ['read'] }));
  assert.deepEqual([s.method, s.url, s.body, s.sigOk], ['POST', '/keys', '{"label":"bot","scopes":["read"]}', true]);
  s = await last(() => a.listKeys());
  assert.deepEqual([s.method, s.url, s.body, s.sigOk], ['GET', '/keys', '', true]);
  s = await last(() => a.revokeKey(43));
  assert.deepEqual([s.method, s.url, s.body, s.sigOk], ['DELETE', '/keys/43', '', true]);
});

test('client: a path starting with // (a scheme-relative URL) is refused: no token or signature goes to another host', async () => {
  seen.length = 0;
  const other = `//${new URL(base).host}/admin/health`;
  const dx = client({ baseUrl: 'http://127.0.0.1:1' });
  const admin = new AdminClient({ baseUrl: 'http://127.0.0.1:1', token: 'operator-secret' });
  await assert.rejects(dx.request('GET', other), /^TypeError: path must start with a single '\/'/);
  await assert.rejects(admin.request('GET', other), /^TypeError: path must start with a single '\/'/);
  assert.deepEqual(seen, [], 'the server at the other origin received nothing');
});

test('admin client: every control-plane endpoint with a bearer token', async () => {
  const a = new AdminClient({ baseUrl: base, token: 'tok' });
  const table: [() => Promise<unknown>, string, string, string][] = [
    [() => a.createAccount(), 'POST', '/admin/accounts', '{}'],
    [() => a.deleteAccount(5), 'DELETE', '/admin/accounts/5', ''],
    [() => a.createKey(5, ['read', 'withdraw']), 'POST', '/admin/accounts/5/keys', '{"scopes":["read","withdraw"]}'],
    [() => a.deposit(5, { amount: '10000', ref: 'r1' }), 'POST', '/admin/accounts/5/deposits', '{"amount":"10000","ref":"r1"}'],
    [() => a.account(5), 'GET', '/admin/accounts/5', ''],
    [() => a.createFeeSchedule({ taker_bps: 700, maker_bps: 0 }), 'POST', '/admin/fee_schedules', '{"taker_bps":700,"maker_bps":0}'],
    [
      () => a.createMarket({ title: 'T', category: 1, position_limit: 0, fee_schedule_id: 0 }),
      'POST',
      '/admin/markets',
      '{"title":"T","category":1,"position_limit":0,"fee_schedule_id":0}',
    ],
    [() => a.openRound(2, { strike: '1', close_ts: '2' }), 'POST', '/admin/markets/2/rounds', '{"strike":"1","close_ts":"2"}'],
    [() => a.freezeRound(2), 'POST', '/admin/rounds/2/freeze', '{}'],
    [() => a.unfreezeRound(2), 'POST', '/admin/rounds/2/unfreeze', '{}'],
    [() => a.settleRound(2), 'POST', '/admin/rounds/2/settle', '{}'],
    [() => a.voidRound(2), 'POST', '/admin/rounds/2/void', '{}'],
    [() => a.proposeRound(2), 'POST', '/admin/rounds/2/propose', '{}'],
    [() => a.proposeRound(2, 'no'), 'POST', '/admin/rounds/2/propose', '{"outcome":"no"}'],
    [
      () => a.oracleTick({ source_id: 1, price: '6500000000000' }),
      'POST',
      '/admin/oracle/ticks',
      '{"source_id":1,"price":"6500000000000"}',
    ],
    [
      () => a.createSeries({ category: 1, title: 'S', period_s: 60, position_limit: 0, fee_schedule_id: 0 }),
      'POST',
      '/admin/series',
      '{"category":1,"title":"S","period_s":60,"position_limit":0,"fee_schedule_id":0}',
    ],
    [() => a.confirmWithdrawal('11'), 'POST', '/admin/withdrawals/11/confirm', '{}'],
    [() => a.failWithdrawal('11'), 'POST', '/admin/withdrawals/11/fail', '{}'],
    [() => a.snapshot(), 'POST', '/admin/snapshot', '{}'],
    [() => a.health(), 'GET', '/admin/health', ''],
  ];
  for (const [call, method, url, body] of table) {
    const s = await last(call);
    assert.deepEqual([s.method, s.url, s.body], [method, url, body]);
    assert.equal(s.headers['authorization'], 'Bearer tok');
    assert.equal(s.headers['dx-access-signature'], undefined);
  }
  reply = (_s, res) => {
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end('dx_seq 12\n');
  };
  assert.equal(await a.metrics(), 'dx_seq 12\n');
  reply = defaultReply;
});
