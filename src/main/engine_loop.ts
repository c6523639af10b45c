// EngineLoop: the matching worker's main loop. Drains every producer's
// SpscRing in bounded batches (round robin, so no producer starves another),
// executes each command, publishes the events once per round, wakes the
// event ring's parked consumers, and idles (spin, then park on the engine's
// doorbell) when no ring has work. Engine thread only.

import type { Engine } from '../engine/engine.js';
import type { EventOut } from '../engine/event_out.js';
import { verify } from '../engine/verify.js';
import type { Mem } from '../lib/mem.js';
import { monoUs } from '../lib/mono_clock.js';
import type { BroadcastProducer } from '../ring/broadcast_ring.js';
import type { ParkingIdle } from '../ring/idle.js';
import type { SeqStamps } from '../ring/seq_stamps.js';
import type { SpscRing } from '../ring/spsc_ring.js';
import type { EngineControl } from './engine_control.js';

/** Commands taken from one ring before moving to the next. */
const BATCH_PER_RING = 256;

/**
 * EventOut over the broadcast ring. When the ring is full (a consumer lags)
 * it publishes what is claimed so far, so consumers can make room even in the
 * middle of a very large command, and waits.
 */
export class RingEventOut implements EventOut {
  readonly mem: Mem;
  private readonly nap = new Int32Array(new SharedArrayBuffer(4));
  /** Times a claim had to wait for consumers (back-pressure from the journal or a gateway). */
  stalls = 0;

  constructor(private readonly producer: BroadcastProducer) {
    this.mem = producer.mem;
  }

  claim(len: number): number {
    let o = this.producer.tryClaim(len);
    if (o >= 0) return o;
    this.stalls++;
    this.publish();
    for (let spins = 0; ; spins++) {
      o = this.producer.tryClaim(len);
      if (o >= 0) return o;
      // Consumers release as they read; nap briefly after a short spin.
      if (spins > 1000) Atomics.wait(this.nap, 0, 0, 0.05);
    }
  }

  publish(): void {
    this.producer.publish();
    this.producer.doorbell.wake();
  }
}

export class EngineLoop {
  commands = 0;
  batches = 0;

  constructor(
    private readonly engine: Engine,
    private readonly rings: readonly SpscRing[],
    private readonly out: RingEventOut,
    private readonly control: EngineControl,
    private readonly idle: ParkingIdle,
    private readonly verifyEach = false,
    /** (last seq, time) per round that sequenced something: the sequence stage of held requests. */
    private readonly stamps: SeqStamps | null = null,
  ) {}

  private stampedSeq = 0;

  /** One round over every ring; returns the number of commands executed. */
  round(): number {
    const engine = this.engine;
    let n = 0;
    for (let r = 0; r < this.rings.length; r++) {
      const ring = this.rings[r]!;
      const mem = ring.mem;
      for (let k = 0; k < BATCH_PER_RING; k++) {
        const off = ring.peek();
        if (off < 0) break;
        engine.execute(mem, off);
        ring.advance();
        n++;
        if (this.verifyEach) {
          const bad = verify(engine.state);
          if (bad.length) throw new Error(`engine: invariants broken at seq ${engine.state.seq}:\n  ${bad.join('\n  ')}`);
        }
      }
    }
    if (n > 0) {
      const seq = engine.state.seq;
      if (this.stamps !== null && seq > this.stampedSeq) {
        // Before the publish: whoever sees these events finds their stamp.
        this.stampedSeq = seq;
        this.stamps.stamp(seq, monoUs());
      }
      this.out.publish();
      this.commands += n;
      this.batches++;
      this.control.report(engine.state.seq, this.commands, this.batches, this.idle.parks);
    }
    return n;
  }

  /** Runs until the control block asks to stop, then drains what is left. */
  run(): void {
    const control = this.control;
    // Publish the recovered seq at once: health (seq vs durable_seq) must not
    // read 0 between the start and the first executed command.
    control.report(this.engine.state.seq, this.commands, this.batches, this.idle.parks);
    control.setRunning(true);
    while (!control.stopRequested) {
      if (control.paused) {
        this.idle.idle(0);
        continue;
      }
      this.idle.idle(this.round());
    }
    while (this.round() > 0) { /* drain */ }
    control.setRunning(false);
  }
}
