// RecordRing: ordinals are stable, storage doubles up to max without losing a
// record, and once full the oldest records are overwritten first.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RecordRing } from '../../src/views/record_ring.js';

test('record ring: grows by doubling to max, then keeps the newest max records', () => {
  const r = new RecordRing(40, 1, 2, 4);
  for (let n = 0; n < 100; n++) {
    const i = r.push();
    r.f64[i] = n * 10;
    r.u32[i * 2] = n;
    r.u32[i * 2 + 1] = n + 1;
    const from = Math.max(0, n + 1 - 40);
    assert.equal(r.retainedFrom, from);
    // Every retained record reads back by its ordinal.
    for (let k = from; k <= n; k++) {
      const j = r.slotOf(k);
      assert.deepEqual([r.f64[j], r.u32[j * 2], r.u32[j * 2 + 1]], [k * 10, k, k + 1]);
    }
  }
  assert.equal(r.total, 100);
  assert.equal(r.f64.length, 40);
  assert.throws(() => r.slotOf(59), /not retained/);
  assert.throws(() => new RecordRing(0, 1, 1), /positive/);
});
