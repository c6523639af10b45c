// Fixture for the journal tests: runs a seeded random command stream through
// an in-process Engine and writes every event to a JournalWriter in a temp
// data directory, the way the journal thread does. Also the small helpers the
// journal tests share: a run with a snapshot at its end, tools/journal as a
// child process, recovery of an engine state the way the engine thread does
// it, ClockTick records, and byte surgery on journal files.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Engine } from '../../src/engine/engine.js';
import { evolve } from '../../src/engine/evolve.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import type { ExchangeState } from '../../src/engine/state.js';
import { FILE_HEADER_BYTES, FRAME_HEADER_BYTES, JOURNAL_DIR } from '../../src/journal/format.js';
import { loadBase, planRecovery, replay, type RecoveryPlan } from '../../src/journal/recovery.js';
import { writeSnapshot } from '../../src/journal/snapshot.js';
import { encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { JournalWriter } from '../../src/journal/writer.js';
import type { Mem } from '../../src/lib/mem.js';
import { decodeRecord, encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { Views } from '../../src/views/views.js';
import { ReferenceModel } from '../support/reference_model.js';
import { CommandGenerator, DIFF_CONFIG } from '../support/random_commands.js';

/** The engine configuration of every journaled run (the generator's small caps); recovery must use the same. */
export const JOURNAL_ENGINE_CONFIG = { ...DIFF_CONFIG };

export function tempDataDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `dx-${tag}-`));
}

export function removeDataDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}

export interface JournaledRunOptions {
  /** Sync the writer after every this many commands (default 64). */
  syncEvery?: number;
  segmentBytes?: number;
  /** After command i (a generated one, or one of `extra`, which follow them). */
  each?: (i: number, engine: Engine, writer: JournalWriter) => void;
  /** Every event record, in order, as the journal gets it (e.g. to feed a read model). */
  onEvent?: (m: Mem, o: number) => void;
  /** Groups of commands run after the generated ones, each built from the engine's state when its turn comes. */
  extra?: ((engine: Engine) => RecordObject[])[];
}

/**
 * Executes `count` generated commands of `seed` (then `extra`), journaling
 * every event. The writer is synced after every `syncEvery` commands and at
 * the end, and left open. `out` is the engine's (empty) event buffer, for
 * commands run on the engine afterwards.
 */
export function journaledRun(
  dataDir: string,
  seed: number,
  count: number,
  opts: JournaledRunOptions = {},
): { engine: Engine; writer: JournalWriter; out: BufferEventOut } {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(seed, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine({ ...JOURNAL_ENGINE_CONFIG }, out);
  const writer = new JournalWriter({ dataDir, nextSeq: 1, fsync: false, segmentBytes: opts.segmentBytes });
  const syncEvery = opts.syncEvery ?? 64;
  const run = (i: number, cmd: RecordObject): void => {
    const { mem } = encodeToMem(cmd);
    // The generator aims with the model, so the model must follow the stream.
    model.execute(decodeRecord(mem, 0));
    engine.execute(mem, 0);
    for (const o of out.offsets()) {
      writer.append(out.mem, o);
      opts.onEvent?.(out.mem, o);
    }
    out.reset();
    if ((i + 1) % syncEvery === 0) writer.sync();
    opts.each?.(i, engine, writer);
  };
  for (let i = 0; i < count; i++) run(i, gen.next());
  let i = count;
  for (const group of opts.extra ?? []) for (const cmd of group(engine)) run(i++, cmd);
  writer.sync();
  return { engine, writer, out };
}

/** A journaledRun in 8 KiB segments (several of them), its writer closed; returns the state hash right after command `at`. */
/**
 * A journaled run (closed) and a snapshot at its end, of a read model fed its events (as POST /admin/snapshot on an idle
 * exchange writes it: every record through it was synced). Returns the run's last seq.
 */
export function journaledRunWithSnapshot(dataDir: string, seed: number, count: number, segmentBytes: number): number {
  const mirror = new Views(JOURNAL_ENGINE_CONFIG);
  const run = journaledRun(dataDir, seed, count, { segmentBytes, onEvent: (m, o) => mirror.apply(m, o) });
  run.writer.close();
  assert.equal(mirror.asOfSeq, run.engine.state.seq);
  writeSnapshot(dataDir, mirror.asOfSeq, encodeViews(mirror), false);
  return mirror.asOfSeq;
}

const JOURNAL_TOOL = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));

/** tools/journal as a child process with an empty environment (no DX_DATA_DIR): its exit code, stdout and stderr. */
export function journalTool(...argv: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [JOURNAL_TOOL, ...argv], { encoding: 'utf8', env: {}, maxBuffer: 1 << 26 });
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr };
}

export function journaledRunHashAt(dataDir: string, seed: number, count: number, at: number): string {
  let hash = '';
  const r = journaledRun(dataDir, seed, count, {
    segmentBytes: 8192,
    each: (_i, engine) => {
      if (engine.state.seq === at && hash === '') hash = stateHash(engine.state);
    },
  });
  r.writer.close();
  return hash;
}

/** Plans `dataDir` and checks that it ends at command `seq`, at a command boundary (no torn tail), with the state hash `hash`. */
export function assertRecoversTo(dataDir: string, seq: number, hash: string, repair: boolean): void {
  const plan = planRecovery(dataDir, { repair });
  assert.equal(plan.lastSeq, seq);
  assert.equal(plan.tails.length, 0, 'cut at a command boundary');
  const s = recoverState(plan);
  assert.equal(s.seq, seq);
  assert.equal(stateHash(s), hash);
}

/** An engine's state recovered from a plan, the way the engine thread does it (snapshot, then evolve). */
export function recoverState(plan: RecoveryPlan): ExchangeState {
  const s = loadBase(plan, JOURNAL_ENGINE_CONFIG).state;
  replay(plan, s.seq, (m, o) => evolve(s, m, o));
  return s;
}

/** Executes one command on an engine and returns its events decoded. */
export function executeDecoded(engine: Engine, out: BufferEventOut, cmd: RecordObject): RecordObject[] {
  out.reset();
  const { mem } = encodeToMem(cmd);
  engine.execute(mem, 0);
  return out.take();
}

export function clockTick(ts: bigint): RecordObject {
  return { type: 'ClockTick', producer: 0, correlation: 0, account: 0, seq: 0, ts };
}

/** Segment file names of a data directory, in seq order. */
export function segmentFiles(dataDir: string): string[] {
  return readdirSync(join(dataDir, JOURNAL_DIR)).filter((n) => n.endsWith('.dxj')).sort().map((n) => join(dataDir, JOURNAL_DIR, n));
}

/** Flips one bit of a file in place. */
export function flipBit(path: string, offset: number, bit = 0): void {
  const b = readFileSync(path);
  b[offset] = b[offset]! ^ (1 << bit);
  writeFileSync(path, b);
}

export interface FrameInfo {
  /** Byte offset of the frame (its len field). */
  offset: number;
  len: number;
  seq: number;
  type: number;
}

/** The frames of a well-formed segment, read from the raw bytes (independent of segment.ts). */
export function frames(path: string): FrameInfo[] {
  const b = readFileSync(path);
  const out: FrameInfo[] = [];
  for (let at = FILE_HEADER_BYTES; at + FRAME_HEADER_BYTES <= b.length;) {
    const len = b.readUInt32LE(at);
    if (len === 0 || at + FRAME_HEADER_BYTES + len > b.length) break;
    const rec = at + FRAME_HEADER_BYTES;
    out.push({ offset: at, len, seq: Number(b.readBigUInt64LE(rec + 16)), type: b.readUInt16LE(rec + 4) });
    at = rec + len;
  }
  return out;
}
