// Funding over the real listeners: the deposit address, operator deposits,
// withdrawals (withdraw scope only, idempotent by client_withdrawal_id, the
// amount held in reserved), the operator's confirm and fail, and the scope
// rules of keys: a key created by a user never gets withdraw. Every refusal
// leaves the balance as it was.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertErrorReply, newAccount, newKey, rejects, signedRaw } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange();
});

after(async () => {
  await tx.stop();
});

async function cash(c: { balance(): Promise<{ available: string; reserved: string }> }): Promise<[string, string]> {
  const b = await c.balance();
  return [b.available, b.reserved];
}

test('funding: the deposit address is fixed per account and differs between accounts; an operator deposit credits available', async () => {
  const a = await newAccount(tx, { deposit: '0' });
  const b = await newAccount(tx, { deposit: '0' });
  const a1 = await a.client.depositAddress();
  const a2 = await (await newKey(tx, a.accountId)).client.depositAddress();
  const b1 = await b.client.depositAddress();
  assert.match(a1.address, /^dx1[0-9a-f]{40}$/);
  assert.equal(a1.address, a2.address, 'every key of an account sees one address');
  assert.notEqual(a1.address, b1.address);
  assert.match(a1.as_of_seq, /^[0-9]+$/);
  assert.deepEqual(await cash(a.client), ['0', '0']);
  const d = await tx.admin.deposit(a.accountId, { amount: '12345', ref: 'wire-1' });
  assert.match(d.seq, /^[0-9]+$/);
  assert.deepEqual(await cash(a.client), ['12345', '0']);
  await rejects(tx.admin.deposit(a.accountId, { amount: '0', ref: 'zero' }), 400, 'invalid_field');
  await rejects(tx.admin.deposit(999_999, { amount: '5', ref: 'nobody' }), 404, 'unknown_account', { num: 269, origin: 'core' });
  assert.deepEqual(await cash(a.client), ['12345', '0']);
});

test('funding: a deposit is idempotent by the account and its ref: a retry answers the first seq and credits nothing, the ref with ' +
  'another amount is 409 naming the first, another account may use the ref, no ref is never matched', async () => {
  const a = await newAccount(tx, { deposit: '0' });
  const b = await newAccount(tx, { deposit: '0' });
  const d = await tx.admin.deposit(a.accountId, { amount: '500', ref: 'chain-tx-9' });
  assert.deepEqual(await tx.admin.deposit(a.accountId, { amount: '500', ref: 'chain-tx-9' }), d);
  const dup = await rejects(tx.admin.deposit(a.accountId, { amount: '501', ref: 'chain-tx-9' }), 409, 'duplicate_deposit_ref', {
    num: 282, origin: 'core',
  });
  assert.deepEqual(dup.details, { seq: d.seq });
  assert.deepEqual(await cash(a.client), ['500', '0']);
  const other = await tx.admin.deposit(b.accountId, { amount: '501', ref: 'chain-tx-9' });
  assert.ok(Number(other.seq) > Number(d.seq));
  assert.deepEqual(await cash(b.client), ['501', '0']);
  const n1 = await tx.admin.deposit(a.accountId, { amount: '1' });
  const n2 = await tx.admin.deposit(a.accountId, { amount: '1' });
  assert.ok(Number(n2.seq) > Number(n1.seq));
  assert.deepEqual(await cash(a.client), ['502', '0']);
});

test('funding: a withdrawal holds the amount in reserved and is idempotent: the same id and body answer the same record, another body is ' +
  '409', async () => {
  const k = await newAccount(tx, { deposit: '50000', scopes: ['read', 'trade'] });
  const w = await newKey(tx, k.accountId, ['read', 'withdraw']);
  const req = { client_withdrawal_id: '7001', amount: '20000', destination: 'bc1-dest-a' };
  const first = await w.client.withdraw(req);
  assert.equal(first.status, 'pending');
  assert.equal(first.client_withdrawal_id, '7001');
  assert.match(first.wid, /^[0-9]+$/);
  assert.deepEqual(await cash(k.client), ['30000', '20000']);

  const again = await w.client.withdraw(req);
  assert.equal(again.wid, first.wid, 'a retry answers the same withdrawal');
  assert.equal(again.seq, first.seq, 'and is not a second one');
  assert.deepEqual(await cash(k.client), ['30000', '20000'], 'nothing more reserved');

  const other = await rejects(w.client.withdraw({ ...req, amount: '20001' }), 409, 'duplicate_client_withdrawal_id', {
    num: 275,
    origin: 'core',
  });
  assert.equal(other.details?.wid, first.wid);
  await rejects(w.client.withdraw({ ...req, destination: 'bc1-dest-b' }), 409, 'duplicate_client_withdrawal_id', {
    num: 275,
    origin: 'core',
  });
  assert.deepEqual(await cash(k.client), ['30000', '20000'], 'refusals change nothing');

  const got = await k.client.withdrawal('7001');
  assert.equal(got.wid, first.wid);
  assert.equal(got.status, 'pending');
  assert.equal((got as unknown as { amount: string }).amount, '20000');
  await rejects(k.client.withdrawal('7002'), 404, 'not_found');
  // Ids belong to the account: another account's key neither sees it nor collides with it.
  const stranger = await newAccount(tx, { deposit: '100', scopes: ['read', 'withdraw'] });
  await rejects(stranger.client.withdrawal('7001'), 404, 'not_found');
  const theirs = await stranger.client.withdraw({ client_withdrawal_id: '7001', amount: '100', destination: 'x' });
  assert.notEqual(theirs.wid, first.wid);
});

test('funding: confirm pays the withdrawal out; fail returns the money to available; each only once', async () => {
  const k = await newAccount(tx, { deposit: '10000', scopes: ['read', 'withdraw'] });
  const a = await k.client.withdraw({ client_withdrawal_id: '1', amount: '3000', destination: 'dest-a' });
  const b = await k.client.withdraw({ client_withdrawal_id: '2', amount: '2000', destination: 'dest-b' });
  assert.deepEqual(await cash(k.client), ['5000', '5000']);

  const c = await tx.admin.confirmWithdrawal(a.wid);
  assert.equal(c.status, 'confirmed');
  assert.deepEqual(await cash(k.client), ['5000', '2000'], 'confirmed money left the exchange');
  assert.equal((await k.client.withdrawal('1')).status, 'confirmed');

  const f = await tx.admin.failWithdrawal(b.wid);
  assert.equal(f.status, 'failed');
  assert.deepEqual(await cash(k.client), ['7000', '0'], 'failed money is back in available');
  assert.equal((await k.client.withdrawal('2')).status, 'failed');

  for (const wid of [a.wid, b.wid]) {
    await rejects(tx.admin.confirmWithdrawal(wid), 404, 'unknown_withdrawal', { num: 274, origin: 'core' });
    await rejects(tx.admin.failWithdrawal(wid), 404, 'unknown_withdrawal', { num: 274, origin: 'core' });
  }
  assert.deepEqual(await cash(k.client), ['7000', '0']);
  // A retry of a finished withdrawal still answers the record, never a new one.
  const retry = await k.client.withdraw({ client_withdrawal_id: '1', amount: '3000', destination: 'dest-a' });
  assert.equal(retry.wid, a.wid);
  assert.equal(retry.status, 'confirmed');
  assert.deepEqual(await cash(k.client), ['7000', '0']);
});

test('funding: more than available is 422 and reserves nothing; bad bodies are 400 and reserve nothing', async () => {
  const k = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  await rejects(k.client.withdraw({ client_withdrawal_id: '1', amount: '1001', destination: 'd' }), 422, 'withdrawal_exceeds_available', {
    num: 268,
    origin: 'core',
  });
  await rejects(k.client.withdraw({ client_withdrawal_id: '1', amount: '0', destination: 'd' }), 400, 'invalid_field');
  await rejects(k.client.withdraw({ client_withdrawal_id: '1', amount: '10', destination: '' }), 400, 'invalid_field');
  await rejects(
    k.client.request('POST', '/v1/withdrawals', { client_withdrawal_id: 1, amount: '10', destination: 'd' }),
    400,
    'invalid_field',
  );
  await rejects(
    k.client.request('POST', '/v1/withdrawals', { client_withdrawal_id: '1', amount: '10', destination: 'd', memo: 'x' }),
    400,
    'unknown_field',
  );
  assert.deepEqual(await cash(k.client), ['1000', '0']);
  // The refused id is still free.
  assert.equal((await k.client.withdraw({ client_withdrawal_id: '1', amount: '1000', destination: 'd' })).status, 'pending');
  assert.deepEqual(await cash(k.client), ['0', '1000']);
});

test('funding scopes: only an operator-granted withdraw key may withdraw; keys created by users never get withdraw', async () => {
  const k = await newAccount(tx, { deposit: '5000', scopes: ['read', 'trade'] });
  const body = '{"client_withdrawal_id":"9","amount":"1","destination":"d"}';
  assertErrorReply(await signedRaw(tx.port, k, 'POST', '/v1/withdrawals', body), 403, 'missing_scope');
  // A user's own keys: read and trade by default; asking for withdraw is refused, whatever the asking key holds.
  const own = await k.keys.createKey({});
  assert.deepEqual(own.scopes, ['read', 'trade']);
  await rejects(k.keys.createKey({ scopes: ['withdraw'] }), 403, 'missing_scope');
  const w = await newKey(tx, k.accountId, ['read', 'trade', 'withdraw']);
  await rejects(w.keys.createKey({ scopes: ['read', 'withdraw'] }), 403, 'missing_scope');
  const mine = await w.keys.createKey({});
  assert.deepEqual(mine.scopes, ['read', 'trade'], 'even a withdraw key creates keys without withdraw');
  const listed = (await k.keys.listKeys()).keys;
  const withdrawKeys = listed.filter((x) => x.scopes.includes('withdraw')).map((x) => x.key_id);
  assert.deepEqual(withdrawKeys, [w.keyId], 'only the operator-granted key has withdraw');
  assert.deepEqual(await cash(k.client), ['5000', '0'], 'nothing was withdrawn by the refused calls');
  // The operator-granted key withdraws; a withdraw-only key cannot trade.
  assert.equal((await w.client.withdraw({ client_withdrawal_id: '9', amount: '1', destination: 'd' })).status, 'pending');
  const wOnly = await newKey(tx, k.accountId, ['withdraw']);
  assertErrorReply(await signedRaw(tx.port, wOnly, 'GET', '/v1/portfolio/balance'), 403, 'missing_scope');
});
