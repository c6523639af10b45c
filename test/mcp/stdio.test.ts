// The local signing MCP server (`dx mcp`, src/mcp/stdio.ts) end to end: the
// official SDK's StdioClientTransport spawns `node dist/src/mcp/stdio.js`
// with the key in its environment (or in a key file), and everything the
// host does (initialize, tools/list, tool calls, errors) goes through it to
// the exchange's POST /v1/mcp, signed. Also the exported runMcpStdio on
// in-process streams (what the `dx` CLI calls). One exchange.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { ROUTES } from '../../src/gateway/routes.js';
import { mcpEndpoint, runMcpStdio, stdioConfigFromEnv } from '../../src/mcp/stdio.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, type Key } from '../support/harness.js';
import { callError, callOk, linesOf, stable, type McpSession } from './mcp_harness.js';

const STDIO_JS = fileURLToPath(new URL('../../src/mcp/stdio.js', import.meta.url));

let tx: TestExchange;
let trader: Key;
let market: number;
let dir: string;

before(async () => {
  tx = await startTestExchange();
  trader = await newAccount(tx);
  market = await newMarket(tx);
  dir = mkdtempSync(join(tmpdir(), 'dx-mcp-stdio-'));
});

after(async () => {
  await tx.stop();
  rmSync(dir, { recursive: true, force: true });
});

async function spawnMcp(env: Record<string, string>): Promise<McpSession & { stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [STDIO_JS],
    env: { DX_LOG_LEVEL: 'error', ...env },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
  const client = new Client({ name: 'dx-stdio-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport: transport as never, close: () => client.close(), stderr: () => err };
}

test('stdio: an agent host drives the exchange through `dx mcp` (SDK stdio client, key in the environment)', async () => {
  const s = await spawnMcp({ DX_API_URL: tx.base, DX_KEY_ID: String(trader.keyId), DX_KEY_SECRET: trader.secret });
  try {
    assert.equal(s.client.getServerVersion()?.name, 'dx');
    assert.match(s.client.getInstructions() ?? '', /ticks 1\.\.99/);
    const { tools } = await s.client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ROUTES.map((r) => r.name).sort());
    assert.deepEqual(stable(await callOk(s, 'get_balance')), stable(await trader.client.balance()));
    const placed = await callOk(s, 'place_order', {
      market_id: market,
      side: 'buy',
      outcome: 'yes',
      tick: 22,
      qty: 2,
      client_order_id: '4242',
    });
    assert.equal(placed.status, 'resting');
    const viaRest = await trader.client.orders({ client_order_id: '4242' });
    assert.equal(viaRest.orders[0]!.order_id, placed.order_id);
    await callError(s, 'place_order', { market_id: market, side: 'buy', outcome: 'yes', tick: 22, qty: 2, extra: 1 }, 'unknown_field');
    const e = await callError(s, 'get_market', { market_id: 424242 }, 'unknown_market');
    assert.equal(e.num, 265);
    await assert.rejects(
      s.client.callTool({ name: 'nope', arguments: {} }),
      (x: unknown) => x instanceof McpError && x.code === ErrorCode.InvalidParams,
    );
    assert.deepEqual(await s.client.ping(), {});
    // Several calls at once: each is its own signed POST.
    const many = await Promise.all(Array.from({ length: 8 }, () => callOk(s, 'get_exchange_status')));
    assert.ok(many.every((m) => m.exchange_active === true));
  } finally {
    await s.close();
  }
});

test('stdio: the key can come from DX_KEY_FILE with the exchange url in it', async () => {
  const file = join(dir, 'key.json');
  writeFileSync(file, JSON.stringify({ key_id: trader.keyId, secret: trader.secret, url: tx.base }), { mode: 0o600 });
  const s = await spawnMcp({ DX_KEY_FILE: file });
  try {
    const limits = await callOk(s, 'get_account_limits');
    assert.deepEqual(limits.scopes, ['read', 'trade']);
  } finally {
    await s.close();
  }
});

test('stdio: a wrong secret makes initialize fail with a JSON-RPC error naming the 401, and the reason is on stderr', async () => {
  const wrong = Buffer.alloc(32, 7).toString('base64');
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [STDIO_JS],
    env: { DX_API_URL: tx.base, DX_KEY_ID: String(trader.keyId), DX_KEY_SECRET: wrong },
    stderr: 'pipe',
  });
  let err = '';
  transport.stderr?.on('data', (d: Buffer) => (err += d.toString('utf8')));
  // The SDK client closes the transport itself when initialize fails, without
  // waiting for the child: wait for its exit here, so that its connection to
  // the exchange is gone before the exchange stops.
  const exited = new Promise<void>((resolve) => {
    transport.onclose = resolve;
  });
  const client = new Client({ name: 'dx-stdio-test', version: '1.0.0' });
  await assert.rejects(client.connect(transport), (e: unknown) => {
    assert.ok(e instanceof McpError, String(e));
    assert.equal(e.code, -32000);
    assert.match(e.message, /401 unauthorized/);
    return true;
  });
  await client.close();
  await exited;
  assert.match(err, /401 unauthorized/);
});

test('stdio: runMcpStdio (the CLI entry) forwards lines from an input stream and ends when the input ends', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const logs: string[] = [];
  const lines = linesOf(output);
  const done = runMcpStdio({
    baseUrl: tx.base,
    keyId: String(trader.keyId),
    secret: trader.secret,
    input,
    output,
    log: (l) => logs.push(l),
  });
  input.write(
    `${JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
    })}\n`,
  );
  input.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  input.write(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'get_oracle_price', arguments: {} } })}\n`);
  input.write('this is not json\n');
  // A bare CR is JSON whitespace inside a message, not the end of a line; a CRLF ends one. Split across writes as a pipe may.
  input.write('{"jsonrpc":"2.0","id":3,\r"method":"ping"}\r');
  input.write('\n{"jsonrpc":"2.0",');
  input.write('"id":4,"method":"ping"}\n');
  input.end();
  await done;
  const msgs = lines.map((l) => JSON.parse(l));
  assert.equal(msgs.length, 5, `one answer per request and one for the unreadable line: ${lines.join(' | ')}`);
  const pings = msgs.filter((m) => m.id === 3 || m.id === 4).sort((a, b) => a.id - b.id);
  assert.deepEqual(pings.map((m) => [m.id, m.result]), [[3, {}], [4, {}]], lines.join(' | '));
  const byId = new Map(msgs.map((m) => [m.id, m]));
  assert.equal(byId.get(1).result.protocolVersion, '2025-11-25');
  assert.equal(byId.get(2).result.structuredContent.price, (await trader.client.oraclePrice()).price);
  assert.equal(byId.get(null).error.code, -32700);
  assert.ok(logs.some((l) => l.includes('/v1/mcp')));
});

test('stdio: configuration from the environment, and its errors', () => {
  assert.deepEqual(stdioConfigFromEnv({ DX_KEY_ID: '7', DX_KEY_SECRET: 's' }), {
    baseUrl: 'http://127.0.0.1:8080',
    keyId: '7',
    secret: 's',
  });
  assert.equal(stdioConfigFromEnv({ DX_KEY_ID: '7', DX_KEY_SECRET: 's', DX_API_URL: 'http://h:1' }).baseUrl, 'http://h:1');
  assert.throws(() => stdioConfigFromEnv({}), /DX_KEY_ID and DX_KEY_SECRET, or DX_KEY_FILE/);
  assert.throws(() => stdioConfigFromEnv({ DX_KEY_ID: 'abc', DX_KEY_SECRET: 's' }), /key id/);
  assert.throws(() => stdioConfigFromEnv({ DX_KEY_FILE: join(dir, 'missing.json') }), /cannot read the key file/);
  assert.equal(mcpEndpoint('http://h:1').href, 'http://h:1/v1/mcp');
  assert.equal(mcpEndpoint('https://h/prefix/').href, 'https://h/prefix/v1/mcp');
});

test('stdio: a line that is not UTF-8 is answered -32700, as POST /v1/mcp answers such a body (not forwarded as ' +
  'text with U+FFFD in place of the bad byte)', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  const lines = linesOf(output);
  const done = runMcpStdio({ baseUrl: tx.base, keyId: String(trader.keyId), secret: trader.secret, input, output, log: () => {} });
  // 0xE9 alone: Latin-1 'é', not UTF-8.
  input.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":5,"method":"ping","params":{"note":"caf'), Buffer.from([0xe9]),
    Buffer.from('"}}\n')]));
  input.end();
  await done;
  const msgs = lines.map((l) => JSON.parse(l));
  assert.equal(msgs.length, 1, lines.join(' | '));
  assert.equal(msgs[0].id, 5);
  assert.equal(msgs[0].error?.code, -32700, `answered as if the client had sent U+FFFD: ${lines.join(' | ')}`);
});
