// The synced marker (src/journal/cut.ts): a journal that failed on storage
// leaves its last synced seq, and the next start cuts every record after it
// (a damaged one too) before recovery plans, then removes the marker. A
// journal that no longer holds every record through that seq whole, or a
// marker that does not read as one, stops the start with nothing changed. The journal thread's side (the marker written
// on a failed fdatasync) runs on the real exchange in
// test/durability/disk_faults.test.ts.

import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { cutToSyncedMarker, readSyncedMarker, writeSyncedMarker } from '../../src/journal/cut.js';
import { JOURNAL_DIR } from '../../src/journal/format.js';
import { planRecovery } from '../../src/journal/recovery.js';
import { JournalFault } from '../../src/journal/segment.js';
import { assertRecoversTo, frames, journaledRun, journaledRunHashAt, removeDataDir, segmentFiles, tempDataDir } from './journal_fixture.js';

test('synced marker: the start cuts every record after the synced seq, removes the marker, and recovers that state', () => {
  const dir = tempDataDir('synced-marker');
  try {
    const hashAt = journaledRunHashAt(dir, 21, 300, 170);
    const before = planRecovery(dir, { repair: false });
    assert.ok(before.lastSeq > 170 && segmentFiles(dir).length > 3, `journal to ${before.lastSeq}`);
    assert.equal(cutToSyncedMarker(dir), null, 'no marker: nothing is cut');
    assert.equal(writeSyncedMarker(dir, 170, 'fdatasync EIO'), null);
    assert.equal(readSyncedMarker(dir), 170);
    const cut = cutToSyncedMarker(dir);
    assert.ok(cut !== null && cut.synced_seq === 170 && cut.segments_removed.length > 0 && cut.truncated !== null, JSON.stringify(cut));
    assert.equal(readSyncedMarker(dir), null, 'the marker is gone once the cut is done');
    assert.deepEqual(readdirSync(join(dir, JOURNAL_DIR)).filter((n) => n.startsWith('synced')), []);
    assertRecoversTo(dir, 170, hashAt, true);
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

test('synced marker: a damaged first frame after the synced seq (its page never reached the disk, later ones did) is cut too', () => {
  const dir = tempDataDir('synced-marker-torn');
  try {
    journaledRun(dir, 23, 120).writer.close();
    const seg = segmentFiles(dir).at(-1)!;
    const last = planRecovery(dir, { repair: false }).lastSeq;
    const synced = last - 10;
    const first = frames(seg).find((f) => f.seq === synced + 1)!;
    const b = readFileSync(seg);
    b.fill(0, first.offset, first.offset + 64);
    writeFileSync(seg, b);
    assert.throws(() => planRecovery(dir, { repair: true }), JournalFault, 'without the marker the damage is refused');
    writeSyncedMarker(dir, synced, 'fdatasync EIO');
    const cut = cutToSyncedMarker(dir)!;
    assert.equal(cut.truncated?.from, first.offset);
    assert.equal(planRecovery(dir, { repair: true }).lastSeq, synced);
  } finally {
    removeDataDir(dir);
  }
});

test('synced marker: a journal that no longer holds every synced record whole is refused, nothing cut, the marker kept', () => {
  const dir = tempDataDir('synced-marker-short');
  try {
    journaledRun(dir, 24, 200, { segmentBytes: 8192 }).writer.close();
    const last = planRecovery(dir, { repair: false }).lastSeq;
    const segs = segmentFiles(dir);
    const refused = (e: unknown): boolean => e instanceof JournalFault && /does not hold every record up to it/.test(e.message);
    const jd = join(dir, JOURNAL_DIR);
    const listing = (): string[] => readdirSync(jd).map((n) => `${n} ${readFileSync(join(jd, n)).length}`);
    // (a) The journal ends before the synced seq (synced records lost, or an older copy restored).
    writeSyncedMarker(dir, last + 5, 'fdatasync EIO');
    let before = listing();
    assert.throws(() => cutToSyncedMarker(dir), refused);
    assert.deepEqual(listing(), before, 'nothing changed');
    assert.equal(readSyncedMarker(dir), last + 5, 'the marker is kept: the next start refuses too');
    // (b) A synced record damaged in a segment that is not the last one; the cut would have made it a torn tail.
    const victimSeg = segs.at(-2)!;
    const victim = frames(victimSeg).at(-3)!;
    const b = readFileSync(victimSeg);
    b[victim.offset + 20]! ^= 1;
    writeFileSync(victimSeg, b);
    writeSyncedMarker(dir, frames(segs.at(-1)!)[0]!.seq - 1, 'open ENOSPC');
    before = listing();
    assert.throws(() => cutToSyncedMarker(dir), refused);
    assert.deepEqual(listing(), before, 'nothing changed');
  } finally {
    removeDataDir(dir);
  }
});
