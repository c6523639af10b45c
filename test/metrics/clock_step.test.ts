// dx_engine_commands_per_second is the commands sequenced between two samples
// over the time between them, on the monotonic clock: a wall-clock step
// forward must not report about zero (a second's commands over an hour), nor
// a step back keep the previous figure.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { allocateMetrics, MetricsRegistry, type MetricsSpec } from '../../src/metrics/metrics.js';

const realNow = Date.now;
const spec: MetricsSpec = { lanes: [{ lane: 'admin', routes: ['health'] }], slices: [{ name: 'control', lane: 'admin' }] };

function rateAfterStep(offsetMs: number): Promise<number> {
  let commands = 0;
  const reg = new MetricsRegistry(allocateMetrics(spec), spec, { engine: () => ({ seq: commands, commands, batches: 0, parks: 0 }) });
  return (async () => {
    reg.sample();
    await delay(200);
    commands += 1000; // 1000 commands in about 200 ms: about 5000 a second
    Date.now = () => realNow() + offsetMs;
    try {
      reg.sample();
    } finally {
      Date.now = realNow;
    }
    const m = /^dx_engine_commands_per_second (\S+)$/m.exec(reg.render());
    return Number(m![1]);
  })();
}

test('metrics: the clock steps forward an hour between two samples: the command rate is still about 5000/s', async () => {
  const rate = await rateAfterStep(3_600_000);
  assert.ok(rate > 2000 && rate < 5100, `dx_engine_commands_per_second ${rate} for 1000 commands in about 200 ms`);
});

test('metrics: the clock steps back 10 s between two samples: the command rate is still about 5000/s', async () => {
  const rate = await rateAfterStep(-10_000);
  assert.ok(rate > 2000 && rate < 5100, `dx_engine_commands_per_second ${rate} for 1000 commands in about 200 ms`);
});
