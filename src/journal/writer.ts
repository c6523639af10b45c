// JournalWriter: appends event records, framed with a CRC-32C each, to the
// current segment and makes them durable in groups: append() copies records
// into a buffer, sync() writes what is buffered and fdatasyncs once. The
// journal thread calls sync() whenever the event ring has nothing more to
// give, so one fsync covers every record that arrived meanwhile (group
// commit). Segments rotate at a command boundary once they pass their size.
//
// durableSeq() = the seq of the last command whose CommandCompleted record
// has been written and synced: what may be shown and acknowledged.
//
// Boundary checks (always on, they cost a compare each): every record is a
// well-formed frame (length a multiple of 8 within the layout's bounds),
// a command's records share its seq, and each command's seq is exactly one
// above the previous one's. A failed write or fdatasync throws and the
// writer is never used again (the journal thread stops the process): after a
// failed fdatasync the kernel may have dropped the dirty pages, so retrying
// could report as durable what never reached the disk.

import { closeSync, fsyncSync, mkdirSync, openSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Header, LAYOUT_FINGERPRINT, T_COMMAND_COMPLETED } from '../layout/records.js';
import { assert, fail } from '../lib/assert.js';
import { copyWords, type Mem } from '../lib/mem.js';
import { crc32c } from './crc32c.js';
import { FS_IO, type JournalIo } from './faults.js';
import {
  encodeFileHeader, FILE_HEADER_BYTES, FORMAT_VERSION, FRAME_HEADER_BYTES, JOURNAL_DIR, MAX_RECORD_BYTES, MIN_RECORD_BYTES,
  SEGMENT_MAGIC, segmentName,
} from './format.js';

export interface JournalWriterOptions {
  dataDir: string;
  /** The seq the first appended record will carry (last recovered seq + 1). */
  nextSeq: number;
  /** false = durability `none` (benchmarks only): write, never fsync. */
  fsync: boolean;
  /** Rotate to a new segment past this size (at a command boundary). */
  segmentBytes?: number;
  /** Write buffer; a fuller buffer is written (not synced) early. */
  bufferBytes?: number;
  /** The file writes (tests substitute failing ones, see faults.ts). */
  io?: JournalIo;
}

export const DEFAULT_SEGMENT_BYTES = 64 << 20;

/** fsync a directory so a created or renamed entry survives a crash. */
/**
 * Creates dir (and missing parents, mode 0700) and, when it made any, fsyncs the parent of each one it made, so that the
 * new entries survive a power cut (a segment or snapshot synced into a directory whose own entry was lost is lost too).
 */
export function makeDirDurable(dir: string, fsync: boolean): void {
  const first = mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (first === undefined || !fsync) return;
  for (let d = dir; ; d = dirname(d)) {
    syncDir(dirname(d));
    if (d === first || dirname(d) === d) break;
  }
}

export function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class JournalWriter {
  readonly dir: string;
  private readonly fsync: boolean;
  private readonly segmentBytes: number;
  private readonly io: JournalIo;
  private readonly buf: Uint8Array;
  /** The buffer as words: records are whole words at word offsets (lengths and frames are multiples of 8 bytes). */
  private readonly words: Uint32Array;
  private readonly dv: DataView;
  private fill = 0;
  private fd = -1;
  /** Bytes in the current segment file, written or buffered. */
  private segSize = 0;
  /** Seq of the last CommandCompleted appended, and the last one synced. */
  private completed: number;
  private synced: number;
  private lastWasCompletion = true;
  /** Seq of the command being appended (its records until its CommandCompleted). */
  private current: number;
  /** Counters for metrics and benchmarks. */
  syncs = 0;
  records = 0;
  bytes = 0;
  segments = 0;

  constructor(opts: JournalWriterOptions) {
    this.dir = join(opts.dataDir, JOURNAL_DIR);
    this.fsync = opts.fsync;
    this.segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.io = opts.io ?? FS_IO;
    this.buf = new Uint8Array(opts.bufferBytes ?? 4 << 20);
    this.words = new Uint32Array(this.buf.buffer);
    this.dv = new DataView(this.buf.buffer);
    this.completed = this.synced = this.current = opts.nextSeq - 1;
    makeDirDurable(this.dir, this.fsync);
    this.openSegment(opts.nextSeq);
  }

  private openSegment(firstSeq: number): void {
    const path = join(this.dir, segmentName(firstSeq));
    // 'wx': never overwrite (recovery removed or kept whatever was there).
    this.fd = openSync(path, 'wx', 0o600);
    const h = encodeFileHeader({
      magic: SEGMENT_MAGIC,
      version: FORMAT_VERSION,
      fingerprint: LAYOUT_FINGERPRINT,
      seq: firstSeq,
      extra: Date.now(),
      bodyCrc: 0,
    });
    this.writeAll(h, FILE_HEADER_BYTES);
    if (this.fsync) {
      this.io.fdatasync(this.fd);
      syncDir(this.dir);
    }
    this.segSize = FILE_HEADER_BYTES;
    this.segments++;
  }

  /** Copies one event record (at o in m) into the write buffer. */
  append(m: Mem, o: number): void {
    const len = Header.len(m, o);
    const seq = Header.seq(m, o);
    const wellFormed = len >= MIN_RECORD_BYTES && len <= MAX_RECORD_BYTES && (len & 7) === 0 && (o & 3) === 0;
    // `if ... fail`, not assert(): assert's message, a template, would be built for every record.
    if (!wellFormed) fail(`journal: record of ${len} bytes at seq ${seq} is not a well-formed frame`);
    if (this.lastWasCompletion) {
      if (seq !== this.completed + 1) fail(`journal: command seq ${seq} follows ${this.completed} (each is one above the previous)`);
      this.current = seq;
    } else if (seq !== this.current) {
      fail(`journal: record of seq ${seq} inside command ${this.current} (a command's records share its seq)`);
    }
    // A new command starting in a full segment: finish the old segment first.
    if (this.lastWasCompletion && this.segSize >= this.segmentBytes && seq > this.completed) this.rotate(seq);
    const need = FRAME_HEADER_BYTES + len;
    if (this.fill + need > this.buf.length) this.writeOut();
    assert(need <= this.buf.length, 'journal: record larger than the write buffer');
    const at = this.fill;
    copyWords(m, o, this.words, at + FRAME_HEADER_BYTES, len);
    this.dv.setUint32(at, len, true);
    this.dv.setUint32(at + 4, crc32c(this.buf, at + FRAME_HEADER_BYTES, at + need), true);
    this.fill += need;
    this.segSize += need;
    this.records++;
    this.bytes += need;
    this.lastWasCompletion = Header.type(m, o) === T_COMMAND_COMPLETED;
    if (this.lastWasCompletion) this.completed = seq;
  }

  /** Writes bytes[0, len) at the end of the segment (a short write continues; a failed one throws). */
  private writeAll(bytes: Uint8Array, len: number): void {
    let at = 0;
    while (at < len) at += this.io.write(this.fd, bytes, at, len - at);
  }

  private writeOut(): void {
    this.writeAll(this.buf, this.fill);
    this.fill = 0;
  }

  /** Writes what is buffered and fdatasyncs it; returns the durable seq. */
  sync(): number {
    if (this.fill > 0) this.writeOut();
    if (this.synced !== this.completed) {
      assert(this.completed > this.synced, 'journal: the durable seq only moves forward');
      if (this.fsync) this.io.fdatasync(this.fd);
      this.syncs++;
      this.synced = this.completed;
    }
    return this.synced;
  }

  durableSeq(): number {
    return this.synced;
  }

  private rotate(firstSeq: number): void {
    this.sync();
    closeSync(this.fd);
    this.openSegment(firstSeq);
  }

  close(): void {
    if (this.fd < 0) return;
    this.sync();
    closeSync(this.fd);
    this.fd = -1;
  }
}
