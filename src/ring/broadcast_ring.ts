// BroadcastRing: one producer (the engine's event output), up to
// maxConsumers readers (gateway views, market data, journal), each reading
// every record in order at its own pace. Records are framed as in frame.ts.
// The producer thread attaches a BroadcastProducer, each consumer thread a
// BroadcastConsumer with its own index; indexes are assigned by the caller.
//
// Buffer layout (bytes):
//   0    magic u32, version u32, fingerprint u32, capacity u32, maxConsumers u32
//   64   write position u32        (producer only)
//   128  producer limit u32        (producer only; see "Joining" below)
//   192  doorbell i32              (consumers that park; see doorbell.ts)
//   256 + 64*i  consumer i: cursor u32 (its released read position),
//               state u32 = session << 1 | active (session counts opens)
//   256 + 64*maxConsumers  data area, capacity bytes (power of two)
//
// Back-pressure: the producer never overwrites bytes that an ACTIVE consumer
// has not released. It caches minRead (the lowest active cursor at its last
// scan, or its own published position when none is active) and rescans the
// consumer lines only when that cache says the ring is full, so a consumer
// that lags blocks the producer (tryClaim returns -1) and an inactive
// (closed) one is ignored from the next rescan on.
//
// Joining. The producer claims only below its limit = minRead + capacity and
// stores that limit in the header after each rescan; then it re-reads the
// state words and rescans if any active consumer's state differs from what
// the scan saw (a consumer that opened, or closed and reopened, meanwhile).
// A consumer joining at position p stores its cursor, stores a new state
// (active, next session; SC), then loads the limit: with SC atomics either
// the producer's re-check sees the new state (and rescans, respecting p) or
// the consumer sees the limit the producer will use. openAt(p) succeeds only
// if that limit is <= p + capacity, i.e. nothing at or after p has been or
// can be overwritten. The session count is what makes a close-and-reopen at
// an older position visible to a scan that already counted the old session.
// open() joins at the write position read after setting active, which is
// always safe: any limit computed without this consumer is at most the
// published write position at that scan plus capacity.
//
// Positions are u32 byte counters wrapping mod 2^32, so a resume position is
// only meaningful while it is within capacity of the write position.
//
// Consumer release policy is the same as SpscRing's: lazy, every quarter
// ring, and whenever peek() finds nothing new.

import { assert } from '../lib/assert.js';
import { memOf, type Mem } from '../lib/mem.js';
import { Doorbell } from './doorbell.js';
import { FrameReader } from './frame_reader.js';
import {
  CACHE_LINE, HDR_CAPACITY, HDR_FINGERPRINT, HDR_MAGIC, HDR_VERSION, PADDING_TYPE, RECORD_MIN_BYTES, UNSET_TYPE,
  checkDataBytes, checkFingerprint, checkHeader,
} from './frame.js';

const BCAST_MAGIC = 0x54534342; // 'BCST' little-endian
const BCAST_VERSION = 1;
const HDR_MAX_CONSUMERS = 16;
const WRITE_IDX = CACHE_LINE >>> 2;
const LIMIT_IDX = (2 * CACHE_LINE) >>> 2;
const DOORBELL_BYTE = 3 * CACHE_LINE;
const CONSUMERS_BYTE = 4 * CACHE_LINE;
/** Bit masks of consumers are u32, hence the cap. */
export const BROADCAST_MAX_CONSUMERS = 32;

function headerBytes(maxConsumers: number): number {
  return CONSUMERS_BYTE + maxConsumers * CACHE_LINE;
}

interface Attached {
  readonly hdr: Uint32Array;
  readonly capacity: number;
  readonly maxConsumers: number;
  readonly mem: Mem;
  readonly doorbell: Doorbell;
}

function attach(who: string, sab: SharedArrayBuffer, fingerprint: number): Attached {
  checkHeader(who, sab, BCAST_MAGIC, BCAST_VERSION, fingerprint);
  const head = new Uint32Array(sab, 0, CACHE_LINE >>> 2);
  const capacity = head[HDR_CAPACITY >>> 2]!;
  const maxConsumers = head[HDR_MAX_CONSUMERS >>> 2]!;
  checkDataBytes(who, capacity);
  assert(maxConsumers >= 1 && maxConsumers <= BROADCAST_MAX_CONSUMERS, `${who}: bad maxConsumers in header`);
  const hb = headerBytes(maxConsumers);
  assert(sab.byteLength === hb + capacity, `${who}: buffer length does not match its header`);
  return {
    hdr: new Uint32Array(sab, 0, hb >>> 2),
    capacity,
    maxConsumers,
    mem: memOf(sab, hb, capacity),
    doorbell: new Doorbell(sab, DOORBELL_BYTE),
  };
}

/** u32 index of consumer i's cursor word; its state word is the next one. */
function cursorIdx(i: number): number {
  return (CONSUMERS_BYTE + i * CACHE_LINE) >>> 2;
}

export class BroadcastRing {
  /**
   * Creates a zeroed broadcast ring: header + maxConsumers lines + data area.
   * The write position starts at startPosition (a multiple of 8; tests start
   * near 2^32 to exercise the wrap of the counters).
   */
  static allocate(dataBytes: number, maxConsumers: number, fingerprint: number, startPosition = 0): SharedArrayBuffer {
    checkDataBytes('broadcast_ring', dataBytes);
    checkFingerprint(fingerprint);
    if (!Number.isInteger(maxConsumers) || maxConsumers < 1 || maxConsumers > BROADCAST_MAX_CONSUMERS) {
      throw new Error(`broadcast_ring: maxConsumers must be 1..${BROADCAST_MAX_CONSUMERS}, got ${maxConsumers}`);
    }
    const hb = headerBytes(maxConsumers);
    const sab = new SharedArrayBuffer(hb + dataBytes);
    const h = new Uint32Array(sab, 0, hb >>> 2);
    h[HDR_MAGIC >>> 2] = BCAST_MAGIC;
    h[HDR_VERSION >>> 2] = BCAST_VERSION;
    h[HDR_FINGERPRINT >>> 2] = fingerprint >>> 0;
    h[HDR_CAPACITY >>> 2] = dataBytes;
    h[HDR_MAX_CONSUMERS >>> 2] = maxConsumers;
    assert(Number.isInteger(startPosition) && (startPosition & 7) === 0, 'broadcast_ring: startPosition must be a multiple of 8');
    h[WRITE_IDX] = startPosition >>> 0;
    // No consumer yet: the producer may fill one ring from the start position.
    h[LIMIT_IDX] = (startPosition + dataBytes) >>> 0;
    return sab;
  }

  /** Published write position of a broadcast ring buffer; any thread. */
  static writePosition(sab: SharedArrayBuffer): number {
    // Acquire load of the producer's published position.
    return Atomics.load(new Uint32Array(sab, 0, CACHE_LINE >>> 1), WRITE_IDX);
  }
}

export class BroadcastProducer {
  readonly mem: Mem;
  readonly capacity: number;
  readonly maxConsumers: number;
  /** Largest record tryClaim accepts: half the ring. */
  readonly maxRecordBytes: number;
  /** Doorbell that parking consumers of this ring sleep on; call wake() after publish(). */
  readonly doorbell: Doorbell;

  private readonly hdr: Uint32Array;
  private readonly mask: number;
  /** State word of each consumer as the last scan saw it. */
  private readonly seenState: Uint32Array;
  private claimPos: number;
  private publishedPos: number;
  private minRead: number;

  constructor(readonly sab: SharedArrayBuffer, fingerprint: number) {
    const a = attach('broadcast_ring', sab, fingerprint);
    this.hdr = a.hdr;
    this.mem = a.mem;
    this.capacity = a.capacity;
    this.maxConsumers = a.maxConsumers;
    this.doorbell = a.doorbell;
    this.mask = a.capacity - 1;
    this.maxRecordBytes = a.capacity >>> 1;
    this.seenState = new Uint32Array(a.maxConsumers);
    // SC load at attach.
    const w = Atomics.load(this.hdr, WRITE_IDX);
    this.claimPos = w;
    this.publishedPos = w;
    // No space cached: the first claim scans the consumers.
    this.minRead = (w - a.capacity) >>> 0;
  }

  /** Same contract as SpscRing.tryClaim: offset in `mem`, or -1 when an active consumer lags. */
  tryClaim(len: number): number {
    assert(len >= RECORD_MIN_BYTES && (len & 7) === 0 && len <= this.maxRecordBytes, 'broadcast_ring: bad record length');
    const capacity = this.capacity;
    let pos = this.claimPos;
    let off = pos & this.mask;
    const toEnd = capacity - off;
    const pad = toEnd < len ? toEnd : 0;
    if (((pos - this.minRead) >>> 0) + pad + len > capacity) {
      this.scan();
      if (((pos - this.minRead) >>> 0) + pad + len > capacity) return -1;
    }
    const u32 = this.mem.u32;
    if (pad !== 0) {
      u32[off >>> 2] = pad;
      u32[(off >>> 2) + 1] = PADDING_TYPE;
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

  /** Makes every record claimed so far visible to all consumers at once. */
  publish(): void {
    this.publishedPos = this.claimPos;
    // Release: orders the plain writes of the claimed records before the new
    // write position that consumers acquire-load.
    Atomics.store(this.hdr, WRITE_IDX, this.claimPos);
  }

  writePosition(): number {
    return this.publishedPos;
  }

  /**
   * Recomputes minRead from the active consumers' cursors and publishes the
   * resulting limit; repeats if a consumer joined during the scan (see
   * "Joining" in the header comment).
   */
  private scan(): void {
    const hdr = this.hdr;
    const seenState = this.seenState;
    const n = this.maxConsumers;
    const base = this.publishedPos;
    for (;;) {
      let maxLag = 0;
      for (let i = 0; i < n; i++) {
        const c = cursorIdx(i);
        // Acquire loads: a consumer stores its state after its starting
        // cursor, and its cursor after reading the records below it.
        const st = Atomics.load(hdr, c + 1);
        seenState[i] = st;
        if ((st & 1) !== 0) {
          const lag = (base - Atomics.load(hdr, c)) >>> 0;
          if (lag > maxLag) maxLag = lag;
        }
      }
      this.minRead = (base - maxLag) >>> 0;
      // SC store, ordered before the re-check loads of the state words below
      // (the producer half of the joining handshake).
      Atomics.store(hdr, LIMIT_IDX, (this.minRead + this.capacity) >>> 0);
      let joined = false;
      for (let i = 0; i < n; i++) {
        // SC loads: the joining handshake.
        const st = Atomics.load(hdr, cursorIdx(i) + 1);
        if ((st & 1) !== 0 && st !== seenState[i]) joined = true;
      }
      if (!joined) return;
    }
  }
}

export class BroadcastConsumer {
  readonly mem: Mem;
  readonly capacity: number;
  /** Doorbell of this ring, for a parking wait strategy (src/ring/wait.ts). */
  readonly doorbell: Doorbell;

  private readonly hdr: Uint32Array;
  private readonly cursorIdx: number;
  private readonly stateIdx: number;
  private readonly reader: FrameReader;
  private isOpen = false;

  constructor(readonly sab: SharedArrayBuffer, fingerprint: number, readonly consumerIndex: number) {
    const a = attach('broadcast_ring', sab, fingerprint);
    assert(
      Number.isInteger(consumerIndex) && consumerIndex >= 0 && consumerIndex < a.maxConsumers,
      'broadcast_ring: consumer index out of range',
    );
    this.hdr = a.hdr;
    this.mem = a.mem;
    this.capacity = a.capacity;
    this.doorbell = a.doorbell;
    this.cursorIdx = cursorIdx(consumerIndex);
    this.stateIdx = this.cursorIdx + 1;
    this.reader = new FrameReader('broadcast_ring', this.hdr, this.mem, this.capacity, WRITE_IDX, this.cursorIdx);
  }

  /** Becomes active, reading from the current write position on. */
  open(): void {
    const hdr = this.hdr;
    const next = this.nextActiveState();
    // SC: a provisional cursor, stored before the state so a producer that
    // sees the new state never sees a stale cursor.
    Atomics.store(hdr, this.cursorIdx, Atomics.load(hdr, WRITE_IDX));
    // SC store: the consumer half of the joining handshake.
    Atomics.store(hdr, this.stateIdx, next);
    // SC load after the state: any limit the producer computed without us is
    // at most this position + capacity, so nothing from here on is lost.
    const w = Atomics.load(hdr, WRITE_IDX);
    // Release: the real start; raising the cursor only frees space.
    Atomics.store(hdr, this.cursorIdx, w);
    this.start(w);
  }

  /**
   * Becomes active at an earlier position (from position()) if the records
   * from there on are still in the ring and will stay there until read.
   * Returns false (and stays closed) when they may have been overwritten.
   */
  openAt(position: number): boolean {
    const hdr = this.hdr;
    const next = this.nextActiveState();
    const p = position >>> 0;
    if ((p & 7) !== 0) return false;
    // Acquire load: the position must not be ahead of published data.
    if (((Atomics.load(hdr, WRITE_IDX) - p) >>> 0) > this.capacity) return false;
    // SC: cursor before the state (see open()).
    Atomics.store(hdr, this.cursorIdx, p);
    // SC store, then SC load of the limit: the joining handshake.
    Atomics.store(hdr, this.stateIdx, next);
    const limit = Atomics.load(hdr, LIMIT_IDX);
    if (((limit - p) >>> 0) > this.capacity) {
      // SC store: withdraw; the producer stops counting us at its next scan.
      Atomics.store(hdr, this.stateIdx, next & ~1);
      return false;
    }
    this.start(p);
    return true;
  }

  /** Stops blocking the producer; records not yet read are given up. */
  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.reader.dropPeek();
    // Release store (same session, not active): after this the producer may
    // overwrite anything we had not released, from its next scan on.
    Atomics.store(this.hdr, this.stateIdx, Atomics.load(this.hdr, this.stateIdx) & ~1);
  }

  /** The state word for a new session: next session number, active bit set. */
  private nextActiveState(): number {
    assert(!this.isOpen, 'broadcast_ring: open on an open consumer');
    // Only this consumer writes its state word; the load just reads our own last store.
    const st = Atomics.load(this.hdr, this.stateIdx);
    assert((st & 1) === 0, 'broadcast_ring: consumer index already active');
    return ((((st >>> 1) + 1) << 1) | 1) >>> 0;
  }

  get opened(): boolean {
    return this.isOpen;
  }

  private start(p: number): void {
    this.reader.reset(p);
    this.isOpen = true;
  }

  /** Offset in `mem` of the next unread record (padding skipped), or -1. */
  peek(): number {
    assert(this.isOpen, 'broadcast_ring: peek() on a closed consumer');
    return this.reader.peek();
  }

  /** Consumes the record returned by the last peek(). */
  advance(): void {
    this.reader.advance();
  }

  /** Publishes this consumer's cursor so the producer can reuse the space. */
  release(): void {
    this.reader.release();
  }

  /**
   * Position of the next unread record; right after a peek() that returned a
   * record, the position of that record. openAt(position()) resumes there.
   */
  position(): number {
    return this.reader.position();
  }

  /** Fresh check for unread bytes, for idle re-checks. */
  hasUnread(): boolean {
    // SC load: ordered after Doorbell.announce() in a parking consumer.
    return this.isOpen && this.reader.hasUnread();
  }

  /** Published write position; any thread. */
  writePosition(): number {
    // Acquire load of the producer's published position.
    return Atomics.load(this.hdr, WRITE_IDX);
  }
}
