// Corruption tests (issue 4): a journal with snapshots is written once, and
// every test damages its own copy the way crashes and bad disks do. A torn
// tail is truncated and reported and recovery ends at the last complete
// command; damage in the middle, a missing segment or a wrong fingerprint
// stops recovery with a JournalFault naming the file and the byte offset; a
// damaged snapshot is skipped for the older one (or the journal), with the
// same final state. tools/journal verify exits non-zero on each of them (and
// on a command whose ts is not after the previous one's) and 0 on a good
// journal; dump's filters select exactly the matching records.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, existsSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { crc32c } from '../../src/journal/crc32c.js';
import { cutToSyncedMarker, SYNCED_MARKER, writeSyncedMarker } from '../../src/journal/cut.js';
import {
  decodeFileHeader,
  encodeFileHeader,
  FILE_HEADER_BYTES,
  JOURNAL_DIR,
  SEGMENT_MAGIC,
  segmentName,
  SNAPSHOT_DIR,
  SNAPSHOT_MAGIC,
} from '../../src/journal/format.js';
import { planRecovery, recoverViews, type RecoveryPlan } from '../../src/journal/recovery.js';
import { JournalFault } from '../../src/journal/segment.js';
import { listSnapshots, writeSnapshot } from '../../src/journal/snapshot.js';
import { encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { prune } from '../../src/journal/tasks.js';
import { JournalWriter } from '../../src/journal/writer.js';
import { Header, T_COMMAND_COMPLETED } from '../../src/layout/records.js';
import { decodeRecord, encodeToMem, recordInfo } from '../../src/layout_codec/record_codec.js';
import { memOf } from '../../src/lib/mem.js';
import { Views } from '../../src/views/views.js';
import {
  flipBit, frames, JOURNAL_ENGINE_CONFIG, journaledRun, journalTool, recoverState, removeDataDir, segmentFiles, tempDataDir,
  type FrameInfo,
} from './journal_fixture.js';

const SEED = 77;
const COMMANDS = 8000;
const SNAPSHOT_AFTER = [3000, 6000];
const ENGINE = JSON.stringify(JOURNAL_ENGINE_CONFIG);
const JOURNAL_TOOL = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));

let pristine = '';
let liveSeq = 0;
let liveHash = '';
/**
 * State hash after each of the last seqs (the live read model's, which equals the engine's: liveHash). One command of
 * the stream may take two seqs (a clock tick due before it runs first), so they are taken at each new seq of the events.
 */
const liveHashes = new Map<number, string>();
const snapshotSeqs: number[] = [];
const copies: string[] = [];

before(() => {
  pristine = tempDataDir('corruption');
  const mirror = new Views(JOURNAL_ENGINE_CONFIG);
  let tail = false;
  const run = journaledRun(pristine, SEED, COMMANDS, {
    segmentBytes: 64 << 10,
    onEvent: (m, o) => {
      if (tail && Header.seq(m, o) !== mirror.asOfSeq) liveHashes.set(mirror.asOfSeq, stateHash(mirror.state));
      mirror.apply(m, o);
    },
    each: (i) => {
      tail = i >= COMMANDS - 61;
      if (SNAPSHOT_AFTER.includes(i + 1)) {
        writeSnapshot(pristine, mirror.asOfSeq, encodeViews(mirror), false);
        snapshotSeqs.push(mirror.asOfSeq);
      }
    },
  });
  run.writer.close();
  liveSeq = run.engine.state.seq;
  liveHash = stateHash(run.engine.state);
  assert.equal(stateHash(mirror.state), liveHash, 'the live read model hashes as the engine does');
  liveHashes.set(liveSeq, liveHash);
});

after(() => {
  for (const d of [pristine, ...copies]) removeDataDir(d);
});

/** A fresh copy of the good data directory for one test to damage. */
function copy(): string {
  const d = tempDataDir('corruption-copy');
  cpSync(pristine, d, { recursive: true });
  copies.push(d);
  return d;
}

function verifyTool(dir: string): { code: number; out: string; err: string } {
  return journalTool('verify', '--data-dir', dir, '--engine', ENGINE, '--check-every', '4000');
}

function recoveredHash(plan: RecoveryPlan): string {
  return stateHash(recoverViews(plan, JOURNAL_ENGINE_CONFIG).state);
}

function expectFault(dir: string, file: string, offset: number, why: RegExp): void {
  assert.throws(() => planRecovery(dir, { repair: true }), (e: unknown) => {
    assert.ok(e instanceof JournalFault, `a JournalFault, got ${String(e)}`);
    assert.equal(e.file, file);
    assert.equal(e.offset, offset);
    assert.match(e.message, why);
    assert.ok(e.message.includes(file) && e.message.includes(`at byte ${offset}`), 'the message names the file and the offset');
    return true;
  });
  const v = verifyTool(dir);
  assert.equal(v.code, 1, v.out);
  assert.ok(v.out.includes(`FAULT ${file} at byte ${offset}:`), v.out);
}

/** Segments after the newest snapshot's seq, except the last: the ones recovery must read and that data follows. */
function middleSegments(dir: string): string[] {
  const newest = snapshotSeqs.at(-1)!;
  const segs = segmentFiles(dir);
  return segs.filter((p, i) => i < segs.length - 1 && frames(segs[i + 1]!)[0]!.seq - 1 > newest && frames(p)[0]!.seq > newest);
}

function lastSegment(dir: string): string {
  return segmentFiles(dir).at(-1)!;
}

/** The frames of a segment's last command that has more than one event, and the seq before it. */
function lastMultiEventCommand(fs: FrameInfo[]): { first: FrameInfo; completion: FrameInfo } {
  for (let i = fs.length - 1; i > 0; i--) {
    if (fs[i]!.type !== T_COMMAND_COMPLETED || fs[i - 1]!.seq !== fs[i]!.seq) continue;
    let j = i;
    while (j > 0 && fs[j - 1]!.seq === fs[i]!.seq) j--;
    return { first: fs[j]!, completion: fs[i]! };
  }
  throw new Error('no command with several events in the last segment');
}

test('corruption: the good journal recovers to the live hash and verifies (exit 0)', (t) => {
  const dir = copy();
  const segs = segmentFiles(dir);
  t.diagnostic(
    `seed=${SEED}: ${COMMANDS} commands -> seq ${liveSeq}, ${segs.length} segments, snapshots at seqs ${snapshotSeqs.join(', ')}`,
  );
  assert.ok(middleSegments(dir).length >= 2, 'segments after the newest snapshot');
  const plan = planRecovery(dir, { repair: true });
  assert.deepEqual([plan.tails, plan.removed, plan.rejectedSnapshots], [[], [], []]);
  assert.equal(plan.snapshot?.seq, snapshotSeqs.at(-1));
  assert.equal(plan.lastSeq, liveSeq);
  assert.equal(recoveredHash(plan), liveHash);
  const v = verifyTool(dir);
  assert.equal(v.code, 0, v.out);
  assert.match(v.out, new RegExp(`state hash at seq ${liveSeq}: ${liveHash}`));
  assert.match(v.out, /result: sound/);
  assert.equal(segmentFiles(dir).length, segs.length);
});

test('corruption: the start\'s repair fdatasyncs the last segment before its records count as durable (the last run may have ' +
  'died between a write and its sync); a failing sync fails the plan', () => {
  const dir = copy();
  let syncs = 0;
  const plan = planRecovery(dir, { repair: true, io: { fdatasync: () => void syncs++ } });
  assert.equal(plan.lastSeq, liveSeq);
  assert.equal(syncs, 1, 'the last segment, once');
  planRecovery(dir, { repair: false, io: { fdatasync: () => void syncs++ } });
  assert.equal(syncs, 1, 'a plan without repair (tools, the snapshot worker) writes nothing');
  const eio = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO', syscall: 'fdatasync' });
  assert.throws(() => planRecovery(dir, { repair: true, io: { fdatasync: () => { throw eio; } } }), /EIO/);
});

test('corruption: a torn last frame is truncated and reported; recovery ends at the last complete command, and the journal ' +
  'continues', () => {
  const dir = copy();
  const last = lastSegment(dir);
  const fs = frames(last);
  const lastFrame = fs.at(-1)!;
  const lastCmdStart = fs.find((f) => f.seq === liveSeq)!;
  const size = statSync(last).size;
  // The crash cut the last frame (the last command's completion) 10 bytes into its record.
  truncateSync(last, lastFrame.offset + 8 + 10);
  const v = verifyTool(dir);
  assert.equal(v.code, 3, v.out);
  assert.ok(v.out.includes(`REPAIRABLE ${last} at byte ${lastFrame.offset}: torn tail (torn_frame`), v.out);

  const look = planRecovery(dir, { repair: false });
  assert.equal(look.lastSeq, liveSeq - 1);
  assert.deepEqual(
    look.tails.map((x) => [x.path, x.offset, x.kind]),
    [[last, lastFrame.offset, 'torn_frame']],
  );
  assert.equal(statSync(last).size, lastFrame.offset + 18, 'repair: false changes nothing');

  const plan = planRecovery(dir, { repair: true });
  assert.equal(plan.lastSeq, liveSeq - 1);
  assert.equal(plan.tails.length, 1);
  assert.equal(statSync(last).size, lastCmdStart.offset, 'truncated to the end of the last complete command');
  assert.ok(lastCmdStart.offset < size);
  assert.equal(recoveredHash(plan), liveHashes.get(liveSeq - 1));
  assert.equal(verifyTool(dir).code, 0);

  // The restart path: the engine continues on the recovered state, the writer in a new segment.
  const state = recoverState(plan);
  const out = new BufferEventOut(1 << 20);
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out, state);
  const writer = new JournalWriter({ dataDir: dir, nextSeq: plan.lastSeq + 1, fsync: false });
  const { mem } = encodeToMem({ type: 'CreateAccount', producer: 1, correlation: 1, account: 0, seq: 0, ts: 0n });
  assert.equal(engine.execute(mem, 0), liveSeq);
  for (const o of out.offsets()) writer.append(out.mem, o);
  writer.close();
  const again = planRecovery(dir, { repair: true });
  assert.equal(again.lastSeq, liveSeq);
  assert.equal(recoveredHash(again), stateHash(engine.state));
  assert.equal(verifyTool(dir).code, 0);
});

test('corruption: trailing zeros after the last frame are a torn tail; nothing complete is lost', () => {
  const dir = copy();
  const last = lastSegment(dir);
  const size = statSync(last).size;
  appendFileSync(last, Buffer.alloc(8192));
  const v = verifyTool(dir);
  assert.equal(v.code, 3, v.out);
  assert.ok(v.out.includes(`REPAIRABLE ${last} at byte ${size}:`), v.out);
  const plan = planRecovery(dir, { repair: true });
  assert.deepEqual(plan.tails.map((x) => [x.offset, x.kind, x.bytes]), [[size, 'torn_frame', 8192]]);
  assert.match(plan.tails[0]!.detail, /zero bytes/);
  assert.equal(plan.lastSeq, liveSeq);
  assert.equal(statSync(last).size, size);
  assert.equal(recoveredHash(plan), liveHash);
});

test('corruption: a last segment created but never written (empty or a partial header) is repairable: verify says so, start-up removes ' +
  'it', () => {
  for (const size of [0, FILE_HEADER_BYTES - 1]) {
    const dir = copy();
    const torn = join(dir, JOURNAL_DIR, segmentName(liveSeq + 1));
    writeFileSync(torn, Buffer.alloc(size, 0x11));
    const v = verifyTool(dir);
    assert.equal(v.code, 3, v.out);
    assert.ok(v.out.includes(`REPAIRABLE ${torn} at byte 0: a segment created but never written (${size} bytes`), v.out);
    const plan = planRecovery(dir, { repair: true });
    assert.deepEqual(plan.removed, [torn]);
    assert.ok(!existsSync(torn));
    assert.equal(plan.lastSeq, liveSeq);
    assert.equal(recoveredHash(plan), liveHash);
    assert.equal(verifyTool(dir).code, 0);
  }
});

test('corruption: a journal failure\'s synced marker is repairable: verify says so, the start cuts after its seq; ' +
  'a bad marker is a fault', () => {
  const dir = copy();
  // A seq with a known state after the newest snapshot (the cut removes snapshots past it, and older segments may be pruned).
  const newestSnapshot = Math.max(0, ...listSnapshots(dir).map((x) => x.seq));
  const candidates = [...liveHashes.keys()].filter((q) => q > newestSnapshot && q < liveSeq).sort((a, b) => a - b);
  assert.ok(candidates.length > 0, `no known state between the snapshot at ${newestSnapshot} and ${liveSeq}`);
  const keep = candidates[Math.floor(candidates.length / 2)]!;
  const marker = join(dir, JOURNAL_DIR, SYNCED_MARKER);
  writeSyncedMarker(dir, keep, 'fdatasync EIO');
  const v = verifyTool(dir);
  assert.equal(v.code, 3, v.out);
  assert.ok(v.out.includes(`REPAIRABLE ${marker} at byte 0: a journal failure left the synced marker at seq ${keep}`), v.out);
  assert.equal(cutToSyncedMarker(dir)!.synced_seq, keep);
  const plan = planRecovery(dir, { repair: true });
  assert.equal(plan.lastSeq, keep);
  assert.equal(recoveredHash(plan), liveHashes.get(keep));
  assert.equal(verifyTool(dir).code, 0);
  writeFileSync(marker, '{"synced_seq": "x"}');
  const bad = verifyTool(dir);
  assert.equal(bad.code, 1, bad.out);
  assert.ok(bad.out.includes(`FAULT ${marker} at byte 0: the synced marker's synced_seq "x" is not a seq`), bad.out);
});

test('corruption: the events of a command without its completion are dropped and reported', () => {
  const dir = copy();
  const last = lastSegment(dir);
  const { first, completion } = lastMultiEventCommand(frames(last));
  assert.ok(liveHashes.has(first.seq - 1), 'the live hash before that command was kept');
  // Everything from that command's completion on never reached the disk.
  truncateSync(last, completion.offset);
  const v = verifyTool(dir);
  assert.equal(v.code, 3, v.out);
  assert.ok(v.out.includes(`REPAIRABLE ${last} at byte ${first.offset}: torn tail (incomplete_command`), v.out);
  const plan = planRecovery(dir, { repair: true });
  assert.deepEqual(plan.tails.map((x) => [x.offset, x.kind]), [[first.offset, 'incomplete_command']]);
  assert.equal(plan.lastSeq, first.seq - 1);
  assert.equal(statSync(last).size, first.offset);
  assert.equal(recoveredHash(plan), liveHashes.get(first.seq - 1));
});

test('corruption: a flipped bit in the middle of a segment (record, length or checksum) is a fault naming the file and offset', () => {
  for (const [what, at, bit] of [['record body', 8 + 20, 3], ['frame length', 0, 4], ['frame checksum', 5, 0]] as const) {
    const dir = copy();
    const seg = middleSegments(dir)[0]!;
    const fs = frames(seg);
    const victim = fs[Math.floor(fs.length / 2)]!;
    flipBit(seg, victim.offset + at, bit);
    expectFault(dir, seg, victim.offset, /checksum mismatch|not a valid record length|differs from its frame/);
    assert.ok(existsSync(seg), `${what}: nothing removed`);
  }
});

test("corruption: a command whose ts is not after the previous command's is a verify fault (ts never goes backwards, across failovers " +
  "too)", () => {
  const dir = copy();
  const seg = middleSegments(dir)[0]!;
  const done = frames(seg).filter((f) => f.type === T_COMMAND_COMPLETED);
  const [prev, victim] = [done[Math.floor(done.length / 2) - 1]!, done[Math.floor(done.length / 2)]!];
  const b = readFileSync(seg);
  // The victim's completion gets the previous command's ts (header ts at record bytes 24..31), with a valid checksum.
  b.copy(b, victim.offset + 8 + 24, prev.offset + 8 + 24, prev.offset + 8 + 32);
  b.writeUInt32LE(crc32c(b, victim.offset + 8, victim.offset + 8 + victim.len), victim.offset + 4);
  writeFileSync(seg, b);
  const v = verifyTool(dir);
  assert.equal(v.code, 1, v.out);
  assert.match(
    v.out,
    new RegExp(`FAULT ${seg} at byte ${victim.offset}: seq ${victim.seq}: ts \\d+ is not after the previous command's \\d+`),
    v.out,
  );
});

test('corruption: a damaged segment header is a fault at byte 0', () => {
  const dir = copy();
  const seg = middleSegments(dir)[1]!;
  flipBit(seg, 30, 2);
  expectFault(dir, seg, 0, /header checksum mismatch/);
});

test('corruption: a flipped bit in a segment recovery no longer reads still fails verify', () => {
  const dir = copy();
  const seg = segmentFiles(dir)[1]!;
  assert.ok(frames(seg).at(-1)!.seq < snapshotSeqs.at(-1)!, 'the segment lies wholly before the newest snapshot');
  const victim = frames(seg)[3]!;
  flipBit(seg, victim.offset + 8 + 33, 6);
  const plan = planRecovery(dir, { repair: false });
  assert.equal(recoveredHash(plan), liveHash, 'recovery starts from the snapshot and does not need the segment');
  const v = verifyTool(dir);
  assert.equal(v.code, 1, v.out);
  assert.ok(v.out.includes(`FAULT ${seg} at byte ${victim.offset}:`), v.out);
});

test('corruption: a frame length damaged in the last frame is a fault, not a torn tail', () => {
  const dir = copy();
  const last = lastSegment(dir);
  const lastFrame = frames(last).at(-1)!;
  // The frame now claims more bytes than the file holds, but its record (by its own length) is whole and checks out.
  flipBit(last, lastFrame.offset + 1, 0);
  expectFault(dir, last, lastFrame.offset, /frame length/);
});

test('corruption: a missing segment in the middle is a fault naming the next segment', () => {
  const dir = copy();
  const [gone, next] = middleSegments(dir);
  rmSync(gone!);
  expectFault(dir, next!, 16, /missing segment or a gap/);
});

test('corruption: a missing first segment is a fault when no snapshot covers it', () => {
  const dir = copy();
  rmSync(join(dir, SNAPSHOT_DIR), { recursive: true });
  const [first, second] = segmentFiles(dir);
  rmSync(first!);
  expectFault(dir, second!, 0, /records 1\.\.\d+ are missing/);
});

test('corruption: segments missing back past the newest snapshot are a fault', () => {
  const dir = copy();
  const newest = snapshotSeqs.at(-1)!;
  const segs = segmentFiles(dir);
  // Remove every segment that starts at or before the first record after the newest snapshot.
  const doomed = segs.filter((p) => frames(p)[0]!.seq <= newest + 1);
  for (const p of doomed) rmSync(p);
  const first = segs[doomed.length]!;
  expectFault(dir, first, 0, /missing segment/);
});

test('corruption: a journal pruned behind the older snapshot recovers and verifies from that snapshot', () => {
  const dir = copy();
  const pruned = prune(dir, false);
  assert.ok(pruned.prunedSegments.length > 0);
  assert.deepEqual(pruned.prunedSnapshots, []);
  const first = segmentFiles(dir)[0]!;
  assert.ok(frames(first)[0]!.seq > 1 && frames(first)[0]!.seq <= snapshotSeqs[0]! + 1);
  assert.equal(recoveredHash(planRecovery(dir, { repair: false })), liveHash);
  const v = verifyTool(dir);
  assert.equal(v.code, 0, v.out);
  assert.match(v.out, new RegExp(`replay: seqs ${snapshotSeqs[0]! + 1}\\.\\.${liveSeq} from the snapshot`));
});

test('corruption: with one snapshot only, prune keeps every segment: if that snapshot is lost or damaged, the journal ' +
  'alone recovers', () => {
  const dir = copy();
  const snaps = listSnapshots(dir);
  for (const x of snaps.slice(1)) rmSync(x.path);
  const segs = segmentFiles(dir);
  const pruned = prune(dir, false);
  assert.deepEqual([pruned.prunedSegments, pruned.prunedSnapshots, segmentFiles(dir)], [[], [], segs]);
  rmSync(snaps[0]!.path);
  assert.equal(recoveredHash(planRecovery(dir, { repair: false })), liveHash);
});

test('corruption: a segment with another layout fingerprint is a fault at the fingerprint', () => {
  const dir = copy();
  const seg = middleSegments(dir)[0]!;
  const b = readFileSync(seg);
  const h = decodeFileHeader(b, SEGMENT_MAGIC);
  // A well-formed header (valid checksum) from a build with another layout.
  b.set(encodeFileHeader({ ...h, fingerprint: (h.fingerprint ^ 0x10) >>> 0 }), 0);
  writeFileSync(seg, b);
  expectFault(dir, seg, 12, /layout fingerprint/);
});

function damageSnapshot(path: string, how: 'flip' | 'truncate' | 'fingerprint'): void {
  const b = readFileSync(path);
  if (how === 'flip') {
    flipBit(path, FILE_HEADER_BYTES + Math.floor((b.length - FILE_HEADER_BYTES) / 2), 5);
  } else if (how === 'truncate') {
    truncateSync(path, b.length - 1000);
  } else {
    const h = decodeFileHeader(b, SNAPSHOT_MAGIC);
    b.set(encodeFileHeader({ ...h, fingerprint: (h.fingerprint + 1) >>> 0 }), 0);
    writeFileSync(path, b);
  }
}

for (const how of ['flip', 'truncate', 'fingerprint'] as const) {
  test(`corruption: a damaged newest snapshot (${how}) is skipped for the older one, with the same final hash`, () => {
    const dir = copy();
    const [newest, older] = listSnapshots(dir);
    damageSnapshot(newest!.path, how);
    const plan = planRecovery(dir, { repair: true });
    assert.equal(plan.snapshot?.path, older!.path);
    assert.deepEqual(plan.rejectedSnapshots.map((r) => r.path), [newest!.path]);
    assert.match(
      plan.rejectedSnapshots[0]!.reason,
      { flip: /body checksum mismatch/, truncate: /header says/, fingerprint: /layout fingerprint/ }[how],
    );
    assert.equal(plan.lastSeq, liveSeq);
    assert.equal(recoveredHash(plan), liveHash);
    assert.equal(stateHash(recoverState(plan)), liveHash);
    const v = verifyTool(dir);
    assert.equal(v.code, 3, v.out);
    assert.ok(v.out.includes(`REPAIRABLE ${newest!.path} at byte 0: rejected`), v.out);
    assert.ok(existsSync(newest!.path), 'recovery leaves the damaged snapshot for inspection');
  });
}

test('corruption: with every snapshot damaged, recovery falls back to the journal from seq 1', () => {
  const dir = copy();
  for (const s of listSnapshots(dir)) damageSnapshot(s.path, 'flip');
  const plan = planRecovery(dir, { repair: true });
  assert.equal(plan.snapshot, null);
  assert.equal(plan.rejectedSnapshots.length, 2);
  assert.equal(recoveredHash(plan), liveHash);
});

test('corruption: a leftover snapshot temp file is removed at start-up and ignored by everything else', () => {
  const dir = copy();
  const newest = listSnapshots(dir)[0]!;
  const tmp = `${newest.path.replace(/\d{20}/, String(liveSeq).padStart(20, '0'))}.tmp-4242-1700000000000`;
  writeFileSync(tmp, readFileSync(newest.path).subarray(0, 5000));
  assert.equal(listSnapshots(dir)[0]!.path, newest.path);
  assert.equal(planRecovery(dir, { repair: false }).snapshot?.path, newest.path);
  assert.ok(existsSync(tmp), 'repair: false leaves it');
  const v = verifyTool(dir);
  assert.equal(v.code, 0, v.out);
  assert.ok(v.out.includes(`note: ${tmp} is the temp file of an interrupted snapshot write`), v.out);
  const plan = planRecovery(dir, { repair: true });
  assert.ok(!existsSync(tmp), 'repair removes it');
  assert.equal(recoveredHash(plan), liveHash);
});

test('tools/journal: verify exits non-zero from the command line, naming the file and offset', () => {
  const dir = copy();
  const seg = middleSegments(dir)[0]!;
  const victim = frames(seg)[5]!;
  flipBit(seg, victim.offset + 8 + 40, 1);
  const r = spawnSync(process.execPath, [JOURNAL_TOOL, 'verify', '--data-dir', dir], { encoding: 'utf8' });
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.ok(r.stdout.includes(`FAULT ${seg} at byte ${victim.offset}:`), r.stdout);
  const h = spawnSync(process.execPath, [JOURNAL_TOOL, 'hash', '--data-dir', dir], { encoding: 'utf8' });
  assert.equal(h.status, 1);
  assert.ok(h.stderr.includes(`journal fault in ${seg} at byte ${victim.offset}`), h.stderr);
  const u = spawnSync(process.execPath, [JOURNAL_TOOL, 'verify', '--data-dir', dir, '--bogus'], { encoding: 'utf8' });
  assert.equal(u.status, 2);
});

test('tools/journal: usage errors exit 2 with a message', () => {
  const cases: [string[], RegExp][] = [
    [[], /usage/],
    [['frob'], /unknown command/],
    [['dump', '--data-dir', pristine, '--from', 'x'], /--from: expected a non-negative integer/],
    [['dump', '--data-dir', pristine, '--from', '9', '--to', '3'], /after --to/],
    [['dump', '--data-dir', pristine, '--type', 'Nope'], /unknown event "Nope"/],
    [['dump', '--data-dir', pristine, '--check-every', '3'], /unknown option/],
    [['hash', '--data-dir', pristine, '--at'], /--at needs a value/],
    [['verify', '--data-dir', pristine, '--engine', '{"nope":1}'], /unknown setting nope/],
    [['verify', '--data-dir', join(pristine, 'no-such-dir')], /no such data directory/],
  ];
  for (const [argv, why] of cases) {
    const r = journalTool(...argv);
    assert.equal(r.code, 2, argv.join(' '));
    assert.match(r.err, why, argv.join(' '));
    assert.equal(r.out, '');
  }
});

test('tools/journal: hash --at gives the live hash at that seq, from a snapshot or the journal alone', () => {
  const seqs = [...liveHashes.keys()].filter((s) => s < liveSeq).slice(-3);
  for (const seq of seqs) {
    for (const extra of [[], ['--ignore-snapshots']]) {
      const r = journalTool('hash', '--data-dir', pristine, '--at', String(seq), '--engine', ENGINE, ...extra);
      assert.equal(r.code, 0, r.err);
      const j = JSON.parse(r.out) as { seq: string; state_hash: string; snapshot_seq: string };
      assert.equal(j.seq, String(seq));
      assert.equal(j.state_hash, liveHashes.get(seq));
      assert.equal(j.snapshot_seq, extra.length === 0 ? String(snapshotSeqs.at(-1)) : '0');
    }
  }
  const end = journalTool('hash', '--data-dir', pristine);
  assert.equal((JSON.parse(end.out) as { state_hash: string }).state_hash, liveHash);
  const past = journalTool('hash', '--data-dir', pristine, '--at', String(liveSeq + 1));
  assert.equal(past.code, 1);
  assert.match(past.err, new RegExp(`ends at ${liveSeq}`));
});

test('tools/journal: dump prints every record once, and its filters select exactly the matching records', () => {
  // The reference: every record of every segment, decoded here from the raw frames.
  type Rec = { file: string; offset: number; r: Record<string, unknown> };
  const all: Rec[] = [];
  for (const seg of segmentFiles(pristine)) {
    const b = readFileSync(seg);
    const buf = new ArrayBuffer(b.length + 8);
    new Uint8Array(buf).set(b);
    const m = memOf(buf);
    for (const f of frames(seg)) all.push({ file: basename(seg), offset: f.offset, r: decodeRecord(m, f.offset + 8) });
  }
  const key = (file: unknown, offset: unknown): string => `${String(file)}@${String(offset)}`;
  const run = (...args: string[]): Record<string, unknown>[] => {
    const r = journalTool('dump', '--data-dir', pristine, ...args);
    assert.equal(r.code, 0, r.err);
    return r.out.trimEnd().split('\n').filter((l) => l !== '').map((l) => JSON.parse(l) as Record<string, unknown>);
  };
  const same = (got: Record<string, unknown>[], want: Rec[], what: string): void => {
    assert.ok(want.length > 0, `${what}: the reference selects something`);
    assert.deepEqual(got.map((g) => key(g.file, g.offset)), want.map((w) => key(w.file, w.offset)), what);
  };

  const everything = run();
  same(everything, all, 'no filter');
  // Field by field: u64 values as decimal strings, the rest as decoded.
  for (let i = 0; i < everything.length; i += 997) {
    const g = everything[i]!;
    const w = all[i]!.r;
    const info = recordInfo(w.type as string);
    assert.equal(g.type, w.type);
    assert.equal(g.seq, String(w.seq));
    assert.equal(g.ts, String(w.ts));
    for (const f of info.fields) {
      if (f.name.startsWith('reserved') || f.name === 'secret') continue;
      assert.deepEqual(g[f.name], f.type === 'u64' ? String(w[f.name]) : w[f.name], `${w.type as string}.${f.name}`);
    }
  }

  const from = Math.floor(liveSeq / 3);
  const to = from + 400;
  same(
    run('--from', String(from), '--to', String(to)),
    all.filter((x) => (x.r.seq as number) >= from && (x.r.seq as number) <= to),
    'seq range',
  );
  same(run('--type', 'Filled,OrderCanceled'), all.filter((x) => x.r.type === 'Filled' || x.r.type === 'OrderCanceled'), 'types');
  const concerns = (x: Rec, a: number): boolean =>
    x.r.account === a || x.r.account_id === a || x.r.maker_account === a || x.r.taker_account === a;
  same(run('--account', '3'), all.filter((x) => concerns(x, 3)), 'account');
  assert.ok(all.some((x) => concerns(x, 3) && x.r.account !== 3), 'the account filter also matches fills where the account is the maker');
  same(run('--market', '2'), all.filter((x) => x.r.market_id === 2), 'market');
  same(
    run('--account', '2', '--market', '1', '--type', 'Filled', '--from', String(from)),
    all.filter((x) => concerns(x, 2) && x.r.market_id === 1 && x.r.type === 'Filled' && (x.r.seq as number) >= from),
    'combined',
  );

  // Key secrets are redacted unless asked for.
  const keys = all.filter((x) => x.r.type === 'KeyCreated');
  assert.ok(keys.length > 0);
  assert.ok(run('--type', 'KeyCreated').every((g) => g.secret === 'redacted'));
  assert.deepEqual(run('--type', 'KeyCreated', '--secrets').map((g) => g.secret), keys.map((k) => k.r.secret));
});

test('tools/journal: dump of a damaged journal prints what is readable and exits 1', () => {
  const dir = copy();
  const seg = middleSegments(dir)[0]!;
  const fs = frames(seg);
  const victim = fs[10]!;
  flipBit(seg, victim.offset + 8 + 24, 0);
  const r = journalTool('dump', '--data-dir', dir, '--from', String(fs[0]!.seq), '--to', String(fs.at(-1)!.seq));
  assert.equal(r.code, 1);
  assert.ok(r.err.includes(`FAULT journal fault in ${seg} at byte ${victim.offset}`), r.err);
  const offsets = r.out
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as { file: string; offset: number })
    .filter((g) => g.file === basename(seg))
    .map((g) => g.offset);
  assert.deepEqual(offsets, fs.slice(0, 10).map((f) => f.offset));
});
