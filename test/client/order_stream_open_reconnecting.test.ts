// Review repro: DxOrderStream.open(ws) on a shared DxWebSocket that is between
// reconnects (its connection dropped, the backoff timer pending) calls
// ws.connect(), which opens a second connection beside the one the pending
// reconnect opens: one of them is orphaned (still open, still feeding the
// client's handlers, never closed by close()) and holds one of the key's
// connection slots for ever.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxWebSocket } from '../../src/client/websocket.js';
import { TcpProxy } from '../support/tcp_proxy.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, order, type Key } from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;
let proxy: TcpProxy;

before(async () => {
  tx = await startTestExchange({ demo: false });
  k = await newAccount(tx);
  market = await newMarket(tx);
  proxy = new TcpProxy(tx.port);
  await proxy.listen();
});

after(async () => {
  await proxy.close();
  await tx.stop();
});

it('client ws: DxOrderStream.open(ws) while the ws waits to reconnect leaves one connection, and close() leaves none', async () => {
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret, backoff: { minMs: 400, maxMs: 400 },
  });
  let dropped = false;
  ws.onDisconnect(() => void (dropped = true));
  await ws.connect();
  let whileUp = '';
  try {
    await ws.subscribe(['user']);
    proxy.cut();
    assert.ok(await eventually(() => dropped, 3000), 'the cut was seen');
    // The reconnect's timer is pending (200-400 ms): the bot opens its binary stream now.
    const s = await DxOrderStream.open(ws);
    assert.equal((await s.place(order(market, { tick: 11 }))).status, 'ok');
    await new Promise((r) => setTimeout(r, 1000)); // the pending reconnect has run by now
    whileUp = `${proxy.open} open, ${ws.connections} opened`;
  } finally {
    await ws.close();
  }
  await new Promise((r) => setTimeout(r, 300));
  assert.deepEqual([whileUp, proxy.open], ['1 open, 2 opened', 0], 'one connection while up (the reconnect), none after close()');
});
