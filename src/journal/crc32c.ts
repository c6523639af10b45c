// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), slice-by-8 tables.
// The journal frames every record with it; snapshots checksum their body.
// Node 20 has no built-in CRC-32C (zlib.crc32 is the other polynomial).
// Pure: any thread (journal thread, piscina workers, start-up, tools).

const POLY = 0x82f63b78;
const T = new Int32Array(8 * 256);
for (let n = 0; n < 256; n++) {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ POLY : c >>> 1;
  T[n] = c;
}
for (let n = 0; n < 256; n++) {
  let c = T[n]!;
  for (let t = 1; t < 8; t++) {
    c = T[c & 0xff]! ^ (c >>> 8);
    T[t * 256 + n] = c;
  }
}

/** CRC-32C of bytes[start, end), continuing from `crc` (0 for a fresh checksum); an unsigned 32-bit result. */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length, crc = 0): number {
  let c = ~crc;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const a = c ^ (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24));
    c = T[7 * 256 + (a & 0xff)]! ^ T[6 * 256 + ((a >>> 8) & 0xff)]! ^ T[5 * 256 + ((a >>> 16) & 0xff)]! ^ T[4 * 256 + (a >>> 24)]!
      ^ T[3 * 256 + bytes[i + 4]!]! ^ T[2 * 256 + bytes[i + 5]!]! ^ T[256 + bytes[i + 6]!]! ^ T[bytes[i + 7]!]!;
  }
  for (; i < end; i++) c = T[(c ^ bytes[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}
