// The snapshot task (src/journal/tasks.ts) as the journal's piscina worker
// runs it, in process: one snapshot after another continues the read model
// the worker kept from the previous one (one preallocated read model per
// worker, not one per snapshot: the soak's resident memory stepped up at
// every snapshot before), and each snapshot holds the same state as one
// rebuilt from the files alone. Test process, main thread.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, test } from 'node:test';
import { planRecovery, recoverViews } from '../../src/journal/recovery.js';
import { readSnapshot, writeSnapshot } from '../../src/journal/snapshot.js';
import { decodeViews, encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { snapshot, type SnapshotArgs } from '../../src/journal/tasks.js';
import { JOURNAL_ENGINE_CONFIG, journaledRun, removeDataDir, tempDataDir } from './journal_fixture.js';

const SEED = 4242;
const COMMANDS = 6000;
/** Snapshots after these many commands. */
const AT = [1500, 3000, 4500, 6000];

const dirs: string[] = [];
after(() => {
  for (const d of dirs) removeDataDir(d);
});

/** A journal of COMMANDS seeded commands; the seq after each of AT and the state hash there, rebuilt from the journal alone. */
function journal(): { dir: string; seqs: number[]; hashes: string[] } {
  const dir = tempDataDir('snapshot-task');
  dirs.push(dir);
  const seqs: number[] = [];
  const run = journaledRun(dir, SEED, COMMANDS, {
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
