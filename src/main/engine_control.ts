// EngineControl: a small SharedArrayBuffer between the engine thread and the
// rest of the process: stop and pause flags (pause is for tests that provoke
// shedding and timeouts), the clock switch (the engine's clock starts once
// every reader of the event ring has joined, or its first ticks' events would
// be missed by the journal), the promote handshake of a standby
// (src/replication) and monitoring counters written by the engine.
// Counters are plain Float64 stores, for health and metrics only: a reader may
// see a value one batch old, never a value that matters for correctness.
//
// Every request from outside (stop, pause, the clock switch and offset,
// promote) also bumps a poke counter, and the engine's parking re-check reads
// it (EngineControl is one of its IdleSources): a request made between the
// loop's look at the flags and its announce, whose doorbell ring found nobody
// announced, is then seen by the re-check instead of waiting out the park's
// timeout (src/ring/doorbell.ts, the no-lost-wake-up argument).

import type { IdleSource } from '../ring/wait.js';

const I_STOP = 0;
const I_PAUSE = 1;
const I_RUNNING = 2;
const I_CLOCK = 3;
/**
 * Follow mode (a standby, src/replication): 0 following, 1 asked to sequence, 2 sequencing. Int32 index 12 (byte 48, after the counters).
 */
const I_PROMOTE = 12;
/** Requests made so far (Int32 index 13, byte 52). */
const I_POKES = 13;
const F_SEQ = 2; // Float64 index (byte 16)
const F_COMMANDS = 3;
const F_BATCHES = 4;
const F_PARKS = 5;
/** The engine clock's offset from Date.now(), ms (tests that step the clock); byte 56. */
const F_CLOCK_OFFSET = 7;
const BYTES = 64;

export class EngineControl implements IdleSource {
  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(BYTES);
  }

  private readonly i32: Int32Array;
  private readonly f64: Float64Array;

  /** The pokes this instance's thread has looked at (observe()). */
  private seenPokes = 0;

  constructor(readonly sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab, 0, BYTES / 4);
    this.f64 = new Float64Array(sab, 0, BYTES / 8);
  }

  /** After a request's own store: tells a parking engine that something changed. */
  private poke(): void {
    Atomics.add(this.i32, I_POKES, 1);
  }

  /** Engine side, before reading the flags: requests up to here are looked at now; later ones make hasUnread() true. */
  observe(): void {
    this.seenPokes = Atomics.load(this.i32, I_POKES);
  }

  /** IdleSource: a request came after the last observe(). */
  hasUnread(): boolean {
    return Atomics.load(this.i32, I_POKES) !== this.seenPokes;
  }

  requestStop(): void {
    Atomics.store(this.i32, I_STOP, 1);
    this.poke();
  }

  get stopRequested(): boolean {
    return Atomics.load(this.i32, I_STOP) === 1;
  }

  setPaused(paused: boolean): void {
    Atomics.store(this.i32, I_PAUSE, paused ? 1 : 0);
    this.poke();
  }

  get paused(): boolean {
    return Atomics.load(this.i32, I_PAUSE) === 1;
  }

  setRunning(running: boolean): void {
    Atomics.store(this.i32, I_RUNNING, running ? 1 : 0);
  }

  get running(): boolean {
    return Atomics.load(this.i32, I_RUNNING) === 1;
  }

  /** Lets the engine's clock run (ring the engine's doorbell after, so a parked engine looks at its timers). */
  startClock(): void {
    Atomics.store(this.i32, I_CLOCK, 1);
    this.poke();
  }

  get clockStarted(): boolean {
    return Atomics.load(this.i32, I_CLOCK) >= 1;
  }

  /** Engine side: the clock has sequenced every timer that was due when it started (those that fell due while the exchange was down). */
  setClockCaughtUp(): void {
    if (Atomics.load(this.i32, I_CLOCK) === 1) Atomics.store(this.i32, I_CLOCK, 2);
  }

  get clockCaughtUp(): boolean {
    return Atomics.load(this.i32, I_CLOCK) === 2;
  }

  /** Replication thread: a standby's engine is to stop following and start sequencing. */
  requestPromote(): void {
    Atomics.store(this.i32, I_PROMOTE, 1);
    this.poke();
  }

  get promoteRequested(): boolean {
    return Atomics.load(this.i32, I_PROMOTE) === 1;
  }

  /** Engine side: it sequences now (set once, after it took over the event ring). */
  setSequencing(): void {
    Atomics.store(this.i32, I_PROMOTE, 2);
  }

  get sequencing(): boolean {
    return Atomics.load(this.i32, I_PROMOTE) === 2;
  }

  /** Steps the engine's clock: it reads Date.now() + offsetMs (tests of clock faults; ring the engine's doorbell after). */
  setClockOffsetMs(offsetMs: number): void {
    this.f64[F_CLOCK_OFFSET] = offsetMs;
    this.poke();
  }

  get clockOffsetMs(): number {
    return this.f64[F_CLOCK_OFFSET]!;
  }

  /** Engine side: counters after a batch. */
  report(seq: number, commands: number, batches: number, parks: number): void {
    this.f64[F_SEQ] = seq;
    this.f64[F_COMMANDS] = commands;
    this.f64[F_BATCHES] = batches;
    this.f64[F_PARKS] = parks;
  }

  get seq(): number {
    return this.f64[F_SEQ]!;
  }

  get commands(): number {
    return this.f64[F_COMMANDS]!;
  }

  get batches(): number {
    return this.f64[F_BATCHES]!;
  }

  get parks(): number {
    return this.f64[F_PARKS]!;
  }
}
