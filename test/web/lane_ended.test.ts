// The trader page's WebSocket client (src/web/lib/lane.ts) on one long-lived
// connection: showing and hiding a stream many times (switching markets) must
// not grow the connection's bookkeeping without bound. Each cycle of a stream
// nobody else holds gets a new sid from the exchange, so an ended sid that is
// never forgotten stays for the life of the connection.

import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { Lane, type WsSigner } from '../../src/web/lib/lane.js';
import { FakeSocket } from '../support/fake_socket.js';

const g = globalThis as unknown as { WebSocket: unknown };
const saved = g.WebSocket;
const api: WsSigner = { wsUrl: async () => 'ws://test/v1/ws?sig=1' };

afterEach(() => {
  g.WebSocket = saved;
  FakeSocket.all = [];
});

test('lane: show/hide cycles of a stream on one connection keep the ended-sid set bounded', async () => {
  g.WebSocket = FakeSocket;
  const lane = new Lane(api);
  lane.start();
  await new Promise((r) => setImmediate(r));
  const ws = FakeSocket.all[0]!;
  ws.open();
  const CYCLES = 500;
  for (let i = 0; i < CYCLES; i++) {
    const sid = 1000 + i; // a new stream each time: its last subscriber left
    const stop = lane.subscribe('orderbook_delta', 7, () => {});
    const sub = ws.last();
    ws.push({ id: sub.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid, market_id: 7 } });
    stop();
    const un = ws.last();
    assert.deepEqual(un, { id: un.id, cmd: 'unsubscribe', params: { sids: [sid] } });
    ws.push({ id: un.id, type: 'ok', msg: { sids: [sid] } });
  }
  const ended = (lane as unknown as { ended: Set<number> }).ended;
  assert.ok(ended.size <= 1, `the lane remembers ${ended.size} ended sids after ${CYCLES} answered unsubscribes`);
  lane.stop();
});
