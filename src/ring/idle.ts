// Idle strategies for ring consumers.
//
// ParkingIdle (engine thread, and any worker allowed to block): after a
// drain that found nothing the loop calls idle(0); it returns at once for
// about spin_us (the loop keeps polling its rings: a record arriving then
// costs no wake-up), then parks on a Doorbell with Atomics.wait. Producers
// call doorbell.wake() after publish(), which costs one Atomics.load unless
// the consumer has announced that it is parking. Parking follows the
// protocol in doorbell.ts: announce, re-check every source (hasUnread is an
// SC load of the write position), then wait only if all were empty; so no
// wake-up is lost, and the timeout is a safety net, not a poll interval.
// Before parking, a consumer must have released what it consumed (SpscRing
// and BroadcastConsumer do so whenever peek() returns -1), or a producer
// waiting for space would wait for the timeout.
//
// LoopPoller (uWebSockets.js I/O threads, which must never block): polls a
// callback from the event loop with setImmediate while the callback reports
// pending work (e.g. replies outstanding), and stops when nothing is
// pending; kick() restarts it when new work is sent. Atomics.waitAsync costs
// ~55 us per wake here, so it is not used on this path.
//
// Neither reads a clock for anything but the length of the spin phase, and
// neither allocates per idle round except the Immediate that setImmediate
// creates per poll.

import { assert } from '../lib/assert.js';
import type { Doorbell } from './doorbell.js';

/** Anything a parking consumer re-checks after announcing: SpscRing, BroadcastConsumer. */
export interface IdleSource {
  /** Fresh (Atomics.load) check for unread records. */
  hasUnread(): boolean;
}

export interface ParkingIdleOptions {
  /** How long to keep returning at once before parking; 0 parks on the first empty round. */
  spin_us?: number;
  /** Upper bound of one park; wake-ups are not lost, this only bounds damage from a missing wake(). */
  park_timeout_ms?: number;
}

/**
 * Default spin phase. Measured on this 2-vCPU host (bench/ring_handoff.ts
 * and a breakdown with per-hop stamps, I/O side polling with LoopPoller,
 * requests 1 ms apart so the consumer had parked): waking a parked thread
 * took ~20-30 us at p50, and the woken thread then seems to share the
 * waker's vCPU, because the reply reached the waker's poll ~20 us later
 * with spin 0, ~45 us with 20 us, ~75 us with 50 us: the spin phase holds
 * the CPU the waker needs. Round trips: p50 ~45 us at spin 0, ~75 us at
 * 20 us, ~110 us at 50 us; p99 ~2-3 ms in all cases (the wake-up itself,
 * queued behind the busy-polling I/O thread). A longer spin only pays while
 * records arrive closer together than the spin, so keep it short.
 */
export const PARKING_SPIN_US_DEFAULT = 20;
export const PARKING_TIMEOUT_MS_DEFAULT = 100;

/** Empty rounds between clock reads in the spin phase. */
const SPIN_CHECK_ROUNDS = 64;

export class ParkingIdle {
  readonly spin_us: number;
  readonly park_timeout_ms: number;
  /** Times Atomics.wait was entered. */
  parks = 0;
  /** Parks that ended by timeout rather than a wake(); nonzero only if a producer forgot wake(). */
  timeouts = 0;
  /** Parks abandoned because the re-check after announcing found work. */
  rechecks = 0;

  private readonly spinMs: number;
  private readonly sources: readonly IdleSource[];
  private emptyRounds = 0;
  private spinStartMs = 0;

  constructor(readonly doorbell: Doorbell, sources: IdleSource | readonly IdleSource[], opts: ParkingIdleOptions = {}) {
    this.sources = Array.isArray(sources) ? sources.slice() : [sources as IdleSource];
    assert(this.sources.length > 0, 'idle: ParkingIdle needs at least one source');
    this.spin_us = opts.spin_us ?? PARKING_SPIN_US_DEFAULT;
    this.park_timeout_ms = opts.park_timeout_ms ?? PARKING_TIMEOUT_MS_DEFAULT;
    assert(this.spin_us >= 0 && this.park_timeout_ms > 0, 'idle: bad ParkingIdle options');
    this.spinMs = this.spin_us / 1000;
  }

  /**
   * Call once per loop round with the number of records the round handled.
   * Returns at once while spinning; blocks in Atomics.wait once the spin
   * phase has passed with no work.
   */
  idle(workCount: number): void {
    if (workCount > 0) {
      this.emptyRounds = 0;
      return;
    }
    const n = ++this.emptyRounds;
    if (this.spinMs > 0) {
      // The clock is read only every SPIN_CHECK_ROUNDS empty rounds, so a
      // busy loop that idles for a moment does not pay for it.
      if (n < SPIN_CHECK_ROUNDS) return;
      if (n === SPIN_CHECK_ROUNDS) {
        this.spinStartMs = performance.now();
        return;
      }
      if (n % SPIN_CHECK_ROUNDS !== 0 || performance.now() - this.spinStartMs < this.spinMs) return;
    }
    this.park();
    this.emptyRounds = 0;
  }

  /** Announce, re-check, and wait; returns when a record may be there. */
  park(): void {
    const bell = this.doorbell;
    bell.announce();
    const sources = this.sources;
    for (let i = 0; i < sources.length; i++) {
      if (sources[i]!.hasUnread()) {
        this.rechecks++;
        return;
      }
    }
    this.parks++;
    if (bell.park(this.park_timeout_ms) === 'timed-out') this.timeouts++;
  }
}

/**
 * Polls from the event loop while work is pending. onPoll returns true while
 * something is still pending (keep polling), false when idle (stop).
 */
export class LoopPoller {
  /** Poll callbacks run so far (diagnostics and tests). */
  polls = 0;
  private active = false;
  private stopped = false;
  /** Set by kick(): a kick from inside onPoll keeps the poller going even if onPoll returns false. */
  private kicked = false;
  private readonly onImmediate = (): void => {
    if (this.stopped) {
      this.active = false;
      return;
    }
    this.polls++;
    this.kicked = false;
    if (this.onPoll() || this.kicked) setImmediate(this.onImmediate);
    else this.active = false;
  };

  constructor(private readonly onPoll: () => boolean) {}

  /**
   * Starts polling (from the next event-loop turn) unless already polling.
   * Called from inside onPoll (e.g. a reply handler that sends the next
   * request), it keeps the poller going even if onPoll then returns false.
   */
  kick(): void {
    this.stopped = false;
    this.kicked = true;
    if (this.active) return;
    this.active = true;
    setImmediate(this.onImmediate);
  }

  /** Stops after the current poll; kick() starts again. */
  stop(): void {
    this.stopped = true;
  }

  get running(): boolean {
    return this.active;
  }
}
