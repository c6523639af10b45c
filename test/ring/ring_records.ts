// Test records for ring stress tests: length and every word after the
// length are a deterministic function of the sequence number, so a consumer
// detects loss, reordering, duplication and torn records (the last word is
// written last and checked too). Used by the tests and their worker fixture.
//
// Layout: u32 len (written by tryClaim), u16 type = 1, u16 seq & 0xffff,
// then (len >= 16) u32 seq, then u32 words f(seq, i) up to the end.

export const TEST_TYPE = 1;
export const STOP_TYPE = 2;

export function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x7feb352d);
  x = Math.imul(x ^ (x >>> 15), 0x846ca68b);
  return (x ^ (x >>> 16)) >>> 0;
}

/** Record length for a sequence number: 8 .. 256 bytes, a multiple of 8. */
export function testRecordLen(seq: number): number {
  return 8 + ((mix32(seq) & 31) << 3);
}

function wordOf(seq: number, i: number): number {
  return mix32((Math.imul(seq, 0x9e3779b1) + i) >>> 0);
}

/** Writes the record body after tryClaim wrote its length at byte offset off. */
export function writeTestRecord(u32: Uint32Array, off: number, seq: number, len: number): void {
  const w = off >>> 2;
  u32[w + 1] = TEST_TYPE | ((seq & 0xffff) << 16);
  const n = len >>> 2;
  if (n > 2) {
    u32[w + 2] = seq;
    for (let i = 3; i < n; i++) u32[w + i] = wordOf(seq, i);
  }
}

/** Returns null when the record at off is record seq, else what is wrong. */
export function checkTestRecord(u32: Uint32Array, off: number, seq: number): string | null {
  const w = off >>> 2;
  const len = testRecordLen(seq);
  if (u32[w] !== len) return `seq ${seq}: length ${u32[w]}, expected ${len}`;
  if (u32[w + 1] !== ((TEST_TYPE | ((seq & 0xffff) << 16)) >>> 0)) {
    return `seq ${seq}: type/seq word ${u32[w + 1]!.toString(16)}, expected ${((TEST_TYPE | ((seq & 0xffff) << 16)) >>> 0).toString(16)}`;
  }
  const n = len >>> 2;
  if (n > 2) {
    if (u32[w + 2] !== seq) return `seq ${seq}: seq word ${u32[w + 2]}`;
    for (let i = 3; i < n; i++) {
      if (u32[w + i] !== wordOf(seq, i)) return `seq ${seq}: word ${i} of ${n} is ${u32[w + i]}, expected ${wordOf(seq, i)}`;
    }
  }
  return null;
}
