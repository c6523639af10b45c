// A restart from a snapshot with lower retention caps (terminal_cap,
// reject_cap: tunables that loadBase applies from the replay on). The engine
// thread's matching-only state keeps only counts of the retained rows, the
// read models keep the rows: both must evict down to the new cap at the first
// order that ends, or they keep different orders (and client_order_id
// indexes) and the engine decides other than the read models answer. Here a
// matching-only engine and a full one, loaded from the same snapshot, must
// emit the same events for every command after the restart.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { loadBase, planRecovery } from '../../src/journal/recovery.js';
import { writeSnapshot } from '../../src/journal/snapshot.js';
import { encodeViews } from '../../src/journal/state_codec.js';
import { decodeRecord, encodeToMem } from '../../src/layout_codec/record_codec.js';
import type { Mem } from '../../src/lib/mem.js';
import { Views } from '../../src/views/views.js';
import { ReferenceModel } from '../support/reference_model.js';
import { CommandGenerator, DIFF_CONFIG } from '../support/random_commands.js';

for (const seed of [1, 2, 3]) {
  test(`retention caps lowered at a restart: the matching-only engine decides as a full one (seed ${seed})`, () => {
    const model = new ReferenceModel(DIFF_CONFIG);
    const gen = new CommandGenerator(seed, model);
    const next = (): Mem => {
      const { mem } = encodeToMem(gen.next());
      model.execute(decodeRecord(mem, 0));
      return mem;
    };
    const out = new BufferEventOut(1 << 22);
    const engine = new Engine(DIFF_CONFIG, out);
    const views = new Views(DIFF_CONFIG);
    for (let i = 0; i < 2000; i++) {
      engine.execute(next(), 0);
      for (const o of out.offsets()) views.apply(out.mem, o);
      out.reset();
    }
    const dir = mkdtempSync(join(tmpdir(), 'dx-cap-restart-'));
    try {
      writeSnapshot(dir, views.asOfSeq, encodeViews(views), false);
      const plan = planRecovery(dir, { repair: false });
      const lower = { terminal_cap: 2, reject_cap: 1 };
      const matchingState = loadBase(plan, lower).state;
      matchingState.enterMatchingOnly();
      const mOut = new BufferEventOut(1 << 22);
      const fOut = new BufferEventOut(1 << 22);
      const matching = new Engine(lower, mOut, matchingState);
      const full = new Engine(lower, fOut, loadBase(plan, lower).state);
      for (let i = 0; i < 3000; i++) {
        const mem = next();
        matching.execute(mem, 0);
        full.execute(mem, 0);
        assert.deepEqual(mOut.take(), fOut.take(), `command #${i} after the restart (${decodeRecord(mem, 0).type})`);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
