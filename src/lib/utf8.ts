// utf8: fixed-size, NUL-padded UTF-8 fields inside records (titles, refs,
// destinations). Not for hot paths: used when markets, deposits and
// withdrawals are created and when views render them.
// Pure: any thread.

import type { Mem } from './mem.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8', { fatal: false });

export function readUtf8(m: Mem, off: number, size: number): string {
  let end = off;
  const stop = off + size;
  while (end < stop && m.u8[end] !== 0) end++;
  return decoder.decode(m.u8.subarray(off, end));
}

/** Writes s NUL-padded; a string longer than size bytes is cut at a character boundary. */
export function writeUtf8(m: Mem, off: number, size: number, s: string): void {
  const dst = m.u8.subarray(off, off + size);
  const { written } = encoder.encodeInto(s, dst);
  dst.fill(0, written);
}

/** Byte length of s in UTF-8, for validation at the edges. */
export function utf8Length(s: string): number {
  return encoder.encode(s).length;
}
