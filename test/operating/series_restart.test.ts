// A series survives a restart: its automation is journaled state, not a
// timer of the process. The exchange is stopped while a round trades, stays
// down past the round's close, and is started again on the same data
// directory: the recovered round closes, is proposed and settled (paying the
// winner) by the new process's clock, and the next round opens.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { AdminClient } from '../../src/client/admin_client.js';
import { DxClient } from '../../src/client/client.js';
import type { RunningExchange } from '../../src/main/exchange.js';
import { startTestExchange } from '../support/exchange.js';
import { closeFetchConnections, eventually, sleep } from '../support/harness.js';

async function start(dir: string): Promise<{ ex: RunningExchange; admin: AdminClient }> {
  const tx = await startTestExchange({ data_dir: dir, demo: false, dispute_window_ms: 500, oracle_staleness_ms: 60_000, oracle_quorum: 1 });
  return { ex: tx.ex, admin: tx.admin };
}

async function stop(ex: RunningExchange): Promise<void> {
  await closeFetchConnections();
  await ex.stop();
}

test('series restart: a round that closed while the exchange was down is proposed, settled and followed by the next after ' +
  'recovery', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-series-restart-'));
  let current: RunningExchange | null = null;
  try {
    const first = await start(dir);
    current = first.ex;
    await first.admin.oracleTick({ source_id: 0, price: '6000000000000' });
    const series = await first.admin.createSeries({ category: 3, title: 'restart me', period_s: 2, position_limit: 0, fee_schedule_id: 0 });
    assert.equal(series.round_number, '1');
    const keys: { id: number; key: { key_id: number; secret: string } }[] = [];
    for (let i = 0; i < 2; i++) {
      const { account_id } = await first.admin.createAccount();
      await first.admin.deposit(account_id, { amount: '10000', ref: 'r' });
      keys.push({ id: account_id, key: await first.admin.createKey(account_id, ['read', 'trade']) });
    }
    const client = (port: number, i: number): DxClient =>
      new DxClient({ baseUrl: `http://127.0.0.1:${port}`, keyId: keys[i]!.key.key_id, secret: keys[i]!.key.secret });
    await client(first.ex.port, 0).placeOrder({ market_id: series.market_id, side: 'buy', outcome: 'yes', tick: 30, qty: 10 });
    const fill = await client(first.ex.port, 1).placeOrder({ market_id: series.market_id, side: 'buy', outcome: 'no', tick: 70, qty: 10 });
    assert.equal(fill.filled_qty, 10);
    const r1 = await client(first.ex.port, 0).round(series.market_id);
    await stop(first.ex);
    current = null;

    // Down past the close.
    const wait = Number(BigInt(r1.close_ts) / 1_000_000n) - Date.now() + 300;
    if (wait > 0) await sleep(wait);

    const second = await start(dir);
    current = second.ex;
    const listed = await second.admin.listSeries();
    assert.deepEqual(
      listed.series.map((s) => [s.category, s.market_id, s.active, s.period_s]),
      [[3, series.market_id, true, 2]],
    );
    const c0 = client(second.ex.port, 0);
    let last = '';
    const settled = await eventually(
      async () => {
        const page = await c0.rounds({ category: 3 });
        last = JSON.stringify(page.rounds);
        return (
          page.rounds.some((r) => r.round_number === '1' && r.status === 'settled') &&
          page.rounds.some((r) => r.round_number === '2' && r.status === 'trading')
        );
      },
      8000,
      50,
    );
    assert.ok(settled, `round 1 settled and round 2 trading after recovery: ${last}`);
    const one = (await c0.rounds({ category: 3 })).rounds.find((r) => r.round_number === '1')!;
    assert.deepEqual([one.outcome, one.settle_price], ['yes', '6000000000000'], 'the reference equals the strike: yes');
    assert.ok(BigInt(one.proposed_ts) > BigInt(one.close_ts), 'proposed by the new process, after the close');
    assert.equal((await c0.balance()).available, String(10000 - 300 + 1000), 'the YES holder was paid');
    assert.equal((await client(second.ex.port, 1).balance()).available, String(10000 - 700));
  } finally {
    if (current) await stop(current);
    rmSync(dir, { recursive: true, force: true });
  }
});
