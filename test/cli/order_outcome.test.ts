// `dx order` when no answer arrives within --timeout-ms: the placement was
// sent and may still be sequenced (here it is: the engine was paused, then
// resumed), so dx must not say the exchange could not be reached (exit 3,
// safe to repeat); it says the outcome is unknown (exit 4). A port nobody
// listens on, one fetch will not connect to, or a plain port named https://,
// is still exit 3. Real exchange in-process; dx runs as a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/lib/free_port.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, type Key } from '../support/harness.js';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ demo: false });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

function dx(k: Key, url: string, args: string[]): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [DX, ...args], {
      env: { PATH: process.env.PATH ?? '', DX_API_URL: url, DX_KEY_ID: String(k.keyId), DX_KEY_SECRET: k.secret },
      timeout: 20_000,
    }, (err, _out, stderr) => resolve({ code: err ? (err.code as number) : 0, stderr }));
  });
}

test('dx: an order without an answer within --timeout-ms exits 4 (outcome unknown), not 3 (unreachable); it was placed', async () => {
  const k = await newAccount(tx);
  const market = await newMarket(tx);
  tx.ex.pipeline.control.setPaused(true);
  let run: { code: number; stderr: string };
  try {
    run = await dx(k, tx.base, ['order', 'buy', 'yes', String(market), '40', '3', '--client-order-id', '777001', '--timeout-ms', '1500']);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  // The placement was sent: it is sequenced once the engine runs again.
  assert.ok(await eventually(async () => (await k.client.orders({ client_order_id: '777001' })).orders.length === 1, 5000),
    'the order was placed');
  assert.equal(run.code, 4, run.stderr);
  assert.doesNotMatch(run.stderr, /cannot reach the exchange/, run.stderr);
  assert.match(run.stderr, /no answer from the exchange: no answer within the timeout/, run.stderr);
  assert.match(run.stderr, /may or may not have been made/, run.stderr);
  const down = await dx(k, `http://127.0.0.1:${await freePort()}`, ['order', 'buy', 'yes', String(market), '40', '3']);
  assert.equal(down.code, 3, down.stderr);
  assert.match(down.stderr, /cannot reach the exchange: connection refused/);
  // A port fetch refuses to connect to (the fetch standard's block list) was never sent either.
  const blocked = await dx(k, 'http://127.0.0.1:6000', ['order', 'buy', 'yes', String(market), '40', '3']);
  assert.equal(blocked.code, 3, blocked.stderr);
  assert.match(blocked.stderr, /cannot reach the exchange: bad port/);
  // https:// for the plain-HTTP port: the TLS handshake fails before the request is written.
  const tls = await dx(k, `https://127.0.0.1:${tx.port}`, ['order', 'buy', 'yes', String(market), '40', '3']);
  assert.equal(tls.code, 3, tls.stderr);
  assert.match(tls.stderr, /cannot reach the exchange: the TLS handshake failed: the port does not speak TLS/);
});
