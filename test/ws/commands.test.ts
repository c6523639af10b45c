// WebSocket lane, black box over a real exchange with the `ws` package as the
// client: the signed upgrade (and every way it is refused before a socket
// opens), each command with its replies, every error code, the per-key caps,
// the read bucket, and revocation closing a key's sockets.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertEnvelope, eventually, newAccount, newKey, newMarket, order, signHeaders, type Key } from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';
import { REPLIES } from '../../src/wire/ws.js';
import { WsClient, type UpgradeRefusal } from './ws_client.js';

const CAPS = { max_connections_per_key: 3, max_subscriptions_per_key: 6 };

let tx: TestExchange;
let alice: Key;
let market: number;
let market2: number;
const open: WsClient[] = [];

async function connect(k: Key, o: Parameters<typeof WsClient.connect>[2] = {}): Promise<WsClient> {
  const c = await WsClient.connect(tx, k, o);
  open.push(c);
  return c;
}

async function refused(k: { keyId: number; secret: string }, o: Parameters<typeof WsClient.connect>[2] = {}): Promise<UpgradeRefusal> {
  try {
    const c = await WsClient.connect(tx, k, o);
    await c.close();
  } catch (e) {
    if (e instanceof Error) throw e;
    return e as UpgradeRefusal;
  }
  assert.fail('the upgrade was accepted');
}

before(async () => {
  tx = await startTestExchange({ ws: CAPS, demo: false });
  alice = await newAccount(tx);
  market = await newMarket(tx);
  market2 = await newMarket(tx);
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

describe('ws upgrade', () => {
  it('ws: a signed upgrade opens a socket', async () => {
    const c = await connect(alice);
    const r = await c.call('subscribe', { channels: ['oracle'] });
    assert.equal(r.type, 'subscribed');
    await c.close();
  });

  it('ws: an unsigned upgrade is refused 401 before the socket opens', async () => {
    const r = await refused(alice, { headers: null });
    assert.equal(r.status, 401);
    assertEnvelope(r.body, 'unauthorized');
  });

  it('ws: a bad signature, a wrong signed path, a stale timestamp and an unknown key are 401', async () => {
    assert.equal((await refused(alice, { headers: { 'DX-ACCESS-SIGNATURE': 'AAAA' } })).status, 401);
    assert.equal((await refused(alice, { signTarget: '/v1/ws2' })).status, 401);
    assert.equal((await refused(alice, { ts: Date.now() - 6000 })).status, 401);
    assert.equal((await refused(alice, { ts: Date.now() + 6000 })).status, 401);
    assert.equal((await refused({ keyId: 999_999, secret: alice.secret })).status, 401);
    const r = await refused({ keyId: alice.keyId, secret: Buffer.alloc(32, 7).toString('base64') });
    assert.equal(r.status, 401);
    assertEnvelope(r.body, 'unauthorized');
  });

  it('ws: a timestamp inside the window is accepted', async () => {
    const c = await connect(alice, { ts: Date.now() - 4000 });
    await c.close();
  });

  it('ws: a key without scope read is refused 403', async () => {
    const k = await newKey(tx, alice.accountId, ['trade']);
    const r = await refused(k);
    assert.equal(r.status, 403);
    assertEnvelope(r.body, 'missing_scope');
  });

  it('ws: a revoked key is refused 401', async () => {
    const k = await newKey(tx, alice.accountId);
    await k.keys.revokeKey(k.keyId);
    assert.equal((await refused(k)).status, 401);
  });

  it('ws: connections per key are capped (429) and a closed one frees its place', async () => {
    const k = await newKey(tx, alice.accountId);
    const cs = [await connect(k), await connect(k), await connect(k)];
    const r = await refused(k);
    assert.equal(r.status, 429);
    assertEnvelope(r.body, 'rate_limited');
    await cs[0]!.close();
    // The server's close handler runs when the close frame arrives; retry briefly.
    let again: WsClient | null = null;
    for (let i = 0; i < 50 && again === null; i++) {
      again = await WsClient.connect(tx, k).catch(() => null); // refused until the server has seen the close: tried again
      if (again === null) await new Promise((res) => setTimeout(res, 20));
    }
    assert.ok(again !== null, 'a connection slot came back after a close');
    open.push(again);
    await Promise.all([again.close(), cs[1]!.close(), cs[2]!.close()]);
  });
});

/** A browser-style sign-in target: `/v1/ws?key=&ts=&sig=`, the signature over `ts\nGET\n/v1/ws\n`. */
function queryTarget(
  k: { keyId: number; secret: string }, o: { ts?: number; signTarget?: string; encode?: boolean; extra?: string } = {},
): string {
  const h = signHeaders(k, 'GET', o.signTarget ?? '/v1/ws', '', o.ts ?? Date.now());
  const sig = o.encode === false ? h['DX-ACCESS-SIGNATURE'] : encodeURIComponent(h['DX-ACCESS-SIGNATURE']!);
  return `/v1/ws?key=${h['DX-ACCESS-KEY']}&ts=${h['DX-ACCESS-TIMESTAMP']}&sig=${sig}${o.extra ?? ''}`;
}

describe('ws browser sign-in (credentials in the query)', () => {
  it('ws: ?key=&ts=&sig= signed over ts\\nGET\\n/v1/ws\\n opens a socket that serves the key\'s account', async () => {
    const c = await connect(alice, { target: queryTarget(alice), headers: null });
    const r = await c.call('subscribe', { channels: ['user'] });
    assert.equal(r.type, 'subscribed');
    const snap = await c.next((m) => m.type === 'user_snapshot');
    assert.equal(snap.msg.balance.available, (await alice.client.balance()).available);
    await c.close();
    // The signature unencoded (base64 + / = as is) is read the same way.
    await (await connect(alice, { target: queryTarget(alice, { encode: false }), headers: null })).close();
  });

  it('ws: a query signature opens one connection only (replay refused 401)', async () => {
    const target = queryTarget(alice);
    await (await connect(alice, { target, headers: null })).close();
    const r = await refused(alice, { target, headers: null });
    assert.equal(r.status, 401);
    assertEnvelope(r.body, 'unauthorized');
  });

  it('ws: a URL sign-in\'s signature is no header credential afterwards (401); a header-signed upgrade may still repeat', async () => {
    // Headers sign ts\nGET\n/v1/ws\n too: a signature read from a logged URL would otherwise open any number of sockets.
    const ts = Date.now();
    await (await connect(alice, { target: queryTarget(alice, { ts }), headers: null })).close();
    const r = await refused(alice, { ts });
    assert.equal(r.status, 401);
    assertEnvelope(r.body, 'unauthorized');
    await (await connect(alice, { ts: ts + 1 })).close();
    await (await connect(alice, { ts: ts + 1 })).close();
  });

  it('ws: a bad query signature, stale or future ts, unknown key, extra, missing or repeated parameter is 401', async () => {
    const bad = async (target: string): Promise<void> => {
      const r = await refused(alice, { target, headers: null });
      assert.equal(r.status, 401, target);
      assertEnvelope(r.body, 'unauthorized');
    };
    await bad(queryTarget({ keyId: alice.keyId, secret: Buffer.alloc(32, 7).toString('base64') }));
    await bad(queryTarget(alice, { signTarget: '/v1/ws?x' }));
    await bad(queryTarget(alice, { ts: Date.now() - 6000 }));
    await bad(queryTarget(alice, { ts: Date.now() + 6000 }));
    await bad(queryTarget({ keyId: 999_999, secret: alice.secret }));
    await bad(queryTarget(alice, { extra: '&limit=1' }));
    await bad(queryTarget(alice, { extra: '&ts=1' }));
    await bad(queryTarget(alice).replace(/&sig=[^&]*/, ''));
    await bad(queryTarget(alice).replace(/sig=/, 'sig=%E0%A4%A'));
  });

  it('ws: query sign-in keeps the scope check (403) and the per-key connection cap (429)', async () => {
    const trade = await newKey(tx, alice.accountId, ['trade']);
    const r = await refused(trade, { target: queryTarget(trade), headers: null });
    assert.equal(r.status, 403);
    assertEnvelope(r.body, 'missing_scope');
    const k = await newKey(tx, alice.accountId);
    const cs: WsClient[] = [];
    // Distinct timestamps: two sign-ins in one millisecond would sign identically (and the second be a replay).
    const t0 = Date.now();
    for (let i = 0; i < CAPS.max_connections_per_key; i++) {
      cs.push(await connect(k, { target: queryTarget(k, { ts: t0 - 10 - i }), headers: null }));
    }
    const capped = await refused(k, { target: queryTarget(k, { ts: t0 }), headers: null });
    assert.equal(capped.status, 429);
    assertEnvelope(capped.body, 'rate_limited');
    await Promise.all(cs.map((c) => c.close()));
  });
});

describe('ws commands', () => {
  it('ws: subscribe answers one subscribed reply per channel and market, each with its own sid', async () => {
    const c = await connect(alice);
    const id = c.send('subscribe', { channels: ['trades', 'oracle'], market_ids: [market, market2] });
    const replies = [await c.reply(id), await c.reply(id), await c.reply(id)];
    assert.deepEqual(replies.map((r) => r.type), ['subscribed', 'subscribed', 'subscribed']);
    assert.deepEqual(
      replies.map((r) => [r.msg.channel, r.msg.market_id]),
      [
        ['trades', market],
        ['trades', market2],
        ['oracle', undefined],
      ],
    );
    const sids = replies.map((r) => r.msg.sid);
    assert.equal(new Set(sids).size, 3);
    for (const s of sids) assert.ok(Number.isInteger(s) && s > 0);
    // Subscribing again to the same stream answers its sid, marked existing.
    const again = await c.call('subscribe', { channels: ['oracle'] });
    assert.deepEqual(again.msg, { channel: 'oracle', sid: sids[2], existing: true });
    await c.close();
  });

  it('ws: unsubscribe ends subscriptions and answers ok; an unknown sid is code 5', async () => {
    const c = await connect(alice);
    const a = await c.call('subscribe', { channels: ['rounds'], market_ids: [market] });
    await c.expectError('unsubscribe', { sids: [a.msg.sid, 424242] }, 5, 'unknown_sid');
    const ok = await c.call('unsubscribe', { sids: [a.msg.sid] });
    assert.deepEqual(ok, { id: ok.id, type: 'ok', msg: { sids: [a.msg.sid] } });
    await c.expectError('unsubscribe', { sids: [a.msg.sid] }, 5, 'unknown_sid');
    await c.expectError('update_subscription', { sid: a.msg.sid, action: 'get_snapshot' }, 5, 'unknown_sid');
    await c.close();
  });

  it('ws: update_subscription get_snapshot, add_markets and delete_markets', async () => {
    const c = await connect(alice);
    const sub = await c.call('subscribe', { channels: ['orderbook_delta'], market_ids: [market] });
    const sid = sub.msg.sid;
    const snap1 = await c.next((m) => m.type === 'orderbook_snapshot' && m.sid === sid);
    assert.equal(snap1.msg.market_id, market);

    const ok = await c.call('update_subscription', { sid, action: 'get_snapshot' });
    assert.deepEqual(ok.msg, { sid, action: 'get_snapshot' });
    const snap2 = await c.next((m) => m.type === 'orderbook_snapshot' && m.sid === sid);
    assert.deepEqual(snap2.msg, snap1.msg);

    const add = await c.call('update_subscription', { sid, action: 'add_markets', market_ids: [market2] });
    assert.equal(add.type, 'subscribed');
    assert.equal(add.msg.channel, 'orderbook_delta');
    assert.equal(add.msg.market_id, market2);
    const sid2 = add.msg.sid;
    assert.notEqual(sid2, sid);
    const snap3 = await c.next((m) => m.type === 'orderbook_snapshot' && m.sid === sid2);
    assert.equal(snap3.msg.market_id, market2);

    await c.expectError('update_subscription', { sid, action: 'delete_markets', market_ids: [9999] }, 3, 'bad_params');
    const del = await c.call('update_subscription', { sid, action: 'delete_markets', market_ids: [market2] });
    assert.deepEqual(del.msg, { sid, action: 'delete_markets', sids: [sid2] });
    await c.expectError('unsubscribe', { sids: [sid2] }, 5, 'unknown_sid');

    // get_snapshot is for orderbook_delta and user; add_markets needs a one-market subscription.
    const t = await c.call('subscribe', { channels: ['trades'] });
    await c.expectError('update_subscription', { sid: t.msg.sid, action: 'get_snapshot' }, 3, 'bad_params');
    await c.expectError('update_subscription', { sid: t.msg.sid, action: 'add_markets', market_ids: [market] }, 3, 'bad_params');
    await c.close();
  });

  it('ws: ticker and any unknown channel answer code 4', async () => {
    const c = await connect(alice);
    await c.expectError('subscribe', { channels: ['ticker'], market_ids: [market] }, 4, 'unknown_channel');
    await c.expectError('subscribe', { channels: ['trades', 'fills_v2'] }, 4, 'unknown_channel');
    // All or nothing: the valid channel of a refused command was not subscribed.
    const r = await c.call('subscribe', { channels: ['trades'] });
    assert.equal(r.msg.existing, undefined);
    await c.close();
  });

  it('ws: every other mistake has its own code', async () => {
    const c = await connect(alice);
    // 1 invalid_message: not JSON, not an object, bad id, unknown envelope field (binary frames: test/ws/binary_orders.test.ts).
    c.sendRaw('{nope');
    let r = await c.next((m) => m.type === 'error');
    assert.deepEqual([r.id, r.msg.code, r.msg.name], [null, 1, 'invalid_message']);
    c.sendRaw('[1,2]');
    r = await c.next((m) => m.type === 'error');
    assert.equal(r.msg.code, 1);
    c.sendRaw(JSON.stringify({ id: -1, cmd: 'subscribe', params: { channels: ['oracle'] } }));
    r = await c.next((m) => m.type === 'error');
    assert.equal(r.msg.code, 1);
    c.sendRaw(JSON.stringify({ id: 77, cmd: 'subscribe', params: { channels: ['oracle'] }, extra: 1 }));
    r = await c.next((m) => m.type === 'error');
    assert.deepEqual([r.id, r.msg.code], [77, 1]);
    // 2 unknown_command.
    await c.expectError('list_markets', {}, 2, 'unknown_command');
    // 3 bad_params.
    await c.expectError('subscribe', {}, 3, 'bad_params');
    await c.expectError('subscribe', { channels: [] }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['trades'], market_ids: [0] }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['trades'], market_ids: ['1'] }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['trades'], depth: 3 }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['orderbook_delta'] }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['trades'], resume_from_seq: '1' }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['user'], resume_from_seq: 1 }, 3, 'bad_params');
    await c.expectError('subscribe', { channels: ['user'], resume_from_seq: '99999999999' }, 3, 'bad_params');
    await c.expectError('unsubscribe', { sids: 'all' }, 3, 'bad_params');
    await c.expectError('update_subscription', { sid: 1, action: 'rename' }, 3, 'bad_params');
    await c.expectError('update_subscription', { sid: 1, action: 'add_markets' }, 3, 'bad_params');
    // 5 unknown_sid.
    await c.expectError('update_subscription', { sid: 31337, action: 'get_snapshot' }, 5, 'unknown_sid');
    // 6 unknown_market.
    await c.expectError('subscribe', { channels: ['orderbook_delta'], market_ids: [market, 4040] }, 6, 'unknown_market');
    await c.close();
  });

  it('ws: subscriptions per key are capped (code 7), all or nothing, and freed by unsubscribe and close', async () => {
    const k = await newKey(tx, alice.accountId);
    const a = await connect(k);
    const b = await connect(k);
    const first = a.send('subscribe', { channels: ['trades', 'rounds'], market_ids: [market, market2] });
    const sids: number[] = [];
    for (let i = 0; i < 4; i++) sids.push((await a.reply(first)).msg.sid);
    // Two more fit (6), three do not: the cap counts the key's subscriptions on every connection.
    await b.expectError(
      'subscribe',
      { channels: ['orderbook_delta', 'trades', 'rounds'], market_ids: [market] },
      7,
      'too_many_subscriptions',
    );
    await b.expectError(
      'subscribe',
      { channels: ['oracle', 'user', 'orderbook_delta'], market_ids: [market] },
      7,
      'too_many_subscriptions',
    );
    const two = b.send('subscribe', { channels: ['oracle', 'user'] });
    assert.equal((await b.reply(two)).type, 'subscribed');
    assert.equal((await b.reply(two)).type, 'subscribed');
    await b.expectError('subscribe', { channels: ['orderbook_delta'], market_ids: [market] }, 7, 'too_many_subscriptions');
    await a.call('unsubscribe', { sids: [sids[0]] });
    assert.equal((await b.call('subscribe', { channels: ['orderbook_delta'], market_ids: [market] })).type, 'subscribed');
    await a.close();
    // Closing a returns its three.
    let ok = false;
    for (let i = 0; i < 50 && !ok; i++) {
      const r = await b.call('subscribe', { channels: ['trades'] });
      ok = r.type === 'subscribed';
      if (!ok) await new Promise((res) => setTimeout(res, 20));
    }
    assert.ok(ok, 'subscriptions of a closed connection are released');
    await b.close();
  });

  it('ws: commands take tokens from the key\'s read bucket (code 8 with retry_after_ms)', async () => {
    const k = await newKey(tx, alice.accountId);
    const c = await connect(k); // the upgrade took one token of the burst of 200
    const ids: number[] = [];
    for (let i = 0; i < 260; i++) ids.push(c.send('update_subscription', { sid: 1, action: 'get_snapshot' }));
    const replies = await Promise.all(ids.map((id) => c.reply(id)));
    const codes = replies.map((r) => r.msg.code);
    assert.ok(codes.every((x) => x === 5 || x === 8), 'unknown sid or rate limited');
    const limited = replies.filter((r) => r.msg.code === 8);
    // About 60 over the burst; refill during the burst can only lower that.
    assert.ok(limited.length >= 30, `rate limited ${limited.length} of 260`);
    assert.equal(limited[0].msg.name, 'rate_limited');
    assert.match(limited[0].msg.retry_after_ms, /^[0-9]+$/);
    await c.close();
  });

  it('ws: the read bucket is the one REST reads use', async () => {
    // REST empties a key's bucket, then commands on its socket are limited too. The key's read bucket refills 1 a
    // second, so a loaded machine cannot refill it while the REST burst runs; with a bucket of its own the socket
    // would have 29 tokens and none of its 10 commands would be limited.
    const k = await newKey(tx, alice.accountId);
    await tx.admin.setKeyTier(k.keyId, {
      tier: 'custom', read: { sustained_rate_per_s: 1, burst: 30 }, write: { sustained_rate_per_s: 50, burst: 100 },
    });
    const c = await connect(k); // the upgrade takes one token
    await Promise.all(Array.from({ length: 40 }, () => k.client.balance().catch(() => null))); // drains the bucket: 429s expected
    const ids: number[] = [];
    for (let i = 0; i < 10; i++) ids.push(c.send('update_subscription', { sid: 1, action: 'get_snapshot' }));
    const replies = await Promise.all(ids.map((id) => c.reply(id)));
    const limited = replies.filter((r) => r.msg.code === 8).length;
    assert.ok(limited >= 8, `${limited} of 10 commands were limited after REST emptied the bucket`);
    await c.close();
  });

  it('ws: revoking a key closes its sockets with 4003 and leaves other keys connected', async () => {
    const k = await newKey(tx, alice.accountId);
    const other = await connect(alice);
    await other.call('subscribe', { channels: ['oracle'] });
    const c1 = await connect(k);
    const c2 = await connect(k);
    await c1.call('subscribe', { channels: ['user'] });
    await k.keys.revokeKey(k.keyId);
    const [x, y] = await Promise.all([c1.waitClose(), c2.waitClose()]);
    assert.deepEqual([x.code, y.code], [4003, 4003]);
    assert.equal(x.reason, 'key revoked');
    assert.equal(other.closed, null);
    assert.equal((await other.call('subscribe', { channels: ['oracle'] })).msg.existing, true);
    await other.close();
  });

  it('ws: open connections show in the dx_ws_connections gauge', async () => {
    const gauge = async (): Promise<number> => Number(/^dx_ws_connections ([0-9]+)$/m.exec(await tx.admin.metrics())?.[1] ?? NaN);
    const before = await gauge();
    assert.ok(Number.isInteger(before));
    const a = await connect(alice);
    const b = await connect(alice);
    assert.ok(await eventually(async () => (await gauge()) === before + 2), 'two more connections');
    await Promise.all([a.close(), b.close()]);
    assert.ok(await eventually(async () => (await gauge()) === before), 'back after the closes');
  });

  it('ws: replies echo the command id and carry type and msg only', async () => {
    const c = await connect(alice);
    const r = await c.reply(c.send('subscribe', { channels: ['oracle'] }, 9007199254740991));
    assertWireShape(REPLIES.subscribed, r);
    assert.equal(r.id, 9007199254740991);
    await c.close();
  });
});

it('ws: a revoked key\'s open connection receives no private message sequenced after the revocation and places nothing more ' +
  '(it closes 4003), as REST refuses the key', async () => {
  const k = await newKey(tx, alice.accountId);
  const revoker = await newKey(tx, alice.accountId);
  const c = await WsClient.connect(tx, k);
  await c.call('subscribe', { channels: ['user'] });
  // The revocation and an order of the same account sequenced in one engine round, applied by the gateway in one drain.
  tx.ex.pipeline.control.setPaused(true);
  let revoked: Promise<{ seq: string }>;
  let placed: Promise<unknown>;
  try {
    revoked = revoker.keys.revokeKey(k.keyId);
    await new Promise((r) => setTimeout(r, 50));
    placed = alice.client.placeOrder(order(market, { tick: 6, qty: 1 }));
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  const seq = Number((await revoked).seq);
  await placed;
  const id = c.send('place_order', order(market, { tick: 5, qty: 1 }) as unknown as Record<string, unknown>);
  assert.equal((await c.waitClose()).code, 4003);
  const answer = c.all.find((m) => m.id === id);
  assert.ok(answer === undefined || answer.status !== 201, `placed after the revocation: ${JSON.stringify(answer)}`);
  // A private message's msg.seq is the exchange seq it reflects (the top-level seq counts the subscription's messages).
  const late = c.all.filter((m) => m.type !== 'user_snapshot' && typeof m.msg?.seq === 'string' && Number(m.msg.seq) > seq);
  assert.deepEqual(late, [], `private messages sequenced after the revocation (seq ${seq})`);
});

it('ws: market_ids mean nothing to oracle and user: ignored, not checked (an unknown market is no error there)', async () => {
  const c = await connect(alice);
  assert.equal((await c.call('subscribe', { channels: ['oracle'], market_ids: [4040] })).type, 'subscribed');
  assert.equal((await c.call('subscribe', { channels: ['user'], market_ids: [4040] })).type, 'subscribed');
  await c.close();
});
