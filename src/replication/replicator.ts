// Replicator: the primary's publisher of the replicated log, one more reader
// of the event ring beside the journal thread (which fsyncs in parallel).
// Each pass takes what the ring holds, frames it (batch.ts), cuts at the last
// CommandCompleted and publishes that as one message: one message per
// group-commit batch, whole commands only.
//
// Publishes are pipelined: message k goes out without waiting for k-1's ack,
// carrying Nats-Expected-Last-Sequence = the stream seq k-1 will get (the
// primary is the only writer, so that is the previous expectation + 1) and
// Nats-Msg-Id = <epoch>-<first seq>. Acks are taken strictly in order: the
// head's ack raises replicated_seq to its last seq (durable_seq is the min of
// that and the journal's fsynced_seq) and rings the event ring's doorbell.
//
// Failures, by the server's answer (protocol.ts publishVerdict):
//   lost or late answer (timeout, no responders while a stream leader is
//     elected, reconnect): resend every message still unacknowledged, in
//     order; those that landed come back as duplicates with their seq.
//   wrong last sequence: look at the stream's last message. Another epoch's
//     (a standby claimed): fenced, for good. Our own epoch's: one of our
//     messages was lost in flight; re-chain after what the stream holds and
//     resend.
// An ack stall longer than the lease (the oldest unacknowledged message, or
// the heartbeat round trip when idle) also steps down: the caller stops the
// node so that a standby can take over.
//
// Replication thread only.

import { headers, type MsgHdrs } from '@nats-io/transport-node';
import type { PubAck } from '@nats-io/jetstream';
import type { DurableSeq } from '../journal/durable.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { BroadcastConsumer } from '../ring/broadcast_ring.js';
import { BellWatch } from '../ring/wait.js';
import { keepImmediateShapes } from '../lib/immediate_shapes.js';
import { BatchBuilder } from './batch.js';
import type { LogClient } from './log_client.js';
import { H_EPOCH, H_FIRST_SEQ, H_LAST_SEQ, H_LAYOUT, H_NODE, msgIdOf, publishVerdict } from './protocol.js';
import type { ReplicationStatus } from './status.js';

interface Pending {
  firstSeq: number;
  lastSeq: number;
  body: Uint8Array;
  hdrs: MsgHdrs;
  /** Expected last stream seq (this message lands at expect + 1). */
  expect: number;
  /** performance.now() when first sent: the lease is a duration, never a wall-clock difference (a step would fail the primary over). */
  firstSentAt: number;
  /** Attempt generation: answers of older attempts are ignored. */
  attempt: number;
  result: { ack: PubAck } | { err: unknown } | null;
}

/** Messages in flight at most (each up to max_batch_bytes). */
const MAX_INFLIGHT = 256;
const MAX_INFLIGHT_BYTES = 64 << 20;
/** Empty polls of the ring (event-loop turns) before parking on its doorbell. */
const SPIN_POLLS = 32;
const PARK_MS = 5;

export type StepDown = (reason: string) => void;
export type LogFn = (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>) => void;

export class Replicator {
  private readonly consumer: BroadcastConsumer;
  private readonly builder = new BatchBuilder(1 << 20);
  private readonly queue: Pending[] = [];
  private inflightBytes = 0;
  /** Stream seq the next message is expected to follow. */
  private nextExpect: number;
  private running = true;
  private resending = false;
  private emptyPolls = 0;
  private stallTimer: ReturnType<typeof setInterval>;
  published = 0;
  acked = 0;
  resent = 0;
  bytes = 0;
  /** Last stream seq acknowledged. */
  streamSeq: number;

  constructor(
    private readonly log: LogClient,
    eventRing: SharedArrayBuffer,
    consumerIndex: number,
    private readonly durable: DurableSeq,
    private readonly status: ReplicationStatus,
    readonly epoch: number,
    /** Stream seq of this epoch's claim: the first batch expects it. */
    claimStreamSeq: number,
    private readonly stepDown: StepDown,
    private readonly log_: LogFn,
  ) {
    this.consumer = new BroadcastConsumer(eventRing, LAYOUT_FINGERPRINT, consumerIndex);
    this.watch = new BellWatch(this.consumer.doorbell, () => this.consumer.hasUnread(), () => this.kick());
    keepImmediateShapes(); // its polls are immediates, in bursts: lib/immediate_shapes.ts
    // Opened before the engine is told to sequence: nothing it publishes is missed.
    this.consumer.open();
    this.nextExpect = claimStreamSeq;
    this.streamSeq = claimStreamSeq;
    this.stallTimer = setInterval(() => this.checkStall(), Math.max(20, Math.floor(log.cfg.lease_ms / 10)));
  }

  start(): void {
    this.kick();
  }

  /** Rings the event ring's doorbell (the standby's engine parks on it while following). */
  wakeRing(): void {
    this.consumer.doorbell.wake();
  }

  /** The oldest unacknowledged message is older than the lease: step down. */
  private checkStall(): void {
    const head = this.queue[0];
    if (head !== undefined && performance.now() - head.firstSentAt > this.log.cfg.lease_ms) {
      const waited = Math.round(performance.now() - head.firstSentAt);
      this.fail(`no acknowledgement of the log for ${waited} ms (lease ${this.log.cfg.lease_ms} ms)`);
    }
  }

  private fail(reason: string): void {
    if (!this.running) return;
    this.running = false;
    this.stop();
    this.stepDown(reason);
  }

  /**
   * One chain of polls at most: kick() queues a poll unless one is queued;
   * a poll that finds nothing for SPIN_POLLS turns parks on the ring's
   * doorbell (one pending park at most), and the park's end kicks again.
   */
  private scheduled = false;
  /** The watch on the event ring's doorbell: one waitAsync at most, no V8 timeout (BellWatch). */
  private watch!: BellWatch;

  private kick(): void {
    if (this.scheduled || !this.running) return;
    this.scheduled = true;
    setImmediate(this.poll);
  }

  private readonly poll = (): void => {
    this.scheduled = false;
    if (!this.running) return;
    if (this.pump() > 0) {
      this.emptyPolls = 0;
      this.kick();
      return;
    }
    // The window is full: the unread records are no work until an ack opens it (drainAcks kicks then).
    // Watching the ring now would find them at once (hasUnread) and poll every turn.
    if (this.queue.length >= MAX_INFLIGHT || this.inflightBytes >= MAX_INFLIGHT_BYTES) {
      this.emptyPolls = 0;
      return;
    }
    // Spin only after work (pump() > 0 resets the count): a park that timed out with nothing to do parks again at once.
    if (this.emptyPolls < SPIN_POLLS) {
      this.emptyPolls++;
      this.kick();
      return;
    }
    // Parked on the ring's doorbell; PARK_MS is a safety net.
    if (!this.watch.watch(PARK_MS)) this.kick();
  };

  /** Drains the ring into messages while the window has room; returns the records taken. */
  private pump(): number {
    const c = this.consumer;
    const max = this.log.cfg.max_batch_bytes;
    let n = 0;
    while (this.queue.length < MAX_INFLIGHT && this.inflightBytes < MAX_INFLIGHT_BYTES) {
      let took = 0;
      for (let o = c.peek(); o >= 0; o = c.peek()) {
        this.builder.append(c.mem, o);
        c.advance();
        took++;
        if (this.builder.readyBytes >= max) break;
      }
      n += took;
      const cut = this.builder.cut();
      if (cut === null) break;
      this.send(cut.body, cut.firstSeq, cut.lastSeq);
      if (took === 0) break;
    }
    return n;
  }

  private send(body: Uint8Array, firstSeq: number, lastSeq: number): void {
    const hdrs = headers();
    hdrs.set(H_EPOCH, String(this.epoch));
    hdrs.set(H_FIRST_SEQ, String(firstSeq));
    hdrs.set(H_LAST_SEQ, String(lastSeq));
    hdrs.set(H_NODE, this.log.cfg.node);
    hdrs.set(H_LAYOUT, String(LAYOUT_FINGERPRINT));
    const p: Pending = { firstSeq, lastSeq, body, hdrs, expect: this.nextExpect, firstSentAt: performance.now(), attempt: 0, result: null };
    this.nextExpect++;
    this.queue.push(p);
    this.inflightBytes += body.length;
    this.published++;
    this.bytes += body.length;
    this.publish(p);
  }

  private publish(p: Pending): void {
    const attempt = ++p.attempt;
    p.result = null;
    this.log.js.publish(this.log.subjects.log, p.body, {
      msgID: msgIdOf(this.epoch, p.firstSeq), expect: { lastSequence: p.expect }, headers: p.hdrs,
      timeout: Math.max(500, Math.floor(this.log.cfg.lease_ms / 3)),
    }).then(
      (ack) => this.settle(p, attempt, { ack }),
      (err: unknown) => this.settle(p, attempt, { err }),
    );
  }

  private settle(p: Pending, attempt: number, result: Pending['result']): void {
    if (!this.running || attempt !== p.attempt) return;
    p.result = result;
    this.drainAcks();
  }

  /** Takes answers strictly in order from the head of the queue. */
  private drainAcks(): void {
    let advanced = false;
    while (this.running && !this.resending) {
      const head = this.queue[0];
      if (head === undefined || head.result === null) break;
      if ('err' in head.result) {
        void this.onError(head.result.err);
        break;
      }
      const ack = head.result.ack;
      if (ack.seq !== head.expect + 1) {
        this.fail(`the log stored seqs ${head.firstSeq}..${head.lastSeq} at stream seq ${ack.seq}, expected ${head.expect + 1}`);
        return;
      }
      this.queue.shift();
      this.inflightBytes -= head.body.length;
      this.acked++;
      this.streamSeq = ack.seq;
      this.status.observeAck((performance.now() - head.firstSentAt) / 1000);
      this.durable.setReplicated(head.lastSeq);
      advanced = true;
    }
    if (advanced) {
      // Threads that answer park on durable_seq's doorbell (src/journal/durable.ts).
      this.durable.doorbell.wake();
      this.status.set({
        stream_seq: this.streamSeq,
        acked: this.acked,
        published: this.published,
        resent: this.resent,
        bytes: this.bytes,
        inflight: this.queue.length,
      });
      this.kick();
    }
  }

  private async onError(err: unknown): Promise<void> {
    if (this.resending) return;
    this.resending = true;
    try {
      const verdict = publishVerdict(err);
      if (verdict === 'wrong_last') {
        const last = await this.log.lastEntry();
        if (last === null || last.epoch !== this.epoch) {
          this.fail(
            `fenced: the log moved on to ` +
              `${last === null ? 'nothing' : `epoch ${last.epoch} (${last.kind} at stream seq ${last.streamSeq})`}`,
          );
          return;
        }
        // One of our messages was lost in flight: everything up to the
        // stream's last entry is stored, re-chain the rest after it.
        while (this.queue.length > 0 && this.queue[0]!.lastSeq <= last.lastSeq) {
          const h = this.queue.shift()!;
          this.inflightBytes -= h.body.length;
          this.acked++;
          this.durable.setReplicated(h.lastSeq);
        }
        this.streamSeq = last.streamSeq;
        let expect = last.streamSeq;
        for (const p of this.queue) p.expect = expect++;
        this.nextExpect = expect;
        this.durable.doorbell.wake();
        this.log_('warn', {
          event: 'replication_resync',
          epoch: this.epoch,
          stream_seq: last.streamSeq,
          seq: last.lastSeq,
          resend: this.queue.length,
        });
      } else {
        // A lost or late answer: back off a little (no responders comes back
        // at once while a stream leader is being elected), then resend.
        if (verdict === 'fatal') this.log_('error', { event: 'replication_publish_failed', error: String((err as Error).message ?? err) });
        await new Promise((r) => setTimeout(r, verdict === 'fatal' ? 100 : 25));
      }
      if (!this.running) return;
      this.resent += this.queue.length;
      for (const p of this.queue) this.publish(p);
    } catch (e) {
      // Could not even read the stream: keep trying until the lease runs out.
      this.log_('warn', { event: 'replication_retry', error: String((e as Error).message ?? e) });
      await new Promise((r) => setTimeout(r, 50));
      if (this.running) for (const p of this.queue) this.publish(p);
    } finally {
      this.resending = false;
    }
    this.drainAcks();
    // A resync may have taken messages off the window without an ack to kick the ring's poll (it stops while the window is full).
    this.kick();
  }

  /** Messages not yet acknowledged (graceful stop waits for none). */
  get unacknowledged(): number {
    return this.queue.length + (this.builder.bytes > 0 ? 1 : 0);
  }

  /** Publishes what is left in the ring and waits (up to timeoutMs) for every ack. */
  async flush(timeoutMs: number): Promise<boolean> {
    const until = performance.now() + timeoutMs;
    while (this.running && performance.now() < until) {
      this.pump();
      if (this.queue.length === 0 && !this.consumer.hasUnread()) return true;
      await new Promise((r) => setTimeout(r, 2));
    }
    return this.queue.length === 0;
  }

  stop(): void {
    this.running = false;
    clearInterval(this.stallTimer);
    this.consumer.close();
  }
}
