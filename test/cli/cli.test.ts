// The `dx` binary (node dist/src/cli/dx.js, as package.json "bin" runs it)
// against a real exchange: operator commands over the control plane, signed
// client commands with a key from the environment or a key file, tables and
// --json, and the exit codes: 0 done, 1 refused by the server, 2 usage or
// configuration, 3 unreachable, 4 no answer (tested in order_outcome).

import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import { freePort } from '../../src/lib/free_port.js';
import { dollars } from '../../src/lib/units.js';
import { newAccount, newMarket, order } from '../support/harness.js';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

let tx: TestExchange;
let dir: string;
let baseEnv: Record<string, string>;

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the binary; an env value of '' removes that variable. */
function dx(args: string[], env: Record<string, string> = {}, input?: string): Promise<Run> {
  const full: Record<string, string> = { ...baseEnv, ...env };
  for (const k of Object.keys(full)) if (full[k] === '') delete full[k];
  return new Promise((resolve, reject) => {
    const child = execFile(process.execPath, [DX, ...args], { env: full, cwd: dir, timeout: 20_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') {
        reject(err);
        return;
      }
      resolve({ code: err ? (err.code as number) : 0, stdout, stderr });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

function json(r: Run): any {
  assert.equal(r.code, 0, `exit 0 expected, got ${r.code}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

before(async () => {
  // The series test ticks the oracle once and reads it back many commands
  // later: on a loaded machine that took longer than the default 10 s
  // staleness, so the source had gone stale (not what it tests).
  tx = await startTestExchange({ oracle_staleness_ms: 60_000 });
  dir = mkdtempSync(join(tmpdir(), 'dx-cli-test-'));
  baseEnv = {
    PATH: process.env.PATH ?? '',
    DX_API_URL: tx.base,
    DX_ADMIN_URL: tx.adminBase,
    DX_ACCOUNTS_URL: tx.accountsBase,
    DX_ADMIN_TOKEN: ADMIN_TOKEN,
  };
});

after(async () => {
  await tx.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('dx: help, version, and usage mistakes exit 2 with a message naming the problem', async () => {
  const help = await dx(['help']);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /usage: dx <command>/);
  assert.match(help.stdout, /order\s+place an order/);
  const pkg = JSON.parse(readFileSync(fileURLToPath(new URL('../../../package.json', import.meta.url)), 'utf8')) as {
    version: string;
    bin: Record<string, string>;
  };
  assert.equal(pkg.bin.dx, 'dist/src/cli/dx.js');
  assert.equal((await dx(['--version'])).stdout.trim(), pkg.version);
  assert.equal((await dx([])).code, 2);
  const unknown = await dx(['frobnicate']);
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /unknown command "frobnicate"/);
  const bad = await dx(['order', 'buy', 'maybe', '1', '40', '5'], { DX_KEY_ID: '1', DX_KEY_SECRET: Buffer.alloc(32).toString('base64') });
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /outcome must be one of yes, no/);
  const tick = await dx(['order', 'buy', 'yes', '1', '100', '5']);
  assert.equal(tick.code, 2);
  assert.match(tick.stderr, /tick must be 1\.\.99/);
  const opt = await dx(['balance', '--frobnicate', '1']);
  assert.equal(opt.code, 2);
  assert.match(opt.stderr, /unknown option --frobnicate/);
  const nokey = await dx(['balance']);
  assert.equal(nokey.code, 2);
  assert.match(nokey.stderr, /needs a key: set DX_KEY_ID and DX_KEY_SECRET, or DX_KEY_FILE/);
  const badfile = await dx(['balance'], { DX_KEY_FILE: join(dir, 'missing.json') });
  assert.equal(badfile.code, 2);
  assert.match(badfile.stderr, /cannot read the key file/);
  const notoken = await dx(['admin', 'health'], { DX_ADMIN_TOKEN: '' });
  assert.equal(notoken.code, 2, 'no token and no ./data/admin-token in the working directory');
  assert.match(notoken.stderr, /DX_ADMIN_TOKEN/);
});

test('dx: mistakes that would half-apply a command or leak a credential exit 2 before anything is sent', async () => {
  const timeout = await dx(['admin', 'health', '--timeout-ms', 'abc']);
  assert.equal(timeout.code, 2, timeout.stderr);
  const token = await dx(['admin', 'health'], { DX_ADMIN_TOKEN: 'tökén€' });
  assert.equal(token.code, 2, token.stderr);
  assert.match(token.stderr, /not Latin-1 \(check DX_ADMIN_TOKEN\)/);
  // A path starting with // would name another host, and the token or signature would go there.
  const other = `//${new URL(tx.adminBase).host}/admin/health`;
  assert.equal((await dx(['admin', 'get', other])).code, 2);
  assert.equal((await dx(['admin', 'get', `/\\${new URL(tx.adminBase).host}/admin/health`])).code, 2, 'a URL parser reads /\\ as //');
  assert.equal((await dx(['get', other], { DX_KEY_ID: '1', DX_KEY_SECRET: Buffer.alloc(32).toString('base64') })).code, 2);
  // A deposit the server would refuse is refused before the account exists.
  const first = json(await dx(['admin', 'account', 'create', '--json'])).account_id as number;
  const big = await dx(['admin', 'account', 'create', '--deposit', '9007199254740992']);
  assert.equal(big.code, 2);
  assert.match(big.stderr, /--deposit must be at most 9007199254740991, got 9007199254740992/);
  assert.equal(json(await dx(['admin', 'account', 'create', '--json'])).account_id, first + 1, 'no account was created');
  // A key file that cannot be written is refused before the key exists (its secret would be lost).
  const save = await dx(['admin', 'key', 'create', String(first), '--save', join(dir, 'no-such-dir', 'k.json')]);
  assert.equal(save.code, 2);
  assert.match(save.stderr, /cannot write --save .*ENOENT/);
  assert.deepEqual((await tx.admin.account(first)).keys, []);
});

test("dx: the server's refusals exit 1 (message on stderr, or the envelope on stdout with --json); an unreachable exchange exits " +
  "3", async () => {
  const wrong = await dx(['admin', 'health'], { DX_ADMIN_TOKEN: 'not-the-token' });
  assert.equal(wrong.code, 1);
  assert.match(wrong.stderr, /401 unauthorized/);
  const acct = json(await dx(['admin', 'account', 'create', '--deposit', '100000', '--json']));
  const key = json(await dx(['admin', 'key', 'create', String(acct.account_id), '--json']));
  const env = { DX_KEY_ID: String(key.key_id), DX_KEY_SECRET: key.secret };
  const r = await dx(['order', 'buy', 'yes', '424242', '40', '5'], env);
  assert.equal(r.code, 1);
  assert.match(r.stderr, /404 unknown_market \(num 265\)/);
  const j = await dx(['order', 'buy', 'yes', '424242', '40', '5', '--json'], env);
  assert.equal(j.code, 1);
  const body = JSON.parse(j.stdout);
  assert.equal(body.status, 404);
  assert.equal(body.error.code, 'unknown_market');
  assert.equal(body.error.num, 265);
  const port = await freePort();
  const down = await dx(['balance'], { ...env, DX_API_URL: `http://127.0.0.1:${port}` });
  assert.equal(down.code, 3);
  assert.match(down.stderr, /cannot reach the exchange: connection refused/);
});

test('dx admin: an operator sets up a series, an oracle and a funded key; dx then trades with the key file', async () => {
  const tick = await dx(['admin', 'oracle', 'tick', '0', '65000.25']);
  assert.equal(tick.code, 0, tick.stderr);
  assert.match(tick.stdout, /tick 65,000\.25 from source 0/);
  const fees = json(await dx(['admin', 'fee-schedule', 'create', '700', '0', '--json']));
  const series = json(
    await dx([
      'admin',
      'series',
      'create',
      'BTC above strike',
      '--category',
      '5',
      '--period',
      '10m',
      '--fee-schedule',
      String(fees.fee_schedule_id),
      '--json',
    ]),
  );
  assert.equal(series.period_s, 600);
  assert.equal(series.round_number, '1', 'the oracle is fresh: the first round is open');
  const m = series.market_id as number;
  const list = await dx(['admin', 'series', 'list']);
  assert.equal(list.code, 0);
  assert.match(list.stdout, /category\s+market\s+title/);
  assert.match(list.stdout, new RegExp(`5\\s+${m}\\s+BTC above strike\\s+600s\\s+yes\\s+1\\s+trading\\s+65,000\\.25`));

  const acct = json(await dx(['admin', 'account', 'create', '--json']));
  const dep = await dx(['admin', 'deposit', String(acct.account_id), '250000', '--ref', 'wire 7']);
  assert.equal(dep.code, 0, dep.stderr);
  assert.match(dep.stdout, /deposited \$2,500\.00/);
  const keyFile = join(dir, 'trader.json');
  const k = await dx(['admin', 'key', 'create', String(acct.account_id), '--scopes', 'read,trade,withdraw', '--save', keyFile]);
  assert.equal(k.code, 0, k.stderr);
  assert.doesNotMatch(k.stdout, /[A-Za-z0-9+/]{43}=/, 'a saved secret is not printed');
  assert.equal(statSync(keyFile).mode & 0o777, 0o600);
  const env = { DX_KEY_FILE: keyFile };

  const bal = await dx(['balance'], env);
  assert.equal(bal.code, 0, bal.stderr);
  assert.match(bal.stdout, /available\s+\$2,500\.00/);
  const placed = json(await dx(['order', 'buy', 'yes', String(m), '40', '5', '--client-order-id', '77', '--json'], env));
  assert.equal(placed.status, 'resting');
  assert.equal(placed.client_order_id, '77');
  const sell = await dx(['order', 'buy', 'no', String(m), '55', '2'], env);
  assert.equal(sell.code, 0, sell.stderr);
  assert.match(sell.stdout, /^order \d+ resting: filled 0, resting 2/);

  const book = await dx(['book', String(m)], env);
  assert.equal(book.code, 0, book.stderr);
  assert.match(book.stdout, new RegExp(`market ${m}  BTC above strike  trading`));
  assert.match(book.stdout, /ask\s+45\s+2\s+\(NO bid 55\)/);
  assert.match(book.stdout, /spread 5/);
  assert.match(book.stdout, /bid\s+40\s+5/);
  assert.ok(book.stdout.indexOf('ask') < book.stdout.indexOf('bid'), 'asks above bids');
  const bookJson = json(await dx(['book', String(m), '--json'], env));
  assert.deepEqual(bookJson.yes, [[40, 5]]);
  assert.deepEqual(bookJson.no, [[55, 2]]);

  const orders = await dx(['orders'], env);
  assert.match(orders.stdout, new RegExp(`${placed.order_id}\\s+${m}\\s+buy\\s+yes\\s+40\\s+5\\s+0\\s+5\\s+gtc`));
  const markets = json(await dx(['get', `/v1/markets?status=trading`], env));
  assert.ok(markets.markets.some((x: any) => x.market_id === m && x.best_yes_bid === 40 && x.best_yes_ask === 45));
  const viaPost = json(
    await dx(['post', '/v1/portfolio/orders', '-'], env, JSON.stringify({ market_id: m, side: 'buy', outcome: 'yes', tick: 30, qty: 1 })),
  );
  assert.equal(viaPost.status, 'resting');

  const cancel = await dx(['cancel', placed.order_id, '999999999'], env);
  assert.equal(cancel.code, 1, 'one of the two ids was refused');
  assert.match(cancel.stdout, new RegExp(`${placed.order_id}\\s+canceled 5`));
  assert.match(cancel.stdout, /999999999\s+unknown_order/);
  const all = await dx(['cancel-all', '--market', String(m)], env);
  assert.equal(all.code, 0, all.stderr);
  const live = json(await dx(['orders', '--json'], env));
  assert.deepEqual(live.orders, []);
  assert.match((await dx(['positions'], env)).stdout, /\(none\)/);
  assert.match((await dx(['oracle'], env)).stdout, /price\s+65,000\.25/);
  assert.match((await dx(['rounds', '--category', '5'], env)).stdout, /1\s+\d+\s+5\s+trading\s+65,000\.25/);

  // Funding through the CLI, and the operator's side of it.
  const w = json(await dx(['withdraw', '31', '1000', 'bc1-dest', '--json'], env));
  assert.equal(w.status, 'pending');
  assert.match((await dx(['withdrawal', '31'], env)).stdout, /status\s+pending/);
  const conf = await dx(['admin', 'withdrawal', 'confirm', w.wid]);
  assert.equal(conf.code, 0, conf.stderr);
  assert.match(conf.stdout, /confirmed/);
  assert.match((await dx(['withdrawal', '31'], env)).stdout, /status\s+confirmed/);
  const again = await dx(['admin', 'withdrawal', 'fail', w.wid]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /404 unknown_withdrawal/);
  const addr = await dx(['deposit-address'], env);
  assert.match(addr.stdout, /^dx1[0-9a-f]{40}\n$/);

  // Keys of one's own account through the keys service: never withdraw.
  const created = json(await dx(['keys', 'create', '--label', 'bot', '--json'], env));
  assert.deepEqual(created.scopes, ['read', 'trade']);
  const refused = await dx(['keys', 'create', '--scopes', 'withdraw'], env);
  assert.equal(refused.code, 1);
  assert.match(refused.stderr, /403 missing_scope/);
  assert.match((await dx(['keys', 'revoke', String(created.key_id)], env)).stdout, /revoked/);
});

test('dx admin fee-schedule list shows each schedule\'s rates; dx admin ledger the money in dollars and whether it adds up', async () => {
  const fees = json(await dx(['admin', 'fee-schedule', 'create', '325', '15', '--json']));
  const schedules = await dx(['admin', 'fee-schedule', 'list']);
  assert.equal(schedules.code, 0, schedules.stderr);
  assert.match(schedules.stdout, /^fee_schedule\s+taker_bps\s+maker_bps$/m);
  assert.match(schedules.stdout, new RegExp(`^\\s*${fees.fee_schedule_id}\\s+325\\s+15$`, 'm'));
  const acct = json(await dx(['admin', 'account', 'create', '--deposit', '12345', '--json']));
  assert.ok(acct.account_id > 0);
  const ledger = await dx(['admin', 'ledger']);
  assert.equal(ledger.code, 0, ledger.stderr);
  const cents = json(await dx(['admin', 'ledger', '--json']));
  assert.ok(BigInt(cents.deposits) >= 12345n);
  const line = (name: string): string | undefined =>
    ledger.stdout.split('\n').find((l) => l.startsWith(`${name} `))?.replace(/^\S+\s+/, '');
  assert.equal(line('deposits'), dollars(cents.deposits));
  assert.equal(line('fees_collected'), dollars(cents.fees_collected));
  assert.match(ledger.stdout, /^balanced\s+yes$/m);
});

test('dx candles: a table of the YES price per period, --json as the server answers, and its usage errors', async () => {
  const m = await newMarket(tx);
  const maker = await newAccount(tx);
  const taker = await newAccount(tx);
  for (const [tickYes, qty] of [[40, 3], [46, 2], [44, 1]] as const) {
    await maker.client.placeOrder(order(m, { outcome: 'no', tick: 100 - tickYes, qty }));
    await taker.client.placeOrder(order(m, { outcome: 'yes', tick: tickYes, qty, tif: 'ioc' }));
  }
  const env = { DX_KEY_ID: String(taker.keyId), DX_KEY_SECRET: taker.secret };
  const day = await dx(['candles', String(m), '--period', '1d'], env);
  assert.equal(day.code, 0, day.stderr);
  assert.match(day.stdout, new RegExp(`market ${m}  1d candles of the YES price`));
  assert.match(day.stdout, /start\s+open\s+high\s+low\s+close\s+volume\s+trades/);
  assert.match(day.stdout, /\d{4}-\d\d-\d\dT00:00:00Z\s+40\s+46\s+40\s+44\s+6\s+3/);
  const asJson = json(await dx(['candles', String(m), '--since', '1h', '--json'], env));
  assert.equal(asJson.period, '1m');
  assert.equal(asJson.candles.reduce((a: number, c: { trade_count: number }) => a + c.trade_count, 0), 3);
  const same = json(await dx(['candles', String(m), '--start-ts', asJson.candles[0].start_ts, '--json'], env));
  assert.deepEqual(same.candles, asJson.candles);
  assert.match((await dx(['candles', String(m), '--start-ts', '1', '--end-ts', '0'], env)).stderr, /400 invalid_field.*at most end_ts/);
  const bad = await dx(['candles', String(m), '--period', '2m'], env);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--period must be one of 1m, 5m, 1h, 1d/);
  const both = await dx(['candles', String(m), '--since', '1h', '--start-ts', '1'], env);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--since or --start-ts, not both/);
  const unknown = await dx(['candles', '999999'], env);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /404 unknown_market/);
});

test('dx admin: rounds by hand, health, metrics, account view, snapshot', async () => {
  const mk = json(await dx(['admin', 'market', 'create', 'by hand', '--category', '9', '--json']));
  const open = await dx(['admin', 'round', 'open', String(mk.market_id), '--strike', '64000', '--close-in', '1h']);
  assert.equal(open.code, 0, open.stderr);
  assert.match(open.stdout, /round \d+ trading until/);
  const frozen = await dx(['admin', 'round', 'freeze', String(mk.market_id)]);
  assert.match(frozen.stdout, /frozen/);
  const proposed = await dx(['admin', 'round', 'propose', String(mk.market_id), 'yes']);
  assert.match(proposed.stdout, /proposed/);
  const settled = json(await dx(['admin', 'round', 'settle', String(mk.market_id), '--json']));
  assert.equal(settled.status, 'settled');
  const conflict = await dx(['admin', 'round', 'void', String(mk.market_id)]);
  assert.equal(conflict.code, 1);
  assert.match(conflict.stderr, /409 round_state_conflict/);
  const badStrike = await dx(['admin', 'round', 'open', String(mk.market_id), '--strike', '1.123456789', '--close-in', '1h']);
  assert.equal(badStrike.code, 2);

  const health = json(await dx(['admin', 'health', '--json']));
  assert.match(health.seq, /^[0-9]+$/);
  const metrics = await dx(['admin', 'metrics']);
  assert.equal(metrics.code, 0);
  assert.match(metrics.stdout, /^# HELP dx_engine_seq /m);
  assert.match(metrics.stdout, /dx_http_request_duration_seconds_count\{lane="admin",route="create_market"\} \d+/);
  const acct = json(await dx(['admin', 'account', 'create', '--deposit', '500', '--json']));
  const shown = await dx(['admin', 'account', 'show', String(acct.account_id)]);
  assert.match(shown.stdout, /available\s+\$5\.00/);
  const snap = json(await dx(['admin', 'snapshot', '--json']));
  assert.match(snap.seq, /^[0-9]+$/);
  assert.equal(typeof snap.path, 'string');
  const rawGet = json(await dx(['admin', 'get', '/admin/series']));
  assert.ok(Array.isArray(rawGet.series));
  // The raw DELETE sends no body (no control-plane DELETE takes one): the CLI's way to revoke a key.
  const key = await tx.admin.createKey(acct.account_id, ['read']);
  assert.equal(json(await dx(['admin', 'delete', `/admin/keys/${key.key_id}`])).revoked, true);
  assert.equal((await tx.admin.account(acct.account_id)).keys![0]!.revoked, true);
  const feed = json(
    await dx([
      'admin',
      'oracle',
      'feed',
      '--sources',
      '5,6',
      '--rounds',
      '2',
      '--interval-ms',
      '10',
      '--start-price',
      '100',
      '--seed',
      '3',
      '--json',
    ]),
  );
  assert.equal(feed.delivered, 4);
  assert.equal(feed.failures, 0);
  const badFeed = await dx(['admin', 'oracle', 'feed', '--sources', '64', '--rounds', '1']);
  assert.equal(badFeed.code, 2);
});

test('dx mcp: a stdio MCP server holding the key from the environment answers initialize', async () => {
  const acct = json(await dx(['admin', 'account', 'create', '--json']));
  const key = json(await dx(['admin', 'key', 'create', String(acct.account_id), '--json']));
  const child = spawn(process.execPath, [DX, 'mcp'], {
    env: { ...baseEnv, DX_KEY_ID: String(key.key_id), DX_KEY_SECRET: key.secret },
    cwd: dir,
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number>((r) => child.once('exit', (c) => r(c ?? -1)));
  child.stdin.end(
    `${JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'cli-test', version: '1' } },
    })}\n`,
  );
  assert.equal(await exited, 0, 'it ends when its input ends');
  const reply = JSON.parse(out.trim().split('\n')[0]!);
  assert.equal(reply.id, 1);
  assert.ok(reply.result?.serverInfo, `initialize answered: ${out}`);
});

test('dx: DX_KEY_FILE may carry the url; --url wins over it', async () => {
  const acct = json(await dx(['admin', 'account', 'create', '--deposit', '700', '--json']));
  const key = json(await dx(['admin', 'key', 'create', String(acct.account_id), '--json']));
  const file = join(dir, 'with-url.json');
  writeFileSync(file, JSON.stringify({ key_id: key.key_id, secret: key.secret, url: tx.base }));
  const env = { DX_KEY_FILE: file, DX_API_URL: '' };
  const ok = await dx(['balance', '--json'], env);
  assert.equal(json(ok).available, '700', 'the url of the key file was used');
  const port = await freePort();
  const over = await dx(['balance', '--url', `http://127.0.0.1:${port}`], env);
  assert.equal(over.code, 3);
});

test('dx admin key tier: sets a named or custom tier; dx limits shows it; a bad figure is a usage error (exit 2)', async () => {
  const acct = json(await dx(['admin', 'account', 'create', '--json']));
  const key = json(await dx(['admin', 'key', 'create', String(acct.account_id), '--json']));
  const mm = await dx(['admin', 'key', 'tier', String(key.key_id), 'market_maker']);
  assert.equal(mm.code, 0, mm.stderr);
  assert.match(mm.stdout, /tier\s+market_maker/);
  const custom = json(
    await dx(['admin', 'key', 'tier', String(key.key_id), 'custom', '--read', '300/600', '--write', '700/1400', '--json']),
  );
  assert.deepEqual([custom.tier, custom.write], ['custom', { sustained_rate_per_s: 700, burst: 1400 }]);
  const limits = await dx(['limits'], { DX_KEY_ID: String(key.key_id), DX_KEY_SECRET: key.secret });
  assert.equal(limits.code, 0, limits.stderr);
  assert.match(limits.stdout, /tier\s+custom/);
  assert.match(limits.stdout, /write\s+700\/s burst 1400/);
  assert.equal((await dx(['admin', 'key', 'tier', String(key.key_id), 'custom', '--read', '300'])).code, 2);
  assert.equal((await dx(['admin', 'key', 'tier', String(key.key_id), 'default', '--read', '1/1'])).code, 2);
});
