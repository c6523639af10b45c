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

/** True when the log still holds every entry after `seq` (nothing it needs was purged); an empty log holds nothing to miss. */
export async function logContinuesAfter(log: LogClient, seq: number): Promise<boolean> {
  const at = await log.locate(seq);
  const first = at.firstStored;
  if (first === null) return true;
  if (at.streamSeq < first.streamSeq) return false;
  return !(at.streamSeq === first.streamSeq && first.firstSeq > seq + 1);
}

/** Attempts and pause of newestUsableSnapshot (a listing read from a NATS replica that is behind catches up within seconds). */
const USABLE_ATTEMPTS = 10;
const USABLE_PAUSE_MS = 500;

/** Most names probed by snapshotAtLogStart. */
const PROBE_MAX = 4096;

/**
 * The snapshot the log's first stored entry was purged for, found by name:
 * the primary purges the log before the entry that holds the older kept
 * snapshot's seq + 1, so that snapshot's seq lies in [firstSeq - 1,
 * lastSeq - 1] of the first stored entry. Each name is read with the
 * stream's own message API (answered by its leader), not the bucket's
 * listing. Null when none of those names exists.
 */
export async function snapshotAtLogStart(log: LogClient): Promise<SnapshotObject | null> {
  const at = await log.locate(0);
  const first = at.firstStored;
  if (first === null) return null;
  const os = await log.snapshots();
  const to = Math.min(Math.max(first.firstSeq - 1, first.lastSeq - 1), first.firstSeq - 1 + PROBE_MAX);
  for (let seq = to; seq >= Math.max(0, first.firstSeq - 1); seq--) {
    const info = await os.info(snapshotName(seq));
    if (info !== null && !info.deleted) return { name: info.name, seq, size: info.size };
  }
  return null;
}

/**
 * The newest snapshot object that the log still continues, or null when the
 * bucket holds none. The primary purges the log only before the older of
 * the two snapshots it keeps, so the newest one always qualifies; but the
 * bucket's listing goes through a consumer, which nats-server 2.9.10 may
 * place on a replica that is behind (seen after NATS nodes were killed: the
 * listing stayed seconds old), and a node may list while a newer snapshot
 * is uploaded and the log pruned. So when the listed newest is one the log
 * no longer continues, the snapshot the log was last purged for is looked
 * up by name (snapshotAtLogStart); failing that, the listing is read again
 * after a pause, a few times, before this gives up with an error that says
 * so. `warn` reports each stale listing.
 */
export async function newestUsableSnapshot(
  log: LogClient, warn: (fields: Record<string, unknown>) => void,
): Promise<SnapshotObject | null> {
  for (let attempt = 1; ; attempt++) {
    const newest = (await listSnapshotObjects(log))[0];
    if (newest === undefined) return null;
    if (await logContinuesAfter(log, newest.seq)) return newest;
    warn({ event: 'replication_snapshot_listing_stale', snapshot_seq: newest.seq, attempt });
    const byName = await snapshotAtLogStart(log);
    if (byName !== null && (await logContinuesAfter(log, byName.seq))) return byName;
    if (attempt >= USABLE_ATTEMPTS) {
      throw new Error(
        `the newest snapshot object of bucket ${log.cfg.bucket} is at seq ${newest.seq}, and the log ${log.cfg.stream} no longer ` +
          `holds seq ${newest.seq + 1} (listed ${attempt} times, ${USABLE_PAUSE_MS} ms apart)`,
      );
    }
    await new Promise((r) => setTimeout(r, USABLE_PAUSE_MS));
  }
}

export async function uploadSnapshot(log: LogClient, path: string, seq: number): Promise<SnapshotObject> {
  const os = await log.snapshots();
  const bytes = await readFile(path);
  const info = await os.putBlob({ name: snapshotName(seq) }, bytes);
  return { name: info.name, seq, size: info.size };
}

/** A read of a snapshot object that receives nothing for this long is abandoned and made again. */
const OBJECT_STALL_MS = 10_000;
const OBJECT_READS = 3;

/**
 * The bytes of a snapshot object (its digest checked). Each read goes through
 * an ephemeral consumer, which nats-server 2.9.10 may place on a replica of
 * the bucket's stream that is not current (seen after NATS nodes were
 * restarted): that consumer delivers nothing, and the read would wait for
 * ever. A read that receives nothing for OBJECT_STALL_MS is cancelled (its
 * consumer stopped) and made again with a new consumer, up to OBJECT_READS
 * times; then it fails (the caller stops, as on any fault).
 */
export async function readSnapshotObject(log: LogClient, name: string): Promise<Uint8Array> {
  const os = await log.snapshots();
  for (let attempt = 1; ; attempt++) {
    const r = await os.get(name);
    if (r === null) throw new Error(`snapshot object ${name} vanished from bucket ${log.cfg.bucket}`);
    r.error.catch(() => null); // awaited below when the read completes
    const reader = r.data.getReader();
    const parts: Uint8Array[] = [];
    let stalled = false;
    for (;;) {
      let timer: NodeJS.Timeout | undefined;
      const stall = new Promise<null>((res) => { timer = setTimeout(() => res(null), OBJECT_STALL_MS); });
      const got = await Promise.race([reader.read(), stall]).finally(() => clearTimeout(timer));
      if (got === null) {
        stalled = true;
        // The stalled read is dropped either way: it is tried again below, or the stall is the error.
        await reader.cancel().catch(() => undefined);
        break;
      }
      if (got.done) break;
      parts.push(got.value);
    }
    if (!stalled) {
      const e = await r.error;
      if (e) throw e;
      return Buffer.concat(parts);
    }
    if (attempt >= OBJECT_READS) {
      throw new Error(
        `snapshot object ${name}: nothing received for ${OBJECT_STALL_MS} ms, ${attempt} times (a replica of bucket ${log.cfg.bucket} ` +
          `that is not current?)`,
      );
    }
  }
}

/**
 * Writes the object into <data dir>/snapshots/ (temp file, fsync, rename) and
 * checks it as recovery does; returns its path.
 */
export async function downloadSnapshot(log: LogClient, o: SnapshotObject, dataDir: string): Promise<string> {
  const bytes = await readSnapshotObject(log, o.name);
  const dir = join(dataDir, SNAPSHOT_DIR);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, snapshotName(o.seq));
  const tmp = `${path}.tmp-${process.pid}-${Date.now()}`;
  const fd = openSync(tmp, 'wx', 0o600);
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
