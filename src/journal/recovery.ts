// Recovery: finds what to start from (the newest valid snapshot) and which
// journal records to replay after it, checking every segment on the way.
// Start-up runs planRecovery once (with repair: a torn tail is truncated and
// reported); the engine thread, each gateway thread and the control plane
// then load the snapshot and replay the same records through evolve (a read
// model's apply() is evolve plus its own indexes) before any listener opens.

import { ftruncateSync, closeSync, openSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { engineConfig, type EngineConfig } from '../engine/config.js';
import { ORACLE_SOURCES } from '../engine/markets.js';
import type { ExchangeState } from '../engine/state.js';
import { Header } from '../layout/records.js';
import { assert, fail } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { addHiLo } from '../lib/u64.js';
import { Views, type ViewsConfig } from '../views/views.js';
import { FS_IO, type JournalIo } from './faults.js';
import { FILE_HEADER_BYTES, JOURNAL_DIR } from './format.js';
import { forEachRecord, JournalFault, listBySeq, readWhole, scanSegment, type SegmentScan, type TornTail } from './segment.js';
import { listSnapshots, readSnapshot, removeSnapshotTemps, type SnapshotFile } from './snapshot.js';
import { decodeViews } from './state_codec.js';
import { syncDir } from './writer.js';

export interface PlannedSegment {
  path: string;
  firstSeq: number;
  lastSeq: number;
  /** Replay stops here (past it: a torn tail, or records written after the plan). */
  goodEnd: number;
}

export interface RecoveryPlan {
  dataDir: string;
  snapshot: SnapshotFile | null;
  /** Newer snapshots that failed their checks, with why (recovery fell back past them). */
  rejectedSnapshots: { path: string; reason: string }[];
  /** Segments holding records after the snapshot, in seq order. */
  segments: PlannedSegment[];
  /** Seq of the last complete command: the engine continues at lastSeq + 1. */
  lastSeq: number;
  /** Torn tails found (and, with repair, truncated). */
  tails: (TornTail & { path: string; bytes: number })[];
  /** Segments removed by repair because nothing complete was left in them. */
  removed: string[];
}

export interface SegmentFile {
  path: string;
  firstSeq: number;
}

/** The segment files by first seq, oldest first (by name; their contents are checked when planned). */
export function listSegments(dataDir: string): SegmentFile[] {
  return listBySeq(dataDir, JOURNAL_DIR, 'segment').map(({ path, seq }) => ({ path, firstSeq: seq }));
}

export interface PlanOptions {
  /**
   * Start-up only: truncate a torn tail, remove an emptied last segment, and fdatasync the last segment before any of it
   * counts as durable.
   */
  repair: boolean;
  /** The fdatasync the repair uses (tests substitute a failing one, faults.ts); node:fs by default. */
  io?: Pick<JournalIo, 'fdatasync'>;
  /** Plan for a snapshot at this seq (the snapshot worker): no snapshot newer than it, records up to it. */
  uptoSeq?: number;
}

/**
 * A last segment shorter than its header was created and then the process
 * died before the header was written (the writer writes it right after
 * creating the file, before any record): it holds nothing, so it is a torn
 * creation, not damage. Start-up removes it; `tools/journal verify` calls it
 * repairable. Seen with SIGKILL during a start (tools/crash_test.ts).
 */
export function isTornCreation(bytes: Uint8Array, isLast: boolean): boolean {
  return isLast && bytes.length < FILE_HEADER_BYTES;
}

/**
 * Checks the journal and picks the snapshot to start from. Throws a
 * JournalFault (file and byte offset) on a checksum failure followed by
 * data, a seq gap, a missing segment or a fingerprint mismatch.
 */
/**
 * The last segment as the start keeps it: cut at `cutAt` (a torn tail; -1: none), then fdatasynced. The last run may have
 * died between a group's write and its fdatasync (or that fdatasync failed): what it wrote is readable from the page
 * cache but maybe not on disk, and it must be before any of it is replayed and counted durable (durable_seq = the plan's
 * last seq).
 */
function keepLast(path: string, cutAt: number, io: Pick<JournalIo, 'fdatasync'>): void {
  const fd = openSync(path, 'r+');
  try {
    if (cutAt >= 0) ftruncateSync(fd, cutAt);
    io.fdatasync(fd);
  } finally {
    closeSync(fd);
  }
}

/** A torn creation named past the segment before it: the segments between are missing, not a creation cut short. */
export function missingBefore(firstSeq: number, expect: number): string {
  return `a segment created at seq ${firstSeq} but the one before it ends at seq ${expect - 1} (a missing segment)`;
}

/** A damaged tail in a command the snapshot holds: it was synced (the snapshot is of a durable seq), so not a torn write. */
function syncedTail(scan: SegmentScan, base: number): string {
  return `damaged command ${scan.lastSeq + 1}, at or before the snapshot's seq ${base}: it was synced (${scan.tail!.detail})`;
}

export function planRecovery(dataDir: string, opts: PlanOptions): RecoveryPlan {
  const upto = opts.uptoSeq ?? Number.MAX_SAFE_INTEGER;
  if (opts.repair) removeSnapshotTemps(dataDir);
  const files = listSegments(dataDir);
  const rejected: { path: string; reason: string }[] = [];
  // The newest snapshot that passes its checks (at or before upto).
  let snapshot: SnapshotFile | null = null;
  for (const s of listSnapshots(dataDir)) {
    if (s.seq > upto) continue;
    try {
      const r = readSnapshot(s.path);
      if (r.seq !== s.seq) throw new Error(`snapshot ${s.path}: header seq ${r.seq} differs from its name`);
      snapshot = s;
      break;
    } catch (e) {
      rejected.push({ path: s.path, reason: (e as Error).message });
    }
  }
  const base = snapshot?.seq ?? 0;
  // Segments wholly at or before the snapshot are not needed (and may have been pruned).
  let first = 0;
  while (first + 1 < files.length && files[first + 1]!.firstSeq <= base + 1) first++;
  const segments: PlannedSegment[] = [];
  const tails: RecoveryPlan['tails'] = [];
  const removed: string[] = [];
  let expect: number | null = null;
  let lastSeq = base;
  for (let i = first; i < files.length; i++) {
    const f = files[i]!;
    if (i === first && f.firstSeq > base + 1) {
      throw new JournalFault(
        f.path,
        0,
        `the journal starts at seq ${f.firstSeq} but ` +
          `${snapshot ? `the snapshot ${snapshot.path} holds seq ${base}` : 'there is no snapshot'}: records ` +
          `${base + 1}..${f.firstSeq - 1} are missing (a missing segment)`,
      );
    }
    const bytes = readWhole(f.path);
    const isLast = i === files.length - 1;
    if (isTornCreation(bytes, isLast)) {
      if (expect !== null && f.firstSeq !== expect) throw new JournalFault(f.path, 0, missingBefore(f.firstSeq, expect));
      if (opts.repair) {
        rmSync(f.path);
        syncDir(join(dataDir, JOURNAL_DIR));
        removed.push(f.path);
      }
      break;
    }
    const scan = scanSegment(f.path, bytes, expect, upto); // a plan up to a seq reads no frame past that command's completion
    if (scan.tail !== null && !isLast && opts.uptoSeq === undefined) {
      throw new JournalFault(f.path, scan.tail.offset, `damaged end of a segment that is not the last (${scan.tail.detail})`);
    }
    if (scan.tail !== null && isLast && opts.uptoSeq === undefined) {
      if (scan.lastSeq < base) throw new JournalFault(f.path, scan.tail.offset, syncedTail(scan, base));
      tails.push({ ...scan.tail, path: f.path, bytes: bytes.length - scan.goodEnd });
    }
    if (isLast && opts.repair && opts.uptoSeq === undefined && scan.goodEnd > FILE_HEADER_BYTES) {
      keepLast(f.path, scan.tail === null ? -1 : scan.goodEnd, opts.io ?? FS_IO);
    }
    if (isLast && opts.repair && scan.goodEnd === FILE_HEADER_BYTES) {
      // Nothing complete in it: the writer starts this seq afresh.
      rmSync(f.path);
      syncDir(join(dataDir, JOURNAL_DIR));
      removed.push(f.path);
      break;
    }
    if (scan.lastSeq > lastSeq) lastSeq = scan.lastSeq;
    if (scan.lastSeq >= scan.firstSeq && scan.lastSeq > base)
      segments.push({ path: f.path, firstSeq: scan.firstSeq, lastSeq: scan.lastSeq, goodEnd: scan.goodEnd });
    expect = scan.lastSeq + 1;
    if (scan.lastSeq >= upto) break;
  }
  if (opts.uptoSeq !== undefined && lastSeq < opts.uptoSeq) {
    throw new Error(`journal: records up to seq ${opts.uptoSeq} were asked for but the journal ends at ${lastSeq}`);
  }
  return { dataDir, snapshot, rejectedSnapshots: rejected, segments, lastSeq: Math.min(lastSeq, upto), tails, removed };
}

/** Table sizes: a snapshot's tables keep theirs (they grow by themselves). */
const CAPACITY_KEYS = ['order_capacity', 'account_capacity', 'market_capacity'] as const;

/**
 * The read model at the plan's snapshot (or empty). A snapshot carries the
 * engine configuration it was taken with; the tunables given now (caps,
 * oracle and dispute settings; only the keys given) replace it, so that a
 * setting changed at a restart applies from the replay on, as it would
 * without a snapshot. Table sizes stay the snapshot's.
 */
export function loadBase(plan: RecoveryPlan, engine: Partial<EngineConfig>, views: Partial<ViewsConfig> = {}): Views {
  if (plan.snapshot === null) return new Views(engine, views);
  const v = decodeViews(readSnapshot(plan.snapshot.path).body);
  const kept = v.state.config;
  const now = engineConfig({ ...kept, ...engine });
  for (const k of CAPACITY_KEYS) now[k] = kept[k];
  (v.state as { config: EngineConfig }).config = now;
  // A changed staleness or dispute window applies to the timers the snapshot holds too: evolve keyed them with the old one
  // (last tick + staleness, proposed_ts + window), a replay from empty keys them with the new one.
  if (now.oracle_staleness_ms !== kept.oracle_staleness_ms || now.dispute_window_ms !== kept.dispute_window_ms) rekeyTimers(v.state, now);
  // A lower deposit_ref_cap applies at once: every account forgets its oldest refs past it (as a replay from empty would have).
  if (now.deposit_ref_cap < kept.deposit_ref_cap) {
    const acc = v.state.accounts;
    for (let a = 1; a <= acc.count; a++) acc.forgetOldestDeposits(a, now.deposit_ref_cap);
  }
  return v;
}

/** Re-keys the scheduled oracle expiries and dispute deadlines with the configuration's staleness and dispute window. */
function rekeyTimers(s: ExchangeState, c: EngineConfig): void {
  const mk = s.markets;
  const at = new Uint32Array(2);
  for (let src = 0; src < ORACLE_SOURCES; src++) {
    if (!s.oracleExpiries.has(src)) continue;
    addHiLo(mk.srcTsHi[src]!, mk.srcTsLo[src]!, c.oracle_staleness_ms * 1_000_000, at);
    s.oracleExpiries.set(src, at[0]!, at[1]!);
  }
  for (let m = 1; m <= mk.count; m++) {
    if (!s.disputeDeadlines.has(m)) continue;
    const r = mk.round[m]!;
    addHiLo(mk.rProposedHi[r]!, mk.rProposedLo[r]!, c.dispute_window_ms * 1_000_000, at);
    s.disputeDeadlines.set(m, at[0]!, at[1]!);
  }
}

/**
 * Calls apply(m, o) for every planned record after afterSeq (up to the plan's
 * lastSeq); returns the count. Asserts the seqs it hands out: the first is
 * afterSeq + 1, then each record has its command's seq or the next one.
 */
export function replay(plan: RecoveryPlan, afterSeq: number, apply: (m: Mem, o: number) => void): number {
  let n = 0;
  let last = afterSeq;
  const checked = (m: Mem, o: number): void => {
    const seq = Header.seq(m, o);
    // `if ... fail`: an assert's template message would be built for every record.
    if (!(seq === last + 1 || (seq === last && n > 0))) fail(`recovery: seq ${seq} after ${last} (replay must continue seq by seq)`);
    last = seq;
    n++;
    apply(m, o);
  };
  for (const s of plan.segments) {
    if (s.lastSeq <= afterSeq) continue;
    forEachRecord(readWhole(s.path), s.goodEnd, afterSeq, plan.lastSeq, checked);
  }
  assert(n === 0 || last === plan.lastSeq, `recovery: replay ended at seq ${last}, the plan at ${plan.lastSeq}`);
  return n;
}

/** A read model recovered from the plan: snapshot, then the journal after it. */
export function recoverViews(plan: RecoveryPlan, engine: Partial<EngineConfig>, views: Partial<ViewsConfig> = {}): Views {
  const v = loadBase(plan, engine, views);
  replay(plan, v.asOfSeq, (m, o) => v.apply(m, o));
  return v;
}
