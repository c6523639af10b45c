// Rate tiers and token buckets in reused key rows: the per-key tables of the
// gateways (token buckets, WebSocket counts) and the key's tier are indexed
// by the key's row, and a row is reused once its key is evicted (an
// account keeps revoked_key_cap revoked keys). A new key in that row starts
// from the default tier and full buckets, whatever its row's previous key
// had; a tier set on it then applies to it alone, through a restart too.
// Black box with the `ws` package as the WebSocket client.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { keyFrom, newAccount, newKey, type Key } from '../support/harness.js';
import { WsClient } from './ws_client.js';

let tx: TestExchange;
const open: WsClient[] = [];
/** Ours, kept across the restart. */
const dataDir = mkdtempSync(join(tmpdir(), 'dx-tier-rows-'));
// One revoked key kept per account: the second revocation evicts the first key and frees its row.
const start = (): Promise<TestExchange> => startTestExchange({ demo: false, revoked_key_cap: 1, data_dir: dataDir });

before(async () => {
  tx = await start();
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const TINY = { tier: 'custom', read: { sustained_rate_per_s: 100, burst: 100 }, write: { sustained_rate_per_s: 1, burst: 3 } } as const;

/** A batch cancel of one unknown order over REST (one write token): true when answered, false when rate_limited. */
async function restCancel(k: Key, orderId: string): Promise<boolean> {
  try {
    await k.client.cancelBatch([orderId]);
    return true;
  } catch (e) {
    assert.match((e as Error).message, /rate_limited/);
    return false;
  }
}

it('a key in a reused row starts from the default tier and full buckets; a tier set on it follows its row', async () => {
  const k1 = await newAccount(tx);
  await tx.admin.setKeyTier(k1.keyId, TINY);
  // k1 spends its whole write bucket over the WebSocket lane.
  const c = await WsClient.connect(tx, k1);
  open.push(c);
  for (let i = 0; i < 3; i++) {
    const r = await c.reply(c.send('cancel_order', { order_id: String(9000 + i) }), 5000);
    assert.equal(r.status, 404, JSON.stringify(r));
  }
  const limited = await c.reply(c.send('cancel_order', { order_id: '9003' }), 5000);
  assert.equal(limited.status, 429, JSON.stringify(limited));

  // k1 revoked, then a second key revoked: k1 is evicted (unknown) and its row is free.
  await tx.admin.revokeKey(k1.keyId);
  const k2 = await newKey(tx, k1.accountId);
  await tx.admin.revokeKey(k2.keyId);
  await assert.rejects(tx.admin.setKeyTier(k1.keyId, { tier: 'default' }), /unknown_key/);

  // k3 takes the freed row (the only free one): the default tier, not k1's.
  const k3 = await newKey(tx, k1.accountId);
  const l = await k3.client.limits();
  assert.equal(l.tier, 'default');
  assert.deepEqual(l.write, { sustained_rate_per_s: 50, burst: 100 });
  const listed = (await tx.admin.account(k1.accountId)).keys;
  assert.deepEqual(listed.map((x) => [x.key_id, x.tier, x.revoked]), [[k2.keyId, 'default', true], [k3.keyId, 'default', false]]);

  // The same tier as k1 had: k3's bucket starts full (3 tokens), not where k1 left it (0).
  await tx.admin.setKeyTier(k3.keyId, TINY);
  for (let i = 0; i < 3; i++) assert.ok(await restCancel(k3, String(9100 + i)), `token ${i + 1} of a fresh bucket`);
  assert.equal(await restCancel(k3, '9103'), false, 'the fourth token');

  // The tier is state of k3 alone, journaled and replayed into the same row.
  await tx.admin.setKeyTier(k3.keyId, { tier: 'market_maker' });
  await Promise.all(open.splice(0).map((x) => x.close()));
  await tx.stop();
  tx = await start();
  const k4 = await newKey(tx, k1.accountId);
  assert.equal((await keyFrom(tx, k3.accountId, k3.keyId, k3.secret).client.limits()).tier, 'market_maker');
  assert.equal((await k4.client.limits()).tier, 'default');
});
