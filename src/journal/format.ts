// Journal and snapshot file formats (everything little-endian).
//
// Data directory:
//   journal/seg-<first seq, 20 digits>.dxj   event segments, in seq order
//   snapshots/snap-<seq, 20 digits>.dxs      full state at a seq
//
// Segment = 64-byte header, then frames. A segment starts at the first event
// of a command, so its first_seq is that command's seq.
//   header: magic "DXJSEG01" (8) | version u32 | fingerprint u32 (layout) |
//           first_seq u64 | created_ns u64 | reserved (28) | crc32c u32 of bytes 0..59
//   frame:  len u32 (the record's own length, a multiple of 8) | crc32c u32 of
//           the record bytes | the event record exactly as on the event ring.
// Events of one command share its seq and end with its CommandCompleted
// record; seq increases by exactly one per command. A command whose
// CommandCompleted is missing at the end of the journal was never shown or
// acknowledged (durable_seq counts completed commands only) and is dropped
// at recovery.
//
// Snapshot = 64-byte header, then the body (src/journal/state_codec.ts).
//   header: magic "DXSNAP01" (8) | version u32 | fingerprint u32 | seq u64 |
//           body_len u64 | body crc32c u32 | reserved (24) | crc32c u32 of bytes 0..59
//
// Journal thread, piscina workers, start-up recovery and tools.

import { HEADER_SIZE } from '../layout/records.js';
import { crc32c } from './crc32c.js';

export const SEGMENT_MAGIC = 'DXJSEG01';
export const SNAPSHOT_MAGIC = 'DXSNAP01';
export const FORMAT_VERSION = 1;
export const FILE_HEADER_BYTES = 64;
export const FRAME_HEADER_BYTES = 8;
/** Largest event record the layout can produce, with room to spare: a bigger len is corruption. */
export const MAX_RECORD_BYTES = 4096;
/** Smallest record: the header every record starts with. */
export const MIN_RECORD_BYTES = HEADER_SIZE;

export const JOURNAL_DIR = 'journal';
export const SNAPSHOT_DIR = 'snapshots';

export function segmentName(firstSeq: number): string {
  return `seg-${String(firstSeq).padStart(20, '0')}.dxj`;
}

export function snapshotName(seq: number): string {
  return `snap-${String(seq).padStart(20, '0')}.dxs`;
}

/** The seq in a segment or snapshot file name, or -1 when the name is not one of ours. */
export function seqOfName(name: string, kind: 'segment' | 'snapshot'): number {
  const m = kind === 'segment' ? /^seg-(\d{20})\.dxj$/.exec(name) : /^snap-(\d{20})\.dxs$/.exec(name);
  return m ? Number(m[1]) : -1;
}

export interface FileHeader {
  magic: string;
  version: number;
  fingerprint: number;
  /** Segment: first_seq; snapshot: seq. */
  seq: number;
  /** Segment: created_ns (as a number of ms); snapshot: body_len. */
  extra: number;
  /** Snapshot only: crc32c of the body. */
  bodyCrc: number;
}

function writeU64(dv: DataView, at: number, v: number): void {
  dv.setUint32(at, v >>> 0, true);
  dv.setUint32(at + 4, Math.floor(v / 4294967296), true);
}

function readU64(dv: DataView, at: number): number {
  return dv.getUint32(at + 4, true) * 4294967296 + dv.getUint32(at, true);
}

export function encodeFileHeader(h: FileHeader): Uint8Array {
  const b = new Uint8Array(FILE_HEADER_BYTES);
  const dv = new DataView(b.buffer);
  for (let i = 0; i < 8; i++) b[i] = h.magic.charCodeAt(i);
  dv.setUint32(8, h.version, true);
  dv.setUint32(12, h.fingerprint >>> 0, true);
  writeU64(dv, 16, h.seq);
  writeU64(dv, 24, h.extra);
  dv.setUint32(32, h.bodyCrc >>> 0, true);
  dv.setUint32(60, crc32c(b, 0, 60), true);
  return b;
}

/** Decodes a header; throws a message (without the file name) on any fault. */
export function decodeFileHeader(b: Uint8Array, magic: string): FileHeader {
  if (b.length < FILE_HEADER_BYTES) throw new Error(`file shorter than its ${FILE_HEADER_BYTES}-byte header (${b.length} bytes)`);
  const dv = new DataView(b.buffer, b.byteOffset, FILE_HEADER_BYTES);
  const got = String.fromCharCode(...b.subarray(0, 8));
  if (got !== magic) throw new Error(`bad magic ${JSON.stringify(got)}, expected ${magic}`);
  if (dv.getUint32(60, true) !== crc32c(b, 0, 60)) throw new Error('header checksum mismatch');
  const version = dv.getUint32(8, true);
  if (version !== FORMAT_VERSION) throw new Error(`format version ${version}, this build reads ${FORMAT_VERSION}`);
  return {
    magic: got, version, fingerprint: dv.getUint32(12, true), seq: readU64(dv, 16), extra: readU64(dv, 24), bodyCrc: dv.getUint32(32, true),
  };
}
