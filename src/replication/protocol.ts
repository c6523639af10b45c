// protocol: the names and decisions of the replicated log, as plain data and
// pure functions (no I/O), shared by the replication thread, start-up, the
// tools and the unit tests.
//
// One JetStream stream per exchange. Every message is one of:
//   batch  on `<prefix>.log`: whole commands framed as in a journal segment
//          (batch.ts); headers Dx-Epoch, Dx-First-Seq, Dx-Last-Seq.
//   claim  on `<prefix>.claim.<epoch>`: a node takes over as primary of
//          <epoch>; empty body; Dx-Epoch, Dx-Last-Seq = the last seq in the
//          stream before it, Dx-Node, Dx-Url (its public REST address).
// Every publish carries Nats-Expected-Last-Sequence = the stream seq of the
// message before it (the single-writer fence: a claim moves the stream on, so
// every later publish of the old primary is refused with "wrong last
// sequence") and a batch carries Nats-Msg-Id = `<epoch>-<first seq>` (a retry
// after a lost ack is deduplicated; the server checks the id before the
// expected sequence, so a retry of a message that landed is acknowledged as a
// duplicate with its original stream seq).
//
// Heartbeats are not in the stream: core NATS messages on `<prefix>.hb`,
// JSON, from every node every heartbeat_ms.

export type Role = 'off' | 'primary' | 'standby' | 'replica' | 'fenced' | 'starting';

export const ROLE_CODES: readonly Role[] = ['off', 'primary', 'standby', 'replica', 'fenced', 'starting'];

export function roleCode(r: Role): number {
  return ROLE_CODES.indexOf(r);
}

export interface Subjects {
  prefix: string;
  log: string;
  claims: string;
  claim(epoch: number): string;
  heartbeat: string;
}

/** Stream names are restricted by JetStream to [A-Za-z0-9_-]; subjects derive from them. */
export function subjectsOf(stream: string): Subjects {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(stream)) throw new Error(`stream name ${JSON.stringify(stream)}: use 1..64 of A-Z a-z 0-9 _ -`);
  const prefix = `dx.${stream}`;
  return {
    prefix,
    log: `${prefix}.log`,
    claims: `${prefix}.claim.*`,
    claim: (epoch) => `${prefix}.claim.${epoch}`,
    heartbeat: `${prefix}.hb`,
  };
}

export const H_EPOCH = 'Dx-Epoch';
export const H_FIRST_SEQ = 'Dx-First-Seq';
export const H_LAST_SEQ = 'Dx-Last-Seq';
export const H_NODE = 'Dx-Node';
export const H_URL = 'Dx-Url';
/** A batch's event layout (LAYOUT_FINGERPRINT of the build that wrote it): a follower of another layout refuses it. */
export const H_LAYOUT = 'Dx-Layout';

export function msgIdOf(epoch: number, firstSeq: number): string {
  return `${epoch}-${firstSeq}`;
}

/** What a stored message says about the log (from its subject and headers). */
export interface LogEntry {
  kind: 'batch' | 'claim';
  streamSeq: number;
  epoch: number;
  /** Batch: its first seq; claim: lastSeq + 1. */
  firstSeq: number;
  /** Batch: its last seq; claim: the last seq in the stream before it. */
  lastSeq: number;
  node: string;
  url: string;
  /** Batch: the layout fingerprint its records were written with (0 when the header is missing); claim: 0. */
  layout: number;
}

export interface HeaderSource {
  get(k: string): string;
}

function headerInt(h: HeaderSource | undefined, name: string, streamSeq: number): number {
  const raw = h?.get(name) ?? '';
  if (!/^[0-9]{1,16}$/.test(raw))
    throw new Error(`replicated log message ${streamSeq}: header ${name} is ${JSON.stringify(raw)}, not a number`);
  return Number(raw);
}

export function entryOf(subjects: Subjects, subject: string, streamSeq: number, h: HeaderSource | undefined): LogEntry {
  const epoch = headerInt(h, H_EPOCH, streamSeq);
  const lastSeq = headerInt(h, H_LAST_SEQ, streamSeq);
  if (subject === subjects.log) {
    const firstSeq = headerInt(h, H_FIRST_SEQ, streamSeq);
    if (firstSeq < 1 || firstSeq > lastSeq) throw new Error(`replicated log message ${streamSeq}: seqs ${firstSeq}..${lastSeq}`);
    const raw = h?.get(H_LAYOUT) ?? '';
    const layout = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : 0;
    return { kind: 'batch', streamSeq, epoch, firstSeq, lastSeq, node: h?.get(H_NODE) ?? '', url: '', layout };
  }
  if (subject === subjects.claim(epoch)) {
    const node = h?.get(H_NODE) ?? '';
    return { kind: 'claim', streamSeq, epoch, firstSeq: lastSeq + 1, lastSeq, node, url: h?.get(H_URL) ?? '', layout: 0 };
  }
  throw new Error(`replicated log message ${streamSeq}: subject ${subject} is neither ${subjects.log} nor the claim of epoch ${epoch}`);
}

/**
 * How a follower takes the next entry, given the last seq and epoch it has
 * applied: 'apply' (a batch that continues the log, possibly overlapping what
 * a recovered journal already holds), 'claim' (a new epoch), or a fault.
 */
export function followStep(appliedSeq: number, epoch: number, e: LogEntry): { action: 'apply' | 'claim' | 'skip' } | { fault: string } {
  if (e.kind === 'claim') {
    if (e.epoch <= epoch) return { fault: `claim of epoch ${e.epoch} after epoch ${epoch}` };
    if (e.lastSeq !== appliedSeq)
      return { fault: `claim of epoch ${e.epoch} at seq ${e.lastSeq}, but the log was applied up to seq ${appliedSeq}` };
    return { action: 'claim' };
  }
  if (epoch !== 0 && e.epoch !== epoch) return { fault: `a batch of epoch ${e.epoch} in epoch ${epoch}` };
  if (e.lastSeq <= appliedSeq) return { action: 'skip' };
  if (e.firstSeq > appliedSeq + 1) return { fault: `seqs ${e.firstSeq}..${e.lastSeq} after seq ${appliedSeq}: a gap` };
  return { action: 'apply' };
}

/** JetStream API error codes this protocol reacts to. */
export const ERR_WRONG_LAST_SEQUENCE = 10071;

/**
 * What the primary does about a failed publish: 'fenced' when the stream
 * refused it because another message came first (a claim, or our own lost
 * message: the caller looks at the stream's last message to tell), 'retry'
 * for a lost or late answer (timeout, no responders while a stream leader is
 * elected, a dropped connection), 'fatal' for anything else (the stream is
 * full, misconfigured, or gone).
 */
export function publishVerdict(e: unknown): 'wrong_last' | 'retry' | 'fatal' {
  const err = e as { name?: string; code?: unknown; message?: string; api_error?: { err_code?: number }; cause?: unknown };
  const api = (err as { api_error?: { err_code?: number } }).api_error;
  const code = typeof err.code === 'number' ? err.code : api?.err_code;
  if (code === ERR_WRONG_LAST_SEQUENCE) return 'wrong_last';
  const name = err.name ?? '';
  const msg = String(err.message ?? '');
  if (/Timeout|NoResponders|JetStreamNotEnabled|Closed|Disconnect|Connection/i.test(name)) return 'retry';
  if (/timeout|no responders|not enabled|closed|disconnect|connection|503/i.test(msg)) return 'retry';
  // JetStream "temporarily unavailable" style answers while a leader changes.
  if (code === 10008 || code === 10023) return 'retry';
  return 'fatal';
}

/** One node's heartbeat (core NATS, JSON). */
export interface Heartbeat {
  node: string;
  role: Role;
  epoch: number;
  /** Seq of the last command this node has applied (followers) or sequenced (primary). */
  seq: number;
  /** durable_seq on this node. */
  durable_seq: number;
  /** Last stream seq this node published (primary) or applied (followers). */
  stream_seq: number;
  /** Public REST address (writes are redirected to the primary's). */
  url: string;
  /** Wall clock of the sender, ms. */
  ts_ms: number;
}

export function parseHeartbeat(raw: string): Heartbeat | null {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    if (e instanceof SyntaxError) return null;
    throw e;
  }
  const h = v as Partial<Heartbeat>;
  if (typeof h !== 'object' || h === null || typeof h.node !== 'string' || !ROLE_CODES.includes(h.role as Role)) return null;
  for (const k of ['epoch', 'seq', 'durable_seq', 'stream_seq', 'ts_ms'] as const) if (typeof h[k] !== 'number') return null;
  return {
    node: h.node,
    role: h.role as Role,
    epoch: h.epoch!,
    seq: h.seq!,
    durable_seq: h.durable_seq!,
    stream_seq: h.stream_seq!,
    url: String(h.url ?? ''),
    ts_ms: h.ts_ms!,
  };
}

/**
 * The standby's failure detector: claim when no heartbeat of a primary of
 * the current (or a later) epoch arrived for a lease, counted from the later
 * of the last such heartbeat and the moment this node started following.
 */
export function shouldClaim(nowMs: number, lastPrimaryHeartbeatMs: number, followingSinceMs: number, leaseMs: number): boolean {
  return nowMs - Math.max(lastPrimaryHeartbeatMs, followingSinceMs) > leaseMs;
}

/**
 * A follower's stall detector: the primary's heartbeats say the stream holds
 * entries past the follower's, and the follower has taken none for a lease.
 * Its consumer then sits on a NATS replica that is not current (nats-server
 * 2.9.10 may place an ephemeral consumer there after NATS restarts) and will
 * deliver nothing: the node starts following again with a new consumer.
 */
export function followStalled(
  nowMs: number,
  lastProgressMs: number,
  followerStreamSeq: number,
  primaryStreamSeq: number,
  leaseMs: number,
): boolean {
  return primaryStreamSeq > followerStreamSeq && nowMs - lastProgressMs > leaseMs;
}

/**
 * Which local journal prefix a node may keep at start-up. A node that was
 * primary of `myEpoch` may hold records that never reached the stream (its
 * unacknowledged tail): it keeps what the stream holds of its epoch, i.e. up
 * to the last seq before the next epoch's claim, or up to the stream's end
 * when no later claim exists. A node that only followed keeps everything
 * (its journal is a prefix of the stream). Returns the seq to truncate after.
 */
export function keepUpTo(
  localLastSeq: number,
  myPrimaryEpoch: number | null,
  nextClaimLastSeq: number | null,
  streamLastSeq: number,
): number {
  if (myPrimaryEpoch === null) return localLastSeq;
  const end = nextClaimLastSeq ?? streamLastSeq;
  return Math.min(localLastSeq, end);
}
