// REST lane, black box: the list endpoints (pagination to exhaustion, limit
// bounds, comma-list status filters), retention truncation at the caps of
// /v1/exchange/retention, and batches (index-aligned partial success, the
// 20-item cap, N write tokens per batch). One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isItemError, type DxClient } from '../../src/client/index.js';
import type { OrderRequest, Placement } from '../../src/client/types.js';
import * as R from '../../src/wire/responses.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertErrorReply, newAccount, newKey, newMarket, order, rejects, signedRaw, type Key } from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';

let tx: TestExchange;
let k: Key;

before(async () => {
  tx = await startTestExchange();
  k = await newAccount(tx);
});

after(async () => {
  await tx.stop();
});

interface AnyPage {
  cursor: string;
  as_of_seq: string;
  [list: string]: unknown;
}

/** The declared shape of each list's page. */
const PAGES = {
  markets: R.MarketsPage, trades: R.TradesPage, rounds: R.RoundsPage, positions: R.PositionsPage, fills: R.FillsPage, orders: R.OrdersPage,
} as const;

/** Follows `cursor` from the first page until "", returning every page. */
async function allPages(c: DxClient, path: string, list: keyof typeof PAGES, limit: number, extra = ''): Promise<AnyPage[]> {
  const pages: AnyPage[] = [];
  let cursor = '';
  for (let i = 0; i < 10_000; i++) {
    const q = `?limit=${limit}${extra}${cursor === '' ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
    const p = await c.request<AnyPage>('GET', `${path}${q}`);
    assertWireShape(PAGES[list], p, `${path} page`);
    assert.equal(typeof p.cursor, 'string');
    pages.push(p);
    if (p.cursor === '') return pages;
    assert.notEqual(p.cursor, cursor, 'the cursor advances');
    cursor = p.cursor;
  }
  assert.fail('pagination never ended');
}

function items<T>(pages: AnyPage[], list: string): T[] {
  return pages.flatMap((p) => p[list] as T[]);
}

function assertPageSizes(pages: AnyPage[], list: string, limit: number, total: number): void {
  const sizes = pages.map((p) => (p[list] as unknown[]).length);
  const want: number[] = [];
  for (let left = total; left > 0; left -= limit) want.push(Math.min(limit, left));
  if (want.length === 0) want.push(0);
  assert.deepEqual(sizes, want, `${list}: pages of ${limit} until exhaustion`);
}

/** Places many orders in batches of 20, spreading the write tokens over several keys of the account. */
async function placeMany(owner: Key, orders: OrderRequest[]): Promise<(Placement | { error: { code: string } })[]> {
  const keys: Key[] = [];
  const out: (Placement | { error: { code: string } })[] = [];
  for (let i = 0; i < orders.length; i += 20) {
    const slot = Math.floor(i / 80);
    if (keys[slot] === undefined) keys[slot] = await newKey(tx, owner.accountId);
    const r = await keys[slot]!.client.placeBatch(orders.slice(i, i + 20));
    out.push(...(r.results as (Placement | { error: { code: string } })[]));
  }
  return out;
}

// ---- pagination ------------------------------------------------------------------------

test('listings: orders paginate to exhaustion, newest first, without repeats, ending with cursor ""', async () => {
  const a = await newAccount(tx);
  const m = await newMarket(tx);
  const placed = await placeMany(a, Array.from({ length: 25 }, (_, i) => order(m, { tick: 1 + i })));
  const ids = placed.map((p) => (p as Placement).order_id);
  const pages = await allPages(a.client, '/v1/portfolio/orders', 'orders', 7);
  assertPageSizes(pages, 'orders', 7, 25);
  const got = items<{ order_id: string }>(pages, 'orders').map((o) => o.order_id);
  assert.deepEqual(got, [...ids].reverse(), 'newest first, each order once');
  const exact = await a.client.orders({ limit: 25 });
  assert.equal(exact.orders.length, 25);
  assert.equal(exact.cursor, '', 'a page that ends the listing exactly says so');
  const filtered = await allPages(a.client, '/v1/portfolio/orders', 'orders', 4, `&market_id=${m}&status=resting`);
  assert.equal(items(filtered, 'orders').length, 25, 'filters hold across pages');
});

/** A market where `maker` rested `n` one-share YES bids and `taker` took them all with one NO buy. */
async function tradedMarket(n: number): Promise<{ m: number; maker: Key; taker: Key; take: Placement }> {
  const maker = await newAccount(tx);
  const taker = await newAccount(tx);
  const m = await newMarket(tx);
  await placeMany(maker, Array.from({ length: n }, () => order(m, { tick: 50 })));
  const take = await taker.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: n }));
  assert.equal(take.filled_qty, n);
  return { m, maker, taker, take };
}

test('listings: fills paginate to exhaustion, newest first, ending with cursor ""', async () => {
  const { maker, taker } = await tradedMarket(12);
  const pages = await allPages(maker.client, '/v1/portfolio/fills', 'fills', 5);
  assertPageSizes(pages, 'fills', 5, 12);
  const fills = items<{ fill_id: string }>(pages, 'fills');
  assert.equal(new Set(fills.map((f) => f.fill_id)).size, 12, 'no repeats');
  const ids = fills.map((f) => BigInt(f.fill_id));
  for (let i = 1; i < ids.length; i++) assert.ok(ids[i - 1]! > ids[i]!, 'newest first');
  assertPageSizes(await allPages(taker.client, '/v1/portfolio/fills', 'fills', 12), 'fills', 12, 12);
});

test('listings: the trade tape paginates to exhaustion, ending with cursor ""', async () => {
  const { m, maker } = await tradedMarket(12);
  const pages = await allPages(maker.client, `/v1/markets/${m}/trades`, 'trades', 5);
  assertPageSizes(pages, 'trades', 5, 12);
  assert.equal(items<{ qty: number }>(pages, 'trades').reduce((s, t) => s + t.qty, 0), 12);
});

test('listings: rounds paginate to exhaustion in descending round_number', async () => {
  const category = 900;
  const markets = [await newMarket(tx, { category }), await newMarket(tx, { category }), await newMarket(tx, { category })];
  await tx.admin.voidRound(markets[0]!);
  await tx.admin.openRound(markets[0]!, { strike: '1', close_ts: String(BigInt(Date.now() + 3_600_000) * 1_000_000n) });
  const pages = await allPages(k.client, '/v1/rounds', 'rounds', 1, `&category=${category}`);
  assertPageSizes(pages, 'rounds', 1, 4);
  const rounds = items<{ round_number: string; status: string; market_id: number }>(pages, 'rounds');
  const nums = rounds.map((r) => BigInt(r.round_number));
  for (let i = 1; i < nums.length; i++) assert.ok(nums[i - 1]! > nums[i]!, 'descending round_number');
  assert.deepEqual(rounds.map((r) => r.status).sort(), ['trading', 'trading', 'trading', 'void']);
  const all = await allPages(k.client, '/v1/rounds', 'rounds', 3);
  assert.ok(items(all, 'rounds').length >= 4, 'without a category every round is listed');
});

test('listings: markets paginate to exhaustion in ascending market_id', async () => {
  for (let i = 0; i < 3; i++) await newMarket(tx, { round: i !== 0 });
  const whole = await k.client.markets({ limit: 1000 });
  assert.equal(whole.cursor, '');
  const pages = await allPages(k.client, '/v1/markets', 'markets', 2);
  assertPageSizes(pages, 'markets', 2, whole.markets.length);
  const ids = items<{ market_id: number }>(pages, 'markets').map((x) => x.market_id);
  assert.deepEqual(ids, whole.markets.map((x) => x.market_id));
  assert.deepEqual(ids, [...ids].sort((a, b) => a - b), 'ascending');
});

test('listings: positions paginate to exhaustion by market, yes before no', async () => {
  const a = await newAccount(tx);
  const b = await newAccount(tx);
  for (let i = 0; i < 3; i++) {
    const m = await newMarket(tx);
    await b.client.placeOrder(order(m, { tick: 50, qty: 2 }));
    await a.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: 1 }));
    await b.client.placeOrder(order(m, { outcome: 'no', tick: 40, qty: 1 }));
    await a.client.placeOrder(order(m, { outcome: 'yes', tick: 60, qty: 1 }));
  }
  const pages = await allPages(a.client, '/v1/portfolio/positions', 'positions', 4);
  assertPageSizes(pages, 'positions', 4, 6);
  const keys = items<{ market_id: number; outcome: string }>(pages, 'positions').map((p) => `${p.market_id}:${p.outcome}`);
  const sorted = [...keys].sort((x, y) => {
    const [mx, ox] = x.split(':');
    const [my, oy] = y.split(':');
    return Number(mx) - Number(my) || (ox === oy ? 0 : ox === 'yes' ? -1 : 1);
  });
  assert.deepEqual(keys, sorted);
});

test('listings: limit accepts 1 and 1000 and refuses 0, 1001 and non-integers on every list endpoint', async () => {
  const m = await newMarket(tx);
  const lists = [
    '/v1/markets',
    `/v1/markets/${m}/trades`,
    '/v1/rounds',
    '/v1/portfolio/positions',
    '/v1/portfolio/fills',
    '/v1/portfolio/orders',
  ];
  for (const path of lists) {
    for (const limit of ['1', '1000']) {
      const r = await signedRaw(tx.port, k, 'GET', `${path}?limit=${limit}`);
      assert.equal(r.status, 200, `${path}?limit=${limit}: ${r.text}`);
    }
    for (const limit of ['0', '1001', '-1', '2.5', '']) {
      const r = await signedRaw(tx.port, k, 'GET', `${path}?limit=${limit}`);
      assertErrorReply(r, 400, 'invalid_field');
      assert.equal(r.json.error.details.field, 'limit');
    }
  }
  const one = await k.client.markets({ limit: 1 });
  assert.equal(one.markets.length, 1);
  assert.notEqual(one.cursor, '');
});

test('listings: order status filters take a comma list and match any listed status', async () => {
  const a = await newAccount(tx, { deposit: '100000' });
  const b = await newAccount(tx);
  const m = await newMarket(tx);
  const resting = await a.client.placeOrder(order(m, { tick: 10, qty: 2 }));
  const partial = await a.client.placeOrder(order(m, { tick: 50, qty: 3 }));
  await b.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: 2 }));
  await b.client.placeOrder(order(m, { outcome: 'no', tick: 45, qty: 1 }));
  const filled = await a.client.placeOrder(order(m, { tick: 60, qty: 1 }));
  assert.equal(filled.status, 'filled');
  const canceled = await a.client.placeOrder(order(m, { tick: 11, qty: 1 }));
  await a.client.cancelBatch([canceled.order_id]);
  const rejected = await a.client.placeOrder(order(m, { tick: 99, qty: 100_000 })).then(() => null, (e: unknown) => e);
  assert.ok(rejected, 'a rejected order');
  const ids = async (status: string): Promise<string[]> => {
    const r = await signedRaw(tx.port, a, 'GET', `/v1/portfolio/orders?market_id=${m}&status=${status}`);
    assert.equal(r.status, 200, r.text);
    return r.json.orders.map((o: { order_id: string }) => o.order_id).sort();
  };
  assert.deepEqual(await ids('resting,partially_filled'), [resting.order_id, partial.order_id].sort());
  assert.deepEqual(await ids('partially_filled'), [partial.order_id]);
  assert.deepEqual(await ids('filled,canceled'), [filled.order_id, canceled.order_id].sort());
  assert.deepEqual(await ids('canceled'), [canceled.order_id]);
  assert.equal((await ids('rejected')).length, 1);
  assert.equal((await ids('resting,partially_filled,filled,canceled,rejected')).length, 5);
  assert.equal((await ids('resting%2Cpartially_filled')).length, 2, 'a percent-encoded comma is a comma');
});

test('listings: market status filters take a comma list and match any listed status', async () => {
  const closed = await newMarket(tx, { round: false });
  const trading = await newMarket(tx);
  const frozen = await newMarket(tx);
  await tx.admin.freezeRound(frozen);
  const proposed = await newMarket(tx);
  await tx.admin.freezeRound(proposed);
  await tx.admin.proposeRound(proposed, 'yes');
  const ids = async (status: string): Promise<number[]> => {
    const r = await signedRaw(tx.port, k, 'GET', `/v1/markets?limit=1000&status=${status}`);
    assert.equal(r.status, 200, r.text);
    return r.json.markets.map((x: { market_id: number }) => x.market_id);
  };
  const tp = await ids('trading,proposed');
  assert.ok(tp.includes(trading) && tp.includes(proposed) && !tp.includes(frozen) && !tp.includes(closed));
  const fc = await ids('frozen,closed');
  assert.ok(fc.includes(frozen) && fc.includes(closed) && !fc.includes(trading) && !fc.includes(proposed));
  assert.deepEqual((await ids('proposed')).filter((x) => x === proposed), [proposed]);
});

// ---- retention ---------------------------------------------------------------------------

let big: Promise<{
  m: number;
  maker: Key;
  taker: Key;
  n: number;
  caps: { tape_cap: number; terminal_cap: number; fill_cap: number };
  resting: string[];
}> | null = null;

/** One market with more trades than every cap: `maker` rests cap+10 one-share bids, `taker` takes them with one order. */
function bigMarket(): NonNullable<typeof big> {
  big ??= (async () => {
    const caps = await k.client.retention();
    const n = Math.max(caps.tape_cap, caps.fill_cap, caps.terminal_cap) + 10;
    const maker = await newAccount(tx);
    const taker = await newAccount(tx);
    const m = await newMarket(tx);
    const early = await maker.client.placeBatch([order(m, { tick: 5 }), order(m, { tick: 6 })]);
    await placeMany(maker, Array.from({ length: n }, () => order(m, { tick: 50 })));
    const take = await taker.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: n }));
    assert.equal(take.filled_qty, n);
    assert.equal(take.fills.length, n, 'the placement response carries every fill');
    return { m, maker, taker, n, caps, resting: early.results.map((r) => (r as Placement).order_id) };
  })();
  return big;
}

test('retention: the trade tape silently keeps the newest tape_cap trades', async () => {
  const { m, n, caps } = await bigMarket();
  const first = await k.client.trades(m, { limit: 1000 });
  assert.equal(first.trades.length, Math.min(1000, caps.tape_cap));
  const pages = await allPages(k.client, `/v1/markets/${m}/trades`, 'trades', 1000);
  assert.equal(items(pages, 'trades').length, caps.tape_cap, `${n} trades happened, tape_cap are listed`);
  assert.equal((await k.client.market(m)).volume, String(n), 'the market volume counts every trade');
});

test('retention: each account keeps the newest fill_cap fills', async () => {
  const { maker, taker, caps } = await bigMarket();
  for (const who of [maker, taker]) {
    const pages = await allPages(who.client, '/v1/portfolio/fills', 'fills', 1000);
    assert.equal(items(pages, 'fills').length, caps.fill_cap);
  }
});

test('retention: each account keeps terminal_cap terminal orders, and resting orders are never evicted', async () => {
  const { maker, caps, resting } = await bigMarket();
  const filled = await allPages(maker.client, '/v1/portfolio/orders', 'orders', 1000, '&status=filled');
  assert.equal(items(filled, 'orders').length, caps.terminal_cap);
  const live = await maker.client.orders({ status: ['resting'] });
  assert.deepEqual(live.orders.map((o) => o.order_id).sort(), [...resting].sort(), 'the oldest orders, still resting, are listed');
  const all = await allPages(maker.client, '/v1/portfolio/orders', 'orders', 1000);
  assert.equal(items(all, 'orders').length, caps.terminal_cap + resting.length);
  const first = await maker.client.orders();
  assert.equal(first.orders.length, 100, 'limit defaults to 100');
  assert.notEqual(first.cursor, '');
});

test('retention: each account keeps reject_cap rejected orders', async () => {
  const caps = await k.client.retention();
  const poor = await newAccount(tx, { deposit: '0' });
  const m = await newMarket(tx);
  const results = await placeMany(poor, Array.from({ length: caps.reject_cap + 10 }, (_, i) => order(m, { tick: 1 + (i % 90) })));
  assert.ok(results.every((r) => isItemError(r) && r.error.code === 'insufficient_balance'));
  const pages = await allPages(poor.client, '/v1/portfolio/orders', 'orders', 1000, '&status=rejected');
  assert.equal(items(pages, 'orders').length, caps.reject_cap);
});

// ---- batches -------------------------------------------------------------------------------

test('batches: a batch with partial success answers 201 with index-aligned results, failed items as {error}', async () => {
  const a = await newAccount(tx, { deposit: '1000' });
  const m = await newMarket(tx);
  const bare = await newMarket(tx, { round: false });
  const reqs: OrderRequest[] = [
    order(m, { tick: 10, qty: 2, client_order_id: '1' }),
    order(m, { tick: 90, qty: 100 }),
    order(9999),
    order(bare),
    order(m, { tick: 11, qty: 1, client_order_id: '1' }),
    order(m, { side: 'sell', tick: 50 }),
    order(m, { tick: 12, qty: 3, client_order_id: '3' }),
  ];
  const r = await signedRaw(tx.port, a, 'POST', '/v1/portfolio/orders/batch', JSON.stringify({ orders: reqs }));
  assert.equal(r.status, 201, r.text);
  const res = assertWireShape(R.BatchPlaceResult, r.json).results;
  assert.equal(res.length, reqs.length, 'one result per order');
  const codes = res.map((x) => (isItemError(x) ? x.error.code : (x as Placement).status));
  assert.deepEqual(codes, [
    'resting',
    'insufficient_balance',
    'unknown_market',
    'market_not_trading',
    'duplicate_client_order_id',
    'insufficient_position',
    'resting',
  ]);
  assert.equal((res[0] as Placement).client_order_id, '1');
  assert.equal((res[6] as Placement).client_order_id, '3');
  for (const x of res) {
    if (!isItemError(x)) continue;
    assertWireShape(R.ItemError, x, 'an error item');
    assert.equal(x.error.origin, 'core');
  }
  const live = await a.client.orders({ status: ['resting'] });
  assert.equal(live.orders.length, 2);
});

test('batches: a batch of 21 orders or 21 ids is 400 invalid_field and places nothing; 20 is accepted', async () => {
  const a = await newAccount(tx);
  const m = await newMarket(tx);
  await rejects(a.client.placeBatch(Array.from({ length: 21 }, () => order(m))), 400, 'invalid_field');
  await rejects(a.client.placeBatch([]), 400, 'invalid_field');
  assert.equal((await a.client.orders()).orders.length, 0, 'the whole batch was refused');
  await rejects(a.client.cancelBatch(Array.from({ length: 21 }, (_, i) => String(i + 1))), 400, 'invalid_field');
  const ok = await a.client.placeBatch(Array.from({ length: 20 }, () => order(m)));
  assert.equal(ok.results.length, 20);
  const invalidItem = await signedRaw(
    tx.port,
    a,
    'POST',
    '/v1/portfolio/orders/batch',
    JSON.stringify({ orders: [order(m), { ...order(m), tick: 0 }] }),
  );
  assertErrorReply(invalidItem, 400, 'invalid_field');
  assert.match(String(invalidItem.json.error.details.field), /orders\.1\.tick/);
});

test('batches: a batch place costs N write tokens', async () => {
  const key = await newKey(tx, k.accountId);
  const bare = await newMarket(tx, { round: false });
  const twenty = Array.from({ length: 20 }, () => order(bare));
  for (let i = 0; i < 5; i++) await key.client.placeBatch(twenty);
  const e = await rejects(key.client.placeBatch(twenty), 429, 'rate_limited');
  assert.match(String(e.details?.retry_after_ms), /^[0-9]+$/);
  const single = await newKey(tx, k.accountId);
  for (let i = 0; i < 6; i++) await single.client.placeBatch([order(bare)]);
});

test('batches: a batch cancel costs N write tokens', async () => {
  const key = await newKey(tx, k.accountId);
  const twenty = Array.from({ length: 20 }, (_, i) => String(900_000_000 + i));
  for (let i = 0; i < 5; i++) {
    const r = await key.client.cancelBatch(twenty);
    assert.ok(r.results.every((x) => isItemError(x) && x.error.code === 'unknown_order'));
  }
  await rejects(key.client.cancelBatch(twenty), 429, 'rate_limited');
});

test('batches: a batch that fails its schema is refused whole and costs one token', async () => {
  const key = await newKey(tx, k.accountId);
  const bare = await newMarket(tx, { round: false });
  const bad = Array.from({ length: 20 }, () => ({ ...order(bare), colour: 'red' }));
  for (let i = 0; i < 10; i++) {
    const r = await signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', JSON.stringify({ orders: bad, n: i }));
    assert.equal(r.status, 400, `invalid batch ${i}: ${r.text}`);
  }
  const twenty = Array.from({ length: 20 }, () => order(bare));
  for (let i = 0; i < 4; i++) {
    const r = await key.client.placeBatch(twenty);
    assert.equal(r.results.length, 20, `valid batch ${i} after 10 refused ones (10 + 80 tokens <= 100)`);
  }
});
