// Local replication state of an HA node's data directory, and the two repairs
// start-up makes to it before recovery:
//   <data dir>/replication.json   {"primary_epoch": N | null}
// written (fsynced) when the node becomes primary of epoch N, before it
// publishes anything, and reset to null once the journal is known to be a
// prefix of the log. A node that was primary may hold records that never
// reached the log (its unacknowledged tail): truncateJournalAfter cuts them.
// A node whose journal ends before the oldest record the log still holds
// (the log was purged after a snapshot) moves its journal aside and starts
// from the snapshot bucket instead. Main thread, start-up only (sync I/O).

import {
  closeSync,
  existsSync,
  fdatasyncSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { FILE_HEADER_BYTES, FRAME_HEADER_BYTES, JOURNAL_DIR, MAX_RECORD_BYTES, SNAPSHOT_DIR } from '../journal/format.js';
import { listSegments } from '../journal/recovery.js';
import { readWhole } from '../journal/segment.js';
import { listSnapshots } from '../journal/snapshot.js';
import { syncDir } from '../journal/writer.js';
import { Header } from '../layout/records.js';
import { memOf } from '../lib/mem.js';

const FILE = 'replication.json';

export interface NodeState {
  /** The epoch this node was last primary of, until its journal was checked against the log. */
  primary_epoch: number | null;
}

export function readNodeState(dataDir: string): NodeState {
  const p = join(dataDir, FILE);
  if (!existsSync(p)) return { primary_epoch: null };
  const v = JSON.parse(readFileSync(p, 'utf8')) as Partial<NodeState>;
  const e = v.primary_epoch;
  if (e !== null && (typeof e !== 'number' || !Number.isInteger(e) || e < 1))
    throw new Error(`${p}: primary_epoch ${JSON.stringify(e)} is not an epoch`);
  return { primary_epoch: e ?? null };
}

/** Atomically replaces the file (temp, fsync, rename, fsync the directory). */
export function writeNodeState(dataDir: string, s: NodeState): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const p = join(dataDir, FILE);
  const tmp = `${p}.tmp`;
  const fd = openSync(tmp, 'w', 0o600);
  try {
    writeFileSync(fd, `${JSON.stringify(s)}\n`);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, p);
  syncDir(dataDir);
}

/**
 * Removes every journal record after command `keepSeq`: later segments are
 * deleted, the segment holding keepSeq is cut just past its completion
 * record; snapshots past keepSeq are removed too. Returns what was cut.
 * A damaged tail (torn frame) is left to recovery's own repair.
 */
export function truncateJournalAfter(
  dataDir: string,
  keepSeq: number,
): { segments_removed: string[]; truncated: { path: string; from: number; bytes: number } | null; snapshots_removed: string[] } {
  const out = {
    segments_removed: [] as string[],
    truncated: null as { path: string; from: number; bytes: number } | null,
    snapshots_removed: [] as string[],
  };
  const segs = listSegments(dataDir);
  for (let i = segs.length - 1; i >= 0; i--) {
    const s = segs[i]!;
    if (s.firstSeq > keepSeq) {
      rmSync(s.path);
      out.segments_removed.push(s.path);
      continue;
    }
    const bytes = readWhole(s.path);
    const m = memOf(bytes.buffer, bytes.byteOffset, (bytes.byteLength + 7) & ~7);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let at = FILE_HEADER_BYTES;
    while (at + FRAME_HEADER_BYTES <= bytes.length) {
      const len = dv.getUint32(at, true);
      if (len < 32 || len > MAX_RECORD_BYTES || len % 8 !== 0 || at + FRAME_HEADER_BYTES + len > bytes.length) break;
      if (Header.seq(m, at + FRAME_HEADER_BYTES) > keepSeq) {
        const fd = openSync(s.path, 'r+');
        try {
          ftruncateSync(fd, at);
          fdatasyncSync(fd);
        } finally {
          closeSync(fd);
        }
        out.truncated = { path: s.path, from: at, bytes: bytes.length - at };
        break;
      }
      at += FRAME_HEADER_BYTES + len;
    }
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

/** Moves the journal and the snapshots to <data dir>/replaced-<ms>/ (kept for the operator, never read again). */
export function moveJournalAside(dataDir: string): string | null {
  const j = join(dataDir, JOURNAL_DIR);
  const s = join(dataDir, SNAPSHOT_DIR);
  if (!existsSync(j) && !existsSync(s)) return null;
  const to = join(dataDir, `replaced-${Date.now()}`);
  mkdirSync(to, { mode: 0o700 });
  if (existsSync(j)) renameSync(j, join(to, JOURNAL_DIR));
  if (existsSync(s)) renameSync(s, join(to, SNAPSHOT_DIR));
  syncDir(dataDir);
  return to;
}

/** Removes a directory tree (the snapshot cache of a read replica). */
export function clearDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
