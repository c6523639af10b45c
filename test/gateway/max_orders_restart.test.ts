// REST lane, black box: --max-orders lowered at a restart on the same data
// directory, below the live orders the journal holds. Nothing evicts a live
// order, so the replay must keep them all (the bound is over until cancels
// and fills bring the live orders under it, and placements are refused
// 503 order_capacity_exceeded meanwhile); recovery must not stop on them.
// Test process; the exchange runs in it, twice on one data directory.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { startTestExchange } from '../support/exchange.js';
import { keyFrom, newAccount, newMarket, order, rejects } from '../support/harness.js';

test('max_orders lowered at a restart below the live orders: the exchange starts, keeps them, and refuses new ones',
  { timeout: 60_000 }, async () => {
    const dir = mkdtempSync(join(tmpdir(), 'dx-maxo-'));
    try {
      const tx1 = await startTestExchange({ data_dir: dir, demo: false, max_orders: 10 });
      const m = await newMarket(tx1);
      const k = await newAccount(tx1);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await k.client.placeOrder(order(m, { tick: 10 + i }))).order_id);
      await tx1.stop();

      const tx2 = await startTestExchange({ data_dir: dir, demo: false, max_orders: 3 });
      try {
        const c = keyFrom(tx2, k.accountId, k.keyId, k.secret).client;
        assert.deepEqual((await c.orders({ status: ['resting'] })).orders.map((o) => o.order_id).sort(), ids.sort());
        await rejects(c.placeOrder(order(m, { tick: 30 })), 503, 'order_capacity_exceeded', { num: 279, origin: 'core' });
        // Cancels bring the live orders under the bound: placements go through again.
        await c.cancelBatch(ids.slice(0, 3));
        assert.equal((await c.placeOrder(order(m, { tick: 30 }))).status, 'resting');
      } finally {
        await tx2.stop();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
