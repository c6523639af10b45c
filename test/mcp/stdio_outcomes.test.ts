// The stdio forwarder (`dx mcp`, src/mcp/stdio.ts) driven through
// runMcpStdio on in-process streams: a request whose id is null gets the
// exchange's JSON-RPC error as on POST /v1/mcp (only a message without an id
// is a notification), and a request that reached the exchange but got no
// answer is reported with its outcome unknown (`data.sent`), not as "cannot
// reach" (which says it was never sent). Run as the host runs it (node
// dist/src/mcp/stdio.js, its stdout a pipe the host reads slowly), it exits
// only once every answer has left the process. Test process, main thread.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runMcpStdio } from '../../src/mcp/stdio.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, signedRaw, type Key } from '../support/harness.js';
import { linesOf } from './mcp_harness.js';

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

/** Feeds lines to runMcpStdio and returns every line it wrote back. */
async function forward(baseUrl: string, lines: string[]): Promise<string[]> {
  const input = new PassThrough();
  const output = new PassThrough();
  const out = linesOf(output);
  const done = runMcpStdio({ baseUrl, keyId: String(trader.keyId), secret: trader.secret, input, output, log: () => {} });
  for (const l of lines) input.write(`${l}\n`);
  input.end();
  await done;
  return out;
}

test('stdio: a request with "id": null gets the JSON-RPC error POST /v1/mcp answers, not silence', async () => {
  const line = '{"jsonrpc":"2.0","id":null,"method":"ping"}';
  // The HTTP lane answers it (400, -32600, id null): it is a request, not a notification.
  const headers = { accept: 'application/json, text/event-stream' };
  const direct = await signedRaw(tx.port, trader, 'POST', '/v1/mcp', line, { headers });
  assert.equal(direct.status, 400);
  assert.equal(direct.json.error.code, -32600);
  const out = await forward(tx.base, [line]);
  assert.equal(out.length, 1, 'the host gets one answer for its request');
  const msg = JSON.parse(out[0]!);
  assert.equal(msg.id, null);
  assert.equal(msg.error.code, -32600);
  // A notification still gets none.
  assert.deepEqual(await forward(tx.base, ['{"jsonrpc":"2.0","method":"notifications/initialized"}']), []);
});

test('stdio: a request the exchange received but never answered is not "cannot reach the exchange"', async () => {
  // A stand-in exchange that reads the whole request and drops the connection (a crash, a proxy timeout): the POST was
  // delivered, so a placement in it may have been taken.
  const sockets = new Set<Socket>();
  let received = 0;
  const server = createServer((s) => {
    sockets.add(s);
    let text = '';
    s.on('data', (d) => {
      text += d.toString('utf8');
      if (text.includes('"place_order"')) {
        received++;
        s.destroy();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const call = JSON.stringify({
      jsonrpc: '2.0', id: 7, method: 'tools/call',
      params: { name: 'place_order', arguments: { market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 5, client_order_id: '77' } },
    });
    const out = await forward(`http://127.0.0.1:${port}`, [call]);
    assert.equal(received, 1, 'the request reached the exchange');
    assert.equal(out.length, 1);
    const msg = JSON.parse(out[0]!);
    assert.equal(msg.id, 7);
    assert.equal(msg.error.code, -32000);
    assert.doesNotMatch(msg.error.message, /cannot reach/, 'the request was delivered: its outcome is unknown, not "not sent"');
    assert.equal(msg.error.data?.sent, true, 'data says the request was sent');
    assert.match(msg.error.message, /may or may not have been done/);
  } finally {
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => server.close(() => r()));
  }
  // Nothing listening: that one was never sent.
  const refused = JSON.parse((await forward(`http://127.0.0.1:${port}`, ['{"jsonrpc":"2.0","id":8,"method":"ping"}']))[0]!);
  assert.match(refused.error.message, /cannot reach the exchange/);
  assert.equal(refused.error.data?.sent, false);
});

test('stdio: a request whose integer id JavaScript cannot hold is not answered under another request\'s id', async () => {
  // 2^53 + 1: JSON.parse reads it as 2^53, the id of another request the host may have in flight.
  const out = await forward(tx.base, ['{"jsonrpc":"2.0","id":9007199254740993,"method":"ping"}']);
  assert.equal(out.length, 1);
  assert.ok(!out[0]!.includes('"id":9007199254740992'), `answered under the id 9007199254740992: ${out[0]}`);
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
