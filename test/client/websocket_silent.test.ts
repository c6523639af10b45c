// DxWebSocket when its connection goes silent without a close (the network
// drops everything, a FIN never arrives): the exchange pings a silent
// connection after idle_timeout_s / 2 and drops it after idle_timeout_s
// (docs/websocket.md, Limits and keepalive), so a connection on which nothing
// (not even a ping) arrived for longer is dead. The client must notice it,
// reconnect and resume, or a subscriber that only reads waits for ever and
// misses every event from then on.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { DxWebSocket, type WsMessage } from '../../src/client/websocket.js';
import { TcpProxy } from '../support/tcp_proxy.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, order, type Key } from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;
let proxy: TcpProxy;
const IDLE_S = 20;

before(async () => {
  tx = await startTestExchange({ demo: false, ws: { idle_timeout_s: IDLE_S } });
  k = await newAccount(tx);
  market = await newMarket(tx);
  proxy = new TcpProxy(tx.port);
  await proxy.listen();
});

after(async () => {
  await proxy.close();
  await tx.stop();
});

it('client ws: a connection that went silent (no close) is given up and the user channel resumes on a new one', async () => {
  // A ping every 500 ms: the client gives the link up after a second without an answer (default 10 s).
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret, backoff: { minMs: 20, maxMs: 200 }, keepaliveMs: 500,
  });
  const user: WsMessage[] = [];
  ws.onData((m, sub) => { if (sub.channel === 'user') user.push(m); });
  await ws.connect();
  try {
    await ws.subscribe(['user']);
    proxy.blackhole();
    const p = await k.client.placeOrder(order(market, { tick: 33 }));
    // Well under the exchange's own idle limit: only the client's keepalive can have found the link dead by then.
    const ok = await eventually(() => user.some((m) => m.type === 'order' && m.msg.order_id === p.order_id), (IDLE_S * 1000) / 2);
    assert.ok(ok, `the order placed after the link went silent never arrived; connections ${ws.connections}, connected ${ws.connected}`);
  } finally {
    await proxy.close();
    await ws.close();
  }
});
