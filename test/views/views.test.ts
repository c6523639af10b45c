// Read models: a real Engine executes commands, every event it emits is
// applied to a Views (as a gateway thread does from the broadcast ring), and
// every query is checked for its values and its wire shape (u64 values as
// decimal strings, integers only, enums by name, newest first, cursors).

import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import type { EngineConfig } from '../../src/engine/config.js';
import { summarize } from '../../src/engine/summary.js';
import { NIL } from '../../src/book/orders.js';
import { CANCEL_REASON_NAMES, CompletionStatus, ProposeSource, Reject } from '../../src/layout/records.js';
import type { RecordObject } from '../../src/layout_codec/record_codec.js';
import { ViewError, type Views } from '../../src/views/views.js';
import { AdminAccount } from '../../src/wire/control_plane.js';
import * as R from '../../src/wire/responses.js';
import type { Fill, Order } from '../../src/wire/responses.js';
import { cursorScope, encodeCursor, CursorKind } from '../../src/views/cursor.js';
import { DIFF_CONFIG, generateCommands } from '../support/random_commands.js';
import { assertWireShape } from '../support/wire_shapes.js';
import { Harness, NS_PER_MS, T0 } from './harness.js';
import { LW, W_ANEXT } from '../../src/book/orders.js';

/** The declared shape of each list's page. */
const PAGES = {
  markets: R.MarketsPage, trades: R.TradesPage, rounds: R.RoundsPage, positions: R.PositionsPage, fills: R.FillsPage, orders: R.OrdersPage,
} as const;

/** Follows cursors to exhaustion; returns the items of every page in order. */
function drain<T>(page: (cursor: string | undefined) => { cursor: string }, key: keyof typeof PAGES, check = true): T[] {
  const all: T[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 10_000; pages++) {
    const p = page(cursor);
    if (check) assertWireShape(PAGES[key], p, `${key} page`);
    all.push(...((p as unknown as Record<string, T[]>)[key]!));
    if (p.cursor === '') return all;
    assert.notEqual(p.cursor, cursor, 'the cursor advances');
    cursor = p.cursor;
  }
  throw new Error('pagination does not end');
}

function isCursorError(e: unknown): boolean {
  return e instanceof ViewError && e.code === 'invalid_field' && e.field === 'cursor';
}

test('views: markets list in ascending market_id with a status filter, and market fields derive best ask and display_tick', () => {
  const h = new Harness();
  const a1 = h.account();
  const a2 = h.account();
  const m1 = h.market({ category: 7, title: 'BTC above 100k', limit: 500 });
  const m2 = h.market({ round: false });
  const m3 = h.market();
  h.ok({ type: 'FreezeRound', market_id: m3 });
  const m4 = h.market();

  // Tight book on m1: bid 40, NO bid 55 = YES ask 45; spread 5 -> midpoint 42.
  h.order(a1, { market: m1, tick: 40, qty: 10 });
  h.order(a2, { market: m1, outcome: 'no', tick: 55, qty: 5 });
  const v1 = h.views.market(m1)!;
  assertWireShape(R.MarketWithSeq, v1);
  assert.deepEqual(v1, {
    market_id: m1, title: 'BTC above 100k', category: 7, status: 'trading', best_yes_bid: 40, best_yes_ask: 45, display_tick: 42,
    last_tick_yes: 0, volume: '0', open_interest: '0', position_limit: 500, fee_schedule_id: 0,
    close_ts: String(T0 + 3_600_000n * NS_PER_MS), round_number: '1', as_of_seq: String(h.views.asOfSeq),
  });

  // Wide book on m4: bid 30, ask 50 (spread 20) -> last_tick_yes (0: no trade yet).
  h.order(a1, { market: m4, tick: 30, qty: 1 });
  h.order(a2, { market: m4, outcome: 'no', tick: 50, qty: 1 });
  assert.equal(h.views.market(m4)!.display_tick, 0);
  // A NO buy at 70 takes the YES bid at 30: last 30; one-sided book -> last.
  h.order(a2, { market: m4, outcome: 'no', tick: 70, qty: 1 });
  let v4 = h.views.market(m4)!;
  assert.deepEqual(
    [v4.best_yes_bid, v4.best_yes_ask, v4.last_tick_yes, v4.display_tick, v4.volume, v4.open_interest],
    [0, 50, 30, 30, '1', '1'],
  );
  // Bid 45, ask 50 (spread 5): midpoint 47 (rounded down).
  h.order(a1, { market: m4, tick: 45, qty: 1 });
  v4 = h.views.market(m4)!;
  assert.deepEqual([v4.best_yes_bid, v4.best_yes_ask, v4.display_tick], [45, 50, 47]);
  // Spread of exactly 10 still uses the midpoint: bid 40 vs ask 50 after the 45 is canceled.
  h.ok({ type: 'CancelAll', account: a1, market_id: m4, group_id: 0 });
  h.order(a1, { market: m4, tick: 40, qty: 1 });
  assert.equal(h.views.market(m4)!.display_tick, 45);

  const v2 = h.views.market(m2)!;
  assert.deepEqual([v2.status, v2.close_ts, v2.round_number, v2.best_yes_bid, v2.best_yes_ask], ['closed', '0', '0', 0, 0]);
  assert.equal(h.views.market(m3)!.status, 'frozen');
  assert.equal(h.views.market(99), null);
  assert.equal(h.views.market(0), null);
  assert.equal(h.views.market(1.5), null);

  const ids = (q: { status?: string[]; limit: number }): number[] => {
    const p = h.views.markets(q);
    assertWireShape(R.MarketsPage, p);
    return p.markets.map((m) => m.market_id);
  };
  assert.deepEqual(ids({ limit: 100 }), [m1, m2, m3, m4]);
  assert.deepEqual(ids({ status: ['trading'], limit: 100 }), [m1, m4]);
  assert.deepEqual(ids({ status: ['closed', 'frozen'], limit: 100 }), [m2, m3]);
  assert.deepEqual(ids({ status: ['proposed'], limit: 100 }), []);
  assert.throws(() => h.views.markets({ status: ['open'], limit: 100 }), (e) => e instanceof ViewError && e.field === 'status');

  for (const limit of [1, 2, 3, 4, 5]) {
    assert.deepEqual(
      drain<{ market_id: number }>((cursor) => h.views.markets({ cursor, limit }), 'markets').map((m) => m.market_id),
      [m1, m2, m3, m4],
    );
  }
  const first = h.views.markets({ limit: 2 });
  assert.notEqual(first.cursor, '');
  assert.equal(h.views.markets({ limit: 4 }).cursor, '', 'a page that reaches the end says so');
  assert.deepEqual(
    h.views
      .markets({ status: ['trading'], limit: 1, cursor: h.views.markets({ status: ['trading'], limit: 1 }).cursor })
      .markets.map((m) => m.market_id),
    [m4],
  );
});

test('views: orderbook lists bids of both ladders best first, sells on the opposite ladder, cut at depth', () => {
  const h = new Harness();
  const [a1, a2, a3] = [h.account(), h.account(), h.account()];
  const m = h.market();
  h.order(a1, { tick: 40, qty: 10 });
  h.order(a1, { tick: 40, qty: 5 });
  h.order(a1, { tick: 38, qty: 3 });
  h.order(a1, { tick: 35, qty: 1 });
  h.order(a2, { outcome: 'no', tick: 50, qty: 4 });
  h.order(a2, { outcome: 'no', tick: 52, qty: 6 });
  h.order(a3, { tick: 50, qty: 2 }); // takes 2 of the best NO bid (52, i.e. YES at 48): a3 now holds 2 YES
  h.order(a3, { side: 'sell', tick: 70, qty: 2 }); // a YES sell at 70 is a NO bid at 30

  const b = h.views.orderbook(m, 10)!;
  assertWireShape(R.Orderbook, b);
  assert.deepEqual(b, {
    market_id: m,
    yes: [
      [40, 15],
      [38, 3],
      [35, 1],
    ],
    no: [
      [52, 4],
      [50, 4],
      [30, 2],
    ],
    as_of_seq: String(h.views.asOfSeq),
  });
  const d2 = h.views.orderbook(m, 2)!;
  assert.deepEqual([d2.yes, d2.no], [[[40, 15], [38, 3]], [[52, 4], [50, 4]]]);
  assert.deepEqual(h.views.orderbook(m, 1)!.yes, [[40, 15]]);
  assert.equal(h.views.market(m)!.best_yes_ask, 48);
  assert.equal(h.views.orderbook(42, 10), null);
  const empty = h.market();
  assert.deepEqual([h.views.orderbook(empty, 10)!.yes, h.views.orderbook(empty, 10)!.no], [[], []]);
});

test('views: trade tape is newest first, pages to exhaustion without repeats, and keeps tape_cap trades', () => {
  const h = new Harness({}, { tape_cap: 5 });
  const [a1, a2] = [h.account(), h.account()];
  const m = h.market();
  const quiet = h.market();
  h.order(a1, { tick: 60, qty: 100 });
  const seqs: number[] = [];
  for (let q = 1; q <= 8; q++) {
    h.order(a2, { outcome: 'no', tick: 40, qty: q });
    seqs.push(h.views.asOfSeq);
  }
  const p = h.views.trades(m, { limit: 100 })!;
  assertWireShape(R.TradesPage, p);
  assert.equal(p.cursor, '');
  assert.deepEqual(p.trades.map((t) => t.qty), [8, 7, 6, 5, 4], 'only the newest tape_cap trades, newest first');
  assert.deepEqual(p.trades.map((t) => t.seq), seqs.slice(3).reverse().map(String));
  assert.deepEqual(p.trades[0], {
    seq: String(seqs[7]), ts: p.trades[0]!.ts, market_id: m, tick_yes: 60, qty: 8, taker_side: 'buy', taker_outcome: 'no',
  });
  assert.ok(BigInt(p.trades[0]!.ts) > BigInt(p.trades[1]!.ts));
  for (const limit of [1, 2, 3, 5]) {
    assert.deepEqual(
      drain<{ qty: number }>((cursor) => h.views.trades(m, { cursor, limit })!, 'trades').map((t) => t.qty),
      [8, 7, 6, 5, 4],
    );
  }
  assert.deepEqual(h.views.trades(m, { limit: 2 })!.trades.map((t) => t.qty), [8, 7]);
  assert.deepEqual(h.views.trades(quiet, { limit: 10 })!, { trades: [], cursor: '', as_of_seq: String(h.views.asOfSeq) });
  assert.equal(h.views.trades(77, { limit: 10 }), null);

  // One taker crossing two levels: two trades with one seq, best level first.
  const h2 = new Harness();
  const [b1, b2] = [h2.account(), h2.account()];
  const m2 = h2.market();
  h2.order(b1, { tick: 60, qty: 1 });
  h2.order(b1, { tick: 59, qty: 1 });
  h2.order(b2, { outcome: 'no', tick: 41, qty: 2 });
  const t2 = drain<{ seq: string; tick_yes: number; taker_outcome: string }>(
    (cursor) => h2.views.trades(m2, { cursor, limit: 1 })!,
    'trades',
  );
  assert.deepEqual(t2.map((t) => t.tick_yes), [59, 60]);
  assert.equal(t2[0]!.seq, t2[1]!.seq);
});

test('views: fills list both roles with fees, paths, own-space ticks and client_order_id, newest first', () => {
  const h = new Harness();
  const [a1, a2, a3] = [h.account(), h.account(), h.account()];
  const fees = h.feeSchedule(700, 100);
  const m = h.market({ fees });
  const other = h.market();

  // mint: a1 buys YES at 60 (maker), a2 buys NO at 40 (taker).
  const o1 = h.order(a1, { tick: 60, qty: 10, coid: 11n });
  const o2 = h.order(a2, { outcome: 'no', tick: 40, qty: 10 });
  const mintSeq = String(h.views.asOfSeq);
  const mintTs = h.lastTs();
  // direct: a1 sells 4 YES at 65 (maker, a NO bid at 35); a3 buys YES at 70 (taker) and trades at 65.
  const o3 = h.order(a1, { side: 'sell', tick: 65, qty: 4 });
  const o4 = h.order(a3, { tick: 70, qty: 4, coid: (1n << 40n) + 5n });
  // merge: a2 sells 3 NO at 30 (maker, a YES bid at 70); a1 sells 3 YES at 25 (taker) and trades at 70.
  const o5 = h.order(a2, { side: 'sell', outcome: 'no', tick: 30, qty: 3 });
  const o6 = h.order(a1, { side: 'sell', tick: 25, qty: 3 });
  // And a fee-free trade in another market.
  h.order(a1, { market: other, tick: 50, qty: 1 });
  h.order(a3, { market: other, outcome: 'no', tick: 50, qty: 1 });

  const f1 = h.views.fills(a1, { limit: 100 });
  assertWireShape(R.FillsPage, f1);
  assert.equal(f1.cursor, '');
  assert.deepEqual(f1.fills.map((f) => [f.fill_id, f.market_id, f.role, f.path]), [
    ['4', other, 'maker', 'mint'], ['3', m, 'taker', 'merge'], ['2', m, 'maker', 'direct'], ['1', m, 'maker', 'mint'],
  ]);
  const mint: Fill = {
    fill_id: '1', seq: mintSeq, ts: mintTs, order_id: String(o1), client_order_id: '11', market_id: m, side: 'buy', outcome: 'yes',
    role: 'maker', tick_yes: 60, tick: 60, qty: 10, fee: '3', path: 'mint',
  };
  assert.deepEqual(f1.fills[3], mint);
  // fee = ceil(bps x q x p x (100 - p) / 1e6), p in the payer's own space.
  assert.deepEqual(f1.fills[2], {
    ...f1.fills[2]!,
    order_id: String(o3),
    side: 'sell',
    outcome: 'yes',
    tick_yes: 65,
    tick: 65,
    qty: 4,
    fee: '1',
    client_order_id: '0',
  });
  assert.deepEqual(f1.fills[1], {
    ...f1.fills[1]!,
    order_id: String(o6),
    side: 'sell',
    outcome: 'yes',
    tick_yes: 70,
    tick: 70,
    qty: 3,
    fee: '5',
  });

  const f2 = h.views.fills(a2, { limit: 100 }).fills;
  assert.deepEqual(f2.map((f) => [f.order_id, f.role, f.side, f.outcome, f.tick_yes, f.tick, f.qty, f.fee, f.path, f.client_order_id]), [
    [String(o5), 'maker', 'sell', 'no', 70, 30, 3, '1', 'merge', '0'],
    [String(o2), 'taker', 'buy', 'no', 60, 40, 10, '17', 'mint', '0'],
  ]);
  assert.equal(f2[1]!.seq, mintSeq);
  const f3 = h.views.fills(a3, { limit: 100 }).fills;
  assert.deepEqual(f3.map((f) => [f.order_id, f.role, f.tick, f.fee, f.path, f.client_order_id]), [
    [f3[0]!.order_id, 'taker', 50, '0', 'mint', '0'],
    [String(o4), 'taker', 65, '7', 'direct', String((1n << 40n) + 5n)],
  ]);

  assert.deepEqual(h.views.fills(a1, { market_id: other, limit: 100 }).fills.map((f) => f.fill_id), ['4']);
  assert.deepEqual(h.views.fills(a1, { order_id: o1, limit: 100 }).fills.map((f) => f.fill_id), ['1']);
  assert.deepEqual(h.views.fills(a1, { order_id: o1, market_id: other, limit: 100 }).fills, []);
  for (const limit of [1, 2, 3]) assert.deepEqual(drain((cursor) => h.views.fills(a1, { cursor, limit }), 'fills'), f1.fills);
  const mine = drain<Fill>((cursor) => h.views.fills(a1, { market_id: m, cursor, limit: 1 }), 'fills');
  assert.deepEqual(mine.map((f) => f.fill_id), ['3', '2', '1']);
  assert.equal(h.views.fills(a1, { market_id: m, limit: 3 }).cursor, '', 'a full last page has an empty cursor');
  assert.deepEqual(h.views.fills(h.account(), { limit: 10 }).fills, []);
  assert.deepEqual(h.views.fills(999, { limit: 10 }).fills, []);
});

test('views: fills keep the newest fill_cap per account', () => {
  const h = new Harness({}, { fill_cap: 3 });
  const [a1, a2, a3] = [h.account(), h.account(), h.account()];
  h.market();
  h.order(a1, { tick: 50, qty: 100 });
  for (let q = 1; q <= 5; q++) h.order(q % 2 ? a2 : a3, { outcome: 'no', tick: 50, qty: q });
  assert.deepEqual(h.views.fills(a1, { limit: 100 }).fills.map((f) => [f.fill_id, f.qty]), [['5', 5], ['4', 4], ['3', 3]]);
  assert.deepEqual(drain<Fill>((cursor) => h.views.fills(a1, { cursor, limit: 2 }), 'fills').map((f) => f.fill_id), ['5', '4', '3']);
  assert.deepEqual(h.views.fills(a2, { limit: 100 }).fills.map((f) => f.fill_id), ['5', '3', '1']);
  assert.deepEqual(h.views.fills(a3, { limit: 100 }).fills.map((f) => f.fill_id), ['4', '2']);
  assert.deepEqual(h.views.retention(), { tape_cap: 1000, terminal_cap: 1000, reject_cap: 100, fill_cap: 3 });
});

test('views: orders list every retained order newest first, with status filters, client_order_id, reasons and retention caps', () => {
  const h = new Harness({ terminal_cap: 3, reject_cap: 2 });
  const [a1, a2] = [h.account(), h.account()];
  const m = h.market();
  const o1 = h.order(a1, { tick: 40, qty: 10, coid: 1n, group: 9 });
  const o2 = h.order(a1, { tick: 41, qty: 10 });
  h.order(a2, { outcome: 'no', tick: 59, qty: 4 }); // 4 of o2
  const fillSeq = h.views.asOfSeq;
  const o3 = h.order(a1, { tick: 42, qty: 5 });
  h.order(a2, { outcome: 'no', tick: 58, qty: 5 }); // all of o3
  const o4 = h.order(a1, { tick: 10, qty: 1 });
  h.ok({ type: 'CancelOrder', account: a1, order_id: o4 });
  const o5 = h.place(a1, { tick: 30, qty: 1, tif: 'ioc' }).order_id as number;
  const r1 = h.place(a1, { side: 'sell', outcome: 'no', tick: 50, qty: 5, coid: 2n });
  assert.equal(r1.status, 1);
  const r2 = h.place(a1, { market: 99, tick: 50, qty: 5 });
  const [rej1, rej2] = [r1.order_id as number, r2.order_id as number];

  const list = h.views.orders(a1, { limit: 100 });
  assertWireShape(R.OrdersPage, list);
  assert.equal(list.cursor, '');
  assert.deepEqual(list.orders.map((o) => [Number(o.order_id), o.reason]), [
    [rej2, 'unknown_market'], [rej1, 'insufficient_position'], [o5, 'ioc_remainder'], [o4, 'user_canceled'], [o3, ''], [o2, ''], [o1, ''],
  ]);
  assert.ok(list.orders.every((o) => !('status' in o)), 'the list item carries no status');
  const item2 = list.orders.find((o) => Number(o.order_id) === o2)!;
  assert.deepEqual(item2, {
    order_id: String(o2), client_order_id: '0', market_id: m, tick: 41, qty: 10, expiry_ts: '0', max_cost: '0', group_id: 0, flags: 0,
    reason: '', filled_qty: 4, remaining_qty: 6, created_seq: String(o2), created_ts: item2.created_ts, last_update_seq: String(fillSeq),
    side: 'buy', outcome: 'yes', tif: 'gtc', post_only: false, stp: 'cancel_taker',
  } satisfies Order);
  const item1 = list.orders.find((o) => Number(o.order_id) === o1)!;
  assert.deepEqual([item1.client_order_id, item1.group_id, item1.remaining_qty, item1.filled_qty], ['1', 9, 10, 0]);
  const itemR1 = list.orders.find((o) => Number(o.order_id) === rej1)!;
  assert.deepEqual(
    [itemR1.client_order_id, itemR1.remaining_qty, itemR1.filled_qty, itemR1.side, itemR1.outcome, itemR1.flags],
    ['2', 0, 0, 'sell', 'no', 3],
  );

  const ids = (q: Parameters<Views['orders']>[1]): number[] => h.views.orders(a1, q).orders.map((o) => Number(o.order_id));
  assert.deepEqual(ids({ status: ['resting'], limit: 100 }), [o1]);
  assert.deepEqual(ids({ status: ['resting', 'partially_filled'], limit: 100 }), [o2, o1]);
  assert.deepEqual(ids({ status: ['filled'], limit: 100 }), [o3]);
  assert.deepEqual(ids({ status: ['filled', 'canceled'], limit: 100 }), [o5, o4, o3]);
  assert.deepEqual(ids({ status: ['rejected'], limit: 100 }), [rej2, rej1]);
  assert.deepEqual(ids({ status: ['rejected', 'resting'], limit: 100 }), [rej2, rej1, o1]);
  assert.throws(
    () => h.views.orders(a1, { status: ['open'], limit: 10 }),
    (e) => e instanceof ViewError && e.code === 'invalid_field' && e.field === 'status',
  );
  assert.deepEqual(ids({ client_order_id: [0, 1], limit: 100 }), [o1]);
  assert.deepEqual(ids({ client_order_id: [0, 2], limit: 100 }), [rej1]);
  assert.deepEqual(ids({ client_order_id: [0, 1], status: ['filled'], limit: 100 }), []);
  assert.deepEqual(ids({ client_order_id: [0, 3], limit: 100 }), []);
  assert.deepEqual(ids({ market_id: 99, limit: 100 }), [rej2]);
  assert.deepEqual(h.views.orders(a2, { client_order_id: [0, 1], limit: 100 }).orders, [], 'client ids are per account');
  for (const limit of [1, 2, 3, 7]) assert.deepEqual(drain((cursor) => h.views.orders(a1, { cursor, limit }), 'orders'), list.orders);
  const picked = drain<Order>((cursor) => h.views.orders(a1, { status: ['canceled', 'resting'], cursor, limit: 1 }), 'orders');
  assert.deepEqual(picked.map((o) => Number(o.order_id)), [o5, o4, o1]);

  // order(): one order with its status; foreign or unknown -> null.
  const { order_id: id3, ...rest3 } = list.orders.find((o) => Number(o.order_id) === o3)!;
  assert.deepEqual(h.views.order(a1, o3), { order_id: id3, status: 'filled', ...rest3 });
  assert.equal(h.views.order(a1, rej1)!.status, 'rejected');
  assert.equal(h.views.order(a2, o1), null);
  assert.equal(h.views.order(a1, 123456), null);

  // terminal_cap 3: a fourth terminal order evicts the oldest terminal (o3); live orders stay.
  const o6 = h.order(a1, { tick: 11, qty: 1 });
  h.ok({ type: 'CancelOrder', account: a1, order_id: o6 });
  assert.deepEqual(ids({ status: ['filled', 'canceled'], limit: 100 }), [o6, o5, o4]);
  assert.equal(h.views.order(a1, o3), null);
  assert.deepEqual(ids({ status: ['resting', 'partially_filled'], limit: 100 }), [o2, o1]);
  // reject_cap 2: a third reject evicts the oldest (rej1) and frees its client_order_id.
  const rej3 = h.place(a1, { market: 98, tick: 50, qty: 1 }).order_id as number;
  assert.deepEqual(ids({ status: ['rejected'], limit: 100 }), [rej3, rej2]);
  assert.deepEqual(ids({ client_order_id: [0, 2], limit: 100 }), []);
});

test('views: order flags, tif, post_only, stp and max_cost are rendered from the order', () => {
  const h = new Harness();
  const [a1, a2] = [h.account(), h.account()];
  h.market();
  h.order(a1, { tick: 50, qty: 2 });
  h.order(a2, { outcome: 'no', tick: 50, qty: 2 }); // a1 holds 2 YES
  const f1 = h.order(a1, { outcome: 'no', tick: 20, qty: 1, post_only: true, tif: 'gtd', stp: 'cancel_maker', expiry_ms: 5000 });
  const f2 = h.place(a1, { side: 'sell', tick: 99, qty: 1, tif: 'ioc', stp: 'cancel_both' }).order_id as number;
  const f3 = h.place(a1, { tick: 30, qty: 5, tif: 'fok', max_cost: 500 }).order_id as number;
  const f4 = h.place(a1, { tick: 30, qty: 5, tif: 'ioc', max_cost: 500 }).order_id as number;
  const got = new Map(h.views.orders(a1, { limit: 100 }).orders.map((o) => [Number(o.order_id), o]));
  const pick = (o: Order): unknown[] => [o.flags, o.side, o.outcome, o.tif, o.post_only, o.stp, o.max_cost, o.reason];
  assert.deepEqual(pick(got.get(f1)!), [2 | 4 | 8 | 64, 'buy', 'no', 'gtd', true, 'cancel_maker', '0', '']);
  assert.equal(got.get(f1)!.expiry_ts, String(T0 + 5000n * NS_PER_MS), 'expiry_ts as requested');
  assert.deepEqual(pick(got.get(f2)!), [1 | 16 | 128, 'sell', 'yes', 'ioc', false, 'cancel_both', '0', 'ioc_remainder']);
  assert.deepEqual(pick(got.get(f3)!), [32 | 256, 'buy', 'yes', 'fok', false, 'cancel_taker', '500', 'fok_infeasible']);
  assert.deepEqual(pick(got.get(f4)!), [16 | 256, 'buy', 'yes', 'ioc', false, 'cancel_taker', '500', 'max_cost_infeasible']);
  // The gtd order expires on the clock: reason expired.
  h.tick(6000);
  assert.equal(h.views.order(a1, f1)!.reason, 'expired');
  assert.equal(h.views.order(a1, f1)!.status, 'canceled');
});

test('views: positions per (market, outcome) with free and reserved_for_sale, and balances', () => {
  const h = new Harness();
  const [a1, a2, a5] = [h.account(), h.account(), h.account()];
  const m1 = h.market();
  const m2 = h.market();
  h.order(a1, { market: m1, tick: 60, qty: 10 });
  h.order(a2, { market: m1, outcome: 'no', tick: 40, qty: 10 });
  h.order(a1, { market: m2, tick: 50, qty: 2 });
  h.order(a2, { market: m2, outcome: 'no', tick: 50, qty: 2 });
  h.order(a1, { market: m1, side: 'sell', tick: 70, qty: 4 });
  h.order(a2, { market: m2, tick: 10, qty: 3 }); // a2 buys YES too: an open buy is not a position
  h.order(a5, { market: m2, tick: 10, qty: 1 });

  const p1 = h.views.positions(a1, { limit: 100 });
  assertWireShape(R.PositionsPage, p1);
  assert.deepEqual(p1.positions, [
    { market_id: m1, outcome: 'yes', free: 6, reserved_for_sale: 4 },
    { market_id: m2, outcome: 'yes', free: 2, reserved_for_sale: 0 },
  ]);
  assert.equal(p1.cursor, '');
  assert.deepEqual(h.views.positions(a2, { limit: 100 }).positions, [
    { market_id: m1, outcome: 'no', free: 10, reserved_for_sale: 0 },
    { market_id: m2, outcome: 'no', free: 2, reserved_for_sale: 0 },
  ]);
  assert.deepEqual(h.views.positions(a1, { market_id: m2, limit: 100 }).positions, [
    { market_id: m2, outcome: 'yes', free: 2, reserved_for_sale: 0 },
  ]);
  assert.deepEqual(h.views.positions(a1, { market_id: 77, limit: 100 }).positions, []);
  assert.deepEqual(h.views.positions(a5, { limit: 100 }).positions, []);
  assert.deepEqual(drain((cursor) => h.views.positions(a1, { cursor, limit: 1 }), 'positions'), p1.positions);

  // a1 buys NO in m1 as well: both outcomes of one market, yes before no.
  h.order(a1, { market: m1, outcome: 'no', tick: 45, qty: 1 });
  h.order(a2, { market: m1, tick: 55, qty: 1 });
  assert.deepEqual(h.views.positions(a1, { market_id: m1, limit: 100 }).positions.map((p) => p.outcome), ['yes', 'no']);
  assert.deepEqual(
    drain<{ market_id: number; outcome: string }>((cursor) => h.views.positions(a1, { cursor, limit: 2 }), 'positions').map(
      (p) => `${p.market_id}${p.outcome}`,
    ),
    [`${m1}yes`, `${m1}no`, `${m2}yes`],
  );

  const s = h.engine.state.accounts;
  for (const a of [a1, a2, a5]) {
    const b = h.views.balance(a);
    assertWireShape(R.Balance, b);
    assert.deepEqual(b, { available: String(s.available[a]), reserved: String(s.reserved[a]), as_of_seq: String(h.views.asOfSeq) });
  }
  assert.deepEqual(h.views.balance(a5), { available: '999990', reserved: '10', as_of_seq: String(h.views.asOfSeq) });
  // Every position of the engine's summary appears in the views.
  const fromViews = [a1, a2, a5].flatMap((a) => h.views.positions(a, { limit: 100 }).positions.map((p) => ({ account_id: a, ...p })));
  const fromEngine = summarize(h.engine.state).positions.map((p) => ({
    account_id: p.account_id,
    market_id: p.market_id,
    outcome: p.outcome ? 'no' : 'yes',
    free: p.free,
    reserved_for_sale: p.reserved_for_sale,
  }));
  assert.deepEqual(fromViews, fromEngine);
});

test('views: queue position counts the shares ahead of an order in its level', () => {
  const h = new Harness();
  const [a1, a2, a3, a4] = [h.account(), h.account(), h.account(), h.account()];
  const m = h.market();
  const o1 = h.order(a1, { tick: 40, qty: 5 });
  const o2 = h.order(a2, { tick: 40, qty: 7 });
  const o3 = h.order(a3, { tick: 40, qty: 9 });
  const o4 = h.order(a1, { tick: 41, qty: 2 });
  const q = h.views.queuePosition(a3, o3)!;
  assertWireShape(R.QueuePosition, q);
  assert.deepEqual(q, { order_id: String(o3), market_id: m, shares_ahead: 12, as_of_seq: String(h.views.asOfSeq) });
  assert.equal(h.views.queuePosition(a1, o1)!.shares_ahead, 0);
  assert.equal(h.views.queuePosition(a1, o4)!.shares_ahead, 0);
  assert.equal(h.views.queuePosition(a2, o3), null, 'another account\'s order');
  assert.equal(h.views.queuePosition(a3, 99999), null);
  h.order(a4, { outcome: 'no', tick: 60, qty: 3 }); // fills o4 (2) and 1 of o1
  assert.equal(h.views.queuePosition(a3, o3)!.shares_ahead, 4 + 7);
  assert.equal(h.views.queuePosition(a1, o4), null, 'a filled order has no queue position');
  h.ok({ type: 'DecreaseOrder', account: a2, order_id: o2, new_qty: 3 });
  assert.equal(h.views.queuePosition(a3, o3)!.shares_ahead, 4 + 3);
  assert.equal(h.views.queuePosition(a2, o2)!.shares_ahead, 4, 'a decrease keeps the place');
});

test('views: dead-man timer armed, refreshed, disarmed and fired', () => {
  const h = new Harness();
  const a1 = h.account();
  h.market();
  assert.deepEqual(h.views.deadman(a1), { armed: false, timeout_ms: 0, fires_at_ts: '0', seq: String(h.views.asOfSeq) });
  h.ok({ type: 'ArmDeadman', account: a1, timeout_ms: 5000 });
  const d = h.views.deadman(a1);
  assertWireShape(R.DeadmanState, d);
  assert.deepEqual(d, {
    armed: true,
    timeout_ms: 5000,
    fires_at_ts: String(BigInt(h.lastTs()) + 5000n * NS_PER_MS),
    seq: String(h.views.asOfSeq),
  });
  h.ok({ type: 'DisarmDeadman', account: a1 });
  assert.deepEqual(h.views.deadman(a1), { armed: false, timeout_ms: 0, fires_at_ts: '0', seq: String(h.views.asOfSeq) });
  h.ok({ type: 'ArmDeadman', account: a1, timeout_ms: 1000 });
  const o = h.order(a1, { tick: 30, qty: 1 });
  assert.ok(h.tick(1500));
  assert.equal(h.views.deadman(a1).armed, false);
  assert.deepEqual([h.views.order(a1, o)!.status, h.views.order(a1, o)!.reason], ['canceled', 'deadman']);
});

test('views: oracle price is the zero sentinel before any tick, then the median of fresh sources', () => {
  const h = new Harness();
  assert.deepEqual(h.views.oraclePrice(), { price: '0', fresh_source_count: 0, seq: '0' });
  h.ok({ type: 'SubmitOracleTick', source_id: 0, price: 10_000_000_000_000 });
  h.ok({ type: 'SubmitOracleTick', source_id: 1, price: 30_000_000_000_000 });
  assert.deepEqual(h.views.oraclePrice(), { price: '10000000000000', fresh_source_count: 2, seq: String(h.views.asOfSeq) });
  h.ok({ type: 'SubmitOracleTick', source_id: 2, price: 20_000_000_000_000 });
  const seq = h.views.asOfSeq;
  h.account();
  const p = h.views.oraclePrice();
  assertWireShape(R.OraclePrice, p);
  assert.deepEqual(p, { price: '20000000000000', fresh_source_count: 3, seq: String(seq) });
});

test('views: rounds are listed by descending round_number, filtered by category, and evicted beyond round_cap', () => {
  const h = new Harness({ round_cap: 2 });
  const a1 = h.account();
  const m1 = h.market({ category: 1, strike: 5_000_000_000_000 });
  const m2 = h.market({ category: 2 });
  const m3 = h.market({ category: 1, strike: 15_000_000_000 });
  const m4 = h.market({ category: 5, round: false });
  const r1 = h.views.round(m1)!;
  assertWireShape(R.RoundWithSeq, r1);
  assert.deepEqual(r1, {
    round_number: '1', market_id: m1, category: 1, status: 'trading', strike: '5000000000000', open_ts: r1.open_ts,
    close_ts: String(T0 + 3_600_000n * NS_PER_MS), outcome: '', settle_price: '0', proposed_ts: '0', settled_ts: '0',
    as_of_seq: String(h.views.asOfSeq),
  });

  // m1: freeze, operator proposes yes, settle.
  h.order(a1, { market: m1, tick: 40, qty: 1 });
  h.ok({ type: 'FreezeRound', market_id: m1 });
  assert.equal(h.views.round(m1)!.status, 'frozen');
  assert.equal(h.views.market(m1)!.status, 'frozen');
  h.ok({ type: 'ProposeRound', market_id: m1, source: ProposeSource.yes });
  const proposed = h.views.round(m1)!;
  assert.deepEqual(
    [proposed.status, proposed.outcome, proposed.settle_price, proposed.proposed_ts === '0'],
    ['proposed', 'yes', '0', false],
  );
  assert.deepEqual(h.views.markets({ status: ['proposed'], limit: 10 }).markets.map((m) => m.market_id), [m1]);
  h.ok({ type: 'SettleRound', market_id: m1 });
  const settled = h.views.round(m1)!;
  assert.deepEqual([settled.status, settled.outcome, settled.settled_ts === '0'], ['settled', 'yes', false]);
  assert.equal(h.views.market(m1)!.status, 'closed');
  assert.equal(h.views.market(m1)!.round_number, '1');

  // m3: proposed from the oracle: settle_price is the reference price.
  h.ok({ type: 'SubmitOracleTick', source_id: 0, price: 20_000_000_000 });
  h.ok({ type: 'FreezeRound', market_id: m3 });
  h.ok({ type: 'ProposeRound', market_id: m3, source: ProposeSource.oracle });
  assert.deepEqual([h.views.round(m3)!.outcome, h.views.round(m3)!.settle_price], ['yes', '20000000000']);

  h.ok({ type: 'VoidRound', market_id: m2 });
  assert.deepEqual([h.views.round(m2)!.status, h.views.round(m2)!.outcome], ['void', '']);
  h.openRound(m1); // round 4
  const numbers = (q: { category?: number; limit: number }): string[] => h.views.rounds(q).rounds.map((r) => r.round_number);
  assert.deepEqual(numbers({ limit: 100 }), ['4', '3', '2', '1']);
  // A third terminal round (round_cap 2) evicts the oldest terminal one, round 1.
  h.ok({ type: 'SettleRound', market_id: m3 });
  const all = h.views.rounds({ limit: 100 });
  assertWireShape(R.RoundsPage, all);
  assert.deepEqual(all.rounds.map((r) => r.round_number), ['4', '3', '2']);
  assert.equal(all.cursor, '');
  assert.deepEqual(numbers({ category: 1, limit: 100 }), ['4', '3']);
  assert.deepEqual(numbers({ category: 2, limit: 100 }), ['2']);
  assert.deepEqual(numbers({ category: 5, limit: 100 }), []);
  for (const limit of [1, 2]) assert.deepEqual(drain((cursor) => h.views.rounds({ cursor, limit }), 'rounds'), all.rounds);
  assert.deepEqual(
    drain<{ round_number: string }>((cursor) => h.views.rounds({ category: 1, cursor, limit: 1 }), 'rounds').map((r) => r.round_number),
    ['4', '3'],
  );
  assert.equal(h.views.rounds({ limit: 3 }).cursor, '');

  assert.equal(h.views.round(m1)!.round_number, '4');
  assert.equal(h.views.round(m4), null, 'never opened a round');
  assert.equal(h.views.round(99), null, 'unknown market');
  // Voiding round 4 evicts round 2: m2's current round is gone.
  h.ok({ type: 'VoidRound', market_id: m1 });
  assert.equal(h.views.round(m2), null, 'evicted');
  assert.deepEqual(numbers({ limit: 100 }), ['4', '3']);
});

test('views: round rows are reused: 300 rounds with round_cap 3 keep at most round_cap + 2 x markets rows', () => {
  const h = new Harness({ round_cap: 3 });
  const markets = [h.market({ category: 1 }), h.market({ category: 2 }), h.market({ category: 3, round: false })];
  const mk = h.views.state.markets;
  let maxRows = 0;
  for (let i = 0; i < 100; i++) {
    for (const m of markets.slice(0, 2)) {
      h.ok({ type: i % 2 === 0 ? 'VoidRound' : 'FreezeRound', market_id: m });
      if (i % 2 === 1) {
        h.ok({ type: 'ProposeRound', market_id: m, source: ProposeSource.no });
        h.ok({ type: 'SettleRound', market_id: m });
      }
      h.openRound(m);
      maxRows = Math.max(maxRows, mk.roundRows);
    }
  }
  // 2 first rounds + 200 more; the third market never opened one.
  assert.equal(mk.roundCount, 202);
  assert.ok(maxRows <= 3 + 2 * markets.length, `${maxRows} round rows`);
  assert.ok(mk.roundTop <= 3 + 2 * markets.length, `${mk.roundTop} rows ever used`);
  assert.equal(mk.roundIndex.size, 3 + 2, 'the 3 newest terminal rounds and the 2 open ones are listed');
  assert.deepEqual(h.views.rounds({ limit: 100 }).rounds.map((r) => r.round_number), ['202', '201', '200', '199', '198']);
  assert.equal(h.views.roundRecord(197), null, 'evicted');
  assert.equal(h.views.roundRecord(200)!.round_number, '200');
  // A market whose last round was evicted keeps its number (not listed, no current round).
  h.ok({ type: 'VoidRound', market_id: markets[0]! });
  for (let i = 0; i < 3; i++) {
    h.ok({ type: 'VoidRound', market_id: markets[1]! });
    h.openRound(markets[1]!);
  }
  assert.equal(h.views.round(markets[0]!), null, 'its last round was evicted');
  assert.equal(h.views.market(markets[0]!)!.round_number, '201');
  assert.equal(h.views.market(markets[0]!)!.status, 'closed');
  // It opens its next round in a reused row.
  const top = mk.roundTop;
  h.openRound(markets[0]!);
  assert.equal(mk.roundTop, top);
  assert.equal(h.views.round(markets[0]!)!.round_number, String(mk.roundCount));
});

test('views: an account keeps its pending withdrawals and its newest withdrawal_cap finished ones; '
  + 'an evicted one is unknown and frees its client_withdrawal_id', () => {
  const h = new Harness({ withdrawal_cap: 2 });
  const a = h.account(1_000_000);
  const acc = h.views.state.accounts;
  const request = (cwid: number): number => h.ok({
    type: 'RequestWithdrawal', account: a, client_withdrawal_id: BigInt(cwid), amount: 10, destination: 'dest',
  });
  const pending = request(999);
  let maxRows = 0;
  for (let i = 1; i <= 51; i++) {
    const wid = request(i);
    h.ok({ type: i % 3 === 0 ? 'FailWithdrawal' : 'ConfirmWithdrawal', wid });
    maxRows = Math.max(maxRows, acc.withdrawalRows);
  }
  assert.ok(maxRows <= 1 + 2 + 1, `${maxRows} withdrawal rows`);
  assert.ok(acc.wTop <= 4, `${acc.wTop} rows ever used`);
  assert.equal(h.views.withdrawal(a, 0, 999)!.status, 'pending', 'pending ones are kept');
  assert.equal(h.views.withdrawal(a, 0, 50)!.status, 'confirmed');
  assert.equal(h.views.withdrawal(a, 0, 51)!.status, 'failed');
  assert.equal(h.views.withdrawal(a, 0, 49), null, 'evicted');
  assert.equal(h.views.withdrawalByWid(pending)!.status, 'pending');
  // An evicted wid cannot be finished again; its client_withdrawal_id makes a new withdrawal.
  assert.equal(h.send({ type: 'ConfirmWithdrawal', wid: pending + 1 })!.status, CompletionStatus.rejected);
  const again = request(1);
  assert.equal(again, acc.withdrawalCount);
  assert.equal(h.views.withdrawal(a, 0, 1)!.wid, String(again));
});

test('views: an account keeps its live keys and its newest revoked_key_cap revoked ones; an evicted key is unknown; '
  + 'rows are reused', () => {
  const h = new Harness({ revoked_key_cap: 2 });
  const a = h.account(0);
  const acc = h.views.state.accounts;
  const create = (): number => h.ok({ type: 'CreateKey', account: a, scopes: 3, secret: '11'.repeat(32) });
  const live = create();
  let maxRows = 0;
  for (let i = 0; i < 40; i++) {
    const k = create();
    h.ok({ type: 'RevokeKey', account: a, key_id: k });
    maxRows = Math.max(maxRows, acc.keyRows);
  }
  assert.equal(acc.keyCount, 41);
  assert.ok(maxRows <= 1 + 2 + 1 && acc.keyTop <= 4, `${maxRows} key rows, ${acc.keyTop} ever used`);
  assert.deepEqual(h.views.keys(a).map((k) => [k.key_id, k.revoked]), [[live, false], [40, true], [41, true]]);
  assert.equal(h.views.keyInfo(39), null, 'evicted');
  assert.equal(h.views.keyInfo(41)!.revoked, true);
  assert.equal(h.views.keyInfo(live)!.revoked, false);
  // Revoking again: idempotent while retained, unknown once evicted.
  assert.equal(h.send({ type: 'RevokeKey', account: a, key_id: 41 })!.status, CompletionStatus.ok);
  assert.equal(h.send({ type: 'RevokeKey', account: a, key_id: 39 })!.status, CompletionStatus.rejected);
  // Deleting the account revokes its live key; the revoked ones beyond the cap go.
  h.ok({ type: 'DeleteAccount', account: a });
  assert.deepEqual(h.views.keys(a).map((k) => [k.key_id, k.revoked]), [[live, true], [41, true]]);
});

test('views: withdrawals are found by client_withdrawal_id, per account', () => {
  const h = new Harness();
  const [a1, a2] = [h.account(10_000), h.account()];
  const cwid = (1n << 40n) + 77n;
  h.ok({ type: 'RequestWithdrawal', account: a1, client_withdrawal_id: cwid, amount: 500, destination: 'bc1qexample' });
  const seq = h.views.asOfSeq;
  const hi = Number(cwid >> 32n);
  const lo = Number(cwid & 0xffffffffn);
  const w = h.views.withdrawal(a1, hi, lo)!;
  assertWireShape(R.Withdrawal, w);
  assert.deepEqual(w, {
    wid: '1',
    client_withdrawal_id: String(cwid),
    status: 'pending',
    amount: '500',
    destination: 'bc1qexample',
    seq: String(seq),
    as_of_seq: String(seq),
  });
  assert.deepEqual(h.views.balance(a1), { available: '9500', reserved: '500', as_of_seq: String(seq) });
  h.ok({ type: 'ConfirmWithdrawal', wid: 1 });
  assert.deepEqual([h.views.withdrawal(a1, hi, lo)!.status, h.views.withdrawal(a1, hi, lo)!.seq], ['confirmed', String(seq)]);
  assert.equal(h.views.withdrawalByWid(1)!.account_id, a1);
  assert.equal(h.views.withdrawal(a2, hi, lo), null);
  assert.equal(h.views.withdrawal(a1, 0, 77), null);
  h.ok({ type: 'RequestWithdrawal', account: a1, client_withdrawal_id: 5n, amount: 100, destination: 'x' });
  h.ok({ type: 'FailWithdrawal', wid: 2 });
  assert.equal(h.views.withdrawal(a1, 0, 5)!.status, 'failed');
  assert.equal(h.views.balance(a1).available, '9500', 'a failed withdrawal returns its amount');
});

test('views: deposit addresses are deterministic per account', () => {
  const h = new Harness();
  const other = new Harness();
  const a = h.views.depositAddress(1);
  assertWireShape(R.DepositAddress, a);
  assert.match(a.address, /^dx1[0-9a-f]{40}$/);
  assert.equal(a.address, `dx1${createHash('sha256').update('dx-deposit:1').digest('hex').slice(0, 40)}`, 'as docs/rest.md gives it');
  assert.equal(a.address, h.views.depositAddress(1).address);
  assert.equal(a.address, other.views.depositAddress(1).address, 'the same on every thread');
  assert.notEqual(a.address, h.views.depositAddress(2).address);
});

test('views: keys resolve to their account, scopes, revocation and secret; the operator view lists them', () => {
  const h = new Harness();
  const a1 = h.account(2500);
  const secret = Buffer.alloc(32, 0).map((_, i) => i + 1);
  const k = h.ok({ type: 'CreateKey', account: a1, scopes: 3, secret: new Uint8Array(secret) });
  const k2 = h.ok({ type: 'CreateKey', account: a1, scopes: 7, secret: new Uint8Array(32) });
  const info = h.views.keyInfo(k)!;
  assert.deepEqual([info.account_id, info.scopes, info.revoked, Buffer.from(info.secret).equals(secret)], [a1, 3, false, true]);
  assert.equal(info.secret.length, 32);
  assert.deepEqual([h.views.keyAccount(k), h.views.keyScopes(k), h.views.keyRevoked(k)], [a1, 3, false]);
  assert.ok(Buffer.from(h.views.keySecret(k)!).equals(secret));
  for (const bad of [0, 99, -1, 1.5, 2 ** 40]) {
    assert.equal(h.views.keyInfo(bad), null);
    assert.equal(h.views.keyAccount(bad), 0);
    assert.equal(h.views.keySecret(bad), null);
  }
  h.ok({ type: 'RevokeKey', account: a1, key_id: k });
  assert.equal(h.views.keyRevoked(k), true);
  assert.equal(h.views.keyInfo(k)!.revoked, true);

  const admin = h.views.adminAccount(a1)!;
  assertWireShape(AdminAccount, admin);
  assert.deepEqual(admin, {
    account_id: a1, deleted: false, available: '2500', reserved: '0', positions: [],
    keys: [
      { key_id: k, scopes: ['read', 'trade'], revoked: true, tier: 'default' },
      { key_id: k2, scopes: ['read', 'trade', 'withdraw'], revoked: false, tier: 'default' },
    ],
    as_of_seq: String(h.views.asOfSeq),
  });
  // An account that holds anything cannot be deleted (it would strand it); once its owner has withdrawn it all, it can.
  assert.equal(h.send({ type: 'DeleteAccount', account: a1 })!.code_num, Reject.account_not_empty);
  const wid = h.ok({ type: 'RequestWithdrawal', account: a1, client_withdrawal_id: 1n, amount: 2500, destination: 'bc1qexample' });
  assert.equal(h.send({ type: 'DeleteAccount', account: a1 })!.code_num, Reject.account_not_empty, 'a withdrawal in flight');
  h.ok({ type: 'ConfirmWithdrawal', wid });
  h.ok({ type: 'DeleteAccount', account: a1 });
  assert.equal(h.views.adminAccount(a1)!.deleted, true);
  assert.equal(h.views.keyRevoked(k2), true, 'deleting an account revokes its keys');
  assert.equal(h.views.accountLive(a1), false);
  assert.equal(h.views.adminAccount(42), null);
  assert.deepEqual(h.views.exchangeStatus(), { exchange_active: true, as_of_seq: String(h.views.asOfSeq) });
});

test('views: a malformed or foreign cursor is a ViewError invalid_field on cursor; an empty one is the first page', () => {
  const h = new Harness();
  const [a1, a2] = [h.account(), h.account()];
  const m = h.market();
  h.order(a1, { tick: 50, qty: 3 });
  h.order(a2, { outcome: 'no', tick: 50, qty: 1 });
  h.order(a2, { outcome: 'no', tick: 50, qty: 1 });
  const lists: [string, (cursor: string) => unknown][] = [
    ['markets', (cursor) => h.views.markets({ cursor, limit: 1 })],
    ['trades', (cursor) => h.views.trades(m, { cursor, limit: 1 })],
    ['rounds', (cursor) => h.views.rounds({ cursor, limit: 1 })],
    ['positions', (cursor) => h.views.positions(a1, { cursor, limit: 1 })],
    ['fills', (cursor) => h.views.fills(a1, { cursor, limit: 1 })],
    ['orders', (cursor) => h.views.orders(a1, { cursor, limit: 1 })],
  ];
  const valid = encodeCursor(CursorKind.markets, 1, cursorScope(0, {}));
  for (const [name, list] of lists) {
    for (const bad of [
      '!!',
      'abc',
      'bTE=',
      'bTE',
      `${valid.slice(0, 2)}-`,
      'x'.repeat(40),
      Buffer.from('m-1').toString('base64url'),
      Buffer.from('m99999999999999999').toString('base64url'),
    ]) {
      assert.throws(() => list(bad), isCursorError, `${name} cursor ${bad}`);
    }
    if (name !== 'markets') assert.throws(() => list(valid), isCursorError, `${name} refuses a markets cursor`);
    assert.deepEqual(list(''), list(undefined as unknown as string), `${name}: empty cursor = first page`);
  }
  assert.deepEqual(h.views.markets({ cursor: valid, limit: 1 }).markets, [], 'the markets cursor past market 1');
  // A cursor of another account, market or filters would continue in another list and skip items: refused.
  const m2 = h.market();
  h.order(a1, { market: m2, tick: 40, qty: 1 });
  h.order(a1, { market: m2, outcome: 'no', tick: 60, qty: 1 });
  const next = (page: { cursor: string }): string => (assert.notEqual(page.cursor, ''), page.cursor);
  const ordersOfA1 = next(h.views.orders(a1, { limit: 1 }));
  assert.throws(() => h.views.orders(a2, { cursor: ordersOfA1, limit: 1 }), isCursorError, 'another account');
  assert.throws(() => h.views.orders(a1, { cursor: ordersOfA1, limit: 1, market_id: m2 }), isCursorError, 'other filters');
  assert.ok(h.views.orders(a1, { cursor: ordersOfA1, limit: 5 }).orders.length > 0, 'the same listing with another limit');
  const tradesOfM = next(h.views.trades(m, { limit: 1 })!);
  assert.throws(() => h.views.trades(m2, { cursor: tradesOfM, limit: 1 }), isCursorError, 'another market');
  const fillsOfA2 = next(h.views.fills(a2, { limit: 1 }));
  assert.throws(() => h.views.fills(a1, { cursor: fillsOfA2, limit: 1 }), isCursorError, 'another account');
});

test('views: on seeded random streams the folded state equals the engine state and every answer is well formed', () => {
  const config = DIFF_CONFIG as Partial<EngineConfig>;
  for (const seed of [3, 11]) {
    const h = new Harness(config, { fill_cap: 7, tape_cap: 9 });
    const fills = new Map<number, number[]>();
    const tapes = new Map<number, number[]>();
    const push = (m: Map<number, number[]>, k: number, v: number): void => {
      if (!m.has(k)) m.set(k, []);
      m.get(k)!.push(v);
    };
    for (const cmd of generateCommands(seed, 1500)) {
      h.send(cmd as RecordObject);
      for (const e of h.last) {
        if (e.type !== 'Filled') continue;
        push(fills, e.maker_account as number, e.fill_id as number);
        push(fills, e.taker_account as number, e.fill_id as number);
        push(tapes, e.market_id as number, e.qty as number);
      }
    }
    const s = h.engine.state;
    assert.ok([...fills.values()].some((f) => f.length > 7), `seed=${seed}: some account exceeds fill_cap`);
    assert.ok([...tapes.values()].some((t) => t.length > 9), `seed=${seed}: some market exceeds tape_cap`);
    assert.deepEqual(summarize(h.views.state), summarize(s), `seed=${seed}: views state`);
    const v = h.views;
    assertWireShape(R.MarketsPage, v.markets({ limit: 1000 }));
    assertWireShape(R.RoundsPage, v.rounds({ limit: 1000 }));
    assertWireShape(R.OraclePrice, v.oraclePrice());
    for (let m = 1; m <= s.markets.count; m++) {
      assertWireShape(R.MarketWithSeq, v.market(m));
      assertWireShape(R.Orderbook, v.orderbook(m, 99));
      const tape = drain<{ qty: number }>((cursor) => v.trades(m, { cursor, limit: 4 })!, 'trades');
      assert.deepEqual(tape.map((t) => t.qty), (tapes.get(m) ?? []).slice(-9).reverse(), `seed=${seed} market ${m} tape`);
    }
    for (let a = 1; a <= s.accounts.count; a++) {
      assertWireShape(R.Balance, v.balance(a));
      assertWireShape(R.DeadmanState, v.deadman(a));
      assertWireShape(AdminAccount, v.adminAccount(a));
      const f = drain<Fill>((cursor) => v.fills(a, { cursor, limit: 3 }), 'fills');
      assert.deepEqual(f.map((x) => Number(x.fill_id)), (fills.get(a) ?? []).slice(-7).reverse(), `seed=${seed} account ${a} fills`);
      // Rejected orders are checked one by one, without those a lane could not
      // have sent: the random streams encode commands directly, so a reject
      // may hold values the request schemas refuse (market 0, a tick of 0, an
      // enum byte with no name), which have no wire form.
      const orders = drain<Order>((cursor) => v.orders(a, { cursor, limit: 5 }), 'orders', false);
      for (const o of orders) {
        const rejected = o.reason !== '' && !(CANCEL_REASON_NAMES as readonly string[]).includes(o.reason);
        const laneCouldSend = o.market_id >= 1 && o.tick >= 1 && o.tick <= 99 && o.qty >= 1 && o.reason !== 'invalid_command';
        if (!rejected || laneCouldSend) assertWireShape(R.Order, o, `seed=${seed} order ${o.order_id}`);
      }
      let retained = 0;
      for (const head of [s.accounts.liveHead[a]!, s.accounts.termHead[a]!, s.accounts.rejHead[a]!]) {
        for (let x = head; x !== NIL; x = s.orders.i32[(x << LW) | W_ANEXT]!) retained++;
      }
      assert.equal(orders.length, retained, `seed=${seed} account ${a} orders`);
      for (let i = 1; i < orders.length; i++) assert.ok(Number(orders[i - 1]!.order_id) > Number(orders[i]!.order_id));
      for (const o of orders) {
        const q = v.queuePosition(a, Number(o.order_id));
        if (q) assertWireShape(R.QueuePosition, q);
      }
      drain((cursor) => v.positions(a, { cursor, limit: 2 }), 'positions');
    }
  }
});
