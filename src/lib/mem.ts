// Mem: the typed-array views that generated record accessors read and write.
// One Mem covers one byte region (a ring's data area, a journal buffer, a
// scratch buffer). Every record starts 8-byte aligned and every field is
// naturally aligned (the layout generator enforces it), so an accessor is a
// single typed-array index. Little-endian only: checked once at start-up.

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

/** Typed arrays use the platform's byte order; records are little-endian. */
export const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
assert(LITTLE_ENDIAN, 'mem: this exchange runs on little-endian platforms only');
