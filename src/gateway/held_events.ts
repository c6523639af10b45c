// HeldEvents: event records taken off the event ring but not yet applied,
// in the order they came, copied into segments of their own. The control
// plane holds events here while a snapshot's capture copies its read model
// in steps (GatewayCore.holdEvents): the model must stay at the capture's
// seq, and the ring must not wait for it (a consumer that lags blocks the
// engine). The thread that owns the GatewayCore.

import { copyWords, memOf, type Mem } from '../lib/mem.js';

const SEGMENT_BYTES = 1 << 20;

export class HeldEvents {
  private readonly segments: Mem[] = [];
  /** Bytes used in each segment. */
  private readonly used: number[] = [];
  /** Records held. */
  count = 0;

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

  /** Calls f with every held record, oldest first. */
  forEach(f: (m: Mem, o: number) => void): void {
    for (let s = 0; s < this.segments.length; s++) {
      const m = this.segments[s]!;
      const end = this.used[s]!;
      for (let o = 0; o < end; o += m.u32[o >>> 2]!) f(m, o);
    }
  }
}
