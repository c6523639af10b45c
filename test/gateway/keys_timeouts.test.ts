// Key creations answered 504 sequencing_timeout (the engine paused past the
// response budget) that land once it resumes: such a key is revoked at once,
// since nobody was given its secret (the control plane's, which may hold
// withdraw, and the keys service's); and each still counts against the keys
// service's allowance, so 504s cannot lift the cap of KEY_CREATE_BURST
// creations at once. Test process; the exchange runs in it.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { KEY_CREATE_BURST } from '../../src/keys_service/routes.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, rejects, sleep } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ response_budget_ms: 300 });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

const liveKeys = async (account: number): Promise<number[]> =>
  (await tx.admin.account(account)).keys.filter((k) => !k.revoked).map((k) => k.key_id);

/** Creates a key through `create` with the engine paused (504), resumes it, and checks the late key ends revoked. */
async function lateKeyRevoked(account: number, create: () => Promise<unknown>): Promise<void> {
  const before = await liveKeys(account);
  tx.ex.pipeline.control.setPaused(true);
  await rejects(create(), 504, 'sequencing_timeout');
  tx.ex.pipeline.control.setPaused(false);
  // The timed-out command is sequenced: its key shows in the listing.
  assert.ok(await eventually(async () => (await tx.admin.account(account)).keys.length > before.length, 3000), 'the command landed');
  assert.ok(await eventually(async () => (await liveKeys(account)).length === before.length, 3000), 'the late key is revoked');
  await sleep(100);
  assert.deepEqual(await liveKeys(account), before);
}

test('control plane: a key created by a request answered 504 is revoked once it lands (its secret went to nobody)', async () => {
  const k = await newAccount(tx);
  await lateKeyRevoked(k.accountId, () => tx.admin.createKey(k.accountId, ['read', 'trade', 'withdraw']));
});

test('keys service: a key created by a request answered 504 is revoked once it lands', async () => {
  const k = await newAccount(tx);
  await lateKeyRevoked(k.accountId, () => k.keys.createKey({ label: 'bot' }));
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
