// The BigInt-free u64 helpers of the hot paths (src/lib/u64.ts) against
// BigInt arithmetic: decimal strings into (hi, lo) at the edges of 2^32 and
// 2^64 and on seeded random values of every length, and millisecond clock
// readings into nanosecond (hi, lo) pairs from 0 to far past today.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decimalToHiLo, msToNsHiLo } from '../../src/lib/u64.js';
import { Rng } from '../../src/lib/rng.js';

const out = new Uint32Array(2);

function halves(v: bigint): [number, number] {
  return [Number(v >> 32n), Number(v & 0xffffffffn)];
}

test('u64: decimalToHiLo equals BigInt at the edges and refuses what exceeds 2^64-1', () => {
  const edges = ['0', '1', '4294967295', '4294967296', '9007199254740991', '9007199254740993', '18446744073709551615'];
  edges.push('00000000000000000042');
  for (const s of edges) {
    assert.equal(decimalToHiLo(s, out), true, s);
    assert.deepEqual([out[0], out[1]], halves(BigInt(s)), s);
  }
  for (const s of ['18446744073709551616', '99999999999999999999', '20000000000000000000']) assert.equal(decimalToHiLo(s, out), false, s);
});

test('u64: decimalToHiLo equals BigInt on seeded random decimal strings of 1..20 digits', () => {
  const rng = new Rng(64);
  for (let i = 0; i < 20_000; i++) {
    const len = rng.int(1, 20);
    let s = '';
    for (let k = 0; k < len; k++) s += String(rng.int(0, 9));
    const v = BigInt(s);
    const ok = decimalToHiLo(s, out);
    assert.equal(ok, v <= 0xffffffffffffffffn, s);
    if (ok) assert.deepEqual([out[0], out[1]], halves(v), s);
  }
});

test('u64: msToNsHiLo equals ms * 10^6 in BigInt from 0 to year 2500', () => {
  const rng = new Rng(1_000_000);
  const cases = [0, 1, 4294, 4295, 65535, 65536, 1_700_000_000_123, Date.now(), 16_725_225_600_000];
  for (let i = 0; i < 20_000; i++) cases.push(Math.floor(rng.float() * 16_725_225_600_000));
  for (const ms of cases) {
    msToNsHiLo(ms, out);
    assert.deepEqual([out[0], out[1]], halves(BigInt(ms) * 1_000_000n), String(ms));
  }
});
