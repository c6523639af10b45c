// A batch refused rate_limited: its details.retry_after_ms must say when the
// whole batch (one write token per item) can be admitted, so a client that
// waits what the 429 says gets in. Black box over REST, one gateway thread
// being enough (the buckets are the same on every thread).

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxApiError } from '../../src/client/errors.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, sleep } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ gateways: 2, demo: false });
  await newMarket(tx);
});

after(async () => {
  await tx.stop();
});

const ids = (from: number, n: number): string[] => Array.from({ length: n }, (_, i) => String(from + i));

it('batch retry hint: a client that waits retry_after_ms after each 429 gets its batch admitted', async () => {
  const k = await newAccount(tx);
  // Write bucket: burst 4, 2 tokens a second. A batch of 4 needs 2 s after the bucket is emptied.
  await tx.admin.setKeyTier(k.keyId, {
    tier: 'custom', read: { sustained_rate_per_s: 100, burst: 100 }, write: { sustained_rate_per_s: 2, burst: 4 },
  });
  await k.client.cancelBatch(ids(5000, 4)); // the whole burst
  const hints: number[] = [];
  const t0 = Date.now();
  for (;;) {
    try {
      await k.client.cancelBatch(ids(6000, 4));
      break;
    } catch (e) {
      if (!(e instanceof DxApiError) || e.code !== 'rate_limited') throw e;
      hints.push(e.retryAfterMs!);
      assert.ok(Date.now() - t0 < 6000, `still refused after ${Date.now() - t0} ms, waiting each hint: ${hints.join(', ')}`);
      await sleep(e.retryAfterMs!);
    }
  }
  // 4 tokens at 2/s are back 2 s after the drain; a correct hint admits the batch by the second try.
  assert.ok(hints.length <= 2, `admitted after ${hints.length} refusals, hints ${hints.join(', ')}`);
});
