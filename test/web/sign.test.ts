// The browser's signer (src/web/lib/sign.ts, WebCrypto) against the client
// library's (src/client/sign.ts, node:crypto): the same signature for the
// same request, the WebSocket sign-in query, secret decoding and
// never-repeating timestamps. Node 20 has the same WebCrypto globals as a
// browser, so this runs in `npm test`, without chromium.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { signRequest as nodeSign } from '../../src/client/sign.js';
import { Clock, decodeSecret, importSecret, signRequest, wsSignInQuery } from '../../src/web/lib/sign.js';

test('web sign: WebCrypto signatures equal the client library\'s for any method, target and body', async () => {
  for (let i = 0; i < 50; i++) {
    const secret = randomBytes(32);
    const key = await importSecret(decodeSecret(secret.toString('base64')));
    const ts = String(1_750_000_000_000 + i);
    const method = ['GET', 'POST', 'DELETE'][i % 3]!;
    const target = `/v1/portfolio/orders${i % 2 ? `?market_id=${i}&status=resting,partially_filled` : ''}`;
    const order = { market_id: i, side: 'buy', outcome: 'yes', tick: 1 + (i % 99), qty: i + 1, note: 'é€😀' };
    const body = i % 3 === 1 ? JSON.stringify(order) : '';
    assert.equal(await signRequest(key, ts, method, target, body), nodeSign(secret, ts, method, target, body));
  }
});

test('web sign: the WebSocket sign-in query carries key, ts and the signature over ts\\nGET\\n/v1/ws\\n', async () => {
  const secret = randomBytes(32);
  const key = await importSecret(decodeSecret(secret.toString('base64')));
  const q = new URLSearchParams(await wsSignInQuery(42, key, '1750000000123'));
  assert.deepEqual([...q.keys()], ['key', 'ts', 'sig']);
  assert.equal(q.get('key'), '42');
  assert.equal(q.get('ts'), '1750000000123');
  assert.equal(q.get('sig'), nodeSign(secret, '1750000000123', 'GET', '/v1/ws', ''));
});

test('web sign: a secret must be base64 of 32 bytes; timestamps never repeat', () => {
  assert.equal(decodeSecret(Buffer.alloc(32, 9).toString('base64')).length, 32);
  assert.throws(() => decodeSecret(Buffer.alloc(31).toString('base64')), /32 bytes .* this one is 31/);
  assert.throws(() => decodeSecret('not base64!'), /base64 text/);
  assert.throws(() => decodeSecret(''), /base64 text/);
  let t = 1000;
  const clock = new Clock(() => t);
  assert.deepEqual([clock.next(), clock.next(), clock.next()], ['1000', '1001', '1002']);
  t = 5000.7;
  assert.equal(clock.next(), '5000');
  t = 10;
  assert.equal(clock.next(), '5001', 'a clock that goes back does not make a repeat');
});
