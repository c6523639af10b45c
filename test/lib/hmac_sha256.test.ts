// The JavaScript HMAC-SHA256 that verifies request signatures
// (src/lib/hmac_sha256.ts) against node:crypto, which clients sign with: the
// RFC 4231 vectors whose keys fit a block, seeded random keys and messages
// fed in random pieces (block edges, the 55/56/64-byte padding cases, ASCII
// strings and bytes mixed), and the base64 comparison that accepts exactly
// the canonical rendering of the digest.

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { compareBase64Digest, digestHi, digestLo, HmacSha256, KEY_STATE_WORDS, keyStates } from '../../src/lib/hmac_sha256.js';
import { Rng } from '../../src/lib/rng.js';

function hex(d: Int32Array): string {
  let s = '';
  for (let i = 0; i < 8; i++) s += (d[i]! >>> 0).toString(16).padStart(8, '0');
  return s;
}

function macOf(key: Uint8Array): HmacSha256 {
  const states = new Int32Array(KEY_STATE_WORDS);
  keyStates(key, states, 0);
  return new HmacSha256().begin(states, 0);
}

test('hmac-sha256: RFC 4231 test cases 1-4 (keys of at most one block)', () => {
  const cases: [string, string, string][] = [
    ['0b'.repeat(20), Buffer.from('Hi There').toString('hex'), 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7'],
    [Buffer.from('Jefe').toString('hex'), Buffer.from('what do ya want for nothing?').toString('hex'),
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843'],
    ['aa'.repeat(20), 'dd'.repeat(50), '773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe'],
    ['0102030405060708090a0b0c0d0e0f10111213141516171819', 'cd'.repeat(50),
      '82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b'],
  ];
  for (const [key, data, want] of cases) {
    assert.equal(hex(macOf(Buffer.from(key, 'hex')).update(Buffer.from(data, 'hex')).finish()), want);
  }
});

test('hmac-sha256: equals node:crypto on seeded keys and messages of 0..300 bytes fed in random pieces', () => {
  const rng = new Rng(4231);
  const mac = new HmacSha256();
  const states = new Int32Array(KEY_STATE_WORDS * 2);
  for (let round = 0; round < 600; round++) {
    const key = Uint8Array.from({ length: rng.int(1, 64) }, () => rng.int(0, 255));
    const at = (round % 2) * KEY_STATE_WORDS;
    keyStates(key, states, at);
    const n = round < 301 ? round : rng.int(0, 300);
    const ascii = rng.chance(0.5);
    const msg = Uint8Array.from({ length: n }, () => (ascii ? rng.int(0x20, 0x7e) : rng.int(0, 255)));
    mac.begin(states, at);
    for (let i = 0; i < n; ) {
      const len = Math.min(n - i, rng.chance(0.3) ? 64 : rng.int(0, 70));
      const piece = msg.subarray(i, i + len);
      if (ascii && rng.chance(0.5)) assert.equal(mac.updateAscii(Buffer.from(piece).toString('latin1')), true);
      else mac.update(piece);
      i += len;
    }
    const want = createHmac('sha256', key).update(msg).digest('hex');
    assert.equal(hex(mac.finish()), want, `key ${Buffer.from(key).toString('hex')} message of ${n} bytes`);
  }
});

test('hmac-sha256: updateAscii refuses a string with any character above 0x7f and feeds nothing', () => {
  const key = Buffer.from('k');
  const mac = macOf(key);
  assert.equal(mac.updateAscii('ab\u00e9'), false);
  assert.equal(mac.updateAscii('ab\u20ac'), false);
  assert.equal(mac.updateAscii('ab'), true);
  assert.equal(hex(mac.finish()), createHmac('sha256', key).update('ab').digest('hex'));
});

test('hmac-sha256: the digest compares equal only to its canonical base64; the replay key is its first 8 bytes', () => {
  const key = Buffer.from('0123456789abcdef0123456789abcdef');
  const msg = Buffer.from('1700000000123\nPOST\n/v1/portfolio/orders\n{"qty":10}');
  const raw = createHmac('sha256', key).update(msg).digest();
  const sig = raw.toString('base64');
  const d = macOf(key).update(msg).finish();
  assert.equal(compareBase64Digest(d, sig), 0);
  assert.equal(digestLo(d), raw.readUInt32LE(0));
  assert.equal(digestHi(d), raw.readUInt32LE(4));
  // Any other 32 bytes: well formed, different.
  const other = Buffer.from(raw);
  other[31] ^= 1;
  assert.equal(compareBase64Digest(d, other.toString('base64')), 1);
  other[31] ^= 1;
  other[0] ^= 0x80;
  assert.equal(compareBase64Digest(d, other.toString('base64')), 1);
  // Not the canonical rendering of 32 bytes.
  assert.equal(compareBase64Digest(d, sig.slice(0, 43)), 2, 'no padding');
  assert.equal(compareBase64Digest(d, `${sig}=`), 2, 'too long');
  assert.equal(compareBase64Digest(d, `${sig.slice(0, 42)}.=`), 2, 'a character outside the alphabet');
  assert.equal(compareBase64Digest(d, `${sig.slice(0, 42)}\u00e9=`), 2, 'a character above 0x7f');
  assert.equal(compareBase64Digest(d, sig.replace(/[+/]/g, (c) => (c === '+' ? '-' : '_'))), sig.match(/[+/]/) ? 2 : 0, 'base64url');
  // The last character's two unused bits set: decodes to the same bytes, but is not canonical.
  const last = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  const v = last.indexOf(sig[42]!);
  assert.equal(v & 3, 0, 'the canonical last character leaves its two low bits zero');
  const loose = `${sig.slice(0, 42)}${last[v | 1]}=`;
  assert.deepEqual(Buffer.from(loose, 'base64'), raw, 'node decodes the loose form to the same bytes');
  assert.equal(compareBase64Digest(d, loose), 2);
});
