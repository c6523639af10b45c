// SpscRing: one producer thread, one consumer thread, variable-length framed
// records (see frame.ts) in a SharedArrayBuffer. Each thread attaches its own
// SpscRing object to the same buffer; the producer uses tryClaim/publish, the
// consumer peek/advance/release. Records are written and read in place
// through `mem` (byte offsets into the data area).
//
// Buffer layout (bytes):
//   0   magic u32, version u32, fingerprint u32, capacity u32 (data bytes)
//   64  write position u32   (written by the producer only)
//   128 read position u32    (written by the consumer only)
//   192 doorbell i32         (see doorbell.ts)
//   256 data area, capacity bytes (a power of two, 4 KiB .. 1 GiB)
// Each shared word has its own 64-byte cache line so the two sides do not
// invalidate each other's lines except when they exchange a position.
//
// Positions are byte counters that only grow, wrapping mod 2^32; the data
// offset is position & (capacity - 1). Because capacity <= 2^30, the unread
// byte count is always (write - read) >>> 0 <= capacity.
//
// Invariants:
//   - the producer never overwrites unread bytes: it claims only while
//     (claim - read) + need <= capacity, with read as last published;
//   - a record never straddles the end of the data area: the producer writes
//     a padding record (type 0) up to the end and wraps; consumers skip it;
//   - each side keeps a cached copy of the other side's position and re-reads
//     the shared word only when the cached one says full (producer) or empty
//     (consumer): re-reading per message cost 25x on these machines.
//
// Memory ordering: JS Atomics are sequentially consistent, so every
// Atomics.load acts at least as an acquire and every Atomics.store as a
// release; the comment on each one says which plain reads or writes it
// orders. Record bytes themselves are plain typed-array accesses.
//
// Release policy (consumer): lazy, in batches. advance() publishes the read
// position once a quarter of the ring has been consumed since the last
// release, and peek() publishes it whenever it finds the ring empty, so a
// producer waiting for space can never deadlock against a consumer that keeps
// polling: a consumer that has drained everything has released everything.
// Call release() yourself if you stop polling while records remain unread.

import { assert } from '../lib/assert.js';
import { memOf, type Mem } from '../lib/mem.js';
import { Doorbell } from './doorbell.js';
import { FrameReader } from './frame_reader.js';
import {
  CACHE_LINE, HDR_CAPACITY, HDR_FINGERPRINT, HDR_MAGIC, HDR_VERSION, PADDING_TYPE, RECORD_MIN_BYTES, UNSET_TYPE,
  checkDataBytes, checkFingerprint, checkHeader,
} from './frame.js';

const SPSC_MAGIC = 0x43535053; // 'SPSC' little-endian
const SPSC_VERSION = 1;
const WRITE_BYTE = CACHE_LINE;
const READ_BYTE = 2 * CACHE_LINE;
const DOORBELL_BYTE = 3 * CACHE_LINE;
const HEADER_BYTES = 4 * CACHE_LINE;
const WRITE_IDX = WRITE_BYTE >>> 2;
const READ_IDX = READ_BYTE >>> 2;

export class SpscRing {
  /**
   * Creates a zeroed ring buffer: header + dataBytes of data area. Both
   * positions start at startPosition (a multiple of 8; tests start near 2^32
   * to exercise the wrap of the counters).
   */
  static allocate(dataBytes: number, fingerprint: number, startPosition = 0): SharedArrayBuffer {
    checkDataBytes('spsc_ring', dataBytes);
    checkFingerprint(fingerprint);
    const sab = new SharedArrayBuffer(HEADER_BYTES + dataBytes);
    const h = new Uint32Array(sab, 0, HEADER_BYTES >>> 2);
    h[HDR_MAGIC >>> 2] = SPSC_MAGIC;
    h[HDR_VERSION >>> 2] = SPSC_VERSION;
    h[HDR_FINGERPRINT >>> 2] = fingerprint >>> 0;
    h[HDR_CAPACITY >>> 2] = dataBytes;
    assert(Number.isInteger(startPosition) && (startPosition & 7) === 0, 'spsc_ring: startPosition must be a multiple of 8');
    h[WRITE_IDX] = startPosition >>> 0;
    h[READ_IDX] = startPosition >>> 0;
    return sab;
  }

  /** The data area, for reading and writing record fields in place. */
  readonly mem: Mem;
  /** Data area size in bytes (a power of two). */
  readonly capacity: number;
  /** Largest record tryClaim accepts: half the ring, so it always fits after a wrap. */
  readonly maxRecordBytes: number;
  /** The doorbell word in this ring's header, for a consumer that reads only this ring. */
  readonly doorbell: Doorbell;

  private readonly hdr: Uint32Array;
  private readonly mask: number;

  // Producer-side state (touched only by the producer thread).
  private claimPos: number;
  private cachedRead: number;

  // Consumer side (touched only by the consumer thread).
  private readonly reader: FrameReader;

  constructor(readonly sab: SharedArrayBuffer, fingerprint: number) {
    checkHeader('spsc_ring', sab, SPSC_MAGIC, SPSC_VERSION, fingerprint);
    this.hdr = new Uint32Array(sab, 0, HEADER_BYTES >>> 2);
    const capacity = this.hdr[HDR_CAPACITY >>> 2]!;
    checkDataBytes('spsc_ring', capacity);
    assert(sab.byteLength === HEADER_BYTES + capacity, 'spsc_ring: buffer length does not match its header');
    this.capacity = capacity;
    this.mask = capacity - 1;
    this.maxRecordBytes = capacity >>> 1;
    this.mem = memOf(sab, HEADER_BYTES, capacity);
    this.doorbell = new Doorbell(sab, DOORBELL_BYTE);
    // SC loads at attach: start from whatever the other side already published.
    const w = Atomics.load(this.hdr, WRITE_IDX);
    const r = Atomics.load(this.hdr, READ_IDX);
    this.claimPos = w;
    this.cachedRead = r;
    this.reader = new FrameReader('spsc_ring', this.hdr, this.mem, capacity, WRITE_IDX, READ_IDX);
    this.reader.reset(r);
  }

  // ---------------------------------------------------------------- producer

  /**
   * Claims space for one record of len bytes (a multiple of 8, 8 ..
   * maxRecordBytes) and writes its length word. Returns the byte offset in
   * `mem` where the caller writes the rest of the record (type at +4, must
   * not be 0), or -1 when the ring is full. Nothing is visible to the
   * consumer until publish().
   */
  tryClaim(len: number): number {
    assert(len >= RECORD_MIN_BYTES && (len & 7) === 0 && len <= this.maxRecordBytes, 'spsc_ring: bad record length');
    const capacity = this.capacity;
    let pos = this.claimPos;
    let off = pos & this.mask;
    const toEnd = capacity - off;
    const pad = toEnd < len ? toEnd : 0;
    if (((pos - this.cachedRead) >>> 0) + pad + len > capacity) {
      // Acquire: the consumer stored this after reading the records below it,
      // so once we see it those bytes are free to overwrite.
      this.cachedRead = Atomics.load(this.hdr, READ_IDX);
      if (((pos - this.cachedRead) >>> 0) + pad + len > capacity) return -1;
    }
    const u32 = this.mem.u32;
    if (pad !== 0) {
      u32[off >>> 2] = pad;
      u32[(off >>> 2) + 1] = PADDING_TYPE; // type 0 and a zero u16 after it
      pos = (pos + pad) >>> 0;
      off = 0;
    }
    u32[off >>> 2] = len;
    // Type UNSET_TYPE until the caller writes it: a forgotten type then shows
    // up as an unknown record instead of silently reading as padding.
    u32[(off >>> 2) + 1] = UNSET_TYPE;
    this.claimPos = (pos + len) >>> 0;
    return off;
  }

  /** Makes every record claimed so far visible to the consumer at once. */
  publish(): void {
    // Release: orders all plain writes of the claimed records before the new
    // write position; a consumer that loads this position sees those bytes.
    Atomics.store(this.hdr, WRITE_IDX, this.claimPos);
  }

  /** Free bytes as last seen by the producer (refreshes the consumer's position). */
  freeBytes(): number {
    // Acquire: see tryClaim.
    this.cachedRead = Atomics.load(this.hdr, READ_IDX);
    return this.capacity - ((this.claimPos - this.cachedRead) >>> 0);
  }

  // ---------------------------------------------------------------- consumer

  /**
   * Offset in `mem` of the next unread record (padding skipped), or -1 when
   * there is none. Idempotent until advance(). Releases the read position
   * when it finds the ring empty.
   */
  peek(): number {
    return this.reader.peek();
  }

  /** Consumes the record returned by the last peek(). */
  advance(): void {
    this.reader.advance();
  }

  /** Publishes the read position so the producer can reuse the consumed space. */
  release(): void {
    this.reader.release();
  }

  /** Fresh check for unread bytes (padding counts), for idle re-checks. */
  hasUnread(): boolean {
    return this.reader.hasUnread();
  }

  /** Consumer position (byte counter mod 2^32) of the next unread record; `position()` on every ring consumer. */
  position(): number {
    return this.reader.position();
  }

  /** Published write position; anyone may read it. */
  writePosition(): number {
    // Acquire load; diagnostic and tests.
    return Atomics.load(this.hdr, WRITE_IDX);
  }
}
