// A snapshot's capture in steps (src/main/exchange.ts snapshotOf,
// ViewsCapture, GatewayCore.holdEvents): while a large read model is copied
// a step per event-loop turn, the control plane keeps taking events off the
// ring (held, unapplied), so the engine never waits for it; the model stays
// at the capture's seq, the snapshot holds exactly that state, and the held
// events are applied afterwards in order.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.js';
import { GatewayCore } from '../../src/gateway/core.js';
import { readSnapshot, writeSnapshot } from '../../src/journal/snapshot.js';
import { decodeViews, serializeCaptured, stateHash } from '../../src/journal/state_codec.js';
import { LAYOUT_FINGERPRINT } from '../../src/layout/records.js';
import { decodeRecord, encodeToMem } from '../../src/layout_codec/record_codec.js';
import { RingEventOut } from '../../src/main/engine_loop.js';
import { snapshotOf } from '../../src/main/exchange.js';
import { BroadcastProducer, BroadcastRing } from '../../src/ring/broadcast_ring.js';
import { CommandProducer } from '../../src/ring/command_producer.js';
import { Doorbell } from '../../src/ring/doorbell.js';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { Views } from '../../src/views/views.js';
import { JOURNAL_ENGINE_CONFIG } from '../journal/journal_fixture.js';
import { ReferenceModel } from '../support/reference_model.js';
import { CommandGenerator, DIFF_CONFIG } from '../support/random_commands.js';

/** The engine's event output, counting the records it writes. */
class CountingOut extends RingEventOut {
  records = 0;
  override claim(len: number): number {
    this.records++;
    return super.claim(len);
  }
}

/** An engine publishing into a small event ring, and a control plane's core reading it (its own loop waiter stopped). */
function rig(seed: number): { core: GatewayCore; engine: Engine; out: RingEventOut; run: (n: number) => number } {
  const eventRing = BroadcastRing.allocate(1 << 18, 2, LAYOUT_FINGERPRINT);
  const core = new GatewayCore({
    producerId: 1,
    producer: new CommandProducer(SpscRing.allocate(1 << 16, LAYOUT_FINGERPRINT), Doorbell.attach(Doorbell.allocate()), LAYOUT_FINGERPRINT),
    eventRing,
    consumerIndex: 0,
    views: new Views(JOURNAL_ENGINE_CONFIG),
    response_budget_ms: 60_000,
    shed_pending: 1024,
    wait: 'spin',
  });
  core.waiter.stop();
  const out = new CountingOut(new BroadcastProducer(eventRing, LAYOUT_FINGERPRINT));
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out);
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(seed, model);
  // n random commands (a few hundred at most between drains: the ring holds 256 KiB); returns the events they published.
  const run = (n: number): number => {
    const before = out.records;
    for (let i = 0; i < n; i++) {
      const { mem } = encodeToMem(gen.next());
      model.execute(decodeRecord(mem, 0));
      engine.execute(mem, 0);
      out.publish();
    }
    return out.records - before;
  };
  return { core, engine, out, run };
}

test('snapshot capture: held events leave the ring unapplied, the model keeps its seq, and the release applies them in order', () => {
  const { core, engine, out, run } = rig(41);
  for (let k = 0; k < 10; k++) {
    run(200);
    core.drain();
  }
  const seq = core.views.asOfSeq;
  assert.equal(seq, engine.state.seq);
  const hash = stateHash(core.views.state);
  core.holdEvents();
  assert.throws(() => core.holdEvents(), /held already/);
  let held = 0;
  // Twenty times the ring's capacity in events: the engine goes on only because every drain empties the ring.
  for (let k = 0; k < 40; k++) {
    const published = run(200);
    assert.equal(core.drain(), published, 'every event published left the ring');
    held += published;
    assert.equal(core.views.asOfSeq, seq);
  }
  assert.equal(out.stalls, 0, 'the engine never waited for the ring');
  assert.equal(stateHash(core.views.state), hash, 'nothing was applied while held');
  assert.equal(core.releaseEvents(), held);
  assert.equal(core.views.asOfSeq, engine.state.seq);
  assert.equal(stateHash(core.views.state), stateHash(engine.state), 'the held events applied in order');
  assert.equal(core.releaseEvents(), 0, 'a release without a hold does nothing');
  core.close();
});

test('snapshot capture: a capture in steps while the engine keeps publishing holds the state at its seq', async () => {
  const { core, engine, out, run } = rig(43);
  for (let k = 0; k < 10; k++) {
    run(200);
    core.drain();
  }
  const seq = core.views.asOfSeq;
  const hash = stateHash(core.views.state);
  const dir = mkdtempSync(join(tmpdir(), 'dx-snapshot-capture-'));
  try {
    // The engine publishes a batch every event-loop turn until the snapshot is written.
    let feeding = true;
    let batches = 0;
    const feed = (): void => {
      if (!feeding) return;
      run(100);
      batches++;
      setImmediate(feed);
    };
    setImmediate(feed);
    const jobs = {
      snapshot: async (args: { seq: number; tree: unknown }) => {
        const body = serializeCaptured(args.tree);
        const path = writeSnapshot(dir, args.seq, body, false);
        return { seq: args.seq, path, bytes: body.length, ms: 0, prunedSnapshots: [], prunedSegments: [] };
      },
    };
    const done = await snapshotOf(core, jobs, { data_dir: dir, durability: 'none', snapshot_step_bytes: 4096 }).finally(() => {
      feeding = false;
    });
    assert.ok(done.captureSteps > 20, `${done.captureSteps} steps`);
    assert.ok(done.heldRecords > 0, 'events arrived and were held during the capture');
    assert.ok(batches > 10, `${batches} batches published during the capture`);
    assert.equal(out.stalls, 0, 'the engine never waited for the ring');
    assert.equal(done.seq, seq, 'the snapshot is of the seq the capture began at');
    const back = decodeViews(readSnapshot(done.path).body);
    assert.equal(back.asOfSeq, seq);
    assert.equal(stateHash(back.state), hash, 'the snapshot holds the state at its seq, nothing applied during the capture');
    // The control plane applied the held events when the capture ended.
    core.drain();
    assert.equal(core.views.asOfSeq, engine.state.seq);
    assert.equal(stateHash(core.views.state), stateHash(engine.state));
  } finally {
    core.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
