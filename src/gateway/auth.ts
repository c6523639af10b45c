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
// thread), linear probing keyed by the first 64 bits of the signature, each
// entry kept until its request's timestamp leaves the window; expired entries
// are deleted when a lookup meets them. When it cannot remember a signature,
// the mutation is refused (503), never let through unchecked. A short
// spinlock (Atomics.compareExchange) guards each lookup.

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

const ENTRY_WORDS = 4; // sig lo, sig hi, expiry in seconds, used
const LOCK_WORD = 0;
/**
 * Ranges of the expiry seconds of deleted entries the guard keeps (header
 * words after the lock and the floor). With a clock that only moves forward
 * the deleted expiries are one range, below every expiry a signature the
 * window accepts can have; idle gaps and clock steps add ranges, and past
 * this many the two closest are joined (refusing more, never less).
 */
const FORGOTTEN_RANGES = 8;
/**
 * Lock (8 bytes), floor (8), the ranges' hint (8: their highest second, and the pair the last deletion fell in), then
 * FORGOTTEN_RANGES + 1 pairs of u32 (one spare: a new range is joined after it is added).
 */
const HEADER_BYTES = 24 + (FORGOTTEN_RANGES + 1) * 8;
/**
 * Slots a lookup may examine before the guard calls its memory full. At the
 * load the table is sized for (under a third) a run of 256 taken slots does
 * not happen; past it, a mutation is refused (503 shed), never let through
 * unchecked.
 */
const MAX_PROBES = 256;

/**
 * What ReplayGuard.firstUse found: `first` (not seen inside the window, now
 * remembered), `replayed` (seen inside the window), `full` (no room to
 * remember it: the request is refused, the guard fails closed), `early`
 * (stamped before the floor of a node that just started or took over: it
 * may have been used on the previous node), `stepped` (the wall clock stepped
 * back into seconds whose signatures the guard has forgotten: it cannot tell
 * a first use from a replay; refused as `full` and `early` are, 503).
 */
export type ReplayCheck = 'first' | 'replayed' | 'full' | 'early' | 'stepped';

export class ReplayGuard {
  /**
   * 2 M entries (32 MiB): a signature is remembered until its own timestamp
   * leaves the window (about 5 s for a client with a true clock, 10 s at
   * most), so a third of the table holds about 100,000 mutations a second
   * across every gateway thread. It was 256 k entries remembered 11-12 s past
   * arrival, which filled at about 23,000 mutations a second: every lookup
   * then walked the whole table (half a millisecond) and let the mutation
   * through unchecked.
   */
  static allocate(entries = 1 << 21): SharedArrayBuffer {
    return new SharedArrayBuffer(HEADER_BYTES + entries * ENTRY_WORDS * 4);
  }

  private readonly lock: Int32Array;
  /** [0]: the earliest timestamp (ms) a single-use signature may carry (setNotBefore); bytes 8..15 of the header. */
  private readonly floor: Float64Array;
  /**
   * Pairs [lo, hi] of expiry seconds (hi 0: unused) covering every entry
   * deleted so far. A signature is remembered until its expiry leaves the
   * window by the wall clock; after the clock steps back, one whose expiry
   * falls in a pair may have been used and forgotten (test/gateway/
   * replay_guard_clock.test.ts).
   */
  private readonly forgotten: Uint32Array;
  /** [0]: the highest second in `forgotten` (0: none); [1]: the index in it of the pair the last deletion fell in. */
  private readonly hint: Uint32Array;
  private readonly table: Uint32Array;
  private readonly mask: number;

  constructor(readonly sab: SharedArrayBuffer) {
    this.lock = new Int32Array(sab, 0, 2);
    this.floor = new Float64Array(sab, 8, 1);
    this.hint = new Uint32Array(sab, 16, 2);
    this.forgotten = new Uint32Array(sab, 24, (FORGOTTEN_RANGES + 1) * 2);
    this.table = new Uint32Array(sab, HEADER_BYTES);
    this.mask = this.table.length / ENTRY_WORDS - 1;
  }

  /**
   * Refuses (`early`) every single-use signature stamped before ms. The table
   * lives in memory only, so a process sets this to its start, and a standby
   * to the moment it takes over: a mutation signed for the node before, still
   * inside the window, cannot be replayed to this one (unless it was stamped
   * ahead of that node's clock: docs/rest.md).
   */
  setNotBefore(ms: number): void {
    this.floor[0] = ms;
  }

  /** The floor setNotBefore set (0: none). */
  get notBefore(): number {
    return this.floor[0]!;
  }

  /**
   * Signatures still remembered at nowMs (entries not yet expired) and the
   * table's capacity: /metrics. A scan of the whole table without the lock
   * (a count, not a decision; an entry written meanwhile may be missed).
   */
  occupancy(nowMs: number): { live: number; capacity: number } {
    const nowS = Math.floor(nowMs / 1000);
    const t = this.table;
    let live = 0;
    for (let e = 0; e < t.length; e += ENTRY_WORDS) if (t[e + 3] === 1 && t[e + 2]! >= nowS) live++;
    return { live, capacity: this.mask + 1 };
  }

  /**
   * Records a verified signature, given by its digest (checkMac left the
   * signature's bytes there), sent with timestamp tsMs (inside the window of
   * nowMs: checkTimestamp passed). It is remembered until tsMs leaves the
   * window, the last moment a replay of it could pass checkTimestamp.
   *
   * Linear probing without tombstones: every remembered signature is
   * reachable from its home slot without crossing an empty one. An expired
   * entry met on the way is deleted by shifting the rest of its run back
   * (Knuth's Algorithm R), so a lookup that stops at the first empty slot
   * has seen every live entry of its run: an expired neighbour never hides a
   * live duplicate behind it.
   */
  firstUse(digest: Int32Array, tsMs: number, nowMs: number): ReplayCheck {
    if (tsMs < this.floor[0]!) return 'early';
    return this.probe(digest, nowMs, Math.ceil((tsMs + REPLAY_WINDOW_MS) / 1000));
  }

  /**
   * Whether firstUse already recorded this signature inside the window
   * (`replayed`), without recording it (`first` when not): a credential that
   * may repeat, refused once a single-use one has used it. Never `full`:
   * firstUse records only within MAX_PROBES of the home slot (and deletions
   * move entries toward it), so past that many probes the signature is not
   * there.
   */
  lookup(digest: Int32Array, nowMs: number): 'first' | 'replayed' {
    return this.probe(digest, nowMs, -1) === 'replayed' ? 'replayed' : 'first';
  }

  /**
   * The earliest timestamp (ms) a single-use signature may carry and not fall
   * into the forgotten seconds of a clock that stepped back (nowMs itself
   * when it falls in none): what a `stepped` refusal tells the client.
   */
  signAfter(nowMs: number): number {
    // The pair holding the expiry of a signature stamped now, if any: expiry = ceil((ts + window) / 1000) > its last
    // second  <=>  ts > that second * 1000 - window (the next second is in no pair: pairs never touch).
    const s = Math.ceil((nowMs + REPLAY_WINDOW_MS) / 1000);
    const f = this.forgotten;
    while (Atomics.compareExchange(this.lock, LOCK_WORD, 0, 1) !== 0) { /* spin */ }
    try {
      for (let r = 0; r < f.length; r += 2) {
        if (f[r + 1] !== 0 && s >= f[r]! && s <= f[r + 1]!) return Math.max(nowMs, f[r + 1]! * 1000 - REPLAY_WINDOW_MS + 1);
      }
      return nowMs;
    } finally {
      Atomics.store(this.lock, LOCK_WORD, 0);
    }
  }

  /** firstUse (expS: when the recorded entry expires, in seconds) or lookup (expS < 0: nothing recorded). */
  private probe(digest: Int32Array, nowMs: number, expS: number): 'first' | 'replayed' | 'full' | 'stepped' {
    const lo = digestLo(digest);
    const hi = digestHi(digest);
    const nowS = Math.floor(nowMs / 1000);
    // Acquire the table lock (spin: the critical section is a few probes).
    while (Atomics.compareExchange(this.lock, LOCK_WORD, 0, 1) !== 0) { /* spin */ }
    try {
      // Without a step back every deleted expiry is below expS (a signature the window accepts expires at nowS or later).
      if (expS >= 0 && this.wasForgotten(expS)) return 'stepped';
      const t = this.table;
      let i = this.home(lo, hi);
      for (let probes = 0; probes < MAX_PROBES;) {
        const e = i * ENTRY_WORDS;
        if (t[e + 3] === 0) {
          if (expS < 0) return 'first';
          t[e] = lo;
          t[e + 1] = hi;
          t[e + 2] = expS;
          t[e + 3] = 1;
          return 'first';
        }
        if (t[e + 2]! < nowS) {
          this.remove(i); // slot i now holds the next entry of the run, or is empty: look again
          continue;
        }
        if (t[e] === lo && t[e + 1] === hi) return 'replayed';
        i = (i + 1) & this.mask;
        probes++;
      }
      return 'full';
    } finally {
      // Release: the entry writes above happen before the next holder's reads.
      Atomics.store(this.lock, LOCK_WORD, 0);
    }
  }

  /** True when entries expiring at second s may have been deleted. Under the lock. */
  private wasForgotten(s: number): boolean {
    if (s > this.hint[0]!) return false; // every call without a step back
    const f = this.forgotten;
    for (let r = 0; r < f.length; r += 2) if (f[r + 1] !== 0 && s >= f[r]! && s <= f[r + 1]!) return true;
    return false;
  }

  /**
   * Notes the deletion of an entry expiring at second s: the pair it is in or
   * next to grows (and absorbs the pairs it comes to touch), or s starts a
   * pair of its own; past FORGOTTEN_RANGES pairs the two closest are joined.
   * Under the lock.
   */
  private forget(s: number): void {
    const f = this.forgotten;
    const h = this.hint;
    // Most deletions fall in the second of the one before.
    const last = h[1]!;
    if (f[last + 1] !== 0 && s >= f[last]! && s <= f[last + 1]!) return;
    if (s > h[0]!) h[0] = s;
    let free = -1;
    for (let r = 0; r < f.length; r += 2) {
      if (f[r + 1] === 0) {
        if (free < 0) free = r;
      } else if (s + 1 >= f[r]! && s <= f[r + 1]! + 1) {
        if (s >= f[r]! && s <= f[r + 1]!) return;
        if (s < f[r]!) f[r] = s;
        else f[r + 1] = s;
        this.joinTouching(r);
        h[1] = r;
        return;
      }
    }
    // There is always a free pair: at most FORGOTTEN_RANGES are used between calls.
    f[free] = s;
    f[free + 1] = s;
    h[1] = this.joinClosest(free);
  }

  /** Joins into pair r every other pair that overlaps or touches it. */
  private joinTouching(r: number): void {
    const f = this.forgotten;
    for (let q = 0; q < f.length; q += 2) {
      if (q === r || f[q + 1] === 0 || f[q]! > f[r + 1]! + 1 || f[r]! > f[q + 1]! + 1) continue;
      f[r] = Math.min(f[r]!, f[q]!);
      f[r + 1] = Math.max(f[r + 1]!, f[q + 1]!);
      f[q] = 0;
      f[q + 1] = 0;
    }
  }

  /**
   * While more than FORGOTTEN_RANGES pairs are used, joins the two with the smallest gap between them. Returns where the
   * pair at index p is then (p, or the pair it was joined into).
   */
  private joinClosest(p: number): number {
    const f = this.forgotten;
    let used = 0;
    for (let r = 0; r < f.length; r += 2) if (f[r + 1] !== 0) used++;
    if (used <= FORGOTTEN_RANGES) return p;
    let a = -1;
    let b = -1;
    let gap = Infinity;
    for (let r = 0; r < f.length; r += 2) {
      if (f[r + 1] === 0) continue;
      for (let q = r + 2; q < f.length; q += 2) {
        if (f[q + 1] === 0) continue;
        const g = Math.max(f[r]!, f[q]!) - Math.min(f[r + 1]!, f[q + 1]!);
        if (g < gap) [a, b, gap] = [r, q, g];
      }
    }
    f[a] = Math.min(f[a]!, f[b]!);
    f[a + 1] = Math.max(f[a + 1]!, f[b + 1]!);
    f[b] = 0;
    f[b + 1] = 0;
    return p === b ? a : p;
  }

  private home(lo: number, hi: number): number {
    return (Math.imul(lo ^ hi, 0x9e3779b1) >>> 0) & this.mask;
  }

  /** Deletes the entry at slot i: each later entry of the run that may move back (its home is not in (i, j]) fills the hole. */
  private remove(i: number): void {
    const t = this.table;
    const mask = this.mask;
    this.forget(t[i * ENTRY_WORDS + 2]!);
    let hole = i;
    for (let j = (i + 1) & mask; j !== i && t[j * ENTRY_WORDS + 3] !== 0; j = (j + 1) & mask) {
      const e = j * ENTRY_WORDS;
      const k = this.home(t[e]!, t[e + 1]!);
      const stays = hole <= j ? hole < k && k <= j : hole < k || k <= j;
      if (stays) continue;
      const h = hole * ENTRY_WORDS;
      t[h] = t[e]!;
      t[h + 1] = t[e + 1]!;
      t[h + 2] = t[e + 2]!;
      hole = j;
    }
    t[hole * ENTRY_WORDS + 3] = 0;
  }
}
