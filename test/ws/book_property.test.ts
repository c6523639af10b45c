// Property: under random trading (places of every kind, crosses, cancels,
// decreases, mass cancels; several traders at once), a client that rebuilds
// the book from orderbook_snapshot + orderbook_delta holds, at every
// checkpoint, exactly the REST orderbook read at the same as_of_seq. The
// checkpoints are REST reads taken while the trading runs; a subscriber
// joining half-way must hold the same books from its own snapshot on.
// Seeded: a failure prints seed=<n>; WS_PROPERTY_SEEDS=1,2,3 reruns seeds.

import assert from 'node:assert/strict';
import { mulberry32 as prng } from '../../src/lib/rng.js';
import { after, before, it } from 'node:test';
import type { DxClient } from '../../src/client/index.js';
import type { OrderRequest } from '../../src/client/types.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket } from '../support/harness.js';
import { BookRebuilder } from './book_rebuilder.js';
import { WsClient } from './ws_client.js';

const SEEDS = (process.env.WS_PROPERTY_SEEDS ?? '11,22,33').split(',').map(Number);
const WAVES = 40;
const WAVE_OPS = 5;

let tx: TestExchange;
const open: WsClient[] = [];

before(async () => {
  tx = await startTestExchange({ demo: false });
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});


interface Live {
  client: DxClient;
  order_id: string;
  qty: number;
}

async function subscribeBook(c: WsClient, market: number): Promise<number> {
  const oracle = await c.call('subscribe', { channels: ['oracle'] });
  assert.equal(oracle.type, 'subscribed');
  const r = await c.call('subscribe', { channels: ['orderbook_delta'], market_ids: [market] });
  assert.equal(r.type, 'subscribed');
  return r.msg.sid;
}

for (const seed of SEEDS) {
  it(`ws: snapshot + deltas equal the REST book at every checkpoint under random trading (seed=${seed})`, async () => {
    const rnd = prng(seed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
    const m = await newMarket(tx);
    const traders = await Promise.all([0, 1, 2, 3].map(() => newAccount(tx, { deposit: '10000000000' })));
    const clients = traders.map((t) => t.client);
    const first = await WsClient.connect(tx, traders[0]!);
    open.push(first);
    const subs: { c: WsClient; sid: number }[] = [{ c: first, sid: await subscribeBook(first, m) }];
    const live: Live[] = [];
    let checkpoints = 0;

    const randomOrder = (): OrderRequest => {
      const r = rnd();
      const o: OrderRequest = {
        market_id: m, side: rnd() < 0.25 ? 'sell' : 'buy', outcome: rnd() < 0.5 ? 'yes' : 'no',
        tick: 35 + Math.floor(rnd() * 30), qty: 1 + Math.floor(rnd() * 9), group_id: 1 + Math.floor(rnd() * 2),
      };
      if (r < 0.1) o.tif = 'ioc';
      else if (r < 0.15) o.tif = 'fok';
      else if (r < 0.25) o.post_only = true;
      return o;
    };

    const op = async (): Promise<void> => {
      const client = pick(clients);
      const r = rnd();
      try {
        if (r < 0.6 || live.length === 0) {
          const p = await client.placeOrder(randomOrder());
          if (p.resting_qty > 0) live.push({ client, order_id: p.order_id, qty: p.resting_qty });
        } else if (r < 0.78) {
          const x = live.splice(Math.floor(rnd() * live.length), 1)[0]!;
          await x.client.cancelBatch([x.order_id]);
        } else if (r < 0.93) {
          const x = pick(live);
          await x.client.decrease(x.order_id, Math.floor(rnd() * x.qty));
        } else {
          await client.cancelAll({ market_id: m, group_id: rnd() < 0.5 ? 1 : 0 });
        }
      } catch (e) {
        // Rejects (insufficient position for a sell, an order filled or canceled meanwhile) change no book.
        if (!(e instanceof Error) || !('status' in e)) throw e;
      }
    };

    const checkpoint = async (read: { as_of_seq: string; yes: [number, number][]; no: [number, number][] }): Promise<void> => {
      checkpoints++;
      const seq = Number(read.as_of_seq);
      for (const { c, sid } of subs) {
        // Everything published before this oracle tick has reached c once c sees it.
        const tick = await tx.admin.oracleTick({ source_id: 3, price: String(100_000_000 + checkpoints) });
        await c.next((x) => x.type === 'oracle' && x.msg.seq === tick.seq, 3000, `barrier seed=${seed}`);
        const rb = new BookRebuilder(sid, m);
        try {
          for (const x of c.data(sid)) rb.apply(x);
        } catch (e) {
          throw new Error(`seed=${seed}: stream check failed: ${(e as Error).message}`);
        }
        const at = rb.at(seq);
        if (at === null) continue; // a subscriber whose snapshot is newer than this read
        assert.deepEqual(at, { yes: read.yes, no: read.no }, `seed=${seed}: rebuilt book differs from REST at as_of_seq ${seq}`);
      }
    };

    for (let w = 0; w < WAVES; w++) {
      if (w === WAVES / 2) {
        const late = await WsClient.connect(tx, traders[1]!);
        open.push(late);
        subs.push({ c: late, sid: await subscribeBook(late, m) });
      }
      // A REST read taken while the wave's commands are being sequenced.
      const reads: Promise<{ as_of_seq: string; yes: [number, number][]; no: [number, number][] }>[] = [];
      const ops: Promise<void>[] = [];
      for (let i = 0; i < WAVE_OPS; i++) {
        ops.push(op());
        if (i === 2) reads.push(pick(clients).orderbook(m, 99));
      }
      await Promise.all(ops);
      for (const read of await Promise.all(reads)) await checkpoint(read);
    }
    await checkpoint(await clients[0]!.orderbook(m, 99));
    assert.ok(checkpoints >= WAVES, `seed=${seed}: ${checkpoints} checkpoints`);
    const deltas = first.data(subs[0]!.sid).length;
    assert.ok(deltas > WAVES, `seed=${seed}: only ${deltas} book messages; the workload did not move the book`);
  });
}
