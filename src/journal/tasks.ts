// Piscina tasks: the journal's CPU work that must stay off the engine and the
// I/O threads. Run in a piscina worker (src/main/journal_jobs.ts owns the pool).
//   plan:     checks every segment and snapshot at start-up (repairs a torn tail)
//   snapshot: brings the read model to a durable seq (the one this worker
//             kept from its previous snapshot, reading the journal from where
//             that one stopped; else the newest snapshot file and the journal
//             after it), writes it atomically, prunes

import { readlinkSync, rmSync } from 'node:fs';
import { setPriority } from 'node:os';
import { join } from 'node:path';
import type { EngineConfig } from '../engine/config.js';
import type { Views, ViewsConfig } from '../views/views.js';
import { JOURNAL_DIR, SNAPSHOT_DIR } from './format.js';
import { listSegments, planEnd, planRecovery, recoverViews, replayFrom, type JournalCursor, type RecoveryPlan } from './recovery.js';
import { listSnapshots, writeSnapshot } from './snapshot.js';
import { encodeViews } from './state_codec.js';
import { syncDir } from './writer.js';

export function plan(args: { dataDir: string }): RecoveryPlan {
  return planRecovery(args.dataDir, { repair: true });
}

export interface SnapshotArgs {
  dataDir: string;
  seq: number;
  engine: Partial<EngineConfig>;
  views: Partial<ViewsConfig>;
  fsync: boolean;
}

export interface SnapshotDone {
  seq: number;
  path: string;
  bytes: number;
  replayed: number;
  ms: number;
  prunedSnapshots: string[];
  prunedSegments: string[];
}

/** Snapshot files kept: the newest and this many older ones (recovery falls back to them). */
const KEEP_OLDER = 1;

/**
 * Lowers this thread's CPU priority to the least (nice 19), once: a snapshot
 * is seconds of CPU (replay, encode) on a machine whose cores the engine,
 * journal and gateway threads need for every answer, so it runs on what they
 * leave. Linux applies nice per thread (setpriority with a thread id); a
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
  // The kept read model continues from where its replay stopped, reading only
  // the journal after it, unless a snapshot file at the seq asked for, or
  // newer than the model, exists (then the file is the shorter way).
  const newest = listSnapshots(args.dataDir)[0]?.seq ?? 0;
  const k = kept;
  if (k !== null && k.dataDir === args.dataDir && k.views.asOfSeq <= args.seq && newest <= k.views.asOfSeq && newest < args.seq) {
    // Dropped while it replays: a replay that throws leaves no half-advanced model.
    kept = null;
    const views = k.views;
    const from = views.asOfSeq;
    const at = replayFrom(args.dataDir, k.at, args.seq, (m, o) => views.apply(m, o));
    return written(args, views, at, from, t0);
  }
  const p = planRecovery(args.dataDir, { repair: false, uptoSeq: args.seq });
  const base = p.snapshot?.seq ?? 0;
  if (base === args.seq && p.snapshot !== null) {
    return {
      seq: args.seq,
      path: p.snapshot.path,
      bytes: 0,
      replayed: 0,
      ms: performance.now() - t0,
      prunedSnapshots: [],
      prunedSegments: [],
    };
  }
  // Nothing kept, the kept model of another data directory, or one behind the newest file: the files.
  kept = null;
  const views = recoverViews(p, args.engine, args.views);
  return written(args, views, planEnd(p), base, t0);
}

/** Writes the snapshot of `views` (at args.seq, replayed from seq `from`), keeps the model at `at`, prunes. */
function written(args: SnapshotArgs, views: Views, at: JournalCursor | null, from: number, t0: number): SnapshotDone {
  if (views.asOfSeq !== args.seq) throw new Error(`snapshot: replay reached seq ${views.asOfSeq}, not ${args.seq}`);
  if (at !== null) kept = { dataDir: args.dataDir, views, at };
  const body = encodeViews(views);
  const path = writeSnapshot(args.dataDir, args.seq, body, args.fsync);
  const pruned = prune(args.dataDir, args.fsync);
  return { seq: args.seq, path, bytes: body.length, replayed: args.seq - from, ms: performance.now() - t0, ...pruned };
}

/**
 * The read model at the last snapshot this worker built, continued by the
 * next one: one read model per worker instead of a fresh one per snapshot.
 * A read model preallocates its tables from the configuration (hundreds of
 * MiB of address space); with one per snapshot, each new one touched pages
 * that the previous one had returned to malloc but malloc kept, and the 30-
 * minute soak saw the process's resident memory step up by 100-300 MiB at
 * every snapshot (225 MiB at the start, 800 MiB after three). With it, where
 * its replay stopped (segment and byte): the next snapshot reads the journal
 * from there, instead of reading and checking the whole journal and the last
 * snapshot file again to plan its replay.
 */
let kept: { dataDir: string; views: Views; at: JournalCursor } | null = null;

/**
 * Keeps the newest snapshot and KEEP_OLDER older ones; removes older
 * snapshots and every segment wholly before the oldest kept snapshot (the
 * last segment, the one being written, always stays).
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
  const oldestKept = snaps[Math.min(KEEP_OLDER, snaps.length - 1)]!.seq;
  const segs = listSegments(dataDir);
  for (let i = 0; i + 1 < segs.length; i++) {
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
