// ReplicationStatus: what the replication thread tells every other thread,
// in one SharedArrayBuffer: this node's role (gateways refuse writes unless it
// is primary), the epoch, the primary's public address (the 503 of a write
// sent elsewhere names it), counters and two histograms for /metrics (publish
// acknowledgement latency on a primary, apply lag on a follower).
//
// Written by the replication thread only (the role also by the main thread
// before that thread starts), read by any. The role is an Atomics word; the
// figures are plain Float64 stores that a reader may see one update old
// (monitoring only); the address is a length-prefixed UTF-8 string behind a
// seqlock-style version word, so a reader never sees half of one.

import { ROLE_CODES, roleCode, type Role } from './protocol.js';

/** Histogram bucket upper bounds, seconds (+Inf implied). */
export const REPL_BUCKETS_S: readonly number[] = [
  0.00025, 0.0005, 0.001, 0.0015, 0.002, 0.003, 0.005, 0.0075, 0.01, 0.015, 0.02, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5, 5,
];
const HIST_WORDS = REPL_BUCKETS_S.length + 3; // buckets, +Inf, sum, count

const I_ROLE = 0;
const I_URL_VERSION = 1;
const I_URL_LEN = 2;
// Float64 word indexes (byte offset 16 on).
const F_EPOCH = 2;
const F_STREAM_SEQ = 3; // last stream seq published+acknowledged (primary) or applied (follower)
const F_APPLIED_SEQ = 4; // follower: last seq applied from the stream
const F_PRIMARY_SEQ = 5; // the primary's seq as its last heartbeat said
const F_PUBLISHED = 6;
const F_ACKED = 7;
const F_RESENT = 8;
const F_BYTES = 9;
const F_LAG_MS = 10; // follower: age of the last applied event when applied
const F_LAST_HEARTBEAT_MS = 11; // wall clock of the primary's last heartbeat seen
const F_INFLIGHT = 12;
const ACK_HIST = 16;
const LAG_HIST = ACK_HIST + HIST_WORDS;
const F_WORDS = LAG_HIST + HIST_WORDS;
const URL_AT = F_WORDS * 8;
const URL_MAX = 512;
const BYTES = URL_AT + URL_MAX;

export interface ReplicationFigures {
  role: Role;
  epoch: number;
  stream_seq: number;
  applied_seq: number;
  primary_seq: number;
  published: number;
  acked: number;
  resent: number;
  bytes: number;
  lag_ms: number;
  last_heartbeat_ms: number;
  inflight: number;
  primary_url: string;
}

export class ReplicationStatus {
  static allocate(role: Role): SharedArrayBuffer {
    const sab = new SharedArrayBuffer(BYTES);
    new ReplicationStatus(sab).setRole(role);
    return sab;
  }

  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  private readonly urlBytes: Uint8Array;

  constructor(readonly sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab, 0, 4);
    this.f64 = new Float64Array(sab, 0, F_WORDS);
    this.urlBytes = new Uint8Array(sab, URL_AT, URL_MAX);
  }

  get role(): Role {
    return ROLE_CODES[Atomics.load(this.i32, I_ROLE)] ?? 'starting';
  }

  setRole(r: Role): void {
    Atomics.store(this.i32, I_ROLE, roleCode(r));
  }

  /** True when this node sequences and may take writes. */
  get writable(): boolean {
    const r = Atomics.load(this.i32, I_ROLE);
    return r === 0 || r === 1; // off (no replication) or primary
  }

  get epoch(): number {
    return this.f64[F_EPOCH]!;
  }

  set(fields: Partial<Omit<ReplicationFigures, 'role' | 'primary_url'>>): void {
    const f = this.f64;
    if (fields.epoch !== undefined) f[F_EPOCH] = fields.epoch;
    if (fields.stream_seq !== undefined) f[F_STREAM_SEQ] = fields.stream_seq;
    if (fields.applied_seq !== undefined) f[F_APPLIED_SEQ] = fields.applied_seq;
    if (fields.primary_seq !== undefined) f[F_PRIMARY_SEQ] = fields.primary_seq;
    if (fields.published !== undefined) f[F_PUBLISHED] = fields.published;
    if (fields.acked !== undefined) f[F_ACKED] = fields.acked;
    if (fields.resent !== undefined) f[F_RESENT] = fields.resent;
    if (fields.bytes !== undefined) f[F_BYTES] = fields.bytes;
    if (fields.lag_ms !== undefined) f[F_LAG_MS] = fields.lag_ms;
    if (fields.last_heartbeat_ms !== undefined) f[F_LAST_HEARTBEAT_MS] = fields.last_heartbeat_ms;
    if (fields.inflight !== undefined) f[F_INFLIGHT] = fields.inflight;
  }

  observeAck(seconds: number): void {
    this.observe(ACK_HIST, seconds);
  }

  observeLag(seconds: number): void {
    this.observe(LAG_HIST, seconds);
  }

  private observe(at: number, s: number): void {
    const f = this.f64;
    let b = 0;
    while (b < REPL_BUCKETS_S.length && s > REPL_BUCKETS_S[b]!) b++;
    f[at + b] = f[at + b]! + 1;
    f[at + REPL_BUCKETS_S.length + 1] = f[at + REPL_BUCKETS_S.length + 1]! + s;
    f[at + REPL_BUCKETS_S.length + 2] = f[at + REPL_BUCKETS_S.length + 2]! + 1;
  }

  /** Bucket counts (non-cumulative, +Inf last), sum and count of a histogram. */
  histogram(which: 'ack' | 'lag'): { buckets: number[]; sum: number; count: number } {
    const at = which === 'ack' ? ACK_HIST : LAG_HIST;
    const n = REPL_BUCKETS_S.length;
    return { buckets: Array.from(this.f64.subarray(at, at + n + 1)), sum: this.f64[at + n + 1]!, count: this.f64[at + n + 2]! };
  }

  setPrimaryUrl(url: string): void {
    const b = Buffer.from(url, 'utf8').subarray(0, URL_MAX);
    if (this.primaryUrl === url) return;
    // Odd version = being written; readers retry (one writer thread).
    Atomics.add(this.i32, I_URL_VERSION, 1);
    this.urlBytes.set(b);
    Atomics.store(this.i32, I_URL_LEN, b.length);
    Atomics.add(this.i32, I_URL_VERSION, 1);
  }

  get primaryUrl(): string {
    for (;;) {
      const v = Atomics.load(this.i32, I_URL_VERSION);
      if ((v & 1) !== 0) continue;
      const len = Atomics.load(this.i32, I_URL_LEN);
      const s = Buffer.from(this.urlBytes.subarray(0, len)).toString('utf8');
      if (Atomics.load(this.i32, I_URL_VERSION) === v) return s;
    }
  }

  figures(): ReplicationFigures {
    const f = this.f64;
    return {
      role: this.role, epoch: f[F_EPOCH]!, stream_seq: f[F_STREAM_SEQ]!, applied_seq: f[F_APPLIED_SEQ]!, primary_seq: f[F_PRIMARY_SEQ]!,
      published: f[F_PUBLISHED]!, acked: f[F_ACKED]!, resent: f[F_RESENT]!, bytes: f[F_BYTES]!, lag_ms: f[F_LAG_MS]!,
      last_heartbeat_ms: f[F_LAST_HEARTBEAT_MS]!, inflight: f[F_INFLIGHT]!, primary_url: this.primaryUrl,
    };
  }
}
