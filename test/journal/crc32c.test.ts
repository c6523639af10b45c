// CRC-32C known answers: the standard check value and the published vectors
// of RFC 3720 (iSCSI) appendix B.4, plus a bit-by-bit implementation of the
// same polynomial as a second opinion on lengths and offsets the slice-by-8
// loop handles in different branches (tails, unaligned starts, continuation).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crc32c } from '../../src/journal/crc32c.js';
import { Rng } from '../../src/lib/rng.js';

/** Reflected CRC-32C, one bit at a time (the textbook definition). */
function bitwise(b: Uint8Array): number {
  let c = 0xffffffff;
  for (const x of b) {
    c ^= x;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

const hex = (s: string): Uint8Array => Uint8Array.from(Buffer.from(s.replace(/\s+/g, ''), 'hex'));

test('crc32c: the standard check value, "123456789" -> 0xE3069283', () => {
  assert.equal(crc32c(new TextEncoder().encode('123456789')), 0xe3069283);
});

test('crc32c: the RFC 3720 appendix B.4 vectors (zeros, ones, ascending, descending, an iSCSI Read PDU)', () => {
  assert.equal(crc32c(new Uint8Array(32)), 0x8a9136aa);
  assert.equal(crc32c(new Uint8Array(32).fill(0xff)), 0x62a8ab43);
  assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_v, i) => i)), 0x46dd794e);
  assert.equal(crc32c(Uint8Array.from({ length: 32 }, (_v, i) => 31 - i)), 0x113fdb5c);
  const readPdu = hex(`01c00000 00000000 00000000 00000000 14000000 00000400 00000014 00000018
                       28000000 00000000 02000000 00000000`);
  assert.equal(readPdu.length, 48);
  assert.equal(crc32c(readPdu), 0xd9963a56);
  assert.equal(crc32c(new Uint8Array(0)), 0);
});

test('crc32c: equals the bit-by-bit definition at every length 0..300 and at unaligned starts', () => {
  const rng = new Rng(32);
  const bytes = Uint8Array.from({ length: 320 }, () => rng.int(0, 255));
  for (let len = 0; len <= 300; len++) assert.equal(crc32c(bytes, 0, len), bitwise(bytes.subarray(0, len)), `length ${len}`);
  for (let start = 1; start < 16; start++) {
    assert.equal(crc32c(bytes, start, start + 100), bitwise(bytes.subarray(start, start + 100)), `start ${start}`);
  }
});

test('crc32c: continuing from a previous checksum equals one checksum over the whole', () => {
  const data = new TextEncoder().encode('123456789');
  for (let cut = 0; cut <= data.length; cut++) {
    assert.equal(crc32c(data, cut, data.length, crc32c(data, 0, cut)), 0xe3069283, `cut at ${cut}`);
  }
});
