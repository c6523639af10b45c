// HeldEvents: event records taken off the event ring but not yet applied,
// in the order they came, copied into segments of their own; a FIFO. A
// GatewayCore keeps two. The control plane holds durable events in one
// while a snapshot's capture copies its read model in steps
// (GatewayCore.holdEvents): the model must stay at the capture's seq, and
// the ring must not wait for it (a consumer that lags blocks the engine).
// Every core spills into the other the events past durable_seq when the
// ring fills behind them: one command's events may outgrow the ring, and
// the journal makes none of them durable before its last one is written,
// which needs the room its first ones hold (GatewayCore.drain). The thread
// that owns the GatewayCore.

import { copyWords, memOf, type Mem } from '../lib/mem.js';

const SEGMENT_BYTES = 1 << 20;

export class HeldEvents {
  private readonly segments: Mem[] = [];
  /** Bytes used in each segment. */
  private readonly used: number[] = [];
  /** The oldest record's offset in segments[0]. */
  private headOff = 0;
  /** Records held. */
  count = 0;

  get empty(): boolean {
    return this.count === 0;
  }

  /** Copies the record at offset o of m (its length is its first word). */
  add(m: Mem, o: number): void {
    const len = m.u32[o >>> 2]!;
    let s = this.segments.length - 1;
    if (s < 0 || this.used[s]! + len > this.segments[s]!.u8.length) {
      this.segments.push(memOf(new ArrayBuffer(Math.max(SEGMENT_BYTES, len))));
      this.used.push(0);
      s++;
    }
    copyWords(m, o, this.segments[s]!.u32, this.used[s]!, len);
    this.used[s] = this.used[s]! + len;
    this.count++;
  }

  /** The segment of the oldest record (only while !empty). */
  get mem(): Mem {
    return this.segments[0]!;
  }

  /** The oldest record's offset in mem. */
  get offset(): number {
    return this.headOff;
  }

  /** Drops the oldest record; a segment goes once its last record does (a spill that never empties keeps no more). */
  next(): void {
    this.headOff += this.segments[0]!.u32[this.headOff >>> 2]!;
    this.count--;
    if (this.count === 0) {
      this.segments.length = 0;
      this.used.length = 0;
      this.headOff = 0;
    } else if (this.headOff >= this.used[0]!) {
      this.segments.shift();
      this.used.shift();
      this.headOff = 0;
    }
  }
}
