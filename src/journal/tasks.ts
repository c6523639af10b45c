// Piscina tasks: the journal's CPU work that must stay off the engine and the
// I/O threads. Run in a piscina worker (src/main/journal_jobs.ts owns the pool).
//   plan:     checks every segment and snapshot at start-up (repairs a torn tail)
//   snapshot: serializes a read model captured on the main thread (the control
//             plane's, at a durable seq: state_codec.ts captureViews), writes
//             it atomically, prunes

import { readlinkSync, rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import { JOURNAL_DIR, SNAPSHOT_DIR } from './format.js';
import { listSegments, planRecovery, type RecoveryPlan } from './recovery.js';
import { listSnapshots, writeSnapshot } from './snapshot.js';
import { serializeCaptured } from './state_codec.js';
import { syncDir } from './writer.js';

export function plan(args: { dataDir: string }): RecoveryPlan {
  return planRecovery(args.dataDir, { repair: true });
}

export interface SnapshotArgs {
  dataDir: string;
  /** The seq the captured read model is at (durable). */
  seq: number;
  /** CapturedViews.tree of that read model (its buffers transferred, not copied). */
  tree: unknown;
  fsync: boolean;
}

export interface SnapshotDone {
  seq: number;
  path: string;
  bytes: number;
  /** This task's time: serialize, checksum, write, sync, prune. */
  ms: number;
  prunedSnapshots: string[];
  prunedSegments: string[];
}

/** Snapshot files kept: the newest and this many older ones (recovery falls back to them). */
const KEEP_OLDER = 1;

/**
 * Lowers this thread's CPU priority to the least (nice 19), once: a snapshot
 * is a good part of a second of CPU (serialize, checksum, write) on a
 * machine whose cores the engine, journal and gateway threads need for
 * every answer, so it runs on what they leave. Linux applies nice per thread (setpriority with a thread id); a
 * thread may always lower its own priority. Elsewhere, or if refused, it runs
 * at normal priority.
 */
function yieldCpu(): void {
  if (niced || process.platform !== 'linux') return;
  niced = true;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (tid > 0) setPriority(tid, 19);
  } catch (err) {
    // A system call refused: setPriority (ERR_SYSTEM_ERROR: EACCES, EPERM,
    // ESRCH) or readlink (ENOENT, no /proc): normal priority. Anything else is a bug.
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ERR_SYSTEM_ERROR' && code !== 'ENOENT' && code !== 'EACCES') throw err;
  }
}
let niced = false;

export function snapshot(args: SnapshotArgs): SnapshotDone {
  yieldCpu();
  const t0 = performance.now();
  // A file at this seq already (asked twice with nothing sequenced between) is replaced: the rename is atomic.
  const body = serializeCaptured(args.tree);
  const path = writeSnapshot(args.dataDir, args.seq, body, args.fsync);
  const pruned = prune(args.dataDir, args.fsync);
  return { seq: args.seq, path, bytes: body.length, ms: performance.now() - t0, ...pruned };
}

/**
 * Keeps the newest snapshot and KEEP_OLDER older ones; removes older
 * snapshots and every segment wholly before the oldest kept snapshot (the
 * last segment, the one being written, always stays). While fewer than
 * 1 + KEEP_OLDER snapshots exist no segment goes: with one snapshot only,
 * the journal is what recovery falls back to if that snapshot is damaged or
 * lost.
 */
export function prune(dataDir: string, fsync: boolean): { prunedSnapshots: string[]; prunedSegments: string[] } {
  const snaps = listSnapshots(dataDir);
  const prunedSnapshots: string[] = [];
  const prunedSegments: string[] = [];
  if (snaps.length === 0) return { prunedSnapshots, prunedSegments };
  for (const s of snaps.slice(1 + KEEP_OLDER)) {
    rmSync(s.path, { force: true });
    prunedSnapshots.push(s.path);
  }
  const oldestKept = snaps.length > KEEP_OLDER ? snaps[KEEP_OLDER]!.seq : 0;
  const segs = listSegments(dataDir);
  for (let i = 0; i + 1 < segs.length && oldestKept > 0; i++) {
    // Segment i ends at segs[i + 1].firstSeq - 1.
    if (segs[i + 1]!.firstSeq - 1 > oldestKept) break;
    rmSync(segs[i]!.path, { force: true });
    prunedSegments.push(segs[i]!.path);
  }
  if (fsync && (prunedSegments.length > 0 || prunedSnapshots.length > 0)) {
    syncDir(join(dataDir, JOURNAL_DIR));
    if (prunedSnapshots.length > 0) syncDir(join(dataDir, SNAPSHOT_DIR));
  }
  return { prunedSnapshots, prunedSegments };
}
