// Wait strategies: how a thread waits for records another thread publishes,
// named as the LMAX Disruptor names them, chosen per role (engine, journal,
// gateway completions) by configuration (DX_WAIT, src/main/config.ts).
//
// Blocking threads (engine, journal) call idle(work, untilMs) once per loop round:
//   spin     BusySpinWaitStrategy: returns at once, always. The lowest latency
//            (a record is seen within a ring poll, ~0.3 µs round trips here)
//            at the price of a whole core, busy or not: for dedicated cores.
//   backoff  BackoffWaitStrategy: spins for spin_us after the last work, then
//            sleeps in naps that double from 50 µs up to max_nap_us without
//            announcing itself, so producers never pay for a wake-up; a record
//            waits at most one nap. Fewer wake-ups than park under steady load,
//            some CPU when idle (one nap's wake-up per max_nap_us).
//   park     BlockingWaitStrategy: spins for spin_us (by default only while
//            work arrives every few µs: ADAPTIVE_SPIN_US), then parks on a Doorbell
//            with Atomics.wait after announcing itself; producers ring the
//            doorbell after publishing (one Atomics.load unless someone
//            announced). No CPU when idle; a wake-up costs the waker a futex
//            call and the woken thread 10-60 µs here.
// untilMs (performance.now() time) bounds any sleep: the engine's clock sleeps
// until the next due timer, no longer.
//
// Event-loop threads (uWS gateways, the control plane) never block; a
// LoopWaitStrategy drives a poll callback from the event loop:
//   spin     polls every loop turn (setImmediate) while something is awaited;
//   backoff  polls every turn after work, parks asynchronously
//            (Atomics.waitAsync on a doorbell) after SPIN_POLLS empty turns;
//   park     parks after the first empty poll.
// A park is one Atomics.waitAsync with no timeout (BellWatch); while
// something is awaited, the strategy's own loop timer ends it at the nearest
// deadline. When nothing is awaited it parks with no timer, and polls once
// per wake at most every idle_drain_ms (the ring's consumers must keep
// reading so the engine never waits for space; an idle thread uses no CPU).
//
// The doorbell protocol (announce, re-check every source, then wait) is in
// doorbell.ts; wake-ups are never lost, timeouts are safety nets only.
// Nothing here reads a clock except for spin phases, naps and deadlines, and
// nothing allocates per round except the Immediate, Timeout or Promise of an
// event-loop poll or park.

import { assert } from '../lib/assert.js';
import { keepImmediateShapes } from '../lib/immediate_shapes.js';
import type { Doorbell } from './doorbell.js';

export type WaitKind = 'spin' | 'backoff' | 'park';
export const WAIT_KINDS: readonly WaitKind[] = ['spin', 'backoff', 'park'];

/** Anything a parking consumer re-checks after announcing: SpscRing, BroadcastConsumer. */
export interface IdleSource {
  /** Fresh (Atomics.load) check for unread records. */
  hasUnread(): boolean;
}

export interface WaitOptions {
  /** How long to keep returning at once after the last work before sleeping (backoff, park); 0 sleeps at once. */
  spin_us?: number;
  /** backoff: the longest nap. */
  max_nap_us?: number;
  /** park: the longest park (only bounds the damage of a missing wake(); wake-ups are not lost). */
  park_timeout_ms?: number;
}

/**
 * Default spin phase of backoff: none (park adapts, ADAPTIVE_SPIN_US). Measured on this 2-vCPU host
 * (bench/ring_handoff.ts, requests 1 ms apart so the consumer had parked):
 * waking a parked thread took ~20-30 µs at p50, and the woken thread then
 * seems to share the waker's vCPU, so a spin holds the CPU the waker needs
 * (round trips p50 ~45 µs at spin 0, ~75 µs at 20 µs, ~110 µs at 50 µs);
 * and at 5,000 placements/s a 20 µs spin after every engine and journal round
 * cost about half of those two threads' CPU (12.7 and 10.0 µs per placement
 * against 5.7 and 4.7 with none; docs/latency.md). A host with cores to spare
 * spins outright (`auto` picks spin there); a spin phase (`spin_us`) is for
 * what lies between.
 */
export const SPIN_US_DEFAULT = 0;
export const MAX_NAP_US_DEFAULT = 1000;
export const PARK_TIMEOUT_MS_DEFAULT = 1000;
const MIN_NAP_US = 50;

/** Empty rounds between clock reads in a spin phase. */
const SPIN_CHECK_ROUNDS = 64;

export interface WaitStrategy {
  readonly kind: WaitKind;
  /** Times the thread slept (a nap or a park). */
  sleeps: number;
  /** Parks that ended by their timeout with no deadline due (a producer forgot wake(); park only). */
  timeouts: number;
  /**
   * Once per loop round with the number of records the round handled.
   * Returns at once after work; otherwise waits as the strategy says, but
   * never past untilMs (performance.now() time; Infinity: no deadline).
   */
  idle(workCount: number, untilMs?: number): void;
}

export class BusySpinWaitStrategy implements WaitStrategy {
  readonly kind = 'spin' as const;
  sleeps = 0;
  timeouts = 0;

  idle(_workCount: number, _untilMs?: number): void {
    // Nothing: the caller polls again at once.
  }
}

/** The spin phase shared by backoff and park: true while the caller should keep polling without sleeping. */
class SpinPhase {
  private emptyRounds = 0;
  private startMs = 0;
  private readonly spinMs: number;

  constructor(spinUs: number) {
    assert(spinUs >= 0, 'wait: spin_us must be >= 0');
    this.spinMs = spinUs / 1000;
  }

  /** Call after an empty round; false once the phase is over. */
  spinning(): boolean {
    if (this.spinMs === 0) return false;
    const n = ++this.emptyRounds;
    // The clock is read only every SPIN_CHECK_ROUNDS empty rounds, so a busy
    // loop that idles for a moment does not pay for it.
    if (n < SPIN_CHECK_ROUNDS) return true;
    if (n === SPIN_CHECK_ROUNDS) {
      this.startMs = performance.now();
      return true;
    }
    return n % SPIN_CHECK_ROUNDS !== 0 || performance.now() - this.startMs < this.spinMs;
  }

  reset(): void {
    this.emptyRounds = 0;
  }
}

export class BackoffWaitStrategy implements WaitStrategy {
  readonly kind = 'backoff' as const;
  sleeps = 0;
  timeouts = 0;
  private readonly spin: SpinPhase;
  private readonly maxNapMs: number;
  private napMs = MIN_NAP_US / 1000;
  /** A word nobody notifies: Atomics.wait on it is a sleep. */
  private readonly nap = new Int32Array(new SharedArrayBuffer(4));

  constructor(opts: WaitOptions = {}) {
    this.spin = new SpinPhase(opts.spin_us ?? SPIN_US_DEFAULT);
    this.maxNapMs = (opts.max_nap_us ?? MAX_NAP_US_DEFAULT) / 1000;
    assert(this.maxNapMs >= MIN_NAP_US / 1000, 'wait: max_nap_us must be at least 50');
  }

  idle(workCount: number, untilMs = Infinity): void {
    if (workCount > 0) {
      this.spin.reset();
      this.napMs = MIN_NAP_US / 1000;
      return;
    }
    if (this.spin.spinning()) return;
    let ms = this.napMs;
    if (untilMs !== Infinity) ms = Math.min(ms, Math.max(0, untilMs - performance.now()));
    this.sleeps++;
    Atomics.wait(this.nap, 0, 0, ms);
    if (this.napMs < this.maxNapMs) this.napMs = Math.min(this.maxNapMs, this.napMs * 2);
  }
}

/**
 * When no spin_us is given, park spins only while work arrives faster than
 * a wake-up costs: ADAPTIVE_SPIN_US after the last work, and only while the
 * last ADAPTIVE_ROUNDS rounds that found work came at least once per that
 * window on average. At a few thousand commands a second a record comes
 * every few hundred µs and a spin only burns the core the producer needs
 * (see SPIN_US_DEFAULT); at a hundred thousand (binary order entry) one comes
 * every few µs and every park would cost a futex wake on each side.
 */
export const ADAPTIVE_SPIN_US = 20;
const ADAPTIVE_ROUNDS = 64;

/** Whether recent work came often enough to spin for it (BlockingWaitStrategy without a fixed spin_us). */
export class WorkRate {
  private rounds = 0;
  private windowStartMs: number;
  /** True while the last window's rounds with work came at least once per ADAPTIVE_SPIN_US. */
  dense = false;

  /** `now`: the clock in ms (tests give their own). */
  constructor(private readonly now: () => number = () => performance.now()) {
    this.windowStartMs = now();
  }

  /** A round found work. */
  onWork(): void {
    if (++this.rounds < ADAPTIVE_ROUNDS) return;
    const now = this.now();
    this.dense = (now - this.windowStartMs) * 1000 <= this.rounds * ADAPTIVE_SPIN_US;
    this.rounds = 0;
    this.windowStartMs = now;
  }
}

export class BlockingWaitStrategy implements WaitStrategy {
  readonly kind = 'park' as const;
  sleeps = 0;
  timeouts = 0;
  /** Parks abandoned because the re-check after announcing found work. */
  rechecks = 0;
  private readonly spin: SpinPhase;
  /** Null with a fixed spin_us; else decides whether to spin (ADAPTIVE_SPIN_US) or park at once. */
  private readonly rate: WorkRate | null;
  private readonly sources: readonly IdleSource[];
  private readonly timeoutMs: number;

  constructor(readonly doorbell: Doorbell, sources: IdleSource | readonly IdleSource[], opts: WaitOptions = {}) {
    this.sources = Array.isArray(sources) ? sources.slice() : [sources as IdleSource];
    assert(this.sources.length > 0, 'wait: a blocking strategy needs at least one source');
    this.rate = opts.spin_us === undefined ? new WorkRate() : null;
    this.spin = new SpinPhase(opts.spin_us ?? ADAPTIVE_SPIN_US);
    this.timeoutMs = opts.park_timeout_ms ?? PARK_TIMEOUT_MS_DEFAULT;
    assert(this.timeoutMs > 0, 'wait: park_timeout_ms must be > 0');
  }

  idle(workCount: number, untilMs = Infinity): void {
    if (workCount > 0) {
      this.spin.reset();
      this.rate?.onWork();
      return;
    }
    if ((this.rate === null || this.rate.dense) && this.spin.spinning()) return;
    this.park(untilMs);
    this.spin.reset();
  }

  /** Announce, re-check, and wait; returns when a record may be there, or at untilMs. */
  park(untilMs = Infinity): void {
    const bell = this.doorbell;
    const epoch = bell.announce();
    const sources = this.sources;
    for (let i = 0; i < sources.length; i++) {
      if (sources[i]!.hasUnread()) {
        this.rechecks++;
        return;
      }
    }
    let ms = this.timeoutMs;
    const deadline = untilMs !== Infinity;
    if (deadline) ms = Math.min(ms, Math.max(0, untilMs - performance.now()));
    this.sleeps++;
    if (bell.park(epoch, ms) === 'timed-out' && !(deadline && ms < this.timeoutMs)) this.timeouts++;
  }
}

/** The blocking strategy of a kind, over a doorbell and the sources it guards. */
export function waitStrategy(
  kind: WaitKind,
  doorbell: Doorbell,
  sources: IdleSource | readonly IdleSource[],
  opts: WaitOptions = {},
): WaitStrategy {
  switch (kind) {
    case 'spin':
      return new BusySpinWaitStrategy();
    case 'backoff':
      return new BackoffWaitStrategy(opts);
    case 'park':
      return new BlockingWaitStrategy(doorbell, sources, opts);
  }
}

// ------------------------------------------------------------------ event-loop threads

/**
 * One event-loop thread's asynchronous wait on a Doorbell: at most one
 * Atomics.waitAsync outstanding, and never one with a timeout. V8 schedules
 * a waitAsync timeout as a delayed task on the platform's worker threads
 * (Node's delayed-task thread arms a timer for it, and it runs there even
 * after an early notify); a deadline here is a timer of the thread's own loop.
 */
export class BellWatch {
  /** A waitAsync is outstanding (kept across watches until a ring settles it). */
  private pending = false;
  /** A watch is on: the next ring or its timer calls onRing, once. */
  private armed = false;
  private timer: NodeJS.Timeout | null = null;

  /**
   * `hasWork`: the fresh re-check after announcing (work that is already
   * there); `onRing`: called once per watch, by a producer's ring or the
   * watch's timeout, whichever comes first.
   */
  constructor(private readonly bell: Doorbell, private readonly hasWork: () => boolean, private readonly onRing: () => void) {}

  /**
   * Announces and re-checks (the no-lost-wake-up protocol of doorbell.ts);
   * false when work is already there (poll now), else true: onRing follows
   * the next ring, or timeoutMs (Infinity: none). A wait still outstanding
   * from before is kept, not doubled.
   */
  watch(timeoutMs = Infinity): boolean {
    const epoch = this.bell.announce();
    if (this.hasWork()) return false;
    // A wait from an earlier epoch is kept: a ring moved the epoch past it only with a notify, which settles it.
    if (!this.pending) {
      const wait = this.bell.parkAsync(epoch);
      if (wait === null) return false;
      this.pending = true;
      wait.then(this.rang, this.rang);
    }
    this.armed = true;
    this.clearTimer();
    if (timeoutMs !== Infinity) this.timer = setTimeout(this.fire, timeoutMs);
    return true;
  }

  /** Ends the watch without calling onRing (the owner polls by other means, or stops). */
  cancel(): void {
    this.armed = false;
    this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
  }

  private readonly rang = (): void => {
    this.pending = false;
    this.fire();
  };

  private readonly fire = (): void => {
    if (!this.armed) return;
    this.armed = false;
    this.clearTimer();
    this.onRing();
  };
}

/** What a LoopWaitStrategy drives. */
export interface LoopWaitTarget {
  /** Takes what is there (drain, expire); returns the records handled. */
  poll(): number;
  /** True while something is awaited (requests held for their completion): poll promptly. */
  awaiting(): boolean;
  /** The fresh re-check of the doorbell protocol: true when work is already there (BellWatch's hasWork). */
  hasWork(): boolean;
  /** Milliseconds until something awaited is due without any record (a request's deadline); Infinity when none. */
  dueInMs(): number;
}

/** Empty event-loop turns a backoff strategy polls before parking. */
const SPIN_POLLS = 64;
/** An idle thread drains at most this often (a wake-up per engine publish would cost more than it gives). */
export const IDLE_DRAIN_MS_DEFAULT = 10;

export class LoopWaitStrategy {
  /** Polls run and asynchronous parks entered (diagnostics, tests). */
  polls = 0;
  parks = 0;
  private readonly spinPolls: number;
  private readonly idleDrainMs: number;
  private readonly watch: BellWatch;
  private emptyPolls = 0;
  /** A poll is scheduled for the next loop turn (setImmediate). */
  private immediate = false;
  /** The idle drain's delay (nothing awaited: at most one drain per idle_drain_ms). */
  private idleTimer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(readonly kind: WaitKind, bell: Doorbell, private readonly target: LoopWaitTarget, opts: { idle_drain_ms?: number } = {}) {
    this.spinPolls = kind === 'spin' ? Infinity : kind === 'backoff' ? SPIN_POLLS : 0;
    this.idleDrainMs = opts.idle_drain_ms ?? IDLE_DRAIN_MS_DEFAULT;
    this.watch = new BellWatch(bell, () => target.hasWork(), this.onWake);
    keepImmediateShapes(); // its polls are immediates, in bursts: lib/immediate_shapes.ts
  }

  /** Something became awaited (a command was sent): poll from the next loop turn. */
  kick(): void {
    if (this.stopped) return;
    this.emptyPolls = 0;
    this.pollSoon();
  }

  /** Starts watching while nothing is awaited (drains what other threads' traffic publishes). */
  start(): void {
    this.stopped = false;
    this.sleep();
  }

  stop(): void {
    this.stopped = true;
    this.watch.cancel();
    this.clearIdleTimer();
  }

  private pollSoon(): void {
    if (this.immediate) return;
    this.immediate = true;
    setImmediate(this.onPoll);
  }

  private clearIdleTimer(): void {
    if (this.idleTimer !== null) clearTimeout(this.idleTimer);
    this.idleTimer = null;
  }

  private readonly onPoll = (): void => {
    this.immediate = false;
    if (this.stopped) return;
    this.watch.cancel();
    this.clearIdleTimer();
    this.polls++;
    const n = this.target.poll();
    if (n > 0) this.emptyPolls = 0;
    if (this.target.awaiting() && (n > 0 || ++this.emptyPolls <= this.spinPolls)) {
      this.pollSoon();
      return;
    }
    this.sleep();
  };

  /**
   * Waits for the bell: while something is awaited, no longer than its
   * deadline; while nothing is, with no timeout (an idle thread uses no CPU).
   */
  private sleep(): void {
    if (this.stopped) return;
    const awaiting = this.target.awaiting();
    const due = awaiting ? this.target.dueInMs() : Infinity;
    const timeout = !awaiting ? Infinity : due === Infinity ? PARK_TIMEOUT_MS_DEFAULT : Math.max(1, Math.ceil(due));
    if (this.watch.watch(timeout)) {
      this.parks++;
      return;
    }
    // Work is there already: take it now if awaited, else after the idle interval.
    if (awaiting) this.pollSoon();
    else this.drainLater();
  }

  private drainLater(): void {
    if (this.idleTimer !== null) return;
    this.idleTimer = setTimeout(this.onPoll, this.idleDrainMs);
  }

  /** The watch ended (a ring, or the awaited deadline): poll promptly while something is awaited, else after the idle interval. */
  private readonly onWake = (): void => {
    if (this.stopped || this.immediate) return;
    if (this.target.awaiting()) {
      this.emptyPolls = 0;
      this.pollSoon();
    } else {
      this.drainLater();
    }
  };
}
