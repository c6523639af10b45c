// KeyMacs (src/gateway/auth.ts): the per-thread cache of key midstates that
// request signatures are verified from. A row reused by another key, or the
// same row in another read model on the same thread (in-process exchanges
// one after another), must verify with the new secret, never the cached one.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { checkMac, KeyMacs, sign } from '../../src/gateway/auth.js';

function verify(macs: KeyMacs, row: number, secret: Uint8Array, body: string): string | null {
  const ts = '1700000000000';
  const mac = macs.start(row, secret, ts, 'POST', '/v1/portfolio/orders');
  mac.update(Buffer.from(body));
  const why = checkMac(mac, sign(secret, ts, 'POST', '/v1/portfolio/orders', body));
  macs.release(mac);
  return why;
}

test('key macs: a row verifies with whatever secret it holds now, cached or not', () => {
  const macs = new KeyMacs();
  const a = new Uint8Array(randomBytes(32));
  const b = new Uint8Array(randomBytes(32));
  assert.equal(verify(macs, 3, a, '{"qty":1}'), null);
  assert.equal(verify(macs, 3, a, '{"qty":2}'), null, 'the cached midstates');
  assert.equal(verify(macs, 3, b, '{"qty":1}'), null, 'a new key in the same row');
  assert.equal(verify(macs, 3, a, '{"qty":1}'), null, 'the first secret again');
  assert.equal(verify(macs, 70, b, '{"qty":1}'), null, 'a row past the cache grows it');
  // A signature made with another secret never passes.
  const mac = macs.start(3, a, '1700000000000', 'POST', '/v1/portfolio/orders');
  mac.update(Buffer.from('{"qty":1}'));
  assert.equal(checkMac(mac, sign(b, '1700000000000', 'POST', '/v1/portfolio/orders', '{"qty":1}')), 'bad signature');
});
