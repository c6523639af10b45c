// Review repro: a DxOrderStream whose start_binary is refused layout_mismatch
// on a reconnect (the exchange came back from a deploy with another native
// layout) fails the whole reconnect: DxWebSocket ends that connection and
// tries again, for ever, so the subscriptions and the JSON order entry that
// share the connection are gone too, and nobody is told why (every binary
// command fails DxConnectionLost). A refusal on the first open is already
// kept out of later reconnects (order_stream.ts, `refused`).

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxWebSocket, DxWsError } from '../../src/client/websocket.js';
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

it('client ws: a start_binary refused layout_mismatch on a reconnect leaves the shared connection up', async () => {
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret, backoff: { minMs: 20, maxMs: 100 },
  });
  // From the second connection on, the exchange speaks another layout: its start_binary answers layout_mismatch.
  const command = ws.command.bind(ws);
  ws.command = (cmd, params) =>
    command(cmd, cmd === 'start_binary' && ws.connections > 1 ? { ...params, layout_fingerprint: '0xdeadbeef' } : params);
  await ws.connect();
  try {
    await ws.subscribe(['user']);
    const s = await DxOrderStream.open(ws);
    assert.equal((await s.place(order(market, { tick: 15 }))).status, 'ok');
    proxy.cut();
    assert.ok(await eventually(() => ws.connections >= 2, 5000), 'reconnected');
    await new Promise((r) => setTimeout(r, 1500));
    assert.ok(ws.connected && ws.connections <= 3,
      `the connection stays up after the reconnect (connected ${ws.connected}, ${ws.connections} connections opened)`);
    assert.equal((await ws.placeOrder(order(market, { tick: 15 }))).status, 'resting', 'JSON order entry on the same connection');
    await assert.rejects(s.place(order(market, { tick: 15 })), (e: unknown) => e instanceof DxWsError && e.codeName === 'layout_mismatch',
      'the binary stream says why it is refused');
  } finally {
    await ws.close();
  }
});
