// gtd orders that expire at the same expiry_ts are canceled in ascending
// order_id (README, "ClockTick" step 1), however the order slab reused its
// slots: the engine thread's matching-only state frees the slot of a finished
// order without a client_order_id, so a later order can sit in a lower slot.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ScenarioRunner } from './scenario.js';
import { CANCEL_REASON_NAMES } from '../../src/layout/records.js';

// Matching-only (the engine thread's state): #1's slot is freed when it is canceled, and #3 takes it.
// Full state (read models, the reference engine): #1's slot is freed when #4's cancel evicts it (terminal_cap 1); #5 takes it.
const SCENARIOS = {
  'matching-only': `
      a1 buy yes 10 x1 -> resting
      a1 buy yes 11 x1 gtd=+5000 -> resting
      a1 cancel #1 -> ok canceled=1
      a1 buy yes 12 x1 gtd=+5000 -> resting
  `,
  full: `
      a1 buy yes 10 x1 -> resting
      a1 buy yes 11 x1 gtd=+5000 -> resting
      a1 cancel #1 -> ok canceled=1
      a1 buy yes 13 x1 -> resting
      a1 cancel #3 -> ok canceled=1
      a1 buy yes 12 x1 gtd=+5000 -> resting
  `,
};

for (const [mode, orders] of Object.entries(SCENARIOS)) {
  test(`gtd orders expiring at one ts are canceled by order_id (${mode} state)`, () => {
    const r = new ScenarioRunner({ terminal_cap: 1 });
    if (mode === 'matching-only') r.engine.state.enterMatchingOnly();
    r.run(`
      market
      account a1 100000
      ${orders}
    `);
    // The two gtd orders expire at the same ns (now + 5000 ms); the later one sits in the freed lower slot.
    r.now += 5_000_000_000n;
    const ev = r.send({ type: 'ClockTick' });
    const expired = ev.filter((e) => e.type === 'OrderCanceled' && CANCEL_REASON_NAMES[e.reason as number] === 'expired');
    const ids = expired.map((e) => e.order_id as number);
    assert.equal(ids.length, 2);
    assert.deepEqual(ids, [...ids].sort((a, b) => a - b), `expired in order ${ids.join(', ')}, not by order_id`);
  });
}
