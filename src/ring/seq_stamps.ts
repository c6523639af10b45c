// SeqStamps: when each seq passed a stage on another thread, for the stage
// histograms of the threads that answer requests. The engine thread stamps
// (last seq of a round, time) once per round before it publishes the round's
// events; the journal thread stamps (durable_seq, time) once per group commit
// before it publishes durable_seq. A gateway that sees the completion of seq
// s then asks timeOf(s): the time of the first stamp whose seq is >= s, i.e.
// when the round (or the fsync) that covered s ended.
//
// One writer, any number of readers, each with its own cursor (SeqStampReader);
// a reader asks for seqs in increasing order (events arrive in seq order), so
// its cursor only moves forward and a lookup costs O(1) amortised.
//
// Layout: Int32 word 0 = stamps written so far (a u32 counter, Atomics); then
// ENTRIES (seq, time µs) Float64 pairs from byte 64, entry n at n mod ENTRIES.
// The writer writes an entry, then stores the counter (release); a reader
// reads entries below the counter as it last loaded it (acquire), loads it
// again only when its cursor catches up (the writer keeps writing that line:
// each load is a transfer between cores), and re-loads it after reading the
// entry it answers with: an entry the writer may have overwritten meanwhile
// (the reader fell more than ENTRIES - SLACK behind) is dropped, not trusted.
// Because the writer stamps before it publishes, a reader that saw the
// published seq always finds its stamp (unless it fell that far behind).
//
// Times are monoUs() (src/lib/mono_clock.ts); this file reads no clock.
// For measurement only. No allocation after construction.

import { fail } from '../lib/assert.js';

const HEADER_BYTES = 64;
export const SEQ_STAMP_ENTRIES = 1 << 14;
/** Entries a reader keeps away from the writer's next slot. */
const SLACK = 64;

export class SeqStamps {
  static allocate(entries = SEQ_STAMP_ENTRIES): SharedArrayBuffer {
    if (entries < 2 * SLACK || (entries & (entries - 1)) !== 0) throw new RangeError('seq stamps: entries must be a power of two >= 128');
    return new SharedArrayBuffer(HEADER_BYTES + entries * 16);
  }

  protected readonly count: Int32Array;
  protected readonly pairs: Float64Array;
  protected readonly mask: number;

  constructor(readonly sab: SharedArrayBuffer) {
    this.count = new Int32Array(sab, 0, 1);
    this.pairs = new Float64Array(sab, HEADER_BYTES);
    this.mask = this.pairs.length / 2 - 1;
  }

  /** Writer: every seq up to `seq` passed the stage at `timeUs`. Call before publishing those seqs. */
  stamp(seq: number, timeUs: number): void {
    const n = Atomics.load(this.count, 0) >>> 0;
    // Readers find a seq's stamp by moving a cursor forward: stamps must not go back.
    if (n > 0 && seq < this.pairs[((n - 1) & this.mask) * 2]!) fail(`seq_stamps: seq ${seq} stamped after a later one`);
    const at = (n & this.mask) * 2;
    this.pairs[at] = seq;
    this.pairs[at + 1] = timeUs;
    // Release: the pair is written before the counter that makes it visible.
    Atomics.store(this.count, 0, (n + 1) | 0);
  }

  /** A reader with its own cursor, starting at the stamps written from now on. */
  reader(): SeqStampReader {
    return new SeqStampReader(this.sab);
  }
}

export class SeqStampReader extends SeqStamps {
  private cursor: number;
  /** The writer's counter as last loaded. */
  private written: number;
  /** The cursor was moved up to the oldest entry still safe to read: the entry before it is gone. */
  private lapped = false;

  constructor(sab: SharedArrayBuffer) {
    super(sab);
    this.cursor = this.written = Atomics.load(this.count, 0) >>> 0;
  }

  /** When the first stamp with a seq >= `seq` was taken (µs); NaN when there is none (yet), or it was overwritten. */
  timeOf(seq: number): number {
    const window = this.mask + 1 - SLACK;
    // The counter as last loaded bounds the walk; it is loaded again only
    // when the cursor catches up with it (a load of a line the writer keeps
    // writing costs a transfer between cores).
    for (let reloaded = false; ; reloaded = true) {
      while (this.cursor !== this.written) {
        const at = (this.cursor & this.mask) * 2;
        if (this.pairs[at]! >= seq) {
          const t = this.pairs[at + 1]!;
          // After a lap the stamp before this one is gone: this one may not be the first that covered seq.
          if (this.lapped) return NaN;
          // Still valid only if the writer did not lap this entry while we read it.
          return ((Atomics.load(this.count, 0) - this.cursor) >>> 0) > window ? NaN : t;
        }
        this.cursor = (this.cursor + 1) >>> 0;
        this.lapped = false;
      }
      if (reloaded) return NaN;
      this.written = Atomics.load(this.count, 0) >>> 0;
      if (((this.written - this.cursor) >>> 0) > window) {
        this.cursor = (this.written - window) >>> 0;
        this.lapped = true;
      }
    }
  }
}
