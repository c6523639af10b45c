// POST /admin/snapshot "writes a snapshot of the state at the current durable
// seq" (src/admin/admin.ts): asked while another snapshot is still being
// written (the periodic one, or another operator's), its answer must still
// hold what was acknowledged before it was asked, not be the running
// snapshot of an older seq. Test process; the exchange runs in it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { startTestExchange } from '../support/exchange.js';
import { newAccount, newMarket, order } from '../support/harness.js';

test('a snapshot asked for while one is being written holds a deposit acknowledged before it was asked', async () => {
  // 4 KiB per capture step: the first snapshot's capture takes many event-loop turns.
  const tx = await startTestExchange({ snapshot_step_bytes: 4096 });
  try {
    const k = await newAccount(tx);
    await tx.admin.setKeyTier(k.keyId, { tier: 'institutional' });
    const m = await newMarket(tx);
    for (let i = 0; i < 100; i++) {
      await k.client.placeBatch(Array.from({ length: 20 }, (_, j) => order(m, { tick: 1 + ((i * 20 + j) % 40) })));
    }
    const first = tx.ex.snapshot();
    // Sequenced while the first snapshot runs; its answer comes once the capture has released the events.
    const dep = await tx.admin.deposit(k.accountId, { amount: '5', ref: 'before-the-second-snapshot' });
    const second = await tx.admin.snapshot();
    const a = await first;
    assert.ok(Number(second.seq) >= Number(dep.seq),
      `POST /admin/snapshot answered seq ${second.seq} (the running snapshot's: ${a.seq}), before the deposit acknowledged at ` +
        `seq ${dep.seq} before it was asked`);
  } finally {
    await tx.stop();
  }
});
