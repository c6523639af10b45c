// The replicator's poll chain while its in-flight window is full (found by
// the concurrency review): the unread records are no work until an ack, or a
// resync, opens the window. It used to re-check the ring, find them, and
// poll again every event-loop turn (a whole core while NATS was slow); a
// resync that emptied the window without an ack left them unsent. A fake log
// client whose publishes are answered only when the test says so.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { DurableSeq } from '../../src/journal/durable.js';
import { CommandCompleted, Header, LAYOUT_FINGERPRINT, T_COMMAND_COMPLETED } from '../../src/layout/records.js';
import { ERR_WRONG_LAST_SEQUENCE } from '../../src/replication/protocol.js';
import { Replicator } from '../../src/replication/replicator.js';
import { ReplicationStatus } from '../../src/replication/status.js';
import { BroadcastProducer, BroadcastRing } from '../../src/ring/broadcast_ring.js';

/** The window the replicator keeps (256 messages): one command per event-loop pass is one message. */
const WINDOW = 256;

async function fullWindow(fill = true): Promise<{
  r: Replicator; published: () => number; polls: () => number; durable: DurableSeq;
  acks: ((v: { seq: number }) => void)[]; rejects: ((e: Error) => void)[];
}> {
  const ringSab = BroadcastRing.allocate(1 << 20, 2, LAYOUT_FINGERPRINT);
  const prod = new BroadcastProducer(ringSab, LAYOUT_FINGERPRINT);
  const durable = new DurableSeq(DurableSeq.allocate('replicated'));
  const status = new ReplicationStatus(ReplicationStatus.allocate('primary'));
  let publishes = 0;
  const acks: ((v: { seq: number }) => void)[] = [];
  const rejects: ((e: Error) => void)[] = [];
  const log = {
    cfg: { lease_ms: 600_000, max_batch_bytes: 1 << 20, node: 'n1' },
    subjects: { log: 'log' },
    lastEntry: async () => ({ epoch: 1, kind: 'batch', lastSeq: WINDOW, streamSeq: WINDOW }),
    js: {
      publish: () => {
        publishes++;
        return new Promise((res, rej) => {
          acks.push(res);
          rejects.push(rej);
        });
      },
    },
  };
  const r = new Replicator(log as never, ringSab, 0, durable, status, 1, 0, () => {}, () => {});
  // Each poll of the ring is one call of its private pump().
  let pumps = 0;
  const inner = r as unknown as { pump: () => number };
  const pump = inner.pump.bind(r);
  inner.pump = () => {
    pumps++;
    return pump();
  };
  r.start();
  let seq = 0;
  const command = (): void => {
    const o = prod.tryClaim(CommandCompleted.SIZE);
    Header.set_type(prod.mem, o, T_COMMAND_COMPLETED);
    Header.set_seq(prod.mem, o, ++seq);
    prod.publish();
    prod.doorbell.wake();
  };
  if (fill) {
    for (let i = 0; i < WINDOW + 4; i++) {
      command();
      await delay(1);
    }
    for (let i = 0; i < 10; i++) command();
  }
  await delay(20);
  return { r, published: () => publishes, polls: () => pumps, durable, acks, rejects };
}

test('replicator: a full window with records unread parks the poll chain, and an ack sends them', async () => {
  const w = await fullWindow();
  try {
    assert.equal(w.published(), WINDOW, 'the window is full');
    const p0 = w.polls();
    await delay(300);
    // Before the fix: hundreds of thousands of polls in 300 ms.
    assert.ok(w.polls() - p0 < 100, `${w.polls() - p0} polls of the ring while nothing could be sent`);
    w.acks[0]!({ seq: 1 });
    await delay(50);
    assert.equal(w.published(), WINDOW + 1, 'the ack opened the window and the unread records went out');
  } finally {
    w.r.stop();
  }
});

test('replicator: a resync that empties a full window without an ack sends the unread records', async () => {
  const w = await fullWindow();
  try {
    // A wrong-last answer whose resync finds all the window's messages stored.
    w.rejects[0]!(Object.assign(new Error('wrong last sequence'), { code: ERR_WRONG_LAST_SEQUENCE }));
    await delay(100);
    assert.ok(w.published() > WINDOW, `published ${w.published()}: the unread records stayed in the ring`);
  } finally {
    w.r.stop();
  }
});

test('replicator: an idle replicator does not spin again after each safety-net timeout of its park', async () => {
  const w = await fullWindow(false);
  try {
    const p0 = w.polls();
    await delay(300);
    // Each 5 ms timeout used to restart a 32-poll spin: about 1,800 polls in 300 ms; now about one per timeout.
    assert.ok(w.polls() - p0 < 400, `${w.polls() - p0} polls of an empty ring in 300 ms`);
  } finally {
    w.r.stop();
  }
});
