// DxWebSocket when its connection goes silent without a close (the network
// drops everything, a FIN never arrives): the exchange pings a silent
// connection after idle_timeout_s / 2 and drops it after idle_timeout_s
// (docs/websocket.md, Limits and keepalive), so a connection on which nothing
// (not even a ping) arrived for longer is dead. The client must notice it,
// reconnect and resume, or a subscriber that only reads waits for ever and
// misses every event from then on.

import assert from 'node:assert/strict';
import { createServer, connect as tcpConnect, type Server, type Socket } from 'node:net';
import { after, before, it } from 'node:test';
import { DxWebSocket, type WsMessage } from '../../src/client/websocket.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, order, type Key } from '../support/harness.js';

/** A TCP proxy whose connections the test can black-hole: the exchange's side ends, the client's stays open and silent. */
class Proxy {
  readonly server: Server;
  private readonly pairs: [Socket, Socket][] = [];
  private readonly holes: Socket[] = [];
  port = 0;
  constructor(target: number) {
    this.server = createServer((c) => {
      const up = tcpConnect(target, '127.0.0.1');
      this.pairs.push([c, up]);
      c.pipe(up).pipe(c);
      c.on('close', () => up.destroy()).on('error', () => up.destroy());
      up.on('error', () => c.destroy());
      up.on('close', () => { if (!up.destroyed || !(up as Socket & { blackholed?: boolean }).blackholed) c.destroy(); });
    });
  }

  listen(): Promise<void> {
    return new Promise((r) => this.server.listen(0, '127.0.0.1', () => {
      this.port = (this.server.address() as { port: number }).port;
      r();
    }));
  }

  /** Every connection open now: nothing passes any more, the exchange's side is gone, the client sees no close. */
  blackhole(): void {
    for (const [c, up] of this.pairs.splice(0)) {
      c.unpipe(up);
      up.unpipe(c);
      c.pause();
      this.holes.push(c);
      (up as Socket & { blackholed?: boolean }).blackholed = true;
      up.removeAllListeners('close');
      up.destroy();
    }
  }

  close(): Promise<void> {
    for (const [c, up] of this.pairs) { c.destroy(); up.destroy(); }
    for (const c of this.holes) c.destroy();
    this.server.close();
    return Promise.resolve();
  }
}

let tx: TestExchange;
let k: Key;
let market: number;
let proxy: Proxy;
const IDLE_S = 20;

before(async () => {
  tx = await startTestExchange({ demo: false, ws: { idle_timeout_s: IDLE_S } });
  k = await newAccount(tx);
  market = await newMarket(tx);
  proxy = new Proxy(tx.port);
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
