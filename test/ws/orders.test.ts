// WebSocket JSON order entry, black box with the `ws` package as the client:
// every command and its REST twin's body, every error path (schema, scope,
// bucket, core rejects, shedding, the in-flight cap, timeouts), answers out
// of order and matched by id, idempotency by client_order_id, the user
// channel on the same connection, and rate tiers (set by the operator, shown
// by GET /v1/account/limits). One write bucket across lanes and threads:
// buckets.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertEnvelope, newAccount, newKey, newMarket, order, sleep, type Key } from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';
import * as R from '../../src/wire/responses.js';
import { KeyTierResult } from '../../src/wire/control_plane.js';
import { REPLIES } from '../../src/wire/ws.js';
import { WsClient, type Msg } from './ws_client.js';

const BUDGET_MS = 800;
let tx: TestExchange;
let alice: Key;
let bob: Key;
let market: number;
let market2: number;
const open: WsClient[] = [];

async function connect(k: Key): Promise<WsClient> {
  const c = await WsClient.connect(tx, k);
  open.push(c);
  return c;
}

/** Sends an order command and returns its order_result. */
async function call(c: WsClient, cmd: string, params: unknown): Promise<Msg> {
  const id = c.send(cmd, params as Record<string, unknown>);
  const r = await c.reply(id, 5000);
  assertWireShape(REPLIES.order_result, r);
  return r;
}

async function expectError(
  c: WsClient,
  cmd: string,
  params: unknown,
  status: number,
  code: string,
  o: { num?: number | null; origin?: string } = {},
): Promise<Msg> {
  const r = await call(c, cmd, params);
  assert.equal(r.status, status, JSON.stringify(r));
  assertEnvelope(r.msg, code, o);
  return r;
}

before(async () => {
  tx = await startTestExchange({ demo: false, response_budget_ms: BUDGET_MS, ws_max_in_flight: 4 });
  alice = await newAccount(tx);
  bob = await newAccount(tx);
  market = await newMarket(tx);
  market2 = await newMarket(tx);
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

describe('ws order entry (JSON)', () => {
  it('ws orders: place_order answers the REST placement (201) and the user channel on the same connection sees it', async () => {
    const c = await connect(alice);
    const sub = await c.call('subscribe', { channels: ['user'] });
    assert.equal(sub.type, 'subscribed');
    await c.next((m) => m.type === 'user_snapshot');
    const r = await call(c, 'place_order', order(market, { tick: 30, qty: 3, client_order_id: '7001' }));
    assert.equal(r.status, 201);
    assertWireShape(R.Placement, r.msg);
    assert.equal(r.msg.status, 'resting');
    assert.equal(r.msg.client_order_id, '7001');
    assert.equal(r.msg.resting_qty, 3);
    const rest = await alice.client.orders({ client_order_id: '7001' });
    assert.equal(rest.orders[0]!.order_id, r.msg.order_id);
    const ev = await c.next((m) => m.type === 'order' && m.msg.order_id === r.msg.order_id);
    assert.equal(ev.msg.status, 'resting');
    assert.equal(ev.msg.seq, r.msg.seq);
    // The same placement over REST answers the same body shape with the same fields.
    const viaRest = await alice.client.placeOrder(order(market, { tick: 30, qty: 3, client_order_id: '7002' }));
    assert.deepEqual(Object.keys(viaRest).sort(), Object.keys(r.msg).sort());
  });

  it('ws orders: batch_place_orders, cancel_order, batch_cancel_orders, decrease_order and cancel_all answer their REST ' +
    'bodies', async () => {
    const c = await connect(alice);
    const b = await call(c, 'batch_place_orders', {
      orders: [order(market, { tick: 20 }), order(market, { tick: 21, qty: 5 }), order(999, { tick: 5 })],
    });
    assert.equal(b.status, 201);
    assert.equal(b.msg.results.length, 3, 'one result per order, index-aligned');
    assert.equal(b.msg.results[0].status, 'resting');
    const [o1, o2] = [b.msg.results[0].order_id as string, b.msg.results[1].order_id as string];
    assertEnvelope(b.msg.results[2], 'unknown_market', { num: 265, origin: 'core' });
    assertWireShape(R.BatchPlaceResult, b.msg);
    const d = await call(c, 'decrease_order', { order_id: o2, new_qty: 2 });
    assert.deepEqual([d.status, d.msg.status, d.msg.new_qty], [200, 'decreased', 2]);
    assertWireShape(R.DecreaseResult, d.msg);
    const one = await call(c, 'cancel_order', { order_id: o1 });
    assert.deepEqual([one.status, one.msg.status, one.msg.canceled_qty], [200, 'canceled', 1]);
    assertWireShape(R.CancelResult, one.msg);
    const again = await call(c, 'cancel_order', { order_id: o1 });
    assert.equal(again.status, 404);
    assertEnvelope(again.msg, 'unknown_order', { num: 260, origin: 'core' });
    const o3 = (await call(c, 'place_order', order(market2, { tick: 22, group_id: 9 }))).msg.order_id as string;
    const o4 = (await call(c, 'place_order', order(market2, { tick: 23, group_id: 8 }))).msg.order_id as string;
    const bc = await call(c, 'batch_cancel_orders', { order_ids: [o2, '999999'] });
    assert.equal(bc.status, 200);
    assert.equal(bc.msg.results[0].status, 'canceled');
    assertEnvelope(bc.msg.results[1], 'unknown_order', { num: 260, origin: 'core' });
    assertWireShape(R.BatchCancelResult, bc.msg);
    // cancel_all with REST's filters: only group 9 of market2.
    const ca = await call(c, 'cancel_all', { market_id: market2, group_id: 9 });
    assert.equal(ca.status, 202);
    assertWireShape(R.SequencedAck, ca.msg);
    const live = await alice.client.orders({ status: ['resting'], market_id: market2 });
    assert.ok(
      live.orders.some((x) => x.order_id === o4),
      'group 8 stays',
    );
    assert.ok(!live.orders.some((x) => x.order_id === o3), 'group 9 is canceled');
    const all = await call(c, 'cancel_all', {});
    assert.equal(all.status, 202);
    assert.equal((await alice.client.orders({ status: ['resting'] })).orders.length, 0);
  });

  it('ws orders: the closed schemas answer 400 unknown_field and invalid_field as REST does', async () => {
    const c = await connect(alice);
    let r = await expectError(c, 'place_order', { ...order(market), colour: 'red' }, 400, 'unknown_field');
    assert.equal(r.msg.error.details.field, 'colour');
    r = await expectError(c, 'place_order', order(market, { tick: 100 }), 400, 'invalid_field');
    assert.equal(r.msg.error.details.field, 'tick');
    r = await expectError(c, 'place_order', order(market, { tif: 'ioc', post_only: true }), 400, 'invalid_field');
    assert.equal(r.msg.error.details.field, 'post_only');
    await expectError(c, 'place_order', 'not an object', 400, 'invalid_field');
    await expectError(c, 'batch_place_orders', { orders: Array.from({ length: 21 }, () => order(market)) }, 400, 'invalid_field');
    await expectError(c, 'batch_place_orders', { orders: [order(market), order(market, { tick: 0 })] }, 400, 'invalid_field');
    await expectError(c, 'cancel_order', { order_id: 12 }, 400, 'invalid_field');
    await expectError(c, 'cancel_order', { order_id: '1', extra: 1 }, 400, 'unknown_field');
    await expectError(c, 'decrease_order', { order_id: '1' }, 400, 'invalid_field');
    await expectError(c, 'cancel_all', { market_id: -1 }, 400, 'invalid_field');
    await expectError(c, 'batch_cancel_orders', { order_ids: [] }, 400, 'invalid_field');
    // A REST path parameter out of range: an id above 2^53 cannot exist.
    await expectError(c, 'decrease_order', { order_id: '18446744073709551615', new_qty: 1 }, 404, 'unknown_order', {
      num: 260,
      origin: 'core',
    });
  });

  it('ws orders: core rejects carry num and origin core; a reused client_order_id answers 409 with the first order', async () => {
    const poor = await newAccount(tx, { deposit: '10' });
    const c = await connect(poor);
    await expectError(c, 'place_order', order(market, { tick: 50, qty: 10 }), 422, 'insufficient_balance', { num: 261, origin: 'core' });
    await expectError(c, 'place_order', order(market, { side: 'sell', tick: 50, qty: 10 }), 422, 'insufficient_position', {
      num: 262,
      origin: 'core',
    });
    await expectError(c, 'place_order', order(999, { tick: 5 }), 404, 'unknown_market', { num: 265, origin: 'core' });
    const a = await connect(alice);
    const first = await call(a, 'place_order', order(market, { tick: 11, client_order_id: '424242' }));
    assert.equal(first.status, 201);
    const dup = await expectError(
      a,
      'place_order',
      order(market, { tick: 12, client_order_id: '424242' }),
      409,
      'duplicate_client_order_id',
      { num: 266, origin: 'core' },
    );
    assert.equal(dup.msg.error.details.order_id, first.msg.order_id);
    // The same id over REST is refused the same way: one idempotency key across lanes.
    await assert.rejects(alice.client.placeOrder(order(market, { tick: 12, client_order_id: '424242' })), /duplicate_client_order_id/);
  });

  it('ws orders: a key without the trade scope gets 403 missing_scope, after the bucket', async () => {
    const reader = await newKey(tx, alice.accountId, ['read']);
    const c = await connect(reader);
    await expectError(c, 'place_order', order(market), 403, 'missing_scope');
    // Order of checks: scope before the schema, as REST (a bad body still answers 403).
    await expectError(c, 'place_order', { nope: 1 }, 403, 'missing_scope');
  });

  it('ws orders: answers come out of order and are matched by id', async () => {
    const c = await connect(alice);
    tx.ex.pipeline.control.setPaused(true);
    const held = c.send('place_order', order(market, { tick: 9 }), 100);
    const quick = c.send('place_order', { ...order(market), bad: 1 }, 101);
    const q = await c.reply(quick);
    assert.equal(q.status, 400);
    const replies = c.all.filter((m) => m.id === 100);
    assert.equal(replies.length, 0, 'the held placement is not answered while the engine is paused');
    tx.ex.pipeline.control.setPaused(false);
    const h = await c.reply(held, 5000);
    assert.equal(h.status, 201);
    assert.ok(c.all.indexOf(q) < c.all.indexOf(h), 'id 101 was answered before id 100');
  });

  it('ws orders: more than max_in_flight commands held on one connection are shed (503), never dropped', async () => {
    const c = await connect(bob);
    tx.ex.pipeline.control.setPaused(true);
    const ids = [1, 2, 3, 4].map((i) =>
      c.send('place_order', order(market, { tick: 3, qty: 1, client_order_id: String(9100 + i) }), 200 + i),
    );
    // A batch of two would take the connection over 4.
    const over = await call(c, 'batch_place_orders', { orders: [order(market, { tick: 3 }), order(market, { tick: 3 })] });
    assert.equal(over.status, 503);
    assertEnvelope(over.msg, 'shed');
    assert.equal(over.msg.error.details.max_in_flight, 4);
    const single = await call(c, 'cancel_order', { order_id: '1' });
    assert.equal(single.status, 503);
    tx.ex.pipeline.control.setPaused(false);
    for (const id of ids) assert.equal((await c.reply(id, 5000)).status, 201);
    // Answered: room again.
    assert.equal((await call(c, 'cancel_all', {})).status, 202);
  });

  it('ws orders: no outcome within the response budget answers 504 sequencing_timeout; lagging sheds placements (503)', async () => {
    const c = await connect(bob);
    tx.ex.pipeline.control.setPaused(true);
    const id = c.send('place_order', order(market, { tick: 4, client_order_id: '9201' }));
    await sleep(BUDGET_MS / 2 + 100);
    const shed = await call(c, 'place_order', order(market, { tick: 4 }));
    assert.equal(shed.status, 503);
    assertEnvelope(shed.msg, 'shed');
    const r = await c.reply(id, BUDGET_MS + 2000);
    assert.equal(r.status, 504);
    assertEnvelope(r.msg, 'sequencing_timeout');
    tx.ex.pipeline.control.setPaused(false);
    // It may still land: REST tells whether it did.
    await sleep(200);
    const landed = await bob.client.orders({ client_order_id: '9201' });
    assert.equal(landed.orders.length, 1);
  });

  it('ws orders: order commands pay the write bucket, not the read bucket', async () => {
    const k = await newAccount(tx);
    await tx.admin.setKeyTier(k.keyId, {
      tier: 'custom',
      read: { sustained_rate_per_s: 1, burst: 2 },
      write: { sustained_rate_per_s: 1, burst: 5 },
    });
    const c = await connect(k); // the upgrade takes one read token
    for (let i = 0; i < 5; i++) assert.notEqual((await call(c, 'cancel_order', { order_id: String(1000 + i) })).status, 429);
    const r = await expectError(c, 'cancel_order', { order_id: '1' }, 429, 'rate_limited');
    assert.match(r.msg.error.details.retry_after_ms, /^[0-9]+$/);
    // The read bucket still has its token.
    assert.equal((await c.call('subscribe', { channels: ['oracle'] })).type, 'subscribed');
  });
});

it('ws orders: the body\'s transport hygiene comes before its schema, as on REST: prototype keys and nesting deeper than 8 ' +
  'are invalid_json', async () => {
  const c = await connect(alice);
  let r = await expectError(c, 'place_order', { ...order(market), constructor: 1 }, 400, 'invalid_json');
  assert.match(r.msg.error.message, /forbidden key constructor/);
  let deep: unknown = 1;
  for (let i = 0; i < 10; i++) deep = { d: deep };
  r = await expectError(c, 'batch_place_orders', { orders: [order(market)], deep }, 400, 'invalid_json');
  assert.match(r.msg.error.message, /nested deeper than 8/);
  const id = 90_001;
  c.sendRaw(`{"id":${id},"cmd":"place_order","params":{"__proto__":{"qty":5},"market_id":${market}}}`);
  r = await c.reply(id, 5000);
  assert.equal(r.status, 400);
  assertEnvelope(r.msg, 'invalid_json');
});

describe('rate tiers', () => {
  it('tiers: the operator sets a key\'s tier; GET /v1/account/limits and the key lists show it', async () => {
    const k = await newAccount(tx);
    const before0 = await k.client.limits();
    assert.equal(before0.tier, 'default');
    assert.deepEqual([before0.write, before0.read], [{ sustained_rate_per_s: 50, burst: 100 }, { sustained_rate_per_s: 100, burst: 200 }]);
    const mm = await tx.admin.setKeyTier(k.keyId, { tier: 'market_maker' });
    assert.equal(mm.tier, 'market_maker');
    assertWireShape(KeyTierResult, mm);
    const l = await k.client.limits();
    assert.equal(l.tier, 'market_maker');
    assert.deepEqual(l.write, mm.write);
    assert.ok(l.write.sustained_rate_per_s > 50);
    const custom = await tx.admin.setKeyTier(k.keyId, {
      tier: 'custom',
      read: { sustained_rate_per_s: 7, burst: 8 },
      write: { sustained_rate_per_s: 9, burst: 10 },
    });
    assert.deepEqual([custom.read, custom.write], [{ sustained_rate_per_s: 7, burst: 8 }, { sustained_rate_per_s: 9, burst: 10 }]);
    assert.equal((await k.client.limits()).tier, 'custom');
    assert.equal((await tx.admin.account(k.accountId)).keys.find((x) => x.key_id === k.keyId)!.tier, 'custom');
    assert.equal((await k.keys.listKeys()).keys.find((x) => x.key_id === k.keyId)!.tier, 'custom');
    await tx.admin.setKeyTier(k.keyId, { tier: 'default' });
    assert.equal((await k.client.limits()).tier, 'default');
  });

  it('tiers: bad tier requests are refused (figures with a named tier, custom without, unknown or revoked key)', async () => {
    const k = await newAccount(tx);
    const bad = async (key: number, body: unknown, status: number, code: string): Promise<void> => {
      const r = await fetch(`${tx.adminBase}/admin/keys/${key}/tier`, {
        method: 'POST',
        headers: { authorization: `Bearer ${tx.ex.admin_token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      assert.equal(r.status, status);
      assert.equal(((await r.json()) as { error: { code: string } }).error.code, code);
    };
    await bad(k.keyId, { tier: 'market_maker', read: { sustained_rate_per_s: 1, burst: 1 } }, 400, 'invalid_field');
    await bad(k.keyId, { tier: 'custom', read: { sustained_rate_per_s: 1, burst: 1 } }, 400, 'invalid_field');
    await bad(
      k.keyId,
      { tier: 'custom', read: { sustained_rate_per_s: 0, burst: 1 }, write: { sustained_rate_per_s: 1, burst: 1 } },
      400,
      'invalid_field',
    );
    await bad(k.keyId, { tier: 'gold' }, 400, 'invalid_field');
    await bad(999_999, { tier: 'default' }, 404, 'unknown_key');
    await k.keys.revokeKey(k.keyId);
    await bad(k.keyId, { tier: 'default' }, 404, 'unknown_key');
  });
});
