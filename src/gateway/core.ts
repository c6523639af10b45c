// GatewayCore: what every command producer on an I/O thread needs (gateway
// threads and the control plane): its own SpscRing to the engine, a cursor on
// the event ring folded into a Views read model, and the table of held
// requests waiting for their completion records. I/O threads only; never
// blocks: the event ring is drained from the event loop.
//
// Correlation = (generation << 16) | slot, so a completion that arrives after
// its request timed out (504) is recognised as stale and dropped.

import { CommandCompleted, Filled, Header, LAYOUT_FINGERPRINT, PATH_NAMES, T_COMMAND_COMPLETED, T_FILLED } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { msToNsHiLo } from '../lib/u64.js';
import { monoUs } from '../lib/mono_clock.js';
import { BroadcastConsumer } from '../ring/broadcast_ring.js';
import type { Doorbell } from '../ring/doorbell.js';
import { BellWatch, LoopWaitStrategy, type WaitKind } from '../ring/wait.js';
import type { CommandProducer } from '../ring/command_producer.js';
import { SeqStampReader } from '../ring/seq_stamps.js';
import type { Views } from '../views/views.js';
import type { DurableSeq } from '../journal/durable.js';
import type { ReplicationStatus } from '../replication/status.js';
import { SYSTEM_TIME, type TimeSource } from '../lib/time.js';
import type { PlacementFill } from '../wire/responses.js';
import { ApiError } from './envelope.js';
import { HeldEvents } from './held_events.js';

export const MAX_PENDING = 1 << 16;

/**
 * When one request passed each stage (monoUs(), µs on the process-wide
 * monotonic clock; NaN for a stage it did not pass): its head arrived, its
 * body was complete and verified (signature, schema), its command was
 * published to the engine's ring, the engine round that sequenced it ended,
 * the journal's group commit that made it durable ended, this thread applied
 * its completion, its reply was written. A batch keeps its last command's.
 */
export interface StageTimes {
  tHead: number;
  tVerified: number;
  tPublished: number;
  tSequenced: number;
  tDurable: number;
  tApplied: number;
  tReplied: number;
}

/** The stage histograms kept per route (src/metrics), each the time between two stamps of StageTimes. */
export const STAGES = ['total', 'verify', 'publish', 'sequence', 'durable', 'apply', 'reply'] as const;
export type Stage = (typeof STAGES)[number];

/** Fresh stage times: the head arrived at tHead (default now). */
export function stageTimes(tHead = monoUs()): StageTimes {
  return { tHead, tVerified: NaN, tPublished: NaN, tSequenced: NaN, tDurable: NaN, tApplied: NaN, tReplied: NaN };
}

/** The outcome of one sequenced command, as its completion record says. */
export interface Completion {
  seq: number;
  /** The sequencer's stamp of the command (ns since the epoch, two u32 halves). */
  ts_hi: number;
  ts_lo: number;
  status: number;
  code_num: number;
  order_status: number;
  reason: number;
  order_id: number;
  filled_qty: number;
  resting_qty: number;
  result: number;
  /** The command's result time (an armed dead-man's firing time), ns since the epoch in two u32 halves. */
  result_ts_hi: number;
  result_ts_lo: number;
  /** The taker fills of a placement; NO_FILLS (shared, frozen) when there are none. */
  fills: PlacementFill[];
}

/** The fills of a completion without any (one frozen array for all of them). */
export const NO_FILLS: PlacementFill[] = Object.freeze([]) as unknown as PlacementFill[];

/** The Completion a CommandCompleted record at o says, with the taker fills gathered from the command's Filled records. */
export function completionOf(m: Mem, o: number, fills: PlacementFill[]): Completion {
  return {
    seq: Header.seq(m, o),
    ts_hi: Header.ts_hi(m, o),
    ts_lo: Header.ts_lo(m, o),
    status: CommandCompleted.status(m, o),
    code_num: CommandCompleted.code_num(m, o),
    order_status: CommandCompleted.order_status(m, o),
    reason: CommandCompleted.reason(m, o),
    order_id: CommandCompleted.order_id(m, o),
    filled_qty: CommandCompleted.filled_qty(m, o),
    resting_qty: CommandCompleted.resting_qty(m, o),
    result: CommandCompleted.result(m, o),
    result_ts_hi: CommandCompleted.result_ts_hi(m, o),
    result_ts_lo: CommandCompleted.result_ts_lo(m, o),
    fills,
  };
}

export interface GatewayCoreOptions {
  producerId: number;
  producer: CommandProducer;
  eventRing: SharedArrayBuffer;
  consumerIndex: number;
  views: Views;
  response_budget_ms: number;
  /** Held requests above which sheddable commands are refused 503. */
  shed_pending: number;
  /** Events are applied only up to this seq (the journal's durable_seq); null applies all (tests without a journal). */
  durable?: DurableSeq | null;
  /** The engine's (seq, time) stamps per round and the journal's per group commit (SeqStamps): the stage times of held requests. */
  sequencedStamps?: SharedArrayBuffer | null;
  durableStamps?: SharedArrayBuffer | null;
  /** How this thread waits for the completions of its held requests (src/ring/wait.ts); default park. */
  wait?: WaitKind;
  /** With replication: this node's role; commands are refused 503 not_primary unless it is the primary. */
  replication?: ReplicationStatus | null;
  /** The wall clock stamped on commands (default SYSTEM_TIME; tests step it). */
  time?: TimeSource;
}

/** Called for every event right after the read model applied it (the WebSocket fan-out). */
export type AppliedListener = (m: Mem, o: number) => void;

/**
 * Whoever holds a command for its outcome: called once, with the command's
 * completion, or with null when none came within the response budget (the
 * command may still be sequenced later). Lanes pass a long-lived object (a
 * pending binary record, a promise's resolve wrapped once), so holding a
 * command allocates no closure.
 */
export interface CompletionWaiter {
  complete(c: Completion | null): void;
  /**
   * Optional: the completion of a command already answered null (timed
   * out) that was sequenced after all, so a caller can undo what nobody was
   * told of (a key whose secret was never handed out). Called at most once,
   * after the drain that applied it.
   */
  late?(c: Completion): void;
  /** Optional: its command was never written, its key having been revoked while it waited for room (else complete(null)). */
  refused?(): void;
}

/** Writes a command's fields (after its header) into the ring at o; may run after hold() returned, for a command that waits for room. */
export interface CommandWriter {
  write(m: Mem, o: number): void;
}

/** A function as a CommandWriter (submit()'s adapter). */
class WriteFn implements CommandWriter {
  constructor(readonly write: (m: Mem, o: number) => void) {}
}

/** The placeholder of a completion already handed over (drain). */
const NO_WAITER: CompletionWaiter = { complete(): void {} };

/** A promise's resolve as a CompletionWaiter (submit()'s adapter). */
class Resolver implements CompletionWaiter {
  constructor(
    private readonly resolve: (c: Completion | null) => void, readonly late?: (c: Completion) => void,
    private readonly reject?: (e: unknown) => void,
  ) {}
  complete(c: Completion | null): void {
    this.resolve(c);
  }
  refused(): void {
    this.reject!(new ApiError('unauthorized', 'missing or invalid credentials'));
  }
}

/** A command the ring had no room for, queued because it may not be shed. */
interface Deferred {
  size: number;
  write: (m: Mem, o: number) => void;
  slot: number;
  trace: StageTimes | null;
  /** The key of the request (0: none); a revoked key's command is not written. */
  key: number;
  corr: number;
}

export class GatewayCore {
  readonly views: Views;
  readonly producerId: number;
  private readonly producer: CommandProducer;
  private readonly consumer: BroadcastConsumer;
  private readonly durable: DurableSeq | null;
  private readonly replication: ReplicationStatus | null;
  private readonly time: TimeSource;
  /** Set by the WebSocket lane; sees exactly the events the read model applied, in order. */
  onApplied: AppliedListener | null = null;
  private readonly budgetMs: number;
  private readonly shedPending: number;
  private readonly waiters: (CompletionWaiter | null)[] = new Array(MAX_PENDING).fill(null);
  /** Stage times of the request each held command belongs to (null: not traced). */
  private readonly traces: (StageTimes | null)[] = new Array(MAX_PENDING).fill(null);
  /** Traces of commands written since the last publish (stamped when it happens). */
  private readonly unpublished: StageTimes[] = [];
  private readonly sequencedAt: SeqStampReader | null;
  private readonly durableAt: SeqStampReader | null;
  /**
   * The request whose handler runs now (set around a route handler by
   * invokeRoute): submit() ties the commands it writes to these stage times.
   */
  tracing: StageTimes | null = null;
  /** The key of the request whose handler runs now (set with `tracing`); 0 for the control plane. */
  callerKey = 0;
  /** monoUs() of the current drain, read once, when the first traced completion needs it. */
  private drainUs = NaN;
  private readonly fills: (PlacementFill[] | null)[] = new Array(MAX_PENDING).fill(null);
  private readonly generation = new Uint16Array(MAX_PENDING);
  private readonly deadline = new Float64Array(MAX_PENDING);
  private readonly freeSlots: number[] = [];
  private readonly deferred: Deferred[] = [];
  /** Held requests in submission order; the budget is the same for all, so deadlines are ordered. */
  private readonly expiryQueue: number[] = [];
  private expiryHead = 0;
  pending = 0;
  /**
   * Where this thread learns that events became applicable: the journal's
   * durable_seq doorbell (rung after each group commit), or the event ring's
   * own (rung by the engine) when no journal gates what is applied.
   */
  private readonly bell: Doorbell;
  /**
   * Drives drain and expiry from the event loop: promptly (by the configured
   * wait kind) while requests are held, parked on the bell otherwise. Never
   * blocks the event loop; an idle thread uses no CPU.
   */
  readonly waiter: LoopWaitStrategy;
  /** Counters for metrics. */
  shed = 0;
  timeouts = 0;

  constructor(opts: GatewayCoreOptions) {
    this.views = opts.views;
    this.producerId = opts.producerId;
    this.producer = opts.producer;
    this.durable = opts.durable ?? null;
    this.replication = opts.replication ?? null;
    this.time = opts.time ?? SYSTEM_TIME;
    this.budgetMs = opts.response_budget_ms;
    this.shedPending = opts.shed_pending;
    for (let i = MAX_PENDING - 1; i >= 0; i--) this.freeSlots.push(i);
    this.consumer = new BroadcastConsumer(opts.eventRing, LAYOUT_FINGERPRINT, opts.consumerIndex);
    this.consumer.open();
    this.sequencedAt = opts.sequencedStamps ? new SeqStampReader(opts.sequencedStamps) : null;
    this.durableAt = opts.durableStamps ? new SeqStampReader(opts.durableStamps) : null;
    this.bell = this.durable !== null ? this.durable.doorbell : this.consumer.doorbell;
    this.waiter = new LoopWaitStrategy(opts.wait ?? 'park', this.bell, {
      poll: () => {
        const n = this.drain();
        this.expire();
        return n;
      },
      awaiting: () => this.pending > 0,
      hasWork: () => this.hasApplicable(),
      dueInMs: () => this.nextDeadlineMs() - performance.now(),
    });
    this.waiter.start();
  }

  close(): void {
    this.closed = true;
    this.waiter.stop();
    this.consumer.close();
  }

  /**
   * Set by close(). A request can still arrive on a keep-alive connection
   * after its thread stopped (it is answered 503 and the connection closed);
   * its header-time drain must then do nothing, not throw inside a uWS
   * handler (an exception there ends the thread with sockets open, which
   * aborts the process).
   */
  private closed = false;

  /** Starts waiting promptly for completions (after a submit). */
  kick(): void {
    if (this.pending > 0) this.waiter.kick();
  }

  /** The deadline of the oldest request still held (performance.now() time), Infinity when none. */
  private nextDeadlineMs(): number {
    const slot = this.oldestHeldSlot();
    return slot < 0 ? Infinity : this.deadline[slot]!;
  }

  /**
   * The slot of the oldest request still held, -1 when none. Answered
   * requests at the head of expiryQueue are dropped on the way, so every
   * entry is passed over once: most answers come from drains that do not
   * expire (the lanes drain on their own), and scanning over them on every
   * hold() took 10% of a gateway thread under WebSocket load.
   */
  private oldestHeldSlot(): number {
    const q = this.expiryQueue;
    while (this.expiryHead < q.length) {
      const corr = q[this.expiryHead]!;
      const slot = corr & 0xffff;
      if (this.generation[slot] === corr >>> 16 && this.waiters[slot] !== null) {
        if (this.expiryHead > 4096 && this.expiryHead * 2 > q.length) {
          q.splice(0, this.expiryHead);
          this.expiryHead = 0;
        }
        return slot;
      }
      this.expiryHead++;
    }
    q.length = 0;
    this.expiryHead = 0;
    return -1;
  }

  /**
   * For another event-loop poller of this thread (the WebSocket lane's pump):
   * a watch on the bell this core's events become applicable by (durable),
   * with the doorbell protocol's re-check; `onRing` follows each ring.
   */
  bellWatch(onRing: () => void): BellWatch {
    return new BellWatch(this.bell, () => this.hasApplicable(), onRing);
  }

  /** True when an event that may be applied now (durable) is waiting, or the ring fills behind one that is not. */
  private hasApplicable(): boolean {
    const sp = this.spilled;
    // During a hold the spill is applied by the release, not by a drain: it is no work then.
    if (!sp.empty && this.held === null && Header.seq(sp.mem, sp.offset) <= this.durable!.get()) return true;
    const c = this.consumer;
    if (!c.hasUnread()) return false;
    if (this.durable === null) return true;
    if (this.ringFilling()) return true;
    const o = c.peek();
    return sp.empty && o >= 0 && Header.seq(c.mem, o) <= this.durable.get();
  }

  /**
   * Events past durable_seq taken off the ring because it was filling: one
   * command's events may outgrow the ring, and the journal makes none of them
   * durable before its last one is written, which needs the room the first
   * ones hold. Leaving them in the ring would block the engine for good.
   */
  private readonly spilled = new HeldEvents();

  /** More than a quarter of the ring is published and not yet taken by this consumer. */
  private ringFilling(): boolean {
    const c = this.consumer;
    return ((c.writePosition() - c.position()) >>> 0) > c.capacity >>> 2;
  }

  /** Moves every published event from the ring into the spill (they follow what is spilled already). */
  private spillRing(): void {
    const c = this.consumer;
    for (let o = c.peek(); o >= 0; o = c.peek()) {
      this.spilled.add(c.mem, o);
      c.advance();
    }
  }

  /**
   * Applies every published durable event to the read model (and the
   * WebSocket listener) and resolves completions; returns the count. An
   * event past durable_seq stays in the ring until the journal has synced it.
   */
  drain(): number {
    if (this.closed) return 0;
    if (this.held !== null) return this.drainIntoHold(this.held);
    const c = this.consumer;
    const limit = this.durable === null ? Number.MAX_SAFE_INTEGER : this.durable.get();
    this.drainUs = NaN;
    let n = 0;
    const sp = this.spilled;
    if (!sp.empty) {
      this.spillRing();
      for (; !sp.empty; sp.next()) {
        if (Header.seq(sp.mem, sp.offset) > limit) break;
        this.applyEvent(sp.mem, sp.offset);
        n++;
      }
    }
    if (sp.empty) {
      for (let o = c.peek(); o >= 0; o = c.peek()) {
        const m = c.mem;
        if (Header.seq(m, o) > limit) {
          if (this.ringFilling()) this.spillRing();
          break;
        }
        this.applyEvent(m, o);
        c.advance();
        n++;
      }
    }
    this.handOut();
    return n;
  }

  /** One event: the read model, the listener, and this thread's own completions. */
  private applyEvent(m: Mem, o: number): void {
    this.views.apply(m, o);
    if (this.onApplied !== null) this.onApplied(m, o);
    if (Header.producer(m, o) === this.producerId) this.onOwnEvent(m, o);
  }

  /** The end of a drain: deferred commands, then the completions, once the events are consumed. */
  private handOut(): void {
    if (this.deferred.length > 0) this.flushDeferred();
    // Completions are handed over once the events are consumed: a waiter
    // runs lane code (a reply, a promise), which must never see a record it
    // could read twice.
    const w = this.completedWaiters;
    const cs = this.completedOutcomes;
    // Taken off the lists before each call, so none is ever called twice.
    for (let i = 0; i < w.length; i++) {
      const waiter = w[i]!;
      const outcome = cs[i]!;
      w[i] = NO_WAITER;
      waiter.complete(outcome);
    }
    w.length = 0;
    cs.length = 0;
  }

  /** While set, drain() takes durable events off the ring into it, unapplied (holdEvents). */
  private held: HeldEvents | null = null;

  /**
   * From now on drain() takes the durable events off the ring without
   * applying them: the read model stays at its seq while a snapshot is
   * captured from it in steps, and the ring does not wait for this thread (a
   * consumer that lags blocks the engine). releaseEvents() applies them.
   * Completions of this thread's own commands wait for the release.
   */
  holdEvents(): void {
    assert(this.held === null, 'gateway core: events are held already');
    this.held = new HeldEvents();
  }

  /** Ends the hold: applies the held events in order, then drains the ring; returns how many events were held. */
  releaseEvents(): number {
    const held = this.held;
    if (held === null) return 0;
    this.held = null;
    if (this.closed) return 0;
    this.drainUs = NaN;
    const count = held.count;
    for (; !held.empty; held.next()) this.applyEvent(held.mem, held.offset);
    this.handOut();
    this.drain();
    return count;
  }

  private drainIntoHold(held: HeldEvents): number {
    const c = this.consumer;
    const limit = this.durable === null ? Number.MAX_SAFE_INTEGER : this.durable.get();
    let n = 0;
    // Spilled events come before anything still in the ring: they are applied by the drain after the release.
    if (!this.spilled.empty) {
      this.spillRing();
      return 0;
    }
    for (let o = c.peek(); o >= 0; o = c.peek()) {
      if (Header.seq(c.mem, o) > limit) {
        if (this.ringFilling()) this.spillRing();
        break;
      }
      held.add(c.mem, o);
      c.advance();
      n++;
    }
    return n;
  }

  /** Completions drained and not yet handed to their waiters (drain's end). */
  private readonly completedWaiters: CompletionWaiter[] = [];
  /** Timed-out commands whose waiter wants a late completion (CompletionWaiter.late), by correlation id. */
  private readonly lateWaiters = new Map<number, CompletionWaiter>();
  private readonly completedOutcomes: Completion[] = [];

  private onOwnEvent(m: Mem, o: number): void {
    const corr = Header.correlation(m, o);
    const slot = corr & 0xffff;
    if (this.generation[slot] !== corr >>> 16 || this.waiters[slot] === null) { // timed out earlier
      if (this.lateWaiters.size > 0 && Header.type(m, o) === T_COMMAND_COMPLETED) {
        const w = this.lateWaiters.get(corr);
        if (w !== undefined) {
          this.lateWaiters.delete(corr);
          const c = completionOf(m, o, NO_FILLS);
          setImmediate(() => w.late!(c));
        }
      }
      return;
    }
    const type = Header.type(m, o);
    if (type === T_FILLED) {
      if (Filled.taker_account(m, o) === Header.account(m, o)) {
        let f = this.fills[slot];
        if (f === null) f = this.fills[slot] = [];
        f.push({ tick_yes: Filled.tick_yes(m, o), qty: Filled.qty(m, o), path: PATH_NAMES[Filled.path(m, o)]! });
      }
      return;
    }
    if (type !== T_COMMAND_COMPLETED) return;
    const waiter = this.waiters[slot]!;
    const seq = Header.seq(m, o);
    const trace = this.traces[slot];
    if (trace !== null) {
      if (this.drainUs !== this.drainUs) this.drainUs = monoUs();
      trace.tSequenced = this.sequencedAt === null ? NaN : this.sequencedAt.timeOf(seq);
      trace.tDurable = this.durableAt === null ? NaN : this.durableAt.timeOf(seq);
      trace.tApplied = this.drainUs;
    }
    const completion = completionOf(m, o, this.fills[slot] ?? NO_FILLS);
    this.release(slot);
    this.completedWaiters.push(waiter);
    this.completedOutcomes.push(completion);
  }

  /**
   * Frees a slot. Its generation moves on when a command was written under
   * its correlation (a late completion of it must not reach the slot's next
   * request); a slot whose command was never written keeps it, so a burst of
   * sheds cannot cycle the 16-bit generation of one (LIFO) slot back to that
   * of a request that timed out while its command still waits in the ring.
   */
  private release(slot: number, written = true): void {
    this.waiters[slot] = null;
    this.traces[slot] = null;
    this.fills[slot] = null;
    if (written) this.generation[slot] = (this.generation[slot]! + 1) & 0xffff;
    this.freeSlots.push(slot);
    this.pending--;
  }

  /**
   * Refuses a write 503 not_primary on a node that does not sequence (a
   * standby or a read replica, or a primary that stepped down), naming the
   * primary's public address when known.
   */
  assertWritable(): void {
    const r = this.replication;
    if (r === null || r.writable) return;
    const role = r.role;
    throw new ApiError('not_primary', `this node is a ${role === 'fenced' ? 'former primary' : role}: send writes to the primary`, {
      primary_url: r.primaryUrl,
      role,
    });
  }

  /** A primary that stepped down answers nothing more (every request gets 503 not_primary) until it exits. */
  get fenced(): boolean {
    return this.replication !== null && this.replication.role === 'fenced';
  }

  /**
   * Resolves true once the read model has applied seq (a read's min_seq),
   * false after waitMs: read-your-writes across nodes.
   */
  async waitApplied(seq: number, waitMs: number): Promise<boolean> {
    const until = performance.now() + waitMs;
    for (;;) {
      this.drain();
      if (this.views.asOfSeq >= seq) return true;
      if (performance.now() >= until) return false;
      await new Promise((r) => setTimeout(r, 1));
    }
  }

  /** True when n more sheddable commands would be refused now (batch places are shed whole). */
  wouldShed(n: number): boolean {
    return (
      this.pending + n > this.shedPending ||
      this.freeSlots.length < n ||
      this.deferred.length > 0 || // hold() sheds every sheddable command behind one waiting for room
      this.producer.freeBytes() < n * 128 ||
      this.engineLagging(performance.now())
    );
  }

  /**
   * The engine is behind when the oldest held request has waited more than
   * half the response budget: new sheddable work would only time out.
   */
  private engineLagging(nowMs: number): boolean {
    const slot = this.oldestHeldSlot();
    return slot >= 0 && this.deadline[slot]! - this.budgetMs / 2 < nowMs;
  }

  /** How long the oldest request still held has waited, ms (0 when none): the engine lag of metrics. */
  oldestHeldMs(nowMs = performance.now()): number {
    const slot = this.oldestHeldSlot();
    return slot < 0 ? 0 : Math.max(0, nowMs - (this.deadline[slot]! - this.budgetMs));
  }

  /** Scratch of the command stamp (ns since the epoch as hi, lo). */
  private readonly stamp = new Uint32Array(2);

  /** Writes a command's header at o (stamped with the wall clock, ns), then `write` its fields. */
  private writeCommand(m: Mem, o: number, type: number, account: number, corr: number, cmd: CommandWriter): void {
    msToNsHiLo(this.time.nowMs(), this.stamp);
    Header.set_type(m, o, type);
    Header.set_producer(m, o, this.producerId);
    Header.set_correlation(m, o, corr);
    Header.set_account(m, o, account);
    Header.set_seq(m, o, 0);
    Header.set_ts(m, o, this.stamp[0]!, this.stamp[1]!);
    cmd.write(m, o);
  }

  /**
   * Writes one command (header filled here, fields by `write`) and resolves
   * with its completion, or null when no outcome came within the budget
   * (the caller answers 504). The promise form of hold(), for the commands
   * that are not on a hot path.
   */
  submit(
    type: number, size: number, account: number, sheddable: boolean, write: (m: Mem, o: number) => void, late?: (c: Completion) => void,
  ): Promise<Completion | null> {
    let waiter: Resolver | null = null;
    const done = new Promise<Completion | null>((resolve, reject) => {
      waiter = new Resolver(resolve, late, reject);
    });
    this.hold(type, size, account, sheddable, new WriteFn(write), waiter!);
    return done;
  }

  /**
   * Writes one command (header filled here, fields by `cmd`, which may run
   * later for a command that waits for room in the ring) and holds it:
   * `waiter.complete` gets its completion, or null when no outcome came
   * within the budget. Sheddable commands are refused with 503 (thrown) when
   * the ring is full or too many requests are held; the others wait in a
   * queue.
   */
  hold(type: number, size: number, account: number, sheddable: boolean, cmd: CommandWriter, waiter: CompletionWaiter): void {
    this.assertWritable();
    // Deadlines are on this thread's monotonic clock: a wall-clock step must not answer 504 early or hold past the budget.
    const nowMs = performance.now();
    if (sheddable && (this.pending >= this.shedPending || this.freeSlots.length === 0 || this.engineLagging(nowMs))) {
      this.shed++;
      throw new ApiError('shed', 'the exchange is shedding load; retry with backoff');
    }
    const slot = this.freeSlots.pop();
    if (slot === undefined) throw new ApiError('shed', 'too many requests in flight');
    this.pending++;
    const trace = this.tracing;
    this.traces[slot] = trace;
    const corr = ((this.generation[slot]! << 16) | slot) >>> 0;
    // A late waiter left under this correlation by a 16-bit generation ago is stale: it must not see this command's completion.
    if (this.lateWaiters.size > 0) this.lateWaiters.delete(corr);
    // Behind a deferred command nothing overtakes it: the queue is the ring's tail until it drains.
    const o = this.deferred.length > 0 ? -1 : this.producer.tryClaim(size);
    if (o < 0) {
      if (sheddable) {
        this.release(slot, false);
        this.shed++;
        throw new ApiError('shed', 'the command ring is full; retry with backoff');
      }
      // Stamped when it is written, like any command.
      this.deferred.push({
        size, write: (m, at) => this.writeCommand(m, at, type, account, corr, cmd), slot, trace, key: this.callerKey, corr,
      });
    } else {
      const m = this.producer.mem;
      zero(m, o, size);
      this.writeCommand(m, o, type, account, corr, cmd);
      if (trace !== null) this.unpublished.push(trace);
      this.schedulePublish();
    }
    this.deadline[slot] = nowMs + this.budgetMs;
    this.expiryQueue.push(corr);
    this.waiters[slot] = waiter;
  }

  /**
   * Commands written during one event-loop turn are published together, with
   * one doorbell wake for the engine: under load uWS handles many requests
   * per turn, and a wake (futex) per command cost ~9% of the gateway thread.
   */
  private schedulePublish(): void {
    if (this.publishScheduled) return;
    this.publishScheduled = true;
    setImmediate(this.publishNow);
  }

  private readonly publishNow = (): void => {
    this.publishScheduled = false;
    this.stampPublished();
    this.producer.publish();
  };

  /** The commands written since the last publish are published now. */
  private stampPublished(): void {
    const u = this.unpublished;
    if (u.length === 0) return;
    const t = monoUs();
    for (let i = 0; i < u.length; i++) u[i]!.tPublished = t;
    u.length = 0;
  }

  private publishScheduled = false;

  private flushDeferred(): void {
    let wrote = false;
    while (this.deferred.length > 0) {
      const d = this.deferred[0]!;
      if (d.key > 0 && this.keyGone(d.key)) {
        this.deferred.shift();
        this.dropDeferred(d);
        continue;
      }
      const o = this.producer.tryClaim(d.size);
      if (o < 0) break;
      zero(this.producer.mem, o, d.size);
      d.write(this.producer.mem, o);
      this.deferred.shift();
      if (d.trace !== null) this.unpublished.push(d.trace);
      wrote = true;
    }
    if (wrote) {
      this.stampPublished();
      this.producer.publish();
    }
  }

  /** True when the key was revoked (or evicted): as authenticate() sees it now. */
  private keyGone(keyId: number): boolean {
    const k = this.views.keyInfo(keyId);
    return k === null || k.revoked;
  }

  /** A deferred command of a key revoked while it waited: never written; its request, if still held, is refused. */
  private dropDeferred(d: Deferred): void {
    this.lateWaiters.delete(d.corr);
    const w = this.waiters[d.slot];
    if (w === null || this.generation[d.slot] !== d.corr >>> 16) return; // answered 504 already
    this.release(d.slot);
    if (w.refused) w.refused();
    else w.complete(null);
  }

  /** Answers null (504) to every held request past its budget. Call every few ms. */
  expire(nowMs = performance.now()): void {
    for (let slot = this.oldestHeldSlot(); slot >= 0 && this.deadline[slot]! <= nowMs; slot = this.oldestHeldSlot()) {
      this.expiryHead++;
      const w = this.waiters[slot]!;
      if (w.late !== undefined) this.lateWaiters.set(((this.generation[slot]! << 16) | slot) >>> 0, w);
      this.release(slot);
      this.timeouts++;
      w.complete(null);
    }
  }

  hasWork(): boolean {
    return this.pending > 0 || this.hasApplicable();
  }
}

function zero(m: Mem, o: number, size: number): void {
  const u32 = m.u32;
  const len = u32[o >>> 2]!;
  assert(len === size, 'gateway: claimed record length');
  for (let i = (o >>> 2) + 1, end = (o + size) >>> 2; i < end; i++) u32[i] = 0;
}
