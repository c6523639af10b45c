// Restarts of the real exchange process (the launcher's child-process mode,
// test/support/exchange.ts: `node dist/src/main/exchange.js --durability
// fsync` on fresh ports) on the same data directory: SIGTERM under load
// exits 0 and loses nothing acknowledged; dead-man timers, gtd expiries and withdrawal states survive
// a SIGKILL (and timers due while the exchange was down fire at the start);
// a snapshot taken with POST /admin/snapshot is what the next start uses (its
// recovery line says so); a damaged newest snapshot makes the start fall back
// to the older one. Test process, main thread.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { DxClient } from '../../src/client/client.js';
import type { Order, OrderRequest, Placement, Scope } from '../../src/client/types.js';
import { closeFetchConnections } from '../../src/client/transport.js';
import { attempt, type Outcome } from '../support/crash/outcome.js';
import { spawnExchange, TEST_RESPONSE_BUDGET_MS, type ExchangeProcess } from '../support/exchange.js';
import { sleep } from '../support/harness.js';

const TOKEN = 'durability-restart-test-token-0123456789';

interface Ctx {
  dir: string;
  server: ExchangeProcess;
}

function start(dir: string, opts: { segmentBytes?: number } = {}): Promise<ExchangeProcess> {
  return spawnExchange({
    data_dir: dir,
    admin_token: TOKEN,
    durability: 'fsync',
    demo: false,
    gateways: 1,
    segment_bytes: opts.segmentBytes,
    // Every answer here is compared exactly; a 504 under a CI-sized load is not what these tests are about.
    response_budget_ms: TEST_RESPONSE_BUDGET_MS,
  });
}

/** A fresh data directory and a started exchange; `body` runs, and whatever server is current is killed afterwards. */
async function withExchange(tag: string, body: (ctx: Ctx) => Promise<void>, opts: { segmentBytes?: number } = {}): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `dx-restart-${tag}-`));
  const ctx: Ctx = { dir, server: await start(dir, opts) };
  try {
    await body(ctx);
  } finally {
    await ctx.server.kill();
    await closeFetchConnections();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Ends the current exchange and starts a new one on the same data directory.
 * SIGKILL kills it; SIGTERM stops it cleanly (clients let go of their
 * connections first) and requires exit 0; `signalled` is for a SIGTERM the
 * test already sent: close the connections and require exit 0.
 */
async function restart(
  ctx: Ctx,
  how: 'SIGKILL' | 'SIGTERM' | 'signalled',
  opts: { segmentBytes?: number; between?: () => void | Promise<void> } = {},
): Promise<ExchangeProcess> {
  if (how === 'SIGKILL') await ctx.server.kill();
  else if (how === 'signalled') {
    await closeFetchConnections();
    const x = await Promise.race([ctx.server.exited, sleep(30_000).then(() => null)]);
    assert.ok(x !== null, 'the exchange did not exit within 30 s of SIGTERM');
    assert.deepEqual({ code: x.code, signal: x.signal }, { code: 0, signal: null }, ctx.server.stderrTail());
  } else {
    await closeFetchConnections();
    const x = await ctx.server.terminate(30_000);
    assert.deepEqual(
      { code: x.code, signal: x.signal, killed: x.killed },
      { code: 0, signal: null, killed: false },
      ctx.server.stderrTail(),
    );
  }
  await opts.between?.();
  ctx.server = await start(ctx.dir, opts);
  return ctx.server;
}

interface Acct {
  id: number;
  keyId: number;
  secret: string;
}

async function market(s: ExchangeProcess): Promise<number> {
  const admin = s.admin();
  const { market_id } = await admin.createMarket({ title: 'restart test', category: 0, position_limit: 0, fee_schedule_id: 0 });
  await admin.openRound(market_id, { strike: '100000000', close_ts: String(BigInt(Date.now() + 3_600_000) * 1_000_000n) });
  return market_id;
}

async function account(s: ExchangeProcess, deposit: number, scopes: Scope[] = ['read', 'trade']): Promise<Acct> {
  const admin = s.admin();
  const { account_id } = await admin.createAccount();
  await admin.deposit(account_id, { amount: String(deposit), ref: 'restart-test' });
  const k = await admin.createKey(account_id, scopes);
  return { id: account_id, keyId: k.key_id, secret: k.secret };
}

function client(s: ExchangeProcess, a: Acct): DxClient {
  return s.client(a.keyId, a.secret, 10_000);
}

/** A resting 1-lot NO buy at `tick`, good till `expiryNs` (Unix ns). */
function gtdBuy(c: DxClient, market: number, tick: number, expiryNs: bigint): Promise<Placement> {
  return c.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick, qty: 1, tif: 'gtd', expiry_ts: String(expiryNs) });
}

async function orderByCoid(c: DxClient, coid: string): Promise<Order[]> {
  return (await c.orders({ client_order_id: coid })).orders;
}

/** Everything the account's owner can read, without as_of_seq (which moves with every command). */
async function accountState(c: DxClient): Promise<unknown> {
  const strip = <T extends { as_of_seq?: string }>(x: T): Omit<T, 'as_of_seq'> => {
    const { as_of_seq: _drop, ...rest } = x;
    return rest;
  };
  return {
    orders: strip(await c.orders({ limit: 1000 })),
    fills: strip(await c.fills({ limit: 1000 })),
    positions: strip(await c.positions({ limit: 1000 })),
    balance: strip(await c.balance()),
  };
}

/** Polls `get` every 100 ms until `done` holds or the deadline passes; returns the last value and when it first held. */
async function until<T>(get: () => Promise<T>, done: (x: T) => boolean, deadlineMs: number): Promise<{ value: T; at: number }> {
  for (;;) {
    const value = await get();
    const at = Date.now();
    if (done(value) || at > deadlineMs) return { value, at };
    await sleep(100);
  }
}

const ms = (ns: string): number => Number(BigInt(ns) / 1_000_000n);

test(
  'restart: SIGTERM under load exits 0, and the next start has every acknowledged order and none of the refused ones',
  { timeout: 90_000 },
  async () => {
    await withExchange('sigterm', async (ctx) => {
      const m = await market(ctx.server);
      const accts = [await account(ctx.server, 10_000_000), await account(ctx.server, 10_000_000), await account(ctx.server, 10_000_000)];
      interface Sent {
        acct: Acct;
        req: OrderRequest;
        out?: Outcome<{ order_id: string; seq: string }>;
      }
      const sent: Sent[] = [];
      let stop = false;
      let coid = 1000;
      const lane = async (a: Acct, seed: number): Promise<void> => {
        const c = client(ctx.server, a);
        for (let i = 0; !stop; i++) {
          const t0 = Date.now();
          const outcome = (seed + i) % 2 === 0 ? 'yes' : 'no';
          const req: OrderRequest = {
            market_id: m,
            side: 'buy',
            outcome,
            tick: 45 + ((seed * 7 + i * 3) % 11),
            qty: 1 + (i % 5),
            client_order_id: String(++coid),
          };
          const s: Sent = { acct: a, req };
          sent.push(s);
          s.out = await attempt(() => c.placeOrder(req));
          await sleep(Math.max(0, 25 - (Date.now() - t0)));
        }
      };
      const lanes = accts.flatMap((a, i) => [lane(a, i * 2), lane(a, i * 2 + 1)]);
      await sleep(800);
      ctx.server.child.proc.kill('SIGTERM');
      await sleep(300);
      stop = true;
      await Promise.all(lanes);
      const acked = sent.filter((s) => s.out?.kind === 'ok');
      const refused = sent.filter((s) => s.out?.kind === 'refused');
      assert.ok(acked.length > 20, `only ${acked.length} placements were acknowledged before SIGTERM`);
      const maxAcked = Math.max(...acked.map((s) => Number((s.out as { body: { seq: string } }).body.seq)));
      const s = await restart(ctx, 'signalled');
      const rec = s.recovery();
      assert.ok(rec !== null && rec.seq >= maxAcked, `recovered seq ${rec?.seq} below the last acknowledged ${maxAcked}`);
      assert.deepEqual(s.recoveryFaults(), [], 'a clean stop leaves no torn tail or damaged snapshot');
      for (const a of accts) {
        const c = client(s, a);
        const listed = new Map((await c.orders({ limit: 1000 })).orders.map((o) => [o.client_order_id, o]));
        for (const x of acked.filter((y) => y.acct === a)) {
          const body = (x.out as { body: { order_id: string; seq: string } }).body;
          const o = listed.get(x.req.client_order_id!);
          assert.ok(
            o !== undefined,
            `acknowledged order ${body.order_id} (client_order_id ${x.req.client_order_id}) is missing after SIGTERM`,
          );
          assert.equal(o.order_id, body.order_id);
          assert.equal(o.created_seq, body.seq);
        }
        for (const x of refused.filter((y) => y.acct === a))
          assert.equal(listed.has(x.req.client_order_id!), false, `refused placement ${x.req.client_order_id} exists`);
        // What SIGTERM cut off is there at most once.
        for (const x of sent.filter((y) => y.acct === a && y.out?.kind === 'uncertain'))
          assert.ok((await orderByCoid(c, x.req.client_order_id!)).length <= 1);
      }
    });
  },
);

test(
  'restart: dead-man timers and gtd expiries survive a SIGKILL (still armed, fire on time), and those due while the exchange was down ' +
    'fire at the start',
  { timeout: 90_000 },
  async () => {
    await withExchange('timers', async (ctx) => {
      const s0 = ctx.server;
      const m = await market(s0);
      const a = await account(s0, 1_000_000); // dead-man 15 s, due after the restart
      const b = await account(s0, 1_000_000); // dead-man 1 s, due while down
      const g = await account(s0, 1_000_000); // gtd orders
      const ca = client(s0, a);
      const cb = client(s0, b);
      const cg = client(s0, g);
      for (const c of [ca, cb])
        for (let i = 0; i < 3; i++) await c.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 20 + i, qty: 2 });
      const armA = await ca.armDeadman(15_000);
      const armB = await cb.armDeadman(1000);
      const nowNs = BigInt(Date.now()) * 1_000_000n;
      const gLate = await gtdBuy(cg, m, 30, nowNs + 17_000_000_000n);
      const gSoon = await gtdBuy(cg, m, 31, nowNs + 800_000_000n);
      assert.equal(gLate.status, 'resting');
      assert.equal(gSoon.status, 'resting');
      const firesA = ms(armA.fires_at_ts!);
      const firesB = ms(armB.fires_at_ts!);
      const expiresSoon = ms(String(nowNs + 800_000_000n));
      const expiresLate = ms(String(nowNs + 17_000_000_000n));
      // Down until B's dead-man and the short gtd are due.
      const s = await restart(ctx, 'SIGKILL', {
        between: async () => sleep(Math.max(0, Math.max(firesB, expiresSoon) + 200 - Date.now())),
      });
      assert.ok(s.readyAt > 0 && Date.now() < firesA, 'the restart finished before A was due (the test needs that to see it still armed)');
      const ca2 = client(s, a);
      const cb2 = client(s, b);
      const cg2 = client(s, g);
      const dA = await ca2.deadman();
      assert.equal(dA.armed, true);
      assert.equal(dA.timeout_ms, 15_000);
      assert.equal(dA.fires_at_ts, armA.fires_at_ts, 'the dead-man keeps its fire time across the restart');

      // Due while down: fired (and durable) before the listeners opened, so the first read already shows it.
      const bDone = await cb2.orders({ limit: 100 });
      const deadman = [0, 'deadman'];
      assert.deepEqual(bDone.orders.map((o) => [o.remaining_qty, o.reason]), [deadman, deadman, deadman]);
      assert.equal((await cb2.deadman()).armed, false);
      const soon = (await cg2.orders({ limit: 100 })).orders.find((o) => o.order_id === gSoon.order_id)!;
      assert.deepEqual(
        [soon.remaining_qty, soon.reason],
        [0, 'expired'],
        'a gtd order that expired while the exchange was down is not live at the first read',
      );

      // Still pending after the restart: live now, fired at their time.
      const before = await ca2.orders({ limit: 100 });
      if (Date.now() < firesA - 300)
        assert.ok(
          before.orders.every((o) => o.remaining_qty === 2),
          "A's orders are live before its dead-man is due",
        );
      const aDone = await until(
        () => ca2.orders({ limit: 100 }),
        (p) => p.orders.every((o) => o.remaining_qty === 0),
        firesA + 5000,
      );
      assert.deepEqual(
        aDone.value.orders.map((o) => o.reason),
        ['deadman', 'deadman', 'deadman'],
        "A's dead-man fired after the restart",
      );
      assert.ok(aDone.at >= firesA, `A's orders were seen canceled at ${aDone.at}, before the fire time ${firesA}`);
      assert.equal((await ca2.deadman()).armed, false);
      const late = await until(
        () => cg2.orders({ limit: 100 }),
        (p) => p.orders.find((o) => o.order_id === gLate.order_id)!.remaining_qty === 0,
        expiresLate + 5000,
      );
      assert.equal(late.value.orders.find((o) => o.order_id === gLate.order_id)!.reason, 'expired');
      assert.ok(late.at >= expiresLate, 'the gtd order expired no earlier than its expiry_ts');
    });
  },
);

test(
  'restart: withdrawal states (pending, confirmed, failed) and their balances survive a SIGKILL; a retry answers the same wid',
  { timeout: 120_000 },
  async () => {
    await withExchange('withdrawals', async (ctx) => {
      const f = await account(ctx.server, 1_000_000, ['read', 'withdraw']);
      const c = client(ctx.server, f);
      const admin = ctx.server.admin();
      const req = (cwid: string, amount: number) => ({ client_withdrawal_id: cwid, amount: String(amount), destination: `dest-${cwid}` });
      const w1 = await c.withdraw(req('101', 100));
      const w2 = await c.withdraw(req('102', 200));
      const w3 = await c.withdraw(req('103', 300));
      const w4 = await c.withdraw(req('104', 400));
      await admin.confirmWithdrawal(w1.wid);
      await admin.failWithdrawal(w2.wid);
      const s = await restart(ctx, 'SIGKILL');
      const c2 = client(s, f);
      const admin2 = s.admin();
      const status = async (cwid: string): Promise<string> => (await c2.withdrawal(cwid)).status;
      assert.deepEqual(
        [await status('101'), await status('102'), await status('103'), await status('104')],
        ['confirmed', 'failed', 'pending', 'pending'],
      );
      for (const [cwid, w] of [
        ['101', w1],
        ['103', w3],
      ] as const) {
        const now = await c2.withdrawal(cwid);
        assert.equal(now.wid, w.wid);
        assert.equal(now.seq, w.seq);
      }
      let b = await c2.balance();
      assert.deepEqual([b.available, b.reserved], [String(1_000_000 - 100 - 300 - 400), String(300 + 400)]);
      // A retried request answers the existing withdrawal; a second confirm is refused.
      const again = await c2.withdraw(req('103', 300));
      assert.equal(again.wid, w3.wid);
      const second = await attempt(() => admin2.confirmWithdrawal(w1.wid));
      assert.equal(second.kind === 'rejected' && second.code, 'unknown_withdrawal');
      // The pending ones still work after the restart.
      await admin2.confirmWithdrawal(w3.wid);
      await admin2.failWithdrawal(w4.wid);
      b = await c2.balance();
      assert.deepEqual([b.available, b.reserved], [String(1_000_000 - 100 - 300), '0']);
    });
  },
);

test(
  'restart: after POST /admin/snapshot the next start loads that snapshot (recovery line snapshot_seq) and replays only what follows',
  { timeout: 120_000 },
  async () => {
    await withExchange('snapshot', async (ctx) => {
      const m = await market(ctx.server);
      const a = await account(ctx.server, 1_000_000);
      const b = await account(ctx.server, 1_000_000);
      const ca = client(ctx.server, a);
      const cb = client(ctx.server, b);
      for (let i = 0; i < 10; i++) await ca.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 40 + i, qty: 3 });
      const snap = await ctx.server.admin().snapshot();
      const snapSeq = Number(snap.seq);
      assert.ok(snapSeq > 0 && snap.path.endsWith('.dxs'), JSON.stringify(snap));
      let last = 0;
      for (let i = 0; i < 10; i++)
        last = Number((await cb.placeOrder({ market_id: m, side: 'buy', outcome: 'no', tick: 55 + (i % 5), qty: 2 })).seq);
      const stateA = await accountState(ca);
      const stateB = await accountState(cb);
      const s = await restart(ctx, 'SIGKILL');
      const rec = s.recovery();
      assert.ok(rec !== null);
      assert.equal(rec.snapshot_seq, snapSeq, 'the start used the snapshot just taken');
      assert.equal(rec.snapshot, snap.path);
      assert.ok(rec.seq >= last, `recovered seq ${rec.seq}, last acknowledged ${last}`);
      assert.equal(rec.replayed_commands, rec.seq - snapSeq);
      assert.deepEqual(await accountState(client(s, a)), stateA);
      assert.deepEqual(await accountState(client(s, b)), stateB);
    });
  },
);

test(
  'restart: a damaged newest snapshot is reported and the start falls back to the older one plus the journal after it',
  { timeout: 120_000 },
  async () => {
    await withExchange(
      'snapfallback',
      async (ctx) => {
        const m = await market(ctx.server);
        const a = await account(ctx.server, 1_000_000);
        const b = await account(ctx.server, 1_000_000);
        const ca = client(ctx.server, a);
        const cb = client(ctx.server, b);
        const admin = ctx.server.admin();
        for (let i = 0; i < 20; i++) await ca.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 30 + i, qty: 4 });
        const older = await admin.snapshot();
        for (let i = 0; i < 20; i++) await cb.placeOrder({ market_id: m, side: 'buy', outcome: 'no', tick: 40 + (i % 15), qty: 3 });
        const newer = await admin.snapshot();
        assert.ok(Number(newer.seq) > Number(older.seq));
        for (let i = 0; i < 5; i++) await ca.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 10 + i, qty: 1 });
        const stateA = await accountState(ca);
        const stateB = await accountState(cb);
        const s = await restart(ctx, 'SIGKILL', {
          segmentBytes: 4096,
          between: () => {
            // One flipped byte in the middle of the newest snapshot's body.
            const bytes = readFileSync(newer.path);
            const at = 64 + Math.floor((bytes.length - 64) / 2);
            bytes[at] = bytes[at]! ^ 0x10;
            writeFileSync(newer.path, bytes);
          },
        });
        const rec = s.recovery();
        assert.ok(rec !== null);
        assert.equal(rec.snapshot_seq, Number(older.seq), 'the start fell back to the older snapshot');
        const rejected = s.recoveryFaults().filter((f) => f.fault === 'snapshot_rejected');
        assert.equal(rejected.length, 1, JSON.stringify(s.recoveryFaults()));
        assert.equal(rejected[0]!.path, newer.path);
        assert.deepEqual(await accountState(client(s, a)), stateA);
        assert.deepEqual(await accountState(client(s, b)), stateB);
      },
      { segmentBytes: 4096 },
    );
  },
);

test(
  'restart: a segment that a kill left without its header (killed between creating the file and writing it) is removed at the next ' +
    'start, not a fault',
  { timeout: 120_000 },
  async () => {
    await withExchange('tornsegment', async (ctx) => {
      const m = await market(ctx.server);
      const a = await account(ctx.server, 1_000_000);
      const ca = client(ctx.server, a);
      for (let i = 0; i < 5; i++) await ca.placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 30 + i, qty: 2 });
      const stateA = await accountState(ca);
      // A start that writes nothing leaves its new segment with just the header.
      await restart(ctx, 'SIGKILL');
      let torn = '';
      const s = await restart(ctx, 'SIGKILL', {
        between: () => {
          // Each start opens a segment at its next seq and writes its 64-byte header at once; cut it back to what a kill between the two
          // leaves.
          const dir = join(ctx.dir, 'journal');
          const last = readdirSync(dir)
            .filter((n) => n.endsWith('.dxj'))
            .sort()
            .pop()!;
          torn = join(dir, last);
          assert.equal(statSync(torn).size, 64, 'the newest segment holds only its header');
          truncateSync(torn, 0);
        },
      });
      const removed = s.recoveryFaults().filter((f) => f.fault === 'empty_segment_removed');
      assert.deepEqual(
        removed.map((f) => f.path),
        [torn],
      );
      assert.deepEqual(await accountState(client(s, a)), stateA);
      const next = await client(s, a).placeOrder({ market_id: m, side: 'buy', outcome: 'yes', tick: 20, qty: 1 });
      assert.ok(Number(next.seq) > (s.recovery()?.seq ?? Infinity));
    });
  },
);
