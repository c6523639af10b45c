// POST /admin/keys/{key_id}/tier answers the tier its own command set (at its
// seq), not whatever the control plane's read model holds when the answer is
// written: two tier changes of one key completed in the same drain must each
// be answered with their own tier.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, sleep } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ demo: false, durability: 'none' });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

it('each tier change is answered with the tier it set', async () => {
  const k = await newAccount(tx);
  let first: ReturnType<TestExchange['admin']['setKeyTier']> | null = null;
  let second: ReturnType<TestExchange['admin']['setKeyTier']> | null = null;
  tx.ex.pipeline.control.setPaused(true);
  try {
    first = tx.admin.setKeyTier(k.keyId, { tier: 'market_maker' });
    await sleep(30);
    second = tx.admin.setKeyTier(k.keyId, { tier: 'institutional' });
    await sleep(30);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  const [a, b] = await Promise.all([first!, second!]);
  assert.ok(Number(a.seq) < Number(b.seq));
  assert.equal(b.tier, 'institutional');
  assert.equal(a.tier, 'market_maker', `the first change (seq ${a.seq}) was answered ${JSON.stringify(a)}`);
});
