// deposit_ref_cap changed at a restart (loadBase: a setting changed at a
// restart applies from the replay on). Raised: a journal written under the
// smaller cap holds a ref deposited again after it was forgotten; replayed
// under the larger cap the state still remembers it, and the new deposit
// replaces it (before, evolve asserted and the exchange could not start).
// Lowered: a snapshot's accounts hold more refs than the new cap; loading
// it forgets the oldest at once, so the refs matched are the newest N and
// verify() (run after every command with --verify 1) holds.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { verify } from '../../src/engine/verify.js';
import { loadBase, planRecovery } from '../../src/journal/recovery.js';
import { writeSnapshot } from '../../src/journal/snapshot.js';
import { decodeViews, encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { Views } from '../../src/views/views.js';

let ts = 1_750_000_000_000_000_000n;
let corr = 0;

/** Runs cmd on engine, applies its events to the read models, returns them decoded. */
function send(engine: Engine, out: BufferEventOut, models: Views[], cmd: RecordObject): RecordObject[] {
  ts += 1_000_000n;
  const { mem } = encodeToMem({ producer: 100, correlation: ++corr, ts, ...cmd });
  engine.execute(mem, 0);
  for (const o of out.offsets()) for (const v of models) v.apply(out.mem, o);
  return out.take();
}

test('deposit_ref_cap raised at a restart: a ref deposited again after the smaller cap forgot it replays, and names the newest deposit',
  () => {
    const out = new BufferEventOut(1 << 20);
    const engine = new Engine({ deposit_ref_cap: 1 }, out);
    const replayed = new Views({ deposit_ref_cap: 2 });
    send(engine, out, [replayed], { type: 'CreateAccount' });
    send(engine, out, [replayed], { type: 'Deposit', account: 1, amount: 100, ref: 'r1' });
    send(engine, out, [replayed], { type: 'Deposit', account: 1, amount: 100, ref: 'r2' });
    // r1 again: a new deposit for the engine under cap 1; the replay under cap 2 still remembers the first r1.
    const again = send(engine, out, [replayed], { type: 'Deposit', account: 1, amount: 100, ref: 'r1' });
    assert.deepEqual(again.map((e) => e.type), ['Deposited', 'CommandCompleted']);
    const acc = replayed.state.accounts;
    assert.equal(acc.available[1], 300);
    assert.deepEqual(verify(replayed.state), []);
    assert.equal(acc.dCount[1], 2);
    assert.deepEqual([...acc.depositRefIndex.keys()].sort(), ['1\u0000r1', '1\u0000r2']);
    // Deciding on under cap 2: r1 is a retry of the newest r1 (seq 4).
    const out2 = new BufferEventOut(1 << 20);
    const e2 = new Engine({ deposit_ref_cap: 2 }, out2, replayed.state);
    const retry = send(e2, out2, [], { type: 'Deposit', account: 1, amount: 100, ref: 'r1' });
    assert.deepEqual(retry.map((e) => [e.type, e.result]), [['CommandCompleted', 4]]);
    assert.equal(acc.available[1], 300);
  });

test('deposit_ref_cap lowered at a restart: loading the snapshot forgets each account\'s oldest refs past the new cap', () => {
  const out = new BufferEventOut(1 << 20);
  const engine = new Engine({ deposit_ref_cap: 5 }, out);
  const views = new Views({ deposit_ref_cap: 5 });
  send(engine, out, [views], { type: 'CreateAccount' });
  for (let i = 0; i < 5; i++) send(engine, out, [views], { type: 'Deposit', account: 1, amount: 100, ref: `wire-${i}` });
  const dir = mkdtempSync(join(tmpdir(), 'dx-deposit-cap-'));
  try {
    writeSnapshot(dir, views.asOfSeq, encodeViews(views), false);
    const state = loadBase(planRecovery(dir, { repair: false }), { deposit_ref_cap: 2 }).state;
    assert.deepEqual([...state.accounts.depositRefIndex.keys()].sort(), ['1\u0000wire-3', '1\u0000wire-4']);
    assert.deepEqual(verify(state), []);
    const out2 = new BufferEventOut(1 << 20);
    const e2 = new Engine({ deposit_ref_cap: 2 }, out2, state);
    // wire-0 was forgotten: a new deposit; wire-4 is remembered: a retry.
    assert.deepEqual(send(e2, out2, [], { type: 'Deposit', account: 1, amount: 100, ref: 'wire-0' }).map((e) => e.type),
      ['Deposited', 'CommandCompleted']);
    assert.deepEqual(send(e2, out2, [], { type: 'Deposit', account: 1, amount: 100, ref: 'wire-4' }).map((e) => e.type),
      ['CommandCompleted']);
    assert.deepEqual(verify(state), []);
    assert.equal(state.accounts.available[1], 600);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('deposit refs in a snapshot: stored once, in their rows; the index is rebuilt on decode and the state hash is the same', () => {
  const out = new BufferEventOut(1 << 20);
  const engine = new Engine({ deposit_ref_cap: 3 }, out);
  const views = new Views({ deposit_ref_cap: 3 });
  for (let a = 1; a <= 3; a++) send(engine, out, [views], { type: 'CreateAccount' });
  for (let i = 0; i < 12; i++) send(engine, out, [views], { type: 'Deposit', account: 1 + (i % 3), amount: 10 + i, ref: `t-${i % 5}` });
  const bytes = encodeViews(views);
  assert.equal(Buffer.from(bytes).includes('depositRefIndex'), false, 'the index is not stored');
  const back = decodeViews(bytes);
  assert.equal(stateHash(back.state), stateHash(views.state));
  const keys = (v: Views): [string, number][] => [...v.state.accounts.depositRefIndex].sort((x, y) => (x[0] < y[0] ? -1 : 1));
  assert.deepEqual(keys(back), keys(views));
  assert.equal(back.state.accounts.depositRefIndex.size, 9);
  assert.deepEqual(verify(back.state), []);
});
