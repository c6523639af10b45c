// A restart that changes oracle_staleness_ms or dispute_window_ms (tunables
// loadBase applies "from the replay on, as it would without a snapshot"):
// the timers already scheduled with the old setting must fire as they would
// after a replay from an empty state. Here one exchange's events are
// recovered twice with the new setting, once from a snapshot taken at the
// end and once by replaying every event into an empty state, and the same
// ClockTick must do the same in both.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { EngineConfig } from '../../src/engine/config.js';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { loadBase, planRecovery } from '../../src/journal/recovery.js';
import { writeSnapshot } from '../../src/journal/snapshot.js';
import { encodeViews } from '../../src/journal/state_codec.js';
import { encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { Views } from '../../src/views/views.js';

const T0 = 1_750_000_000_000_000_000n;
const MS = 1_000_000n;

/** Runs cmds (ts in ms after T0) on a fresh engine with `before`; returns `views` (a read model with `before`) folding its events. */
function live(before: Partial<EngineConfig>, cmds: [number, RecordObject][], views = new Views(before)): Views {
  const out = new BufferEventOut(1 << 20);
  const engine = new Engine(before, out);
  let corr = 0;
  for (const [ms, cmd] of cmds) {
    const { mem } = encodeToMem({ producer: 1, correlation: ++corr, account: 0, ts: T0 + BigInt(ms) * MS, ...cmd });
    engine.execute(mem, 0);
    for (const o of out.offsets()) views.apply(out.mem, o);
    out.reset();
  }
  return views;
}

/** The events of a ClockTick at T0 + ms, on an engine recovered (a) from a snapshot of `views` and (b) by replaying its events. */
function tickBothWays(
  views: Views, before: Partial<EngineConfig>, after: Partial<EngineConfig>, cmds: [number, RecordObject][], ms: number,
): { snapshot: string[]; replay: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'dx-timer-settings-'));
  try {
    writeSnapshot(dir, views.asOfSeq, encodeViews(views), false);
    const fromSnapshot = loadBase(planRecovery(dir, { repair: false }), after).state;
    // Without a snapshot: the same events replayed through evolve into an empty state with the new setting.
    const replayed = live(before, cmds, new Views({ ...before, ...after }));
    const tick = encodeToMem({ type: 'ClockTick', producer: 0, correlation: 0, account: 0, ts: T0 + BigInt(ms) * MS }).mem;
    const a = new BufferEventOut(1 << 20);
    const b = new BufferEventOut(1 << 20);
    new Engine(after, a, fromSnapshot).execute(tick, 0);
    new Engine(after, b, replayed.state).execute(tick, 0);
    return { snapshot: a.take().map((e) => String(e.type)), replay: b.take().map((e) => String(e.type)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('dispute_window_ms shortened at a restart: a proposed round settles as it would after a replay without a snapshot', () => {
  const before = { dispute_window_ms: 60_000 };
  const after = { dispute_window_ms: 1_000 };
  const cmds: [number, RecordObject][] = [
    [0, { type: 'CreateMarket', category: 1, position_limit: 0, fee_schedule_id: 0, title: 'm' }],
    [0, { type: 'SubmitOracleTick', source_id: 0, price: 150 }],
    [0, { type: 'OpenRound', market_id: 1, strike: 100, close_ts: T0 + 1000n * MS }],
    [1000, { type: 'ClockTick' }], // closes, proposes from the oracle: settles at 61 s with the old window
  ];
  const views = live(before, cmds);
  const got = tickBothWays(views, before, after, cmds, 3000);
  assert.ok(got.replay.includes('RoundTransitioned'), `replayed: ${got.replay.join(', ')}`);
  assert.deepEqual(got.snapshot, got.replay, 'the tick at 3 s after a restart from a snapshot vs. after a full replay');
});

test('oracle_staleness_ms shortened at a restart: a source goes stale as it would after a replay without a snapshot', () => {
  const before = { oracle_staleness_ms: 60_000 };
  const after = { oracle_staleness_ms: 10_000 };
  const cmds: [number, RecordObject][] = [[0, { type: 'SubmitOracleTick', source_id: 0, price: 150 }]];
  const views = live(before, cmds);
  const got = tickBothWays(views, before, after, cmds, 20_000);
  assert.ok(got.replay.includes('OracleSourceExpired'), `replayed: ${got.replay.join(', ')}`);
  assert.deepEqual(got.snapshot, got.replay, 'the tick at 20 s after a restart from a snapshot vs. after a full replay');
});
