// The snapshot task (src/journal/tasks.ts) as the journal's piscina worker
// runs it, in process: it writes the read model the main thread captured
// (state_codec.ts captureViews, its buffers transferred as postMessage would
// move them), so that the file holds the state rebuilt from the journal at
// that seq, and prunes what recovery no longer needs. Test process, main
// thread.

import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, test } from 'node:test';
import { planRecovery, recoverViews } from '../../src/journal/recovery.js';
import { listSnapshots, readSnapshot } from '../../src/journal/snapshot.js';
import { captureViews, decodeViews, stateHash } from '../../src/journal/state_codec.js';
import { snapshot, type SnapshotArgs } from '../../src/journal/tasks.js';
import type { Views } from '../../src/views/views.js';
import { flipBit, JOURNAL_ENGINE_CONFIG, journaledRun, removeDataDir, segmentFiles, tempDataDir } from './journal_fixture.js';

const SEED = 4242;
const COMMANDS = 6000;
/** Snapshots after these many commands. */
const AT = [1500, 3000, 4500, 6000];

const dirs: string[] = [];
after(() => {
  for (const d of dirs) removeDataDir(d);
});

/** A journal of COMMANDS seeded commands in 64 KiB segments, and the seq after each of AT. */
function journal(): { dir: string; seqs: number[] } {
  const dir = tempDataDir('snapshot-task');
  dirs.push(dir);
  const seqs: number[] = [];
  const run = journaledRun(dir, SEED, COMMANDS, {
    segmentBytes: 64 << 10,
    each: (i, engine) => {
      if (AT.includes(i + 1)) seqs.push(engine.state.seq);
    },
  });
  run.writer.close();
  return { dir, seqs };
}

/** The read model at `seq`, rebuilt from the journal (before any snapshot is written: from the journal alone). */
function modelAt(dir: string, seq: number): Views {
  return recoverViews(planRecovery(dir, { repair: false, uptoSeq: seq }), JOURNAL_ENGINE_CONFIG);
}

/** The task's arguments for `views`, its buffers moved as piscina's transferList moves them. */
function args(dir: string, views: Views): SnapshotArgs {
  const c = captureViews(views);
  return { dataDir: dir, seq: views.asOfSeq, tree: structuredClone(c.tree, { transfer: c.transfer }), fsync: false };
}

test('snapshot task: each file holds the captured read model, which is the state rebuilt from the journal at its seq', () => {
  const { dir, seqs } = journal();
  const models = seqs.map((seq) => modelAt(dir, seq));
  const hashes = models.map((v) => stateHash(v.state));
  const last = hashes.at(-1)!;
  for (const [i, views] of models.entries()) {
    const seq = seqs[i]!;
    const hash = hashes[i]!;
    const done = snapshot(args(dir, views));
    assert.equal(done.seq, seq);
    assert.ok(done.bytes > 0);
    const back = decodeViews(readSnapshot(done.path).body);
    assert.equal(back.asOfSeq, seq);
    assert.equal(stateHash(back.state), hash, `snapshot at seq ${seq}`);
    // A restart now (this snapshot, then the journal after it) reaches the journal's end state.
    const plan = planRecovery(dir, { repair: false });
    assert.equal(plan.snapshot?.seq, seq);
    assert.equal(stateHash(recoverViews(plan, JOURNAL_ENGINE_CONFIG).state), last);
  }
});

test('snapshot task: the newest snapshot and one older stay; segments wholly before the older one go', () => {
  const { dir, seqs } = journal();
  const before = segmentFiles(dir);
  assert.ok(before.length >= 8, `${before.length} segments`);
  const models = seqs.map((seq) => modelAt(dir, seq));
  const end = stateHash(models.at(-1)!.state);
  const done = models.map((v) => snapshot(args(dir, v)));
  assert.deepEqual(listSnapshots(dir).map((s) => s.seq), [seqs[3], seqs[2]]);
  assert.ok(done.some((d) => d.prunedSnapshots.length > 0));
  const pruned = done.flatMap((d) => d.prunedSegments);
  assert.ok(pruned.length > 0);
  for (const p of pruned) assert.equal(existsSync(p), false);
  // What is left still recovers every seq from the older kept snapshot on.
  const plan = planRecovery(dir, { repair: false, uptoSeq: seqs[3]! });
  assert.equal(stateHash(recoverViews(plan, JOURNAL_ENGINE_CONFIG).state), end);
});

test('snapshot task: a snapshot at a seq that has one already replaces it, a damaged file included', () => {
  const { dir, seqs } = journal();
  const views = modelAt(dir, seqs[0]!);
  const hash = stateHash(views.state);
  const first = snapshot(args(dir, views));
  flipBit(first.path, 200);
  assert.throws(() => readSnapshot(first.path));
  const again = snapshot(args(dir, views));
  assert.equal(again.path, first.path);
  assert.equal(listSnapshots(dir).length, 1);
  assert.equal(stateHash(decodeViews(readSnapshot(again.path).body).state), hash);
});
