// EngineLoop: the matching worker's main loop. Drains every producer's
// SpscRing in bounded batches (round robin, so no producer starves another),
// executes each command, publishes the events once per round, wakes the
// event ring's parked consumers, and waits by its wait strategy (DX_WAIT,
// src/ring/wait.ts) when no ring has work. Engine thread only.
//
// It is also the exchange's clock (EngineClock): after each round that
// executed something it asks the engine when the next timer is due
// (Engine.nextDueMs: gtd expiry, dead-man, oracle staleness, round close,
// dispute deadline, a proposal or series opening waiting for a fresh
// quorum), sleeps no longer than that, and at that time executes a ClockTick
// stamped with the wall clock, as any producer's ClockTick. The engine's
// decide and evolve read no clock; the tick carries the time into the
// journal, so a replay reproduces every time-driven effect. An idle exchange
// with nothing scheduled sleeps until a command arrives.

import type { Engine } from '../engine/engine.js';
import type { EventOut } from '../engine/event_out.js';
import { verify } from '../engine/verify.js';
import { ClockTick, Header } from '../layout/records.js';
import { memOf, type Mem } from '../lib/mem.js';
import { monoUs } from '../lib/mono_clock.js';
import { bigIntHi, bigIntLo } from '../lib/u64.js';
import type { BroadcastProducer } from '../ring/broadcast_ring.js';
import type { WaitStrategy } from '../ring/wait.js';
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

/** The producer id the engine's own clock ticks carry (the timer ring's, which nothing else writes in a running exchange). */
export const PRODUCER_CLOCK = 0;

/** The engine's own ClockTick command, in a private buffer. */
export class EngineClock {
  readonly mem: Mem = memOf(new ArrayBuffer(ClockTick.SIZE));
  /** Date.now() of the last tick: two ticks are at least 1 ms apart. */
  lastMs = 0;

  constructor() {
    Header.set_len(this.mem, 0, ClockTick.SIZE);
    Header.set_type(this.mem, 0, ClockTick.TYPE);
    Header.set_producer(this.mem, 0, PRODUCER_CLOCK);
  }

  /**
   * The tick command at wall-clock time nowMs, rounded up to its ms: the
   * sequencer's last ts in ms (lastTsMs) is a float that may miss an integer
   * by a rounding error (ns above 2^53), and a tick is never stamped before it.
   */
  at(nowMs: number): Mem {
    const ms = Math.ceil(nowMs);
    const ns = BigInt(ms) * 1_000_000n;
    Header.set_ts(this.mem, 0, bigIntHi(ns), bigIntLo(ns));
    this.lastMs = ms;
    return this.mem;
  }

  /** Date.now() time at which to tick for a timer due at dueMs (epoch ms, fractional): its ms or later, never twice in one ms. */
  tickAtMs(dueMs: number): number {
    return Math.max(Math.ceil(dueMs), this.lastMs + 1);
  }
}

export class EngineLoop {
  commands = 0;
  batches = 0;
  /** Ticks the engine's clock executed (those with nothing due after all included). */
  ticks = 0;

  constructor(
    private readonly engine: Engine,
    private readonly rings: readonly SpscRing[],
    private readonly out: RingEventOut,
    private readonly control: EngineControl,
    private readonly wait: WaitStrategy,
    private readonly verifyEach = false,
    /** (last seq, time) per round that sequenced something: the sequence stage of held requests. */
    private readonly stamps: SeqStamps | null = null,
    /** The exchange's clock; null: time moves only with the commands' own ts (tests that drive time). */
    private readonly clock: EngineClock | null = null,
  ) {}

  private stampedSeq = 0;

  /** One round over every ring; returns the number of commands executed. */
  round(): number {
    let n = 0;
    for (let r = 0; r < this.rings.length; r++) {
      const ring = this.rings[r]!;
      const mem = ring.mem;
      for (let k = 0; k < BATCH_PER_RING; k++) {
        const off = ring.peek();
        if (off < 0) break;
        this.execute(mem, off);
        ring.advance();
        n++;
      }
    }
    this.finish(n);
    return n;
  }

  private execute(mem: Mem, off: number): void {
    const engine = this.engine;
    engine.execute(mem, off);
    if (this.verifyEach) {
      const bad = verify(engine.state);
      if (bad.length) throw new Error(`engine: invariants broken at seq ${engine.state.seq}:\n  ${bad.join('\n  ')}`);
    }
  }

  /** The clock's tick at nowMs, as a round of one command. */
  tick(nowMs: number): number {
    this.ticks++;
    this.execute(this.clock!.at(nowMs), 0);
    this.finish(1);
    return 1;
  }

  /** After a round of n commands: stamp, publish, report. */
  private finish(n: number): void {
    const engine = this.engine;
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
      this.control.report(engine.state.seq, this.commands, this.batches, this.wait.sleeps);
    }
  }

  /** Runs until the control block asks to stop, then drains what is left. */
  run(): void {
    const control = this.control;
    // Publish the recovered seq at once: health (seq vs durable_seq) must not
    // read 0 between the start and the first executed command.
    control.report(this.engine.state.seq, this.commands, this.batches, this.wait.sleeps);
    control.setRunning(true);
    const clock = this.clock;
    let ticking = false;
    let dueMs = Infinity;
    for (;;) {
      control.observe();
      if (control.stopRequested) break;
      if (control.paused) {
        // The clock pauses with the engine (tests that hold requests).
        this.wait.idle(0);
        continue;
      }
      let n = this.round();
      if (clock === null) {
        this.wait.idle(n);
        continue;
      }
      if (!ticking) {
        // Until every reader of the event ring has joined, time moves only with the commands.
        if (!control.clockStarted) {
          this.wait.idle(n);
          continue;
        }
        ticking = true;
        n = 1;
      }
      if (n > 0) dueMs = this.engine.nextDueMs();
      if (dueMs === Infinity) {
        control.setClockCaughtUp();
        this.wait.idle(n);
        continue;
      }
      const at = clock.tickAtMs(dueMs);
      // The engine's time is the sequencer's: commands stamped later than the clock move it too.
      const now = Math.max(Date.now() + control.clockOffsetMs, this.engine.lastTsMs());
      if (now >= at) {
        n += this.tick(now);
        dueMs = this.engine.nextDueMs();
        // A tick fires everything due at its ts (published above): what fell due while the exchange was down is sequenced.
        control.setClockCaughtUp();
        this.wait.idle(n);
        continue;
      }
      control.setClockCaughtUp();
      this.wait.idle(n, performance.now() + (at - now));
    }
    while (this.round() > 0) { /* drain */ }
    control.setRunning(false);
  }
}
