// Retention caps raised at a restart (loadBase applies a cap given at a
// restart from the replay on). A journal written under the smaller cap holds
// an id used again after that cap evicted its first holder: a
// client_withdrawal_id, or a client_order_id. Replayed under the larger cap
// both rows are retained, the later one indexed over the earlier. When the
// earlier one is evicted later, the id must still name the later (pending
// withdrawal, live order): a retry is the same withdrawal (not the money
// reserved twice), or duplicate_client_order_id (not a second order).
// Test process; the exchange runs in it, twice on one data directory.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestExchange } from '../support/exchange.js';
import { keyFrom, newAccount, newKey, newMarket, order } from '../support/harness.js';

test('withdrawal_cap raised at a restart: a client_withdrawal_id reused under the smaller cap still names its pending withdrawal',
  { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dx-wcap-'));
    try {
      const req = (cwid: string) => ({ client_withdrawal_id: cwid, amount: '100', destination: `dest-${cwid}` });
      const tx1 = await startTestExchange({ data_dir: dir, withdrawal_cap: 1 });
      const { account_id } = await tx1.admin.createAccount();
      await tx1.admin.deposit(account_id, { amount: '10000', ref: 'wcap-1' });
      const k = await newKey(tx1, account_id, ['read', 'withdraw']);
      await tx1.admin.confirmWithdrawal((await k.client.withdraw(req('1'))).wid);
      await tx1.admin.confirmWithdrawal((await k.client.withdraw(req('2'))).wid); // cap 1: cwid 1 is evicted
      const reused = await k.client.withdraw(req('1')); // a new withdrawal (its id was freed)
      assert.equal(reused.wid, '3');
      await tx1.stop();

      const tx2 = await startTestExchange({ data_dir: dir, withdrawal_cap: 3 });
      try {
        const c = keyFrom(tx2, account_id, k.keyId, k.secret).client;
        assert.equal((await c.withdrawal('1')).wid, '3');
        // Two more finished withdrawals: the account's oldest finished one (wid 1, cwid 1) is evicted under cap 3.
        await tx2.admin.confirmWithdrawal((await c.withdraw(req('4'))).wid);
        await tx2.admin.confirmWithdrawal((await c.withdraw(req('5'))).wid);
        // The client retries its request for wid 3 (a 504, say): the same withdrawal, reserved once.
        const retry = await c.withdraw(req('1'));
        const balance = await c.balance();
        assert.deepEqual([retry.wid, balance.available, balance.reserved], ['3', '9500', '100'], 'the retry made a second withdrawal');
        assert.equal((await c.withdrawal('1')).wid, '3');
      } finally {
        await tx2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

test('terminal_cap raised at a restart: a client_order_id reused under the smaller cap still names its live order',
  { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dx-tcap-'));
    try {
      const tx1 = await startTestExchange({ data_dir: dir, terminal_cap: 1 });
      const m = await newMarket(tx1);
      const k = await newAccount(tx1);
      const placeCancel = async (c: typeof k.client, coid: string): Promise<void> => {
        const p = await c.placeOrder(order(m, { client_order_id: coid }));
        await c.cancelBatch([p.order_id]);
      };
      await placeCancel(k.client, '1');
      await placeCancel(k.client, '2'); // cap 1: the first order (client id 1) is evicted
      const live = await k.client.placeOrder(order(m, { client_order_id: '1' }));
      await tx1.stop();

      const tx2 = await startTestExchange({ data_dir: dir, terminal_cap: 3 });
      try {
        const c = keyFrom(tx2, k.accountId, k.keyId, k.secret).client;
        await placeCancel(c, '3');
        await placeCancel(c, '4'); // cap 3: the account's oldest ended order (client id 1) is evicted
        const retry = await c.placeOrder(order(m, { client_order_id: '1' })).then((p) => p.order_id, (e: Error) => e.message);
        const resting = (await c.orders({ status: ['resting'] })).orders.map((o) => o.order_id);
        assert.deepEqual(resting, [live.order_id], `the retried placement answered ${retry}`);
      } finally {
        await tx2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
