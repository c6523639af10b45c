// soak load: the steady mixed load of the soak test (issue 19) through the
// real server, as lanes that run until told to stop:
//   - traders: resting and crossing placements on a series market whose
//     rounds open, freeze, propose and settle by themselves every few
//     seconds (so orders end as fills, cancels, round_frozen cancels and
//     market_not_trading rejects), cancels, decreases, their own reads;
//   - the oracle: three sources ticking, which the series needs;
//   - WebSocket subscribers joining (orderbook_delta, trades, rounds, user)
//     and leaving after a few seconds;
//   - keys: a key created on the keys service, used once, revoked;
//   - funding: withdrawals requested and confirmed or failed by the
//     operator, deposits that keep the traders funded;
//   - public reads (markets, book, trades, rounds, oracle).
// Each lane counts what it did; an answer other than the expected ones
// (a 5xx, an unexpected refusal) is recorded as a problem. Main thread of
// the soak's process; the exchange runs in a child process.

import WebSocket from 'ws';
import { KeysClient } from '../../../src/client/keys_client.js';
import type { AdminClient } from '../../../src/client/admin_client.js';
import type { DxClient } from '../../../src/client/client.js';
import { DxApiError } from '../../../src/client/errors.js';
import { authHeaders, decodeSecret } from '../../../src/client/sign.js';
import { Rng } from '../../../src/lib/rng.js';
import type { ExchangeProcess } from '../exchange.js';

export interface SoakKey {
  account: number;
  keyId: number;
  secret: string;
}

export interface SoakWorld {
  market: number;
  traders: SoakKey[];
  funding: SoakKey;
}

export class LoadStats {
  readonly counts: Record<string, number> = {};
  readonly problems: string[] = [];

  count(what: string, n = 1): void {
    this.counts[what] = (this.counts[what] ?? 0) + n;
  }

  problem(what: string): void {
    if (this.problems.length < 50) this.problems.push(what);
    this.count('problems');
  }
}

const ORACLE_MID = 6_500_000_000_000; // 65,000.00000000
const TRADER_DEPOSIT = 50_000_000;

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs `call`; a DxApiError with an expected code is counted, anything else is a problem. */
async function expect<T>(stats: LoadStats, what: string, call: () => Promise<T>, allowed: readonly string[] = []): Promise<T | null> {
  try {
    const v = await call();
    stats.count(`${what}_ok`);
    return v;
  } catch (e) {
    if (e instanceof DxApiError && (allowed.includes(e.code) || e.code === 'rate_limited')) {
      stats.count(`${what}_${e.code}`);
      return null;
    }
    stats.problem(`${what}: ${e instanceof DxApiError ? `${e.status} ${e.code} ${e.message}` : (e as Error).message}`);
    return null;
  }
}

/** Markets, accounts, keys and the series the load runs on. */
export async function setUpWorld(s: ExchangeProcess, traders: number): Promise<SoakWorld> {
  const admin = s.admin();
  // The oracle must be fresh before the series can open its first round.
  for (let src = 0; src < 3; src++) await admin.oracleTick({ source_id: src, price: String(ORACLE_MID) });
  const series = await admin.createSeries({ category: 5, title: 'soak series', period_s: 4, position_limit: 0, fee_schedule_id: 0 });
  const key = async (scopes: ('read' | 'trade' | 'withdraw')[]): Promise<SoakKey> => {
    const { account_id } = await admin.createAccount();
    await admin.deposit(account_id, { amount: String(TRADER_DEPOSIT), ref: 'soak' });
    const k = await admin.createKey(account_id, scopes);
    return { account: account_id, keyId: k.key_id, secret: k.secret };
  };
  const out: SoakKey[] = [];
  for (let i = 0; i < traders; i++) out.push(await key(['read', 'trade']));
  return { market: series.market_id, traders: out, funding: await key(['read', 'withdraw']) };
}

export interface LoadContext {
  server: ExchangeProcess;
  world: SoakWorld;
  stats: LoadStats;
  rng: Rng;
  stopped: () => boolean;
  /**
   * Until this time (performance.now()), every lane pauses a quarter as
   * long between its requests (traders 12-37 ms instead of 50-150 ms):
   * about 4x the load, so that every account's fill list (fill_cap, 1,000,
   * which the soak cannot lower) reaches its cap within the warm-up, as
   * every other retention does, and so that the rarely used paths (the
   * control plane's routes, keys, withdrawals, WebSocket upgrades) are
   * compiled and optimized by then, not through the judged window
   * (docs/reliability.md, finding 9).
   */
  fastUntil?: number;
}

function fast(ctx: LoadContext): boolean {
  return performance.now() < (ctx.fastUntil ?? 0);
}

/** Sleeps lo..hi ms, a quarter of that during the fast start. */
function pause(ctx: LoadContext, rng: Rng, lo: number, hi: number): Promise<void> {
  return sleep(fast(ctx) ? rng.int(lo >> 2, hi >> 2) : rng.int(lo, hi));
}

/** One trader: placements (resting and crossing), cancels, decreases and reads, about 10 requests a second. */
async function traderLane(ctx: LoadContext, k: SoakKey, rng: Rng): Promise<void> {
  const c: DxClient = ctx.server.client(k.keyId, k.secret, 10_000);
  const { stats, world } = ctx;
  const live: string[] = [];
  let coid = rng.int(1, 1_000_000) * 1_000_000;
  const notTrading = ['market_not_trading', 'insufficient_balance', 'insufficient_position', 'shed'];
  while (!ctx.stopped()) {
    const r = rng.float();
    if (r < 0.45) {
      // A resting buy away from the middle, or a crossing one (ioc) near it.
      // Crossing often and deep, so that every account's fill list reaches its cap within the warm-up.
      const crossing = rng.chance(0.6);
      const outcome = rng.chance(0.5) ? 'yes' : 'no';
      const p = await expect(stats, 'place', () => c.placeOrder({
        market_id: world.market, side: 'buy', outcome, tick: crossing ? rng.int(55, 90) : rng.int(5, 45), qty: rng.int(1, 5),
        tif: crossing ? 'ioc' : 'gtc', client_order_id: String(++coid),
      }), notTrading);
      if (p !== null && p.status !== 'filled' && p.status !== 'canceled') live.push(p.order_id);
    } else if (r < 0.55) {
      // Sell what was bought (a share of it), so positions do not only grow.
      const outcome = rng.chance(0.5) ? 'yes' : 'no';
      const sell = { market_id: world.market, side: 'sell', outcome, tick: rng.int(30, 60), qty: 1, tif: 'ioc' } as const;
      await expect(stats, 'sell', () => c.placeOrder(sell), notTrading);
    } else if (r < 0.7 && live.length > 0) {
      const id = live.splice(rng.int(0, live.length - 1), 1)[0]!;
      await expect(stats, 'cancel', () => c.cancelBatch([id]));
    } else if (r < 0.75 && live.length > 0) {
      const id = live[rng.int(0, live.length - 1)]!;
      await expect(stats, 'decrease', () => c.decrease(id, 1), ['unknown_order']);
    } else if (r < 0.8) {
      await expect(stats, 'cancel_all', () => c.cancelAll({ market_id: world.market }));
      live.length = 0;
    } else {
      const which = rng.int(0, 3);
      if (which === 0) await expect(stats, 'read_orders', () => c.orders({ limit: 50 }));
      else if (which === 1) await expect(stats, 'read_balance', () => c.balance());
      else if (which === 2) await expect(stats, 'read_fills', () => c.fills({ limit: 50 }));
      else await expect(stats, 'read_positions', () => c.positions());
    }
    if (live.length > 200) live.splice(0, 100); // ended by round closes; forget the oldest
    await pause(ctx, rng, 50, 150);
  }
}

/** Three oracle sources near the mid, twice a second: the series proposes and opens rounds from them. */
async function oracleLane(ctx: LoadContext, admin: AdminClient): Promise<void> {
  let mid = ORACLE_MID;
  while (!ctx.stopped()) {
    mid += ctx.rng.int(-50_000_000, 50_000_000);
    for (let src = 0; src < 3; src++) {
      await expect(ctx.stats, 'oracle_tick', () => admin.oracleTick({ source_id: src, price: String(mid + src * 1_000_000) }));
    }
    await sleep(fast(ctx) ? 125 : 500);
  }
}

/** A WebSocket subscriber: connects (signed upgrade), subscribes, reads for a few seconds, leaves; again. */
async function subscriberLane(ctx: LoadContext, k: SoakKey, rng: Rng): Promise<void> {
  const secret = decodeSecret(k.secret);
  while (!ctx.stopped()) {
    const headers = authHeaders(k.keyId, secret, 'GET', '/v1/ws', '');
    const ws = new WebSocket(`ws://127.0.0.1:${ctx.server.port}/v1/ws`, { headers: { ...headers }, perMessageDeflate: false });
    let messages = 0;
    const opened = await new Promise<boolean>((resolve) => {
      ws.once('open', () => resolve(true));
      ws.once('error', () => resolve(false));
      ws.once('unexpected-response', (_req, res) => {
        // 429: the key's read bucket or its connection cap; anything else is a problem.
        if (res.statusCode === 429) ctx.stats.count('ws_refused_429');
        else ctx.stats.problem(`ws upgrade answered ${res.statusCode}`);
        resolve(false);
      });
    });
    if (!opened) {
      await sleep(1000);
      continue;
    }
    ctx.stats.count('ws_connect');
    ws.on('message', (data) => {
      messages++;
      const m = JSON.parse(String(data)) as { type?: string; msg?: { code?: number } };
      if (m.type === 'error' && m.msg?.code !== 8) ctx.stats.problem(`ws error ${String(data).slice(0, 200)}`);
    });
    const market_ids = [ctx.world.market];
    ws.send(JSON.stringify({ id: 1, cmd: 'subscribe', params: { channels: ['orderbook_delta', 'trades', 'rounds'], market_ids } }));
    ws.send(JSON.stringify({ id: 2, cmd: 'subscribe', params: { channels: ['user', 'oracle'] } }));
    const stay = fast(ctx) ? rng.int(500, 2000) : rng.int(2000, 8000);
    for (let t = 0; t < stay && !ctx.stopped(); t += 250) await sleep(250);
    ws.close();
    await new Promise<void>((resolve) => {
      if (ws.readyState === WebSocket.CLOSED) resolve();
      else ws.once('close', () => resolve());
    });
    ctx.stats.count('ws_messages', messages);
    await pause(ctx, rng, 100, 500);
  }
}

/** Keys: one created on the keys service with a trader's key, used once, revoked; about once a second. */
async function keysLane(ctx: LoadContext, k: SoakKey, rng: Rng): Promise<void> {
  const svc = new KeysClient({ baseUrl: ctx.server.accountsBase, keyId: k.keyId, secret: k.secret, timeoutMs: 10_000 });
  while (!ctx.stopped()) {
    const created = await expect(ctx.stats, 'key_create', () => svc.createKey({ label: 'soak', scopes: ['read'] }));
    if (created !== null) {
      await expect(ctx.stats, 'key_use', () => ctx.server.client(created.key_id, created.secret, 10_000).balance());
      await expect(ctx.stats, 'key_revoke', () => svc.revokeKey(created.key_id));
    }
    await pause(ctx, rng, 600, 1400);
  }
}

/** Withdrawals requested and finished by the operator; deposits that keep every account funded. */
async function fundingLane(ctx: LoadContext, admin: AdminClient, rng: Rng): Promise<void> {
  const f = ctx.world.funding;
  const c = ctx.server.client(f.keyId, f.secret, 10_000);
  let cwid = rng.int(1, 1_000_000) * 1_000_000;
  while (!ctx.stopped()) {
    const req = { client_withdrawal_id: String(++cwid), amount: String(rng.int(1, 500)), destination: 'soak-destination' };
    const w = await expect(ctx.stats, 'withdraw', () => c.withdraw(req), ['withdrawal_exceeds_available']);
    await pause(ctx, rng, 100, 400);
    if (w !== null) {
      if (rng.chance(0.7)) await expect(ctx.stats, 'withdraw_confirm', () => admin.confirmWithdrawal(w.wid));
      else await expect(ctx.stats, 'withdraw_fail', () => admin.failWithdrawal(w.wid));
    }
    if (rng.chance(0.2)) {
      const to = rng.chance(0.2) ? f : rng.pick(ctx.world.traders);
      const amount = String(rng.int(100_000, 1_000_000));
      const ref = `soak-topup-${rng.int(1, 2 ** 40)}`;
      await expect(ctx.stats, 'deposit', () => admin.deposit(to.account, { amount, ref }));
    }
    await pause(ctx, rng, 400, 900);
  }
}

/** Public reads. */
async function readerLane(ctx: LoadContext, k: SoakKey, rng: Rng): Promise<void> {
  const c = ctx.server.client(k.keyId, k.secret, 10_000);
  const m = ctx.world.market;
  while (!ctx.stopped()) {
    const which = rng.int(0, 4);
    if (which === 0) await expect(ctx.stats, 'read_markets', () => c.markets());
    else if (which === 1) await expect(ctx.stats, 'read_book', () => c.orderbook(m));
    else if (which === 2) await expect(ctx.stats, 'read_trades', () => c.trades(m));
    else if (which === 3) await expect(ctx.stats, 'read_rounds', () => c.rounds({ limit: 20 }));
    else await expect(ctx.stats, 'read_oracle', () => c.oraclePrice());
    await pause(ctx, rng, 100, 300);
  }
}

/** Every lane of the soak; resolves when all of them have stopped. */
export function runLoad(ctx: LoadContext, o: { subscribers?: number; warmupMs?: number }): Promise<void> {
  // The fast start: at most 4 minutes, within the warm-up (5 minutes unless told).
  ctx.fastUntil ??= performance.now() + Math.min(4 * 60_000, 0.8 * (o.warmupMs ?? 5 * 60_000));
  const admin = ctx.server.admin(10_000);
  const { world } = ctx;
  const lanes: Promise<void>[] = [];
  let n = 0;
  const rng = (): Rng => new Rng(ctx.rng.int(1, 2 ** 31 - 1) ^ ++n);
  for (const t of world.traders) lanes.push(traderLane(ctx, t, rng()));
  lanes.push(oracleLane(ctx, admin));
  for (let i = 0; i < (o.subscribers ?? 3); i++) lanes.push(subscriberLane(ctx, world.traders[i % world.traders.length]!, rng()));
  lanes.push(keysLane(ctx, world.traders[0]!, rng()));
  lanes.push(fundingLane(ctx, admin, rng()));
  lanes.push(readerLane(ctx, world.traders[world.traders.length - 1]!, rng()));
  return Promise.all(lanes).then(() => undefined);
}
