// WebSocket binary order entry and a key revocation: once a thread applies
// the revocation, the connection is sent no private message sequenced after
// it (docs/websocket.md, close code 4003), as the JSON lane does. A binary
// placement held while the engine is paused, then sequenced right after the
// revocation (the control plane's ring comes before the gateways' in a
// round), must not be answered on the revoked connection. Whether the
// placement's completion is drained before the connection's close is a race,
// so the scenario runs several times.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder } from '../../src/client/binary_codec.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order, sleep } from '../support/harness.js';
import { WsClient } from './ws_client.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ demo: false, durability: 'none' });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

/** One round: the answers (seq) each lane sent its revoked connection, and the revocation's seq. */
async function round(market: number): Promise<{ revokeSeq: number; binary: number[]; json: number }> {
  const k = await newAccount(tx);
  const reader = await newKey(tx, k.accountId, ['read']);
  const bin = await WsClient.connect(tx, k);
  assert.equal((await bin.call('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT })).type, 'ok');
  const json = await WsClient.connect(tx, k);
  const closes = [bin.waitClose(10_000), json.waitClose(10_000)];
  let revoked: Promise<{ seq: string }> | null = null;
  tx.ex.pipeline.control.setPaused(true);
  try {
    const e = new FrameEncoder(k.accountId);
    for (let i = 1; i <= 4; i++) e.place(i, order(market, { tick: 2, qty: 1 }));
    bin.sendRaw(Buffer.from(e.bytes()), true);
    json.send('place_order', { ...order(market, { tick: 2, qty: 1 }) });
    await sleep(100);
    // Held by the paused engine too; the control plane's ring is read before the gateways' in the next round.
    revoked = tx.admin.revokeKey(k.keyId);
    await sleep(200);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  const revokeSeq = Number((await revoked!).seq);
  assert.deepEqual((await Promise.all(closes)).map((c) => c.code), [4003, 4003]);
  // Every placement was sequenced after the revocation (the engine does not know keys).
  const placed = (await reader.client.orders({})).orders.map((o) => Number(o.created_seq));
  assert.equal(placed.length, 5);
  for (const s of placed) assert.ok(s > revokeSeq, `placement seq ${s} after revocation seq ${revokeSeq}`);
  return {
    revokeSeq,
    binary: bin.frames.flatMap((f) => decodeResults(f)).map((r) => Number(r.seq)),
    json: json.all.filter((m) => m.type === 'order_result').length,
  };
}

it('binary: no answer sequenced after the key\'s revocation reaches the revoked connection (JSON sends none either)', async () => {
  const market = await newMarket(tx);
  const leaks: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await round(market);
    assert.equal(r.json, 0, 'JSON: no answer after the revocation');
    if (r.binary.length > 0) leaks.push(`round ${i}: revocation at seq ${r.revokeSeq}, binary answers at seqs ${r.binary.join(', ')}`);
  }
  assert.deepEqual(leaks, [], 'binary answers sequenced after the revocation were sent to the revoked connection');
});
