// demo: what `npm start` (DX_DEMO=1) runs beside the exchange so that a
// newcomer sees a live market at once: a series of short rounds on a
// simulated oracle, a market maker quoting both ladders around the fair
// price, and a funded trader key with three commands to paste.
//
// It is a client like any other: operator calls over the control plane
// (HTTP, bearer token), the oracle feeder through POST /admin/oracle/ticks,
// the market maker through the signed REST lane. Nothing here reaches into
// the engine, so the demo also shows the public surfaces at work. What it
// created is remembered in <data dir>/demo.json (mode 0600) so that a restart
// (the journal recovers the state) reuses the series and the keys.
// Main thread of the exchange process.

import { existsSync, readFileSync } from 'node:fs';
import { writeSecretFile } from '../lib/secret_file.js';
import { join } from 'node:path';
import { AdminClient } from '../client/admin_client.js';
import { DxClient } from '../client/client.js';
import { DxApiError } from '../client/errors.js';
import type { RoundWithSeq } from '../client/types.js';
import { adminSink, ORACLE_SCALE, probabilityAbove, SimulatedFeeder } from '../oracle/feeder.js';

export interface DemoOptions {
  apiUrl: string;
  adminUrl: string;
  adminToken: string;
  dataDir: string;
  /** Round length, seconds. */
  period_s: number;
  /** Series id of the demo market. Default 1. */
  category?: number;
  /** Market maker re-check interval. Default 1000 ms. */
  quote_ms?: number;
  log: (level: 'info' | 'warn' | 'error', fields: Record<string, unknown>) => void;
}

interface SavedKey {
  account_id: number;
  key_id: number;
  secret: string;
}

interface DemoState {
  category: number;
  market_id: number;
  market_maker: SavedKey;
  trader: SavedKey;
}

export interface RunningDemo {
  category: number;
  market_id: number;
  trader: SavedKey & { key_file: string };
  /** What to print for the newcomer. */
  instructions: string;
  stop(): Promise<void>;
}

const TITLE = 'BTC/USD at or above the strike at round close';
const SIGMA = 0.0005;
const START_PRICE = 65_000;
const MM_DEPOSIT = '100000000'; // $1,000,000.00
const MM_TOP_UP_BELOW = 10_000_000; // $100,000.00
const TRADER_DEPOSIT = '100000'; // $1,000.00
/** Quote ladder of the market maker: ticks away from fair, and size. */
const LEVELS: readonly [number, number][] = [[1, 20], [2, 30], [4, 50]];

function readState(file: string): DemoState | null {
  if (!existsSync(file)) return null;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as DemoState;
  } catch (e) {
    if (e instanceof SyntaxError) return null; // unreadable: start over with new accounts
    throw e;
  }
}

function writeSecretJson(file: string, value: unknown): void {
  writeSecretFile(file, `${JSON.stringify(value, null, 2)}\n`);
}

/** True when the saved key still signs (the exchange may have started from an empty data dir). */
async function keyWorks(apiUrl: string, k: SavedKey | undefined): Promise<boolean> {
  if (!k) return false;
  try {
    await new DxClient({ baseUrl: apiUrl, keyId: k.key_id, secret: k.secret }).balance();
    return true;
  } catch (e) {
    if (e instanceof DxApiError && (e.status === 401 || e.status === 403)) return false;
    throw e;
  }
}

async function newFundedKey(admin: AdminClient, deposit: string, ref: string): Promise<SavedKey> {
  const { account_id } = await admin.createAccount();
  await admin.deposit(account_id, { amount: deposit, ref });
  const k = await admin.createKey(account_id, ['read', 'trade']);
  return { account_id, key_id: k.key_id, secret: k.secret };
}

/**
 * Where the walk starts: the recovered reference price, or, when every source
 * is stale (the exchange was down longer than the staleness limit), the lower
 * median of the sources' last prices; START_PRICE when none ever ticked.
 */
async function walkStart(admin: AdminClient): Promise<number> {
  const known = await admin.oracle();
  const last = known.sources.map((s) => Number(s.price)).sort((a, b) => a - b);
  const from = known.price !== '0' ? Number(known.price) : last.length > 0 ? last[(last.length - 1) >> 1]! : 0;
  return from > 0 ? from / ORACLE_SCALE : START_PRICE;
}

export async function startDemo(o: DemoOptions): Promise<RunningDemo> {
  const admin = new AdminClient({ baseUrl: o.adminUrl, token: o.adminToken });
  const category = o.category ?? 1;
  const stateFile = join(o.dataDir, 'demo.json');
  const saved = readState(stateFile);

  const mmKey =
    saved && (await keyWorks(o.apiUrl, saved.market_maker))
      ? saved.market_maker
      : await newFundedKey(admin, MM_DEPOSIT, 'demo market maker');
  const traderKey =
    saved && (await keyWorks(o.apiUrl, saved.trader)) ? saved.trader : await newFundedKey(admin, TRADER_DEPOSIT, 'demo trader');
  const mm = new DxClient({ baseUrl: o.apiUrl, keyId: mmKey.key_id, secret: mmKey.secret });

  // The oracle first, so the series' first round opens at once; after a
  // restart the walk continues from the recovered prices (walkStart).
  const feeder = new SimulatedFeeder({
    sink: adminSink(admin), sources: [0, 1, 2], interval_ms: 1000, sigma_per_sqrt_s: SIGMA,
    start_price: await walkStart(admin), seed: Date.now() >>> 0,
    onError: (e, t) => o.log('warn', { event: 'demo_oracle_tick_failed', source_id: t.source_id, error: (e as Error).message }),
  });
  await feeder.tickOnce();

  const list = await admin.listSeries();
  let series: { market_id: number; period_s: number } | undefined = list.series.find((s) => s.category === category && s.active);
  if (!series) {
    const fees = await admin.createFeeSchedule({ taker_bps: 700, maker_bps: 0 });
    const r = await admin.createSeries({
      category,
      title: TITLE,
      period_s: o.period_s,
      position_limit: 0,
      fee_schedule_id: fees.fee_schedule_id,
    });
    series = { market_id: r.market_id, period_s: o.period_s };
    o.log('info', {
      event: 'demo',
      action: 'series_created',
      category,
      market_id: r.market_id,
      period_s: o.period_s,
      round_number: r.round_number,
    });
  } else {
    o.log('info', { event: 'demo', action: 'series_reused', category, market_id: series.market_id, period_s: series.period_s });
  }
  const marketId = series.market_id;
  const state: DemoState = { category, market_id: marketId, market_maker: mmKey, trader: traderKey };
  writeSecretJson(stateFile, state);
  const keyFile = join(o.dataDir, 'demo-trader-key.json');
  writeSecretJson(keyFile, { key_id: traderKey.key_id, secret: traderKey.secret, url: o.apiUrl });

  // Started only once nothing above can fail: a demo that cannot start leaves no feeder ticking.
  feeder.start();
  const maker = new MarketMaker(mm, admin, mmKey.account_id, marketId, o.log);
  maker.start(o.quote_ms ?? 1000);

  const instructions = [
    `demo: market ${marketId} "${TITLE}" (series ${category}): ${series.period_s} s rounds; the strike is the oracle price when a round ` +
      `opens,`,
    '      YES pays $1.00 when the oracle price at close is at or above it; a market maker quotes both sides.',
    `demo trader key: key_id ${traderKey.key_id} secret ${traderKey.secret}`,
    `      (funded with $1,000.00; saved in ${keyFile})`,
    'try, in another terminal in this directory:',
    `  export DX_KEY_FILE=${keyFile}`,
    `  npx dx book ${marketId}`.padEnd(44) + '# the order book as a ladder',
    `  npx dx order buy yes ${marketId} 99 5 --tif ioc`.padEnd(44) + '# buy 5 YES at the best asks',
    '  npx dx positions'.padEnd(44) + '# then: npx dx balance, npx dx rounds, npx dx help',
    '',
  ].join('\n');

  return {
    category, market_id: marketId, trader: { ...traderKey, key_file: keyFile }, instructions,
    stop: async () => {
      await maker.stop();
      await feeder.stop();
    },
  };
}

/**
 * Quotes both ladders around the fair value of YES: the probability that the
 * oracle price ends at or above the strike, from the public oracle price,
 * the time left and the feeder's volatility. YES bids sit below fair and NO
 * bids below 100 - fair (YES asks above fair). Re-quotes (cancel-all, then
 * one batch) only when the wanted quotes differ from what rests.
 */
export class MarketMaker {
  private timer: ReturnType<typeof setTimeout> | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;
  private lastError = '';

  constructor(
    private readonly c: DxClient, private readonly admin: AdminClient, private readonly accountId: number,
    private readonly marketId: number, private readonly log: DemoOptions['log'],
  ) {}

  start(everyMs: number): void {
    const loop = (): void => {
      if (this.stopped) return;
      this.running = this.once().catch((e: unknown) => {
        // Keep quoting through transient refusals (a round that froze meanwhile, a shed); say so once.
        const msg = (e as Error).message;
        if (msg !== this.lastError) this.log('warn', { event: 'demo_market_maker', error: msg });
        this.lastError = msg;
      }).finally(() => {
        this.running = null;
        if (!this.stopped) this.timer = setTimeout(loop, everyMs);
      });
    };
    loop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    await this.running;
  }

  /** The quotes wanted now: [outcome, tick, qty], or none when the market is not trading. */
  async wanted(): Promise<{ fair: number; quotes: ['yes' | 'no', number, number][] } | null> {
    let round: RoundWithSeq;
    try {
      round = await this.c.round(this.marketId);
    } catch (e) {
      if (e instanceof DxApiError && e.code === 'round_not_found') return null;
      throw e;
    }
    if (round.status !== 'trading') return null;
    const oracle = await this.c.oraclePrice();
    if (oracle.price === '0') return null;
    const secondsLeft = (Number(BigInt(round.close_ts) / 1_000_000n) - Date.now()) / 1000;
    const p = probabilityAbove(Number(oracle.price), Number(round.strike), SIGMA, secondsLeft);
    const fair = Math.min(97, Math.max(3, Math.round(p * 100)));
    const quotes: ['yes' | 'no', number, number][] = [];
    for (const [d, q] of LEVELS) {
      if (fair - d >= 1) quotes.push(['yes', fair - d, q]);
      if (100 - fair - d >= 1) quotes.push(['no', 100 - fair - d, q]);
    }
    return { fair, quotes };
  }

  async once(): Promise<void> {
    const w = await this.wanted();
    if (w === null) return;
    const live = await this.c.orders({ market_id: this.marketId, status: ['resting', 'partially_filled'], limit: 100 });
    const have = live.orders.map((x) => `${x.outcome}:${x.tick}:${x.remaining_qty}`).sort().join(' ');
    const want = w.quotes.map(([oc, t, q]) => `${oc}:${t}:${q}`).sort().join(' ');
    if (have === want) return;
    const bal = await this.c.balance();
    if (Number(bal.available) + Number(bal.reserved) < MM_TOP_UP_BELOW) {
      // One ref per top-up decision: the balance it was decided on (a deposit is idempotent by account and ref).
      await this.admin.deposit(this.accountId, { amount: MM_DEPOSIT, ref: `demo market maker top-up at seq ${bal.as_of_seq}` });
    }
    if (live.orders.length > 0) await this.c.cancelAll({ market_id: this.marketId });
    await this.c.placeBatch(
      w.quotes.map(([outcome, tick, qty]) => ({ market_id: this.marketId, side: 'buy', outcome, tick, qty, post_only: true })),
    );
  }
}
