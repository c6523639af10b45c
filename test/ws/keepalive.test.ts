// WebSocket lane, black box: keepalive (the server pings an idle connection
// and closes one that never answers), and thread shutdown ending every
// connection with 1001. Its own exchange with the shortest idle timeout uWS
// allows (8 s), so this file takes about 10 s; it runs beside the others.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import WebSocket from 'ws';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, signHeaders, sleep, type Key } from '../support/harness.js';
import { WsClient } from './ws_client.js';

let tx: TestExchange;
let alice: Key;
let stopped = false;

before(async () => {
  tx = await startTestExchange({ ws: { idle_timeout_s: 8 }, demo: false });
  alice = await newAccount(tx);
});

after(async () => {
  if (!stopped) await tx.stop();
});

it('ws: the server pings idle connections; one that answers stays, one that does not is closed at the idle timeout', async () => {
  const good = await WsClient.connect(tx, alice);
  assert.equal((await good.call('subscribe', { channels: ['oracle'] })).type, 'subscribed');
  let pings = 0;
  good.ws.on('ping', () => pings++);
  // A client that never answers pings (autoPong off) and never sends.
  const bad = new WebSocket(`ws://127.0.0.1:${tx.port}/v1/ws`, { headers: signHeaders(alice, 'GET', '/v1/ws'), autoPong: false });
  const badClosed = new Promise<number>((resolve) => bad.once('close', (code: number) => resolve(code)));
  bad.on('error', () => { /* the close follows */ });
  await new Promise((resolve) => bad.once('open', resolve));
  const t0 = Date.now();
  const code = await badClosed;
  const waited = Date.now() - t0;
  // uWS drops it without a close frame once idle_timeout_s passed with nothing received.
  assert.equal(code, 1006);
  assert.ok(waited > 6000 && waited < 14_000, `closed after ${waited} ms`);
  assert.ok(pings >= 1, 'the answering client was pinged');
  assert.equal(good.closed, null, 'the answering client is still connected');
  await good.close();
});

it('ws: stopping the exchange ends every connection with 1001', async () => {
  const c = await WsClient.connect(tx, alice);
  await c.call('subscribe', { channels: ['user'] });
  const t0 = Date.now();
  const stopping = tx.stop();
  const closed = await c.waitClose(5000);
  assert.equal(closed.code, 1001);
  await stopping;
  stopped = true;
  assert.ok(Date.now() - t0 < 5000);
  await sleep(10);
});
