// Series and oracle timers survive recovery: recovery replays events through
// evolve (no decide), so a state rebuilt from the events of a series run
// must hold the same summary and the same pending timers (series waiting for
// a round, oracle sources about to go stale, rounds about to close or
// settle) as the engine that produced them; an engine continuing from it
// would then do the same next thing.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { evolve } from '../../src/engine/evolve.js';
import { ExchangeState } from '../../src/engine/state.js';
import { summarize } from '../../src/engine/summary.js';
import type { TimerHeap } from '../../src/lib/timer_heap.js';
import { encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { ScenarioRunner } from './scenario.js';

function heapContents(h: TimerHeap, ids: number): string[] {
  const out: string[] = [];
  for (let id = 0; id < ids; id++) if (h.has(id)) out.push(`${id}@${h.hiOf(id)}:${h.loOf(id)}`);
  return out;
}

test('series replay: a state rebuilt from the events alone has the same summary and the same series, oracle and round timers', () => {
  const config = { oracle_quorum: 2, oracle_staleness_ms: 10_000, dispute_window_ms: 1_000 };
  const r = new ScenarioRunner(config);
  const events: RecordObject[] = [];
  const send = r.send.bind(r);
  r.send = (cmd: RecordObject): RecordObject[] => {
    const ev = send(cmd);
    events.push(...ev);
    return ev;
  };
  const replayed = new ExchangeState(config);
  const checkSame = (where: string): void => {
    for (const e of events.splice(0)) {
      const { mem } = encodeToMem(e);
      evolve(replayed, mem, 0);
    }
    const s = r.engine.state;
    assert.deepEqual(summarize(replayed), summarize(s), `summary after ${where}`);
    for (const name of ['seriesWaiting', 'oracleExpiries', 'closes', 'awaitingProposal', 'disputeDeadlines'] as const) {
      assert.deepEqual(heapContents(replayed[name], 70), heapContents(s[name], 70), `${name} after ${where}`);
    }
  };
  r.run(`
    oracle 1 100
    series category=7 period=20 -> ok
    series category=8 period=5 -> ok
  `);
  checkSame('two series waiting for a quorum');
  assert.equal(r.engine.state.seriesWaiting.size, 2, 'both series wait');
  r.run(`
    oracle 2 110
    tick +1 -> ok
    account a1 10000
    account a2 10000
    a1 buy yes 55 x3 m=2 -> resting
    a2 buy no 45 x3 m=2 -> filled fills=55x3/mint
    tick +5000 -> ok
  `);
  checkSame('rounds open, one closed and proposed');
  r.run(`
    tick +10000 -> ok
    tick +10000 -> ok
  `);
  checkSame('sources stale, a round frozen waiting for the oracle');
  assert.equal(r.engine.state.oracleExpiries.size, 0, 'both sources are stale');
  r.run(`
    oracle 1 90
    oracle 2 95
    tick +1 -> ok
    stop-series 8 -> ok
    tick +1000 -> ok
  `);
  checkSame('proposed, settled, one series stopped');
});
