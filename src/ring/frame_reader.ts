// FrameReader: the consumer half shared by SpscRing and BroadcastConsumer.
// Reads framed records in place, skips padding, and publishes its read
// position (the ring's read index, or the consumer's cursor) lazily: every
// quarter ring and whenever it finds the ring empty, so a producer waiting for
// space never waits on a consumer that has nothing left to read. Touched only
// by the consumer thread.

import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { PADDING_TYPE, RECORD_MIN_BYTES, corruptRecord } from './frame.js';

export class FrameReader {
  private readPos = 0;
  private releasedPos = 0;
  private cachedWrite = 0;
  private peekLen = 0;
  private readonly mask: number;
  private readonly releaseBatchBytes: number;

  /**
   * @param hdr the ring header words
   * @param writeIdx index in hdr of the producer's published write position
   * @param cursorIdx index in hdr where this reader publishes its read position
   */
  constructor(
    private readonly who: string, private readonly hdr: Uint32Array, private readonly mem: Mem,
    private readonly capacity: number, private readonly writeIdx: number, private readonly cursorIdx: number,
  ) {
    this.mask = capacity - 1;
    this.releaseBatchBytes = capacity >>> 2;
  }

  /** Starts reading at position p (nothing peeked). */
  reset(p: number): void {
    this.readPos = p;
    this.releasedPos = p;
    this.cachedWrite = p;
    this.peekLen = 0;
  }

  /** Forgets a peeked record (the consumer closed). */
  dropPeek(): void {
    this.peekLen = 0;
  }

  /**
   * Offset in `mem` of the next unread record (padding skipped), or -1 when
   * there is none. Idempotent until advance(). Releases the read position
   * when it finds the ring empty.
   */
  peek(): number {
    const u32 = this.mem.u32;
    for (;;) {
      const pos = this.readPos;
      if (pos === this.cachedWrite) {
        // Acquire: pairs with the producer's publish(); the records below
        // this position are fully written once we see it.
        this.cachedWrite = Atomics.load(this.hdr, this.writeIdx);
        if (pos === this.cachedWrite) {
          if (pos !== this.releasedPos) this.release();
          return -1;
        }
      }
      const off = pos & this.mask;
      const len = u32[off >>> 2]!;
      if (len < RECORD_MIN_BYTES || (len & 7) !== 0 || len > this.capacity - off) corruptRecord(this.who, pos, len);
      if ((u32[(off >>> 2) + 1]! & 0xffff) === PADDING_TYPE) {
        this.readPos = (pos + len) >>> 0;
        continue;
      }
      this.peekLen = len;
      return off;
    }
  }

  /** Consumes the record returned by the last peek(). */
  advance(): void {
    const len = this.peekLen;
    assert(len !== 0, `${this.who}: advance() without a peeked record`);
    this.peekLen = 0;
    const pos = (this.readPos + len) >>> 0;
    this.readPos = pos;
    if (((pos - this.releasedPos) >>> 0) >= this.releaseBatchBytes) this.release();
  }

  /** Publishes the read position so the producer can reuse the consumed space. */
  release(): void {
    this.releasedPos = this.readPos;
    // Release: orders our reads of the consumed records before the producer
    // may see this position and overwrite them.
    Atomics.store(this.hdr, this.cursorIdx, this.readPos);
  }

  /** Fresh check for unread bytes (padding counts), for idle re-checks. */
  hasUnread(): boolean {
    // SC load: in a parking consumer it is ordered after Doorbell.announce().
    return Atomics.load(this.hdr, this.writeIdx) !== this.readPos;
  }

  /** Position (byte counter mod 2^32) of the next unread record; right after a peek, of that record. */
  position(): number {
    return this.readPos;
  }
}
