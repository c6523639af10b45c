// ReplicationNode: one exchange process's part in the replicated log, run by
// the replication thread (src/main/replication_thread.ts).
//
// An HA node (--replicate on) always starts as a standby: it follows the log
// into the event ring (Follower + RingSink; its engine folds the events, its
// journal writes them, its read models serve reads) and listens to the
// heartbeats. When no primary of the current epoch has been heard for a lease
// and it has applied the whole log, it claims the next epoch: a claim message
// that expects the stream's last sequence. If another message came first the
// claim is refused and it keeps following. Once the claim is stored:
//   1. replication.json records the epoch (before anything is published);
//   2. the Replicator opens its cursor on the event ring;
//   3. the engine is asked to sequence (it folds the rest, then takes over
//      the ring as its producer) and this thread waits until it does;
//   4. the role becomes primary: gateways take writes, the clock ticks.
// A primary steps down for good (the process exits and its supervisor starts
// it again, as a standby) when the log refuses it (fenced), when its acks
// stall past the lease, when its heartbeat round trip to NATS stalls past
// the lease, or when it hears a primary of a later epoch.
//
// A read replica (--replicate replica) only follows, never claims.
//
// Replication thread only.

import type { Subscription } from '@nats-io/transport-node';
import type { DurableSeq } from '../journal/durable.js';
import { BatchFault } from './batch.js';
import { Follower, RingSink } from './follower.js';
import { writeNodeState } from './local_state.js';
import { LogClient, type ReplicationConfig } from './log_client.js';
import { followStalled, parseHeartbeat, shouldClaim, type Heartbeat, type LogEntry } from './protocol.js';
import { Replicator, type LogFn } from './replicator.js';
import type { ReplicationStatus } from './status.js';

/** The engine's side of a standby's promotion (src/main/engine_control.ts implements it). */
export interface PromotableEngine {
  /** Asks the engine to stop following and start sequencing. */
  requestPromote(): void;
  /** True once the engine sequences (it took over the event ring). */
  readonly sequencing: boolean;
  /** True once the engine's clock has sequenced what fell due before it ran (its loop's first tick). */
  readonly clockCaughtUp: boolean;
  /** The engine's last seq (heartbeats). */
  readonly seq: number;
}

export interface NodeOptions {
  mode: 'ha' | 'replica';
  cfg: ReplicationConfig;
  eventRing: SharedArrayBuffer;
  /** The replicator's event ring consumer index (HA nodes). */
  replicatorConsumer: number;
  durable: DurableSeq;
  status: ReplicationStatus;
  /** The engine's control block (HA nodes: the promote handshake and its seq). */
  engine: PromotableEngine | null;
  /** Seq already applied locally (recovered journal, or the replica's snapshot). */
  appliedSeq: number;
  dataDir: string;
  log: LogFn;
  /**
   * Called on this thread right before the node takes writes (its role turns primary): the replay floor is raised here, since
   * onPromoted's message reaches the main thread only after the gateways see the role (docs/rest.md).
   */
  beforeWritable?: (epoch: number) => void;
  /** The node became primary of `epoch`. */
  onPromoted: (epoch: number) => void;
  /** The node must stop answering and exit (fenced or stalled). */
  onStepDown: (reason: string) => void;
  /** Following failed (a gap, a checksum, a foreign entry): the node must stop. */
  onFault: (e: Error) => void;
}

export class ReplicationNode {
  private log!: LogClient;
  private follower: Follower | null = null;
  private following: Promise<void> | null = null;
  private replicator: Replicator | null = null;
  private hbSub: Subscription | null = null;
  private timer: ReturnType<typeof setInterval> | null = null;
  /**
   * The leases are durations on this node, on its monotonic clock (performance.now()): lastPrimaryHeartbeat, progressAt,
   * followingSince, lastFlushOk. A wall-clock step must neither fail a healthy primary over nor delay a failover.
   */
  private lastPrimaryHeartbeat = 0;
  /** The current primary's stream seq from its heartbeats, and the follower's last progress (the stall detector). */
  private primaryStreamSeq = 0;
  private progressSeq = -1;
  private progressAt = performance.now();
  private refollowing = false;
  private followingSince = performance.now();
  private lastFlushOk = performance.now();
  private claiming = false;
  /** Bumped when a claim takes the follow over: a retry that followFailed scheduled before is dropped. */
  private followGen = 0;
  private stopped = false;
  private steppedDown = false;
  epoch = 0;

  constructor(private readonly o: NodeOptions) {}

  async start(): Promise<void> {
    this.log = await LogClient.open(this.o.cfg, `dx ${this.o.mode} ${this.o.cfg.node}`);
    this.hbSub = this.log.nc.subscribe(this.log.subjects.heartbeat, { callback: (err, m) => {
      if (err === null) this.onHeartbeat(m.string());
    } });
    this.timer = setInterval(() => this.tick(), this.o.cfg.heartbeat_ms);
    this.o.status.setRole(this.o.mode === 'ha' ? 'standby' : 'replica');
    await this.follow(this.o.appliedSeq);
    // Ready once the primary (if any) has been heard, so that a write sent
    // here at once is redirected to a known address: two heartbeats at most.
    const until = performance.now() + 2 * this.o.cfg.heartbeat_ms + 50;
    while (this.o.status.primaryUrl === '' && performance.now() < until) await new Promise((r) => setTimeout(r, 5));
  }

  /**
   * Follows the log from the entry after `applied` (in the background); `wait`: returns once the log is applied as far as it reached when
   * we looked.
   */
  private async follow(applied: number, wait = true): Promise<void> {
    const gen = this.followGen;
    const at = await this.log.locate(applied);
    if (gen !== this.followGen) return; // a claim took the follow over meanwhile
    if (at.firstStored !== null && at.streamSeq < at.firstStored.streamSeq) {
      throw new BatchFault(
        at.streamSeq,
        0,
        `the log starts at stream seq ${at.firstStored.streamSeq} (seqs from ${at.firstStored.firstSeq}) but this node needs seq ` +
          `${applied + 1}: boot from a snapshot`,
      );
    }
    if (at.firstStored !== null && at.streamSeq === at.firstStored.streamSeq && at.firstStored.firstSeq > applied + 1) {
      throw new BatchFault(
        at.streamSeq,
        0,
        `the log starts at seq ${at.firstStored.firstSeq} (purged) but this node needs seq ${applied + 1}: boot from a snapshot`,
      );
    }
    const sink = new RingSink(this.o.eventRing, this.o.durable, this.o.status);
    // A new entry of the current epoch shows a live primary as well as its heartbeat does.
    const f = new Follower(this.log, sink, this.o.status, applied, (e) => this.onClaim(e), (e) => {
      if (e.epoch >= Math.max(this.epoch, f.epoch)) this.lastPrimaryHeartbeat = performance.now();
    });
    this.follower = f;
    this.followingSince = performance.now();
    // The epoch in force at the start: the last entry's, unless the first entry taken says otherwise.
    let failed: Error | null = null;
    this.following = f.run(at.streamSeq, 0).catch((e: unknown) => {
      failed = e as Error;
      if (this.follower === f) this.followFailed(f.applied, e as Error);
    });
    // Ready (the caller's await) once the log is applied as far as it reached when we looked (by this follower, or the one that replaced it
    // after a stall).
    for (;;) {
      const cur = this.follower;
      if (!wait || cur === null || cur.streamSeq >= at.lastStreamSeq || failed !== null || this.stopped) return;
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  /** The stall detector's remedy (protocol.ts followStalled): the same follow again with a new consumer. */
  private refollow(f: Follower): void {
    this.refollowing = true;
    this.o.log('warn', {
      event: 'replication_follow_restarted',
      stream_seq: f.streamSeq,
      primary_stream_seq: this.primaryStreamSeq,
      applied: f.applied,
    });
    (async () => {
      await f.stop();
      await this.following;
      if (!this.stopped && this.follower === f) await this.follow(f.applied, false);
    })().then(() => this.refollowed(), (e: unknown) => this.followFailed(f.applied, e as Error));
  }

  private refollowed(): void {
    this.refollowing = false;
    this.progressAt = performance.now();
  }

  /**
   * A follow that failed: a fault in the log's content (a gap, a checksum, a purge past this node) stops the node; anything else (NATS
   * unreachable or without a quorum, a request that timed out while the cluster elects its leaders) is tried again from `applied` after a
   * pause, and the node neither claims nor exits meanwhile.
   */
  private followFailed(applied: number, e: Error): void {
    if (this.stopped) return;
    if (e instanceof BatchFault) {
      this.o.onFault(e);
      return;
    }
    this.o.log('warn', { event: 'replication_follow_retry', applied, error: e.message, retry_ms: this.o.cfg.heartbeat_ms });
    this.refollowing = true;
    const gen = this.followGen;
    setTimeout(() => {
      if (this.stopped || gen !== this.followGen) return;
      this.follow(applied, false).then(() => this.refollowed(), (e2: unknown) => this.followFailed(applied, e2 as Error));
    }, this.o.cfg.heartbeat_ms);
  }

  private onClaim(e: LogEntry): void {
    this.epoch = e.epoch;
    this.o.status.set({ epoch: e.epoch });
    if (e.url !== '') this.o.status.setPrimaryUrl(e.url);
    this.o.log('info', { event: 'replication_epoch', epoch: e.epoch, node: e.node, seq: e.lastSeq, stream_seq: e.streamSeq });
  }

  private onHeartbeat(raw: string): void {
    const hb = parseHeartbeat(raw);
    if (hb === null || hb.node === this.o.cfg.node || hb.role !== 'primary') return;
    const role = this.o.status.role;
    if (role === 'primary' && hb.epoch > this.epoch) {
      this.stepDown(`a primary of a later epoch is heartbeating: ${hb.node} in epoch ${hb.epoch}`);
      return;
    }
    const mine = Math.max(this.epoch, this.follower?.epoch ?? 0);
    if (hb.epoch < mine) return; // a stale primary: it does not keep the standby from claiming
    this.lastPrimaryHeartbeat = performance.now();
    if (hb.url !== '') this.o.status.setPrimaryUrl(hb.url);
    this.primaryStreamSeq = hb.stream_seq;
    this.o.status.set({ primary_seq: hb.seq, last_heartbeat_ms: Date.now() });
  }

  private heartbeat(): Heartbeat {
    const s = this.o.status;
    const role = s.role;
    const f = s.figures();
    return {
      node: this.o.cfg.node, role, epoch: Math.max(this.epoch, this.follower?.epoch ?? 0),
      seq: role === 'primary' && this.o.engine ? this.o.engine.seq : f.applied_seq, durable_seq: this.o.durable.get(),
      stream_seq: role === 'primary' ? (this.replicator?.streamSeq ?? 0) : f.stream_seq, url: this.o.cfg.url, ts_ms: Date.now(),
    };
  }

  private tick(): void {
    if (this.stopped) return;
    const now = performance.now();
    this.log.nc.publish(this.log.subjects.heartbeat, JSON.stringify(this.heartbeat()));
    const role = this.o.status.role;
    if (role === 'primary') {
      // An idle primary still proves it can reach NATS within its lease.
      this.log.nc.flush().then(() => {
        this.lastFlushOk = performance.now();
      }, () => undefined);
      if (now - this.lastFlushOk > this.o.cfg.lease_ms)
        this.stepDown(`no round trip to NATS for ${Math.round(now - this.lastFlushOk)} ms (lease ${this.o.cfg.lease_ms} ms)`);
      return;
    }
    const f = this.follower;
    if (f !== null && !this.claiming && !this.refollowing) {
      if (f.streamSeq !== this.progressSeq) [this.progressSeq, this.progressAt] = [f.streamSeq, now];
      else if (followStalled(now, this.progressAt, f.streamSeq, this.primaryStreamSeq, this.o.cfg.lease_ms)) this.refollow(f);
    }
    if (
      this.o.mode === 'ha' &&
      role === 'standby' &&
      !this.claiming &&
      !this.refollowing &&
      shouldClaim(now, this.lastPrimaryHeartbeat, this.followingSince, this.o.cfg.lease_ms)
    ) {
      this.claiming = true;
      this.claim()
        .catch((e: unknown) => this.o.onFault(e as Error))
        .finally(() => {
          this.claiming = false;
        });
    }
  }

  /** Tries to take over: see the header. Keeps following when the claim is refused. */
  private async claim(): Promise<void> {
    const f = this.follower;
    if (f === null) return;
    // NATS unreachable or slow is no fault here: the claim waits for the next heartbeat, as when not caught up.
    const info = await this.log.info().catch(() => null);
    // Behind the stream with no primary heartbeating: the stall detector's evidence is the stream's end, not the last heartbeat's.
    if (info !== null && info.last_seq > f.streamSeq) this.primaryStreamSeq = Math.max(this.primaryStreamSeq, info.last_seq);
    if (info === null || info.last_seq !== f.streamSeq) return; // not caught up (or NATS unreachable): later
    // The epoch in force: a follower that has taken no entry since the start knows none, so the stream's last entry must say;
    // when NATS does not answer, the claim waits for a later tick (claiming a lower epoch would get in and stop every follower).
    // A later entry the follower takes meanwhile can only raise f.epoch, and publishClaim's expected stream seq refuses the claim
    // if the log moved (claim refused: keep following).
    const last = info.messages > 0 ? await this.log.entry(info.last_seq).catch(() => null) : null;
    if (info.messages > 0 && last === null) return;
    await f.stop();
    // A follow retry (followFailed) replaced the follower while NATS answered: it goes on; a claim is tried at a later tick.
    if (this.follower !== f) return;
    // From here this claim owns the follow: a retry scheduled or under way is dropped (it would run a second RingSink, or one
    // on a primary); a refused claim follows again itself.
    this.followGen++;
    this.refollowing = false;
    await this.following;
    const epoch = Math.max(this.epoch, f.epoch, last?.entry.epoch ?? 0) + 1;
    let claimSeq: number;
    try {
      // The entry this claim looked at, not where the follower got to since: a log that moved (a primary alive) refuses it.
      claimSeq = await this.log.publishClaim(epoch, f.applied, info.last_seq);
    } catch (e) {
      // The answer may be lost while the claim landed: the stream says.
      const landed = await this.log.claimOf(epoch).catch(() => null);
      if (landed !== null && landed.node === this.o.cfg.node && landed.lastSeq === f.applied && landed.streamSeq === f.streamSeq + 1) {
        claimSeq = landed.streamSeq;
      } else {
        this.o.log('info', { event: 'replication_claim_refused', epoch, stream_seq: f.streamSeq, error: (e as Error).message });
        if (!this.stopped) await this.follow(f.applied).catch((e2: unknown) => this.followFailed(f.applied, e2 as Error));
        return;
      }
    }
    this.follower = null;
    this.epoch = epoch;
    writeNodeState(this.o.dataDir, { primary_epoch: epoch });
    const st = this.o.status;
    st.set({ epoch, stream_seq: claimSeq });
    st.setPrimaryUrl(this.o.cfg.url);
    this.o.log('info', { event: 'replication_claimed', epoch, seq: f.applied, stream_seq: claimSeq });
    this.replicator = new Replicator(this.log, this.o.eventRing, this.o.replicatorConsumer, this.o.durable, st, epoch, claimSeq,
      (reason) => this.stepDown(reason), this.o.log);
    const engine = this.o.engine!;
    engine.requestPromote();
    this.replicator.wakeRing();
    const until = performance.now() + 30_000;
    // As at a single-node start (catchUpClock): what fell due while no primary ran is sequenced before any write.
    while (!engine.sequencing || !engine.clockCaughtUp) {
      if (performance.now() > until) throw new Error('the engine did not take over the event ring and catch its clock up within 30 s');
      await new Promise((r) => setTimeout(r, 1));
    }
    this.o.beforeWritable?.(epoch);
    st.setRole('primary');
    this.lastFlushOk = performance.now();
    this.replicator.start();
    // Heartbeat at once: the other standbys count this claim's lease from here.
    this.log.nc.publish(this.log.subjects.heartbeat, JSON.stringify(this.heartbeat()));
    this.o.onPromoted(epoch);
  }

  private stepDown(reason: string): void {
    if (this.steppedDown) return;
    this.steppedDown = true;
    this.o.status.setRole('fenced');
    this.replicator?.stop();
    this.o.log('error', { event: 'replication_step_down', epoch: this.epoch, reason });
    this.o.onStepDown(reason);
  }

  /** Graceful stop: a primary publishes what the ring still holds and waits for the acks (up to a lease). */
  async stop(): Promise<void> {
    if (this.replicator !== null && !this.steppedDown) await this.replicator.flush(this.o.cfg.lease_ms);
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    this.replicator?.stop();
    this.hbSub?.unsubscribe();
    if (this.follower !== null) {
      await this.follower.stop();
      await this.following;
    }
    await this.log.close();
  }
}
