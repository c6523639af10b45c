// Follower: reads the replicated log from a stream seq on, checks each entry
// the way recovery checks a journal (stream seq continuity: a purged or
// missing message is a gap; epochs only move forward through claims; batch
// seqs continue the applied seq; every frame's checksum, see batch.ts), and
// hands each batch's new records to a sink. A fault stops it (the caller
// stops the node): nothing is ever skipped silently.
//
// RingSink is the sink of a standby or a read replica: it writes the records
// into the event ring, as the engine of a primary would, so the journal, the
// standby's engine (folding in follow mode), the read models and the
// WebSocket lane see exactly what they would on the primary; then it raises
// replicated_seq (the records are in a quorum of the log) and rings the
// event ring's doorbell.
//
// Replication thread only (asynchronous: it shares its event loop with the
// NATS connection and the heartbeats).

import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { DurableSeq } from '../journal/durable.js';
import { Header, LAYOUT_FINGERPRINT } from '../layout/records.js';
import { BroadcastProducer } from '../ring/broadcast_ring.js';
import { BatchFault, scanBatch, type ScannedBatch } from './batch.js';
import type { LogClient } from './log_client.js';
import { entryOf, followStep, type LogEntry } from './protocol.js';
import type { ReplicationStatus } from './status.js';

export interface FollowSink {
  /** Applies the records of `b` with seq > afterSeq; resolves when they are published. */
  apply(b: ScannedBatch, afterSeq: number): Promise<void>;
}

export class RingSink implements FollowSink {
  private readonly producer: BroadcastProducer;

  constructor(eventRing: SharedArrayBuffer, private readonly durable: DurableSeq, private readonly status: ReplicationStatus) {
    this.producer = new BroadcastProducer(eventRing, LAYOUT_FINGERPRINT);
  }

  async apply(b: ScannedBatch, afterSeq: number): Promise<void> {
    const p = this.producer;
    const src = b.mem.u8;
    let last = 0;
    for (const rec of b.offsets) {
      if (Header.seq(b.mem, rec) <= afterSeq) continue;
      const len = Header.len(b.mem, rec);
      let o = p.tryClaim(len);
      while (o < 0) {
        // A reader lags (the ring is full): let it see what is there and wait.
        p.publish();
        p.doorbell.wake();
        await new Promise((r) => setTimeout(r, 1));
        o = p.tryClaim(len);
      }
      p.mem.u8.set(src.subarray(rec, rec + len), o);
      last = rec;
    }
    p.publish();
    this.durable.setReplicated(b.lastSeq);
    p.doorbell.wake();
    this.durable.doorbell.wake();
    if (last !== 0) {
      const tsMs = (Header.ts_hi(b.mem, last) * 4294967296 + Header.ts_lo(b.mem, last)) / 1e6;
      const lag = Math.max(0, Date.now() - tsMs);
      this.status.observeLag(lag / 1000);
      this.status.set({ lag_ms: lag });
    }
  }
}

export class Follower {
  /** Last seq applied (whole commands), last stream seq taken, current epoch (0 before the first entry says). */
  applied: number;
  streamSeq = 0;
  epoch = 0;
  private messages: ConsumerMessages | null = null;
  private stopped = false;

  constructor(
    private readonly log: LogClient,
    private readonly sink: FollowSink,
    private readonly status: ReplicationStatus,
    appliedSeq: number,
    /** A claim was applied (a new epoch; its node and address). */
    private readonly onClaim: (e: LogEntry) => void,
    /** Any entry was taken (evidence that a primary is writing). */
    private readonly onEntry: (e: LogEntry) => void = () => undefined,
  ) {
    this.applied = appliedSeq;
  }

  /**
   * Follows from stream seq `from` until stop() or a fault (rejects with a
   * BatchFault or Error). `epoch` is the epoch in force before `from` when
   * known (0: take the first entry's).
   */
  async run(from: number, epoch: number): Promise<void> {
    this.epoch = epoch;
    this.streamSeq = from - 1;
    const c = await this.log.js.consumers.get(this.log.cfg.stream, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: Math.max(1, from),
    });
    if (this.stopped) return;
    // Short expiry and heartbeats: a follower whose consumer lived on a NATS node that died notices within ~2 s.
    const it = await c.consume({ max_messages: 256, expires: 2000, idle_heartbeat: 500 });
    this.messages = it;
    for await (const m of it) {
      if (this.stopped) break;
      // An ordered consumer that resets (its NATS node went away) may deliver the last message again.
      if (m.seq <= this.streamSeq) continue;
      if (m.seq !== this.streamSeq + 1)
        throw new BatchFault(m.seq, 0, `stream seq ${m.seq} after ${this.streamSeq}: a gap (purged or missing messages)`);
      let e: LogEntry;
      try {
        e = entryOf(this.log.subjects, m.subject, m.seq, m.headers);
      } catch (err) {
        // A message that is not ours (no or bad headers, a foreign subject) is damage in the log, not a NATS hiccup: stop.
        throw new BatchFault(m.seq, 0, (err as Error).message);
      }
      await this.take(e, m.data);
    }
  }

  /** Applies one entry (also used by tools that replay a stream). */
  async take(e: LogEntry, body: Uint8Array): Promise<void> {
    // Records of another build's layout would be folded as this build reads them (a journal segment's header is checked the same way).
    if (e.kind === 'batch' && e.layout !== LAYOUT_FINGERPRINT) {
      const hex = (x: number): string => `0x${x.toString(16)}`;
      throw new BatchFault(e.streamSeq, 0, `layout fingerprint ${hex(e.layout)} differs from this build's ${hex(LAYOUT_FINGERPRINT)}`);
    }
    const step = followStep(this.applied, this.epoch, e);
    if ('fault' in step) throw new BatchFault(e.streamSeq, 0, step.fault);
    if (step.action === 'claim') {
      this.epoch = e.epoch;
      this.onClaim(e);
    } else {
      if (this.epoch === 0) this.epoch = e.epoch;
      if (step.action === 'apply') {
        const b = scanBatch(e.streamSeq, body, e.firstSeq, e.lastSeq);
        await this.sink.apply(b, this.applied);
        this.applied = e.lastSeq;
      }
    }
    this.streamSeq = e.streamSeq;
    this.status.set({ applied_seq: this.applied, stream_seq: this.streamSeq, epoch: this.epoch });
    this.onEntry(e);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const it = this.messages;
    this.messages = null;
    if (it !== null) await it.close();
  }
}
