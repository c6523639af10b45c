// LogClient: this node's connection to the replicated log (a NATS JetStream
// stream) and its snapshot bucket (a JetStream Object Store), with the few
// operations the exchange needs: create or check the stream, read one entry,
// find the entry that holds a seq (binary search on Dx-Last-Seq, which never
// decreases along the stream), find a claim, publish a claim, purge a prefix,
// and the snapshot objects. Main thread (start-up, snapshots), the
// replication thread, and tools.

import { connect, headers, type NatsConnection } from '@nats-io/transport-node';
import {
  DiscardPolicy, jetstream, jetstreamManager, StorageType, type JetStreamClient, type JetStreamManager, type StoredMsg,
} from '@nats-io/jetstream';
import { Objm, type ObjectStore } from '@nats-io/obj';
import { entryOf, H_EPOCH, H_LAST_SEQ, H_NODE, H_URL, subjectsOf, type LogEntry, type Subjects } from './protocol.js';

export interface ReplicationConfig {
  /** NATS server URLs (any of the cluster; the client finds the others). */
  urls: string[];
  /** JetStream stream name; subjects are dx.<stream>.*. */
  stream: string;
  /** Object Store bucket of the snapshots. */
  bucket: string;
  /** Replicas of the stream and the bucket (3 in production). */
  replicas: number;
  /**
   * A primary that cannot get its log acknowledged for this long steps down; a standby claims after this long without a primary's
   * heartbeat.
   */
  lease_ms: number;
  heartbeat_ms: number;
  /** This node's name in heartbeats and claims. */
  node: string;
  /** This node's public REST address (where writes are redirected when it is primary). */
  url: string;
  /** Largest message body the primary publishes (whole commands; a bigger command goes alone). */
  max_batch_bytes: number;
}

export class LogClient {
  readonly subjects: Subjects;

  private constructor(
    readonly nc: NatsConnection, readonly js: JetStreamClient, readonly jsm: JetStreamManager, readonly cfg: ReplicationConfig,
  ) {
    this.subjects = subjectsOf(cfg.stream);
  }

  static async open(cfg: ReplicationConfig, name: string): Promise<LogClient> {
    const nc = await connect({
      servers: cfg.urls, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, timeout: 5000, pingInterval: 2000, maxPingOut: 3,
    });
    try {
      const jsm = await jetstreamManager(nc, { timeout: 5000 });
      return new LogClient(nc, jetstream(nc, { timeout: 5000 }), jsm, cfg);
    } catch (e) {
      await nc.close();
      throw e;
    }
  }

  /**
   * Creates the stream when it does not exist (file storage, the configured
   * replicas, discard new: a full stream refuses writes instead of dropping
   * history), else checks that it is ours.
   */
  async ensureStream(): Promise<void> {
    const s = this.subjects;
    const existing = await this.jsm.streams.info(this.cfg.stream).catch((e: unknown) => {
      if ((e as { code?: number }).code === 10059 || /not found/i.test((e as Error).message)) return null;
      throw e;
    });
    if (existing === null) {
      // A cluster that is still forming answers "no suitable peers" (10005) for a moment.
      for (let tries = 0; ; tries++) {
        try {
          await this.jsm.streams.add({
            name: this.cfg.stream, subjects: [s.log, s.claims], storage: StorageType.File, num_replicas: this.cfg.replicas,
            discard: DiscardPolicy.New, duplicate_window: 120_000_000_000, max_msg_size: -1, allow_direct: true,
          });
          return;
        } catch (e) {
          const code = (e as { code?: number }).code;
          if (code === 10058) return; // created by another node meanwhile
          if (code !== 10005 || tries >= 100) throw e;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }
    const c = existing.config;
    if (!c.subjects.includes(s.log) || !c.subjects.includes(s.claims)) {
      throw new Error(`stream ${this.cfg.stream} exists with subjects ${JSON.stringify(c.subjects)}, not ${s.log} and ${s.claims}`);
    }
    if (c.storage !== StorageType.File || c.discard !== DiscardPolicy.New) {
      throw new Error(
        `stream ${this.cfg.stream} exists with storage ${c.storage} and discard ${c.discard}; the log needs file storage and discard new`,
      );
    }
  }

  async info(): Promise<{
    first_seq: number;
    last_seq: number;
    messages: number;
    bytes: number;
    leader: string;
    replicas: { name: string; current: boolean; lag?: number }[];
  }> {
    const i = await this.jsm.streams.info(this.cfg.stream);
    return {
      first_seq: i.state.first_seq, last_seq: i.state.last_seq, messages: i.state.messages, bytes: i.state.bytes,
      leader: i.cluster?.leader ?? '', replicas: (i.cluster?.replicas ?? []).map((r) => ({ name: r.name, current: r.current, lag: r.lag })),
    };
  }

  private async get(query: { seq: number } | { last_by_subj: string }): Promise<StoredMsg | null> {
    return this.jsm.streams.getMessage(this.cfg.stream, query);
  }

  /** The entry at a stream seq, with its body (null when there is none, e.g. purged). */
  async entry(streamSeq: number): Promise<{ entry: LogEntry; body: Uint8Array } | null> {
    const m = await this.get({ seq: streamSeq }).catch((e: unknown) => {
      if ((e as { code?: number }).code === 10037 || /no message found/i.test((e as Error).message)) return null;
      throw e;
    });
    if (m === null) return null;
    return { entry: entryOf(this.subjects, m.subject, m.seq, m.header), body: m.data };
  }

  /** The claim of an epoch, or null. */
  async claimOf(epoch: number): Promise<LogEntry | null> {
    const m = await this.get({ last_by_subj: this.subjects.claim(epoch) });
    return m === null ? null : entryOf(this.subjects, m.subject, m.seq, m.header);
  }

  /** The newest claim in the stream, or null. */
  async latestClaim(): Promise<LogEntry | null> {
    const m = await this.get({ last_by_subj: this.subjects.claims });
    return m === null ? null : entryOf(this.subjects, m.subject, m.seq, m.header);
  }

  /** The last entry of the stream, or null when the stream holds none. */
  async lastEntry(): Promise<LogEntry | null> {
    const i = await this.info();
    if (i.messages === 0) return null;
    return (await this.entry(i.last_seq))?.entry ?? null;
  }

  /**
   * The first stream seq at or after which the log continues past `seq`:
   * the first entry whose lastSeq >= seq + 1 (or, when every entry ends at or
   * before seq, last_seq + 1). Also returns the first entry still stored so
   * the caller can tell a purged start.
   */
  async locate(seq: number): Promise<{ streamSeq: number; firstStored: LogEntry | null; lastSeqInStream: number; lastStreamSeq: number }> {
    const i = await this.info();
    if (i.messages === 0) return { streamSeq: i.last_seq + 1, firstStored: null, lastSeqInStream: 0, lastStreamSeq: i.last_seq };
    const first = (await this.entry(i.first_seq))!.entry;
    const last = (await this.entry(i.last_seq))!.entry;
    if (last.lastSeq <= seq)
      return { streamSeq: i.last_seq + 1, firstStored: first, lastSeqInStream: last.lastSeq, lastStreamSeq: i.last_seq };
    let lo = i.first_seq;
    let hi = i.last_seq;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const e = (await this.entry(mid))!.entry;
      if (e.lastSeq >= seq + 1) hi = mid;
      else lo = mid + 1;
    }
    // A claim whose lastSeq == seq sits just before the first batch after seq: start there so the follower sees the epoch change.
    let start = lo;
    while (start > i.first_seq) {
      const prev = (await this.entry(start - 1))!.entry;
      if (prev.kind !== 'claim' || prev.lastSeq !== seq) break;
      start--;
    }
    return { streamSeq: start, firstStored: first, lastSeqInStream: last.lastSeq, lastStreamSeq: i.last_seq };
  }

  /**
   * Publishes the claim of `epoch`, expecting the stream's last message to be
   * `expectStreamSeq`; resolves with the claim's stream seq, rejects with the
   * server's error (wrong last sequence: someone else wrote first).
   */
  async publishClaim(epoch: number, lastSeq: number, expectStreamSeq: number): Promise<number> {
    const h = headers();
    h.set(H_EPOCH, String(epoch));
    h.set(H_LAST_SEQ, String(lastSeq));
    h.set(H_NODE, this.cfg.node);
    h.set(H_URL, this.cfg.url);
    const ack = await this.js.publish(this.subjects.claim(epoch), new Uint8Array(0), {
      headers: h,
      expect: { lastSequence: expectStreamSeq },
      msgID: `claim-${epoch}-${this.cfg.node}`,
      timeout: Math.max(1000, this.cfg.lease_ms),
    });
    if (ack.duplicate) throw new Error(`claim of epoch ${epoch} was a duplicate (stream seq ${ack.seq})`);
    return ack.seq;
  }

  /** Removes every message before stream seq `before`. */
  async purgeBefore(before: number): Promise<number> {
    const r = await this.jsm.streams.purge(this.cfg.stream, { seq: before });
    return r.purged;
  }

  private store: ObjectStore | null = null;

  /** The snapshot bucket (created with the stream's replicas when missing). */
  async snapshots(): Promise<ObjectStore> {
    if (this.store === null)
      this.store = await new Objm(this.nc).create(this.cfg.bucket, { storage: StorageType.File, replicas: this.cfg.replicas });
    return this.store;
  }

  async close(): Promise<void> {
    if (this.nc.isClosed()) return;
    // A drain that fails (the connection is lost or already closing) has nothing left to flush: close outright.
    await this.nc.drain().catch(() => this.nc.close());
  }
}
