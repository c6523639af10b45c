// The keys service's creation allowance when creations are answered 504
// sequencing_timeout (the engine paused past the response budget) and land
// once it resumes: each still counts, so 504s cannot lift the cap of
// KEY_CREATE_BURST creations at once. Test process; the exchange runs in it.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KEY_CREATE_BURST } from '../../src/keys_service/routes.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, rejects } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ response_budget_ms: 300 });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

test('keys service: creations answered 504 that land still count against the account\'s allowance', async () => {
  const k = await newAccount(tx);
  tx.ex.pipeline.control.setPaused(true);
  const outcomes = await Promise.allSettled(Array.from({ length: KEY_CREATE_BURST }, () => k.keys.createKey({})));
  tx.ex.pipeline.control.setPaused(false);
  assert.ok(outcomes.every((o) => o.status === 'rejected'), 'all answered 504');
  // Every one lands once the engine resumes.
  const landed = async (): Promise<boolean> => (await tx.admin.account(k.accountId)).keys.length === 1 + KEY_CREATE_BURST;
  assert.ok(await eventually(landed, 3000), 'the creations landed');
  // KEY_CREATE_BURST keys were created at once: the next creation waits.
  await rejects(k.keys.createKey({}), 429, 'rate_limited');
});
