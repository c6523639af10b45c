// A follower (src/replication/follower.ts) fed bad messages of the
// replicated log through a stand-in for the JetStream consumer, no NATS:
// a message without headers, on a foreign subject, with an empty or
// truncated body, of another build's layout fingerprint, or one that skips
// seqs stops the follow with a BatchFault (the node exits 70: damage in the
// log, never retried as a NATS hiccup), and nothing after the last good
// batch is applied; a batch delivered twice is applied once. Test process,
// main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LAYOUT_FINGERPRINT } from '../../src/layout/records.js';
import { BatchBuilder, BatchFault } from '../../src/replication/batch.js';
import { Follower } from '../../src/replication/follower.js';
import type { LogClient } from '../../src/replication/log_client.js';
import { subjectsOf } from '../../src/replication/protocol.js';
import { ReplicationStatus } from '../../src/replication/status.js';
import { journaledRun, removeDataDir, tempDataDir } from '../journal/journal_fixture.js';

const S = subjectsOf('DX');

interface Body {
  body: Uint8Array;
  firstSeq: number;
  lastSeq: number;
}

interface Message {
  seq: number;
  subject: string;
  data: Uint8Array;
  headers: { get(k: string): string } | undefined;
}

/** Batches of a journaled run's events, cut every 9 events. */
function bodies(): Body[] {
  const dir = tempDataDir('bad-messages');
  const b = new BatchBuilder(256);
  const out: Body[] = [];
  let n = 0;
  const r = journaledRun(dir, 7, 40, {
    onEvent: (m, o) => {
      b.append(m, o);
      if (++n % 9 === 0) {
        const c = b.cut();
        if (c) out.push(c);
      }
    },
  });
  const c = b.cut();
  if (c) out.push(c);
  r.writer.close();
  removeDataDir(dir);
  return out;
}

const B = bodies();

function batch(c: Body, seq: number, over: { data?: Uint8Array; headers?: Record<string, string> } = {}): Message {
  const h: Record<string, string> = {
    'Dx-Epoch': '1', 'Dx-First-Seq': String(c.firstSeq), 'Dx-Last-Seq': String(c.lastSeq), 'Dx-Layout': String(LAYOUT_FINGERPRINT),
    ...over.headers,
  };
  return { seq, subject: S.log, data: over.data ?? c.body, headers: { get: (k) => h[k] ?? '' } };
}

/** Runs a follower over msgs: the last seq of each batch applied, and how the follow ended. */
async function follow(msgs: Message[]): Promise<{ applied: number[]; err: unknown }> {
  const applied: number[] = [];
  const consumer = {
    consume: async () => ({
      close: async () => undefined,
      async *[Symbol.asyncIterator]() {
        yield* msgs;
      },
    }),
  };
  const log = { cfg: { stream: 'DX' }, subjects: S, js: { consumers: { get: async () => consumer } } } as unknown as LogClient;
  const sink = { apply: async (b: { lastSeq: number }) => void applied.push(b.lastSeq) };
  const f = new Follower(log, sink, new ReplicationStatus(ReplicationStatus.allocate('standby')), 0, () => undefined);
  let err: unknown = null;
  await f.run(1, 0).catch((e: unknown) => {
    err = e;
  });
  return { applied, err };
}

const CASES: Record<string, () => Message[]> = {
  'a message without headers': () => [batch(B[0]!, 1), { seq: 2, subject: S.log, headers: undefined, data: B[1]!.body }],
  'a batch with an empty body': () => [batch(B[0]!, 1), batch(B[1]!, 2, { data: new Uint8Array(0) })],
  'a message on a foreign subject of the stream': () => [batch(B[0]!, 1), { ...batch(B[1]!, 2), subject: 'dx.DX.claim.x' }],
  'a truncated batch': () => [batch(B[0]!, 1), batch(B[1]!, 2, { data: B[1]!.body.subarray(0, B[1]!.body.length - 5) })],
  'a batch of another layout fingerprint': () => [batch(B[0]!, 1), batch(B[1]!, 2, { headers: { 'Dx-Layout': '1' } })],
  'a batch without a layout fingerprint': () => [batch(B[0]!, 1), batch(B[1]!, 2, { headers: { 'Dx-Layout': '' } })],
  'a batch that skips seqs': () => [batch(B[0]!, 1), batch(B[2]!, 2)],
  'a stream seq gap': () => [batch(B[0]!, 1), batch(B[1]!, 3)],
};

for (const [name, msgs] of Object.entries(CASES)) {
  test(`replicated log: ${name} stops the follower with a BatchFault, nothing after it applied`, async () => {
    const { applied, err } = await follow(msgs());
    assert.deepEqual(applied, [B[0]!.lastSeq], 'only the good batch was applied');
    assert.ok(err instanceof BatchFault, `rejected with ${String(err)}`);
  });
}

test('replicated log: a batch delivered twice is applied once', async () => {
  const { applied, err } = await follow([batch(B[0]!, 1), batch(B[0]!, 2), batch(B[1]!, 3)]);
  assert.equal(err, null);
  assert.deepEqual(applied, [B[0]!.lastSeq, B[1]!.lastSeq]);
});
