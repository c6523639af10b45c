// The replication leases under a wall-clock step (docs/ARCHITECTURE.md,
// "Wall-clock steps"). A primary steps down when its log has gone
// unacknowledged, or its heartbeat round trip to NATS has stalled, for a
// lease; a standby claims when it has heard no primary for a lease. Each is a
// duration on this node alone, on its monotonic clock: a step forward must not
// fail a healthy primary over, a step back must not keep a cut-off primary (or
// a standby's claim) waiting for the length of the step. No NATS: a fake log
// client, as in test/replication/replicator_window.test.ts. Test process, main
// thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { DurableSeq } from '../../src/journal/durable.js';
import { CommandCompleted, Header, LAYOUT_FINGERPRINT, T_COMMAND_COMPLETED } from '../../src/layout/records.js';
import { ReplicationNode } from '../../src/replication/node.js';
import { Replicator } from '../../src/replication/replicator.js';
import { ReplicationStatus } from '../../src/replication/status.js';
import { BroadcastProducer, BroadcastRing } from '../../src/ring/broadcast_ring.js';

const LEASE_MS = 1000;
const HOUR = 3_600_000;
const realNow = Date.now;

async function stepped<T>(offsetMs: number, f: () => Promise<T>): Promise<T> {
  Date.now = () => realNow() + offsetMs;
  try {
    return await f();
  } finally {
    Date.now = realNow;
  }
}

/** A primary's replicator with one message in flight that NATS never acknowledges. */
async function replicatorInFlight(): Promise<{ r: Replicator; downs: string[] }> {
  const ringSab = BroadcastRing.allocate(1 << 20, 2, LAYOUT_FINGERPRINT);
  const prod = new BroadcastProducer(ringSab, LAYOUT_FINGERPRINT);
  const downs: string[] = [];
  let published = 0;
  const log = {
    cfg: { lease_ms: LEASE_MS, max_batch_bytes: 1 << 20, node: 'n1' },
    subjects: { log: 'log' },
    js: { publish: () => { published++; return new Promise(() => {}); } },
  };
  const r = new Replicator(log as never, ringSab, 0, new DurableSeq(DurableSeq.allocate('replicated')),
    new ReplicationStatus(ReplicationStatus.allocate('primary')), 1, 0, (why) => downs.push(why), () => {});
  r.start();
  const o = prod.tryClaim(CommandCompleted.SIZE);
  Header.set_type(prod.mem, o, T_COMMAND_COMPLETED);
  Header.set_seq(prod.mem, o, 1);
  prod.publish();
  prod.doorbell.wake();
  for (let i = 0; i < 100 && published === 0; i++) await delay(5);
  assert.equal(published, 1);
  return { r, downs };
}

test('replicator: the clock steps forward an hour 50 ms after a publish: the primary does not step down before the lease', async () => {
  const { r, downs } = await replicatorInFlight();
  try {
    await delay(50);
    await stepped(HOUR, () => delay(LEASE_MS / 2));
    assert.deepEqual(downs, [], `stepped down ${LEASE_MS / 2 + 50} ms after the publish (lease ${LEASE_MS} ms)`);
  } finally {
    r.stop();
  }
});

test('replicator: the clock steps back an hour while NATS does not acknowledge: the primary steps down about one lease after', async () => {
  const { r, downs } = await replicatorInFlight();
  try {
    await stepped(-HOUR, () => delay(LEASE_MS * 2));
    assert.equal(downs.length, 1, `no step-down ${LEASE_MS * 2} ms after an unacknowledged publish (lease ${LEASE_MS} ms)`);
  } finally {
    r.stop();
  }
});

/** A node without NATS: its log client is a fake; tick() and onHeartbeat() are driven by the test. */
interface NodeRig {
  n: ReplicationNode;
  claims: () => number;
  downs: string[];
  tick: () => void;
  hb: (raw: string) => void;
}

function node(role: 'standby' | 'primary'): NodeRig {
  const downs: string[] = [];
  let claims = 0;
  const n = new ReplicationNode({
    mode: 'ha',
    cfg: {
      urls: [], stream: 's', bucket: 'b', replicas: 1, lease_ms: LEASE_MS, heartbeat_ms: 100, node: 'n2', url: '', max_batch_bytes: 1 << 20,
    },
    eventRing: BroadcastRing.allocate(1 << 16, 2, LAYOUT_FINGERPRINT),
    replicatorConsumer: 1,
    durable: new DurableSeq(DurableSeq.allocate('replicated')),
    status: new ReplicationStatus(ReplicationStatus.allocate(role)),
    engine: null,
    appliedSeq: 0,
    dataDir: '/nonexistent',
    log: () => {},
    onPromoted: () => {},
    onStepDown: (why) => downs.push(why),
    onFault: () => {},
  });
  const inner = n as unknown as { log: unknown; follower: unknown; tick(): void; onHeartbeat(raw: string): void };
  // Caught up with the log (a follower at the stream's end, as after start()).
  inner.follower = { streamSeq: 5, applied: 10, epoch: 1, stop: async () => {} };
  inner.log = {
    subjects: { heartbeat: 'hb' },
    nc: { publish: () => {}, flush: () => new Promise(() => {}) },
    info: async () => { claims++; return null; }, // the claim's first step
  };
  return { n, claims: () => claims, downs, tick: () => inner.tick(), hb: (raw) => inner.onHeartbeat(raw) };
}

const primaryHeartbeat = (): string =>
  JSON.stringify({
    node: 'n1', role: 'primary', epoch: 1, seq: 10, durable_seq: 10, stream_seq: 5, url: 'http://127.0.0.1:1', ts_ms: Date.now(),
  });

test('standby: the clock steps forward an hour just after the primary\'s heartbeat: the standby does not claim', async () => {
  const s = node('standby');
  s.hb(primaryHeartbeat());
  await delay(100);
  await stepped(HOUR, async () => s.tick());
  await delay(10);
  assert.equal(s.claims(), 0, 'the standby tried to claim 100 ms after hearing the primary (lease 1000 ms)');
});

test('standby: the clock steps back an hour and the primary goes silent: the standby claims about one lease later', async () => {
  const s = node('standby');
  s.hb(primaryHeartbeat());
  await stepped(-HOUR, async () => {
    await delay(LEASE_MS + 200);
    s.tick();
  });
  await delay(10);
  assert.equal(s.claims(), 1, `no claim ${LEASE_MS + 200} ms after the last heartbeat (lease ${LEASE_MS} ms)`);
});

test('primary: the clock steps forward an hour: an idle primary whose NATS round trip is 100 ms old does not step down', async () => {
  const p = node('primary');
  (p.n as unknown as { lastFlushOk: number }).lastFlushOk = Date.now(); // its last round trip, as claim() or tick() records it
  await delay(100);
  await stepped(HOUR, async () => p.tick());
  assert.deepEqual(p.downs, []);
});
