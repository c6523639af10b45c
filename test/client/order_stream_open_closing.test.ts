// Review repro: DxOrderStream.open(ws) on a shared DxWebSocket whose
// connection is closing (the exchange's close frame arrived, the socket's
// close event has not yet: `connected` is false) calls ws.connect(), which
// installs a new connection over the closing one. When the old socket's close
// event comes, onClose ignores it (it is no longer this.ws): the binary orders
// (and JSON commands) held on it are never failed, their promises pending for
// ever, instead of DxConnectionLost. A fake exchange (ws package) holds the
// order and the close handshake.

import assert from 'node:assert/strict';
import { it } from 'node:test';
import { WebSocketServer, type WebSocket as ServerSocket } from 'ws';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxConnectionLost, DxWebSocket } from '../../src/client/websocket.js';
import { eventually } from '../support/harness.js';

it('client ws: an order held on a closing connection fails DxConnectionLost when a stream opens meanwhile', async () => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.on('listening', r));
  const socks: ServerSocket[] = [];
  const binary: number[] = [];
  wss.on('connection', (s) => {
    const n = socks.push(s) - 1;
    s.on('message', (d, isBinary) => {
      if (isBinary) return void binary.push(n); // held: never answered
      const m = JSON.parse(String(d)) as { id: number; cmd: string };
      if (m.cmd !== 'start_binary') return;
      const msg = { layout_fingerprint: '0x0', account_id: 7, max_records_per_frame: 128, max_in_flight: 100 };
      s.send(JSON.stringify({ id: m.id, type: 'ok', msg }));
    });
  });
  const url = `http://127.0.0.1:${(wss.address() as { port: number }).port}`;
  const ws = new DxWebSocket({ url, keyId: 1, secret: Buffer.alloc(32).toString('base64'), backoff: { minMs: 10, maxMs: 20 } });
  try {
    const a = await DxOrderStream.open(ws);
    let outcome: unknown = 'pending';
    a.place({ market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 1 }).then((r) => (outcome = r), (e: unknown) => (outcome = e));
    assert.ok(await eventually(() => binary.length === 1, 2000), 'the order reached the exchange');
    // The exchange closes (say 4008) and its side stops reading: the client answers the close frame and waits for the TCP close.
    socks[0]!.close(4008, 'slow consumer');
    (socks[0] as unknown as { _socket: { pause(): void } })._socket.pause();
    assert.ok(await eventually(() => !ws.connected, 2000), 'the client saw the close frame');
    const b = await DxOrderStream.open(ws); // a second bot component opens its stream now
    assert.equal(socks.length, 2);
    socks[0]!.terminate(); // the old connection's TCP close arrives
    await eventually(() => outcome !== 'pending', 2000);
    assert.ok(outcome instanceof DxConnectionLost, `the order held on the lost connection: ${String(outcome)}`);
    void b;
  } finally {
    await ws.close();
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(() => r(undefined)));
  }
});
