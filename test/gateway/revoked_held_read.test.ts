// A read held for its min_seq (read-your-writes across nodes) and a key
// revocation sequenced while it waits: the read is answered after its thread
// applied the revocation, from a state that holds events sequenced after it.
// A revoked key is refused at once on every lane (docs/rest.md: every request
// authenticates; docs/websocket.md: a revoked key's connection runs nothing
// more); the held read must be refused 401 too, not answered with the
// account's orders as of a seq past the revocation.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order, signedRaw, sleep } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ gateways: 2, demo: false, durability: 'none' });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

it('a min_seq read held across the revocation of its key is refused 401, not answered with what came after', async () => {
  const market = await newMarket(tx);
  const k = await newAccount(tx);
  const other = await newKey(tx, k.accountId);
  const asOf = Number((await k.client.balance()).as_of_seq);
  let revoked: Promise<{ seq: string }> | null = null;
  let placed: Promise<{ seq: string }> | null = null;
  let read: ReturnType<typeof signedRaw> | null = null;
  tx.ex.pipeline.control.setPaused(true);
  try {
    // Held: this node has not applied asOf + 1 (nothing is sequenced while the engine is paused); it waits up to 200 ms.
    read = signedRaw(tx.port, k, 'GET', `/v1/portfolio/orders?min_seq=${asOf + 1}`);
    await sleep(30);
    revoked = tx.admin.revokeKey(k.keyId);
    await sleep(20);
    // Another key of the account places an order: sequenced after the revocation (the control plane's ring goes first).
    placed = other.client.placeOrder(order(market, { tick: 3, qty: 1 }));
    await sleep(30);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  const r = await read!;
  const revokeSeq = Number((await revoked!).seq);
  const orderSeq = Number((await placed!).seq);
  assert.ok(orderSeq > revokeSeq, `the order (seq ${orderSeq}) was sequenced after the revocation (seq ${revokeSeq})`);
  assert.equal(r.status, 401, `the revoked key's held read was answered ${r.status} after the revocation (seq ${revokeSeq}): ${r.text}`);
});
