// DurableSeq: the seq up to which state may be shown: gateway answers, read
// models, WebSocket pushes and MCP all apply events only up to it, so nothing
// is shown that a crash could lose.
//
// Two words feed it. fsynced_seq: the last command whose events (through its
// CommandCompleted record) are on the local disk, published by the journal
// thread. replicated_seq: the last command a quorum of the replicated log
// holds (src/replication), published by the replication thread. The mode,
// fixed at allocation, says which count:
//   local       fsynced_seq            (no replication: the default)
//   replicated  min(fsynced, replicated) (a primary or standby: both a crash
//                                         of this host and of one NATS node
//                                         must not lose what is shown)
//   stream      replicated_seq         (a read replica: no journal; what it
//                                         applied is what the stream holds)
//
// Each word is one BigInt64 (Atomics on a 64-bit word: no tearing between
// halves). Beside them is the doorbell whoever moves a word rings after it
// (the journal after a group commit, the replicator after a quorum ack): the
// threads that answer park there, not on the event ring's doorbell, which the
// engine rings for events they may not show yet. With durability `none` the
// journal thread still publishes, right after it has taken the records off the
// ring.

import { Doorbell } from '../ring/doorbell.js';

export type DurableMode = 'local' | 'replicated' | 'stream';

const W_FSYNCED = 0;
const W_REPLICATED = 1;
const W_MODE = 2;
const MODES: readonly DurableMode[] = ['local', 'replicated', 'stream'];
const DOORBELL_BYTE = 32;

export class DurableSeq {
  private readonly word: BigInt64Array;
  private readonly mode: number;
  /** Rung after durable_seq moved; parked readers wake. */
  readonly doorbell: Doorbell;

  static allocate(mode: DurableMode = 'local'): SharedArrayBuffer {
    const sab = new SharedArrayBuffer(64);
    new BigInt64Array(sab, 0, 3)[W_MODE] = BigInt(MODES.indexOf(mode));
    return sab;
  }

  constructor(readonly sab: SharedArrayBuffer) {
    this.word = new BigInt64Array(sab, 0, 3);
    // Written once before the buffer is handed to any thread.
    this.mode = Number(this.word[W_MODE]);
    this.doorbell = new Doorbell(sab, DOORBELL_BYTE);
  }

  get(): number {
    if (this.mode === 0) return Number(Atomics.load(this.word, W_FSYNCED));
    const r = Number(Atomics.load(this.word, W_REPLICATED));
    if (this.mode === 2) return r;
    return Math.min(Number(Atomics.load(this.word, W_FSYNCED)), r);
  }

  /** The journal's fsynced_seq (journal thread and recovery only); never moves backwards. */
  set(seq: number): void {
    if (seq > Number(Atomics.load(this.word, W_FSYNCED))) Atomics.store(this.word, W_FSYNCED, BigInt(seq));
  }

  /** replicated_seq (replication thread and start-up only); never moves backwards. */
  setReplicated(seq: number): void {
    if (seq > Number(Atomics.load(this.word, W_REPLICATED))) Atomics.store(this.word, W_REPLICATED, BigInt(seq));
  }

  get fsynced(): number {
    return Number(Atomics.load(this.word, W_FSYNCED));
  }

  get replicated(): number {
    return Number(Atomics.load(this.word, W_REPLICATED));
  }

  get modeName(): DurableMode {
    return MODES[this.mode]!;
  }
}
