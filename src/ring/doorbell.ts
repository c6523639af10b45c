// Doorbell: one Int32 word that a parking consumer sleeps on with
// Atomics.wait and that producers ring after publishing. Owned by whoever
// allocates it; used from every thread that shares the word.
//
// A doorbell lives either in its own small SharedArrayBuffer (the engine reads
// one SpscRing per producer, so all producers must reach the same word:
// allocate one with Doorbell.allocate() and hand it to every producer) or in
// a ring header (SpscRing.doorbell, BroadcastRing's for its consumers).
//
// The word is 1 while at least one consumer has announced that it is about to
// park, 0 otherwise. Invariants (the no-lost-wake-up argument, JS Atomics
// are sequentially consistent):
//   consumer: store(word, 1); re-check every ring (Atomics.load of the write
//             position); Atomics.wait(word, 1, timeout) only if all empty.
//   producer: Atomics.store(write position) in publish(); then wake():
//             load(word); if 1: store(word, 0) and notify all waiters.
// In the single total order of these SC operations either the consumer's
// re-check comes after the producer's publish (it sees the record and does
// not sleep) or the producer's load comes after the consumer's store (it sees
// 1, clears it and notifies; a consumer that has not reached Atomics.wait yet
// then finds 0 there and returns at once, because wait compares atomically).
// Only producers clear the word: if a consumer cleared it on waking, it could
// erase the announcement of another consumer parked on the same word, whose
// wake-up would then be lost until its timeout.

import { assert } from '../lib/assert.js';

const DOORBELL_MAGIC = 0x4c4c4244; // 'DBLL' little-endian
/** Own-buffer doorbells: magic at byte 0, the word alone on the next cache line. */
const OWN_BYTES = 128;
const OWN_WORD_BYTE = 64;

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

  private readonly word: Int32Array;

  /** A doorbell over the Int32 at byteOffset of sab (used by ring headers). */
  constructor(readonly sab: SharedArrayBuffer, readonly byteOffset: number) {
    assert(byteOffset % 4 === 0 && byteOffset + 4 <= sab.byteLength, 'doorbell: word out of range');
    this.word = new Int32Array(sab, byteOffset, 1);
  }

  /**
   * Producer side, call after publish(). Costs one Atomics.load unless a
   * consumer announced parking; returns true when it notified.
   */
  wake(): boolean {
    // SC load: ordered after the caller's publish store, so either we see the
    // consumer's announcement or its re-check sees our record (see header).
    if (Atomics.load(this.word, 0) === 0) return false;
    // SC store: makes a consumer that has not yet reached Atomics.wait return
    // 'not-equal' instead of sleeping; the notify wakes those already asleep.
    Atomics.store(this.word, 0, 0);
    Atomics.notify(this.word, 0);
    return true;
  }

  /** Consumer side: announce parking. Re-check the rings after this, then park(). */
  announce(): void {
    // SC store: ordered before the consumer's re-check loads of the write positions.
    Atomics.store(this.word, 0, 1);
  }

  /** Consumer side: sleep until a producer rings, or timeout_ms passes. */
  park(timeout_ms: number): ParkResult {
    // Sleeps only while the word is still 1; a producer's wake() clears it
    // before notifying, so a ring between announce() and here is not lost.
    return Atomics.wait(this.word, 0, 1, timeout_ms);
  }

  /**
   * Consumer side, for threads that must not block (uWS I/O threads): like
   * park() but returns a promise that settles when a producer rings, or null
   * when one already rang (the word is no longer 1). No timeout: V8 runs a
   * waitAsync timeout as a delayed task on the platform's worker threads,
   * which costs more than the wait itself; a caller's deadline is its own
   * loop timer (wait.ts BellWatch).
   */
  parkAsync(): Promise<ParkResult> | null {
    // Atomics.waitAsync is in Node 20 but not in TypeScript's ES2022 lib.
    const waitAsync = (Atomics as unknown as { waitAsync: AtomicsWaitAsync }).waitAsync;
    const r = waitAsync(this.word, 0, 1);
    return r.async ? r.value : null;
  }

  /** True while some consumer has announced parking and no producer rang since. */
  isAnnounced(): boolean {
    // SC load; diagnostic only.
    return Atomics.load(this.word, 0) !== 0;
  }
}
