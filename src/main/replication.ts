// replication: the main thread's side of --replicate on|replica (the design
// is in src/replication/README.md). exchange.ts calls it at four points:
//   prepare   before recovery: connects, creates or checks the stream;
//   reconcile after the recovery plan (HA node): cuts an unacknowledged tail
//             of a former primary, or moves a journal the log can no longer
//             continue aside and starts from the newest snapshot object;
//             a read replica's plan is the newest snapshot object alone;
//   start     once every reader of the event ring is in: the replication
//             thread (it follows the log, and on a primary publishes it);
//   snapshot  after each local snapshot on a primary: upload it, keep two,
//             purge the log before the older one.
// It also renders the replication part of /metrics and of the health answers.
// Main thread.

import { hostname } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { RecoveryPlan } from '../journal/recovery.js';
import { truncateJournalAfter } from '../journal/cut.js';
import { clearDir, moveJournalAside, readNodeState, writeNodeState } from '../replication/local_state.js';
import { LogClient, type ReplicationConfig } from '../replication/log_client.js';
import { keepUpTo, publishVerdict } from '../replication/protocol.js';
import { downloadSnapshot, newestUsableSnapshot, pruneSnapshotsAndLog, uploadSnapshot } from '../replication/snapshots.js';
import { REPL_BUCKETS_S, ReplicationStatus } from '../replication/status.js';
import { join } from 'node:path';
import { SNAPSHOT_DIR } from '../journal/format.js';
import type { ExchangeConfig } from './config.js';
import { log } from './log.js';
import type { ReplicationThreadData } from './replication_thread.js';

/** Largest log message body the primary publishes (NATS' default max_payload is 1 MiB, headers included). */
const MAX_BATCH_BYTES = 512 * 1024;

/** How long start-up asks again for the stream while the cluster cannot answer yet. */
const STREAM_WAIT_MS = 60_000;

/**
 * Calls fn until it succeeds. A failure that publishVerdict calls 'retry' (a
 * timeout, no responders: a JetStream cluster whose meta group has just
 * formed, or is busy, answers a stream creation late) is tried again after a
 * pause that doubles from 250 ms to 2 s, for up to `forMs`; then, or for any
 * other failure, the error is thrown. Start-up only.
 */
export async function untilAnswered<T>(
  fn: () => Promise<T>, forMs: number, onRetry: (e: Error, attempt: number) => void,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((r) => setTimeout(r, ms)), now: () => number = Date.now,
): Promise<T> {
  const until = now() + forMs;
  let pause = 250;
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (publishVerdict(e) !== 'retry' || now() + pause > until) throw e;
      onRetry(e as Error, attempt);
      await sleep(pause);
      pause = Math.min(2000, pause * 2);
    }
  }
}

export function replicationConfig(cfg: ExchangeConfig, port: number): ReplicationConfig {
  return {
    urls: cfg.nats_urls.split(',').map((u) => u.trim()).filter((u) => u !== ''), stream: cfg.nats_stream,
    bucket: cfg.nats_bucket !== '' ? cfg.nats_bucket : `${cfg.nats_stream}-snapshots`, replicas: cfg.nats_replicas,
    lease_ms: cfg.lease_ms, heartbeat_ms: cfg.heartbeat_ms, node: cfg.node_name !== '' ? cfg.node_name : `${hostname()}-${process.pid}`,
    url: cfg.advertise_url !== '' ? cfg.advertise_url : `http://${cfg.host}:${port}`, max_batch_bytes: MAX_BATCH_BYTES,
  };
}

export class Replication {
  readonly status: ReplicationStatus;
  private thread: Worker | null = null;
  private uploading: Promise<void> = Promise.resolve();

  private constructor(readonly mode: 'ha' | 'replica', readonly cfg: ReplicationConfig, readonly log: LogClient, readonly dataDir: string) {
    this.status = new ReplicationStatus(ReplicationStatus.allocate('starting'));
  }

  /** Connects and makes sure the stream exists. */
  static async prepare(cfg: ExchangeConfig, port: number): Promise<Replication> {
    const rc = replicationConfig(cfg, port);
    const client = await LogClient.open(rc, `dx main ${rc.node}`);
    try {
      await untilAnswered(() => client.ensureStream(), STREAM_WAIT_MS, (e, attempt) => {
        log('warn', { event: 'replication_stream_retry', attempt, error: e.message });
      });
    } catch (e) {
      await client.close();
      throw e;
    }
    return new Replication(cfg.replicate === 'replica' ? 'replica' : 'ha', rc, client, cfg.data_dir);
  }

  /**
   * A read replica's recovery plan: the newest snapshot object, downloaded
   * into <data dir>/snapshots (a cache, emptied first), and no journal; with
   * no snapshot object, the whole log from its start.
   */
  async replicaPlan(): Promise<RecoveryPlan> {
    clearDir(join(this.dataDir, SNAPSHOT_DIR));
    const newest = await newestUsableSnapshot(this.log, (fields) => log('warn', fields));
    const plan: RecoveryPlan = {
      dataDir: this.dataDir,
      snapshot: null,
      rejectedSnapshots: [],
      segments: [],
      lastSeq: 0,
      tails: [],
      removed: [],
    };
    if (newest !== null) {
      const path = await downloadSnapshot(this.log, newest, this.dataDir);
      plan.snapshot = { path, seq: newest.seq };
      plan.lastSeq = newest.seq;
      log('info', { event: 'replication_snapshot_loaded', seq: newest.seq, object: newest.name, bytes: newest.size });
    }
    return plan;
  }

  /** An HA node's journal checked against the log (see the header); returns the plan to start from. */
  async reconcile(plan: RecoveryPlan, replan: () => Promise<RecoveryPlan>): Promise<RecoveryPlan> {
    const state = readNodeState(this.dataDir);
    const last = await this.log.lastEntry();
    const streamLast = last?.lastSeq ?? 0;
    let keep = plan.lastSeq;
    let bootstrap = false;
    if (state.primary_epoch !== null) {
      // Its claim of that epoch was stored before it published anything: a log with no entry of that epoch or later is another log.
      if (last === null || last.epoch < state.primary_epoch) {
        throw new Error(
          `this data directory was primary of epoch ${state.primary_epoch} but the log ${this.cfg.stream} ` +
            `${last === null ? 'is empty' : `ends in epoch ${last.epoch}`}: this data directory does not belong to this log`,
        );
      }
      const next = await this.log.claimOf(state.primary_epoch + 1);
      if (next === null && last !== null && last.epoch > state.primary_epoch)
        bootstrap = true; // that claim was purged: the cut cannot be placed
      else keep = keepUpTo(plan.lastSeq, state.primary_epoch, next?.lastSeq ?? null, streamLast);
    } else if (plan.lastSeq > streamLast) {
      throw new Error(
        `the local journal ends at seq ${plan.lastSeq} but the log ${this.cfg.stream} ends at seq ${streamLast}: this data directory ` +
          `does not belong to this log`,
      );
    }
    if (!bootstrap && keep < plan.lastSeq) {
      const cut = truncateJournalAfter(this.dataDir, keep);
      log('warn', { event: 'replication_tail_truncated', epoch: state.primary_epoch, kept_seq: keep, local_seq: plan.lastSeq, ...cut });
      plan = await replan();
    }
    if (!bootstrap && plan.lastSeq < streamLast) {
      const at = await this.log.locate(plan.lastSeq);
      const first = at.firstStored;
      bootstrap = first !== null && at.streamSeq === first.streamSeq && first.firstSeq > plan.lastSeq + 1;
    }
    if (bootstrap) {
      const snap = await newestUsableSnapshot(this.log, (fields) => log('warn', fields));
      if (snap === null)
        throw new Error(
          `the log ${this.cfg.stream} no longer holds seq ${plan.lastSeq + 1} and the bucket ${this.cfg.bucket} has no snapshot`,
        );
      const aside = moveJournalAside(this.dataDir);
      const path = await downloadSnapshot(this.log, snap, this.dataDir);
      log('warn', {
        event: 'replication_bootstrap',
        reason: 'the log was purged past this journal',
        local_seq: plan.lastSeq,
        snapshot_seq: snap.seq,
        snapshot: path,
        moved_to: aside,
      });
      plan = await replan();
    }
    if (state.primary_epoch !== null) writeNodeState(this.dataDir, { primary_epoch: null });
    return plan;
  }

  /** Starts the replication thread; `on` receives its messages (promoted, step_down, fault). */
  start(
    data: Omit<ReplicationThreadData, 'mode' | 'cfg' | 'status' | 'dataDir'>,
    on: (m: { type: string; epoch?: number; reason?: string; error?: string }) => void,
  ): Promise<void> {
    const full: ReplicationThreadData = { ...data, mode: this.mode, cfg: this.cfg, status: this.status.sab, dataDir: this.dataDir };
    const w = new Worker(new URL('./replication_thread.js', import.meta.url), { workerData: full, name: 'replication' });
    this.thread = w;
    return new Promise<void>((resolve, reject) => {
      let ready = false;
      w.on('message', (m: { type: string; epoch?: number; reason?: string; error?: string }) => {
        if (m.type === 'ready') {
          ready = true;
          resolve();
        } else if (m.type === 'fault' && !ready) reject(new Error(m.error));
        else on(m);
      });
      w.once('error', (e) => (ready ? on({ type: 'fault', error: e.stack ?? String(e) }) : reject(e)));
    });
  }

  /** Graceful stop of the thread (a primary first publishes what is left), then the main connection. */
  async stop(): Promise<void> {
    const w = this.thread;
    if (w !== null) {
      await new Promise<void>((res) => {
        w.once('exit', () => res());
        w.on('message', (m: { type: string }) => {
          if (m.type === 'stopped') res();
        });
        w.postMessage({ type: 'stop' });
      });
      await w.terminate();
    }
    // An upload's failure was logged (replication_snapshot_upload_failed) where it happened: the stop only waits for it to end.
    await this.uploading.catch(() => undefined);
    await this.log.close();
  }

  /** A primary's new local snapshot goes to the bucket (one upload at a time, in the background). */
  snapshotTaken(path: string, seq: number): void {
    if (this.status.role !== 'primary') return;
    this.uploading = this.uploading
      .then(async () => {
        const t0 = performance.now();
        const up = await uploadSnapshot(this.log, path, seq);
        const pr = await pruneSnapshotsAndLog(this.log);
        log('info', {
          event: 'replication_snapshot_uploaded',
          seq,
          object: up.name,
          bytes: up.size,
          ms: Math.round(performance.now() - t0),
          deleted: pr.deleted,
          purged_messages: pr.purged,
          oldest_kept: pr.oldest_kept,
        });
      })
      .catch((e: unknown) =>
        log('warn', {
          event: 'replication_snapshot_upload_failed',
          seq,
          error: (e as Error).message,
          note: 'the next snapshot is uploaded as usual',
        }),
      );
  }

  /** Health fields: role, epoch, lag. */
  health(localSeq: number): Record<string, unknown> {
    const f = this.status.figures();
    const primarySeq = f.role === 'primary' ? localSeq : f.primary_seq;
    return {
      role: f.role,
      epoch: f.epoch,
      node: this.cfg.node,
      primary_url: f.primary_url,
      stream: this.cfg.stream,
      stream_seq: f.stream_seq,
      applied_seq: f.role === 'primary' ? localSeq : f.applied_seq,
      primary_seq: primarySeq,
      lag_seqs: Math.max(0, primarySeq - (f.role === 'primary' ? localSeq : f.applied_seq)),
      lag_ms: f.role === 'primary' ? 0 : Math.round(f.lag_ms * 10) / 10,
      last_primary_heartbeat_ms_ago: f.last_heartbeat_ms === 0 ? null : Date.now() - f.last_heartbeat_ms,
    };
  }

  /** The replication families of /metrics (Prometheus text 0.0.4). */
  metrics(localSeq: number, durableSeq: number): string {
    const f = this.status.figures();
    const lines: string[] = [];
    const gauge = (name: string, help: string, v: number, labels = ''): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name}${labels} ${v}`);
    };
    const counter = (name: string, help: string, v: number): void => {
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`, `${name} ${v}`);
    };
    const roles = ['primary', 'standby', 'replica', 'fenced', 'starting'];
    lines.push('# HELP dx_replication_role This node\'s role (1 for the current one).', '# TYPE dx_replication_role gauge');
    for (const r of roles) lines.push(`dx_replication_role{role="${r}"} ${f.role === r ? 1 : 0}`);
    gauge('dx_replication_epoch', 'Epoch of the replicated log this node is in.', f.epoch);
    gauge('dx_replication_stream_seq', 'Last stream seq acknowledged (primary) or applied (follower).', f.stream_seq);
    const applied = f.role === 'primary' ? durableSeq : f.applied_seq;
    const primarySeq = f.role === 'primary' ? localSeq : f.primary_seq;
    gauge(
      'dx_replication_lag_seqs',
      'Commands the primary has sequenced that this node has not applied from the log (primary: sequenced but not yet durable).',
      Math.max(0, primarySeq - applied),
    );
    gauge(
      'dx_replication_lag_seconds',
      'Follower: age of the newest event when it was applied (time behind the primary).',
      f.role === 'primary' ? 0 : f.lag_ms / 1000,
    );
    gauge('dx_replication_inflight_messages', 'Primary: log messages published and not yet acknowledged.', f.inflight);
    counter('dx_replication_published_total', 'Primary: log messages published (first attempts).', f.published);
    counter('dx_replication_acked_total', 'Primary: log messages acknowledged by the stream.', f.acked);
    counter('dx_replication_resent_total', 'Primary: log messages published again after a lost answer or a resync.', f.resent);
    counter('dx_replication_bytes_total', 'Primary: log message body bytes published.', f.bytes);
    const hist = (name: string, help: string, which: 'ack' | 'lag'): void => {
      const h = this.status.histogram(which);
      lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} histogram`);
      let cum = 0;
      for (let b = 0; b <= REPL_BUCKETS_S.length; b++) {
        cum += h.buckets[b]!;
        lines.push(`${name}_bucket{le="${b < REPL_BUCKETS_S.length ? REPL_BUCKETS_S[b] : '+Inf'}"} ${cum}`);
      }
      lines.push(`${name}_sum ${Number(h.sum.toPrecision(12))}`, `${name}_count ${h.count}`);
    };
    hist('dx_replication_ack_seconds', 'Primary: from publishing a log message to its acknowledgement by the stream quorum.', 'ack');
    hist(
      'dx_replication_apply_lag_seconds',
      "Follower: from the sequencer's stamp of a batch's last event to its application here.",
      'lag',
    );
    return `${lines.join('\n')}\n`;
  }
}
