// gateway_core: a GatewayCore on rings of its own. coreWithoutEngine: no
// engine behind them, its waiter parking as on a gateway thread, so a held
// request ends in its 504 (test/gateway/clock_step, test/ws/resume_clock).
// coreWithEngine: its waiter stopped and the engine run by hand on its rings,
// so a test decides when commands are sequenced (test/gateway/core_ring_full,
// test/gateway/late_key).

import { Engine } from '../../src/engine/engine.js';
import { GatewayCore } from '../../src/gateway/core.js';
import { LAYOUT_FINGERPRINT } from '../../src/layout/records.js';
import { RingEventOut } from '../../src/main/engine_loop.js';
import { BroadcastProducer, BroadcastRing } from '../../src/ring/broadcast_ring.js';
import { CommandProducer } from '../../src/ring/command_producer.js';
import { Doorbell } from '../../src/ring/doorbell.js';
import { SpscRing } from '../../src/ring/spsc_ring.js';
import { Views } from '../../src/views/views.js';
import { DIFF_CONFIG } from './random_commands.js';

export function coreWithoutEngine(budgetMs: number): GatewayCore {
  return new GatewayCore({
    producerId: 1,
    producer: new CommandProducer(SpscRing.allocate(1 << 16, LAYOUT_FINGERPRINT), Doorbell.attach(Doorbell.allocate()), LAYOUT_FINGERPRINT),
    eventRing: BroadcastRing.allocate(1 << 20, 2, LAYOUT_FINGERPRINT),
    consumerIndex: 0,
    views: new Views({}),
    response_budget_ms: budgetMs,
    shed_pending: 1024,
    wait: 'park',
  });
}

/** A core (its waiter stopped) and the engine behind its command ring, run by hand in the same thread. */
export interface EngineRig {
  core: GatewayCore;
  /** The engine's end of the command ring. */
  engineSide: SpscRing;
  out: RingEventOut;
  engine: Engine;
  /** Executes up to `max` commands waiting in the ring and publishes their events (the caller drains the core). */
  runEngine(max?: number): void;
}

export interface EngineRigOptions {
  budgetMs: number;
  shedPending: number;
  /** The command ring's size (default 4 KiB: it fills after a few dozen placements). */
  ringBytes?: number;
  /** A stand-in for the node's replication status (writable, role). */
  replication?: unknown;
}

export function coreWithEngine(o: EngineRigOptions): EngineRig {
  const cmdSab = SpscRing.allocate(o.ringBytes ?? 4096, LAYOUT_FINGERPRINT);
  const eventRing = BroadcastRing.allocate(1 << 20, 2, LAYOUT_FINGERPRINT);
  const core = new GatewayCore({
    producerId: 1,
    producer: new CommandProducer(cmdSab, Doorbell.attach(Doorbell.allocate()), LAYOUT_FINGERPRINT),
    eventRing, consumerIndex: 0, views: new Views(DIFF_CONFIG), response_budget_ms: o.budgetMs, shed_pending: o.shedPending,
    wait: 'spin', replication: o.replication as never,
  });
  core.waiter.stop();
  const out = new RingEventOut(new BroadcastProducer(eventRing, LAYOUT_FINGERPRINT));
  const engineSide = new SpscRing(cmdSab, LAYOUT_FINGERPRINT);
  const engine = new Engine(DIFF_CONFIG, out);
  const runEngine = (max = Infinity): void => {
    let k = 0;
    for (let off = engineSide.peek(); off >= 0 && k < max; off = engineSide.peek(), k++) {
      engine.execute(engineSide.mem, off);
      engineSide.advance();
    }
    engineSide.release();
    out.publish();
  };
  return { core, engineSide, out, engine, runEngine };
}
