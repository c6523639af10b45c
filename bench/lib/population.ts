// population: the exchange a benchmark loads (a child process from the
// launcher, test/support/exchange.ts) and the trading population its load
// run needs, built through the control plane and the client library:
// markets with a trading round, funded accounts with one key each, and seed
// shares minted so that sells are real placements. Main thread of the bench
// runner.

import type { AdminClient } from '../../src/client/admin_client.js';
import { DxClient } from '../../src/client/client.js';
import type { Placement } from '../../src/client/types.js';
import { spawnExchange, type ExchangeProcess, type ProcessConfig } from '../../test/support/exchange.js';
import { UNTHROTTLED } from './tiers.js';

/**
 * The exchange as its own process for a benchmark. Its log keeps only
 * warnings and worse: the setup makes thousands of operator actions, each
 * logged at info. A start that fails is tried again (three times in all).
 * The demo (a market maker and an oracle feeding the exchange) is off: a
 * benchmark measures the exchange under its own stated load only, so one
 * that wants the demo's traffic must say `demo: true`. (Until 2026-11-25 the
 * benchmarks started here ran with the demo on, as the exchange's default.)
 */
export function startBenchExchange(cfg: ProcessConfig, nodeArgs?: string[], script?: string): Promise<ExchangeProcess> {
  return spawnExchange({ demo: false, ...cfg }, { logLevel: 'warn', nodeArgs, script, attempts: 3, readyTimeoutMs: 30_000 });
}

// ------------------------------------------------------------------ population

/** Runs `fn` over 0..n-1 with at most `concurrency` calls in flight; rejects on the first failure. */
export async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const lanes: Promise<void>[] = [];
  for (let l = 0; l < Math.min(concurrency, n); l++) {
    lanes.push((async () => {
      for (let i = next++; i < n; i = next++) out[i] = await fn(i);
    })());
  }
  await Promise.all(lanes);
  return out;
}

/** One market with a round in `trading`, closing `closeInMs` from now. No fees, no position limit. */
export async function openMarket(admin: AdminClient, closeInMs = 3_600_000): Promise<number> {
  const { market_id } = await admin.createMarket({
    title: 'bench: gateway placements',
    category: 0,
    position_limit: 0,
    fee_schedule_id: 0,
  });
  const closeNs = BigInt(Date.now() + closeInMs) * 1_000_000n;
  await admin.openRound(market_id, { strike: '100000000', close_ts: closeNs.toString() });
  return market_id;
}

export interface Trader {
  account_id: number;
  key_id: number;
  /** base64 of the 32 secret bytes. */
  secret: string;
}

export interface TraderOptions {
  /** Cents deposited on each account. */
  deposit_cents: number;
  /**
   * YES and NO shares each account holds before the run, so that sells are
   * real placements rather than insufficient_position rejects. 0: none.
   */
  seed_shares: number;
  /** Market the seed shares are minted in. */
  market_id: number;
  /** Requests in flight during the setup. */
  concurrency?: number;
  /** Timeout of each control-plane call of the setup; default 30 s. */
  adminTimeoutMs?: number;
  /**
   * Put every key on a custom rate tier that never throttles (tiers.ts):
   * a benchmark then measures the request path, not 429s, whatever its
   * connections per key; the bucket is still taken on every request.
   */
  unthrottled?: boolean;
}

export interface TraderSetup {
  traders: Trader[];
  setup_ms: number;
  /** Shares minted per outcome over all accounts (checks the seeding filled). */
  minted_per_outcome: number;
}

/**
 * n accounts, each with one read+trade key and a deposit, created
 * concurrently through the control plane; then, when seed_shares > 0, every
 * account buys seed_shares YES and seed_shares NO at tick 50 against another
 * account's opposite buy (a mint), in four waves so every wave crosses the
 * one before it exactly (same price, equal totals) and the book is empty
 * afterwards. n is rounded up to an even number for that pairing.
 */
export async function createTraders(ex: ExchangeProcess, n: number, opts: TraderOptions): Promise<TraderSetup> {
  const t0 = performance.now();
  const count = opts.seed_shares > 0 ? n + (n % 2) : n;
  const conc = opts.concurrency ?? 32;
  const admin = ex.admin(opts.adminTimeoutMs ?? 30_000);
  const traders = await pool(count, conc, async (): Promise<Trader> => {
    const { account_id } = await admin.createAccount();
    await admin.deposit(account_id, { amount: String(opts.deposit_cents), ref: 'bench' });
    const k = await admin.createKey(account_id, ['read', 'trade']);
    if (opts.unthrottled === true) await admin.setKeyTier(k.key_id, { tier: 'custom', read: UNTHROTTLED, write: UNTHROTTLED });
    return { account_id, key_id: k.key_id, secret: k.secret };
  });
  let minted = 0;
  if (opts.seed_shares > 0) {
    const clients = traders.map((t) => new DxClient({ baseUrl: ex.base, keyId: t.key_id, secret: t.secret, timeoutMs: 30_000 }));
    const q = opts.seed_shares;
    const wave = async (parity: number, outcome: 'yes' | 'no', expectFilled: boolean): Promise<number> => {
      const idx = clients.map((_c, i) => i).filter((i) => i % 2 === parity);
      const placed = await pool(idx.length, conc, (j) =>
        clients[idx[j]!]!.placeOrder({ market_id: opts.market_id, side: 'buy', outcome, tick: 50, qty: q }));
      let filled = 0;
      for (const p of placed as Placement[]) {
        if (expectFilled && p.status !== 'filled')
          throw new Error(`seeding: a crossing buy ended ${p.status} (filled ${p.filled_qty}/${q})`);
        filled += p.filled_qty;
      }
      return filled;
    };
    await wave(0, 'yes', false); // even accounts bid YES 50: rests
    minted += await wave(1, 'no', true); // odd accounts bid NO 50: mints against them
    await wave(1, 'yes', false);
    minted += await wave(0, 'no', true);
    // Waves 2 and 4 each fill count/2 * q: every account now holds q YES and q NO.
    if (minted !== count * q) throw new Error(`seeding: minted ${minted} shares per outcome, expected ${count * q}`);
  }
  return { traders, setup_ms: Math.round(performance.now() - t0), minted_per_outcome: minted };
}
