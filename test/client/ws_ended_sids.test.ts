// DxWebSocket (src/client/websocket.ts) on one long-lived connection: subscribe /
// unsubscribe cycles (a bot or screen rotating through markets) must not grow
// the connection's bookkeeping without bound. Each cycle of a stream nobody
// else holds gets a new sid from the exchange, so an ended sid that is never
// forgotten stays for the life of the connection.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxWebSocket } from '../../src/client/websocket.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, type Key } from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;

before(async () => {
  tx = await startTestExchange({ demo: false });
  k = await newAccount(tx);
  market = await newMarket(tx);
  await tx.admin.setKeyTier(k.keyId, { tier: 'institutional' });
});

after(async () => {
  await tx.stop();
});

it('client ws: subscribe/unsubscribe cycles on one connection keep its per-connection tables bounded', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
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
