// EventOut: where the engine writes event records. In production it is the
// broadcast event ring (src/ring); in tests, benchmarks and tools it is a
// BufferEventOut. decide claims space, writes the record in place, and evolve
// reads it back from the same memory, so there is exactly one encoding.
// Engine thread (and whatever runs an engine: tests, benchmarks, tools).

import { assert } from '../lib/assert.js';
import { memOf, type Mem } from '../lib/mem.js';
import { decodeRecord, type RecordObject } from '../layout_codec/record_codec.js';

export interface EventOut {
  readonly mem: Mem;
  /** Byte offset in mem where a record of len bytes may be written (blocks or throws, never fails). */
  claim(len: number): number;
  /** Makes the records claimed so far visible to consumers (end of a command or a batch). */
  publish(): void;
}

/**
 * A linear buffer of events. `take()` decodes and clears (tests); `reset()`
 * only clears (benchmarks, which drop events after each command).
 */
export class BufferEventOut implements EventOut {
  readonly mem: Mem;
  private end = 0;
  private readonly size: number;

  constructor(bytes = 1 << 20) {
    this.size = bytes;
    this.mem = memOf(new ArrayBuffer(bytes));
  }

  claim(len: number): number {
    const o = this.end;
    if (o + len > this.size) {
      throw new Error(
        `BufferEventOut: ${this.size} bytes are not enough for one command's events; take() or reset() more often or allocate more`,
      );
    }
    this.end = o + len;
    return o;
  }

  publish(): void {}

  /** Bytes written since the last take/reset. */
  get length(): number {
    return this.end;
  }

  reset(): void {
    this.end = 0;
  }

  /** Offsets of the records written since the last take/reset. */
  offsets(): number[] {
    const out: number[] = [];
    for (let o = 0; o < this.end; o += this.mem.u32[o >>> 2]!) {
      assert(this.mem.u32[o >>> 2]! >= 8, 'BufferEventOut: corrupt record length');
      out.push(o);
    }
    return out;
  }

  take(): RecordObject[] {
    const events = this.offsets().map((o) => decodeRecord(this.mem, o));
    this.end = 0;
    return events;
  }
}
