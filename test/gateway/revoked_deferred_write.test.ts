// A write that is never shed (a withdrawal request, a cancel) waits in the
// gateway core's queue when its command ring has no room (src/gateway/core.ts
// hold -> deferred), and is written at the end of a later drain, after the
// events of that drain were applied. When its key was revoked meanwhile, it
// must not be written (a revoked key is refused from the moment its thread
// applies the revocation, as a held min_seq read is refused): over REST (a
// withdrawal) and over the binary WebSocket lane (a cancel), which calls
// hold() outside invokeRoute. Test process; the exchange runs in it.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CLIENT_LAYOUT_FINGERPRINT, FrameEncoder } from '../../src/client/binary_codec.js';
import { DxApiError } from '../../src/client/errors.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newKey, newMarket, order, sleep } from '../support/harness.js';
import { WsClient } from '../ws/ws_client.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ gateways: 1, demo: false, durability: 'none', response_budget_ms: 100 });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

/**
 * With the engine paused: cancels of unknown orders (never shed) from a key of a tier that does not throttle fill the
 * 1 MiB command ring and queue behind it (1.5 rings' worth); then `victim()` sends its write, which waits behind them,
 * and its key is revoked. Returns the revocation's seq, once the engine goes on.
 */
async function revokedWhileQueued(keyId: number, victim: () => void): Promise<number> {
  const filler = await newAccount(tx);
  await tx.admin.setKeyTier(filler.keyId, {
    tier: 'custom',
    read: { sustained_rate_per_s: 10_000_000, burst: 10_000_000 },
    write: { sustained_rate_per_s: 10_000_000, burst: 10_000_000 },
  });
  tx.ex.pipeline.control.setPaused(true);
  let revoked: Promise<{ seq: string }> | null = null;
  try {
    let next = 1;
    const lanes = Array.from({ length: 64 }, async () => {
      while (next <= 2000) {
        const b = next++;
        const ids = Array.from({ length: 20 }, (_, j) => String(b * 100 + j));
        // Answered 504 once the budget passes (the engine is paused): expected, they only fill the ring.
        await filler.client.cancelBatch(ids).catch((e: unknown) => {
          if (!(e instanceof DxApiError)) throw e;
        });
      }
    });
    await Promise.all(lanes);
    victim();
    await sleep(30);
    revoked = tx.admin.revokeKey(keyId);
    await sleep(30);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  return Number((await revoked!).seq);
}

it('a withdrawal waiting for room in the command ring is not sequenced after its key was revoked', async () => {
  const victim = await newAccount(tx, { scopes: ['read', 'trade', 'withdraw'] });
  const reader = await newKey(tx, victim.accountId, ['read']);
  let withdrawal: Promise<unknown> | null = null;
  // The withdrawal is authenticated now and waits behind the cancels (answered 504 after the budget; still queued).
  const revokeSeq = await revokedWhileQueued(victim.keyId, () => {
    withdrawal = victim.client.withdraw({ client_withdrawal_id: '4242', amount: '1000', destination: 'attacker' })
      .catch((e: unknown) => e);
  });
  const w = await withdrawal!;
  // Wait for the queue to drain, then look for the withdrawal.
  let found = null as { seq: string } | null;
  await eventually(async () => {
    try {
      found = await reader.client.withdrawal('4242');
      return true;
    } catch (e) {
      if (e instanceof DxApiError && e.status === 404) return false;
      throw e;
    }
  }, 5000, 50);
  const answered = w instanceof DxApiError ? `${w.status} ${w.code}` : JSON.stringify(w);
  assert.ok(found === null || Number(found.seq) < revokeSeq,
    `the revoked key's withdrawal was sequenced at seq ${found === null ? '' : found.seq}, after its revocation at seq ${revokeSeq} ` +
      `(its request was answered ${answered})`);
});

it('binary: a cancel waiting for room in the command ring is not sequenced after its key was revoked', async () => {
  const market = await newMarket(tx);
  const victim = await newAccount(tx);
  const reader = await newKey(tx, victim.accountId, ['read']);
  const placed = await victim.client.placeOrder(order(market, { tick: 2, qty: 1 }));
  const bin = await WsClient.connect(tx, victim);
  assert.equal((await bin.call('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT })).type, 'ok');
  const revokeSeq = await revokedWhileQueued(victim.keyId, () => {
    const e = new FrameEncoder(victim.accountId);
    e.cancel(1, placed.order_id);
    bin.sendRaw(Buffer.from(e.bytes()), true);
  });
  await sleep(3000); // long enough for the queue behind the ring to drain
  const o = (await reader.client.orders({})).orders.find((x) => x.order_id === placed.order_id)!;
  assert.ok(o.reason === '' || Number(o.last_update_seq) < revokeSeq,
    `the revoked key's binary cancel was sequenced at seq ${o.last_update_seq} (reason ${o.reason}), after its revocation ` +
      `at seq ${revokeSeq}`);
});
