// HMAC-SHA256 in JavaScript over typed arrays, for verifying request
// signatures on the I/O threads without an object per request. node:crypto's
// createHmac allocates a native context and a JS wrapper per call and keys it
// afresh (two compression rounds of the padded key) each time; here a key's
// inner and outer midstates (SHA-256 after its ipad and opad blocks) are
// computed once (keyStates) and a verification only compresses the message
// blocks and one outer block, into buffers the HmacSha256 object owns.
// Measured in bench/gateway_path.ts (docs/latency.md). FIPS 180-4 and
// RFC 2104; test/lib/hmac_sha256.test.ts checks it against node:crypto and
// the RFC 4231 vectors. Pure: any thread.

import { assert } from './assert.js';

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be,
  0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa,
  0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85,
  0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3,
  0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f,
  0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const IV = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/** Message schedule scratch: one per thread is enough (compress never re-enters). */
const W = new Int32Array(64);

/** One SHA-256 compression of the 64 bytes at `off` of `b` into the state h[at..at+8). */
function compress(h: Int32Array, at: number, b: Uint8Array, off: number): void {
  const w = W;
  for (let i = 0; i < 16; i++) {
    const j = off + (i << 2);
    w[i] = (b[j]! << 24) | (b[j + 1]! << 16) | (b[j + 2]! << 8) | b[j + 3]!;
  }
  for (let i = 16; i < 64; i++) {
    const x = w[i - 15]!;
    const y = w[i - 2]!;
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
  }
  let a = h[at]!;
  let bb = h[at + 1]!;
  let c = h[at + 2]!;
  let d = h[at + 3]!;
  let e = h[at + 4]!;
  let f = h[at + 5]!;
  let g = h[at + 6]!;
  let hh = h[at + 7]!;
  for (let i = 0; i < 64; i++) {
    const s1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (hh + s1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
    const s0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (s0 + ((a & bb) ^ (a & c) ^ (bb & c))) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = bb;
    bb = a;
    a = (t1 + t2) | 0;
  }
  h[at] = (h[at]! + a) | 0;
  h[at + 1] = (h[at + 1]! + bb) | 0;
  h[at + 2] = (h[at + 2]! + c) | 0;
  h[at + 3] = (h[at + 3]! + d) | 0;
  h[at + 4] = (h[at + 4]! + e) | 0;
  h[at + 5] = (h[at + 5]! + f) | 0;
  h[at + 6] = (h[at + 6]! + g) | 0;
  h[at + 7] = (h[at + 7]! + hh) | 0;
}

/** Words of a key's midstates: inner (8) then outer (8). */
export const KEY_STATE_WORDS = 16;

const padBlock = new Uint8Array(64);

/**
 * Writes the inner and outer midstates of `secret` (at most 64 bytes; longer
 * HMAC keys are hashed first, which this exchange never needs: its keys are
 * 32 bytes) into out[at..at+16).
 */
export function keyStates(secret: Uint8Array, out: Int32Array, at: number): void {
  assert(secret.length <= 64, 'hmac: keys longer than a block are not supported');
  for (let pass = 0; pass < 2; pass++) {
    const x = pass === 0 ? 0x36 : 0x5c;
    for (let i = 0; i < 64; i++) padBlock[i] = (i < secret.length ? secret[i]! : 0) ^ x;
    const s = at + pass * 8;
    out.set(IV, s);
    compress(out, s, padBlock, 0);
  }
}

/**
 * One HMAC computation at a time, reusable: begin with a key's midstates,
 * update with the message in pieces, finish. The result is `digest` (eight
 * big-endian words, the HMAC's 32 bytes in order).
 */
export class HmacSha256 {
  /** The running state, then the result. */
  readonly digest = new Int32Array(8);
  private readonly outer = new Int32Array(8);
  private readonly block = new Uint8Array(64);
  private buffered = 0;
  /** Message bytes so far (the key block excluded). */
  private length = 0;

  begin(states: Int32Array, at: number): this {
    for (let i = 0; i < 8; i++) {
      this.digest[i] = states[at + i]!;
      this.outer[i] = states[at + 8 + i]!;
    }
    this.buffered = 0;
    this.length = 0;
    return this;
  }

  update(bytes: Uint8Array): this {
    let i = 0;
    const n = bytes.length;
    const block = this.block;
    if (this.buffered > 0) {
      while (this.buffered < 64 && i < n) block[this.buffered++] = bytes[i++]!;
      if (this.buffered < 64) {
        this.length += n;
        return this;
      }
      compress(this.digest, 0, block, 0);
      this.buffered = 0;
    }
    for (; i + 64 <= n; i += 64) compress(this.digest, 0, bytes, i);
    while (i < n) block[this.buffered++] = bytes[i++]!;
    this.length += n;
    return this;
  }

  /** Feeds a string of code units below 0x80 as its bytes; false (nothing fed) when it holds any other character. */
  updateAscii(s: string): boolean {
    const n = s.length;
    for (let i = 0; i < n; i++) if (s.charCodeAt(i) > 0x7f) return false;
    const block = this.block;
    for (let i = 0; i < n; i++) {
      block[this.buffered++] = s.charCodeAt(i);
      if (this.buffered === 64) {
        compress(this.digest, 0, block, 0);
        this.buffered = 0;
      }
    }
    this.length += n;
    return true;
  }

  /** Pads, finishes the inner hash and applies the outer one: `digest` holds the HMAC. */
  finish(): Int32Array {
    const block = this.block;
    // Inner: message length in bits after the 64-byte key block.
    const bits = (this.length + 64) * 8;
    block[this.buffered++] = 0x80;
    if (this.buffered > 56) {
      block.fill(0, this.buffered, 64);
      compress(this.digest, 0, block, 0);
      this.buffered = 0;
    }
    block.fill(0, this.buffered, 56);
    writeLength(block, bits);
    compress(this.digest, 0, block, 0);
    // Outer: the inner hash (32 bytes) after the opad block.
    const d = this.digest;
    for (let i = 0; i < 8; i++) {
      const v = d[i]!;
      block[i << 2] = v >>> 24;
      block[(i << 2) + 1] = v >>> 16;
      block[(i << 2) + 2] = v >>> 8;
      block[(i << 2) + 3] = v;
    }
    block[32] = 0x80;
    block.fill(0, 33, 56);
    writeLength(block, (64 + 32) * 8);
    d.set(this.outer);
    compress(d, 0, block, 0);
    this.buffered = 0;
    return d;
  }
}

/** The big-endian 64-bit bit count in bytes 56..63 (messages here stay far below 2^32 bits). */
function writeLength(block: Uint8Array, bits: number): void {
  const hi = Math.floor(bits / 4294967296);
  block[56] = hi >>> 24;
  block[57] = hi >>> 16;
  block[58] = hi >>> 8;
  block[59] = hi;
  block[60] = bits >>> 24;
  block[61] = bits >>> 16;
  block[62] = bits >>> 8;
  block[63] = bits;
}

const B64 = (() => {
  const t = new Int8Array(128).fill(-1);
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
  for (let i = 0; i < 64; i++) t[alphabet.charCodeAt(i)] = i;
  return t;
})();

/** Scratch of decodeDigest: the 32 bytes of a signature. */
const sigBytes = new Uint8Array(33);

/**
 * Compares a 32-byte digest (eight big-endian words) with its standard
 * base64 rendering `sig` (44 characters, one '=' of padding, unused bits
 * zero: the only canonical form), in time that depends on neither's
 * content. Returns 0 when equal, 1 when the signature is well formed but
 * different, 2 when it is not a canonical base64 rendering of 32 bytes.
 */
export function compareBase64Digest(digest: Int32Array, sig: string): 0 | 1 | 2 {
  if (sig.length !== 44 || sig.charCodeAt(43) !== 0x3d) return 2;
  let bad = 0;
  let o = 0;
  for (let i = 0; i < 44; i += 4) {
    const c0 = sig.charCodeAt(i);
    const c1 = sig.charCodeAt(i + 1);
    const c2 = sig.charCodeAt(i + 2);
    const c3 = i === 40 ? 0x41 : sig.charCodeAt(i + 3); // the last quantum holds 2 bytes and '='
    const v0 = c0 < 128 ? B64[c0]! : -1;
    const v1 = c1 < 128 ? B64[c1]! : -1;
    const v2 = c2 < 128 ? B64[c2]! : -1;
    const v3 = c3 < 128 ? B64[c3]! : -1;
    bad |= (v0 | v1 | v2 | v3) & 0x80;
    const v = ((v0 & 63) << 18) | ((v1 & 63) << 12) | ((v2 & 63) << 6) | (v3 & 63);
    sigBytes[o++] = v >>> 16;
    sigBytes[o++] = (v >>> 8) & 0xff;
    sigBytes[o++] = v & 0xff;
  }
  // 11 quanta wrote 33 bytes: the 33rd is the unused low bits of the last character, zero when canonical.
  if (bad !== 0 || sigBytes[32] !== 0) return 2;
  let diff = 0;
  for (let i = 0; i < 8; i++) {
    const j = i << 2;
    diff |= digest[i]! ^ ((sigBytes[j]! << 24) | (sigBytes[j + 1]! << 16) | (sigBytes[j + 2]! << 8) | sigBytes[j + 3]!);
  }
  return diff === 0 ? 0 : 1;
}

/** The digest's bytes 0..3 and 4..7 read as little-endian u32s (what the replay guard keys on). */
export function digestLo(digest: Int32Array): number {
  return bswap(digest[0]!);
}

export function digestHi(digest: Int32Array): number {
  return bswap(digest[1]!);
}

function bswap(v: number): number {
  return (((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24)) >>> 0;
}
