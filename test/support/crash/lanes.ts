// lanes: the crash test's load, as small independent units. A lane is one
// client loop (one key, one connection's worth of requests) that runs until
// the driver says stop, sends through LaneContext.attempt (which counts what
// is in flight, so the kill can wait until commands are cut off) and applies
// every answer to the ledger. The driver starts one trader lane per trading
// key, one funding lane and one reader lane per epoch (driver.ts lanesFor);
// a new kind of client is a new Lane there. Main thread of the crash test.

import { setTimeout as sleep } from 'node:timers/promises';
import { performance } from 'node:perf_hooks';
import type { AdminClient } from '../../../src/client/admin_client.js';
import type { DxClient } from '../../../src/client/client.js';
import type { BatchCancelResult, DecreaseResult, OrderRequest, Placement, Side, U64 } from '../../../src/client/types.js';
import type { DxWebSocket } from '../../../src/client/websocket.js';
import type { Rng } from '../../../src/lib/rng.js';
import type { ExchangeLink, Funding, Key, Ledger, OrderRec, Trader, WithdrawalRec } from './ledger.js';
import type { Outcome } from './outcome.js';

export interface LaneContext extends ExchangeLink {
  readonly ledger: Ledger;
  /** True once the lanes must stop (a kill or a stop has begun). */
  readonly stopping: boolean;
  /** attempt() for the load: counts what is in flight; a 5xx from a running exchange is a violation. */
  attempt<T>(call: () => Promise<T>): Promise<Outcome<T>>;
}

/** One client loop; resolves when ctx.stopping is seen. */
export type Lane = (ctx: LaneContext) => Promise<void>;

const LANE_INTERVAL_MS = 25; // <= 40 writes/s per key: under the 50/s bucket
const FUNDING_INTERVAL_MS = 40;
const READ_INTERVAL_MS = 30;

async function paced(started: number, interval: number): Promise<void> {
  const left = interval - (performance.now() - started);
  if (left > 0) await sleep(left);
}

/** The order commands of a trader lane: REST (DxClient) or the WebSocket lane's JSON order entry. */
interface OrderApi {
  placeOrder(req: OrderRequest): Promise<Placement>;
  cancelBatch(orderIds: U64[]): Promise<BatchCancelResult>;
  decrease(orderId: U64, newQty: number): Promise<DecreaseResult>;
}

function describe(out: Outcome<unknown>): string {
  if (out.kind === 'uncertain') return out.why;
  return out.kind === 'ok' ? 'ok' : `${out.status} ${out.code}`;
}

function overWebSocket(ws: DxWebSocket): OrderApi {
  return {
    placeOrder: (r) => ws.placeOrder(r),
    cancelBatch: (ids) => ws.batchCancelOrders(ids),
    decrease: (id, q) => ws.decreaseOrder(id, q),
  };
}

/**
 * Placements (gtc, gtd, ioc, fok, post-only; buys and sells of held shares),
 * cancels and decreases on one key, over REST or over one WebSocket
 * connection (a kill cuts it: its held commands are uncertain, as a cut
 * HTTP request is), with a positions read (REST) now and then.
 */
export function traderLane(t: Trader, k: Key, rng: Rng, via: 'rest' | 'ws' = 'rest'): Lane {
  return async (ctx) => {
    const c = ctx.client(k);
    let orders: OrderApi = c;
    let ws: DxWebSocket | null = null;
    if (via === 'ws') {
      const socket = ctx.ws(k);
      const open = await ctx.attempt(() => socket.connect());
      ctx.ledger.count(`ws_connect_${open.kind}`);
      if (open.kind !== 'ok') {
        // Only a kill or stop that began first excuses a failed connect: otherwise this lane would place nothing and pass.
        const why = describe(open);
        if (!ctx.stopping) ctx.ledger.violate(`key ${k.keyId}: its WebSocket lane could not connect to a running exchange (${why})`);
        return;
      }
      ws = socket;
      orders = overWebSocket(socket);
    }
    try {
      let ops = 0;
      while (!ctx.stopping) {
        const t0 = performance.now();
        if (ops++ % 15 === 0) await refreshPositions(ctx, t, c);
        else {
          const r = rng.float();
          const live = t.orders.filter(
            (o) =>
              o.state === 'acked' &&
              (o.ack!.status === 'resting' || o.ack!.status === 'partially_filled') &&
              !o.cancelSent &&
              !o.terminalSeen,
          );
          if (r < 0.18 && live.length > 0) await cancelOne(ctx, orders, rng.pick(live), via);
          else if (r < 0.23 && live.length > 0) await decreaseOne(ctx, orders, rng.pick(live), rng, via);
          else await placeOne(ctx, t, orders, rng, via);
        }
        await paced(t0, LANE_INTERVAL_MS);
      }
    } finally {
      await ws?.close();
    }
  };
}

async function refreshPositions(ctx: LaneContext, t: Trader, c: DxClient): Promise<void> {
  const out = await ctx.attempt(() => c.positions({ limit: 1000 }));
  if (out.kind !== 'ok') return;
  ctx.ledger.seen(out.body.as_of_seq);
  t.free.clear();
  for (const p of out.body.positions) t.free.set(`${p.market_id}:${p.outcome}`, p.free);
}

function orderRequest(ledger: Ledger, t: Trader, rng: Rng): OrderRequest {
  const market_id = rng.pick(ledger.markets);
  const outcome = rng.float() < 0.5 ? 'yes' : 'no';
  const freeKey = `${market_id}:${outcome}`;
  const free = t.free.get(freeKey) ?? 0;
  const side: Side = free > 0 && rng.float() < 0.4 ? 'sell' : 'buy';
  const qty = side === 'sell' ? rng.int(1, Math.min(free, 12)) : rng.int(1, 12);
  if (side === 'sell') t.free.set(freeKey, free - qty);
  const req: OrderRequest = { market_id, side, outcome, tick: rng.int(42, 58), qty, client_order_id: ledger.coid() };
  const r = rng.float();
  if (r < 0.1) {
    req.tif = 'gtd';
    req.expiry_ts = String(BigInt(Date.now() + rng.int(300, 3000)) * 1_000_000n);
  } else if (r < 0.18) req.tif = 'ioc';
  else if (r < 0.22) req.tif = 'fok';
  else if (r < 0.27) req.post_only = true;
  return req;
}

async function placeOne(ctx: LaneContext, t: Trader, c: OrderApi, rng: Rng, via: 'rest' | 'ws'): Promise<void> {
  const req = orderRequest(ctx.ledger, t, rng);
  const rec: OrderRec = {
    trader: t, coid: req.client_order_id!, req, via, epoch: ctx.ledger.epoch, state: 'sent', cancelSent: false, cancelUncertain: false,
    decreaseSent: false, terminalSeen: false,
  };
  t.orders.push(rec);
  t.byCoid.set(rec.coid, rec);
  const out = await ctx.attempt(() => c.placeOrder(req));
  ctx.ledger.count(`place_${out.kind}`);
  if (via === 'ws') ctx.ledger.count(`ws_place_${out.kind}`);
  ctx.ledger.onPlacement(rec, out);
}

async function cancelOne(ctx: LaneContext, c: OrderApi, rec: OrderRec, via: 'rest' | 'ws'): Promise<void> {
  rec.cancelSent = true;
  const out = await ctx.attempt(() => c.cancelBatch([rec.order_id!]));
  ctx.ledger.count(`cancel_${out.kind}`);
  if (via === 'ws') ctx.ledger.count(`ws_cancel_${out.kind}`);
  ctx.ledger.onCancel(rec, out);
}

async function decreaseOne(ctx: LaneContext, c: OrderApi, rec: OrderRec, rng: Rng, via: 'rest' | 'ws'): Promise<void> {
  const resting = rec.ack!.resting_qty;
  if (resting < 2) return cancelOne(ctx, c, rec, via);
  const target = rng.int(1, resting - 1);
  rec.decreaseSent = true;
  const out = await ctx.attempt(() => c.decrease(rec.order_id!, target));
  ctx.ledger.count(`decrease_${out.kind}`);
  if (via === 'ws') ctx.ledger.count(`ws_decrease_${out.kind}`);
  ctx.ledger.onDecrease(rec, target, out);
}

/** Deposits, withdrawal requests, operator confirm/fail and now and then a snapshot: one at a time. */
export function fundingLane(rng: Rng): Lane {
  return async (ctx) => {
    const admin = ctx.admin();
    while (!ctx.stopping) {
      const t0 = performance.now();
      const f = rng.pick(ctx.ledger.funding);
      const r = rng.float();
      const pending = ctx.ledger.funding
        .flatMap((x) => x.withdrawals)
        .filter((w) => (w.state === 'acked' || w.state === 'landed') && w.action === undefined);
      if (r < 0.3) await depositOne(ctx, admin, f, rng);
      else if (r < 0.65) await withdrawOne(ctx, f, rng);
      else if (r < 0.95 && pending.length > 0) await settleOne(ctx, admin, rng.pick(pending), rng.float() < 0.6 ? 'confirm' : 'fail');
      else if (r >= 0.95) {
        const out = await ctx.attempt(() => admin.snapshot());
        ctx.ledger.count(`snapshot_${out.kind}`);
        if (out.kind === 'ok') ctx.ledger.seen(out.body.seq);
      }
      await paced(t0, FUNDING_INTERVAL_MS);
    }
  };
}

async function depositOne(ctx: LaneContext, admin: AdminClient, f: Funding, rng: Rng): Promise<void> {
  const amount = rng.int(1, 2_000_000);
  const ref = `crash-${++ctx.ledger.depositRef}`;
  const out = await ctx.attempt(() => admin.deposit(f.id, { amount: String(amount), ref }));
  ctx.ledger.count(`deposit_${out.kind}`);
  if (out.kind === 'ok') {
    f.deposits += amount;
    ctx.ledger.freshSeq(out.body.seq, 'deposit');
  } else if (out.kind === 'uncertain') {
    f.uncertainDeposits.push({ amount, ref, why: out.why });
  } else if (!(out.kind === 'refused' && out.status === 503 && out.code === 'shed')) {
    // 503 shed: the exchange is stopping (a primary stepping down); its control plane refuses before writing anything.
    ctx.ledger.violate(`deposit to ${f.id} answered ${out.status} ${out.code}`);
  }
}

async function withdrawOne(ctx: LaneContext, f: Funding, rng: Rng): Promise<void> {
  const room = ctx.ledger.availableLowerBound(f);
  if (room < 1) return;
  const w: WithdrawalRec = {
    funding: f, cwid: ctx.ledger.cwid(), amount: rng.int(1, Math.min(room, 500_000)), destination: `crash-dest-${rng.int(1, 1_000_000)}`,
    epoch: ctx.ledger.epoch, state: 'uncertain',
  };
  f.withdrawals.push(w);
  f.byCwid.set(w.cwid, w);
  const c = ctx.client(rng.pick(f.keys));
  const out = await ctx.attempt(() => c.withdraw({ client_withdrawal_id: w.cwid, amount: String(w.amount), destination: w.destination }));
  ctx.ledger.count(`withdraw_${out.kind}`);
  ctx.ledger.onWithdrawal(w, out, false);
}

async function settleOne(ctx: LaneContext, admin: AdminClient, w: WithdrawalRec, action: 'confirm' | 'fail'): Promise<void> {
  w.action = action;
  const out = await ctx.attempt(() => (action === 'confirm' ? admin.confirmWithdrawal(w.wid!) : admin.failWithdrawal(w.wid!)));
  ctx.ledger.count(`${action}_${out.kind}`);
  ctx.ledger.onSettle(w, out);
}

/** Reads on another key: every as_of_seq is something shown, so it must survive the kill. */
export function readerLane(rng: Rng): Lane {
  return async (ctx) => {
    const c = ctx.client(ctx.ledger.funding[0]!.keys[2]!);
    let last = 0;
    while (!ctx.stopping) {
      const t0 = performance.now();
      const m = rng.pick(ctx.ledger.markets);
      const r = rng.float();
      const out = await ctx.attempt<{ as_of_seq: string }>(() => (r < 0.4 ? c.orderbook(m, 5) : r < 0.8 ? c.market(m) : c.balance()));
      ctx.ledger.count(`read_${out.kind}`);
      if (out.kind === 'ok') {
        const s = Number(out.body.as_of_seq);
        if (s < last) ctx.ledger.violate(`reads went back in time on one connection: as_of_seq ${s} after ${last}`);
        last = s;
        ctx.ledger.seen(s);
      }
      await paced(t0, READ_INTERVAL_MS);
    }
  };
}
