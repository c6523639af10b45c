// The web pages as static files: the trader page on the public port and the
// operator console on the control plane, from a build directory made here
// (so the test does not depend on the Vite build): content types, cache
// headers, ETag and 304, gzip, HEAD, methods, unknown files, and that the
// signed and bearer-token surfaces stay closed. Without a build, `/` is a
// 404 in the envelope. A client that pipelines GETs and never reads is
// closed once a reply waits on it, instead of having every reply buffered;
// the REST lane's replies the same way.

import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { after, before, test } from 'node:test';
import { connect } from 'node:net';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { assertErrorReply, raw } from '../support/harness.js';

let dir: string;
let tx: TestExchange;
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(4000))});\n`;
const TRADER_HTML = '<!doctype html><html><head><script type="module" src="/assets/app-Ab12Cd34.js"></script></head>'
  + '<body>trader</body></html>\n';
/** An asset larger than a socket's buffers take at once. */
const BIG = `export const x = ${JSON.stringify('y'.repeat(256 * 1024))};\n`;
const CONSOLE_HTML = '<!doctype html><html><body>console</body></html>\n';

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'dx-web-test-'));
  mkdirSync(join(dir, 'trader', 'assets'), { recursive: true });
  mkdirSync(join(dir, 'console', 'assets'), { recursive: true });
  writeFileSync(join(dir, 'trader', 'index.html'), TRADER_HTML);
  writeFileSync(join(dir, 'trader', 'assets', 'app-Ab12Cd34.js'), SCRIPT);
  writeFileSync(join(dir, 'trader', 'assets', 'app-Ab12Cd34.css'), 'body{margin:0}\n');
  writeFileSync(join(dir, 'trader', 'assets', 'big-Ab12Cd34.js'), BIG);
  writeFileSync(join(dir, 'console', 'index.html'), CONSOLE_HTML);
  writeFileSync(join(dir, 'console', 'assets', 'console-Zz99.js'), 'export {};\n');
  tx = await startTestExchange({ web_dir: dir });
});

after(async () => {
  await tx.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** GET with an optional Accept-Encoding, returning the raw bytes (node:http does not decompress). */
interface BytesReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

function getBytes(port: number, target: string, headers: Record<string, string> = {}): Promise<BytesReply> {
  return new Promise((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => {
      const extra = Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('');
      s.write(`GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n${extra}\r\n`);
    });
    const chunks: Buffer[] = [];
    s.on('data', (d: Buffer) => chunks.push(d));
    s.on('error', reject);
    s.on('close', () => {
      const all = Buffer.concat(chunks);
      const end = all.indexOf('\r\n\r\n');
      const head = all.subarray(0, end).toString('latin1').split('\r\n');
      const status = Number(head[0]!.split(' ')[1]);
      const h: Record<string, string> = {};
      for (const line of head.slice(1)) {
        const i = line.indexOf(':');
        h[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      resolve({ status, headers: h, body: all.subarray(end + 4) });
    });
  });
}

test('web: GET / on the public port is the trader page, with its security and cache headers', async () => {
  const r = await raw(tx.port, { method: 'GET', target: '/' });
  assert.equal(r.status, 200);
  assert.equal(r.text, TRADER_HTML);
  assert.equal(r.headers['content-type'], 'text/html; charset=utf-8');
  assert.equal(r.headers['cache-control'], 'no-cache');
  assert.match(String(r.headers.etag), /^"[A-Za-z0-9_-]{22}"$/);
  const csp = String(r.headers['content-security-policy']);
  assert.match(csp, /default-src 'self'/);
  assert.match(csp, /script-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
  assert.equal(r.headers['x-content-type-options'], 'nosniff');
  assert.equal(r.headers['referrer-policy'], 'no-referrer');
  // The same file under its own name; a revalidation with the ETag is 304 without a body.
  assert.equal((await raw(tx.port, { method: 'GET', target: '/index.html' })).text, TRADER_HTML);
  const again = await raw(tx.port, { method: 'GET', target: '/', headers: { 'if-none-match': String(r.headers.etag) } });
  assert.equal(again.status, 304);
  assert.equal(again.text, '');
  // HEAD: the headers and length, no body.
  const head = await raw(tx.port, { method: 'HEAD', target: '/' });
  assert.equal(head.status, 200);
  assert.equal(head.text, '');
  assert.equal(head.headers['content-length'], String(Buffer.byteLength(TRADER_HTML)));
});

test('web: hashed assets are immutable, typed, and gzipped for clients that accept it', async () => {
  const js = await getBytes(tx.port, '/assets/app-Ab12Cd34.js');
  assert.equal(js.status, 200);
  assert.equal(js.headers['content-type'], 'text/javascript; charset=utf-8');
  assert.equal(js.headers['cache-control'], 'public, max-age=31536000, immutable');
  assert.equal(js.body.toString('utf8'), SCRIPT);
  assert.equal(js.headers['content-encoding'], undefined);
  const gz = await getBytes(tx.port, '/assets/app-Ab12Cd34.js', { 'accept-encoding': 'gzip, deflate, br' });
  assert.equal(gz.headers['content-encoding'], 'gzip');
  assert.equal(gz.headers.vary, 'accept-encoding');
  assert.ok(gz.body.length < SCRIPT.length / 10);
  assert.equal(gunzipSync(gz.body).toString('utf8'), SCRIPT);
  const css = await raw(tx.port, { method: 'GET', target: '/assets/app-Ab12Cd34.css' });
  assert.equal(css.headers['content-type'], 'text/css; charset=utf-8');
});

test('web: only GET and HEAD of the build\'s own files; every /v1 route still needs its signature', async () => {
  const post = await raw(tx.port, { method: 'POST', target: '/', body: '{}' });
  assertErrorReply(post, 405, 'method_not_allowed');
  assert.equal(post.headers.allow, 'GET, HEAD');
  assertErrorReply(await raw(tx.port, { method: 'GET', target: '/assets/other.js' }), 404, 'not_found');
  assertErrorReply(await raw(tx.port, { method: 'GET', target: '/assets/../index.html' }), 404, 'not_found');
  // The console's files are not on the public port.
  assertErrorReply(await raw(tx.port, { method: 'GET', target: '/assets/console-Zz99.js' }), 404, 'not_found');
  assertErrorReply(await raw(tx.port, { method: 'GET', target: '/v1/markets' }), 401, 'unauthorized');
  assertErrorReply(await raw(tx.port, { method: 'GET', target: '/v1/exchange/status' }), 401, 'unauthorized');
});

test('web: GET / on the control plane is the console without a token; /admin and /metrics still need it', async () => {
  const port = Number(new URL(tx.adminBase).port);
  const r = await raw(port, { method: 'GET', target: '/' });
  assert.equal(r.status, 200);
  assert.equal(r.text, CONSOLE_HTML);
  assert.match(String(r.headers['content-security-policy']), /connect-src 'self'/);
  assert.equal((await raw(port, { method: 'GET', target: '/assets/console-Zz99.js' })).status, 200);
  assertErrorReply(await raw(port, { method: 'GET', target: '/assets/app-Ab12Cd34.js' }), 401, 'unauthorized');
  assertErrorReply(await raw(port, { method: 'GET', target: '/admin/health' }), 401, 'unauthorized');
  assertErrorReply(await raw(port, { method: 'GET', target: '/metrics' }), 401, 'unauthorized');
});

/** Every answer the exchange's listeners have counted (dx_http_responses_total, all statuses). */
async function answered(): Promise<number> {
  let n = 0;
  for (const m of (await tx.admin.metrics()).matchAll(/^dx_http_responses_total\{[^}]*\} (\d+)$/gm)) n += Number(m[1]);
  return n;
}

/**
 * Sends n copies of a request on one connection without reading; once the
 * exchange has stopped answering (its response count unchanged for half a
 * second, 30 s at most: it closed the connection, or answered all), reads whatever comes:
 * the bytes answered, and whether the exchange closed the connection (within
 * 5 s). A fixed wait instead let a loaded machine start reading while the
 * exchange was still answering, so no reply ever waited and all were sent.
 */
async function pipelineUnread(request: string, n: number): Promise<{ bytes: number; closed: boolean }> {
  const s = connect(tx.port, '127.0.0.1');
  let bytes = 0;
  s.on('error', () => {});
  s.pause();
  s.write(request.repeat(n));
  // Each read of the count is itself one more answer (the control plane's /metrics): unchanged means at most one more.
  let last = -2;
  for (let still = 0, polls = 0; still < 2 && polls < 120; polls++) {
    await new Promise((r) => setTimeout(r, 250));
    const now = await answered();
    still = now - last <= 1 ? still + 1 : 0;
    last = now;
  }
  return new Promise((resolve) => {
    const giveUp = setTimeout(() => {
      s.destroy();
      resolve({ bytes, closed: false });
    }, 5000);
    s.on('data', (d: Buffer) => (bytes += d.length));
    s.on('close', () => {
      clearTimeout(giveUp);
      resolve({ bytes, closed: true });
    });
    s.resume();
  });
}

test('web: a connection that pipelines 1,000 GETs of a large asset and does not read is closed once a reply waits on it ' +
  '(its replies are not all buffered in the exchange)', async () => {
  const got = await pipelineUnread('GET /assets/big-Ab12Cd34.js HTTP/1.1\r\nHost: x\r\n\r\n', 1000);
  assert.ok(got.closed, `the connection stayed open after ${got.bytes} bytes`);
  const replies = Math.round(got.bytes / BIG.length);
  assert.ok(got.bytes < 100 * BIG.length, `${got.bytes} bytes were answered: ${replies} replies held for one client`);
});

test('rest: a connection that pipelines 100,000 unsigned requests and does not read is closed once a reply waits on it ' +
  '(its 401s are not all buffered in the exchange)', async () => {
  const got = await pipelineUnread('GET /v1/portfolio/balance HTTP/1.1\r\nHost: x\r\n\r\n', 100_000);
  assert.ok(got.closed, `the connection stayed open after ${got.bytes} bytes`);
  assert.ok(got.bytes < 8 << 20, `${got.bytes} bytes of replies were held for one client`);
});

test('web: without a build, / answers 404 in the envelope and says how to build it', async () => {
  const missing = join(dir, 'no-such-build');
  const bare = await startTestExchange({ web_dir: missing });
  try {
    const r = await raw(bare.port, { method: 'GET', target: '/' });
    assertErrorReply(r, 404, 'not_found');
    assert.match(r.json.error.message, /trader page is not built: .*no-such-build.*npm run build/);
    const c = await raw(Number(new URL(bare.adminBase).port), { method: 'GET', target: '/' });
    assertErrorReply(c, 404, 'not_found');
    assert.match(c.json.error.message, /operator console is not built/);
    // The exchange itself runs as usual.
    assert.equal((await bare.admin.request<{ seq: string }>('GET', '/admin/health')).seq.length > 0, true);
  } finally {
    await bare.stop();
  }
});
