// A stop while WebSocket order commands (JSON or binary) are in flight: like a held REST
// request (test/gateway/shutdown.test.ts), each command held when the stop
// begins gets its one answer (its durable outcome, or 504 at its budget)
// before the connection closes with 1001 (docs/operations.md, Durability:
// "SIGTERM: listeners close, held requests are answered").

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder } from '../../src/client/binary_codec.js';
import { startTestExchange } from '../support/exchange.js';
import { newAccount, newMarket, order, sleep, type Key } from '../support/harness.js';
import { WsClient } from './ws_client.js';

/**
 * A connection of a fresh exchange sends (`send`, with the engine paused) commands that are held; the stop begins, and
 * the engine goes on 100 ms into it (well within the budget). Returns the connection once it closed 1001.
 */
async function sentThenStopped(binary: boolean, send: (c: WsClient, k: Key, market: number) => void): Promise<WsClient> {
  const tx = await startTestExchange({ demo: false, response_budget_ms: 1000 });
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  const c = await WsClient.connect(tx, k);
  if (binary) assert.equal((await c.call('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT })).type, 'ok');
  tx.ex.pipeline.control.setPaused(true);
  send(c, k, m);
  await sleep(50);
  const stopped = tx.stop();
  await sleep(100);
  tx.ex.pipeline.control.setPaused(false);
  const closed = await c.waitClose();
  await stopped;
  assert.equal(closed.code, 1001);
  return c;
}

test('stop: a JSON order command in flight when the stop begins is answered before the 1001 close', async () => {
  let id = 0;
  const c = await sentThenStopped(false, (ws, _k, m) => {
    id = ws.send('place_order', { ...order(m), client_order_id: '77' });
  });
  const answer = c.all.find((x) => x.id === id);
  assert.ok(answer !== undefined, `no order_result before the close; received ${JSON.stringify(c.all)}`);
  assert.equal(answer.status, 201, JSON.stringify(answer)); // sequenced and durable within the budget
});

test('stop: binary placements in flight when the stop begins are answered before the 1001 close', async () => {
  const c = await sentThenStopped(true, (ws, k, m) => {
    const e = new FrameEncoder(k.accountId);
    for (let i = 1; i <= 3; i++) e.place(i, order(m, { tick: 2, qty: 1 }));
    ws.sendRaw(Buffer.from(e.bytes()), true);
  });
  const rs = c.frames.flatMap((f) => decodeResults(f));
  assert.equal(rs.length, 3, `answers before the close: ${JSON.stringify(rs.map((r) => r.status))}`);
});
