// The replication logic that needs no NATS server (part of `npm test`):
// batch framing is byte for byte the journal's and its checks catch damage;
// the follower's step decisions, the fencing verdicts, the failure detector
// and the tail cut; durable_seq = min(fsynced, replicated) per mode; the
// shared status block; min_seq parsing; the configuration's checks; start-up asking
// again for the stream while the cluster cannot answer; cutting a
// journal after a seq leaves what recovery replays to the same state.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import test from 'node:test';
import { ApiError } from '../../src/gateway/envelope.js';
import { takeMinSeq } from '../../src/gateway/query.js';
import { DurableSeq } from '../../src/journal/durable.js';
import { FILE_HEADER_BYTES } from '../../src/journal/format.js';
import { planRecovery } from '../../src/journal/recovery.js';
import { Header, T_COMMAND_COMPLETED } from '../../src/layout/records.js';
import { loadConfig } from '../../src/main/config.js';
import { untilAnswered } from '../../src/main/replication.js';
import { aligned, BatchBuilder, BatchFault, scanBatch } from '../../src/replication/batch.js';
import { truncateJournalAfter } from '../../src/journal/cut.js';
import { readNodeState, writeNodeState } from '../../src/replication/local_state.js';
import {
  entryOf, followStalled, followStep, keepUpTo, msgIdOf, parseHeartbeat, publishVerdict, shouldClaim, subjectsOf, type LogEntry,
} from '../../src/replication/protocol.js';
import { ReplicationStatus } from '../../src/replication/status.js';
import {
  assertRecoversTo, journaledRun, journaledRunHashAt, removeDataDir, segmentFiles, tempDataDir,
} from '../journal/journal_fixture.js';

/** A journaled run whose events also go through a BatchBuilder, cut after every `cutEvery` events (mid-command too). */
function run(
  seed: number,
  count: number,
  cutEvery: number,
): { dir: string; bodies: Uint8Array[]; cuts: { firstSeq: number; lastSeq: number }[] } {
  const dir = tempDataDir('repl-batch');
  const b = new BatchBuilder(256);
  const bodies: Uint8Array[] = [];
  const cuts: { firstSeq: number; lastSeq: number }[] = [];
  let n = 0;
  const take = (): void => {
    const c = b.cut();
    if (c !== null) {
      bodies.push(c.body);
      cuts.push({ firstSeq: c.firstSeq, lastSeq: c.lastSeq });
    }
  };
  const r = journaledRun(dir, seed, count, {
    onEvent: (m, o) => {
      b.append(m, o);
      if (++n % cutEvery === 0) take();
    },
  });
  take();
  r.writer.close();
  assert.equal(b.bytes, 0, 'every command was cut');
  return { dir, bodies, cuts };
}

test('a batch carries the records framed exactly as the journal segment holds them, whole commands only', () => {
  for (const cutEvery of [1, 7, 1000]) {
    const { dir, bodies, cuts } = run(11, 400, cutEvery);
    try {
      const seg = segmentFiles(dir);
      assert.equal(seg.length, 1);
      const journal = readFileSync(seg[0]!).subarray(FILE_HEADER_BYTES);
      assert.deepEqual(Buffer.concat(bodies), journal);
      let next = 1;
      for (let i = 0; i < bodies.length; i++) {
        const c = cuts[i]!;
        assert.equal(c.firstSeq, next, 'batches continue each other');
        const s = scanBatch(i + 1, bodies[i]!, c.firstSeq, c.lastSeq);
        assert.equal(Header.type(s.mem, s.offsets[s.offsets.length - 1]!), T_COMMAND_COMPLETED, 'a batch ends with a completion');
        next = c.lastSeq + 1;
      }
    } finally {
      removeDataDir(dir);
    }
  }
});

test('scanBatch refuses a damaged, short, misnumbered or unfinished batch', () => {
  const { dir, bodies, cuts } = run(12, 200, 50);
  removeDataDir(dir);
  const i = bodies.findIndex((x, k) => x.length > 200 && cuts[k]!.lastSeq > cuts[k]!.firstSeq);
  const body = bodies[i]!;
  const c = cuts[i]!;
  const bad = (b: Uint8Array, first: number, last: number, re: RegExp): void => {
    assert.throws(() => scanBatch(9, b, first, last), (e: unknown) => e instanceof BatchFault && re.test(e.message));
  };
  const flipped = Uint8Array.from(body);
  flipped[20] ^= 1;
  bad(flipped, c.firstSeq, c.lastSeq, /checksum/);
  bad(body.subarray(0, body.length - 8), c.firstSeq, c.lastSeq, /runs past the end|less than a frame/);
  bad(body, c.firstSeq + 1, c.lastSeq, /gap or a reordering/);
  bad(body, c.firstSeq, c.lastSeq + 1, /header says/);
  // Cut just after the first frame of a multi-record command: no completion at the end.
  const first = new DataView(body.buffer, body.byteOffset).getUint32(0, true) + 8;
  const oneRecord = aligned(body.subarray(0, first));
  const m = scanBatch(1, body, c.firstSeq, c.lastSeq);
  if (Header.type(m.mem, m.offsets[0]!) !== T_COMMAND_COMPLETED) bad(oneRecord, c.firstSeq, c.firstSeq, /no completion record/);
});

test('a builder keeps an open command for the next cut', () => {
  const { dir } = run(13, 50, 1000);
  try {
    const seg = readFileSync(segmentFiles(dir)[0]!);
    const all = aligned(seg.subarray(FILE_HEADER_BYTES));
    const whole = scanBatch(1, all, 1, planRecovery(dir, { repair: false }).lastSeq);
    const b = new BatchBuilder(64);
    // Append every record of commands 1..9 and the first record of command 10.
    let k = 0;
    for (; k < whole.offsets.length && Header.seq(whole.mem, whole.offsets[k]!) < 10; k++) b.append(whole.mem, whole.offsets[k]!);
    b.append(whole.mem, whole.offsets[k]!);
    const open = Header.type(whole.mem, whole.offsets[k]!) !== T_COMMAND_COMPLETED;
    const c = b.cut()!;
    assert.equal(c.firstSeq, 1);
    assert.equal(c.lastSeq, open ? 9 : 10);
    assert.equal(b.bytes > 0, open);
    assert.equal(b.cut(), null, 'nothing whole left to cut');
  } finally {
    removeDataDir(dir);
  }
});

const S = subjectsOf('DX');
const hdr = (h: Record<string, string>): { get(k: string): string } => ({ get: (k) => h[k] ?? '' });

function entry(kind: 'batch' | 'claim', epoch: number, first: number, last: number, streamSeq = 5): LogEntry {
  return kind === 'batch'
    ? entryOf(S, S.log, streamSeq, hdr({ 'Dx-Epoch': String(epoch), 'Dx-First-Seq': String(first), 'Dx-Last-Seq': String(last) }))
    : entryOf(
        S,
        S.claim(epoch),
        streamSeq,
        hdr({ 'Dx-Epoch': String(epoch), 'Dx-Last-Seq': String(last), 'Dx-Node': 'b', 'Dx-Url': 'http://b' }),
      );
}

test('log entries: subjects, headers and the follower\'s step', () => {
  assert.throws(() => subjectsOf('a.b'), /stream name/);
  assert.equal(S.claim(3), 'dx.DX.claim.3');
  assert.equal(msgIdOf(4, 1234), '4-1234');
  assert.deepEqual(entry('claim', 2, 0, 10), {
    kind: 'claim',
    streamSeq: 5,
    epoch: 2,
    firstSeq: 11,
    lastSeq: 10,
    node: 'b',
    url: 'http://b',
    layout: 0,
  });
  assert.equal(entryOf(S, S.log, 1, hdr({ 'Dx-Epoch': '1', 'Dx-First-Seq': '1', 'Dx-Last-Seq': '1', 'Dx-Layout': '7' })).layout, 7);
  assert.equal(entryOf(S, S.log, 1, hdr({ 'Dx-Epoch': '1', 'Dx-First-Seq': '1', 'Dx-Last-Seq': '1' })).layout, 0, 'no layout header');
  assert.throws(() => entryOf(S, 'dx.DX.other', 1, hdr({ 'Dx-Epoch': '1', 'Dx-Last-Seq': '1' })), /neither/);
  assert.throws(() => entryOf(S, S.claim(2), 1, hdr({ 'Dx-Epoch': '3', 'Dx-Last-Seq': '1' })), /neither/);
  assert.throws(() => entryOf(S, S.log, 1, hdr({ 'Dx-Epoch': '1', 'Dx-First-Seq': '5', 'Dx-Last-Seq': '4' })), /seqs 5\.\.4/);
  assert.throws(() => entryOf(S, S.log, 1, hdr({ 'Dx-Epoch': 'x', 'Dx-First-Seq': '5', 'Dx-Last-Seq': '4' })), /Dx-Epoch/);

  assert.deepEqual(followStep(10, 1, entry('batch', 1, 11, 20)), { action: 'apply' });
  assert.deepEqual(followStep(15, 1, entry('batch', 1, 11, 20)), { action: 'apply' }, 'overlaps a recovered journal');
  assert.deepEqual(followStep(20, 1, entry('batch', 1, 11, 20)), { action: 'skip' });
  assert.deepEqual(followStep(10, 0, entry('batch', 3, 11, 20)), { action: 'apply' }, 'the first entry sets the epoch');
  assert.match((followStep(10, 1, entry('batch', 1, 12, 20)) as { fault: string }).fault, /gap/);
  assert.match((followStep(10, 2, entry('batch', 1, 11, 20)) as { fault: string }).fault, /epoch 1 in epoch 2/);
  assert.deepEqual(followStep(10, 1, entry('claim', 2, 0, 10)), { action: 'claim' });
  assert.match((followStep(10, 2, entry('claim', 2, 0, 10)) as { fault: string }).fault, /after epoch 2/);
  assert.match((followStep(9, 1, entry('claim', 2, 0, 10)) as { fault: string }).fault, /applied up to seq 9/);
});

test('fencing: publish verdicts, the failure detector and the tail a former primary keeps', () => {
  assert.equal(publishVerdict({ name: 'JetStreamApiError', code: 10071, message: 'wrong last sequence: 7' }), 'wrong_last');
  assert.equal(publishVerdict({ name: 'TimeoutError', message: 'timeout' }), 'retry');
  assert.equal(publishVerdict({ name: 'JetStreamNotEnabled', message: 'jetstream is not enabled' }), 'retry');
  assert.equal(publishVerdict({ name: 'ClosedConnectionError', message: 'closed connection' }), 'retry');
  assert.equal(publishVerdict({ name: 'JetStreamApiError', code: 10077, message: 'maximum messages exceeded' }), 'fatal');

  assert.equal(shouldClaim(10_000, 9_000, 0, 1500), false);
  assert.equal(shouldClaim(10_600, 9_000, 0, 1500), true);
  assert.equal(shouldClaim(10_600, 0, 10_000, 1500), false, 'a node that just started following waits a whole lease');
  assert.equal(shouldClaim(11_600, 0, 10_000, 1500), true);

  // A follower whose consumer delivers nothing while the primary's heartbeats show a longer stream follows again.
  assert.equal(followStalled(10_000, 9_000, 40, 45, 1500), false, 'less than a lease without progress');
  assert.equal(followStalled(10_600, 9_000, 40, 45, 1500), true);
  assert.equal(followStalled(10_600, 9_000, 45, 45, 1500), false, 'caught up with the primary: an idle log is no stall');
  assert.equal(followStalled(10_600, 9_000, 45, 0, 1500), false, 'no primary heard');

  assert.equal(keepUpTo(120, null, null, 200), 120, 'a node that only followed keeps its journal');
  assert.equal(keepUpTo(120, 3, 100, 200), 100, 'a former primary keeps what its epoch got into the log');
  assert.equal(keepUpTo(90, 3, 100, 200), 90);
  assert.equal(keepUpTo(120, 3, null, 110), 110, 'no later claim: what the log holds');

  assert.equal(parseHeartbeat('not json'), null);
  assert.equal(parseHeartbeat('{"node":"a","role":"boss","epoch":1,"seq":1,"durable_seq":1,"stream_seq":1,"ts_ms":1}'), null);
  assert.deepEqual(
    parseHeartbeat('{"node":"a","role":"primary","epoch":2,"seq":5,"durable_seq":4,"stream_seq":9,"ts_ms":1,"url":"http://a"}'),
    { node: 'a', role: 'primary', epoch: 2, seq: 5, durable_seq: 4, stream_seq: 9, url: 'http://a', ts_ms: 1 },
  );
});

test('durable_seq: fsynced alone, min(fsynced, replicated), or replicated alone', () => {
  const local = new DurableSeq(DurableSeq.allocate());
  local.set(10);
  local.setReplicated(3);
  assert.equal(local.get(), 10);
  const both = new DurableSeq(DurableSeq.allocate('replicated'));
  both.set(10);
  assert.equal(both.get(), 0, 'nothing is shown before the quorum has it');
  both.setReplicated(7);
  assert.equal(both.get(), 7);
  both.setReplicated(12);
  assert.equal(both.get(), 10, 'nor before the local disk has it');
  both.set(9);
  assert.equal(both.fsynced, 10, 'never moves back');
  const stream = new DurableSeq(DurableSeq.allocate('stream'));
  stream.setReplicated(5);
  assert.equal(stream.get(), 5);
  assert.equal(new DurableSeq(both.sab).modeName, 'replicated', 'another thread sees the same mode');
});

test('the status block: role, writable, primary address, histograms', () => {
  const s = new ReplicationStatus(ReplicationStatus.allocate('standby'));
  assert.equal(s.writable, false);
  s.setPrimaryUrl('http://10.0.0.1:8080');
  const other = new ReplicationStatus(s.sab);
  assert.equal(other.primaryUrl, 'http://10.0.0.1:8080');
  s.setRole('primary');
  assert.equal(other.writable, true);
  s.setRole('fenced');
  assert.equal(other.writable, false);
  s.observeAck(0.0012);
  s.observeAck(7);
  const h = other.histogram('ack');
  assert.equal(h.count, 2);
  assert.equal(h.buckets.reduce((a, b) => a + b, 0), 2);
  assert.equal(h.buckets[h.buckets.length - 1], 1, '7 s is past the last bound');
});

test('min_seq is taken out of a read\'s query', () => {
  assert.deepEqual(takeMinSeq('limit=5'), { min_seq: 0, rest: 'limit=5' });
  assert.deepEqual(takeMinSeq('limit=5&min_seq=42&cursor=x'), { min_seq: 42, rest: 'limit=5&cursor=x' });
  assert.deepEqual(takeMinSeq('min_seq=7'), { min_seq: 7, rest: '' });
  // Any u64, as the document says: above 2^53 no seq is ever applied, so the read waits and answers 503 replica_lagging.
  assert.equal(takeMinSeq('min_seq=99999999999999999').min_seq, Number.MAX_SAFE_INTEGER);
  assert.equal(takeMinSeq('min_seq=18446744073709551615').min_seq, Number.MAX_SAFE_INTEGER);
  for (const q of ['min_seq=', 'min_seq=-1', 'min_seq=1e3', 'min_seq=123456789012345678901', 'min_seq=1&min_seq=2']) {
    assert.throws(() => takeMinSeq(q), (e: unknown) => e instanceof ApiError && e.code === 'invalid_field', q);
  }
});

test('replication options: off by default, checked when on', () => {
  assert.equal(loadConfig([], {}).replicate, 'off');
  const c = loadConfig(
    ['--replicate', 'on', '--nats-urls', 'nats://a:4222,nats://b:4222', '--lease-ms', '2000', '--heartbeat-ms', '250'],
    {},
  );
  assert.equal(c.replicate, 'on');
  assert.equal(c.lease_ms, 2000);
  assert.equal(loadConfig([], { DX_REPLICATE: 'replica', DX_NATS_STREAM: 'EX_1' }).nats_stream, 'EX_1');
  assert.throws(() => loadConfig(['--replicate', 'yes'], {}), /off, on or replica/);
  assert.throws(() => loadConfig(['--replicate', 'on', '--lease-ms', '100', '--heartbeat-ms', '100'], {}), /twice heartbeat/);
  assert.throws(() => loadConfig(['--replicate', 'on', '--nats-stream', 'a.b'], {}), /nats-stream/);
});

test('cutting a journal after a seq leaves what recovery replays to that seq\'s state', () => {
  const dir = tempDataDir('repl-cut');
  try {
    const hashAt = journaledRunHashAt(dir, 14, 300, 180);
    assert.ok(segmentFiles(dir).length > 3);
    const cut = truncateJournalAfter(dir, 180);
    assert.ok(cut.segments_removed.length > 0 && cut.truncated !== null, JSON.stringify(cut));
    assertRecoversTo(dir, 180, hashAt, false);

    assert.deepEqual(readNodeState(dir), { primary_epoch: null });
    writeNodeState(dir, { primary_epoch: 4 });
    assert.deepEqual(readNodeState(dir), { primary_epoch: 4 });
  } finally {
    removeDataDir(dir);
  }
});

test('replication start-up: the stream is asked for again while the cluster cannot answer; other failures at once', async () => {
  const timeout = Object.assign(new Error('timeout'), { name: 'TimeoutError' });
  let clock = 0;
  const sleeps: number[] = [];
  const sleep = async (ms: number): Promise<void> => {
    sleeps.push(ms);
    clock += ms;
  };
  const retries: number[] = [];
  // Two timeouts, then an answer.
  let calls = 0;
  const v = await untilAnswered(async () => {
    if (++calls <= 2) throw timeout;
    return 'ok';
  }, 60_000, (_e, n) => retries.push(n), sleep, () => clock);
  assert.equal(v, 'ok');
  assert.deepEqual(retries, [1, 2]);
  assert.deepEqual(sleeps, [250, 500]);
  // A refusal that is not a missing answer is thrown at once.
  const refused = Object.assign(new Error('stream name already in use with a different configuration'), { code: 10058 });
  calls = 0;
  await assert.rejects(untilAnswered(async () => {
    calls++;
    throw refused;
  }, 60_000, () => undefined, sleep, () => clock), refused);
  assert.equal(calls, 1);
  // Timeouts past the bound: the last one is thrown, after pauses capped at 2 s.
  sleeps.length = 0;
  const start = clock;
  await assert.rejects(untilAnswered(async () => {
    throw timeout;
  }, 10_000, () => undefined, sleep, () => clock), timeout);
  assert.ok(clock - start <= 10_000, `waited ${clock - start} ms`);
  assert.deepEqual(sleeps, [250, 500, 1000, 2000, 2000, 2000, 2000]);
});
