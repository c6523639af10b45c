// DxWebSocket.unsubscribe on one long-lived connection: subscribe /
// unsubscribe cycles (a bot or screen rotating through markets) must not grow
// the connection's bookkeeping without bound (each cycle of a stream nobody
// else holds gets a new sid, so an ended sid never forgotten stays for the
// connection's life); and an unsubscribe refused rate_limited (it costs a
// read token) keeps its streams, so the retry after retry_after_ms ends them.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxWebSocket, DxWsError } from '../../src/client/websocket.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, sleep, type Key } from '../support/harness.js';

let tx: TestExchange;
/** A key whose buckets never run dry. */
let busy: Key;
/** A key whose read bucket holds 3 tokens and refills 1 a second (the upgrade and a subscribe take two). */
let slow: Key;
let market: number;

before(async () => {
  tx = await startTestExchange({ demo: false });
  busy = await newAccount(tx);
  slow = await newAccount(tx);
  market = await newMarket(tx);
  await tx.admin.setKeyTier(busy.keyId, { tier: 'institutional' });
  await tx.admin.setKeyTier(slow.keyId, {
    tier: 'custom', read: { sustained_rate_per_s: 1, burst: 3 }, write: { sustained_rate_per_s: 50, burst: 100 },
  });
});

after(async () => {
  await tx.stop();
});

it('client ws: subscribe/unsubscribe cycles on one connection keep its per-connection tables bounded', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: busy.keyId, secret: busy.secret });
  await ws.connect();
  const internals = ws as unknown as { endedSids: Set<number>; bySid: Map<number, unknown>; held: Map<number, unknown> };
  const CYCLES = 500;
  const sids = new Set<number>();
  try {
    for (let i = 0; i < CYCLES; i++) {
      const subs = await ws.subscribe(['orderbook_delta'], [market]);
      for (const s of subs) sids.add(s.sid);
      await ws.unsubscribe(subs);
    }
    await new Promise((r) => setImmediate(r));
    assert.equal(sids.size, CYCLES, 'each cycle got a fresh sid (the stream ended with its last subscriber)');
    assert.equal(internals.bySid.size, 0);
    assert.equal(internals.held.size, 0);
    assert.ok(internals.endedSids.size <= 1, `endedSids holds ${internals.endedSids.size} sids after ${CYCLES} cycles`);
  } finally {
    await ws.close();
  }
});

it('client ws: an unsubscribe refused rate_limited and retried after retry_after_ms ends the stream', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: slow.keyId, secret: slow.secret });
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
