// DurableSeq: the seq of the last command whose events (through its
// CommandCompleted record) are on disk, published by the journal thread and
// read by every thread that shows state (gateway answers, read models,
// WebSocket pushes): nothing is shown that a crash could lose.
//
// One BigInt64 word in its own SharedArrayBuffer (Atomics on a 64-bit word:
// no tearing between halves), and beside it the doorbell the journal rings
// after moving it: the threads that answer park there (not on the event
// ring's doorbell, which the engine rings for events they may not show yet).
// With durability `none` the journal thread still publishes, right after it
// has taken the records off the ring.

import { Doorbell } from '../ring/doorbell.js';

const DOORBELL_BYTE = 32;

export class DurableSeq {
  private readonly word: BigInt64Array;
  /** Rung by the journal after durable_seq moved; parked readers wake. */
  readonly doorbell: Doorbell;

  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(64);
  }

  constructor(readonly sab: SharedArrayBuffer) {
    this.word = new BigInt64Array(sab, 0, 1);
    this.doorbell = new Doorbell(sab, DOORBELL_BYTE);
  }

  get(): number {
    return Number(Atomics.load(this.word, 0));
  }

  /** Journal thread (and recovery) only; never moves backwards. */
  set(seq: number): void {
    if (seq > this.get()) Atomics.store(this.word, 0, BigInt(seq));
  }
}
