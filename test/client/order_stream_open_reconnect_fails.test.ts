// Review repro: DxOrderStream.open(ws) on a shared DxWebSocket between
// reconnects takes the pending reconnect's place (connect() clears its timer).
// When that connect() fails (the exchange unreachable for a moment), nothing
// schedules another attempt: the shared connection never comes back, though
// the exchange is reachable again a moment later.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxWebSocket } from '../../src/client/websocket.js';
import { TcpProxy } from '../support/tcp_proxy.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, type Key } from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let proxy: TcpProxy;
let down = false;

before(async () => {
  tx = await startTestExchange({ demo: false });
  k = await newAccount(tx);
  proxy = new TcpProxy(tx.port);
  // While `down`, every connection through the proxy is dropped at once (the exchange unreachable).
  proxy.server.on('connection', (c) => { if (down) c.destroy(); });
  await proxy.listen();
});

after(async () => {
  await proxy.close();
  await tx.stop();
});

it('client ws: a DxOrderStream.open that fails between reconnects does not end the reconnects', async () => {
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret, backoff: { minMs: 400, maxMs: 400 },
  });
  let dropped = false;
  ws.onDisconnect(() => void (dropped = true));
  await ws.connect();
  try {
    await ws.subscribe(['user']);
    down = true;
    proxy.cut();
    assert.ok(await eventually(() => dropped, 3000), 'the cut was seen');
    // The reconnect's timer is pending: the bot opens its binary stream now, while the exchange is unreachable.
    await assert.rejects(DxOrderStream.open(ws));
    down = false;
    assert.ok(await eventually(() => ws.connected, 3000),
      `the shared connection comes back once the exchange is reachable (${ws.connections} opened)`);
  } finally {
    await ws.close();
  }
});

it('client ws: a second DxOrderStream.open between reconnects, refused layout_mismatch, does not end the reconnects', async () => {
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret, backoff: { minMs: 400, maxMs: 400 },
  });
  // From the second connection on, the exchange speaks another layout: its start_binary answers layout_mismatch.
  const command = ws.command.bind(ws);
  ws.command = (cmd, params) =>
    command(cmd, cmd === 'start_binary' && ws.connections > 1 ? { ...params, layout_fingerprint: '0xdeadbeef' } : params);
  let dropped = false;
  ws.onDisconnect(() => void (dropped = true));
  await ws.connect();
  try {
    await ws.subscribe(['user']);
    await DxOrderStream.open(ws);
    proxy.cut();
    assert.ok(await eventually(() => dropped, 3000), 'the cut was seen');
    // The reconnect's timer is pending: a second stream opens now, and the exchange came back with another layout.
    await assert.rejects(DxOrderStream.open(ws));
    assert.ok(await eventually(() => ws.connected, 3000),
      `the shared connection (its subscriptions, JSON entry) stays up, as after a reconnect's layout_mismatch (${ws.connections} opened)`);
  } finally {
    await ws.close();
  }
});
