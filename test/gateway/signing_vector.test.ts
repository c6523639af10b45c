// The signing vector printed in the README ("Signing: a worked example"): the
// client signs it to the printed signature (computed independently with
// Python's hmac module), the server's check accepts it at its timestamp and
// refuses it outside the +-5 s window or with any field changed. The values
// are read from the README itself, so the printed example cannot drift.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { decodeSecret, signRequest } from '../../src/client/sign.js';
import { checkSignature } from '../../src/gateway/auth.js';

/** Python: base64(hmac.new(bytes(range(32)), b"1700000000123\nPOST\n/v1/portfolio/orders\n" + body, sha256).digest()). */
const PYTHON_SIGNATURE = 'jYi5J3grslJD8mGLfpzC42JbmCRRwzeBCFJQ3T9lq4k=';

function readmeVector(): { secret: string; ts: string; method: string; target: string; body: string; signature: string } {
  const readme = readFileSync(fileURLToPath(new URL('../../../README.md', import.meta.url)), 'utf8');
  const field = (label: string): string => {
    const m = new RegExp(`^${label}\\s+(.+)$`, 'm').exec(readme);
    assert.ok(m, `README.md prints the signing example's "${label}" line`);
    return m[1]!.trim();
  };
  const [method, target] = field('method, target').split(' ');
  return {
    secret: field('secret \\(base64\\)').split(/\s+/)[0]!, ts: field('timestamp'), method: method!, target: target!,
    body: field('body'), signature: field('signature'),
  };
}

test('signing vector: the README example signs to its printed signature, the one Python computes', () => {
  const v = readmeVector();
  assert.deepEqual(Buffer.from(decodeSecret(v.secret)), Buffer.from(Uint8Array.from({ length: 32 }, (_x, i) => i)));
  assert.equal(v.signature, PYTHON_SIGNATURE);
  assert.equal(signRequest(decodeSecret(v.secret), v.ts, v.method, v.target, v.body), v.signature);
});

test('signing vector: the server accepts it inside +-5 s of its timestamp and refuses it outside or altered', () => {
  const v = readmeVector();
  const secret = decodeSecret(v.secret);
  const ts = Number(v.ts);
  const check = (over: Partial<typeof v>, nowMs: number): string | null => {
    const x = { ...v, ...over };
    return checkSignature(secret, x.ts, x.signature, x.method, x.target, x.body, nowMs);
  };
  assert.equal(check({}, ts), null);
  assert.equal(check({}, ts + 5000), null);
  assert.equal(check({}, ts - 5000), null);
  assert.equal(check({}, ts + 5001), 'timestamp outside the window');
  assert.equal(check({}, ts - 5001), 'timestamp outside the window');
  assert.equal(check({ body: v.body.replace('"qty":10', '"qty":11') }, ts), 'bad signature');
  assert.equal(check({ target: `${v.target}?x=1` }, ts), 'bad signature');
  assert.equal(check({ method: 'DELETE' }, ts), 'bad signature');
  assert.equal(check({ ts: String(ts + 1) }, ts), 'bad signature');
  assert.equal(check({ signature: v.signature.replace(/=$/, '') }, ts), 'bad signature encoding');
});
