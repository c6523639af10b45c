// WebSocket lane, black box: the data channels over a real exchange with the
// `ws` package as the client. orderbook_delta (snapshot then deltas that
// always rebuild the REST book at the same seq), trades, oracle, rounds, the
// private user channel (the caller's account only; reservation and fee
// accounting; CANCELED from mass cancel and the dead-man), resume from a
// retained seq and the fresh snapshot when it is too old, and a slow
// consumer closed with its code.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order, sleep, type Key } from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';
import { DATA_MESSAGES, WS_MESSAGES } from '../../src/wire/ws.js';
import { BookRebuilder } from './book_rebuilder.js';
import { WsClient, assertSeqs, type Msg } from './ws_client.js';

const USER_LOG_CAP = 24;
const SLOW_BYTES = 64 * 1024;
/** A read tier that pays for any number of user snapshots (each costs a read token per 100 open orders). */
const BIG = { sustained_rate_per_s: 1_000_000, burst: 1_000_000 };

let tx: TestExchange;
let alice: Key;
let bob: Key;
const open: WsClient[] = [];

async function connect(k: Key): Promise<WsClient> {
  const c = await WsClient.connect(tx, k);
  open.push(c);
  return c;
}

/** Subscribes and returns the first reply's sid. */
async function sub(c: WsClient, params: Record<string, unknown>): Promise<number> {
  const r = await c.call('subscribe', params);
  assert.equal(r.type, 'subscribed', JSON.stringify(r));
  return r.msg.sid;
}

/**
 * Everything the exchange published up to now has reached c once c sees an
 * oracle tick sequenced after it (c must be subscribed to oracle): messages
 * of one connection arrive in the order they were published.
 */
async function barrier(c: WsClient): Promise<number> {
  const { seq } = await tx.admin.oracleTick({ source_id: 9, price: String(100_000_000 + Math.floor(Math.random() * 1e6)) });
  await c.next((m) => m.type === 'oracle' && m.msg.seq === seq, 3000, `oracle barrier ${seq}`);
  return Number(seq);
}

/** The user messages of a sid whose exchange seq is `seq`. */
function atSeq(c: WsClient, sid: number, seq: number | string): Msg[] {
  return c.data(sid).filter((m) => m.msg.seq === String(seq));
}

before(async () => {
  tx = await startTestExchange({ ws: { user_log_cap: USER_LOG_CAP, slow_consumer_bytes: SLOW_BYTES }, demo: false });
  alice = await newAccount(tx);
  bob = await newAccount(tx);
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

describe('ws public channels', () => {
  it('ws: orderbook_delta starts with a snapshot, and snapshot plus deltas equal the REST book at every seq', async () => {
    const m = await newMarket(tx);
    await alice.client.placeOrder(order(m, { tick: 30, qty: 5 }));
    const c = await connect(alice);
    await sub(c, { channels: ['oracle'] });
    const sid = await sub(c, { channels: ['orderbook_delta'], market_ids: [m] });
    const first = await c.next((x) => x.sid === sid);
    assert.equal(first.type, 'orderbook_snapshot');
    assert.deepEqual(first.msg.yes, [[30, 5]]);
    const steps: (() => Promise<unknown>)[] = [
      () => alice.client.placeOrder(order(m, { tick: 30, qty: 7 })),
      () => alice.client.placeOrder(order(m, { tick: 41, qty: 2 })),
      () => bob.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: 4 })),
      () => bob.client.placeOrder(order(m, { outcome: 'no', tick: 70, qty: 3 })), // crosses 41 (2) and 30 (1), rests nothing
      () => bob.client.placeOrder(order(m, { outcome: 'no', tick: 69, qty: 20 })), // sweeps 30, rests the rest
      () => alice.client.cancelAll({ market_id: m }),
    ];
    for (const step of steps) {
      await step();
      const rest = await alice.client.orderbook(m, 99);
      await barrier(c);
      const rb = new BookRebuilder(sid, m);
      for (const x of c.data(sid)) rb.apply(x);
      assert.deepEqual(rb.at(Number(rest.as_of_seq)), { yes: rest.yes, no: rest.no }, `book at ${rest.as_of_seq}`);
    }
    // A delta carries the new level total and the signed change.
    const deltas = c.data(sid).filter((x) => x.type === 'orderbook_delta');
    assert.ok(deltas.some((x) => x.msg.delta < 0) && deltas.some((x) => x.msg.delta > 0));
    for (const d of deltas) assertWireShape(DATA_MESSAGES.orderbook_delta, d);
  });

  it('ws: a second subscriber of the same market shares the stream and starts from a snapshot at its current seq', async () => {
    const m = await newMarket(tx);
    const a = await connect(alice);
    const sidA = await sub(a, { channels: ['orderbook_delta'], market_ids: [m] });
    await alice.client.placeOrder(order(m, { tick: 20, qty: 1 }));
    await alice.client.placeOrder(order(m, { tick: 21, qty: 1 }));
    await a.next((x) => x.sid === sidA && x.type === 'orderbook_delta' && x.msg.tick === 21);
    const b = await connect(bob);
    const sidB = await sub(b, { channels: ['orderbook_delta'], market_ids: [m] });
    assert.equal(sidB, sidA, 'one stream per market per gateway thread');
    const snap = await b.next((x) => x.sid === sidB);
    assert.equal(snap.type, 'orderbook_snapshot');
    assert.equal(snap.seq, 2, 'the snapshot carries the seq of the last delta it includes');
    await alice.client.placeOrder(order(m, { tick: 22, qty: 1 }));
    const da = await a.next((x) => x.sid === sidA && x.msg.tick === 22);
    const db = await b.next((x) => x.sid === sidB && x.msg.tick === 22);
    assert.deepEqual(da, db);
    assert.equal(db.seq, 3);
  });

  it('ws: trades arrive on the market stream and the all-markets stream, as on the REST tape', async () => {
    const m = await newMarket(tx);
    const c = await connect(alice);
    const one = await sub(c, { channels: ['trades'], market_ids: [m] });
    const all = await sub(c, { channels: ['trades'] });
    await alice.client.placeOrder(order(m, { tick: 45, qty: 3 }));
    const p = await bob.client.placeOrder(order(m, { outcome: 'no', tick: 56, qty: 2 }));
    const t1 = await c.next((x) => x.sid === one);
    const t2 = await c.next((x) => x.sid === all && x.msg.market_id === m);
    assert.equal(t1.type, 'trade');
    assert.deepEqual(t1.msg, t2.msg);
    assert.equal(t1.msg.trade_seq, p.seq);
    const tape = (await alice.client.trades(m, { limit: 1 })).trades[0]!;
    assert.deepEqual(
      {
        market_id: t1.msg.market_id,
        tick_yes: t1.msg.tick_yes,
        qty: t1.msg.qty,
        taker_side: t1.msg.taker_side,
        taker_outcome: t1.msg.taker_outcome,
        seq: t1.msg.trade_seq,
        ts: t1.msg.ts,
      },
      { market_id: m, tick_yes: tape.tick_yes, qty: 2, taker_side: 'buy', taker_outcome: 'no', seq: tape.seq, ts: tape.ts },
    );
    assert.equal(t1.msg.tick_yes, 45);
    assertSeqs(c.data(one));
  });

  it('ws: oracle ticks arrive as the reference price, equal to the REST read', async () => {
    const c = await connect(alice);
    const sid = await sub(c, { channels: ['oracle'] });
    const r1 = await tx.admin.oracleTick({ source_id: 1, price: '6100000000000' });
    const m1 = await c.next((x) => x.sid === sid && x.msg.seq === r1.seq);
    assert.deepEqual(m1.msg, await alice.client.oraclePrice());
    assert.equal(m1.type, 'oracle');
  });

  it('ws: round transitions arrive as round records, per market and for all markets', async () => {
    const m = await newMarket(tx);
    const c = await connect(alice);
    const one = await sub(c, { channels: ['rounds'], market_ids: [m] });
    const all = await sub(c, { channels: ['rounds'] });
    await tx.admin.freezeRound(m);
    await tx.admin.unfreezeRound(m);
    await tx.admin.freezeRound(m);
    await tx.admin.proposeRound(m, 'yes');
    await tx.admin.settleRound(m);
    const opened = await tx.admin.openRound(m, { strike: '6000000000000', close_ts: String(BigInt(Date.now() + 3_600_000) * 1_000_000n) });
    const last = await c.next((x) => x.sid === one && x.msg.round_number === opened.round_number);
    const msgs = c.data(one);
    assert.deepEqual(msgs.map((x) => x.msg.status), ['frozen', 'trading', 'frozen', 'proposed', 'settled', 'trading']);
    assertSeqs(msgs);
    const settled = msgs[4]!.msg;
    assert.equal(settled.outcome, 'yes');
    const { as_of_seq: _a, ...rest } = await alice.client.round(m);
    const { seq, ...lastRound } = last.msg;
    assert.deepEqual(lastRound, rest);
    assert.match(seq, /^[0-9]+$/);
    await c.next((x) => x.sid === all && x.msg.round_number === opened.round_number);
    assert.deepEqual(c.data(all).filter((x) => x.msg.market_id === m).map((x) => x.msg), msgs.map((x) => x.msg));
  });
});

describe('ws user channel', () => {
  it('ws: user starts with a snapshot of open orders, balance and positions equal to REST', async () => {
    const m = await newMarket(tx);
    const k = await newAccount(tx);
    await k.client.placeOrder(order(m, { tick: 10, qty: 2 }));
    const c = await connect(k);
    const sid = await sub(c, { channels: ['user'] });
    const snap = await c.next((x) => x.sid === sid);
    assert.equal(snap.type, 'user_snapshot');
    assert.equal(snap.seq, 1);
    assert.equal(snap.msg.resumed, false);
    const bal = await k.client.balance();
    assert.deepEqual(snap.msg.balance, { available: bal.available, reserved: bal.reserved });
    const orders = (await k.client.orders({ status: 'resting,partially_filled' } as never)).orders;
    assert.deepEqual(snap.msg.orders.map((o: Msg) => o.order_id), orders.map((o) => o.order_id));
    assert.equal(snap.msg.orders[0].status, 'resting');
    assert.deepEqual(snap.msg.positions, (await k.client.positions()).positions);
    assert.equal(snap.msg.as_of_seq, bal.as_of_seq);
  });

  it('ws: user events are the caller\'s only, with reservation and fee accounting, and end equal to REST', async () => {
    const { fee_schedule_id } = await tx.admin.createFeeSchedule({ taker_bps: 700, maker_bps: 100 });
    const m = await newMarket(tx, { fee_schedule_id });
    const a = await newAccount(tx);
    const b = await newAccount(tx);
    const ca = await connect(a);
    const sa = await sub(ca, { channels: ['user'] });
    const cb = await connect(b);
    const sb = await sub(cb, { channels: ['user'] });
    // A resting buy: its order message shows the reservation, the balance moves cash to reserved.
    const buy = await a.client.placeOrder(order(m, { tick: 40, qty: 10 }));
    const accepted = await ca.next((x) => x.sid === sa && x.type === 'order' && x.msg.order_id === buy.order_id);
    assert.equal(accepted.msg.status, 'resting');
    assert.equal(accepted.msg.fee_per_share > 0, true);
    assert.equal(accepted.msg.reserved_cash, String(10 * (40 + accepted.msg.fee_per_share)));
    const bal1 = await ca.next((x) => x.sid === sa && x.type === 'balance' && x.msg.seq === buy.seq);
    assert.equal(bal1.msg.cause, 'order_accepted');
    assert.equal(bal1.msg.reserved, accepted.msg.reserved_cash);
    // b sells into it... b holds no shares, so b buys NO at 60: a mint. Each side sees its own fill only.
    const take = await b.client.placeOrder(order(m, { outcome: 'no', tick: 60, qty: 4 }));
    const fa = await ca.next((x) => x.sid === sa && x.type === 'fill');
    const fb = await cb.next((x) => x.sid === sb && x.type === 'fill');
    assert.deepEqual([fa.msg.role, fa.msg.order_id, fa.msg.qty, fa.msg.path], ['maker', buy.order_id, 4, 'mint']);
    assert.deepEqual([fb.msg.role, fb.msg.order_id], ['taker', take.order_id]);
    const restFillA = (await a.client.fills({ limit: 1 })).fills[0]!;
    const { release: _r, ...fillA } = fa.msg;
    assert.deepEqual(fillA, restFillA);
    assert.ok(Number(fb.msg.fee) > Number(fa.msg.fee) && Number(fa.msg.fee) > 0, 'taker 700 bps, maker 100 bps');
    await ca.next((x) => x.sid === sa && x.type === 'balance' && x.msg.seq === take.seq);
    await cb.next((x) => x.sid === sb && x.type === 'balance' && x.msg.seq === take.seq);
    // Neither stream names the other's orders.
    for (const x of ca.data(sa)) assert.notEqual(x.msg.order_id, take.order_id, JSON.stringify(x));
    for (const x of cb.data(sb)) assert.notEqual(x.msg.order_id, buy.order_id, JSON.stringify(x));
    // The last balance and positions of the command equal REST.
    const balA = atSeq(ca, sa, take.seq).filter((x) => x.type === 'balance').pop()!;
    const restA = await a.client.balance();
    assert.deepEqual([balA.msg.available, balA.msg.reserved], [restA.available, restA.reserved]);
    assert.equal(balA.msg.cause, 'filled');
    const posA = atSeq(ca, sa, take.seq).filter((x) => x.type === 'position');
    assert.deepEqual(posA.map((x) => [x.msg.market_id, x.msg.outcome, x.msg.free, x.msg.reserved_for_sale]), [[m, 'yes', 4, 0]]);
    const ordA = atSeq(ca, sa, take.seq).filter((x) => x.type === 'order');
    assert.deepEqual(
      ordA.map((x) => [x.msg.order_id, x.msg.status, x.msg.remaining_qty, x.msg.filled_qty]),
      [[buy.order_id, 'partially_filled', 6, 4]],
    );
    // Other accounts' activity sends a nothing.
    const before = ca.data(sa).length;
    await bob.client.placeOrder(order(m, { tick: 5, qty: 1 }));
    await bob.client.cancelAll({ market_id: m });
    await sleep(50);
    assert.equal(ca.data(sa).length, before);
    assertSeqs(ca.data(sa));
    assertSeqs(cb.data(sb));
  });

  it('ws: mass cancel and the dead-man send CANCELED order events', async () => {
    const m = await newMarket(tx);
    const k = await newAccount(tx);
    const c = await connect(k);
    const sid = await sub(c, { channels: ['user'] });
    const ids = [];
    for (const t of [11, 12, 13]) ids.push((await k.client.placeOrder(order(m, { tick: t, qty: 1 }))).order_id);
    const ack = await k.client.cancelAll({ market_id: m });
    for (const id of ids) {
      const x = await c.next((y) => y.sid === sid && y.type === 'order' && y.msg.order_id === id && y.msg.status === 'canceled');
      assert.equal(x.msg.reason, 'mass_canceled');
      assert.equal(x.msg.seq, ack.seq);
    }
    const d1 = (await k.client.placeOrder(order(m, { tick: 14, qty: 1 }))).order_id;
    const d2 = (await k.client.placeOrder(order(m, { tick: 15, qty: 2 }))).order_id;
    await k.client.armDeadman(1000);
    for (const id of [d1, d2]) {
      const x = await c.next((y) => y.sid === sid && y.type === 'order' && y.msg.order_id === id && y.msg.status === 'canceled', 5000);
      assert.equal(x.msg.reason, 'deadman');
    }
    const bal = await c.next((y) => y.sid === sid && y.type === 'balance' && y.msg.cause === 'order_canceled');
    assert.equal(bal.msg.reserved, '0');
    assertSeqs(c.data(sid));
  });

  it('ws: resume_from_seq replays the retained events without gaps or duplicates, then goes live', async () => {
    const m = await newMarket(tx);
    const k = await newAccount(tx);
    const observer = await connect(k);
    const so = await sub(observer, { channels: ['user'] });
    const c = await connect(k);
    const sc = await sub(c, { channels: ['user'] });
    const p1 = await k.client.placeOrder(order(m, { tick: 20, qty: 1 }));
    await c.next((x) => x.sid === sc && x.type === 'balance' && x.msg.seq === p1.seq);
    const seen = Math.max(...c.data(sc).filter((x) => x.type !== 'user_snapshot').map((x) => Number(x.msg.seq)));
    await c.close();
    // While away: three commands, about eight messages (under the retained cap).
    const p2 = await k.client.placeOrder(order(m, { tick: 21, qty: 1 }));
    await k.client.placeOrder(order(m, { tick: 22, qty: 1 }));
    const ack = await k.client.cancelAll({ market_id: m });
    await observer.next((x) => x.sid === so && x.type === 'balance' && x.msg.seq === ack.seq);
    const c2 = await connect(k);
    const r = await c2.call('subscribe', { channels: ['user'], resume_from_seq: String(seen) });
    assert.equal(r.msg.resumed, true);
    const missed = observer.data(so).filter((x) => x.type !== 'user_snapshot' && Number(x.msg.seq) > seen);
    assert.ok(missed.length >= 6 && Number(missed[0].msg.seq) === Number(p2.seq));
    const replayed: Msg[] = [];
    for (let i = 0; i < missed.length; i++) replayed.push(await c2.next((x) => x.sid === r.msg.sid));
    assert.deepEqual(replayed.map((x) => [x.type, x.msg]), missed.map((x) => [x.type, x.msg]));
    assertSeqs(replayed);
    // Then live, continuing the subscription's own seq.
    const p5 = await k.client.placeOrder(order(m, { tick: 23, qty: 1 }));
    const live = await c2.next((x) => x.sid === r.msg.sid && x.msg.seq === p5.seq);
    assert.equal(live.seq, missed.length + 1);
  });

  it('ws: a resume_from_seq older than the retained log gets a fresh snapshot marked resumed false', async () => {
    const m = await newMarket(tx);
    const k = await newAccount(tx);
    const c = await connect(k);
    await sub(c, { channels: ['user'] });
    const p1 = await k.client.placeOrder(order(m, { tick: 20, qty: 1 }));
    await c.next((x) => x.type === 'balance' && x.msg.seq === p1.seq);
    await c.close();
    // More messages than the log keeps (each placement makes an order and a balance message).
    for (let i = 0; i < USER_LOG_CAP; i++) await k.client.placeOrder(order(m, { tick: 30, qty: 1 }));
    const c2 = await connect(k);
    const r = await c2.call('subscribe', { channels: ['user'], resume_from_seq: p1.seq });
    assert.equal(r.msg.resumed, false);
    const snap = await c2.next((x) => x.sid === r.msg.sid);
    assert.equal(snap.type, 'user_snapshot');
    assert.equal(snap.msg.resumed, false);
    assert.equal(snap.msg.orders.length, USER_LOG_CAP + 1);
    // An account this thread never logged cannot resume either.
    const fresh = await newAccount(tx);
    const c3 = await connect(fresh);
    const r3 = await c3.call('subscribe', { channels: ['user'], resume_from_seq: '1' });
    assert.equal(r3.msg.resumed, false);
    assert.equal((await c3.next((x) => x.sid === r3.msg.sid)).type, 'user_snapshot');
  });

  it('ws: a client that stops reading is closed with 4008 and a reason, not skipped', async () => {
    const m = await newMarket(tx);
    const k = await newAccount(tx, { deposit: '1000000000' });
    // 1,000 open orders make a user snapshot of about 400 KB; 150 of them (60 MB) are more than the kernel's socket
    // buffers can ever hold here (tcp_rmem max 32 MB + tcp_wmem max 4 MB), so the rest must queue in uWS, where the lane sees it.
    await tx.admin.setKeyTier(k.keyId, { tier: 'custom', read: BIG, write: BIG }); // 150 snapshots of 10 read tokens
    const keys = [k];
    for (let i = 0; i < 9; i++) keys.push(await newKey(tx, k.accountId));
    await Promise.all(keys.map(async (key, j) => {
      for (let b = 0; b < 5; b++) {
        const base = (j * 5 + b) * 20;
        await key.client.placeBatch(
          Array.from({ length: 20 }, (_x, i) =>
            order(m, { tick: 1 + ((base + i) % 60), qty: 1, client_order_id: String(1000 + base + i) }),
          ),
        );
      }
    }));
    const c = await connect(k);
    const sid = await sub(c, { channels: ['user'] });
    await c.next((x) => x.sid === sid && x.type === 'user_snapshot');
    c.ws.pause();
    for (let i = 0; i < 150; i++) c.send('update_subscription', { sid, action: 'get_snapshot' });
    // Long enough for the gateway to render about 90 of them (measured: under 10 ms each).
    await sleep(1500);
    c.ws.resume();
    const closed = await c.waitClose(10_000);
    assert.equal(closed.code, 4008);
    assert.match(closed.reason, /^slow consumer/);
    // What was sent before the close arrived whole and in order.
    assertSeqs(c.data(sid));
  });
});

describe('ws message shapes', () => {
  it('ws: every kind of message the lane sends is seen here and matches its declaration in src/wire/ws.ts', async () => {
    const m = await newMarket(tx);
    const k = await newAccount(tx);
    const c = await connect(k);
    await sub(c, { channels: ['oracle'] });
    const book = await sub(c, { channels: ['orderbook_delta'], market_ids: [m] });
    const trades = await sub(c, { channels: ['trades'], market_ids: [m] });
    await sub(c, { channels: ['rounds'], market_ids: [m] });
    await sub(c, { channels: ['user'] });
    // A resting order of k, taken by bob: order, balance, orderbook_delta, trade, fill, position.
    await k.client.placeOrder(order(m, { tick: 45, qty: 3 }));
    await bob.client.placeOrder(order(m, { outcome: 'no', tick: 56, qty: 2 }));
    await c.next((x) => x.type === 'position');
    await tx.admin.freezeRound(m);
    await tx.admin.unfreezeRound(m);
    await c.next((x) => x.type === 'round' && x.msg.status === 'trading');
    await barrier(c);
    // Replies: ok (get_snapshot, unsubscribe), error, order_result (a placement and a refusal).
    assert.equal((await c.call('update_subscription', { sid: book, action: 'get_snapshot' })).type, 'ok');
    assert.equal((await c.call('unsubscribe', { sids: [trades] })).type, 'ok');
    assert.equal((await c.call('no_such_command')).type, 'error');
    assert.equal((await c.call('place_order', order(m, { tick: 20, qty: 1 }))).status, 201);
    assert.equal((await c.call('place_order', { market_id: m })).status, 400);
    await c.call('start_binary', { layout_fingerprint: '0x00000000' });
    await barrier(c);
    const seen = new Set(c.all.map((x) => x.type as string));
    assert.deepEqual(Object.keys(WS_MESSAGES).filter((t) => !seen.has(t)), [], 'message kinds not exercised');
    assert.deepEqual(c.shapeProblems, []);
  });
});
