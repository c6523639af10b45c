// dx against a real exchange: arguments that must be read as typed and exit
// codes that must follow the documented table (0 done, 1 refused by the
// server, 2 usage). An argument that starts with one dash is an argument
// unless it is exactly a declared short option (-h): a withdrawal
// destination "-hsbc-1" is sent, not read as -h; a dash inside it does not end
// the options. `cancel-all --group 0` (0 means every group on the wire) is
// refused like `--market 0`. A command name that is an Object.prototype
// property is an unknown command. A key file that is not JSON is refused
// without printing a piece of the secret. `candles --since` past 1970 is a
// usage error. dx runs as a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newKey, newMarket, order } from '../support/harness.js';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

let tx: TestExchange;
let dir: string;

before(async () => {
  tx = await startTestExchange({ demo: false });
  dir = mkdtempSync(join(tmpdir(), 'dx-cli-args-'));
});

after(async () => {
  await tx.stop();
  rmSync(dir, { recursive: true, force: true });
});

function dx(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [DX, ...args], {
      env: { PATH: process.env.PATH ?? '', DX_API_URL: tx.base, DX_ADMIN_URL: tx.adminBase, DX_ADMIN_TOKEN: ADMIN_TOKEN, ...env },
      cwd: dir, timeout: 20_000,
    }, (err, stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stdout, stderr }));
  });
}

test('dx: a positional that starts with a dash is sent as typed (not read as -h, not split at an inner dash)', async () => {
  const a = await newAccount(tx);
  const k = await newKey(tx, a.accountId, ['read', 'trade', 'withdraw']);
  const env = { DX_KEY_ID: String(k.keyId), DX_KEY_SECRET: k.secret };
  const h = await dx(['withdraw', '41', '100', '-hsbc-1', '--json'], env);
  assert.equal(h.code, 0, h.stdout + h.stderr);
  assert.equal((await k.client.withdrawal('41')).destination, '-hsbc-1', 'the withdrawal was requested as typed');
  const d = await dx(['withdraw', '42', '100', '-acct-7', '--json'], env);
  assert.equal(d.code, 0, d.stdout + d.stderr);
  assert.equal(JSON.parse(d.stdout).destination, '-acct-7', '--json after the argument is still an option');
});

test('dx cancel-all --group 0 is a usage error (0 means every group on the wire), like --market 0', async () => {
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  await k.client.placeOrder(order(m, { tick: 30, group_id: 5 }));
  await k.client.placeOrder(order(m, { tick: 31, group_id: 7 }));
  const env = { DX_KEY_ID: String(k.keyId), DX_KEY_SECRET: k.secret };
  assert.equal((await dx(['cancel-all', '--market', '0'], env)).code, 2);
  const r = await dx(['cancel-all', '--group', '0'], env);
  const live = (await k.client.orders({ status: ['resting'] })).orders.length;
  assert.equal(live, 2, `orders of groups 5 and 7 were canceled by --group 0 (exit ${r.code})`);
  assert.equal(r.code, 2, r.stderr);
});

test('dx candles --since longer than the time since 1970 is a usage error (exit 2), not a negative start_ts', async () => {
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  const r = await dx(['candles', String(m), '--since', '99999d'], { DX_KEY_ID: String(k.keyId), DX_KEY_SECRET: k.secret });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /--since 99999d reaches before 1970/);
});

test('dx: a command named like an Object.prototype property is an unknown command (exit 2)', async () => {
  const names = [['constructor'], ['toString'], ['admin', 'constructor'], ['admin', '__proto__'], ['admin', 'account', 'constructor']];
  for (const args of names) {
    const r = await dx(args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}: ${r.stderr.split('\n')[0]}`);
  }
});

test('dx: a key file that is not JSON is refused without printing part of the secret', async () => {
  const secret = Buffer.alloc(32, 7).toString('base64');
  const file = join(dir, 'k.json');
  writeFileSync(file, `{"key_id": 1, "secret": ${secret}}\n`, { mode: 0o600 });
  const r = await dx(['balance', '--key-file', file]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /is not JSON/);
  assert.ok(!r.stderr.includes(secret.slice(0, 8)), r.stderr);
});
