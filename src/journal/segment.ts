// Segment reading: validates a segment's frames (checksums, lengths, seq
// continuity, command boundaries) and iterates its records for replay and the
// tools. Any thread; synchronous file I/O (start-up, tools, snapshot worker).

import { closeSync, openSync, readdirSync, readSync, fstatSync } from 'node:fs';
import { join } from 'node:path';
import { Header, LAYOUT_FINGERPRINT, T_COMMAND_COMPLETED } from '../layout/records.js';
import { fail } from '../lib/assert.js';
import { memOf, type Mem } from '../lib/mem.js';
import { crc32c } from './crc32c.js';
import {
  decodeFileHeader, FILE_HEADER_BYTES, FRAME_HEADER_BYTES, MAX_RECORD_BYTES, MIN_RECORD_BYTES, SEGMENT_MAGIC, seqOfName,
} from './format.js';

/** A fault that must stop the start: names the file and the byte offset. */
export class JournalFault extends Error {
  constructor(readonly file: string, readonly offset: number, reason: string) {
    super(`journal fault in ${file} at byte ${offset}: ${reason}`);
    this.name = 'JournalFault';
  }
}

/**
 * The names in a directory; [] when the directory does not exist (a data
 * directory that never had a segment or a snapshot). Any other failure
 * (EACCES, EIO, ENOTDIR) is thrown: an unreadable journal is not an empty one.
 */
export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/**
 * The segments (or the snapshots) in their directory `sub` of the data
 * directory, with the seq their names carry, ascending by seq; other names
 * are skipped (by name only: a file's contents are checked on load).
 */
export function listBySeq(dataDir: string, sub: string, kind: 'segment' | 'snapshot'): { path: string; seq: number }[] {
  const dir = join(dataDir, sub);
  const out: { path: string; seq: number }[] = [];
  for (const n of listDir(dir)) {
    const seq = seqOfName(n, kind);
    if (seq >= 0) out.push({ path: join(dir, n), seq });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** A whole file in a fresh 8-aligned buffer (records are read through typed arrays). */
export function readWhole(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const bytes = new Uint8Array(new ArrayBuffer((size + 7) & ~7), 0, size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, bytes, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return bytes.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

export interface TornTail {
  offset: number;
  kind: 'torn_frame' | 'incomplete_command';
  detail: string;
}

export interface SegmentScan {
  path: string;
  firstSeq: number;
  /** Byte offset just past the last CommandCompleted frame: the segment's good end. */
  goodEnd: number;
  /** Seq of the last complete command (firstSeq - 1 when none). */
  lastSeq: number;
  /** Records up to goodEnd. */
  records: number;
  /** What lies past goodEnd, when anything does. */
  tail: TornTail | null;
}

function allZero(b: Uint8Array, from: number): boolean {
  for (let i = from; i < b.length; i++) if (b[i] !== 0) return false;
  return true;
}

/**
 * Validates a segment. A damaged frame is a torn tail (a write the crash cut
 * short, never synced, so never acknowledged) only when nothing readable
 * follows it: the frame runs past the end of the file, ends exactly at it,
 * or only zero bytes follow. Anything else (a bad checksum with data after
 * it, a seq gap, a wrong fingerprint) throws a JournalFault.
 */
export function scanSegment(
  path: string, bytes: Uint8Array, expectFirstSeq: number | null, stopAfterSeq = Number.MAX_SAFE_INTEGER,
): SegmentScan {
  const h = segmentHeader(path, bytes, expectFirstSeq);
  const f = scanFrames(path, bytes, h.seq, stopAfterSeq);
  return { path, firstSeq: h.seq, ...f };
}

/** A segment's file header, checked: its magic, this build's layout fingerprint, and (when given) its first seq. */
function segmentHeader(path: string, bytes: Uint8Array, expectFirstSeq: number | null): { seq: number } {
  let h;
  try {
    h = decodeFileHeader(bytes, SEGMENT_MAGIC);
  } catch (e) {
    throw new JournalFault(path, 0, (e as Error).message);
  }
  if (h.fingerprint !== LAYOUT_FINGERPRINT) {
    throw new JournalFault(
      path,
      12,
      `layout fingerprint 0x${h.fingerprint.toString(16)} differs from this build's 0x${LAYOUT_FINGERPRINT.toString(16)}: the journal ` +
        `was written by an incompatible version`,
    );
  }
  if (expectFirstSeq !== null && h.seq !== expectFirstSeq) {
    throw new JournalFault(
      path,
      16,
      `first seq ${h.seq} but the previous segment ended at seq ${expectFirstSeq - 1} (a missing segment or a gap)`,
    );
  }
  return h;
}

type FrameScan = Omit<SegmentScan, 'path' | 'firstSeq'>;

/**
 * Validates a segment's frames (the first command has seq `firstSeq`), and
 * stops after the completion of `stopAfterSeq` (what lies beyond it is not
 * read).
 */
function scanFrames(path: string, bytes: Uint8Array, firstSeq: number, stopAfterSeq: number): FrameScan {
  const m = memOf(bytes.buffer, bytes.byteOffset, (bytes.byteLength + 7) & ~7);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = bytes.length;
  let at = FILE_HEADER_BYTES;
  let goodEnd = at;
  let records = 0;
  let goodRecords = 0;
  let cur = firstSeq; // seq of the command being read
  let open = false; // a command has started and has not completed
  let lastSeq = firstSeq - 1;
  let tail: TornTail | null = null;
  while (at < size && lastSeq < stopAfterSeq) {
    const torn = (why: string): void => {
      tail = { offset: at, kind: 'torn_frame', detail: why };
    };
    if (size - at < FRAME_HEADER_BYTES) {
      torn(`${size - at} bytes, less than a frame header`);
      break;
    }
    const len = dv.getUint32(at, true);
    const sum = dv.getUint32(at + 4, true);
    const rec = at + FRAME_HEADER_BYTES;
    if (len === 0 && allZero(bytes, at)) {
      torn('zero bytes to the end of the file');
      break;
    }
    if (len < MIN_RECORD_BYTES || len > MAX_RECORD_BYTES || len % 8 !== 0) {
      if (allZero(bytes, rec)) {
        torn(`frame length ${len} followed by zeros`);
        break;
      }
      throw new JournalFault(path, at, `frame length ${len} is not a valid record length`);
    }
    if (rec + len > size) {
      // A torn write leaves a prefix of the frame as written, whose length is
      // the record's own. A record that is whole by its own length and matches
      // the frame's checksum was written whole: only the frame length is
      // damaged, in synced (acknowledged) data.
      const own = rec + 4 <= size ? dv.getUint32(rec, true) : 0;
      const ownValid = own >= MIN_RECORD_BYTES && own <= MAX_RECORD_BYTES && own % 8 === 0 && rec + own <= size;
      if (own !== len && ownValid && crc32c(bytes, rec, rec + own) === sum) {
        throw new JournalFault(
          path,
          at,
          `frame length ${len} is damaged: the record is whole at its own length ${own} and matches the frame's checksum (not a torn ` +
            `write)`,
        );
      }
      torn(`frame of ${len} bytes runs past the end of the file (${size - rec} bytes left)`);
      break;
    }
    if (crc32c(bytes, rec, rec + len) !== sum) {
      if (rec + len === size || allZero(bytes, rec + len)) {
        torn('checksum mismatch in the last frame');
        break;
      }
      throw new JournalFault(path, at, 'record checksum mismatch (data follows, so this is not a torn write)');
    }
    const recLen = Header.len(m, rec);
    if (recLen !== len) throw new JournalFault(path, at, `record length ${recLen} differs from its frame's ${len}`);
    const seq = Header.seq(m, rec);
    if (open) {
      if (seq !== cur) throw new JournalFault(path, at, `seq ${seq} inside command ${cur} (expected ${cur} until its completion)`);
    } else {
      const want = records === 0 ? firstSeq : cur + 1;
      if (seq !== want) throw new JournalFault(path, at, `seq ${seq} where ${want} was expected (a gap or a reordering)`);
      cur = seq;
      open = true;
    }
    records++;
    at = rec + len;
    if (Header.type(m, rec) === T_COMMAND_COMPLETED) {
      open = false;
      lastSeq = cur;
      goodEnd = at;
      goodRecords = records;
    }
  }
  if (tail === null && goodEnd < size && lastSeq < stopAfterSeq) {
    tail = {
      offset: goodEnd,
      kind: 'incomplete_command',
      detail: `command ${cur} has ${records - goodRecords} event(s) but no completion record`,
    };
  }
  return { goodEnd, lastSeq, records: goodRecords, tail };
}

/**
 * Calls fn(m, o) for every record of a validated segment in [FILE_HEADER, end)
 * whose seq lies in (afterSeq, uptoSeq]. Returns the number of records passed.
 */
export function forEachRecord(bytes: Uint8Array, end: number, afterSeq: number, uptoSeq: number, fn: (m: Mem, o: number) => void): number {
  const m = memOf(bytes.buffer, bytes.byteOffset, (bytes.byteLength + 7) & ~7);
  const u32 = m.u32;
  let n = 0;
  let last = 0;
  for (let at = FILE_HEADER_BYTES; at < end;) {
    const len = u32[at >>> 2]!;
    const rec = at + FRAME_HEADER_BYTES;
    // The segment was validated; these guard the reading itself (a plan used on a changed file).
    // `if ... fail`: an assert's template message would be built for every record.
    if (!(rec + len <= end && Header.len(m, rec) === len)) fail(`journal: frame at byte ${at} is not well formed (length ${len})`);
    const seq = Header.seq(m, rec);
    if (!(seq >= last)) fail(`journal: seq ${seq} after ${last} at byte ${at}`);
    last = seq;
    if (seq > uptoSeq) break;
    if (seq > afterSeq) {
      fn(m, rec);
      n++;
    }
    at = rec + len;
  }
  return n;
}
