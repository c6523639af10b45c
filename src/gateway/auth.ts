// auth: request signatures and replay protection. Gateway, accounts-service
// and control-plane threads.
//
// DX-ACCESS-SIGNATURE = base64(HMAC-SHA256(secret, `${ts}\n${METHOD}\n${target}\n${body}`))
// where target is the raw request target as sent (path, or path?query) and the
// secret is the key's 32 bytes. Timestamps (Unix ms) must be within +-5000 ms.
// Every failure is the same 401 unauthorized: the reason goes to the log only.
//
// ReplayGuard: a mutation whose exact signature was already seen inside the
// replay window is refused. The table is a SharedArrayBuffer shared by every
// gateway thread (a replay may arrive on another connection, hence another
// thread), open addressing keyed by the first 64 bits of the signature, each
// entry stamped with its timestamp in seconds; expired entries are reused.
// A short spinlock (Atomics.compareExchange) guards each insert.

import { createHmac, timingSafeEqual, type Hmac } from 'node:crypto';

export const REPLAY_WINDOW_MS = 5000;

export function canonicalString(tsMs: string, method: string, target: string, body: string): string {
  return `${tsMs}\n${method}\n${target}\n${body}`;
}

export function sign(secret: Uint8Array, tsMs: string, method: string, target: string, body: string): string {
  return createHmac('sha256', secret).update(canonicalString(tsMs, method, target, body)).digest('base64');
}

const TS_RE = /^[0-9]{1,16}$/;

/** Why the timestamp header fails (null when it is inside the window). */
export function checkTimestamp(tsHeader: string, nowMs: number): string | null {
  if (!TS_RE.test(tsHeader)) return 'bad timestamp';
  const ts = Number(tsHeader);
  if (ts < nowMs - REPLAY_WINDOW_MS || ts > nowMs + REPLAY_WINDOW_MS) return 'timestamp outside the window';
  return null;
}

/**
 * An HMAC over the canonical string, fed the body chunk by chunk as it
 * arrives, so an oversized body is still authenticated (401 comes before 413)
 * without being kept.
 */
export function startSignature(secret: Uint8Array, tsHeader: string, method: string, target: string): Hmac {
  const mac = createHmac('sha256', secret);
  mac.update(`${tsHeader}\n${method}\n${target}\n`);
  return mac;
}

/** Compares the finished HMAC with the header in constant time; null when they match. */
export function finishSignature(mac: Hmac, signature: string): string | null {
  const expected = mac.digest();
  const given = Buffer.from(signature, 'base64');
  if (given.length !== expected.length || given.toString('base64') !== signature) return 'bad signature encoding';
  return timingSafeEqual(given, expected) ? null : 'bad signature';
}

/** Why a credential failed (for logs and tests); null when it is valid. */
export function checkSignature(
  secret: Uint8Array, tsHeader: string, signature: string, method: string, target: string, body: string | Buffer, nowMs: number,
): string | null {
  const ts = checkTimestamp(tsHeader, nowMs);
  if (ts !== null) return ts;
  const mac = startSignature(secret, tsHeader, method, target);
  mac.update(body);
  return finishSignature(mac, signature);
}

const ENTRY_WORDS = 4; // sig lo, sig hi, ts seconds, used
const LOCK_WORD = 0;

export class ReplayGuard {
  static allocate(entries = 1 << 18): SharedArrayBuffer {
    return new SharedArrayBuffer(16 + entries * ENTRY_WORDS * 4);
  }

  private readonly lock: Int32Array;
  private readonly table: Uint32Array;
  private readonly mask: number;

  constructor(readonly sab: SharedArrayBuffer) {
    this.lock = new Int32Array(sab, 0, 4);
    this.table = new Uint32Array(sab, 16);
    this.mask = this.table.length / ENTRY_WORDS - 1;
  }

  /**
   * Signatures still remembered at nowMs (entries not yet expired) and the
   * table's capacity: /metrics. A scan of the whole table without the lock
   * (a count, not a decision; an entry written meanwhile may be missed).
   */
  occupancy(nowMs: number): { live: number; capacity: number } {
    const expireBefore = Math.floor(nowMs / 1000) - Math.ceil((2 * REPLAY_WINDOW_MS) / 1000) - 1;
    const t = this.table;
    let live = 0;
    for (let e = 0; e < t.length; e += ENTRY_WORDS) if (t[e + 3] === 1 && t[e + 2]! >= expireBefore) live++;
    return { live, capacity: this.mask + 1 };
  }

  /** Records the signature; false when it was already seen inside the window. */
  firstUse(signature: string, nowMs: number): boolean {
    const raw = Buffer.from(signature, 'base64');
    const lo = raw.length >= 4 ? raw.readUInt32LE(0) : 0;
    const hi = raw.length >= 8 ? raw.readUInt32LE(4) : 0;
    const nowS = Math.floor(nowMs / 1000);
    const expireBefore = nowS - Math.ceil((2 * REPLAY_WINDOW_MS) / 1000) - 1;
    // Acquire the table lock (spin: the critical section is a few probes).
    while (Atomics.compareExchange(this.lock, LOCK_WORD, 0, 1) !== 0) { /* spin */ }
    try {
      const t = this.table;
      let i = (Math.imul(lo ^ hi, 0x9e3779b1) >>> 0) & this.mask;
      for (let probes = 0; probes <= this.mask; probes++) {
        const e = i * ENTRY_WORDS;
        if (t[e + 3] === 0 || t[e + 2]! < expireBefore) {
          t[e] = lo;
          t[e + 1] = hi;
          t[e + 2] = nowS;
          t[e + 3] = 1;
          return true;
        }
        if (t[e] === lo && t[e + 1] === hi) return false;
        i = (i + 1) & this.mask;
      }
      return true; // table full of live entries: fail open on replay memory, the signature was valid
    } finally {
      // Release: the entry writes above happen before the next holder's reads.
      Atomics.store(this.lock, LOCK_WORD, 0);
    }
  }
}
