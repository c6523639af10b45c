// A standby's claim (ReplicationNode.claim, src/replication/node.ts), with a
// fake log client (no NATS, as in clock_step.test.ts):
// (1) its follower fails (a NATS error, not damage in the log) while the
//     claim asks NATS: followFailed's retry must not run a second follower
//     (a second RingSink writing the log into the event ring: on a standby
//     every entry twice, on the new primary beside its engine);
// (2) the epoch it claims when the read of the log's last entry fails (a
//     follower that has taken no entry knows no epoch): it must not claim an
//     epoch the log already has (the claim would get in, and every follower
//     stops at it: "claim of epoch 1 after epoch 3");
// (3) the replay floor (docs/rest.md: a standby that becomes the primary
//     refuses every mutation signed before its promotion) is raised before
//     the node takes writes, not after.
// Test process, main thread.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ReplayGuard } from '../../src/gateway/auth.js';
import { DurableSeq } from '../../src/journal/durable.js';
import { CommandCompleted, Header, LAYOUT_FINGERPRINT, T_COMMAND_COMPLETED } from '../../src/layout/records.js';
import { memOf } from '../../src/lib/mem.js';
import { BatchBuilder } from '../../src/replication/batch.js';
import { ReplicationNode } from '../../src/replication/node.js';
import { subjectsOf } from '../../src/replication/protocol.js';
import { ReplicationStatus } from '../../src/replication/status.js';
import { BroadcastConsumer, BroadcastRing } from '../../src/ring/broadcast_ring.js';

const HEARTBEAT_MS = 50;

/** The log's next entry (stream seq 6): a batch of epoch 3 of two commands, seqs 11 and 12 (a CommandCompleted each). */
function nextBatch(): unknown {
  const m = memOf(new ArrayBuffer(2 * CommandCompleted.SIZE));
  const b = new BatchBuilder(256);
  for (const [i, seq] of [11, 12].entries()) {
    const o = i * CommandCompleted.SIZE;
    Header.set_len(m, o, CommandCompleted.SIZE);
    Header.set_type(m, o, T_COMMAND_COMPLETED);
    Header.set_seq(m, o, seq);
    b.append(m, o);
  }
  const h: Record<string, string> = { 'Dx-Epoch': '3', 'Dx-First-Seq': '11', 'Dx-Last-Seq': '12', 'Dx-Layout': String(LAYOUT_FINGERPRINT) };
  return { seq: 6, subject: subjectsOf('s').log, data: b.cut()!.body, headers: { get: (k: string) => h[k] ?? '' } };
}

/** A consumer's message iterator that delivers `first`, then nothing: fail() ends it with an error, close() ends it. */
function idleMessages(first: unknown[] = []): { fail: (e: Error) => void; it: unknown; ended: boolean } {
  let fail!: (e: Error) => void;
  let end!: () => void;
  const done = new Promise<void>((res, rej) => {
    end = res;
    fail = rej;
  });
  const m = {
    ended: false,
    fail: (e: Error) => {
      m.ended = true;
      fail(e);
    },
    it: {
      close: async () => {
        m.ended = true;
        end();
      },
      async *[Symbol.asyncIterator]() {
        yield* first;
        await done;
      },
    },
  };
  return m;
}

interface Rig {
  n: ReplicationNode;
  inner: {
    log: unknown; follower: unknown; replicator: { stop(): void } | null; claiming: boolean;
    follow(applied: number, wait: boolean): Promise<void>; claim(): Promise<void>;
  };
  status: ReplicationStatus;
  consumers: ReturnType<typeof idleMessages>[];
  /** Seqs of the records the node wrote into its event ring so far. */
  ringSeqs: () => number[];
  locates: () => number;
  claimed: number[];
  releaseInfo: (v: unknown) => void;
  done: () => void;
}

function seqsOf(reader: BroadcastConsumer): number[] {
  const out: number[] = [];
  for (let at = reader.peek(); at >= 0; at = reader.peek()) {
    out.push(Header.seq(reader.mem, at));
    reader.advance();
  }
  return out;
}

/**
 * A standby caught up with a log of stream seqs 1..5 (seqs up to 10, its last entry a batch of epoch 3), with a follower that consumes
 * nothing more. info() answers when the test calls releaseInfo.
 */
function rig(o: { claimStored?: boolean; entryFails?: boolean; promoted?: (epoch: number) => void; extra?: object } = {}): Rig {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-claim-race-'));
  const consumers: ReturnType<typeof idleMessages>[] = [];
  let locates = 0;
  let sequencing = false;
  const claimed: number[] = [];
  const eventRing = BroadcastRing.allocate(1 << 16, 4, LAYOUT_FINGERPRINT);
  // What the node writes into its event ring (the engine, journal and read models read it so).
  const reader = new BroadcastConsumer(eventRing, LAYOUT_FINGERPRINT, 3);
  reader.open();
  const r = { releaseInfo: (_v: unknown): void => undefined };
  // The first follower's consumer delivers nothing more; later ones deliver the log's next batch.
  const consume = (): unknown => {
    const c = idleMessages(consumers.length === 0 ? [] : [nextBatch()]);
    consumers.push(c);
    return c.it;
  };
  const status = new ReplicationStatus(ReplicationStatus.allocate('standby'));
  const opts = {
    mode: 'ha',
    cfg: {
      urls: [], stream: 's', bucket: 'b', replicas: 1, lease_ms: 1000, heartbeat_ms: HEARTBEAT_MS, node: 'n2', url: 'u',
      max_batch_bytes: 1 << 20,
    },
    eventRing,
    replicatorConsumer: 1,
    durable: new DurableSeq(DurableSeq.allocate('replicated')),
    status,
    engine: { requestPromote: () => { sequencing = true; }, get sequencing() { return sequencing; }, clockCaughtUp: true, seq: 10 },
    appliedSeq: 10,
    dataDir,
    log: () => {},
    onPromoted: o.promoted ?? (() => {}), onStepDown: () => {}, onFault: () => {},
    ...o.extra,
  };
  const n = new ReplicationNode(opts as never);
  const inner = n as unknown as Rig['inner'];
  inner.log = {
    cfg: { stream: 's', lease_ms: 1000, node: 'n2', max_batch_bytes: 1 << 20 },
    subjects: subjectsOf('s'),
    nc: { publish: () => {}, flush: async () => {} },
    js: {
      consumers: { get: async () => ({ consume: async () => consume() }) },
      publish: () => new Promise(() => {}),
    },
    // The log holds stream seqs 1..5 (seqs up to 10), all applied here: the standby is caught up.
    locate: async () => { locates++; return { streamSeq: 6, firstStored: null, lastSeqInStream: 10, lastStreamSeq: 5 }; },
    info: () => new Promise((res) => { r.releaseInfo = res; }),
    entry: async () => {
      if (o.entryFails) throw Object.assign(new Error('TimeoutError: timeout'), { name: 'TimeoutError' }); // the stream leader is slow
      return { entry: { kind: 'batch', epoch: 3, firstSeq: 9, lastSeq: 10, streamSeq: 5 }, body: new Uint8Array(0) };
    },
    publishClaim: async (epoch: number) => {
      claimed.push(epoch);
      if (o.claimStored ?? true) return 6;
      throw Object.assign(new Error('wrong last sequence: 6'), { code: 10071 }); // the old primary published first
    },
    claimOf: async () => null,
  };
  return {
    n, inner, status, consumers, locates: () => locates,
    ringSeqs: () => seqsOf(reader), claimed, releaseInfo: (v) => r.releaseInfo(v),
    done: () => {
      inner.replicator?.stop();
      for (const c of consumers) c.fail(new Error('end of test'));
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The claim of (1): the follower's consumer fails while info() is pending; returns once the claim ended and a retry had time to run. */
async function claimWhileFollowerFails(g: Rig): Promise<void> {
  await g.inner.follow(10, false);
  for (let i = 0; i < 100 && g.consumers.length === 0; i++) await delay(1);
  assert.equal(g.consumers.length, 1, 'the follower consumes');
  // tick() starts the claim (the primary has been silent for a lease); its first step asks NATS for the stream's state.
  g.inner.claiming = true;
  const claimed = g.inner.claim();
  await delay(5);
  // Meanwhile the follower's consumer fails (a NATS node went away): followFailed will follow again in a heartbeat.
  g.consumers[0]!.fail(new Error('consumer lost'));
  await delay(5);
  g.releaseInfo({ last_seq: 5, messages: 5 });
  await claimed;
  g.inner.claiming = false;
  await delay(4 * HEARTBEAT_MS);
}

test('standby: a follower that fails during a successful claim is not followed again once the node is primary', async () => {
  const g = rig();
  try {
    await claimWhileFollowerFails(g);
    assert.equal(g.status.role, 'primary', 'the claim was stored: the node is primary');
    assert.deepEqual(g.ringSeqs(), [], 'a follower wrote the log into the event ring of the primary (whose engine is its producer)');
    assert.equal(g.locates(), 1, `the primary followed the log again (${g.locates() - 1} more follow) after its claim`);
    assert.equal(g.inner.follower, null, 'a primary runs a follower that writes the log into its own event ring');
  } finally {
    g.done();
  }
});

test('standby: a follower that fails during a refused claim is followed again once, not twice', async () => {
  const g = rig({ claimStored: false });
  try {
    await claimWhileFollowerFails(g);
    assert.equal(g.status.role, 'standby');
    const live = g.consumers.filter((c) => !c.ended).length;
    assert.deepEqual(g.ringSeqs(), [11, 12], `${live} followers wrote the log's next batch into the event ring`);
  } finally {
    g.done();
  }
});

test('standby: a claim whose read of the log\'s last entry fails does not claim an epoch the log already has', async () => {
  const g = rig({ entryFails: true });
  try {
    // The follower started at the end of an idle log and took no entry: it knows no epoch (0), nor does the node.
    g.inner.follower = { streamSeq: 5, applied: 10, epoch: 0, stop: async () => {} };
    const claimed = g.inner.claim();
    g.releaseInfo({ last_seq: 5, messages: 5 });
    await claimed;
    assert.deepEqual(g.claimed.filter((e) => e <= 3), [], `claimed epoch ${g.claimed.join(', ')} in a log whose last entry is of epoch 3`);
  } finally {
    g.done();
  }
});

test('standby: the replay floor is raised before the promoted node takes writes', async () => {
  const guard = new ReplayGuard(ReplayGuard.allocate(1024));
  // As the process does it: 'promoted' is a message to the main thread, which sets the floor when it gets to it.
  const g = rig({
    promoted: () => setImmediate(() => guard.setNotBefore(Date.now())),
    extra: { beforeWritable: () => guard.setNotBefore(Date.now()) },
  });
  let floorWhenWritable: number | null = null;
  const setRole = g.status.setRole.bind(g.status);
  g.status.setRole = (role) => {
    if (role === 'primary') floorWhenWritable = guard.notBefore;
    setRole(role);
  };
  try {
    g.inner.follower = { streamSeq: 5, applied: 10, epoch: 3, stop: async () => {} };
    const claimed = g.inner.claim();
    g.releaseInfo({ last_seq: 5, messages: 5 });
    await claimed;
    assert.equal(g.status.role, 'primary');
    assert.ok(floorWhenWritable !== null && floorWhenWritable > 0,
      'the node took writes (role primary) with no replay floor: a mutation signed for the old primary can be replayed to it');
  } finally {
    g.done();
  }
});
