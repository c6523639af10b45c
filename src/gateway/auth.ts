// auth: request signatures and replay protection. Gateway, accounts-service
// and control-plane threads.
//
// DX-ACCESS-SIGNATURE = base64(HMAC-SHA256(secret, `${ts}\n${METHOD}\n${target}\n${body}`))
// where target is the raw request target as sent (path, or path?query) and the
// secret is the key's 32 bytes. Timestamps (Unix ms) must be within +-5000 ms.
// Every failure is the same 401 unauthorized: the reason goes to the log only.
//
// Verification runs in JavaScript (src/lib/hmac_sha256.ts) from each key's
// midstates, computed once per key and kept by KeyMacs: no native object and
// no key schedule per request. Signing (clients, tools, tests) uses
// node:crypto; test/lib/hmac_sha256.test.ts keeps the two equal.
//
// ReplayGuard: a mutation whose exact signature was already seen inside the
// replay window is refused. The table is a SharedArrayBuffer shared by every
// gateway thread (a replay may arrive on another connection, hence another
// thread), open addressing keyed by the first 64 bits of the signature, each
// entry stamped with its timestamp in seconds; expired entries are reused.
// A short spinlock (Atomics.compareExchange) guards each insert.

import { createHmac } from 'node:crypto';
import { grown, nextCapacity } from '../lib/grow.js';
import { compareBase64Digest, digestHi, digestLo, HmacSha256, KEY_STATE_WORDS, keyStates } from '../lib/hmac_sha256.js';

export const REPLAY_WINDOW_MS = 5000;
/** Key secrets are 32 bytes (HMAC keys: one block after padding). */
const SECRET_BYTES = 32;

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
 * Each key's HMAC midstates, by key row, computed the first time the key
 * signs on this thread. Rows are reused for new keys, and one thread may
 * serve several read models over its life (the keys service of in-process
 * test exchanges, one after another), so an entry is used only for the very
 * secret it was computed from (a 32-byte compare). One per thread.
 */
export class KeyMacs {
  private states = new Int32Array(0);
  private secrets = new Uint8Array(0);
  private known = new Uint8Array(0);
  /** Idle HmacSha256 objects: a request takes one at its headers and gives it back once authenticated. */
  private readonly idle: HmacSha256[] = [];

  /**
   * A MAC over the canonical string's head (ts, method, target), for the key
   * at `row` whose secret is `secret` (32 bytes): the caller feeds the body
   * and finishes it with checkMac.
   */
  start(row: number, secret: Uint8Array, tsHeader: string, method: string, target: string): HmacSha256 {
    if (row >= this.known.length) {
      const cap = nextCapacity(this.known.length, row + 1);
      this.known = grown(this.known, cap);
      this.secrets = grown(this.secrets, cap * SECRET_BYTES);
      this.states = grown(this.states, cap * KEY_STATE_WORDS);
    }
    const at = row * KEY_STATE_WORDS;
    if (!this.holds(row, secret)) {
      keyStates(secret, this.states, at);
      this.secrets.set(secret, row * SECRET_BYTES);
      this.known[row] = 1;
    }
    const mac = (this.idle.pop() ?? new HmacSha256()).begin(this.states, at);
    const head = `${tsHeader}\n${method}\n${target}\n`;
    if (!mac.updateAscii(head)) mac.update(Buffer.from(head, 'utf8'));
    return mac;
  }

  /** True when row's midstates were computed from this secret. */
  private holds(row: number, secret: Uint8Array): boolean {
    if (this.known[row] !== 1 || secret.length !== SECRET_BYTES) return false;
    const s = this.secrets;
    const o = row * SECRET_BYTES;
    let diff = 0;
    for (let i = 0; i < SECRET_BYTES; i++) diff |= s[o + i]! ^ secret[i]!;
    return diff === 0;
  }

  /** Takes back a MAC whose request is done with it (a dropped one is simply collected). */
  release(mac: HmacSha256): void {
    if (this.idle.length < 64) this.idle.push(mac);
  }
}

/**
 * Finishes the MAC and compares it with the header's signature in constant
 * time; null when they match. On a match, mac.digest holds the signature's
 * bytes (the replay guard's key: ReplayGuard.firstUse).
 */
export function checkMac(mac: HmacSha256, signature: string): string | null {
  switch (compareBase64Digest(mac.finish(), signature)) {
    case 0:
      return null;
    case 1:
      return 'bad signature';
    default:
      return 'bad signature encoding';
  }
}

/** Why a credential failed (for logs and tests); null when it is valid. The same check as the lanes'. */
export function checkSignature(
  secret: Uint8Array, tsHeader: string, signature: string, method: string, target: string, body: string | Buffer, nowMs: number,
): string | null {
  const ts = checkTimestamp(tsHeader, nowMs);
  if (ts !== null) return ts;
  const mac = new KeyMacs().start(0, secret, tsHeader, method, target);
  mac.update(typeof body === 'string' ? Buffer.from(body, 'utf8') : body);
  return checkMac(mac, signature);
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

  /**
   * Records a verified signature, given by its digest (checkMac left the
   * signature's bytes there); false when it was already seen inside the window.
   */
  firstUse(digest: Int32Array, nowMs: number): boolean {
    const lo = digestLo(digest);
    const hi = digestHi(digest);
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
