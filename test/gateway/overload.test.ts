// REST lane, black box under provoked overload: the engine is paused from the
// test process (pipeline.control.setPaused, a test-only switch; commands stay
// in the rings) so that held requests time out (504 sequencing_timeout after
// response_budget_ms) or pile up past the gateway's in-flight limit (503
// shed for placements, batch places and cancel-all; never for cancels by id
// and decreases), and a deposit retried by its ref after a 504. Also:
// clients that disconnect mid-flight. One exchange, one
// gateway thread, the default 1000 ms response budget.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import {
  assertErrorReply, eventually, newAccount, newKey, newMarket, order, raw, rejects, signHeaders, signedRaw, sleep, type Key, type RawReply,
} from '../support/harness.js';

const BUDGET_MS = 1000;
/** The per-gateway held-request limit above which sheddable commands are refused (src/main/exchange.ts). */
const SHED_PENDING = 4096;

let tx: TestExchange;
let k: Key;
let market: number;

before(async () => {
  tx = await startTestExchange({ response_budget_ms: BUDGET_MS });
  k = await newAccount(tx);
  market = await newMarket(tx);
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await tx.stop();
});

function pause(): void {
  tx.ex.pipeline.control.setPaused(true);
}

function resume(): void {
  tx.ex.pipeline.control.setPaused(false);
}

/** Requests the gateways hold for a sequenced outcome now (GET /metrics dx_held_requests, sampled by the gateways). */
async function heldRequests(): Promise<number> {
  const r = await raw(tx.ex.admin_port, { method: 'GET', target: '/metrics', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  const m = /^dx_held_requests (\d+)/m.exec(r.text);
  assert.ok(m, `dx_held_requests in ${r.status} ${r.text.slice(0, 200)}`);
  return Number(m[1]);
}

test('overload: a deposit answered 504 and retried with its ref credits once, and the retry answers the seq of the deposit that ' +
  'landed', async () => {
  const a = await newAccount(tx, { deposit: '0' });
  pause();
  await rejects(tx.admin.deposit(a.accountId, { amount: '1000', ref: 'wire-42' }), 504, 'sequencing_timeout');
  resume();
  const landed = await eventually(async () => (await a.client.balance()).available === '1000', 2000);
  assert.ok(landed, 'the timed-out deposit was sequenced after all');
  // The retry is sequenced after this read, so its own seq is above asOf; the answer names the deposit at or below it.
  const asOf = Number((await a.client.balance()).as_of_seq);
  const retry = await tx.admin.deposit(a.accountId, { amount: '1000', ref: 'wire-42' });
  const again = await tx.admin.deposit(a.accountId, { amount: '1000', ref: 'wire-42' });
  assert.equal(again.seq, retry.seq, 'every retry names the one deposit');
  assert.ok(Number(retry.seq) <= asOf, `the seq ${retry.seq} is of the deposit that landed (at or below ${asOf}), not of the retry`);
  assert.equal((await a.client.balance()).available, '1000', 'credited once');
});

test('overload: a placement, a cancel-all and a decrease held past the response budget answer 504 sequencing_timeout', async () => {
  const resting = await k.client.placeOrder(order(market, { tick: 7, qty: 5 }));
  pause();
  const t0 = Date.now();
  const [p, c, d, r] = await Promise.all([
    rejects(k.client.placeOrder(order(market, { tick: 8, client_order_id: '7001' })), 504, 'sequencing_timeout').then(
      () => Date.now() - t0,
    ),
    rejects(k.client.cancelAll({ market_id: market, group_id: 99 }), 504, 'sequencing_timeout').then(() => Date.now() - t0),
    rejects(k.client.decrease(resting.order_id, 4), 504, 'sequencing_timeout').then(() => Date.now() - t0),
    signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', JSON.stringify(order(market, { tick: 9 }))),
  ]);
  resume();
  assertErrorReply(r, 504, 'sequencing_timeout');
  for (const ms of [p, c, d]) assert.ok(ms >= BUDGET_MS - 50 && ms < BUDGET_MS + 1500, `answered after ${ms} ms, budget ${BUDGET_MS} ms`);
  // The commands were not lost: their outcome shows in the reads once sequenced.
  const landed = await eventually(async () => (await k.client.orders({ client_order_id: '7001' })).orders.length === 1, 2000);
  assert.ok(landed, 'the timed-out placement was sequenced after all');
  const e = await rejects(k.client.placeOrder(order(market, { tick: 8, client_order_id: '7001' })), 409, 'duplicate_client_order_id', {
    num: 266,
    origin: 'core',
  });
  assert.equal(
    e.details?.order_id,
    (await k.client.orders({ client_order_id: '7001' })).orders[0]!.order_id,
    'a retry finds the order instead of doubling it',
  );
  const live = (await k.client.orders({ status: ['resting'], market_id: market })).orders.find((o) => o.order_id === resting.order_id);
  assert.equal(live?.remaining_qty, 4, 'the timed-out decrease took effect');
});

interface Flood {
  /** The single placement that met the limit. */
  shed: RawReply | null;
  batch: RawReply;
  cancelAll: RawReply;
  /** Whether the decrease and the batch cancel were still unanswered 50 ms after sending (held, not refused). */
  heldAt50ms: boolean;
  decrease: RawReply;
  cancel: RawReply;
  /** Every flood request, answered. */
  answers: RawReply[];
  after: RawReply;
}

let flood: Promise<Flood> | null = null;

/**
 * Pauses the engine, holds more than SHED_PENDING placements on the gateway
 * (batches of 20 from enough keys to have the write tokens), records what a
 * placement, a batch place, a cancel-all, a decrease and a batch cancel get
 * meanwhile, resumes, and waits for every held request to be answered. Run
 * once; the tests below read its record.
 */
function overloaded(): Promise<Flood> {
  flood ??= (async () => {
    const bare = await newMarket(tx, { round: false });
    const toDecrease = await k.client.placeOrder(order(market, { tick: 3, qty: 5 }));
    const toCancel = await k.client.placeOrder(order(market, { tick: 4, qty: 2 }));
    const floodKeys: Key[] = [];
    const batches = Math.ceil((SHED_PENDING + 20) / 20);
    for (let i = 0; i < Math.ceil(batches / 5); i++) floodKeys.push(await newKey(tx, k.accountId));
    const probe = await newKey(tx, k.accountId);
    const batcher = await newKey(tx, k.accountId);
    const canceller = await newKey(tx, k.accountId);

    const held: Promise<RawReply>[] = [];
    pause();
    try {
      for (let b = 0; b < batches; b++) {
        const key = floodKeys[Math.floor(b / 5)]!;
        const body = JSON.stringify({ orders: Array.from({ length: 20 }, () => order(bare, { group_id: b })) });
        held.push(signedRaw(tx.port, key, 'POST', '/v1/portfolio/orders/batch', body));
      }
      let shed: RawReply | null = null;
      for (let i = 0; i < 60 && shed === null; i++) {
        const body = JSON.stringify(order(bare, { client_order_id: String(10_000 + i) }));
        const pending = signedRaw(tx.port, probe, 'POST', '/v1/portfolio/orders', body);
        const first = await Promise.race([pending, sleep(15).then(() => null)]);
        if (first !== null && first.status === 503) shed = first;
        else held.push(pending);
      }
      const batchP = signedRaw(
        tx.port,
        batcher,
        'POST',
        '/v1/portfolio/orders/batch',
        JSON.stringify({ orders: [order(bare), order(bare)] }),
      );
      const cancelAllP = signedRaw(tx.port, canceller, 'DELETE', '/v1/portfolio/orders?market_id=1');
      const decreaseP = signedRaw(tx.port, k, 'POST', `/v1/portfolio/orders/${toDecrease.order_id}/decrease`, '{"new_qty":2}');
      const cancelP = signedRaw(tx.port, k, 'DELETE', '/v1/portfolio/orders/batch', JSON.stringify({ order_ids: [toCancel.order_id] }));
      const early = await Promise.race([decreaseP, cancelP, sleep(50).then(() => null)]);
      resume();
      const [batch, cancelAll, decrease, cancel] = await Promise.all([batchP, cancelAllP, decreaseP, cancelP]);
      const answers = await Promise.all(held);
      const after = await signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', JSON.stringify(order(market, { tick: 2 })));
      return { shed, batch, cancelAll, heldAt50ms: early === null, decrease, cancel, answers, after };
    } finally {
      resume();
      await Promise.allSettled(held);
    }
  })();
  return flood;
}

test('overload: past the gateway\'s in-flight limit a placement is shed with 503 shed', async () => {
  const f = await overloaded();
  assert.ok(f.shed, `a placement was shed while more than ${SHED_PENDING} requests were held`);
  assertErrorReply(f.shed, 503, 'shed');
});

test('overload: past the gateway\'s in-flight limit a batch place is shed with 503 shed', async () => {
  const f = await overloaded();
  assertErrorReply(f.batch, 503, 'shed');
});

test('overload: past the gateway\'s in-flight limit a cancel-all is shed with 503 shed', async () => {
  const f = await overloaded();
  assertErrorReply(f.cancelAll, 503, 'shed');
});

test('overload: past the gateway\'s in-flight limit a decrease and a batch cancel are held, never shed, and succeed', async () => {
  const f = await overloaded();
  assert.ok(f.heldAt50ms, `held rather than refused (decrease ${f.decrease.status}, cancel ${f.cancel.status})`);
  assert.equal(f.decrease.status, 200, f.decrease.text);
  assert.equal(f.decrease.json.new_qty, 2);
  assert.equal(f.cancel.status, 200, f.cancel.text);
  assert.equal(f.cancel.json.results[0].status, 'canceled');
});

test('overload: every held request is answered, and placements are admitted again once the backlog is gone', async () => {
  const f = await overloaded();
  for (const r of f.answers)
    assert.ok([201, 409, 503, 504].includes(r.status), `held request answered (409: the flood market has no round)  ${r.status} ${r.text}`);
  assert.equal(f.after.status, 201, f.after.text);
  assert.equal(f.after.json.status, 'resting');
});

test('overload: a client that disconnects while its placement is held does not crash the server or leak its slot', async () => {
  pause();
  const aborted: Promise<string>[] = [];
  const controllers: AbortController[] = [];
  for (let i = 0; i < 50; i++) {
    const ac = new AbortController();
    controllers.push(ac);
    const body = JSON.stringify(order(market, { tick: 1, client_order_id: String(20_000 + i) }));
    const headers = { ...signHeaders(k, 'POST', '/v1/portfolio/orders', body, Date.now() + i), 'content-type': 'application/json' };
    aborted.push(raw(tx.port, { method: 'POST', target: '/v1/portfolio/orders', body, headers, signal: ac.signal }).then(
      (r) => `answered ${r.status} ${r.text}`,
      (e: Error) => e.name,
    ));
  }
  // Every placement reached the gateway (on a loaded machine the client may still be sending after 100 ms).
  assert.ok(await eventually(async () => (await heldRequests()) >= 50, 10_000, 20), 'the 50 placements were held by the gateway');
  for (const ac of controllers) ac.abort();
  assert.deepEqual(new Set(await Promise.all(aborted)), new Set(['AbortError']), 'every request was held until its client went away');
  await sleep(50);
  resume();
  const landed = await eventually(
    async () =>
      (await k.client.orders({ status: ['resting'], market_id: market, limit: 1000 })).orders.filter(
        (o) => BigInt(o.client_order_id) >= 20_000n,
      ).length === 50,
    10_000,
  );
  assert.ok(landed, 'the abandoned placements were still sequenced');
  const p = await k.client.placeOrder(order(market, { tick: 1 }));
  assert.equal(p.status, 'resting', 'the gateway still serves placements');
  assert.equal((await k.client.exchangeStatus()).exchange_active, true);
});

test('overload: a client that disconnects in the middle of sending its body does not crash the server', async () => {
  const { request } = await import('node:http');
  for (let i = 0; i < 10; i++) {
    const body = JSON.stringify(order(market, { tick: 1 }));
    await new Promise<void>((resolve) => {
      const req = request({
        host: '127.0.0.1',
        port: tx.port,
        method: 'POST',
        path: '/v1/portfolio/orders',
        agent: false,
        headers: {
          ...signHeaders(k, 'POST', '/v1/portfolio/orders', body),
          'content-type': 'application/json',
          'content-length': String(body.length + 100),
        },
      });
      req.on('error', () => resolve());
      req.on('response', () => resolve());
      req.write(body);
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 20);
    });
  }
  const p = await k.client.placeOrder(order(market, { tick: 1 }));
  assert.equal(p.status, 'resting');
});
