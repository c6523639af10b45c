// `dx mcp` (node dist/src/mcp/stdio.js) run as the host runs it, with its
// stdout a pipe: when the input ends it exits only once every answer has
// left the process, also when the host reads the pipe slowly (a pipe write
// is asynchronous in Node: process.exit drops what the pipe has not taken).
// One exchange.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, type Key } from '../support/harness.js';

const STDIO_JS = fileURLToPath(new URL('../../src/mcp/stdio.js', import.meta.url));

let tx: TestExchange;
let trader: Key;

before(async () => {
  tx = await startTestExchange();
  trader = await newAccount(tx);
});

after(async () => {
  await tx.stop();
});

test('stdio: every answer reaches a host that reads stdout slowly, though the input ended (no answer lost at exit)', async () => {
  // A slow host: `dx mcp`'s stdout is a pipe nobody reads for a second (sleep), then read to its end (cat).
  const child = spawn('/bin/sh', ['-c', `"${process.execPath}" "${STDIO_JS}" | (sleep 1; cat)`], {
    env: { ...process.env, DX_API_URL: tx.base, DX_KEY_ID: String(trader.keyId), DX_KEY_SECRET: trader.secret },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const chunks: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => chunks.push(d));
  const closed = new Promise<number | null>((r) => child.once('close', (code) => r(code)));
  // Three tools/list answers (~55 kB each): more than the pipe holds.
  for (let id = 1; id <= 3; id++) child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`);
  child.stdin.end();
  assert.equal(await closed, 0);
  const text = Buffer.concat(chunks).toString('utf8');
  const lines = text.split('\n').filter((l) => l.length > 0);
  assert.equal(lines.length, 3, `three answers, got ${text.length} bytes in ${lines.length} lines`);
  for (const l of lines) assert.ok(JSON.parse(l).result.tools.length > 0);
});
