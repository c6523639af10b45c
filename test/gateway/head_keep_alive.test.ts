// A response to HEAD on a keep-alive connection: once its headers are read,
// the client may send its next request on the same connection (not
// pipelined: after the answer). uWS v20.30 counts a response ended with
// endWithoutBody(n > 0) as still sending its n bytes, so the next request
// found the connection "busy" and was closed unanswered (and the connection
// never hit the idle timeout). Trader page (static), REST lane (405 to HEAD),
// control plane. Test process, main thread.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, raw } from '../support/harness.js';

let dir: string;
let tx: TestExchange;
const HTML = '<!doctype html><html><body>trader</body></html>\n';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dx-head-test-'));
  mkdirSync(join(dir, 'trader'), { recursive: true });
  writeFileSync(join(dir, 'trader', 'index.html'), HTML);
  tx = await startTestExchange({ web_dir: dir });
});

after(async () => {
  await tx.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** One connection; each request is sent once the previous answer's head arrived. Returns each answer's status line. */
async function inTurn(port: number, requests: string[]): Promise<string[]> {
  const s: Socket = connect(port, '127.0.0.1');
  let got = '';
  let closed = false;
  s.on('data', (d: Buffer) => (got += d.toString('latin1')));
  s.on('close', () => (closed = true));
  s.on('error', () => undefined);
  await new Promise((r) => s.once('connect', r));
  const lines: string[] = [];
  try {
    for (const r of requests) {
      got = '';
      if (closed) {
        lines.push('closed before sending');
        continue;
      }
      s.write(r);
      await eventually(() => got.includes('\r\n\r\n') || closed, 2000);
      lines.push(got.includes('\r\n\r\n') ? got.split('\r\n')[0]! : 'closed unanswered');
    }
  } finally {
    s.destroy();
  }
  return lines;
}

test('HEAD of a page, then GET on the same connection: both answered', async () => {
  const lines = await inTurn(tx.port, ['HEAD / HTTP/1.1\r\nHost: x\r\n\r\n', 'GET / HTTP/1.1\r\nHost: x\r\n\r\n']);
  assert.deepEqual(lines, ['HTTP/1.1 200 OK', 'HTTP/1.1 200 OK']);
});

test('HEAD on the REST lane (405), then GET /health on the same connection: both answered', async () => {
  const lines = await inTurn(tx.port, ['HEAD /v1/markets HTTP/1.1\r\nHost: x\r\n\r\n', 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n']);
  assert.deepEqual(lines, ['HTTP/1.1 405 Method Not Allowed', 'HTTP/1.1 200 OK']);
});

test('HEAD on the control plane, then GET on the same connection: both answered', async () => {
  const auth = `Authorization: Bearer ${ADMIN_TOKEN}\r\n`;
  const lines = await inTurn(tx.ex.admin_port, [
    `HEAD /admin/health HTTP/1.1\r\nHost: x\r\n${auth}\r\n`, `GET /admin/health HTTP/1.1\r\nHost: x\r\n${auth}\r\n`,
  ]);
  assert.deepEqual(lines, ['HTTP/1.1 405 Method Not Allowed', 'HTTP/1.1 200 OK']);
});

test('HEAD of a path no listener route serves (the gateway\'s catch-all 404): headers only, no body', async () => {
  // node:http over a keep-alive connection, as a load balancer's HEAD probe: bytes after the head are a framing error.
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const target of ['/health/nope', '/nope']) {
      const r = await raw(tx.port, { method: 'HEAD', target, agent });
      assert.equal(r.status, 404);
      assert.equal(r.text, '');
    }
    assert.equal((await raw(tx.port, { method: 'GET', target: '/health', agent })).status, 200);
  } finally {
    agent.destroy();
  }
});

test('a revalidated page is 304 Not Modified, then the next request on the connection is answered', async () => {
  const first = await raw(tx.port, { method: 'GET', target: '/' });
  const etag = first.headers.etag as string;
  const revalidate = `GET / HTTP/1.1\r\nHost: x\r\nIf-None-Match: ${etag}\r\n\r\n`;
  const lines = await inTurn(tx.port, [revalidate, 'GET /health HTTP/1.1\r\nHost: x\r\n\r\n']);
  assert.deepEqual(lines, ['HTTP/1.1 304 Not Modified', 'HTTP/1.1 200 OK']);
});
