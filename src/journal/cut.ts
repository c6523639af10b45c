// Cutting the journal after a seq, and the one reason a single node does it:
// the synced marker a journal failure leaves.
//
// truncateJournalAfter removes every record after a command: an HA node's
// unacknowledged tail (src/replication/local_state.ts), or the unsynced tail
// below.
//
// The synced marker, <data dir>/journal/synced.json {"synced_seq": N, ...}.
// After a failed write or fdatasync, records past the last successful
// fdatasync may still be readable from the page cache without being on disk
// (Linux may mark the pages of a failed fdatasync clean, so a later sync
// writes nothing). A start would read them, sync the segment and count them
// durable; a power loss later could take them out of the middle of the
// journal, under commands acknowledged after the restart. So the journal
// thread, as it fails on storage, writes the marker with its last synced seq
// (best effort: on a failing disk the marker may fail too, and the start then
// keeps what the page cache holds, as before; durability none writes none:
// nothing is synced there). The next start checks that the journal still
// holds every record through that seq (else it refuses, changing nothing),
// cuts every record after it, a damaged one too, and removes the marker.
// What it cuts was never acknowledged, shown or pushed: durable_seq never
// passed the synced seq. Journal thread (write) and main thread at start-up
// (cut); sync I/O.

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  ftruncateSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { Header } from '../layout/records.js';
import { memOf } from '../lib/mem.js';
import { FILE_HEADER_BYTES, FRAME_HEADER_BYTES, JOURNAL_DIR, MAX_RECORD_BYTES, SNAPSHOT_DIR } from './format.js';
import { listSegments, planRecovery } from './recovery.js';
import { JournalFault, readWhole } from './segment.js';
import { listSnapshots } from './snapshot.js';
import { syncDir } from './writer.js';

export interface JournalCut {
  segments_removed: string[];
  truncated: { path: string; from: number; bytes: number } | null;
  snapshots_removed: string[];
}

/**
 * Removes every journal record after command `keepSeq`: later segments are
 * deleted, the segment holding keepSeq is cut just past its completion
 * record; snapshots past keepSeq are removed too. Returns what was cut.
 * A damaged tail (torn frame) is left to recovery's own repair.
 */
export function truncateJournalAfter(dataDir: string, keepSeq: number, cutDamagedTail = false): JournalCut {
  const out: JournalCut = { segments_removed: [], truncated: null, snapshots_removed: [] };
  const segs = listSegments(dataDir);
  for (let i = segs.length - 1; i >= 0; i--) {
    const s = segs[i]!;
    if (s.firstSeq > keepSeq) {
      rmSync(s.path);
      out.segments_removed.push(s.path);
      continue;
    }
    out.truncated = cutSegment(s.path, keepSeq, cutDamagedTail);
    break;
  }
  if (out.segments_removed.length > 0) syncDir(join(dataDir, JOURNAL_DIR));
  for (const s of listSnapshots(dataDir)) {
    if (s.seq <= keepSeq) continue;
    rmSync(s.path);
    out.snapshots_removed.push(s.path);
  }
  if (out.snapshots_removed.length > 0) syncDir(join(dataDir, SNAPSHOT_DIR));
  return out;
}

/**
 * Cuts one segment at its first frame past keepSeq (synced); null when it has none before its end, or before a bad
 * frame. With cutDamagedTail (the synced marker's cut, after checkSyncedMarker found every frame through keepSeq
 * whole), a bad frame right after keepSeq's records is the unsynced tail's and is cut with it.
 */
function cutSegment(path: string, keepSeq: number, cutDamagedTail: boolean): JournalCut['truncated'] {
  const bytes = readWhole(path);
  const m = memOf(bytes.buffer, bytes.byteOffset, (bytes.byteLength + 7) & ~7);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = FILE_HEADER_BYTES;
  let lastSeen = -1;
  while (at < bytes.length) {
    const len = at + FRAME_HEADER_BYTES <= bytes.length ? dv.getUint32(at, true) : 0;
    const bad = len < 32 || len > MAX_RECORD_BYTES || len % 8 !== 0 || at + FRAME_HEADER_BYTES + len > bytes.length;
    if (bad && !(cutDamagedTail && lastSeen === keepSeq)) return null;
    if (bad || Header.seq(m, at + FRAME_HEADER_BYTES) > keepSeq) {
      const fd = openSync(path, 'r+');
      try {
        ftruncateSync(fd, at);
        fdatasyncSync(fd);
      } finally {
        closeSync(fd);
      }
      return { path, from: at, bytes: bytes.length - at };
    }
    lastSeen = Header.seq(m, at + FRAME_HEADER_BYTES);
    at += FRAME_HEADER_BYTES + len;
  }
  return null;
}

/** The marker's name in the journal directory. */
export const SYNCED_MARKER = 'synced.json';

function markerPath(dataDir: string): string {
  return join(dataDir, JOURNAL_DIR, SYNCED_MARKER);
}

/**
 * The journal thread, failing on storage: records `syncedSeq` (its last
 * fdatasync's) for the next start, atomically (temp file, fdatasync, rename,
 * directory sync). Best effort: null when written, else why not (the disk
 * refused this too; no temp file is left where it can be removed).
 */
export function writeSyncedMarker(dataDir: string, syncedSeq: number, why: string): string | null {
  const p = markerPath(dataDir);
  const tmp = `${p}.tmp`;
  try {
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeFileSync(fd, `${JSON.stringify({ synced_seq: syncedSeq, why, at: new Date().toISOString() })}\n`);
      fdatasyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, p);
    syncDir(join(dataDir, JOURNAL_DIR));
    return null;
  } catch (e) {
    rmSync(tmp, { force: true });
    return (e as Error).message;
  }
}

/** The marker's synced seq, or null when there is none. A marker that does not read as one is a JournalFault. */
export function readSyncedMarker(dataDir: string): number | null {
  const p = markerPath(dataDir);
  if (!existsSync(p)) return null;
  let seq: unknown;
  try {
    seq = (JSON.parse(readFileSync(p, 'utf8')) as { synced_seq?: unknown }).synced_seq;
  } catch (e) {
    throw new JournalFault(p, 0, `the synced marker does not parse: ${(e as Error).message}`);
  }
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0)
    throw new JournalFault(p, 0, `the synced marker's synced_seq ${JSON.stringify(seq)} is not a seq`);
  return seq;
}

/**
 * Every record through the marker's seq was fdatasynced and may have been
 * acknowledged: the journal (from a snapshot at or before it) must still
 * hold them whole, or a JournalFault. Read-only. Without it, the cut would
 * make a lost or damaged synced end look like a torn tail, which the
 * repairing plan truncates, and the start would go on short.
 */
export function checkSyncedMarker(dataDir: string, seq: number): void {
  try {
    planRecovery(dataDir, { repair: false, uptoSeq: seq });
  } catch (e) {
    throw new JournalFault(
      markerPath(dataDir),
      0,
      `the synced marker says seq ${seq} was synced, but the journal does not hold every record up to it ` +
        `(${(e as Error).message}): acknowledged commands may be lost; not cutting`,
    );
  }
}

/**
 * Start-up, before recovery plans: when a journal failure left a synced
 * marker, checks that the journal holds every record through its seq
 * (checkSyncedMarker: else a JournalFault, nothing changed, the marker
 * kept, so every start refuses until an operator looks), cuts every record
 * after it, damaged or not, and removes the marker (in that order: a start
 * that dies in between cuts again). Returns the cut, or null when there was
 * no marker. A marker's leftover temp file goes too.
 */
export function cutToSyncedMarker(dataDir: string): (JournalCut & { synced_seq: number }) | null {
  rmSync(`${markerPath(dataDir)}.tmp`, { force: true });
  const seq = readSyncedMarker(dataDir);
  if (seq === null) return null;
  checkSyncedMarker(dataDir, seq);
  const cut = truncateJournalAfter(dataDir, seq, true);
  rmSync(markerPath(dataDir));
  syncDir(join(dataDir, JOURNAL_DIR));
  return { synced_seq: seq, ...cut };
}
