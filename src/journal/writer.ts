// JournalWriter: appends event records, framed with a CRC-32C each, to the
// current segment and makes them durable in groups: append() copies records
// into a buffer, sync() writes what is buffered and fdatasyncs once. The
// journal thread calls sync() whenever the event ring has nothing more to
// give, so one fsync covers every record that arrived meanwhile (group
// commit). Segments rotate at a command boundary once they pass their size.
//
// durableSeq() = the seq of the last command whose CommandCompleted record
// has been written and synced: what may be shown and acknowledged.

import { closeSync, fdatasyncSync, fsyncSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Header, LAYOUT_FINGERPRINT, T_COMMAND_COMPLETED } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { crc32c } from './crc32c.js';
import { encodeFileHeader, FILE_HEADER_BYTES, FORMAT_VERSION, FRAME_HEADER_BYTES, JOURNAL_DIR, SEGMENT_MAGIC, segmentName } from './format.js';

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
}

export const DEFAULT_SEGMENT_BYTES = 64 << 20;

/** fsync a directory so a created or renamed entry survives a crash. */
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
  private readonly buf: Uint8Array;
  private readonly dv: DataView;
  private fill = 0;
  private fd = -1;
  /** Bytes in the current segment file, written or buffered. */
  private segSize = 0;
  /** Seq of the last CommandCompleted appended, and the last one synced. */
  private completed: number;
  private synced: number;
  private lastWasCompletion = true;
  /** Counters for metrics and benchmarks. */
  syncs = 0;
  records = 0;
  bytes = 0;
  segments = 0;

  constructor(opts: JournalWriterOptions) {
    this.dir = join(opts.dataDir, JOURNAL_DIR);
    this.fsync = opts.fsync;
    this.segmentBytes = opts.segmentBytes ?? DEFAULT_SEGMENT_BYTES;
    this.buf = new Uint8Array(opts.bufferBytes ?? 4 << 20);
    this.dv = new DataView(this.buf.buffer);
    this.completed = this.synced = opts.nextSeq - 1;
    mkdirSync(this.dir, { recursive: true });
    this.openSegment(opts.nextSeq);
  }

  private openSegment(firstSeq: number): void {
    const path = join(this.dir, segmentName(firstSeq));
    // 'wx': never overwrite (recovery removed or kept whatever was there).
    this.fd = openSync(path, 'wx', 0o644);
    const h = encodeFileHeader({ magic: SEGMENT_MAGIC, version: FORMAT_VERSION, fingerprint: LAYOUT_FINGERPRINT, seq: firstSeq, extra: Date.now(), bodyCrc: 0 });
    writeSync(this.fd, h, 0, FILE_HEADER_BYTES);
    if (this.fsync) {
      fdatasyncSync(this.fd);
      syncDir(this.dir);
    }
    this.segSize = FILE_HEADER_BYTES;
    this.segments++;
  }

  /** Copies one event record (at o in m) into the write buffer. */
  append(m: Mem, o: number): void {
    const len = Header.len(m, o);
    const seq = Header.seq(m, o);
    // A new command starting in a full segment: finish the old segment first.
    if (this.lastWasCompletion && this.segSize >= this.segmentBytes && seq > this.completed) this.rotate(seq);
    const need = FRAME_HEADER_BYTES + len;
    if (this.fill + need > this.buf.length) this.writeOut();
    assert(need <= this.buf.length, 'journal: record larger than the write buffer');
    const at = this.fill;
    this.buf.set(m.u8.subarray(o, o + len), at + FRAME_HEADER_BYTES);
    this.dv.setUint32(at, len, true);
    this.dv.setUint32(at + 4, crc32c(this.buf, at + FRAME_HEADER_BYTES, at + need), true);
    this.fill += need;
    this.segSize += need;
    this.records++;
    this.bytes += need;
    this.lastWasCompletion = Header.type(m, o) === T_COMMAND_COMPLETED;
    if (this.lastWasCompletion) this.completed = seq;
  }

  private writeOut(): void {
    let at = 0;
    while (at < this.fill) at += writeSync(this.fd, this.buf, at, this.fill - at);
    this.fill = 0;
  }

  /** Writes what is buffered and fdatasyncs it; returns the durable seq. */
  sync(): number {
    if (this.fill > 0) this.writeOut();
    if (this.synced !== this.completed) {
      if (this.fsync) fdatasyncSync(this.fd);
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
