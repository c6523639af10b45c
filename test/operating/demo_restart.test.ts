// The demo across a restart and a failed start (src/demo/demo.ts): after a
// restart with every oracle source stale (the exchange was down longer than
// the staleness limit), the walk continues from the sources' last prices and
// the round that closed meanwhile settles near them, not near 65,000; a demo
// whose start fails after its oracle feeder made the first tick leaves no
// feeder ticking.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DxClient } from '../../src/client/client.js';
import { startDemo, type RunningDemo } from '../../src/demo/demo.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { closeFetchConnections, eventually, sleep } from '../support/harness.js';

function start(tx: TestExchange): Promise<RunningDemo> {
  return startDemo({
    apiUrl: tx.base, adminUrl: tx.adminBase, adminToken: tx.ex.admin_token, dataDir: tx.ex.config.data_dir, period_s: 2, quote_ms: 200,
    log: () => undefined,
  });
}

test('demo: restarted after the oracle went stale, the walk continues from the last prices, not from 65,000', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-demo-review-'));
  const cfg = { data_dir: dir, oracle_staleness_ms: 1000, dispute_window_ms: 500 };
  let tx: TestExchange | null = await startTestExchange(cfg);
  let demo: RunningDemo | null = null;
  try {
    // Where a long-running walk had got to: 30,000.00 (the demo's walk starts from the recovered price).
    for (const source_id of [0, 1, 2]) await tx.admin.oracleTick({ source_id, price: '3000000000000' });
    demo = await start(tx);
    let c = new DxClient({ baseUrl: tx.base, keyId: demo.trader.key_id, secret: demo.trader.secret });
    const r1 = await c.round(demo.market_id);
    assert.ok(Math.abs(Number(r1.strike) / 1e8 - 30_000) < 300, `round ${r1.round_number} strike near 30,000`);
    await demo.stop();
    demo = null;
    await closeFetchConnections();
    await tx.ex.stop();
    tx = null;
    await sleep(2500); // down past the round's close and longer than the staleness limit
    tx = await startTestExchange(cfg);
    demo = await start(tx);
    c = new DxClient({ baseUrl: tx.base, keyId: demo.trader.key_id, secret: demo.trader.secret });
    const ref = Number((await tx.admin.oracle()).price) / 1e8;
    // The round that closed while the exchange was down is proposed from the first fresh ticks, i.e. from the walk's restart.
    const rounds = await eventually(async () => {
      const page = await c.rounds({ category: 1 });
      const r = page.rounds.find((x) => x.round_number === r1.round_number);
      return r !== undefined && r.settle_price !== '0';
    }, 8000, 50);
    assert.ok(rounds, 'the recovered round was proposed');
    const r = (await c.rounds({ category: 1 })).rounds.find((x) => x.round_number === r1.round_number)!;
    const settle = Number(r.settle_price) / 1e8;
    assert.ok(Math.abs(ref - 30_000) / 30_000 < 0.01 && Math.abs(settle - 30_000) / 30_000 < 0.01,
      `the walk continues near 30,000 (reference ${ref}; round ${r.round_number}, strike ${Number(r.strike) / 1e8}, ` +
      `settle_price ${settle}, outcome ${r.outcome})`);
  } finally {
    await demo?.stop();
    await closeFetchConnections();
    await tx?.ex.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('demo: a start that fails after the feeder started leaves no feeder ticking', async () => {
  const tx = await startTestExchange({ dispute_window_ms: 500 });
  try {
    // The trader key file cannot be written (written after the feeder started).
    mkdirSync(join(tx.ex.config.data_dir, 'demo-trader-key.json'));
    await assert.rejects(start(tx));
    const seq0 = (await tx.admin.oracle()).seq;
    await sleep(2500);
    const seq1 = (await tx.admin.oracle()).seq;
    assert.equal(seq1, seq0, 'no oracle ticks after the failed start');
  } finally {
    await closeFetchConnections();
    await tx.stop();
  }
});
