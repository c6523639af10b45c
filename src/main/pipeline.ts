// Pipeline: allocates the SharedArrayBuffers of the command rings (one per
// producer), the event ring, the engine's doorbell and control block, and
// starts the engine worker. Main thread. Stage numbers follow the data:
//   1. producers (gateways, control plane; ring 0 "timer" is for whoever
//      drives time from outside, the exchange's clock runs in the engine
//      loop) write commands to their rings
//   2. the engine thread sequences, decides and evolves
//   3. consumers (journal, gateway read models) read the event ring

import { Worker } from 'node:worker_threads';
import type { EngineConfig } from '../engine/config.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import { prefault } from '../lib/mem.js';
import { BroadcastConsumer, BroadcastRing } from '../ring/broadcast_ring.js';
import { CommandProducer } from '../ring/command_producer.js';
import { Doorbell } from '../ring/doorbell.js';
import { SeqStamps } from '../ring/seq_stamps.js';
import type { WaitKind } from '../ring/wait.js';
import { SpscRing } from '../ring/spsc_ring.js';
import { EngineControl } from './engine_control.js';
import type { EngineThreadData } from './engine_thread.js';
import type { RecoveryPlan } from '../journal/recovery.js';

export interface PipelineOptions {
  producers: number;
  command_ring_bytes?: number;
  event_ring_bytes?: number;
  event_consumers_max?: number;
  engine?: Partial<EngineConfig>;
  verify?: boolean;
  /** Recovered start (engine_thread replays it before its loop starts). */
  recovery?: RecoveryPlan | null;
  /** The engine's wait strategy (default park). */
  wait?: WaitKind;
  /** Run the exchange's clock in the engine loop (default false: time moves only with the commands). */
  clock?: boolean;
  /** A standby's engine folds the event ring from this consumer index until promoted (engine_thread.ts). */
  follow?: { consumerIndex: number };
  /** false: no engine thread at all (a read replica: the event ring is fed from the replicated log). */
  engineThread?: boolean;
}

export class Pipeline {
  readonly commandRings: SharedArrayBuffer[];
  readonly eventRing: SharedArrayBuffer;
  readonly doorbell: SharedArrayBuffer;
  readonly control: EngineControl;
  /** (last seq, time) the engine stamps per round (SeqStamps). */
  readonly sequencedStamps: SharedArrayBuffer;
  private readonly worker: Worker | null;
  private readonly exited: Promise<number>;

  private constructor(opts: PipelineOptions) {
    assert(opts.producers >= 1, 'pipeline: at least one producer');
    this.commandRings = [];
    for (let i = 0; i < opts.producers; i++)
      this.commandRings.push(SpscRing.allocate(opts.command_ring_bytes ?? 1 << 20, LAYOUT_FINGERPRINT));
    this.eventRing = BroadcastRing.allocate(opts.event_ring_bytes ?? 1 << 24, opts.event_consumers_max ?? 16, LAYOUT_FINGERPRINT);
    // Resident from the start (no first-touch page faults on the hot path; a flat RSS).
    for (const sab of [...this.commandRings, this.eventRing]) prefault(sab);
    this.doorbell = Doorbell.allocate();
    this.control = new EngineControl(EngineControl.allocate());
    this.sequencedStamps = SeqStamps.allocate();
    if (opts.engineThread === false) {
      this.worker = null;
      this.exited = Promise.resolve(0);
      return;
    }
    const data: EngineThreadData = {
      commandRings: this.commandRings,
      eventRing: this.eventRing,
      doorbell: this.doorbell,
      control: this.control.sab,
      sequencedStamps: this.sequencedStamps,
      config: opts.engine ?? {},
      verify: opts.verify ?? false,
      recovery: opts.recovery ?? null,
      wait: opts.wait ?? 'park',
      clock: opts.clock ?? false,
      ...(opts.follow ? { follow: opts.follow } : {}),
    };
    const worker = new Worker(new URL('./engine_thread.js', import.meta.url), { workerData: data, name: 'engine' });
    this.worker = worker;
    this.exited = new Promise((resolve, reject) => {
      worker.once('error', reject);
      worker.once('exit', resolve);
    });
  }

  static start(opts: PipelineOptions): Pipeline {
    return new Pipeline(opts);
  }

  producer(i: number): CommandProducer {
    return new CommandProducer(this.commandRings[i]!, Doorbell.attach(this.doorbell), LAYOUT_FINGERPRINT);
  }

  /** Resolves when the engine thread runs (recovery done, its loop started); rejects if it failed first. */
  async ready(): Promise<void> {
    if (this.worker === null) return;
    let failed: unknown = null;
    let exited = false;
    this.exited.then(() => { exited = true; }, (e: unknown) => { failed = e; exited = true; });
    while (!this.control.running) {
      if (exited) throw failed instanceof Error ? failed : new Error('engine thread exited before it started');
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  /** Starts the engine's clock (when every reader of the event ring has joined) and wakes the engine to look at its timers. */
  startClock(): void {
    this.control.startClock();
    Doorbell.attach(this.doorbell).wake();
  }

  /**
   * Resolves once the started clock has sequenced every timer already due
   * (at most waitMs; false when that ran out or the engine stopped).
   */
  async clockCaughtUp(waitMs: number): Promise<boolean> {
    const until = Date.now() + waitMs;
    while (!this.control.clockCaughtUp) {
      if (Date.now() >= until || !this.control.running) return false;
      await new Promise((r) => setTimeout(r, 1));
    }
    return true;
  }

  /** Steps the engine's clock by offsetMs from the real time (tests of clock faults) and wakes the engine to look at its timers. */
  setClockOffset(offsetMs: number): void {
    this.control.setClockOffsetMs(offsetMs);
    Doorbell.attach(this.doorbell).wake();
  }

  /**
   * Calls onFailure once if the engine thread ends without being asked to
   * stop: an error (an assertion is a crash by design) or an exit. Without a
   * watcher the process would go on taking commands that nothing executes,
   * holding every request until its deadline. No engine thread: never.
   */
  onFailure(onFailure: (error: string) => void): void {
    if (this.worker === null) return;
    this.exited.then(
      (code) => { if (!this.stopping) onFailure(`the engine thread exited (code ${code}) without being asked to stop`); },
      (e: unknown) => { if (!this.stopping) onFailure((e as Error).stack ?? String(e)); },
    );
  }

  private stopping = false;

  /** Asks the engine to drain its rings and stop; resolves with its exit code. */
  async stop(): Promise<number> {
    this.stopping = true;
    this.control.requestStop();
    Doorbell.attach(this.doorbell).wake();
    // A standby's engine (follow mode) parks on the event ring's doorbell, not on the command rings'.
    this.wakeEventReaders();
    return this.exited;
  }

  /** Rings the event ring's doorbell: its readers that park there (the journal; a standby's engine) re-check. */
  wakeEventReaders(): void {
    new BroadcastConsumer(this.eventRing, LAYOUT_FINGERPRINT, 0).doorbell.wake();
  }

  /** Rejects if the engine thread fails (an assertion is a crash by design). */
  get failure(): Promise<number> {
    return this.exited;
  }
}
