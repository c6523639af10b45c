// The snapshot task (src/journal/tasks.ts) as the journal's piscina worker
// runs it, in process: one snapshot after another continues the read model
// the worker kept from the previous one (one preallocated read model per
// worker, not one per snapshot: the soak's resident memory stepped up at
// every snapshot before), reading only the journal after where the kept
// model stopped (across segment rotations, checked as recovery checks it),
// and each snapshot holds the same state as one rebuilt from the files
// alone. Test process, main thread.

import assert from 'node:assert/strict';
import { appendFileSync, rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { planRecovery, recoverViews } from '../../src/journal/recovery.js';
import { JournalFault } from '../../src/journal/segment.js';
import { readSnapshot, writeSnapshot } from '../../src/journal/snapshot.js';
import { decodeViews, encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { snapshot, type SnapshotArgs } from '../../src/journal/tasks.js';
import {
  flipBit, frames, JOURNAL_ENGINE_CONFIG, journaledRun, removeDataDir, segmentFiles, tempDataDir,
} from './journal_fixture.js';

const SEED = 4242;
const COMMANDS = 6000;
/** Snapshots after these many commands. */
const AT = [1500, 3000, 4500, 6000];

const dirs: string[] = [];
after(() => {
  for (const d of dirs) removeDataDir(d);
});

/**
 * A journal of COMMANDS seeded commands (in segments of `segmentBytes`, by
 * default one segment); the seq after each of AT and the state hash there,
 * rebuilt from the journal alone.
 */
function journal(segmentBytes?: number): { dir: string; seqs: number[]; hashes: string[] } {
  const dir = tempDataDir('snapshot-task');
  dirs.push(dir);
  const seqs: number[] = [];
  const run = journaledRun(dir, SEED, COMMANDS, {
    ...(segmentBytes === undefined ? {} : { segmentBytes }),
    each: (i, engine) => {
      if (AT.includes(i + 1)) seqs.push(engine.state.seq);
    },
  });
  run.writer.close();
  const hashes = seqs.map((seq) =>
    stateHash(recoverViews(planRecovery(dir, { repair: false, uptoSeq: seq }), JOURNAL_ENGINE_CONFIG).state),
  );
  return { dir, seqs, hashes };
}

function args(dataDir: string, seq: number): SnapshotArgs {
  return { dataDir, seq, engine: JOURNAL_ENGINE_CONFIG, views: {}, fsync: false };
}

test('snapshot task: each snapshot continues the read model of the previous one and holds the state rebuilt from the files', () => {
  const { dir, seqs, hashes } = journal();
  const paths: string[] = [];
  for (let i = 0; i < seqs.length; i++) {
    const done = snapshot(args(dir, seqs[i]!));
    assert.equal(done.seq, seqs[i]);
    assert.equal(
      done.replayed,
      seqs[i]! - (i === 0 ? 0 : seqs[i - 1]!),
      `snapshot ${i + 1} replays only the journal after the previous one`,
    );
    const v = decodeViews(readSnapshot(done.path).body);
    assert.equal(v.asOfSeq, seqs[i]);
    assert.equal(stateHash(v.state), hashes[i], `snapshot at seq ${seqs[i]} holds the state rebuilt from the journal`);
    paths.push(done.path);
    if (i === 1) {
      // The newest file gone (not pruned: the journal reaches back to seq 1):
      // the next snapshot still continues the kept model, not the older file.
      rmSync(done.path);
    }
  }
});

test('snapshot task: the files, not the kept model, when it belongs to another data directory or is behind the newest snapshot', () => {
  const a = journal();
  const b = journal();
  const first = snapshot(args(a.dir, a.seqs[0]!)); // kept: a's model at seqs[0]
  rmSync(first.path); // a's journal alone remains (one segment, never pruned)
  // b: nothing kept for b, so from the start of its journal.
  let done = snapshot(args(b.dir, b.seqs[0]!));
  assert.equal(done.replayed, b.seqs[0]);
  // a again: the kept model is b's, so a's snapshot comes from a's files (the journal from seq 1).
  done = snapshot(args(a.dir, a.seqs[1]!));
  assert.equal(done.replayed, a.seqs[1]);
  assert.equal(stateHash(decodeViews(readSnapshot(done.path).body).state), a.hashes[1]);
  // A newer snapshot file than the kept model (written by something else): the next one starts from that file.
  writeSnapshot(
    a.dir,
    a.seqs[2]!,
    encodeViews(recoverViews(planRecovery(a.dir, { repair: false, uptoSeq: a.seqs[2]! }), JOURNAL_ENGINE_CONFIG)),
    false,
  );
  done = snapshot(args(a.dir, a.seqs[3]!));
  assert.equal(done.replayed, a.seqs[3]! - a.seqs[2]!);
  assert.equal(stateHash(decodeViews(readSnapshot(done.path).body).state), a.hashes[3]);
});

test('snapshot task: the kept model reads on from where it stopped, across segments, and not the tail being written past the seq', () => {
  const { dir, seqs, hashes } = journal(64 << 10);
  const segments = segmentFiles(dir);
  assert.ok(segments.length >= 8, `${segments.length} segments: the replays between snapshots cross rotations`);
  // A write in flight at the end of the last segment: past every seq asked for, never read.
  appendFileSync(segments.at(-1)!, Buffer.from([0x40, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7]));
  for (let i = 0; i < seqs.length; i++) {
    const done = snapshot(args(dir, seqs[i]!));
    assert.equal(done.replayed, seqs[i]! - (i === 0 ? 0 : seqs[i - 1]!));
    assert.equal(stateHash(decodeViews(readSnapshot(done.path).body).state), hashes[i], `snapshot at seq ${seqs[i]}`);
    if (i === 1) {
      // The newest snapshot file damaged: a plan would reject it and replay the
      // journal from seq 1; the kept model reads only what follows it.
      flipBit(done.path, 200);
    }
  }
});

test('snapshot task: damage after the kept model stops its snapshot with the file and byte offset, as recovery reports it', () => {
  const { dir, seqs } = journal(64 << 10);
  snapshot(args(dir, seqs[0]!));
  // A record between the first and the second snapshot, with more data after it, in a segment the first replay did not reach.
  const hit = segmentFiles(dir)
    .flatMap((path) => frames(path).map((f, i, all) => ({ path, f, last: i === all.length - 1 })))
    .find(({ f, last }) => f.seq > seqs[0]! + 50 && f.seq < seqs[1]! && !last);
  assert.ok(hit !== undefined);
  flipBit(hit.path, hit.f.offset + 8 + 24);
  assert.throws(
    () => snapshot(args(dir, seqs[1]!)),
    (e: unknown) => e instanceof JournalFault && e.file === hit.path && e.offset === hit.f.offset && /checksum/.test(e.message),
  );
  // The model it dropped is not continued: the next try plans from the files and meets the same damage.
  assert.throws(() => snapshot(args(dir, seqs[1]!)), (e: unknown) => e instanceof JournalFault && e.offset === hit.f.offset);
});

test('snapshot task: a kept model that stopped at the very end of a segment goes on in the next, even once that one is pruned', () => {
  const { dir } = journal(64 << 10);
  const segments = segmentFiles(dir);
  // The last command of the second segment, and one well into the fourth.
  const endOfSecond = frames(segments[1]!).at(-1)!.seq;
  const later = frames(segments[3]!)[10]!.seq;
  const hashAt = (seq: number): string =>
    stateHash(recoverViews(planRecovery(dir, { repair: false, uptoSeq: seq }), JOURNAL_ENGINE_CONFIG).state);
  const first = snapshot(args(dir, endOfSecond));
  // Its own prune removed the segment the kept model stopped at the end of (it ends at the only snapshot).
  assert.ok(first.prunedSegments.includes(segments[1]!), `pruned ${first.prunedSegments.join(', ')}`);
  assert.equal(stateHash(decodeViews(readSnapshot(first.path).body).state), hashAt(endOfSecond));
  const next = snapshot(args(dir, later));
  assert.equal(next.replayed, later - endOfSecond);
  assert.equal(stateHash(decodeViews(readSnapshot(next.path).body).state), hashAt(later));
});
