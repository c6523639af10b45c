// A stop that begins while a snapshot's capture holds the control plane's
// events (GatewayCore.holdEvents): a control-plane request held then (its
// completion durable, waiting for the release) must still get its one
// answer, as every held request does at a stop (docs/operations.md,
// Durability: "SIGTERM: listeners close, held requests are answered").
// Test process; the exchange runs in it.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ADMIN_TOKEN, startTestExchange } from '../support/exchange.js';
import { newAccount, newMarket, order, raw, sleep, type RawReply } from '../support/harness.js';

test('stop during a snapshot capture: a deposit whose completion the capture holds is answered', async () => {
  // 4 KiB per capture step: a read model of ~8,000 resting orders takes several hundred event-loop turns to copy.
  const tx = await startTestExchange({ snapshot_step_bytes: 4096 });
  const k = await newAccount(tx);
  await tx.admin.setKeyTier(k.keyId, { tier: 'institutional' });
  const m = await newMarket(tx);
  for (let i = 0; i < 400; i++) {
    await k.client.placeBatch(Array.from({ length: 20 }, (_, j) => order(m, { tick: 1 + ((i * 20 + j) % 40) })));
  }
  // A deposit held by the control plane (the engine paused), then a capture, then the engine goes on: the deposit's
  // completion becomes durable while the capture holds the events.
  tx.ex.pipeline.control.setPaused(true);
  const deposit = raw(tx.ex.admin_port, {
    method: 'POST', target: `/admin/accounts/${k.accountId}/deposits`, body: JSON.stringify({ amount: '5', ref: 'during-capture' }),
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
  }).catch((e: Error) => ({ status: 0, headers: {}, text: e.message, json: undefined }) as RawReply);
  await sleep(100);
  const snap = tx.ex.snapshot().catch((e: Error) => e);
  tx.ex.pipeline.control.setPaused(false);
  // A busier main thread (or a larger model: 1.4 s of capture at a million accounts, docs/operations.md) makes each
  // capture step a longer turn: here about 1 ms, so the capture outlasts the stop's wait for the other threads.
  let busy = true;
  const spin = (): void => {
    if (!busy) return;
    const until = performance.now() + 1;
    while (performance.now() < until) { /* a turn of other work */ }
    setImmediate(spin);
  };
  setImmediate(spin);
  void snap.finally(() => { busy = false; });
  await tx.stop();
  await snap;
  const r = await Promise.race([deposit, sleep(3000).then(() => 'no answer' as const)]);
  assert.notEqual(r, 'no answer', 'the deposit held when the stop began was never answered');
  // The engine sequenced it (the stop drains the rings) and the journal synced it: its durable outcome.
  assert.equal((r as RawReply).status, 201, (r as RawReply).text);
});
