// The engine thread end to end over real rings: two producers write commands
// concurrently, one consumer reads the event ring. Every command gets exactly
// one completion, addressed to its producer and correlation; seqs are
// contiguous; folding the events into a fresh state with evolve gives a state
// that passes the invariant checker and equals the engine's own summary.

import assert from 'node:assert/strict';
import { mulberry32 as prng } from '../../src/lib/rng.js';
import { test } from 'node:test';
import { evolve } from '../../src/engine/evolve.js';
import { ExchangeState } from '../../src/engine/state.js';
import { verify } from '../../src/engine/verify.js';
import { summarize } from '../../src/engine/summary.js';
import {
  Header,
  LAYOUT_FINGERPRINT,
  Outcome,
  Side,
  T_COMMAND_COMPLETED,
  T_ACCOUNT_CREATED,
  T_ROUND_TRANSITIONED,
  Tif,
  Stp,
  CommandCompleted,
} from '../../src/layout/records.js';
import { hiLoToBigInt } from '../../src/lib/u64.js';
import { encodeRecord, recordInfo, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { BroadcastConsumer } from '../../src/ring/broadcast_ring.js';
import { Pipeline } from '../../src/main/pipeline.js';
import type { CommandProducer } from '../../src/ring/command_producer.js';

const T0 = 1_750_000_000_000_000_000n;

function send(p: CommandProducer, cmd: RecordObject): boolean {
  const size = recordInfo(cmd.type).size;
  const o = p.tryClaim(size);
  if (o < 0) return false;
  encodeRecord(p.mem, o, cmd);
  p.mem.u32[o >>> 2] = size;
  return true;
}

test('engine thread: concurrent producers, one completion per command, contiguous seqs, replayable events', async () => {
  const pipeline = Pipeline.start({ producers: 2, command_ring_bytes: 1 << 16, event_ring_bytes: 1 << 20, verify: false });
  await pipeline.ready();
  const consumer = new BroadcastConsumer(pipeline.eventRing, LAYOUT_FINGERPRINT, 0);
  consumer.open();
  const producers = [pipeline.producer(0), pipeline.producer(1)];
  const replica = new ExchangeState();
  const pending = [new Set<number>(), new Set<number>()];
  let lastSeq = 0;
  let completions = 0;

  const drain = (): void => {
    for (let o = consumer.peek(); o >= 0; o = consumer.peek()) {
      const m = consumer.mem;
      const seq = Header.seq(m, o);
      assert.ok(seq === lastSeq || seq === lastSeq + 1, `seq ${seq} after ${lastSeq}`);
      lastSeq = seq;
      evolve(replica, m, o);
      if (Header.type(m, o) === T_COMMAND_COMPLETED) {
        const producer = Header.producer(m, o) - 100;
        const corr = Header.correlation(m, o);
        assert.ok(pending[producer]!.delete(corr), `one completion for producer ${producer} correlation ${corr}`);
        completions++;
        assert.ok(CommandCompleted.command_type(m, o) > 0);
      }
      consumer.advance();
    }
  };

  const corr = [0, 0];
  const submit = async (pi: number, cmd: RecordObject): Promise<void> => {
    const c = ++corr[pi]!;
    const full = { producer: 100 + pi, correlation: c, ts: T0 + BigInt(c), ...cmd };
    while (!send(producers[pi]!, full)) {
      producers[pi]!.publish();
      drain();
      await new Promise((r) => setImmediate(r));
    }
    pending[pi]!.add(c);
  };

  // Setup through producer 0: one market with a round, four funded accounts.
  await submit(0, { type: 'CreateMarket', category: 1, position_limit: 0, fee_schedule_id: 0, title: 'thread test' });
  await submit(0, { type: 'OpenRound', market_id: 1, strike: 1, close_ts: T0 + 10n ** 15n });
  for (let a = 1; a <= 4; a++) {
    await submit(0, { type: 'CreateAccount' });
    await submit(0, { type: 'Deposit', account: a, amount: 10_000_000 });
  }
  producers[0]!.publish();

  // Both producers trade concurrently.
  const rand = prng(7);
  const N = 20_000;
  for (let i = 0; i < N; i++) {
    const pi = i & 1;
    const r = rand();
    const cmd: RecordObject =
      r < 0.8
        ? {
            type: 'PlaceOrder',
            account: 1 + Math.floor(rand() * 4),
            market_id: 1,
            side: Side.buy,
            outcome: rand() < 0.5 ? Outcome.yes : Outcome.no,
            tick: 40 + Math.floor(rand() * 21),
            qty: 1 + Math.floor(rand() * 5),
            tif: Tif.gtc,
            stp: Stp.cancel_maker,
          }
        : { type: 'CancelAll', account: 1 + Math.floor(rand() * 4), market_id: 1 };
    await submit(pi, cmd);
    if ((i & 63) === 0) {
      producers[0]!.publish();
      producers[1]!.publish();
      drain();
    }
  }
  producers[0]!.publish();
  producers[1]!.publish();
  const total = corr[0]! + corr[1]!;
  const deadline = Date.now() + 20_000;
  while (completions < total && Date.now() < deadline) {
    drain();
    await new Promise((r) => setImmediate(r));
  }
  assert.equal(completions, total, 'every command completed');
  assert.equal(lastSeq, total, 'seq counts every command');
  assert.equal(pipeline.control.seq, total, 'the engine reported its seq');
  assert.deepEqual(verify(replica), []);
  assert.ok(replica.markets.volume[1]! > 0, 'the flow traded');
  await pipeline.stop();
  consumer.close();
  assert.equal(summarize(replica).seq, total);
});

test(
  "engine thread: a failure (a malformed command record trips the ring's assertion) is reported once through onFailure; " +
    'a requested stop is not',
  async () => {
    const failing = Pipeline.start({ producers: 1, command_ring_bytes: 1 << 16, event_ring_bytes: 1 << 20, verify: false });
    await failing.ready();
    const reports: string[] = [];
    const reported = new Promise<void>((res) =>
      failing.onFailure((e) => {
        reports.push(e);
        res();
      }),
    );
    const p = failing.producer(0);
    const o = p.tryClaim(16);
    assert.ok(o >= 0);
    p.mem.u32[o >>> 2] = 12; // not a multiple of 8: no producer writes this
    p.publish();
    await Promise.race([reported, new Promise((_, rej) => setTimeout(() => rej(new Error('no failure reported in 10 s')), 10_000))]);
    assert.equal(reports.length, 1);
    assert.match(reports[0]!, /spsc_ring: corrupt record at position 0: length 12/);

    const healthy = Pipeline.start({ producers: 1, command_ring_bytes: 1 << 16, event_ring_bytes: 1 << 20, verify: false });
    await healthy.ready();
    let called = false;
    healthy.onFailure(() => {
      called = true;
    });
    assert.equal(await healthy.stop(), 0);
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(called, false, 'a requested stop is not a failure');
  },
);

test(
  'engine thread: a timer due when a command stamped ahead of the clock by a fraction of a ms arrives fires at that command\'s ts, ' +
    'before it, and the engine thread goes on (a fractional ms once ended it)',
  async () => {
    const pipeline = Pipeline.start({ producers: 1, command_ring_bytes: 1 << 16, event_ring_bytes: 1 << 20, verify: false, clock: true });
    await pipeline.ready();
    const failures: string[] = [];
    pipeline.onFailure((e) => failures.push(e));
    const consumer = new BroadcastConsumer(pipeline.eventRing, LAYOUT_FINGERPRINT, 0);
    consumer.open();
    pipeline.startClock();
    const p = pipeline.producer(0);
    const nowNs = BigInt(Date.now()) * 1_000_000n;
    let c = 0;
    const submit = (cmd: RecordObject, ts: bigint): void => {
      assert.ok(send(p, { producer: 100, correlation: ++c, ts, ...cmd }));
      p.publish();
    };
    // A round that closes in 300 ms, then a command stamped 2.0005 s ahead: the
    // engine's time moves past the close with a fractional ms.
    submit({ type: 'CreateMarket', category: 1, position_limit: 0, fee_schedule_id: 0, title: 'clock' }, nowNs);
    submit({ type: 'OpenRound', market_id: 1, strike: 1, close_ts: nowNs + 300_000_000n }, nowNs);
    submit({ type: 'CreateAccount' }, nowNs + 2_000_500_000n);
    const types: number[] = [];
    let closedTs = 0n;
    const deadline = Date.now() + 10_000;
    while (closedTs === 0n && failures.length === 0 && Date.now() < deadline) {
      for (let o = consumer.peek(); o >= 0; o = consumer.peek()) {
        types.push(Header.type(consumer.mem, o));
        if (Header.type(consumer.mem, o) === T_ROUND_TRANSITIONED)
          closedTs = hiLoToBigInt(Header.ts_hi(consumer.mem, o), Header.ts_lo(consumer.mem, o));
        consumer.advance();
      }
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.deepEqual(failures, []);
    assert.ok(closedTs > 0n, `the round's close fired (events: ${types.join(',')})`);
    // The command stamped ahead found the close due: the clock's tick runs first, at its ts, and the command after it.
    assert.equal(closedTs, nowNs + 2_000_500_000n, 'at the command stamped ahead: ts never goes back');
    assert.ok(types.indexOf(T_ROUND_TRANSITIONED) < types.indexOf(T_ACCOUNT_CREATED), 'the close before the command that found it due');
    assert.equal(await pipeline.stop(), 0);
    consumer.close();
  },
);
