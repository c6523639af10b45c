// revokeLateKey (src/gateway/key_creation.ts) when the node stopped being
// writable between a key creation's 504 and its late completion (a primary
// stepping down): the revoke is refused at once (not_primary), which must
// neither throw out of the Immediate it runs in (an uncaught exception ends
// the process before its orderly stop) nor claim the key was revoked. The
// engine runs by hand on the core's rings (test/support/gateway_core.ts).
// Test process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { revokeLateKey } from '../../src/gateway/key_creation.js';
import { CreateAccount, CreateKey, T_CREATE_ACCOUNT, T_CREATE_KEY } from '../../src/layout/records.js';
import { coreWithEngine } from '../support/gateway_core.js';

test('late key: a late completion on a node no longer writable gives the revoke up, logged, without an uncaught exception', async () => {
  let writable = true;
  const status = { get writable(): boolean { return writable; }, get role(): string { return writable ? 'primary' : 'fenced'; } };
  const { core, runEngine: engineRound } = coreWithEngine({ budgetMs: 1000, shedPending: 1024, ringBytes: 1 << 16, replication: status });
  const runEngine = (): void => {
    engineRound();
    core.drain();
  };
  const turn = (): Promise<void> => new Promise((r) => setImmediate(r));
  const created = core.submit(T_CREATE_ACCOUNT, CreateAccount.SIZE, 0, false, () => {});
  await turn();
  runEngine();
  const account = (await created)!.result;
  const uncaught: unknown[] = [];
  const onUncaught = (e: unknown): void => {
    uncaught.push(e);
  };
  process.prependListener('uncaughtException', onUncaught);
  const logs: Record<string, unknown>[] = [];
  try {
    const key = core.submit(T_CREATE_KEY, CreateKey.SIZE, account, false, (m, o) => CreateKey.set_scopes(m, o, 3),
      (late) => revokeLateKey(core, late, 0, (f) => logs.push(f)));
    await turn(); // published
    core.expire(performance.now() + 2000);
    assert.equal(await key, null, 'answered 504');
    writable = false; // the primary steps down before the late completion is applied
    runEngine();
    await new Promise((r) => setTimeout(r, 50));
  } finally {
    process.removeListener('uncaughtException', onUncaught);
    core.close();
  }
  assert.deepEqual(uncaught.map(String), [], 'no uncaught exception');
  assert.deepEqual(logs.map((l) => [l.event, l.reason]), [['late_key_not_revoked', 'not_primary']]);
});
