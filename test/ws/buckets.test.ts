// One write bucket per key, whatever the lane and whatever the gateway thread,
// on an exchange with two gateway threads: REST, WebSocket JSON and binary
// order entry of one key draw from the same bucket (one token per command,
// per batch item, per binary record), and a rate tier the operator sets
// applies on both threads to the same shared bucket. Which thread a
// connection landed on shows in its sids: each thread numbers its own
// subscriptions from 1, so two connections whose first subscriptions got the
// same sid are on different threads (gateways.test.ts does the same).

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder } from '../../src/client/binary_codec.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, type Key } from '../support/harness.js';
import { WsClient, type Msg } from './ws_client.js';

let tx: TestExchange;
const open: WsClient[] = [];

before(async () => {
  tx = await startTestExchange({ gateways: 2, demo: false });
  // A market, so that order ids exist to be unknown.
  await newMarket(tx);
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

async function connect(k: Key): Promise<WsClient> {
  const c = await WsClient.connect(tx, k);
  open.push(c);
  return c;
}

/** An order command's order_result. */
async function order(c: WsClient, cmd: string, params: Record<string, unknown>): Promise<Msg> {
  const r = await c.reply(c.send(cmd, params), 5000);
  assert.equal(r.type, 'order_result', JSON.stringify(r));
  return r;
}

/** A custom tier whose write bucket holds `burst` tokens and refills 1 a second (the smallest rate). */
function writeBurst(burst: number): Parameters<TestExchange['admin']['setKeyTier']>[1] {
  return { tier: 'custom', read: { sustained_rate_per_s: 100, burst: 100 }, write: { sustained_rate_per_s: 1, burst } };
}

/** Cancels of ids that were never orders: each one a sequenced command (a core reject) that takes a write token. */
function ids(from: number, n: number): string[] {
  return Array.from({ length: n }, (_, i) => String(from + i));
}

it('buckets: REST, WebSocket JSON and binary orders of one key draw from one write bucket, one token per command, batch item ' +
  'and binary record', async () => {
  const k = await newAccount(tx);
  await tx.admin.setKeyTier(k.keyId, writeBurst(10));
  // Connections first (an upgrade takes a read token, not a write token), so that the draws below follow each other closely:
  // at 1 token a second, nothing refills in between.
  const json = await connect(k);
  const bin = await connect(k);
  assert.equal((await bin.call('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT })).type, 'ok');
  const e = new FrameEncoder(k.accountId);
  const frame = async (cancels: string[]): Promise<ReturnType<typeof decodeResults>> => {
    cancels.forEach((id, i) => e.cancel(i + 1, id));
    const have = bin.frames.length;
    bin.sendRaw(Buffer.from(e.bytes()), true);
    e.reset();
    const out: ReturnType<typeof decodeResults> = [];
    for (let n = have; out.length < cancels.length; n++) out.push(...decodeResults((await bin.framesUntil(n + 1, 5000))[n]!));
    return out;
  };
  // 3 (REST batch) + 3 (JSON batch) + 4 (one binary frame) = the 10 tokens of the burst.
  const rest = await k.client.cancelBatch(ids(7000, 3));
  assert.deepEqual(rest.results.map((r) => (r as { error?: { code: string } }).error?.code), Array(3).fill('unknown_order'));
  const batch = await order(json, 'batch_cancel_orders', { order_ids: ids(7010, 3) });
  assert.equal(batch.status, 200, JSON.stringify(batch));
  const records = await frame(ids(7020, 4));
  assert.deepEqual(records.map((r) => [r.status, r.code]), Array(4).fill(['rejected', 'unknown_order']));
  // The bucket is empty for every lane of the key.
  await assert.rejects(k.client.cancelBatch(ids(7030, 1)), /rate_limited/);
  const limited = await order(json, 'cancel_order', { order_id: '7040' });
  assert.deepEqual([limited.status, limited.msg.error.code], [429, 'rate_limited']);
  const [refused] = await frame(['7050']);
  assert.deepEqual([refused!.status, refused!.code], ['refused', 'rate_limited']);
  assert.ok(refused!.retry_after_ms >= 1);
});

/** Opens connections of `k` until two land on different gateway threads (their first user subscriptions share a sid). */
async function onBothThreads(k: Key): Promise<[WsClient, WsClient, number]> {
  const bySid = new Map<number, WsClient>();
  // 16 is the per-key connection cap; all 16 on one thread has a chance of 2^-15.
  for (let i = 0; i < 16; i++) {
    const c = await connect(k);
    const sid = (await c.call('subscribe', { channels: ['user'] })).msg.sid as number;
    await c.next((m) => m.sid === sid && m.type === 'user_snapshot');
    const other = bySid.get(sid);
    if (other !== undefined) return [other, c, sid];
    bySid.set(sid, c);
  }
  assert.fail('16 connections all landed on one gateway thread');
}

/** Waits until the thread of connection c has folded seq (a fresh user snapshot renders that thread's read model). */
async function threadAt(c: WsClient, sid: number, seq: number): Promise<void> {
  for (let i = 0; ; i++) {
    assert.equal((await c.call('unsubscribe', { sids: [sid] })).type, 'ok');
    sid = (await c.call('subscribe', { channels: ['user'] })).msg.sid as number;
    const snap = await c.next((m) => m.sid === sid && m.type === 'user_snapshot');
    if (Number(snap.msg.as_of_seq) >= seq) return;
    assert.ok(i < 100, `the thread's read model stays at ${snap.msg.as_of_seq}, below the tier's seq ${seq}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('buckets: a tier set on a key applies on both gateway threads, to one bucket shared by them', async () => {
  const k = await newAccount(tx);
  // Connected under the default tier (100 write tokens); the tier changes while they are open.
  const [a, b, sid] = await onBothThreads(k);
  const tier = await tx.admin.setKeyTier(k.keyId, writeBurst(6));
  await threadAt(a, sid, Number(tier.seq));
  await threadAt(b, sid, Number(tier.seq));
  // 3 tokens on each thread empty the 6 of the new tier; under the default tier, or with a bucket per thread, the next would pass.
  assert.equal((await order(a, 'batch_cancel_orders', { order_ids: ids(8000, 3) })).status, 200);
  assert.equal((await order(b, 'batch_cancel_orders', { order_ids: ids(8010, 3) })).status, 200);
  for (const c of [a, b]) {
    const r = await order(c, 'cancel_order', { order_id: '8020' });
    assert.deepEqual([r.status, r.msg.error.code], [429, 'rate_limited']);
  }
});
