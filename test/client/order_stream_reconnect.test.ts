// DxOrderStream on a shared DxWebSocket across reconnects, through a TCP
// proxy the tests cut: open(ws) while the ws waits to reconnect takes the
// reconnect's place (it opened a second connection beside it, one left open
// for good) and, when it fails, leaves the next attempt to the backoff (it
// ended the reconnects for good); a start_binary refused layout_mismatch on a
// reconnect (the exchange came back with another native layout) leaves the
// connection up for its subscriptions and JSON commands (it was torn down and
// reopened in a loop) and the stream's commands fail with the refusal.

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
/** While true, every connection through the proxy is dropped at once (the exchange unreachable). */
let down = false;

before(async () => {
  tx = await startTestExchange({ demo: false });
  k = await newAccount(tx);
  market = await newMarket(tx);
  proxy = new TcpProxy(tx.port);
  proxy.server.on('connection', (c) => { if (down) c.destroy(); });
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
    down = false;
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
