// GatewayCore (src/gateway/core.ts) with a full command ring, the engine
// run by hand in the same thread: a request answered 504 while its command
// still waits in the ring never hands its correlation to a later request,
// however many sheds cycle its slot (a shed, which writes nothing, keeps the
// slot's 16-bit generation); and commands of one thread are sequenced in the
// order they were held (nothing overtakes a command waiting for room); and
// answers drained without an expire leave nothing to scan in the expiry queue;
// and a batch is shed whole when its items would be (wouldShed).
// Test process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/gateway/envelope.js';
import type { Completion, CompletionWaiter, GatewayCore } from '../../src/gateway/core.js';
import { CancelOrder, Header, PlaceOrder, T_CANCEL_ORDER, T_PLACE_ORDER } from '../../src/layout/records.js';
import type { Mem } from '../../src/lib/mem.js';
import { coreWithEngine, type EngineRig } from '../support/gateway_core.js';

const BUDGET_MS = 1000;

class Got implements CompletionWaiter {
  calls: (Completion | null)[] = [];
  complete(c: Completion | null): void {
    this.calls.push(c);
  }

  get c(): Completion | null | undefined {
    return this.calls.at(-1);
  }
}

const nothing = { write(_m: Mem, _o: number): void {} };

/** True when e is the 503 shed of a full command ring; anything else is rethrown. */
function isShed(e: unknown): boolean {
  if (e instanceof ApiError && e.code === 'shed') return true;
  throw e;
}

/** Holds placements of account 7 until the command ring is full (the next one is shed). */
function fillRing(core: GatewayCore): void {
  for (;;) {
    try {
      core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 7, true, nothing, new Got());
    } catch (e) {
      if (isShed(e)) return;
    }
  }
}

function rig(budgetMs: number, shedPending: number): EngineRig {
  return coreWithEngine({ budgetMs, shedPending });
}

test('gateway core: a completion of a command that timed out is never handed to a later request (generation wrap)', async () => {
  const { core, engineSide, out, engine } = rig(BUDGET_MS, 1024);

  // 1. The engine is stalled: placements fill the command ring (each held, published on the next turn).
  const placed: Got[] = [];
  for (;;) {
    const g = new Got();
    try {
      core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 7, true, nothing, g);
    } catch (e) {
      if (isShed(e)) break; // ring full: shed
    }
    placed.push(g);
  }
  await new Promise((r) => setImmediate(r)); // publishNow
  // 2. Their budget passes: every one is answered 504 (null); the commands stay in the ring.
  core.expire(performance.now() + BUDGET_MS + 1);
  for (const g of placed) assert.deepEqual(g.calls, [null]);
  // 3. Sheddable requests keep arriving while the ring is full: each is shed (503), at once.
  let sheds = 0;
  for (let i = 0; i < 65535; i++) {
    try {
      core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 8, true, nothing, new Got());
    } catch (e) {
      if (isShed(e)) sheds++;
    }
  }
  assert.equal(sheds, 65535);
  // 4. A cancel (never shed) from another account is held, waiting for room in the ring.
  const cancel = new Got();
  core.hold(T_CANCEL_ORDER, CancelOrder.SIZE, 9, false, { write: (m, o) => CancelOrder.set_order_id(m, o, 12345) }, cancel);
  // 5. The engine catches up: it sequences the old placements (their requests were answered 504 long ago).
  let lastPlacementSeq = 0;
  for (let off = engineSide.peek(); off >= 0; off = engineSide.peek()) {
    const type = Header.type(engineSide.mem, off);
    const seq = engine.execute(engineSide.mem, off);
    if (type === T_PLACE_ORDER) lastPlacementSeq = seq;
    engineSide.advance();
  }
  out.publish();
  core.drain();
  // The cancel must be answered with its own command's outcome, not with the completion of a placement it never sent.
  for (const c of cancel.calls) {
    assert.ok(
      c === null || c.seq !== lastPlacementSeq,
      `the cancel (account 9) was answered with the completion of the timed-out placement of account 7 at seq ${lastPlacementSeq}: ` +
        JSON.stringify(c),
    );
  }
  core.close();
});

test('gateway core: commands of one thread are sequenced in the order they were held (a deferred one is not overtaken)', async () => {
  const { core, runEngine } = rig(60_000, 1 << 16);
  // The ring fills (a burst of placements).
  fillRing(core);
  await new Promise((r) => setImmediate(r));
  // First a cancel (never shed): no room, so it waits in the core's queue.
  const cancel = new Got();
  core.hold(T_CANCEL_ORDER, CancelOrder.SIZE, 7, false, { write: (m, o) => CancelOrder.set_order_id(m, o, 1) }, cancel);
  // The engine takes a few commands meanwhile (another thread: it releases room).
  runEngine(20);
  // Then a second cancel (never shed) and a placement (sheddable) of the same account, after the first cancel.
  const second = new Got();
  core.hold(T_CANCEL_ORDER, CancelOrder.SIZE, 7, false, { write: (m, o) => CancelOrder.set_order_id(m, o, 2) }, second);
  let shed = false;
  try {
    core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 7, true, nothing, new Got());
  } catch (e) {
    shed = isShed(e);
  }
  await new Promise((r) => setImmediate(r));
  for (let i = 0; i < 10; i++) {
    runEngine(1e9);
    core.drain();
    await new Promise((r) => setImmediate(r));
  }
  assert.ok(cancel.c && second.c, 'both cancels were answered');
  assert.ok(cancel.c.seq < second.c.seq, `the first cancel was sequenced at ${cancel.c.seq}, after the second at ${second.c.seq}`);
  // Behind commands waiting for room, a sheddable one is shed (503), never written ahead of them.
  assert.ok(shed, 'the placement behind them was shed');
  core.close();
});

test('gateway core: answers drained without an expire do not pile up in the expiry queue (the oldest held is found at once)', async () => {
  const { core, runEngine } = rig(60_000, 1 << 16);
  // The lanes drain on their own; only the waiter's poll (stopped here) expires. Every hold() checks the oldest held
  // request (engine lag): answered ones at the queue's head must be dropped as it passes them, not scanned again.
  const queue = core as unknown as { expiryQueue: number[]; expiryHead: number };
  let held = 0;
  for (let round = 0; round < 200; round++) {
    for (;;) {
      try {
        core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 7, true, nothing, new Got());
        held++;
      } catch (e) {
        if (isShed(e)) break;
      }
    }
    await new Promise((r) => setImmediate(r)); // publishNow
    runEngine();
    core.drain();
    assert.equal(core.pending, 0, 'every held placement was answered by the drain');
  }
  assert.ok(held > 2000, `held ${held} placements`);
  // At most one ring's worth of entries (the last round's) is left, whatever was held before.
  assert.ok(queue.expiryQueue.length - queue.expiryHead <= held / 100, `queue ${queue.expiryQueue.length}, head ${queue.expiryHead}`);
  assert.ok(queue.expiryQueue.length <= held / 100, `the queue kept ${queue.expiryQueue.length} entries of ${held} held`);
  core.close();
});

test('gateway core: wouldShed agrees with the holds behind a command waiting for room (a batch is shed whole)', async () => {
  const { core, runEngine } = rig(60_000, 1 << 16);
  // The ring fills; a cancel (never shed) then waits in the core's queue for room.
  fillRing(core);
  await new Promise((r) => setImmediate(r)); // publishNow
  core.hold(T_CANCEL_ORDER, CancelOrder.SIZE, 7, false, { write: (m, o) => CancelOrder.set_order_id(m, o, 1) }, new Got());
  // The engine (another thread) takes every command, so the ring has room; this thread has not drained yet.
  runEngine();
  // A batch of 5 placements: the route's whole-batch check (routes.ts place_batch), then one hold per item.
  const n = 5;
  const batchShed = core.wouldShed(n);
  let itemsShed = 0;
  for (let i = 0; i < n; i++) {
    try {
      core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 7, true, nothing, new Got());
    } catch (e) {
      if (isShed(e)) itemsShed++;
    }
  }
  const why = `wouldShed(${n}) said no, then ${itemsShed} of the ${n} holds were shed (a 201 of shed items, not 503)`;
  assert.ok(batchShed || itemsShed === 0, why);
  core.close();
});
