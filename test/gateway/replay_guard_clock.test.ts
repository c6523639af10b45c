// The replay guard cannot be made to forget a signature that its timestamp
// window still accepts by a wall-clock step either way: the entry's life and
// the window are both on the request's own timestamp and the same wall clock
// (the ±5 s window is the contract's, so the guard stays on Date.now()). For
// every (step, replay delay) pair a replay is refused (by the window or as
// replayed), never taken as a first use.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkTimestamp, ReplayGuard } from '../../src/gateway/auth.js';

test('replay guard: no wall-clock step lets a replay inside the window through', () => {
  const t0 = 1_800_000_000_123;
  for (const step of [-60_000, -10_000, -5_001, -4_999, -1000, -1, 0, 1, 999, 1000, 4_999, 5_000, 5_001, 10_000, 3_600_000]) {
    for (const lag of [0, 1, 500, 999, 1000, 4_000, 4_999, 5_000]) {
      const g = new ReplayGuard(ReplayGuard.allocate(1 << 4));
      const d = new Int32Array([1, 2, 3, 4, 5, 6, 7, 8]);
      const ts = t0 + 17;
      assert.equal(g.firstUse(d, ts, t0), 'first');
      const now = t0 + lag + step;
      // Another request probes the same run at the stepped clock first (the deleter), then the replay.
      // (12 other signatures in a table of 16 slots: their probes walk over the first one's slot.)
      for (let k = 0; k < 12; k++) g.firstUse(new Int32Array([100 + k * 7919, k, 3, 4, 5, 6, 7, 9]), now, now);
      const inWindow = checkTimestamp(String(ts), now) === null;
      if (inWindow) assert.equal(g.firstUse(d, ts, now), 'replayed', `step ${step} ms, replay ${lag} ms later`);
    }
  }
});
