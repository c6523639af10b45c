// Batch: the body of one replicated log message. It is a run of whole
// commands framed exactly as in a journal segment (src/journal/format.ts):
//   frame = len u32 | crc32c u32 of the record | the event record as on the ring
// The records are opaque here: only the common header is read (len, type,
// seq), so a change of the event layout needs nothing in this file.
//
// BatchBuilder (replication thread, primary) frames records taken off the
// event ring and cuts at the last CommandCompleted: a command is never split
// between messages. scanBatch (replication thread, followers; tools) checks a
// received body the way recovery checks a segment: lengths, checksums, seq
// continuity (the same seq within a command, +1 between commands), a
// completion record at the end. Any fault is a BatchFault: a follower stops.

import { FRAME_HEADER_BYTES, MAX_RECORD_BYTES } from '../journal/format.js';
import { crc32c } from '../journal/crc32c.js';
import { Header, T_COMMAND_COMPLETED } from '../layout/records.js';
import { memOf, type Mem } from '../lib/mem.js';

/** A received batch that cannot be applied: names the stream message and the byte offset in its body. */
export class BatchFault extends Error {
  constructor(readonly streamSeq: number, readonly offset: number, reason: string) {
    super(`replicated log message ${streamSeq}, byte ${offset}: ${reason}`);
    this.name = 'BatchFault';
  }
}

export class BatchBuilder {
  private buf: Uint8Array;
  private dv: DataView;
  private mem: Mem;
  /** Bytes framed so far (whole commands, then possibly the start of an open command). */
  private fill = 0;
  /** End of the last complete command in buf, and its seq. */
  private completeEnd = 0;
  private completeSeq = 0;
  /** Seq of the first record in buf (0 when empty). */
  private firstSeq = 0;

  constructor(initialBytes = 1 << 16) {
    this.buf = new Uint8Array(initialBytes);
    this.dv = new DataView(this.buf.buffer);
    this.mem = memOf(this.buf.buffer);
  }

  /** Frames one record (at o in m). */
  append(m: Mem, o: number): void {
    const len = Header.len(m, o);
    const need = FRAME_HEADER_BYTES + len;
    if (this.fill + need > this.buf.length) this.grow(this.fill + need);
    const at = this.fill;
    const rec = at + FRAME_HEADER_BYTES;
    this.buf.set(m.u8.subarray(o, o + len), rec);
    this.dv.setUint32(at, len, true);
    this.dv.setUint32(at + 4, crc32c(this.buf, rec, rec + len), true);
    if (this.fill === 0) this.firstSeq = Header.seq(m, o);
    this.fill += need;
    if (Header.type(m, o) === T_COMMAND_COMPLETED) {
      this.completeEnd = this.fill;
      this.completeSeq = Header.seq(m, o);
    }
  }

  private grow(min: number): void {
    let n = this.buf.length * 2;
    while (n < min) n *= 2;
    const b = new Uint8Array(n);
    b.set(this.buf.subarray(0, this.fill));
    this.buf = b;
    this.dv = new DataView(b.buffer);
    this.mem = memOf(b.buffer);
  }

  /** Bytes of whole commands ready to be cut. */
  get readyBytes(): number {
    return this.completeEnd;
  }

  /** Bytes framed in all, an open command included. */
  get bytes(): number {
    return this.fill;
  }

  /**
   * Cuts every whole command framed so far into a message body (a copy) and
   * keeps the open command's records for the next one; null when no command
   * is complete.
   */
  cut(): { body: Uint8Array; firstSeq: number; lastSeq: number } | null {
    if (this.completeEnd === 0) return null;
    const body = this.buf.slice(0, this.completeEnd);
    const out = { body, firstSeq: this.firstSeq, lastSeq: this.completeSeq };
    const rest = this.fill - this.completeEnd;
    if (rest > 0) {
      this.buf.copyWithin(0, this.completeEnd, this.fill);
      this.firstSeq = Header.seq(this.mem, FRAME_HEADER_BYTES);
    } else {
      this.firstSeq = 0;
    }
    this.fill = rest;
    this.completeEnd = 0;
    return out;
  }
}

export interface ScannedBatch {
  firstSeq: number;
  lastSeq: number;
  records: number;
  /** The body, 8-aligned for record access. */
  mem: Mem;
  /** Byte offset of each record (past its frame header) in mem. */
  offsets: number[];
}

/** The body in a fresh 8-aligned buffer (a NATS payload is a view at any offset). */
export function aligned(body: Uint8Array): Uint8Array {
  if ((body.byteOffset & 7) === 0 && body.buffer.byteLength >= body.byteOffset + ((body.length + 7) & ~7)) return body;
  const b = new Uint8Array(new ArrayBuffer((body.length + 7) & ~7), 0, body.length);
  b.set(body);
  return b;
}

/**
 * Checks a message body: every frame whole with its checksum, lengths valid,
 * seqs continuous from `firstSeq` (the same within a command, +1 between
 * commands), ending with a CommandCompleted whose seq is `lastSeq`.
 */
export function scanBatch(streamSeq: number, body: Uint8Array, firstSeq: number, lastSeq: number): ScannedBatch {
  const bytes = aligned(body);
  const size = bytes.length;
  if (size === 0 && firstSeq <= lastSeq) throw new BatchFault(streamSeq, 0, `an empty body for seqs ${firstSeq}..${lastSeq}`);
  const m = memOf(bytes.buffer, bytes.byteOffset, (size + 7) & ~7);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, size);
  const offsets: number[] = [];
  let at = 0;
  let cur = firstSeq;
  let open = false;
  while (at < size) {
    if (size - at < FRAME_HEADER_BYTES) throw new BatchFault(streamSeq, at, `${size - at} bytes, less than a frame header`);
    const len = dv.getUint32(at, true);
    const rec = at + FRAME_HEADER_BYTES;
    if (len < 32 || len > MAX_RECORD_BYTES || len % 8 !== 0)
      throw new BatchFault(streamSeq, at, `frame length ${len} is not a valid record length`);
    if (rec + len > size) throw new BatchFault(streamSeq, at, `frame of ${len} bytes runs past the end of the message`);
    if (crc32c(bytes, rec, rec + len) !== dv.getUint32(at + 4, true)) throw new BatchFault(streamSeq, at, 'record checksum mismatch');
    if (Header.len(m, rec) !== len)
      throw new BatchFault(streamSeq, at, `record length ${Header.len(m, rec)} differs from its frame's ${len}`);
    const seq = Header.seq(m, rec);
    if (open) {
      if (seq !== cur) throw new BatchFault(streamSeq, at, `seq ${seq} inside command ${cur}`);
    } else {
      const want = offsets.length === 0 ? firstSeq : cur + 1;
      if (seq !== want) throw new BatchFault(streamSeq, at, `seq ${seq} where ${want} was expected (a gap or a reordering)`);
      cur = seq;
      open = true;
    }
    offsets.push(rec);
    if (Header.type(m, rec) === T_COMMAND_COMPLETED) open = false;
    at = rec + len;
  }
  if (open) throw new BatchFault(streamSeq, at, `command ${cur} has no completion record at the end of the message`);
  if (offsets.length > 0 && cur !== lastSeq)
    throw new BatchFault(streamSeq, at, `the message ends at seq ${cur}, its header says ${lastSeq}`);
  return { firstSeq, lastSeq, records: offsets.length, mem: m, offsets };
}
