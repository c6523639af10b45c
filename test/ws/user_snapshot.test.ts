// WebSocket lane, black box: the user snapshot of an account with many open
// orders. It lists every open order in one message, rendered on the gateway
// thread: with 20,000 open orders (one share at 1..30 cents each) about 8 MB.
// A client that reads keeps its subscription although that one message is
// larger than slow_consumer_bytes (the 4008 close is for clients that do not
// read); the snapshot costs one read token per 100 open orders, at most the
// key's read burst less one, so one key cannot have it rendered over and over
// for a token each; a key that cannot pay gets rate_limited and keeps what it
// had. One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, order, sleep, type Key } from '../support/harness.js';
import { WsClient } from './ws_client.js';

const OPEN_ORDERS = 20_000;
const BIG = { sustained_rate_per_s: 1_000_000, burst: 1_000_000 };
let tx: TestExchange;
let heavy: Key;
const open: WsClient[] = [];

/** n resting buys of one share at ticks 1..30, in batches of 20 from 8 workers. */
async function rest(k: Key, m: number, n: number): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const start = next;
      next += 20;
      const batch = [];
      for (let i = start; i < Math.min(n, start + 20); i++) batch.push(order(m, { tick: 1 + (i % 30), qty: 1 }));
      await k.client.placeBatch(batch);
    }
  };
  await Promise.all(Array.from({ length: 8 }, worker));
}

async function connect(k: Key): Promise<WsClient> {
  const c = await WsClient.connect(tx, k);
  open.push(c);
  return c;
}

before(async () => {
  tx = await startTestExchange({ demo: false });
  heavy = await newAccount(tx, { deposit: '10000000' });
  const m = await newMarket(tx);
  await tx.admin.setKeyTier(heavy.keyId, { tier: 'custom', read: BIG, write: BIG });
  await rest(heavy, m, OPEN_ORDERS);
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

test('ws: a client that reads keeps its user subscription when its snapshot alone is larger than slow_consumer_bytes', async () => {
  const c = await connect(heavy);
  const r = await c.call('subscribe', { channels: ['user'] });
  assert.equal(r.type, 'subscribed', JSON.stringify(r));
  const snap = await c.next((x) => x.sid === r.msg.sid && x.type === 'user_snapshot', 30_000);
  assert.equal(snap.msg.orders.length, OPEN_ORDERS);
  await sleep(1000);
  assert.equal(c.closed, null, `closed ${JSON.stringify(c.closed)} after its user_snapshot (the client read everything)`);
  assert.equal((await c.call('unsubscribe', { sids: [r.msg.sid] })).type, 'ok');
});

test('ws: a user snapshot costs a read token per 100 open orders, at most the burst less one; a key that cannot pay is ' +
  'rate_limited and keeps its subscription', async () => {
  // 50 reads of burst, one a second: the upgrade takes 1, the subscribe's snapshot 49 (not 200: capped).
  await tx.admin.setKeyTier(heavy.keyId, { tier: 'custom', read: { sustained_rate_per_s: 1, burst: 50 }, write: BIG });
  const c = await connect(heavy);
  const r = await c.call('subscribe', { channels: ['user'] });
  assert.equal(r.type, 'subscribed', JSON.stringify(r));
  await c.next((x) => x.sid === r.msg.sid && x.type === 'user_snapshot', 30_000);
  // Two seconds refill two tokens: the command's own, and one of the 48 more its snapshot needs.
  await sleep(2100);
  const again = await c.expectError('update_subscription', { sid: r.msg.sid, action: 'get_snapshot' }, 8, 'rate_limited');
  assert.match(again.msg.msg, /costs 49 read tokens/);
  assert.ok(Number(again.msg.retry_after_ms) > 40_000, JSON.stringify(again));
  // The subscription is still there (the refusal took nothing, the command's own token came first).
  await tx.admin.setKeyTier(heavy.keyId, { tier: 'custom', read: BIG, write: BIG });
  assert.equal((await c.call('unsubscribe', { sids: [r.msg.sid] })).type, 'ok');
});
