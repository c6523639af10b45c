// tools/journal verify at the journal's edges: it must call a data directory
// faulty (exit 1) whenever the next start would refuse it, never "repairable"
// (exit 3) or sound. Test process, journal fixture, the tool as a child process.

import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { JOURNAL_DIR, segmentName } from '../../src/journal/format.js';
import { planRecovery } from '../../src/journal/recovery.js';
import { JournalFault } from '../../src/journal/segment.js';
import {
  JOURNAL_ENGINE_CONFIG, journaledRun, journaledRunWithSnapshot, journalTool, removeDataDir, segmentFiles, tempDataDir,
} from '../journal/journal_fixture.js';

function verifyTool(dir: string): { code: number; out: string } {
  const r = journalTool('verify', '--data-dir', dir, '--engine', JSON.stringify(JOURNAL_ENGINE_CONFIG));
  return { code: r.code, out: r.out + r.err };
}

test('journal verify: a torn creation named past a missing segment is a fault (the start refuses it), not repairable', () => {
  const dir = tempDataDir('verify-edges-gap');
  try {
    const run = journaledRun(dir, 5, 1500, { segmentBytes: 16 << 10 });
    run.writer.close();
    const last = run.engine.state.seq;
    const segs = segmentFiles(dir);
    assert.ok(segs.length >= 3, `several segments (${segs.length})`);
    for (const p of segs.slice(2)) rmSync(p);
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(last + 1)), Buffer.alloc(10, 0x11));
    assert.throws(() => planRecovery(dir, { repair: false }), JournalFault, 'the start refuses this directory');
    const v = verifyTool(dir);
    assert.equal(v.code, 1, `verify must exit 1 (fault) when the start refuses the directory:\n${v.out}`);
  } finally {
    removeDataDir(dir);
  }
});

function hashTool(dir: string, ...more: string[]): { code: number; out: string; err: string } {
  return journalTool('hash', '--data-dir', dir, '--engine', JSON.stringify(JOURNAL_ENGINE_CONFIG), ...more);
}

test('journal hash --ignore-snapshots: a last segment created but never written (a kill mid-rotation) is not a fault', () => {
  const dir = tempDataDir('hash-torn-creation');
  try {
    const run = journaledRun(dir, 5, 600, { segmentBytes: 16 << 10 });
    run.writer.close();
    const last = run.engine.state.seq;
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(last + 1)), Buffer.alloc(10, 0));
    const plain = hashTool(dir);
    assert.equal(plain.code, 0, plain.err);
    const scratch = hashTool(dir, '--ignore-snapshots');
    assert.equal(scratch.code, 0, `hash --ignore-snapshots exit ${scratch.code}: ${scratch.err}`);
    assert.equal(JSON.parse(scratch.out).state_hash, JSON.parse(plain.out).state_hash);
    assert.equal(JSON.parse(scratch.out).seq, String(last));
  } finally {
    removeDataDir(dir);
  }
});

test('journal dump: a last segment created but never written is noted, not a fault (exit 0, every record dumped)', () => {
  const dir = tempDataDir('dump-torn-creation');
  try {
    const run = journaledRun(dir, 5, 300, { segmentBytes: 16 << 10 });
    run.writer.close();
    const last = run.engine.state.seq;
    const dump = (): { code: number; out: string; err: string } => journalTool('dump', '--data-dir', dir);
    const before = dump();
    assert.equal(before.code, 0, before.err);
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(last + 1)), Buffer.alloc(0));
    const r = dump();
    assert.equal(r.code, 0, `dump exit ${r.code}: ${r.err}`);
    assert.equal(r.out, before.out);
  } finally {
    removeDataDir(dir);
  }
});

test('journal verify: a snapshot and only a torn creation after it (killed right after a bootstrap) is repairable, not a fault', () => {
  const dir = tempDataDir('verify-edges-snap-torn');
  try {
    // The data directory an HA bootstrap leaves (moveJournalAside, then the downloaded snapshot), then the writer's
    // first segment created and the process killed before its header was written.
    const last = journaledRunWithSnapshot(dir, 5, 600, 16 << 10);
    for (const p of segmentFiles(dir)) rmSync(p);
    writeFileSync(join(dir, JOURNAL_DIR, segmentName(last + 1)), Buffer.alloc(10, 0));
    const plan = planRecovery(dir, { repair: false });
    assert.equal(plan.lastSeq, last, 'the start recovers this directory from the snapshot');
    const v = verifyTool(dir);
    assert.equal(v.code, 3, `verify must exit 3 (the next start removes the torn creation), not call it a fault:\n${v.out}`);
  } finally {
    removeDataDir(dir);
  }
});
