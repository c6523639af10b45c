// The synced marker (src/journal/cut.ts): a journal that failed on storage
// leaves its last synced seq, and the next start cuts every record after it
// before recovery plans, then removes the marker once the plan reaches that
// seq; a journal that ends before it, or a marker that does not read as
// one, stops the start. The journal thread's side (the marker written
// on a failed fdatasync) runs on the real exchange in
// test/durability/disk_faults.test.ts.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { confirmSyncedMarker, cutToSyncedMarker, readSyncedMarker, writeSyncedMarker } from '../../src/journal/cut.js';
import { JOURNAL_DIR } from '../../src/journal/format.js';
import { planRecovery } from '../../src/journal/recovery.js';
import { JournalFault } from '../../src/journal/segment.js';
import { stateHash } from '../../src/journal/state_codec.js';
import { journaledRun, recoverState, removeDataDir, segmentFiles, tempDataDir } from './journal_fixture.js';

test('synced marker: the start cuts every record after the synced seq, removes the marker, and recovers that state', () => {
  const dir = tempDataDir('synced-marker');
  try {
    let hashAt = '';
    const r = journaledRun(dir, 21, 300, {
      segmentBytes: 8192,
      each: (_i, engine) => {
        if (engine.state.seq === 170 && hashAt === '') hashAt = stateHash(engine.state);
      },
    });
    r.writer.close();
    const before = planRecovery(dir, { repair: false });
    assert.ok(before.lastSeq > 170 && segmentFiles(dir).length > 3, `journal to ${before.lastSeq}`);
    assert.equal(cutToSyncedMarker(dir), null, 'no marker: nothing is cut');
    assert.equal(writeSyncedMarker(dir, 170, 'fdatasync EIO'), null);
    assert.equal(readSyncedMarker(dir), 170);
    const cut = cutToSyncedMarker(dir);
    assert.ok(cut !== null && cut.synced_seq === 170 && cut.segments_removed.length > 0 && cut.truncated !== null, JSON.stringify(cut));
    assert.equal(readSyncedMarker(dir), 170, 'the marker stays until the plan confirms the journal reaches its seq');
    const plan = planRecovery(dir, { repair: true });
    assert.equal(plan.lastSeq, 170);
    confirmSyncedMarker(dir, cut.synced_seq, plan.lastSeq);
    assert.equal(readSyncedMarker(dir), null, 'the marker is gone once the plan reached its seq');
    assert.deepEqual(readdirSync(join(dir, JOURNAL_DIR)).filter((n) => n.startsWith('synced')), []);
    assert.equal(plan.tails.length, 0, 'cut at a command boundary');
    const s = recoverState(plan);
    assert.equal(s.seq, 170);
    assert.equal(stateHash(s), hashAt);
    assert.equal(cutToSyncedMarker(dir), null, 'a second start cuts nothing');
  } finally {
    removeDataDir(dir);
  }
});

test('synced marker: a marker at the journal\'s end cuts nothing; a leftover temp file is removed; a bad marker stops the start', () => {
  const dir = tempDataDir('synced-marker-end');
  try {
    const r = journaledRun(dir, 22, 80);
    r.writer.close();
    const last = planRecovery(dir, { repair: false }).lastSeq;
    writeSyncedMarker(dir, last, 'write EFBIG');
    const tmp = join(dir, JOURNAL_DIR, 'synced.json.tmp');
    writeFileSync(tmp, '{"synced_seq": 1');
    const cut = cutToSyncedMarker(dir);
    assert.deepEqual(cut && { seq: cut.synced_seq, removed: cut.segments_removed, truncated: cut.truncated }, {
      seq: last, removed: [], truncated: null,
    });
    assert.ok(!existsSync(tmp), 'the temp file of a marker that was never renamed is removed');
    assert.equal(planRecovery(dir, { repair: true }).lastSeq, last);
    confirmSyncedMarker(dir, last, last);
    // A journal that ends before the synced seq lost synced records: refused, and the marker kept for the next start.
    writeSyncedMarker(dir, last + 5, 'fdatasync EIO');
    const short = cutToSyncedMarker(dir)!;
    const missing = (e: unknown): boolean => e instanceof JournalFault && /synced records are missing/.test(e.message);
    assert.throws(() => confirmSyncedMarker(dir, short.synced_seq, planRecovery(dir, { repair: true }).lastSeq), missing);
    assert.equal(readSyncedMarker(dir), last + 5);
    rmSync(join(dir, JOURNAL_DIR, 'synced.json'));
    for (const bad of ['{"synced_seq": -1}', '{"synced_seq": "12"}', '{}', 'not json']) {
      writeFileSync(join(dir, JOURNAL_DIR, 'synced.json'), bad);
      const refused = (e: unknown): boolean => e instanceof JournalFault && /synced marker/.test(e.message);
      assert.throws(() => cutToSyncedMarker(dir), refused, bad);
    }
    assert.equal(planRecovery(dir, { repair: false }).lastSeq, last, 'a refused marker cuts nothing');
  } finally {
    removeDataDir(dir);
  }
});

test('synced marker: a data directory whose journal cannot take the marker gets an error message, not a throw', () => {
  assert.match(writeSyncedMarker('/nonexistent/dx-synced-marker', 5, 'fdatasync EIO') ?? '', /ENOENT/);
});
