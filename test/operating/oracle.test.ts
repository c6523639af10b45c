// The simulated oracle feeder and the fair-value helper, without an
// exchange: a sink that records what it is given.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { normalCdf, probabilityAbove, SimulatedFeeder, type OracleTick } from '../../src/oracle/feeder.js';

function recorder(): { ticks: OracleTick[]; sink: (t: OracleTick) => Promise<void> } {
  const ticks: OracleTick[] = [];
  return { ticks, sink: async (t) => void ticks.push(t) };
}

test('feeder: one tick per online source per round, prices near the mid; a seed names one path; paused sources stay silent', async () => {
  const a = recorder();
  const b = recorder();
  const fa = new SimulatedFeeder({ sink: a.sink, sources: [0, 3, 7], seed: 11, start_price: 100, noise_bps: 2 });
  const fb = new SimulatedFeeder({ sink: b.sink, sources: [0, 3, 7], seed: 11, start_price: 100, noise_bps: 2 });
  for (let i = 1; i <= 50; i++) {
    await fa.tickOnce(i * 1000);
    await fb.tickOnce(i * 1000);
    const mid = fa.midPrice;
    for (const t of a.ticks.slice(-3)) {
      assert.ok(Number.isSafeInteger(t.price) && t.price >= 1);
      assert.ok(Math.abs(t.price - mid) / mid < 0.002, `source ${t.source_id} within 20 bps of the mid`);
    }
  }
  assert.deepEqual(a.ticks, b.ticks, 'same seed, same path');
  assert.deepEqual(a.ticks.slice(0, 3).map((t) => t.source_id), [0, 3, 7]);
  assert.equal(fa.delivered, 150);
  fa.pause([3]);
  await fa.tickOnce(51_000);
  assert.deepEqual(a.ticks.slice(-2).map((t) => t.source_id), [0, 7]);
  fa.pause();
  const n = a.ticks.length;
  await fa.tickOnce(52_000);
  assert.equal(a.ticks.length, n, 'all offline: nothing sent');
  fa.resume();
  await fa.tickOnce(53_000);
  assert.equal(a.ticks.length, n + 3);
  assert.throws(() => new SimulatedFeeder({ sink: a.sink, sources: [64] }), /0\.\.63/);
});

test('feeder: a refused tick goes to onError and the feeder goes on', async () => {
  const errors: number[] = [];
  let calls = 0;
  const f = new SimulatedFeeder({
    sources: [0, 1], seed: 3,
    sink: async (t) => {
      calls++;
      if (t.source_id === 1) throw new Error('refused');
    },
    onError: (_e, t) => errors.push(t.source_id),
  });
  await f.tickOnce(1000);
  await f.tickOnce(2000);
  assert.equal(calls, 4);
  assert.deepEqual(errors, [1, 1]);
  assert.equal(f.delivered, 2);
});

test('fair value: the normal CDF at known points; P(above) is 1/2-ish at the money, monotone in price, certain at close', () => {
  assert.ok(Math.abs(normalCdf(0) - 0.5) < 1e-7);
  assert.ok(Math.abs(normalCdf(1.96) - 0.975) < 1e-3);
  assert.ok(Math.abs(normalCdf(-1) - 0.158655) < 1e-5);
  const atm = probabilityAbove(100, 100, 0.001, 60);
  assert.ok(atm > 0.49 && atm < 0.5, `at the money a driftless walk ends above slightly less than half the time (${atm})`);
  assert.ok(probabilityAbove(101, 100, 0.001, 60) > atm);
  assert.ok(probabilityAbove(99, 100, 0.001, 60) < atm);
  assert.equal(probabilityAbove(100, 100, 0.001, 0), 1, 'at close: price >= strike is yes');
  assert.equal(probabilityAbove(99.99, 100, 0.001, 0), 0);
});
