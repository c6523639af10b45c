// REST lane, black box: the success shape of every endpoint of the spec's
// table and of the exchange's additions (deposit address, dead-man GET/POST/DELETE,
// withdrawals), the keys service, and the execution outcomes (201 canceled
// with a reason). Every answer is checked against its declaration in
// src/wire, closed (assertWireShape: every field, no other, u64-domain values
// as ^[0-9]+$ strings, small integers as numbers, no floats). One exchange,
// one gateway thread.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { isItemError, KeysClient } from '../../src/client/index.js';
import { KEY_CREATE_BURST, KEY_CREATE_EVERY_MS } from '../../src/keys_service/routes.js';
import type { Placement } from '../../src/client/types.js';
import { WithdrawalSettled } from '../../src/wire/control_plane.js';
import * as K from '../../src/wire/keys.js';
import * as R from '../../src/wire/responses.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import {
  assertErrorReply, eventually, keyFrom, newAccount, newKey, newMarket, order, raw, rejects, signedRaw, type Key,
} from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';

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

function assertPlacement(p: Placement): void {
  assertWireShape(R.Placement, p, 'placement');
}

test('rest: exchange status is exchange_active true with as_of_seq', async () => {
  const s = await maker.client.exchangeStatus();
  assertWireShape(R.ExchangeStatus, s);
  assert.equal(s.exchange_active, true);
  assert.match(s.as_of_seq, /^[0-9]+$/);
});

test('rest: exchange schedule is a static object of maintenance windows', async () => {
  const s = await maker.client.exchangeSchedule();
  assertWireShape(R.ExchangeSchedule, s);
  assert.equal(typeof s, 'object');
  assert.ok(Array.isArray(s.maintenance_windows), 'maintenance_windows is a list');
});

test('rest: retention answers the four caps as integers', async () => {
  const r = await maker.client.retention();
  assertWireShape(R.RetentionLimits, r);
  for (const k of ['tape_cap', 'terminal_cap', 'reject_cap', 'fill_cap'] as const) {
    assert.ok(Number.isInteger(r[k]) && r[k] > 0, `${k} is a positive integer`);
  }
});

test('rest: account limits name the key\'s scopes, both buckets, the batch cap and the response budget, without as_of_seq', async () => {
  const l = await maker.client.limits();
  assertWireShape(R.AccountLimits, l);
  assert.deepEqual(l.scopes, ['read', 'trade']);
  assert.deepEqual(l.read, { sustained_rate_per_s: 100, burst: 200 });
  assert.deepEqual(l.write, { sustained_rate_per_s: 50, burst: 100 });
  assert.equal(l.batch_cap, 20);
  assert.equal(l.response_budget_ms, tx.ex.config.response_budget_ms);
  assert.ok(!('as_of_seq' in l), 'AccountLimits has no as_of_seq');
});

test('rest: the market list and one market carry every Market field and as_of_seq', async () => {
  const m = await newMarket(tx, { title: 'shape market', position_limit: 5000 });
  const page = await maker.client.markets({ limit: 1000 });
  assertWireShape(R.MarketsPage, page);
  const item = page.markets.find((x) => x.market_id === m);
  assert.ok(item, 'the new market is listed');
  assert.equal(item.title, 'shape market');
  assert.equal(item.position_limit, 5000);
  const one = await maker.client.market(m);
  assertWireShape(R.MarketWithSeq, one);
  assert.equal(one.best_yes_bid, 0);
  assert.equal(one.best_yes_ask, 0);
  assert.equal(one.volume, '0');
  assert.ok(BigInt(one.close_ts) > BigInt(Date.now()) * 1_000_000n, 'close_ts is the round\'s close in ns');
});

test('rest: the orderbook lists bids of both ladders as [tick, qty], best first, limited by depth', async () => {
  const m = await newMarket(tx);
  await maker.client.placeBatch([
    order(m, { tick: 38, qty: 2 }),
    order(m, { tick: 40, qty: 5 }),
    order(m, { tick: 40, qty: 1 }),
    order(m, { outcome: 'no', tick: 55, qty: 3 }),
  ]);
  const b = await taker.client.orderbook(m);
  assertWireShape(R.Orderbook, b);
  assert.deepEqual({ market_id: b.market_id, yes: b.yes, no: b.no }, { market_id: m, yes: [[40, 6], [38, 2]], no: [[55, 3]] });
  assert.match(b.as_of_seq, /^[0-9]+$/);
  const top = await taker.client.orderbook(m, 1);
  assert.deepEqual(top.yes, [[40, 6]]);
  const deep = await newMarket(tx);
  await maker.client.placeBatch(Array.from({ length: 12 }, (_, i) => order(deep, { tick: 10 + i })));
  assert.equal((await taker.client.orderbook(deep)).yes.length, 10, 'depth defaults to 10 levels');
  assert.equal((await taker.client.orderbook(deep, 99)).yes.length, 12);
  const mk = await taker.client.market(m);
  assert.equal(mk.best_yes_bid, 40);
  assert.equal(mk.best_yes_ask, 45, 'best_yes_ask = 100 - best NO bid');
  assert.equal(mk.display_tick, 42, 'display_tick = midpoint rounded down when the spread is at most 10');
});

test('rest: an order book read again shows every write applied since, in its market or another (as_of_seq moves)', async () => {
  const m = await newMarket(tx);
  const other = await newMarket(tx);
  await maker.client.placeOrder(order(m, { tick: 30, qty: 2 }));
  const first = await taker.client.orderbook(m);
  const again = await taker.client.orderbook(m);
  assert.deepEqual(again, first, 'nothing applied between two reads: the same answer');
  // A write in another market: the same levels, as of a later seq.
  await maker.client.placeOrder(order(other, { tick: 20 }));
  const later = await taker.client.orderbook(m);
  assert.deepEqual(later.yes, first.yes);
  assert.ok(BigInt(later.as_of_seq) > BigInt(first.as_of_seq), `${later.as_of_seq} after ${first.as_of_seq}`);
  // A write in this market, read at once by another client: acknowledged, so shown.
  await maker.client.placeOrder(order(m, { tick: 30, qty: 5 }));
  assert.deepEqual((await taker.client.orderbook(m)).yes, [[30, 7]]);
  assert.deepEqual((await taker.client.orderbook(m, 1)).yes, [[30, 7]], 'each depth is its own answer');
});

test('rest: a resting placement answers 201 with every Placement field and no fills', async () => {
  const m = await newMarket(tx);
  const p = await maker.client.placeOrder(order(m, { tick: 30, qty: 4, client_order_id: '9001' }));
  assertPlacement(p);
  assert.equal(p.status, 'resting');
  assert.equal(p.client_order_id, '9001');
  assert.equal(p.filled_qty, 0);
  assert.equal(p.resting_qty, 4);
  assert.deepEqual(p.fills, []);
  assert.ok(!('reason' in p), 'a resting order has no cancel reason');
  const plain = await maker.client.placeOrder(order(m, { tick: 29 }));
  assert.equal(plain.client_order_id, '0', 'no client_order_id renders as "0"');
  assert.ok(BigInt(plain.order_id) > BigInt(p.order_id), 'order ids increase');
});

test('rest: a crossing placement fills at the maker\'s price and shows in the tape, the fills, the positions and the market', async () => {
  const m = await newMarket(tx);
  const rest = await maker.client.placeOrder(order(m, { tick: 40, qty: 5 }));
  const p = await taker.client.placeOrder(order(m, { outcome: 'no', tick: 65, qty: 2 }));
  assertPlacement(p);
  assert.equal(p.status, 'filled');
  assert.equal(p.filled_qty, 2);
  assert.equal(p.resting_qty, 0);
  assert.deepEqual(p.fills, [{ tick_yes: 40, qty: 2, path: 'mint' }]);

  const partial = await taker.client.placeOrder(order(m, { outcome: 'no', tick: 60, qty: 5 }));
  assert.equal(partial.status, 'partially_filled');
  assert.equal(partial.filled_qty, 3);
  assert.equal(partial.resting_qty, 2);

  const tape = await taker.client.trades(m);
  assertWireShape(R.TradesPage, tape);
  assert.equal(tape.trades.length, 2);
  assert.deepEqual(tape.trades.map((t) => t.qty), [3, 2], 'newest first');
  assert.equal(tape.trades[1]!.seq, p.seq);

  const fills = await maker.client.fills({ market_id: m });
  assertWireShape(R.FillsPage, fills);
  assert.equal(fills.fills.length, 2);
  const f = fills.fills[1]!;
  assert.deepEqual(
    {
      order_id: f.order_id,
      side: f.side,
      outcome: f.outcome,
      role: f.role,
      tick_yes: f.tick_yes,
      tick: f.tick,
      qty: f.qty,
      fee: f.fee,
      path: f.path,
    },
    { order_id: rest.order_id, side: 'buy', outcome: 'yes', role: 'maker', tick_yes: 40, tick: 40, qty: 2, fee: '0', path: 'mint' },
  );
  const tf = (await taker.client.fills({ order_id: p.order_id })).fills;
  assert.equal(tf.length, 1);
  assert.deepEqual(
    { role: tf[0]!.role, outcome: tf[0]!.outcome, tick: tf[0]!.tick, tick_yes: tf[0]!.tick_yes },
    { role: 'taker', outcome: 'no', tick: 60, tick_yes: 40 },
  );

  const pos = await maker.client.positions({ market_id: m });
  assertWireShape(R.PositionsPage, pos);
  assert.deepEqual(pos.positions, [{ market_id: m, outcome: 'yes', free: 5, reserved_for_sale: 0 }]);
  const tpos = await taker.client.positions({ market_id: m });
  assert.deepEqual(tpos.positions, [{ market_id: m, outcome: 'no', free: 5, reserved_for_sale: 0 }]);

  const mk = await taker.client.market(m);
  assert.equal(mk.volume, '5');
  assert.equal(mk.open_interest, '5');
  assert.equal(mk.last_tick_yes, 40);
});

test('rest: a buy against a sell of the same outcome trades on the direct path', async () => {
  const m = await newMarket(tx);
  await maker.client.placeOrder(order(m, { tick: 50, qty: 2 }));
  await taker.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: 2 }));
  const sell = await maker.client.placeOrder(order(m, { side: 'sell', tick: 45, qty: 1 }));
  assert.equal(sell.status, 'resting');
  const pos = await maker.client.positions({ market_id: m });
  assert.deepEqual(pos.positions, [{ market_id: m, outcome: 'yes', free: 1, reserved_for_sale: 1 }]);
  const third = await newAccount(tx);
  const p = await third.client.placeOrder(order(m, { tick: 45, qty: 1 }));
  assert.deepEqual(p.fills, [{ tick_yes: 45, qty: 1, path: 'direct' }]);
});

test('rest: the balance answers available and reserved cents as strings with as_of_seq', async () => {
  const a = await newAccount(tx, { deposit: '10000' });
  const m = await newMarket(tx);
  await a.client.placeOrder(order(m, { tick: 40, qty: 5 }));
  const b = await a.client.balance();
  assertWireShape(R.Balance, b);
  assert.deepEqual({ available: b.available, reserved: b.reserved }, { available: '9800', reserved: '200' });
  assert.match(b.as_of_seq, /^[0-9]+$/);
});

test('rest: order list items carry the spec\'s fields plus side, outcome, tif, post_only and stp, newest first', async () => {
  const m = await newMarket(tx);
  const a = await maker.client.placeOrder(order(m, { tick: 20, qty: 3, group_id: 7, client_order_id: '424242' }));
  const b = await maker.client.placeOrder(order(m, { side: 'buy', outcome: 'no', tick: 10, qty: 2, post_only: true, stp: 'cancel_both' }));
  const page = await maker.client.orders({ market_id: m });
  assertWireShape(R.OrdersPage, page);
  assert.deepEqual(page.orders.map((o) => o.order_id), [b.order_id, a.order_id]);
  const o = page.orders[1]!;
  assert.deepEqual(
    {
      client_order_id: o.client_order_id,
      market_id: o.market_id,
      tick: o.tick,
      qty: o.qty,
      group_id: o.group_id,
      reason: o.reason,
      filled_qty: o.filled_qty,
      remaining_qty: o.remaining_qty,
      side: o.side,
      outcome: o.outcome,
      tif: o.tif,
      post_only: o.post_only,
      stp: o.stp,
      max_cost: o.max_cost,
      expiry_ts: o.expiry_ts,
    },
    {
      client_order_id: '424242',
      market_id: m,
      tick: 20,
      qty: 3,
      group_id: 7,
      reason: '',
      filled_qty: 0,
      remaining_qty: 3,
      side: 'buy',
      outcome: 'yes',
      tif: 'gtc',
      post_only: false,
      stp: 'cancel_taker',
      max_cost: '0',
      expiry_ts: '0',
    },
  );
  assert.equal(o.created_seq, a.order_id, 'order_id = the seq that accepted the order');
  const ob = page.orders[0]!;
  assert.equal(ob.post_only, true);
  assert.equal(ob.flags & 4, 4, 'flags carries post_only (bit 4)');
  assert.equal(ob.flags & 2, 2, 'flags carries outcome_no (bit 2)');
  const byCoid = await maker.client.orders({ client_order_id: '424242' });
  assert.deepEqual(byCoid.orders.map((x) => x.order_id), [a.order_id], 'the client_order_id filter answers "did it land?"');
});

test('rest: cancel-all answers 202 with a seq and cancels only the scoped market and group', async () => {
  const m1 = await newMarket(tx);
  const m2 = await newMarket(tx);
  const k = await newAccount(tx);
  const r = await k.client.placeBatch([order(m1, { group_id: 1 }), order(m1, { group_id: 2 }), order(m2, { group_id: 1 })]);
  const ids = r.results.map((x) => (x as Placement).order_id);
  const res = assertWireShape(R.SequencedAck, await k.client.request('DELETE', `/v1/portfolio/orders?market_id=${m1}&group_id=1`));
  assert.deepEqual(Object.keys(res), ['seq']);
  const live = await k.client.orders({ status: ['resting'] });
  assert.deepEqual(live.orders.map((o) => o.order_id).sort(), [ids[1], ids[2]].sort());
  const canceled = await k.client.orders({ status: ['canceled'] });
  assert.deepEqual(canceled.orders.map((o) => [o.order_id, o.reason]), [[ids[0], 'mass_canceled']]);
  const all = await k.client.request<{ seq: string }>('DELETE', '/v1/portfolio/orders?market_id=0&group_id=0');
  assert.ok(BigInt(all.seq) > BigInt(res.seq), '0 means every market and every group');
  assert.equal((await k.client.orders({ status: ['resting'] })).orders.length, 0);
  assert.equal(await fetchStatus(k, 'DELETE', '/v1/portfolio/orders'), 202, 'HTTP 202 Accepted');
});

test('rest: batch cancel answers 200 with index-aligned cancel results and unknown_order items', async () => {
  const m = await newMarket(tx);
  const a = await maker.client.placeOrder(order(m, { tick: 11, qty: 3 }));
  const b = await maker.client.placeOrder(order(m, { tick: 12, qty: 4 }));
  const foreign = await taker.client.placeOrder(order(m, { tick: 13, qty: 1 }));
  const res = await maker.client.cancelBatch([b.order_id, '999999999', a.order_id, foreign.order_id, b.order_id]);
  assertWireShape(R.BatchCancelResult, res);
  assert.equal(res.results.length, 5);
  const [rb, unknown, ra, rf, again] = res.results;
  assert.deepEqual({ ...(rb as object), seq: undefined }, { status: 'canceled', canceled_qty: 4, seq: undefined });
  assert.deepEqual({ ...(ra as object), seq: undefined }, { status: 'canceled', canceled_qty: 3, seq: undefined });
  for (const e of [unknown, rf, again]) {
    assert.ok(isItemError(e), `an error item: ${JSON.stringify(e)}`);
    assert.equal(e.error.code, 'unknown_order');
    assert.equal(e.error.num, 260);
    assert.equal(e.error.origin, 'core');
  }
  assert.equal(await fetchStatus(maker, 'DELETE', '/v1/portfolio/orders/batch', JSON.stringify({ order_ids: ['1'] })), 200);
});

test('rest: decrease answers 200 decreased with new_qty, keeps time priority, is idempotent and cancels at 0', async () => {
  const m = await newMarket(tx);
  const first = await maker.client.placeOrder(order(m, { tick: 33, qty: 5 }));
  const second = await maker.client.placeOrder(order(m, { tick: 33, qty: 2 }));
  const d = await maker.client.decrease(first.order_id, 3);
  assertWireShape(R.DecreaseResult, d);
  assert.deepEqual({ ...d, seq: undefined }, { status: 'decreased', new_qty: 3, seq: undefined });
  const again = await maker.client.decrease(first.order_id, 3);
  assert.equal(again.new_qty, 3, 'an absolute target: a resend changes nothing');
  const above = await maker.client.decrease(first.order_id, 100);
  assert.equal(above.new_qty, 3, 'new_qty = min(remaining, new_qty)');
  const q = await maker.client.queuePosition(second.order_id);
  assert.equal(q.shares_ahead, 3, 'the decreased order keeps its place ahead');
  const list = await maker.client.orders({ market_id: m, status: ['resting'] });
  assert.deepEqual(list.orders.map((o) => [o.order_id, o.remaining_qty]), [[second.order_id, 2], [first.order_id, 3]]);
  const zero = await maker.client.decrease(first.order_id, 0);
  assert.equal(zero.new_qty, 0);
  const gone = await maker.client.orders({ market_id: m, status: ['canceled'] });
  assert.deepEqual(gone.orders.map((o) => [o.order_id, o.reason]), [[first.order_id, 'decreased_to_zero']]);
  assert.equal(await fetchStatus(maker, 'POST', `/v1/portfolio/orders/${second.order_id}/decrease`, '{"new_qty":1}'), 200);
});

test('rest: queue position answers order_id, market_id, shares_ahead and as_of_seq', async () => {
  const m = await newMarket(tx);
  await taker.client.placeOrder(order(m, { tick: 21, qty: 7 }));
  const mine = await maker.client.placeOrder(order(m, { tick: 21, qty: 1 }));
  const q = await maker.client.queuePosition(mine.order_id);
  assertWireShape(R.QueuePosition, q);
  assert.deepEqual({ ...q, as_of_seq: undefined }, { order_id: mine.order_id, market_id: m, shares_ahead: 7, as_of_seq: undefined });
  assert.match(q.as_of_seq, /^[0-9]+$/);
});

test('rest: the oracle price is the zero sentinel before any tick and the median of fresh sources after', async () => {
  const zero = await maker.client.oraclePrice();
  assertWireShape(R.OraclePrice, zero);
  assert.deepEqual(zero, { price: '0', fresh_source_count: 0, seq: '0' });
  await tx.admin.oracleTick({ source_id: 0, price: '6500000000000' });
  await tx.admin.oracleTick({ source_id: 1, price: '6700000000000' });
  const t = await tx.admin.oracleTick({ source_id: 2, price: '6600000000000' });
  const p = await maker.client.oraclePrice();
  assertWireShape(R.OraclePrice, p);
  assert.deepEqual(p, { price: '6600000000000', fresh_source_count: 3, seq: t.seq });
});

test('rest: the round list and one round carry the round record, with as_of_seq', async () => {
  const m = await newMarket(tx, { category: 77 });
  const one = await maker.client.round(m);
  assertWireShape(R.RoundWithSeq, one);
  assert.deepEqual(
    {
      market_id: one.market_id,
      category: one.category,
      status: one.status,
      strike: one.strike,
      outcome: one.outcome,
      settle_price: one.settle_price,
      settled_ts: one.settled_ts,
    },
    { market_id: m, category: 77, status: 'trading', strike: '6000000000000', outcome: '', settle_price: '0', settled_ts: '0' },
  );
  const page = await maker.client.rounds({ category: 77 });
  assertWireShape(R.RoundsPage, page);
  assert.equal(page.rounds.length, 1);
  assert.equal(page.rounds[0]!.round_number, one.round_number);
});

test('rest: the deposit address is deterministic per account and carries as_of_seq', async () => {
  const a = await maker.client.depositAddress();
  assertWireShape(R.DepositAddress, a);
  assert.equal(typeof a.address, 'string');
  assert.ok(a.address.length > 0);
  assert.match(a.as_of_seq, /^[0-9]+$/);
  const other = await newKey(tx, maker.accountId);
  assert.equal((await other.client.depositAddress()).address, a.address, 'same account, same address');
  assert.notEqual((await taker.client.depositAddress()).address, a.address, 'another account, another address');
});

test('rest: the dead-man timer answers armed, timeout_ms, fires_at_ts and seq on POST and GET, and armed false on DELETE', async () => {
  const k = await newAccount(tx);
  const idle = await k.client.deadman();
  assertWireShape(R.DeadmanState, idle);
  assert.equal(idle.armed, false);
  const armed = await k.client.armDeadman(30000);
  assertWireShape(R.DeadmanArmed, armed);
  assert.equal(armed.armed, true);
  assert.equal(armed.timeout_ms, 30000);
  const fires = BigInt(armed.fires_at_ts!);
  const now = BigInt(Date.now()) * 1_000_000n;
  assert.ok(fires > now + 25_000_000_000n && fires < now + 35_000_000_000n, 'fires_at_ts is about now + timeout_ms, in ns');
  const got = await k.client.deadman();
  assert.deepEqual(
    { armed: got.armed, timeout_ms: got.timeout_ms, fires_at_ts: got.fires_at_ts },
    { armed: true, timeout_ms: 30000, fires_at_ts: armed.fires_at_ts },
  );
  const refreshed = await k.client.armDeadman(30000);
  assert.ok(BigInt(refreshed.fires_at_ts!) >= fires, 'POSTing again refreshes the timer');
  const off = await k.client.disarmDeadman();
  assertWireShape(R.DeadmanDisarmed, off);
  assert.equal(off.armed, false);
  assert.match(off.seq, /^[0-9]+$/);
  const offAgain = await k.client.disarmDeadman();
  assert.equal(offAgain.armed, false, 'disarming is idempotent');
  assert.equal((await k.client.deadman()).armed, false);
  assert.equal(await fetchStatus(k, 'POST', '/v1/portfolio/deadman', '{"timeout_ms":1000}'), 200);
  assert.equal(await fetchStatus(k, 'DELETE', '/v1/portfolio/deadman'), 200);
});

test('rest: the dead-man timer cancels every order of the account once when not refreshed, then disarms', async () => {
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  const r = await k.client.placeBatch([order(m, { tick: 10 }), order(m, { tick: 11 })]);
  await k.client.armDeadman(1000);
  const fired = await eventually(async () => (await k.client.orders({ status: ['resting'] })).orders.length === 0, 3000, 50);
  assert.ok(fired, 'the orders were canceled within about timeout_ms');
  const canceled = await k.client.orders({ status: ['canceled'] });
  assert.deepEqual(canceled.orders.map((o) => o.reason), ['deadman', 'deadman']);
  assert.equal(canceled.orders.length, r.results.length);
  assert.equal((await k.client.deadman()).armed, false, 'the timer disarms after firing');
  const later = await k.client.placeOrder(order(m, { tick: 12 }));
  assert.equal(later.status, 'resting', 'orders placed after the firing stay');
});

test('rest: a withdrawal with an operator-granted withdraw key is 201 pending, reserves the amount, and is idempotent', async () => {
  const k = await newAccount(tx, { deposit: '50000' });
  const w = await newKey(tx, k.accountId, ['read', 'withdraw']);
  const req = { client_withdrawal_id: '31', amount: '12000', destination: 'bc1-test-destination' };
  const created = await w.client.withdraw(req);
  assertWireShape(R.WithdrawalCreated, created);
  assert.equal(created.status, 'pending');
  assert.equal(created.client_withdrawal_id, '31');
  const bal = await k.client.balance();
  assert.deepEqual({ available: bal.available, reserved: bal.reserved }, { available: '38000', reserved: '12000' });
  const again = await w.client.withdraw(req);
  assert.equal(again.wid, created.wid, 'the same client_withdrawal_id and body answers the same withdrawal');
  assert.equal((await k.client.balance()).available, '38000', 'a retry moves no more money');
  const got = await k.client.withdrawal('31');
  assertWireShape(R.Withdrawal, got);
  assert.deepEqual({ wid: got.wid, status: got.status }, { wid: created.wid, status: 'pending' });
  const status = await fetchStatus(
    w,
    'POST',
    '/v1/withdrawals',
    JSON.stringify({ client_withdrawal_id: '32', amount: '1', destination: 'x' }),
  );
  assert.equal(status, 201);
});

test('rest: confirming a withdrawal settles it and failing one returns the money', async () => {
  const k = await newAccount(tx, { deposit: '50000' });
  const w = await newKey(tx, k.accountId, ['withdraw']);
  const a = await w.client.withdraw({ client_withdrawal_id: '1', amount: '10000', destination: 'dest-a' });
  const b = await w.client.withdraw({ client_withdrawal_id: '2', amount: '5000', destination: 'dest-b' });
  const c = await tx.admin.confirmWithdrawal(a.wid);
  assertWireShape(WithdrawalSettled, c);
  assert.equal(c.status, 'confirmed');
  const f = await tx.admin.failWithdrawal(b.wid);
  assert.equal(f.status, 'failed');
  assert.equal((await k.client.withdrawal('1')).status, 'confirmed');
  assert.equal((await k.client.withdrawal('2')).status, 'failed');
  const bal = await k.client.balance();
  assert.deepEqual({ available: bal.available, reserved: bal.reserved }, { available: '40000', reserved: '0' });
});

// ---- execution outcomes ------------------------------------------------------------

async function outcomeMarket(): Promise<number> {
  const m = await newMarket(tx);
  await maker.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: 5 }));
  return m;
}

function assertCanceled(p: Placement, reason: string, filled = 0): void {
  assertPlacement(p);
  assert.equal(p.status, 'canceled', JSON.stringify(p));
  assert.equal(p.reason, reason);
  assert.equal(p.filled_qty, filled);
  assert.equal(p.resting_qty, 0);
}

test('rest: a post-only order that would cross is 201 canceled with reason post_only_cross', async () => {
  const m = await outcomeMarket();
  assertCanceled(await taker.client.placeOrder(order(m, { tick: 50, qty: 1, post_only: true })), 'post_only_cross');
  assert.equal(await placeStatus(taker, order(m, { tick: 50, qty: 1, post_only: true })), 201);
});

test('rest: a fill-or-kill order that cannot fill completely is 201 canceled with reason fok_infeasible', async () => {
  const m = await outcomeMarket();
  assertCanceled(await taker.client.placeOrder(order(m, { tick: 50, qty: 6, tif: 'fok' })), 'fok_infeasible');
  const ok = await taker.client.placeOrder(order(m, { tick: 50, qty: 5, tif: 'fok' }));
  assert.equal(ok.status, 'filled');
});

test('rest: an immediate-or-cancel remainder is 201 canceled with reason ioc_remainder and the filled part', async () => {
  const m = await outcomeMarket();
  assertCanceled(await taker.client.placeOrder(order(m, { tick: 55, qty: 8, tif: 'ioc' })), 'ioc_remainder', 5);
});

test('rest: an order that would trade with the same account is 201 canceled with reason self_trade_prevention', async () => {
  const m = await outcomeMarket();
  assertCanceled(await maker.client.placeOrder(order(m, { tick: 50, qty: 1 })), 'self_trade_prevention');
  const book = await maker.client.orderbook(m);
  assert.deepEqual(book.no, [[50, 5]], 'cancel_taker keeps the resting order');
});

test('rest: a max-cost buy that cannot afford one share is 201 canceled with reason max_cost_infeasible', async () => {
  const m = await outcomeMarket();
  assertCanceled(await taker.client.placeOrder(order(m, { tick: 60, qty: 3, max_cost: '49' })), 'max_cost_infeasible');
  const some = await taker.client.placeOrder(order(m, { tick: 60, qty: 3, max_cost: '100' }));
  assert.equal(some.filled_qty, 2, 'a max-cost buy buys as many shares as the budget allows');
});

// ---- keys service ----------------------------------------------------------------

test('keys service: POST /keys creates a read and trade key whose secret signs requests, shown once', async () => {
  const k = await newAccount(tx);
  const created = await k.keys.createKey({ label: 'bot-1' });
  assertWireShape(K.CreatedKey, created);
  assert.deepEqual(created.scopes, ['read', 'trade']);
  assert.equal(Buffer.from(created.secret, 'base64').length, 32);
  const nk = keyFrom(tx, k.accountId, created.key_id, created.secret);
  assert.deepEqual((await nk.client.limits()).scopes, ['read', 'trade']);
  const p = await nk.client.placeOrder(order(await newMarket(tx), { tick: 5 }));
  assert.equal(p.status, 'resting');
  assert.equal((await k.client.orders({ status: ['resting'] })).orders[0]!.order_id, p.order_id, 'the key trades the account\'s book');
  const readOnly = await k.keys.createKey({ scopes: ['read'] });
  assert.deepEqual(readOnly.scopes, ['read']);
});

test('keys service: GET /keys lists the account\'s keys and never their secrets', async () => {
  const k = await newAccount(tx);
  const created = await k.keys.createKey({ label: 'lister' });
  const list = await k.keys.listKeys();
  assertWireShape(K.KeyList, list);
  const ids = list.keys.map((x) => x.key_id);
  assert.deepEqual(ids.sort((a, b) => a - b), [k.keyId, created.key_id].sort((a, b) => a - b));
  assert.ok(!JSON.stringify(list).includes(created.secret), 'no secret in the listing');
  for (const x of list.keys) assert.ok(!('secret' in x));
});

test('keys service: DELETE /keys/{key_id} revokes at once and idempotently', async () => {
  const k = await newAccount(tx);
  const created = await k.keys.createKey({});
  const victim = keyFrom(tx, k.accountId, created.key_id, created.secret);
  const placed = await victim.client.placeOrder(order(await newMarket(tx), { tick: 6 }));
  const r = await k.keys.revokeKey(created.key_id);
  assertWireShape(K.KeyRevoked, r);
  assert.equal(r.revoked, true);
  await rejects(victim.client.balance(), 401, 'unauthorized');
  await rejects(victim.keys.listKeys(), 401, 'unauthorized');
  const still = (await k.client.orders({ status: ['resting'] })).orders.map((o) => o.order_id);
  assert.deepEqual(still, [placed.order_id], 'revoking a key cancels nothing: orders belong to the account');
  await k.keys.revokeKey(created.key_id);
  const listed = (await k.keys.listKeys()).keys.find((x) => x.key_id === created.key_id);
  assert.equal(listed?.revoked, true);
});

test('keys service: a key of another account cannot be revoked (404 unknown_key) and keeps working', async () => {
  const a = await newAccount(tx);
  const b = await newAccount(tx);
  await rejects(a.keys.revokeKey(b.keyId), 404, 'unknown_key', { num: 270, origin: 'core' });
  assert.equal((await b.client.balance()).available, '100000000');
});

test('keys service: requests are signed like the REST lane; unsigned or badly signed ones are 401 unauthorized', async () => {
  const k = await newAccount(tx);
  const port = tx.ex.accounts_port;
  assertErrorReply(await raw(port, { method: 'GET', target: '/keys' }), 401, 'unauthorized');
  assertErrorReply(
    await signedRaw(port, { keyId: k.keyId, secret: Buffer.alloc(32, 5).toString('base64') }, 'POST', '/keys', '{}'),
    401,
    'unauthorized',
  );
  assertErrorReply(await signedRaw(port, k, 'POST', '/keys', '{}', { ts: Date.now() - 10_000 }), 401, 'unauthorized');
  assert.equal((await signedRaw(port, k, 'GET', '/keys')).status, 200);
  assertErrorReply(await signedRaw(port, k, 'POST', '/keys', '{"label":"x","colour":1}'), 400, 'unknown_field');
});

test('keys service: a user cannot obtain a key with the withdraw scope', async () => {
  const k = await newAccount(tx);
  await rejects(k.keys.createKey({ scopes: ['withdraw'] }), 403, 'missing_scope');
  await rejects(k.keys.createKey({ scopes: ['read', 'trade', 'withdraw'] }), 403, 'missing_scope');
  const w = await newKey(tx, k.accountId, ['read', 'trade', 'withdraw']);
  await rejects(w.keys.createKey({ scopes: ['withdraw'] }), 403, 'missing_scope');
});

test('keys service: a read-only key cannot create a trade key', async () => {
  const k = await newAccount(tx, { scopes: ['read'] });
  await rejects(k.keys.createKey({ scopes: ['trade'] }), 403, 'missing_scope');
  await rejects(k.keys.createKey({}), 403, 'missing_scope');
  const keys = (await newKey(tx, k.accountId)).keys;
  assert.equal((await keys.listKeys()).keys.length, 2, 'nothing was created');
});

test('keys service: an account creates at most KEY_CREATE_BURST keys at once (keys cannot multiply their own creations); ' +
  'then 429 rate_limited with retry_after_ms, for that account only', async () => {
  const k = await newAccount(tx);
  // A refused request takes nothing: 40 characters but 80 bytes pass the schema and fail the stored-text check.
  for (let i = 0; i < KEY_CREATE_BURST; i++) await rejects(k.keys.createKey({ label: 'é'.repeat(40) }), 400, 'invalid_field');
  // Keys created in turn by the keys just created: each has a bucket of its own, the account's limit holds across them.
  let creator = k.keys;
  for (let i = 0; i < KEY_CREATE_BURST; i++) {
    const c = await creator.createKey({});
    creator = new KeysClient({ baseUrl: tx.accountsBase, keyId: c.key_id, secret: c.secret });
  }
  const e = await rejects(creator.createKey({}), 429, 'rate_limited');
  const wait = Number((e.details as { retry_after_ms: string }).retry_after_ms);
  assert.ok(wait > 0 && wait <= KEY_CREATE_EVERY_MS, String(wait));
  await rejects(k.keys.createKey({}), 429, 'rate_limited');
  assert.equal((await k.keys.listKeys()).keys.length, 1 + KEY_CREATE_BURST);
  const other = await newAccount(tx);
  assert.ok((await other.keys.createKey({})).key_id > 0, 'another account is not limited');
});

// ---- helpers --------------------------------------------------------------------------

/**
 * The HTTP status of a signed call (the client library hides it on success).
 * Timestamped 2 s ahead, so it never signs exactly like a client call
 * of the same key (which the replay guard would refuse).
 */
async function fetchStatus(k: Key, method: string, target: string, body?: string): Promise<number> {
  const r = await signedRaw(tx.port, k, method, target, body, { ts: Date.now() + 2000 });
  assert.ok(r.status < 300, `${method} ${target} -> ${r.status} ${r.text}`);
  return r.status;
}

async function placeStatus(k: Key, o: ReturnType<typeof order>): Promise<number> {
  return fetchStatus(k, 'POST', '/v1/portfolio/orders', JSON.stringify(o));
}
