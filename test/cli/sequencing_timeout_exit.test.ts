// `dx order` answered 504 `sequencing_timeout`: the exchange saw the
// placement but not its outcome within the response budget; it may still be
// sequenced (here it is: the engine was paused, then resumed). dx must not
// exit 1 ("refused by the server", which a script reads as "not placed"):
// the documented code for "sent, outcome unknown" is 4. Real exchange
// in-process; dx runs as a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, type Key } from '../support/harness.js';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ demo: false, response_budget_ms: 500 });
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

function dx(k: Key, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [DX, ...args], {
      env: { PATH: process.env.PATH ?? '', DX_API_URL: tx.base, DX_KEY_ID: String(k.keyId), DX_KEY_SECRET: k.secret },
      timeout: 20_000,
    }, (err, stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stdout, stderr }));
  });
}

test('dx: an order answered 504 sequencing_timeout exits 4 (outcome unknown), not 1 (refused); it was placed', async () => {
  const k = await newAccount(tx);
  const market = await newMarket(tx);
  tx.ex.pipeline.control.setPaused(true);
  let run: { code: number; stdout: string; stderr: string };
  try {
    run = await dx(k, ['order', 'buy', 'yes', String(market), '40', '3', '--client-order-id', '888001']);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  assert.match(run.stderr, /504 sequencing_timeout/, run.stderr);
  assert.ok(await eventually(async () => (await k.client.orders({ client_order_id: '888001' })).orders.length === 1, 5000),
    'the order was placed after all');
  assert.equal(run.code, 4, `exit ${run.code}: ${run.stderr}`);
});
