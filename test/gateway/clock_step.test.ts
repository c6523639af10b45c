// GatewayCore's response budget under a wall-clock step (docs/ARCHITECTURE.md,
// "Wall-clock steps"): a held request is answered 504 once its budget has
// passed in real time, neither long after (the clock stepped back) nor at
// once (stepped forward). The core's own waiter (park) polls, as on a gateway
// thread; no engine runs, so the only answer is the 504. Test process, main
// thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Completion, CompletionWaiter } from '../../src/gateway/core.js';
import { PlaceOrder, T_PLACE_ORDER } from '../../src/layout/records.js';
import { coreWithoutEngine } from '../support/gateway_core.js';

const BUDGET_MS = 200;

class Got implements CompletionWaiter {
  calls: (Completion | null)[] = [];
  at = 0;
  complete(c: Completion | null): void {
    this.calls.push(c);
    this.at = performance.now();
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Holds one placement on a fresh core, then steps Date.now() by offsetMs while `f` watches it. */
async function withClockStep(offsetMs: number, f: (g: Got, heldAt: number) => Promise<void>): Promise<void> {
  const realNow = Date.now;
  const core = coreWithoutEngine(BUDGET_MS);
  try {
    const g = new Got();
    const heldAt = performance.now();
    core.hold(T_PLACE_ORDER, PlaceOrder.SIZE, 7, true, { write(): void {} }, g);
    core.kick();
    Date.now = () => realNow() + offsetMs; // NTP, a resumed VM, an operator
    await f(g, heldAt);
  } finally {
    Date.now = realNow;
    core.close();
  }
}

test('the clock steps back 30 s while a request is held: it is still answered 504 about one budget after it was held', async () => {
  await withClockStep(-30_000, async (g, heldAt) => {
    await sleep(BUDGET_MS * 4);
    const waited = (performance.now() - heldAt).toFixed(0);
    assert.deepEqual(g.calls, [null], `${waited} ms after it was held (budget ${BUDGET_MS} ms), the request has no answer`);
  });
});

test('the clock steps forward an hour while a request is held: it is not answered 504 before its budget has passed', async () => {
  await withClockStep(3_600_000, async (g, heldAt) => {
    await sleep(BUDGET_MS * 3);
    assert.deepEqual(g.calls, [null]);
    const after = g.at - heldAt;
    assert.ok(after >= BUDGET_MS - 1, `answered 504 ${after.toFixed(1)} ms after it was held, budget ${BUDGET_MS} ms`);
  });
});
