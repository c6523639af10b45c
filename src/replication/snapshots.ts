// Snapshots in the JetStream Object Store bucket: the primary uploads each
// local snapshot file as it is (header and body, src/journal/format.ts) under
// its own file name, keeps the newest two and purges the log before the
// older one (as the local journal is pruned), so a read replica, or a node
// whose journal ends before what the log still holds, boots from the newest
// snapshot plus the log after it. Main thread (async I/O).

import { readFile } from 'node:fs/promises';
import { mkdirSync, writeFileSync, renameSync, fdatasyncSync, openSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { SNAPSHOT_DIR, seqOfName, snapshotName } from '../journal/format.js';
import { readSnapshot } from '../journal/snapshot.js';
import { syncDir } from '../journal/writer.js';
import type { LogClient } from './log_client.js';

export interface SnapshotObject {
  name: string;
  seq: number;
  size: number;
}

/** Snapshot objects of the bucket, newest first. */
export async function listSnapshotObjects(log: LogClient): Promise<SnapshotObject[]> {
  const os = await log.snapshots();
  const out: SnapshotObject[] = [];
  for (const o of await os.list()) {
    if (o.deleted) continue;
    const seq = seqOfName(o.name, 'snapshot');
    if (seq >= 0) out.push({ name: o.name, seq, size: o.size });
  }
  return out.sort((a, b) => b.seq - a.seq);
}

export async function uploadSnapshot(log: LogClient, path: string, seq: number): Promise<SnapshotObject> {
  const os = await log.snapshots();
  const bytes = await readFile(path);
  const info = await os.putBlob({ name: snapshotName(seq) }, bytes);
  return { name: info.name, seq, size: info.size };
}

/**
 * Writes the object into <data dir>/snapshots/ (temp file, fsync, rename) and
 * checks it as recovery does; returns its path.
 */
export async function downloadSnapshot(log: LogClient, o: SnapshotObject, dataDir: string): Promise<string> {
  const os = await log.snapshots();
  const bytes = await os.getBlob(o.name);
  if (bytes === null) throw new Error(`snapshot object ${o.name} vanished from bucket ${log.cfg.bucket}`);
  const dir = join(dataDir, SNAPSHOT_DIR);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, snapshotName(o.seq));
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeFileSync(fd, bytes);
    fdatasyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
  syncDir(dir);
  const r = readSnapshot(path);
  if (r.seq !== o.seq) throw new Error(`snapshot object ${o.name}: its header says seq ${r.seq}`);
  return path;
}

/**
 * Keeps the newest `keep` snapshot objects and purges the log before the
 * first entry the oldest kept one needs. Returns what it removed.
 */
export async function pruneSnapshotsAndLog(log: LogClient, keep = 2): Promise<{ deleted: string[]; purged: number; oldest_kept: number }> {
  const list = await listSnapshotObjects(log);
  const os = await log.snapshots();
  const deleted: string[] = [];
  for (const o of list.slice(keep)) {
    await os.delete(o.name);
    deleted.push(o.name);
  }
  const kept = list.slice(0, keep);
  if (kept.length < keep) return { deleted, purged: 0, oldest_kept: kept[kept.length - 1]?.seq ?? 0 };
  const oldest = kept[kept.length - 1]!.seq;
  const at = await log.locate(oldest);
  // The last entry always stays (it carries the epoch in force and the stream's end).
  const before = Math.min(at.streamSeq, at.lastStreamSeq);
  const purged = at.firstStored !== null && before > at.firstStored.streamSeq ? await log.purgeBefore(before) : 0;
  return { deleted, purged, oldest_kept: oldest };
}
