// Review repro: DxWebSocket.unsubscribe() forgets the subscription (bySid,
// wanted) before the exchange answers. When the exchange refuses the
// unsubscribe (rate_limited: it costs a read token), the caller gets a
// DxWsError with retry_after_ms; retrying unsubscribe() after the wait sends
// nothing (the sid is no longer known), resolves, and the stream keeps
// coming and keeps its place in the key's subscription cap.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxWebSocket, DxWsError } from '../../src/client/websocket.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, sleep, type Key } from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;

before(async () => {
  tx = await startTestExchange({ demo: false });
  k = await newAccount(tx);
  market = await newMarket(tx);
  // Read bucket: burst 3, 1 token a second (the upgrade and the subscribe take two).
  await tx.admin.setKeyTier(k.keyId, {
    tier: 'custom', read: { sustained_rate_per_s: 1, burst: 3 }, write: { sustained_rate_per_s: 50, burst: 100 },
  });
});

after(async () => {
  await tx.stop();
});

it('client ws: an unsubscribe refused rate_limited and retried after retry_after_ms ends the stream', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  await ws.connect();
  try {
    const subs = await ws.subscribe(['trades'], [market]);
    // Empty the read bucket.
    for (let i = 0; i < 3; i++) await ws.command('unsubscribe', { sids: [999_999] });
    let refused: DxWsError | null = null;
    try {
      await ws.unsubscribe(subs);
    } catch (e) {
      if (!(e instanceof DxWsError)) throw e;
      refused = e;
    }
    assert.ok(refused !== null && refused.codeName === 'rate_limited', 'the first unsubscribe is refused rate_limited');
    await sleep(Number(refused.msg.retry_after_ms ?? 1000) + 1100);
    await ws.unsubscribe(subs); // the retry, as the error asked
    await sleep(1100); // a token for the probe below
    // The exchange still has the subscription: unsubscribing its sid by hand succeeds (an unknown sid is refused).
    const r = await ws.command('unsubscribe', { sids: [subs[0]!.sid] });
    assert.equal(r.type, 'error', `the stream ${subs[0]!.sid} was still subscribed on the exchange after the retried unsubscribe`);
  } finally {
    await ws.close();
  }
});
