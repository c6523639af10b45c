// More of a standby's claim (ReplicationNode.claim, src/replication/node.ts),
// with a fake log client and engine (no NATS), as in claim.test.ts:
// (1) the log moved after the claim looked (the primary wrote again while the
//     claim read the last entry): the claim must expect the entry it looked
//     at, so NATS refuses it, not the follower's newer position (it fenced a
//     live primary);
// (2) a promoted node takes writes only once its engine clock has fired what
//     fell due while no primary ran (gtd expiries, dead-man timers, round
//     closes), as a single-node start waits for (catchUpClock in exchange.ts);
// (3) a follower stuck one entry short of the log when the primary died (an
//     entry published after its last heartbeat; the consumer sits on a NATS
//     replica that is behind) is followed again: the stall detector compared
//     the follower only with the last heartbeat, and the claim waited for the
//     stream's end, so the group had no primary for good.
// Test process, main thread.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { DurableSeq } from '../../src/journal/durable.js';
import { LAYOUT_FINGERPRINT } from '../../src/layout/records.js';
import { ReplicationNode } from '../../src/replication/node.js';
import { subjectsOf } from '../../src/replication/protocol.js';
import { ReplicationStatus } from '../../src/replication/status.js';
import { BroadcastRing } from '../../src/ring/broadcast_ring.js';

interface Inner {
  log: unknown; follower: unknown; following: Promise<void>; primaryStreamSeq: number; lastPrimaryHeartbeat: number;
  replicator: { stop(): void } | null; claim(): Promise<void>; tick(): void;
}

/**
 * A standby whose follower took stream seqs 1..5 (seqs up to 10, epoch 3), all applied; `log` is the fake log client's
 * own part (info, entry, publishClaim, ...). Runs body, then stops the node.
 */
async function standby(
  o: { engine: object; leaseMs?: number; log: Record<string, unknown> },
  body: (inner: Inner, status: ReplicationStatus) => Promise<void>,
): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-claim-edges-'));
  const leaseMs = o.leaseMs ?? 1000;
  const status = new ReplicationStatus(ReplicationStatus.allocate('standby'));
  const n = new ReplicationNode({
    mode: 'ha',
    cfg: {
      urls: [], stream: 's', bucket: 'b', replicas: 1, lease_ms: leaseMs, heartbeat_ms: Math.min(50, leaseMs / 5), node: 'n2', url: 'u',
      max_batch_bytes: 1 << 20,
    },
    eventRing: BroadcastRing.allocate(1 << 16, 4, LAYOUT_FINGERPRINT),
    replicatorConsumer: 1,
    durable: new DurableSeq(DurableSeq.allocate('replicated')),
    status,
    engine: o.engine,
    appliedSeq: 10,
    dataDir,
    log: () => {},
    onPromoted: () => {}, onStepDown: () => {}, onFault: () => {},
  } as never);
  const inner = n as unknown as Inner;
  inner.follower = { streamSeq: 5, applied: 10, epoch: 3, stop: async () => {} };
  inner.log = {
    cfg: { stream: 's', lease_ms: leaseMs, node: 'n2', max_batch_bytes: 1 << 20 },
    subjects: subjectsOf('s'),
    nc: { publish: () => {}, flush: async () => {} },
    js: { publish: () => new Promise(() => {}) },
    claimOf: async () => null,
    ...o.log,
  };
  try {
    await body(inner, status);
  } finally {
    inner.replicator?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** The engine as EngineControl shows it: sequencing once it took over the ring. */
interface FakeEngine {
  promote: number; clockCaughtUp: boolean; seq: number; requestPromote(): void; readonly sequencing: boolean;
}

function fakeEngine(clockCaughtUp: boolean): FakeEngine {
  return {
    promote: 0, clockCaughtUp, seq: 10,
    requestPromote() {
      this.promote = 1;
    },
    get sequencing() {
      return this.promote === 1;
    },
  };
}

/** The log's last entry as the claim reads it: a batch of epoch 3 ending at stream seq 5 (seqs 9..10). */
const LAST_ENTRY = { entry: { kind: 'batch', epoch: 3, firstSeq: 9, lastSeq: 10, streamSeq: 5 }, body: new Uint8Array(0) };

test('standby: a claim whose log moved after it looked (the primary wrote again) expects the entry it looked at', async () => {
  const published: { epoch: number; lastSeq: number; expect: number }[] = [];
  let releaseEntry!: () => void;
  const log = {
    info: async () => ({ last_seq: 5, messages: 5 }),
    entry: () => new Promise((res) => {
      releaseEntry = () => res(LAST_ENTRY);
    }),
    // NATS: a claim is stored when it expects the stream's last seq (6 once the primary's batch landed).
    publishClaim: async (epoch: number, lastSeq: number, expect: number) => {
      published.push({ epoch, lastSeq, expect });
      if (expect === 6) return 7;
      throw Object.assign(new Error('wrong last sequence: 6'), { code: 10071 });
    },
    locate: async () => ({ streamSeq: 7, firstStored: null, lastSeqInStream: 12, lastStreamSeq: 6 }),
  };
  await standby({ engine: fakeEngine(true), log }, async (inner, status) => {
    const claimed = inner.claim();
    await new Promise((r) => setImmediate(r));
    // While the claim reads the last entry, the primary (epoch 3) publishes again: the follower takes stream seq 6 (seqs 11..12).
    Object.assign(inner.follower as object, { streamSeq: 6, applied: 12 });
    releaseEntry();
    await claimed.catch((e: Error) => assert.fail(`the refused claim is no fault of the node: ${e.message}`));
    const stored = published.filter((p) => p.expect === 6);
    assert.deepEqual(stored, [], `the claim was published after the log moved (${JSON.stringify(published)}): it fences a live primary`);
    assert.equal(status.role, 'standby');
  });
});

test('standby: a promoted node takes writes only once its engine clock has fired what fell due during the outage', async () => {
  const engine = fakeEngine(false); // its loop's first tick has not run yet (the engine thread was not scheduled since)
  const log = { info: async () => ({ last_seq: 5, messages: 5 }), entry: async () => LAST_ENTRY, publishClaim: async () => 6 };
  await standby({ engine, log }, async (inner, status) => {
    const claimed = inner.claim();
    await delay(50);
    const roleBeforeTick = status.role;
    engine.clockCaughtUp = true; // the engine loop's first tick: the expiries are sequenced
    await claimed;
    assert.equal(roleBeforeTick, 'standby', 'the node took writes before its engine clock fired the timers that fell due');
    assert.equal(status.role, 'primary');
  });
});

test('standby: a follower stuck one entry short of the log after the primary died is followed again (or the node claims)', async () => {
  const leaseMs = 100;
  let locates = 0;
  const claims: number[] = [];
  const log = {
    js: { consumers: { get: async () => ({ consume: async () => ({ close: async () => {}, async *[Symbol.asyncIterator]() {} }) }) } },
    info: async () => ({ last_seq: 6, messages: 6 }),
    entry: async () => ({ entry: { kind: 'batch', epoch: 3, firstSeq: 11, lastSeq: 12, streamSeq: 6 }, body: new Uint8Array(0) }),
    locate: async () => {
      locates++;
      return { streamSeq: 6, firstStored: null, lastSeqInStream: 12, lastStreamSeq: 6 };
    },
    publishClaim: async (epoch: number) => {
      claims.push(epoch);
      return 7;
    },
  };
  const engine = { requestPromote: () => {}, sequencing: true, clockCaughtUp: true, seq: 10 };
  await standby({ engine, leaseMs, log }, async (inner) => {
    // The primary's last heartbeat named stream seq 5; it then published stream seq 6 and died. The follower's consumer
    // delivers nothing more.
    inner.following = Promise.resolve();
    inner.primaryStreamSeq = 5;
    inner.lastPrimaryHeartbeat = performance.now();
    for (let i = 0; i < 50 && locates === 0 && claims.length === 0; i++) {
      inner.tick();
      await delay(20);
    }
    assert.ok(locates > 0 || claims.length > 0,
      `after ${10 * leaseMs} ms (10 leases) without a primary the standby neither followed the log again nor claimed`);
  });
});
