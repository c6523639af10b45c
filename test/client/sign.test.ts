// Request signing: the canonical string, the HMAC key and the base64 form,
// checked against vectors computed independently (a golden value produced
// with Python's hmac module, and node:crypto's createHmac in this file).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { authHeaders, decodeSecret, signRequest } from '../../src/client/sign.js';

const SECRET = Uint8Array.from({ length: 32 }, (_, i) => i);
const SECRET_B64 = 'AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=';
const TS = '1700000000123';
const BODY = '{"market_id":7,"side":"buy","outcome":"yes","tick":42,"qty":3}';

function reference(ts: string, method: string, target: string, body: string): string {
  return createHmac('sha256', Buffer.from(SECRET)).update(`${ts}\n${method}\n${target}\n${body}`).digest('base64');
}

test('sign: matches a golden vector computed outside Node (Python hmac)', () => {
  assert.equal(signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders?x=1', BODY), 'qSlnBHk6Ps0Bp4qngshEGIODrStgfCgQFskX+2jiHBM=');
  assert.equal(signRequest(SECRET, TS, 'GET', '/v1/markets', ''), 'QyjUevHi0t6jxuJ3/47qZAdgJ/rdsj6BAoRsdYt82CU=');
});

test('sign: equals HMAC-SHA256 over ts, METHOD, path?query and body joined by newlines, standard padded base64', () => {
  const sig = signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders', BODY);
  assert.equal(sig, reference(TS, 'POST', '/v1/portfolio/orders', BODY));
  assert.match(sig, /^[A-Za-z0-9+/]{43}=$/);
  // The method is upper-cased as it is sent.
  assert.equal(signRequest(SECRET, TS, 'post', '/v1/portfolio/orders', BODY), sig);
});

test('sign: the signature changes when the body, path, query, method or timestamp changes', () => {
  const base = signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders?market_id=1', BODY);
  const variants = [
    signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders?market_id=1', BODY.replace('"qty":3', '"qty":4')),
    signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders?market_id=1', ''),
    signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders/batch?market_id=1', BODY),
    signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders?market_id=2', BODY),
    signRequest(SECRET, TS, 'POST', '/v1/portfolio/orders', BODY),
    signRequest(SECRET, TS, 'DELETE', '/v1/portfolio/orders?market_id=1', BODY),
    signRequest(SECRET, '1700000000124', 'POST', '/v1/portfolio/orders?market_id=1', BODY),
  ];
  for (const v of variants) assert.notEqual(v, base);
  assert.equal(new Set(variants).size, variants.length);
});

test('sign: authHeaders carries key id, millisecond timestamp and the signature over that timestamp', () => {
  const h = authHeaders(17, SECRET, 'GET', '/v1/portfolio/balance', '', 1700000000123.9);
  assert.deepEqual(Object.keys(h).sort(), ['DX-ACCESS-KEY', 'DX-ACCESS-SIGNATURE', 'DX-ACCESS-TIMESTAMP']);
  assert.equal(h['DX-ACCESS-KEY'], '17');
  assert.equal(h['DX-ACCESS-TIMESTAMP'], TS);
  assert.equal(h['DX-ACCESS-SIGNATURE'], reference(TS, 'GET', '/v1/portfolio/balance', ''));
});

test('sign: a base64 secret decodes to the same 32 bytes; other lengths are refused', () => {
  assert.deepEqual(Buffer.from(decodeSecret(SECRET_B64)), Buffer.from(SECRET));
  assert.throws(() => decodeSecret(SECRET.subarray(0, 31)), RangeError);
  assert.throws(() => decodeSecret('AAEC'), RangeError);
});
