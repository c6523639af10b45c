// Fixture for the journal tests: runs a seeded random command stream through
// an in-process Engine and writes every event to a JournalWriter in a temp
// data directory, the way the journal thread does.

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { JournalWriter } from '../../src/journal/writer.js';
import { encodeToMem } from '../../src/lib/record_codec.js';
import { ReferenceModel } from '../engine/reference_model.js';
import { CommandGenerator, DIFF_CONFIG } from '../engine/random_commands.js';

export function tempDataDir(tag: string): string {
  return mkdtempSync(join(tmpdir(), `dx-${tag}-`));
}

export interface JournaledRun {
  engine: Engine;
  writer: JournalWriter;
  /** Calls after each command: (engine, command index). */
}

/**
 * Executes `count` generated commands of `seed`, journaling every event;
 * `each(i)` runs after command i (e.g. to take a snapshot). The writer is
 * synced after every `syncEvery` commands and at the end, and left open.
 */
export function journaledRun(dataDir: string, seed: number, count: number, opts: { syncEvery?: number; segmentBytes?: number; each?: (i: number, engine: Engine, writer: JournalWriter) => void } = {}): { engine: Engine; writer: JournalWriter } {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(seed, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine({ ...DIFF_CONFIG }, out);
  const writer = new JournalWriter({ dataDir, nextSeq: 1, fsync: false, segmentBytes: opts.segmentBytes });
  const syncEvery = opts.syncEvery ?? 64;
  for (let i = 0; i < count; i++) {
    const { mem } = encodeToMem(gen.next());
    // The generator aims with the model, so the model must follow the stream.
    model.execute(decodeCommand(mem));
    engine.execute(mem, 0);
    for (const o of out.offsets()) writer.append(out.mem, o);
    out.reset();
    if ((i + 1) % syncEvery === 0) writer.sync();
    opts.each?.(i, engine, writer);
  }
  writer.sync();
  return { engine, writer };
}

import { decodeRecord } from '../../src/lib/record_codec.js';
function decodeCommand(mem: Parameters<typeof decodeRecord>[0]): ReturnType<typeof decodeRecord> {
  return decodeRecord(mem, 0);
}
