// Local replication state of an HA node's data directory, and the two repairs
// start-up makes to it before recovery:
//   <data dir>/replication.json   {"primary_epoch": N | null}
// written (fsynced) when the node becomes primary of epoch N, before it
// publishes anything, and reset to null once the journal is known to be a
// prefix of the log. A node that was primary may hold records that never
// reached the log (its unacknowledged tail): truncateJournalAfter
// (src/journal/cut.ts) cuts them.
// A node whose journal ends before the oldest record the log still holds
// (the log was purged after a snapshot) moves its journal aside and starts
// from the snapshot bucket instead. Main thread, start-up only (sync I/O).

import { closeSync, existsSync, fdatasyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JOURNAL_DIR, SNAPSHOT_DIR } from '../journal/format.js';
import { makeDirDurable, syncDir } from '../journal/writer.js';

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
  makeDirDurable(dataDir, true);
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
