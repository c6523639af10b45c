// engine_thread: entry point of the one matching worker. It attaches the
// command rings (one per producer), the event ring and the control block
// handed over in workerData, and runs the EngineLoop (with the exchange's
// clock) until asked to stop.
//
// Follow mode (a standby, src/replication): the replication thread writes the
// replicated log into the event ring; this thread reads it as one more
// consumer and folds every event into its state through evolve (no
// re-matching, timers off). When the replication thread has claimed the next
// epoch it asks this thread to sequence: it folds what is left, closes its
// cursor, takes over the ring as its producer and runs the EngineLoop, so seq
// and ts continue from the log.

import './v8_tuning.js';
import { parentPort, workerData } from 'node:worker_threads';
import { Engine } from '../engine/engine.js';
import type { EngineConfig } from '../engine/config.js';
import { evolve } from '../engine/evolve.js';
import { ExchangeState } from '../engine/state.js';
import { loadBase, replay, type RecoveryPlan } from '../journal/recovery.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { checks } from '../lib/assert.js';
import { BroadcastConsumer, BroadcastProducer } from '../ring/broadcast_ring.js';
import { Doorbell } from '../ring/doorbell.js';
import { SeqStamps } from '../ring/seq_stamps.js';
import { waitStrategy, type WaitKind } from '../ring/wait.js';
import { SpscRing } from '../ring/spsc_ring.js';
import { EngineControl } from './engine_control.js';
import { EngineClock, EngineLoop, RingEventOut } from './engine_loop.js';

export interface EngineThreadData {
  commandRings: SharedArrayBuffer[];
  eventRing: SharedArrayBuffer;
  doorbell: SharedArrayBuffer;
  control: SharedArrayBuffer;
  /** SeqStamps the engine writes (last seq, time) into per round. */
  sequencedStamps: SharedArrayBuffer;
  config: Partial<EngineConfig>;
  verify: boolean;
  /** How the loop waits for commands (src/ring/wait.ts). */
  wait: WaitKind;
  /** Run the exchange's clock (ClockTicks at each due timer); false: time moves only with the commands (tests). */
  clock: boolean;
  /** The state to continue from: snapshot plus journal (null: a fresh exchange). */
  recovery: RecoveryPlan | null;
  /** Follow mode: the event ring consumer index to fold from until promoted (absent: sequence at once). */
  follow?: { consumerIndex: number };
}

const data = workerData as EngineThreadData;
// The verify switch: the O(n) check after every command (EngineLoop) and the costly assertions.
checks.costly = data.verify;
const rings = data.commandRings.map((sab) => new SpscRing(sab, LAYOUT_FINGERPRINT));
// Recovery: the snapshot's state, then every journaled event after it through
// evolve (no re-matching), before the loop takes its first command.
// The engine keeps only what decide reads (ExchangeState.enterMatchingOnly).
const state = data.recovery !== null ? loadBase(data.recovery, data.config).state : new ExchangeState(data.config);
state.enterMatchingOnly();
if (data.recovery !== null) replay(data.recovery, state.seq, (m, o) => evolve(state, m, o));
const control = new EngineControl(data.control);
if (data.follow !== undefined) follow(data.follow.consumerIndex);
// Created only now: a producer reads the ring's write position when attached.
const out = new RingEventOut(new BroadcastProducer(data.eventRing, LAYOUT_FINGERPRINT));
const engine = new Engine(data.config, out, state);
if (data.follow !== undefined) control.setSequencing();
// The control block is a source too: a stop or clock request that rang before the engine announced is seen by the re-check.
const wait = waitStrategy(data.wait, Doorbell.attach(data.doorbell), [...rings, control]);
const loop = new EngineLoop(
  engine,
  rings,
  out,
  control,
  wait,
  data.verify,
  new SeqStamps(data.sequencedStamps),
  data.clock ? new EngineClock() : null,
);
loop.run();
parentPort?.postMessage({ type: 'stopped', seq: engine.state.seq, commands: loop.commands });

/** Folds the event ring into the state until asked to sequence (returns) or to stop (exits the thread). */
function follow(consumerIndex: number): void {
  const c = new BroadcastConsumer(data.eventRing, LAYOUT_FINGERPRINT, consumerIndex);
  c.open();
  const bell = c.doorbell;
  let folded = 0;
  control.report(state.seq, 0, 0, 0);
  control.setRunning(true);
  for (;;) {
    let n = 0;
    for (let o = c.peek(); o >= 0; o = c.peek()) {
      evolve(state, c.mem, o);
      c.advance();
      n++;
    }
    if (n > 0) {
      folded += n;
      control.report(state.seq, folded, 0, 0);
      continue;
    }
    if (control.stopRequested) {
      c.close();
      control.setRunning(false);
      parentPort?.postMessage({ type: 'stopped', seq: state.seq, commands: 0 });
      process.exit(0);
    }
    // The replication thread publishes everything it applied before asking.
    if (control.promoteRequested && !c.hasUnread()) break;
    const epoch = bell.announce();
    if (c.hasUnread() || control.stopRequested || control.promoteRequested) continue;
    bell.park(epoch, 50);
  }
  c.close();
}
