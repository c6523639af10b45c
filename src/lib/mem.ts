// Mem: the typed-array views that generated record accessors read and write.
// One Mem covers one byte region (a ring's data area, a journal buffer, a
// scratch buffer). Every record starts 8-byte aligned and every field is
// naturally aligned (the layout generator enforces it), so an accessor is a
// single typed-array index. Little-endian only: checked once at start-up.
// Pure: any thread.

import { assert } from './assert.js';

export interface Mem {
  readonly u8: Uint8Array;
  readonly u16: Uint16Array;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
}

export function memOf(buf: ArrayBufferLike, byteOffset = 0, byteLength = buf.byteLength - byteOffset): Mem {
  assert(byteOffset % 8 === 0 && byteLength % 8 === 0, 'mem: region must be 8-byte aligned');
  return {
    u8: new Uint8Array(buf, byteOffset, byteLength),
    u16: new Uint16Array(buf, byteOffset, byteLength >>> 1),
    u32: new Uint32Array(buf, byteOffset, byteLength >>> 2),
    i32: new Int32Array(buf, byteOffset, byteLength >>> 2),
  };
}

/**
 * Copies `bytes` (a multiple of 4) from byte o of m to byte at of dst, word
 * by word: records start 8-byte aligned and are whole words, and a copy
 * through set(subarray(...)) would allocate a view per record.
 */
export function copyWords(m: Mem, o: number, dst: Uint32Array, at: number, bytes: number): void {
  const src = m.u32;
  for (let i = o >>> 2, j = at >>> 2, end = (o + bytes) >>> 2; i < end; i++, j++) dst[j] = src[i]!;
}

/** Typed arrays use the platform's byte order; records are little-endian. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
assert(LITTLE_ENDIAN, 'mem: this exchange runs on little-endian platforms only');

/**
 * Touches every page of a shared buffer by writing one byte of it back
 * unchanged, so that the kernel backs the whole buffer now, at start-up: the
 * rings and shared tables then take no first-touch page fault on the hot
 * path, and the process's resident memory does not creep up for minutes
 * while a 16 MiB event ring is written the first time round. Main thread,
 * before any other thread uses the buffer.
 */
export function prefault(buf: ArrayBufferLike): void {
  const u8 = new Uint8Array(buf);
  for (let i = 0; i < u8.length; i += 4096) u8[i] = u8[i]!;
}
