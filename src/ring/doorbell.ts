// Doorbell: two Int32 words that a parking consumer announces on and sleeps on with
// Atomics.wait and that producers ring after publishing. Owned by whoever
// allocates it; used from every thread that shares the word.
//
// A doorbell lives either in its own small SharedArrayBuffer (the engine reads
// one SpscRing per producer, so all producers must reach the same word:
// allocate one with Doorbell.allocate() and hand it to every producer) or in
// a ring header (SpscRing.doorbell, BroadcastRing's for its consumers).
//
// Two Int32 words. `flag` is 1 while at least one consumer has announced that
// it is about to park, 0 otherwise; `epoch` counts the rings that found the
// flag set. Consumers sleep on the epoch, not on the flag. Invariants (the
// no-lost-wake-up argument; JS Atomics are sequentially consistent):
//   consumer: e = load(epoch); store(flag, 1); re-check every ring (Atomics.load
//             of the write position); Atomics.wait(epoch, e, timeout) only if
//             all are empty.
//   producer: Atomics.store(write position) in publish(); then wake():
//             load(flag); if 1: store(flag, 0), add(epoch, 1), notify all
//             waiters on the epoch.
// In the single total order of these SC operations, for a consumer C:
// - a producer P whose flag load came before C's flag store published before
//   C's re-check, which sees the record;
// - a producer whose flag load came after C's flag store either saw 1 and
//   rang, or saw 0 because another producer cleared the flag after C's store
//   and rang; either ring adds to the epoch after C read it, so C's wait finds
//   another value and returns at once, or is woken by the notify that
//   follows the add.
// Waiting on the flag itself (as this file once did) loses wake-ups when
// consumers share a doorbell: C1 announces and finds nothing, a producer
// clears the flag and notifies nobody, C2 announces (the flag is 1 again),
// and C1's wait on "flag is 1" then sleeps through the ring. The durable_seq
// doorbell has a consumer on every gateway thread and on the main thread; a
// control-plane command sometimes waited its whole response budget for its
// outcome that way. Only producers clear the flag: a consumer that cleared it
// on waking could erase the announcement of another, whose wake-up would then
// be lost until its timeout.

import { assert } from '../lib/assert.js';

const DOORBELL_MAGIC = 0x4c4c4244; // 'DBLL' little-endian
/** Own-buffer doorbells: magic at byte 0, the two words alone on the next cache line. */
const OWN_BYTES = 128;
const OWN_WORD_BYTE = 64;
/** The two Int32 words: the announcement flag, then the epoch. */
const FLAG = 0;
const EPOCH = 1;
/** Bytes a doorbell takes at its byteOffset. */
export const DOORBELL_BYTES = 8;

export type ParkResult = 'ok' | 'not-equal' | 'timed-out';

type AtomicsWaitAsync = (a: Int32Array, index: number, value: number, timeout_ms?: number) =>
  { async: false; value: 'not-equal' | 'timed-out' } | { async: true; value: Promise<ParkResult> };

export class Doorbell {
  /** A doorbell in its own SharedArrayBuffer (one word per cache line). */
  static allocate(): SharedArrayBuffer {
    const sab = new SharedArrayBuffer(OWN_BYTES);
    new Uint32Array(sab)[0] = DOORBELL_MAGIC;
    return sab;
  }

  /** Attach to a buffer made by Doorbell.allocate(). */
  static attach(sab: SharedArrayBuffer): Doorbell {
    assert(sab instanceof SharedArrayBuffer && sab.byteLength === OWN_BYTES, 'doorbell: not a doorbell buffer');
    if (new Uint32Array(sab)[0] !== DOORBELL_MAGIC) throw new Error('doorbell: bad magic, not a doorbell buffer');
    return new Doorbell(sab, OWN_WORD_BYTE);
  }

  private readonly words: Int32Array;

  /** A doorbell over the two Int32 words at byteOffset of sab (used by ring headers). */
  constructor(readonly sab: SharedArrayBuffer, readonly byteOffset: number) {
    assert(byteOffset % 4 === 0 && byteOffset + DOORBELL_BYTES <= sab.byteLength, 'doorbell: words out of range');
    this.words = new Int32Array(sab, byteOffset, 2);
  }

  /**
   * Producer side, call after publish(). Costs one Atomics.load unless a
   * consumer announced parking; returns true when it notified.
   */
  wake(): boolean {
    // SC load: ordered after the caller's publish store, so either we see a
    // consumer's announcement or its re-check sees our record (see header).
    if (Atomics.load(this.words, FLAG) === 0) return false;
    Atomics.store(this.words, FLAG, 0);
    // A consumer that read the epoch before this add finds another value in
    // its wait and returns at once; the notify wakes those already asleep.
    Atomics.add(this.words, EPOCH, 1);
    Atomics.notify(this.words, EPOCH);
    return true;
  }

  /**
   * Consumer side: announce parking. Returns the epoch to park on; re-check
   * the rings after this, then park(epoch).
   */
  announce(): number {
    // SC load before the SC store: any ring that clears this announcement adds to the epoch after this read.
    const epoch = Atomics.load(this.words, EPOCH);
    Atomics.store(this.words, FLAG, 1);
    return epoch;
  }

  /** Consumer side: sleep until a producer rings after announce() returned `epoch`, or timeout_ms passes. */
  park(epoch: number, timeout_ms: number): ParkResult {
    // Returns 'not-equal' at once when a producer rang since the announce.
    return Atomics.wait(this.words, EPOCH, epoch, timeout_ms);
  }

  /**
   * Consumer side, for threads that must not block (uWS I/O threads): like
   * park() but returns a promise that settles when a producer rings, or null
   * when one already rang since announce() returned `epoch`. No timeout: V8
   * runs a waitAsync timeout as a delayed task on the platform's worker
   * threads, which costs more than the wait itself; a caller's deadline is its
   * own loop timer (wait.ts BellWatch).
   */
  parkAsync(epoch: number): Promise<ParkResult> | null {
    // Atomics.waitAsync is in Node 20 but not in TypeScript's ES2022 lib.
    const waitAsync = (Atomics as unknown as { waitAsync: AtomicsWaitAsync }).waitAsync;
    const r = waitAsync(this.words, EPOCH, epoch);
    return r.async ? r.value : null;
  }

  /** True while some consumer has announced parking and no producer rang since. */
  isAnnounced(): boolean {
    // SC load; diagnostic only.
    return Atomics.load(this.words, FLAG) !== 0;
  }
}
