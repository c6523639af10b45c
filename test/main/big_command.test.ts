// One command whose events outgrow the event ring (a CancelAll of more
// resting orders than the ring holds OrderCanceled records), with the real
// engine thread, the real journal thread and two durable-gated gateway
// cores, one busy and one idle: the engine publishes the command in parts
// and waits for room, the journal cannot make any of it durable before its
// last record, so each core takes (spills) what fills the ring instead of
// waiting for durable_seq. The command is answered, a later one too, and the
// idle core catches up. A 64 KiB ring stands for the 16 MiB one (about
// 300,000 orders there). Test process; engine and journal worker threads.

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { GatewayCore, type Completion } from '../../src/gateway/core.js';
import { DurableSeq } from '../../src/journal/durable.js';
import { JournalControl } from '../../src/journal/journal_control.js';
import { Outcome, Side, Stp, Tif } from '../../src/layout/records.js';
import { encodeRecord, recordInfo, type RecordObject } from '../../src/layout_codec/record_codec.js';
import type { Mem } from '../../src/lib/mem.js';
import type { JournalThreadData } from '../../src/main/journal_thread.js';
import { Pipeline } from '../../src/main/pipeline.js';
import { SeqStamps } from '../../src/ring/seq_stamps.js';
import { Views } from '../../src/views/views.js';
import { eventually } from '../support/harness.js';

const RING = 1 << 16;
/** More OrderCanceled records (56 bytes) than the ring holds. */
const ORDERS = Math.ceil(RING / 56) + 2000;
const T0 = BigInt(Date.now()) * 1_000_000n;
const VIEWS = { max_orders: 1 << 22, order_capacity: 1 << 20 };

type Send = (account: number, cmd: RecordObject) => Promise<Completion | null>;

/** The engine and journal threads on a RING-byte event ring, a busy core that sends, and an idle one. */
async function start(): Promise<{ dir: string; pipeline: Pipeline; journal: Worker; core: GatewayCore; idle: GatewayCore; send: Send }> {
  const dir = mkdtempSync(join(tmpdir(), 'rev-rings-dl-'));
  const pipeline = Pipeline.start({
    producers: 1, command_ring_bytes: 1 << 20, event_ring_bytes: RING, event_consumers_max: 3, verify: false,
  });
  await pipeline.ready();
  const durableSab = DurableSeq.allocate('local');
  const durable = new DurableSeq(durableSab);
  const jd: JournalThreadData = {
    eventRing: pipeline.eventRing, consumerIndex: 1, durable: durableSab, control: JournalControl.allocate(),
    durableStamps: SeqStamps.allocate(), dataDir: dir, fsync: false, nextSeq: 1, wait: 'park',
  };
  const journal = new Worker(new URL('../../src/main/journal_thread.js', import.meta.url), { workerData: jd });
  await new Promise<void>((res) => journal.on('message', (m: { type: string }) => { if (m.type === 'ready') res(); }));
  const core = new GatewayCore({
    producerId: 2, producer: pipeline.producer(0), eventRing: pipeline.eventRing, consumerIndex: 0,
    views: new Views(VIEWS), response_budget_ms: 5_000, shed_pending: 1 << 16, durable, wait: 'park',
  });
  // A second gateway thread's core that holds nothing (idle: parked on the durable bell).
  const idle = new GatewayCore({
    producerId: 3, producer: pipeline.producer(0), eventRing: pipeline.eventRing, consumerIndex: 2,
    views: new Views(VIEWS), response_budget_ms: 5_000, shed_pending: 1 << 16, durable, wait: 'park',
  });
  const send = (account: number, cmd: RecordObject): Promise<Completion | null> => {
    const size = recordInfo(cmd.type).size;
    const p = core.submit(recordInfo(cmd.type).type, size, account, false, (m: Mem, o: number) => {
      const h = m.u32.slice(o >>> 2, (o >>> 2) + 8);
      encodeRecord(m, o, cmd);
      m.u32.set(h, o >>> 2);
    });
    core.kick(); // as http.ts does after a handler
    return p;
  };
  return { dir, pipeline, journal, core, idle, send };
}

/** A funded account 1 with ORDERS resting buys in market 1. */
async function restingOrders(send: Send): Promise<void> {
  const must = async (p: Promise<Completion | null>, what: string): Promise<Completion> => {
    const c = await p;
    if (c === null || c.status !== 0) throw new Error(`${what}: ${JSON.stringify(c)}`);
    return c;
  };
  await must(send(0, { type: 'CreateMarket', category: 1, position_limit: 0, fee_schedule_id: 0, title: 'dl' }), 'market');
  await must(send(0, { type: 'OpenRound', market_id: 1, strike: 1, close_ts: T0 + 10n ** 15n }), 'round');
  await must(send(0, { type: 'CreateAccount' }), 'account');
  await must(send(1, { type: 'Deposit', amount: 1e12 } as RecordObject), 'deposit');
  for (let done = 0; done < ORDERS; ) {
    const n = Math.min(20_000, ORDERS - done);
    const ps: Promise<Completion>[] = [];
    for (let i = 0; i < n; i++) {
      ps.push(must(send(1, {
        type: 'PlaceOrder', market_id: 1, side: Side.buy, outcome: Outcome.yes, tick: 1 + ((done + i) % 40), qty: 1, tif: Tif.gtc,
        stp: Stp.cancel_maker,
      }), 'place'));
    }
    await Promise.all(ps);
    done += n;
  }
}

test('a command whose events outgrow the event ring is answered, and the exchange goes on', { timeout: 60_000 }, async () => {
  const { dir, pipeline, journal, core, idle, send } = await start();
  await restingOrders(send);
  const started = Date.now();
  try {
    const r = await send(1, { type: 'CancelAll', market_id: 0, group_id: 0 });
    assert.ok(r !== null, `cancel_all got no answer in ${Date.now() - started} ms (504): the engine waits for room in the ring`);
    assert.equal(r.status, 0);
    const later = await send(0, { type: 'CreateAccount' });
    assert.ok(later !== null && later.status === 0, 'a later command is answered');
    const caughtUp = await eventually(() => idle.views.asOfSeq === later.seq, 5000);
    assert.ok(caughtUp, `the idle core, woken by the journal, is at ${idle.views.asOfSeq}`);
  } finally {
    core.close();
    idle.close();
    await journal.terminate();
    // A hung engine spins in RingEventOut.claim and never sees the stop word: end its thread.
    await (pipeline as unknown as { worker: Worker }).worker.terminate();
    rmSync(dir, { recursive: true, force: true });
  }
});
