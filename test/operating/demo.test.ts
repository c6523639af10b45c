// The demo as a newcomer meets it: startDemo against a real exchange prints a
// key and commands; the commands run with the real `dx` binary; the market
// maker quotes both ladders; rounds follow each other. A second start (as
// after a restart) reuses the series and the keys it saved.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { DxClient } from '../../src/client/client.js';
import { startDemo, type RunningDemo } from '../../src/demo/demo.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually } from '../support/harness.js';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));
let tx: TestExchange;
let demo: RunningDemo | null = null;
const logs: Record<string, unknown>[] = [];

before(async () => {
  tx = await startTestExchange({ dispute_window_ms: 500 });
});

after(async () => {
  await demo?.stop();
  await tx.stop();
});

function start(): Promise<RunningDemo> {
  return startDemo({
    apiUrl: tx.base, adminUrl: tx.adminBase, adminToken: tx.ex.admin_token, dataDir: tx.ex.config.data_dir, period_s: 2, quote_ms: 200,
    log: (_level, f) => void logs.push(f),
  });
}

function run(args: string[], env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [DX, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') reject(err);
      else resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
  });
}

test('demo: a live series with a market maker on both ladders, and the three printed commands work as printed', async () => {
  demo = await start();
  const i = demo.instructions;
  assert.match(i, new RegExp(`key_id ${demo.trader.key_id} secret ${demo.trader.secret.replace(/[+/]/g, '\\$&')}`), 'the key is printed');
  const exportLine = /^ {2}export DX_KEY_FILE=(.+)$/m.exec(i);
  assert.ok(exportLine, 'an export line');
  assert.equal(exportLine[1], demo.trader.key_file);
  assert.equal(statSync(demo.trader.key_file).mode & 0o777, 0o600);
  const saved = JSON.parse(readFileSync(demo.trader.key_file, 'utf8'));
  assert.deepEqual(saved, { key_id: demo.trader.key_id, secret: demo.trader.secret, url: tx.base });
  const commands = [...i.matchAll(/^ {2}npx dx (.+?)\s*(?:#.*)?$/gm)].map((m) => m[1]!.split(/\s+/));
  assert.equal(commands.length, 3, 'three commands');

  const c = new DxClient({ baseUrl: tx.base, keyId: demo.trader.key_id, secret: demo.trader.secret });
  const book = await eventually(async () => {
    const b = await c.orderbook(demo!.market_id);
    return b.yes.length === 3 && b.no.length === 3;
  }, 8000, 50);
  assert.ok(book, 'the market maker quotes three levels on each ladder');
  const b = await c.orderbook(demo.market_id);
  assert.ok(b.yes[0]![0] + b.no[0]![0] < 100, 'its quotes do not cross');

  const env = { DX_KEY_FILE: demo.trader.key_file };
  const [show, buy, positions] = commands as [string[], string[], string[]];
  const r1 = await run(show, env);
  assert.equal(r1.code, 0, r1.stderr);
  assert.match(r1.stdout, /ask\s+\d+\s+\d+\s+\(NO bid \d+\)/);
  assert.match(r1.stdout, /bid\s+\d+\s+\d+/);
  let bought = false;
  for (let attempt = 0; attempt < 40 && !bought; attempt++) {
    const r2 = await run(buy, env);
    // Between rounds the market is not trading (409): try again in the next round.
    if (r2.code === 1 && /market_not_trading/.test(r2.stderr)) {
      await new Promise((r) => setTimeout(r, 250));
      continue;
    }
    assert.equal(r2.code, 0, r2.stderr);
    assert.match(r2.stdout, /filled 5, resting 0/);
    bought = true;
  }
  assert.ok(bought, 'the printed order filled against the market maker');
  const r3 = await run(positions, env);
  assert.equal(r3.code, 0, r3.stderr);
  assert.ok(/yes\s+5\s+0/.test(r3.stdout) || /\(none\)/.test(r3.stdout), `the position (or, after settlement, none): ${r3.stdout}`);

  // Rounds follow each other by themselves.
  const first = Number((await c.round(demo.market_id)).round_number);
  assert.ok(
    await eventually(async () => Number((await c.round(demo!.market_id)).round_number) > first, 10_000, 100),
    'a next round opened',
  );
});

test('demo: starting again (as after a restart) reuses the series, the market maker and the trader key', async () => {
  const before_ = demo!;
  await before_.stop();
  demo = null;
  assert.ok(existsSync(`${tx.ex.config.data_dir}/demo.json`));
  const again = await start();
  demo = again;
  assert.equal(again.market_id, before_.market_id);
  assert.equal(again.trader.key_id, before_.trader.key_id);
  assert.ok(logs.some((l) => l.action === 'series_reused'), 'it said so');
  const series = await tx.admin.request<{ series: { category: number; active: boolean }[] }>('GET', '/admin/series');
  assert.equal(series.series.filter((s) => s.category === 1 && s.active).length, 1, 'still one demo series');
});
