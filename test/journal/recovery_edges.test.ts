// Recovery at the journal's edges: a torn creation (a last segment shorter
// than its header) whose name says the journal reached further than the
// segment before it is a missing segment, not a creation cut short; a damaged
// last frame of a command the snapshot recovery starts from holds was synced,
// so it is a fault, not a torn tail to cut (the cut would leave a hole in
// the journal). Test process, journal fixture.

import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { JOURNAL_DIR, segmentName } from '../../src/journal/format.js';
import { planRecovery } from '../../src/journal/recovery.js';
import { JournalFault } from '../../src/journal/segment.js';
import { frames, journaledRun, journaledRunWithSnapshot, removeDataDir, segmentFiles, tempDataDir } from './journal_fixture.js';

test('recovery edges: a torn creation named past a missing segment is a fault, not a silent end of the journal', () => {
  const dir = tempDataDir('edges-gap');
  try {
    const run = journaledRun(dir, 5, 1500, { segmentBytes: 16 << 10 });
    run.writer.close();
    const last = run.engine.state.seq;
    const segs = segmentFiles(dir);
    assert.ok(segs.length >= 3, `several segments (${segs.length})`);
    // The segments after the second (acknowledged records, synced at rotation and at close) go missing, and a rotation
    // after them was cut short by a crash: seg-<last + 1> exists with less than a header.
    const goneFirst = frames(segs[2]!)[0]!.seq;
    for (const p of segs.slice(2)) rmSync(p);
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(last + 1)), Buffer.alloc(10, 0x11));
    let plan;
    try {
      plan = planRecovery(dir, { repair: true });
    } catch (e) {
      assert.ok(e instanceof JournalFault, String(e));
      return;
    }
    assert.fail(`recovery ended at seq ${plan.lastSeq} without a fault; commands ${goneFirst}..${last} were in the missing segments`);
  } finally {
    removeDataDir(dir);
  }
});

test('recovery edges: a damaged last frame of a command at or before the snapshot\'s seq is not cut as a torn tail', () => {
  const dir = tempDataDir('edges-snap');
  try {
    // A snapshot at the journal's end (POST /admin/snapshot on an idle exchange): every record through `last` was synced.
    const last = journaledRunWithSnapshot(dir, 6, 800, 1 << 20);
    // One bit of the last (synced) frame goes bad.
    const seg = segmentFiles(dir).at(-1)!;
    const fs = frames(seg);
    const lastFrame = fs.at(-1)!;
    const b = readFileSync(seg);
    b[lastFrame.offset + 8 + 40] ^= 4;
    writeFileSync(seg, b);
    const size = b.length;
    let threw: unknown = null;
    try {
      planRecovery(dir, { repair: true });
    } catch (e) {
      threw = e;
    }
    const cut = readFileSync(seg).length;
    assert.ok(threw instanceof JournalFault && cut === size,
      `the repair cut ${size - cut} bytes of command ${last}, which the snapshot at seq ${last} shows was synced; ` +
        `the writer then starts seg-${last + 1}, leaving a hole at seq ${last} (${String(threw)})`);
  } finally {
    removeDataDir(dir);
  }
});
