// engine_thread: entry point of the one matching worker. It attaches the
// command rings (one per producer), the event ring and the control block
// handed over in workerData, and runs the EngineLoop until asked to stop.

import './v8_tuning.js';
import { parentPort, workerData } from 'node:worker_threads';
import { Engine } from '../engine/engine.js';
import type { EngineConfig } from '../engine/config.js';
import { evolve } from '../engine/evolve.js';
import { ExchangeState } from '../engine/state.js';
import { loadBase, replay, type RecoveryPlan } from '../journal/recovery.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { checks } from '../lib/assert.js';
import { BroadcastProducer } from '../ring/broadcast_ring.js';
import { Doorbell } from '../ring/doorbell.js';
import { ParkingIdle } from '../ring/idle.js';
import { SpscRing } from '../ring/spsc_ring.js';
import { EngineControl } from './engine_control.js';
import { EngineLoop, RingEventOut } from './engine_loop.js';

export interface EngineThreadData {
  commandRings: SharedArrayBuffer[];
  eventRing: SharedArrayBuffer;
  doorbell: SharedArrayBuffer;
  control: SharedArrayBuffer;
  config: Partial<EngineConfig>;
  verify: boolean;
  /** The state to continue from: snapshot plus journal (null: a fresh exchange). */
  recovery: RecoveryPlan | null;
}

const data = workerData as EngineThreadData;
// The verify switch: the O(n) check after every command (EngineLoop) and the costly assertions.
checks.costly = data.verify;
const rings = data.commandRings.map((sab) => new SpscRing(sab, LAYOUT_FINGERPRINT));
const out = new RingEventOut(new BroadcastProducer(data.eventRing, LAYOUT_FINGERPRINT));
// Recovery: the snapshot's state, then every journaled event after it through
// evolve (no re-matching), before the loop takes its first command.
// The engine keeps only what decide reads (ExchangeState.enterMatchingOnly).
const state = data.recovery !== null ? loadBase(data.recovery, data.config).state : new ExchangeState(data.config);
state.enterMatchingOnly();
if (data.recovery !== null) replay(data.recovery, state.seq, (m, o) => evolve(state, m, o));
const engine = new Engine(data.config, out, state);
const control = new EngineControl(data.control);
const idle = new ParkingIdle(Doorbell.attach(data.doorbell), rings, { spin_us: 20, park_timeout_ms: 50 });
const loop = new EngineLoop(engine, rings, out, control, idle, data.verify);
loop.run();
parentPort?.postMessage({ type: 'stopped', seq: engine.state.seq, commands: loop.commands });
