// u64: 64-bit values without BigInt on hot paths. Timestamps (ns since the
// epoch, > 2^53) and client ids travel as two u32 halves (hi, lo); amounts
// and ids that stay below 2^53 travel as plain numbers. BigInt and decimal
// strings appear only at the edges (parse, render, tools).
// Pure: any thread.

const TWO32 = 4294967296;

/** -1, 0 or 1 comparing (aHi, aLo) with (bHi, bLo). */
export function cmpHiLo(aHi: number, aLo: number, bHi: number, bLo: number): number {
  if (aHi !== bHi) return aHi < bHi ? -1 : 1;
  if (aLo !== bLo) return aLo < bLo ? -1 : 1;
  return 0;
}

/** Adds a non-negative safe integer to (hi, lo); writes the result into out[0] (hi), out[1] (lo). */
export function addHiLo(hi: number, lo: number, add: number, out: Uint32Array): void {
  const addLo = add % TWO32;
  const addHi = (add - addLo) / TWO32;
  const sumLo = lo + addLo;
  const carry = sumLo >= TWO32 ? 1 : 0;
  out[1] = sumLo - carry * TWO32;
  out[0] = hi + addHi + carry;
}

export function hiLoToBigInt(hi: number, lo: number): bigint {
  return (BigInt(hi >>> 0) << 32n) | BigInt(lo >>> 0);
}

export function hiLoToString(hi: number, lo: number): string {
  if (hi === 0) return String(lo >>> 0);
  if (hi < 0x200000) return String(hi * TWO32 + lo);
  return hiLoToBigInt(hi, lo).toString();
}

export function bigIntHi(v: bigint): number {
  return Number((v >> 32n) & 0xffffffffn);
}

export function bigIntLo(v: bigint): number {
  return Number(v & 0xffffffffn);
}

export const U64_MAX = (1n << 64n) - 1n;
const U64_RE = /^[0-9]{1,20}$/;

/** Parses a strict u64 decimal string (`^[0-9]{1,20}$`, <= 2^64-1); null when invalid. */
export function parseU64(s: string): bigint | null {
  if (!U64_RE.test(s)) return null;
  const v = BigInt(s);
  return v <= U64_MAX ? v : null;
}

/** Nanoseconds since the epoch from a millisecond clock reading plus extra nanoseconds. */
export function nsFromMs(ms: number, extraNs = 0): bigint {
  return BigInt(Math.floor(ms)) * 1_000_000n + BigInt(Math.floor(extraNs));
}

/**
 * Parses a decimal string of 1..20 digits (the caller checked the form) into
 * out[0] (hi) and out[1] (lo) without a BigInt; false when it exceeds 2^64-1.
 * Every step stays exact in doubles: lo * 10 + 9 < 2^36, hi * 10 + carry < 2^36.
 */
export function decimalToHiLo(s: string, out: Uint32Array): boolean {
  let hi = 0;
  let lo = 0;
  for (let i = 0; i < s.length; i++) {
    const x = lo * 10 + (s.charCodeAt(i) - 48);
    const carry = Math.floor(x / TWO32);
    lo = x - carry * TWO32;
    hi = hi * 10 + carry;
    if (hi >= TWO32) return false;
  }
  out[0] = hi;
  out[1] = lo;
  return true;
}

/**
 * Nanoseconds since the epoch of a whole-millisecond reading (ms * 10^6),
 * into out[0] (hi) and out[1] (lo), without a BigInt: ms = a * 2^16 + b, so
 * ms * 10^6 = (a * 10^6) * 2^16 + b * 10^6, each part exact below 2^53.
 */
export function msToNsHiLo(ms: number, out: Uint32Array): void {
  const b = ms % 65536;
  const a = (ms - b) / 65536;
  const am = a * 1e6;
  const amLo = am % 65536;
  const amHi = (am - amLo) / 65536;
  const x = amLo * 65536 + b * 1e6;
  const carry = Math.floor(x / TWO32);
  out[1] = x - carry * TWO32;
  out[0] = amHi + carry;
}
