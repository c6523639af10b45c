// Record framing shared by the rings. Every record starts 8-byte aligned; its
// first u32 is its total length (a multiple of 8, >= 8) and the u16 at byte 4
// is its type. Type 0 is the ring's padding record: written by a producer to
// fill the space before the end of the data area when the next record does
// not fit there, skipped by every consumer. tryClaim writes the length and
// a placeholder type 0xffff; the caller writes everything else, in place.
// Nothing else is interpreted.
// Runs on every thread that touches a ring.

import { AssertionError } from '../lib/assert.js';

export const RECORD_ALIGN = 8;
export const RECORD_MIN_BYTES = 8;
export const PADDING_TYPE = 0;
/** What tryClaim leaves in the type field (bytes 6..7 zero) until the caller writes the real type. */
export const UNSET_TYPE = 0xffff;

/** Header field offsets shared by both ring kinds (bytes). */
export const HDR_MAGIC = 0;
export const HDR_VERSION = 4;
export const HDR_FINGERPRINT = 8;
export const HDR_CAPACITY = 12;
export const CACHE_LINE = 64;

export const MIN_DATA_BYTES = 4096;
export const MAX_DATA_BYTES = 2 ** 30;

export function isPowerOfTwo(n: number): boolean {
  return Number.isInteger(n) && n > 0 && (n & (n - 1)) === 0;
}

export function checkDataBytes(who: string, dataBytes: number): void {
  if (!isPowerOfTwo(dataBytes) || dataBytes < MIN_DATA_BYTES || dataBytes > MAX_DATA_BYTES) {
    throw new Error(`${who}: dataBytes must be a power of two in [${MIN_DATA_BYTES}, 2^30], got ${dataBytes}`);
  }
}

export function checkFingerprint(fingerprint: number): void {
  if (!Number.isInteger(fingerprint) || fingerprint < 0 || fingerprint > 0xffffffff) {
    throw new Error(`ring: fingerprint must be a u32, got ${fingerprint}`);
  }
}

export function hex32(n: number): string {
  return '0x' + (n >>> 0).toString(16).padStart(8, '0');
}

/**
 * Checks the header of an attached ring. Throws a plain Error (not an
 * assertion): attaching code built against another layout is a deployment
 * mistake the operator must see named.
 */
export function checkHeader(who: string, sab: SharedArrayBuffer, magic: number, version: number, fingerprint: number): void {
  if (!(sab instanceof SharedArrayBuffer)) throw new Error(`${who}: expected a SharedArrayBuffer`);
  if (sab.byteLength < CACHE_LINE) throw new Error(`${who}: buffer too small (${sab.byteLength} bytes)`);
  const h = new Uint32Array(sab, 0, 4);
  if (h[HDR_MAGIC >>> 2] !== magic) {
    throw new Error(`${who}: bad magic ${hex32(h[HDR_MAGIC >>> 2]!)}, expected ${hex32(magic)} (not a ${who} buffer)`);
  }
  if (h[HDR_VERSION >>> 2] !== version) {
    throw new Error(`${who}: header version ${h[HDR_VERSION >>> 2]}, this code reads version ${version}`);
  }
  const have = h[HDR_FINGERPRINT >>> 2]!;
  if (have !== fingerprint >>> 0) {
    throw new Error(`${who}: layout fingerprint mismatch: ring has ${hex32(have)}, attaching code expects ${hex32(fingerprint)}`);
  }
}

/**
 * Thrown from the rare branch of a consumer that met a bad length word: a
 * producer bug or memory corruption, so an assertion (crash, restart, replay).
 */
export function corruptRecord(who: string, position: number, len: number): never {
  throw new AssertionError(`${who}: corrupt record at position ${position >>> 0}: length ${len}`);
}
