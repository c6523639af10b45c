// random_commands: seeded, realistic command streams for the differential
// test. A setup prefix (fee schedules, markets, accounts, deposits, keys,
// oracle ticks, rounds) is followed by a mix weighted toward trading that
// covers every command type, valid and (sometimes) invalid.
//
// The generator looks at a ReferenceModel fed with the stream so far to aim
// its commands (live order ids to cancel, shares to sell, pending withdrawals,
// round states); it never reads the engine. No Math.random: one seeded Rng
// (src/lib/rng.ts) per seed, so a seed names one stream.

import { Outcome, ProposeSource, RoundStatus, Side, Tif, WithdrawalStatus } from '../../src/layout/records.js';
import { decodeRecord, encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { Rng } from '../../src/lib/rng.js';
import { ReferenceModel, type ModelConfig } from './reference_model.js';

/** Small caps so retention, client_order_id freeing and round eviction are exercised. */
export const DIFF_CONFIG: ModelConfig = {
  max_qty: 1000,
  terminal_cap: 8,
  reject_cap: 4,
  round_cap: 3,
  withdrawal_cap: 3,
  revoked_key_cap: 2,
  deposit_ref_cap: 3,
  oracle_staleness_ms: 10_000,
  oracle_quorum: 2,
  dispute_window_ms: 10_000,
  max_orders: 1 << 24,
};

export const COMMAND_NAMES: readonly string[] = [
  'PlaceOrder', 'CancelOrder', 'DecreaseOrder', 'CancelAll', 'ArmDeadman', 'DisarmDeadman', 'ClockTick',
  'CreateAccount', 'DeleteAccount', 'CreateKey', 'RevokeKey', 'Deposit', 'RequestWithdrawal', 'ConfirmWithdrawal',
  'FailWithdrawal', 'CreateFeeSchedule', 'CreateMarket', 'OpenRound', 'FreezeRound', 'UnfreezeRound',
  'ProposeRound', 'DisputeRound', 'SettleRound', 'VoidRound', 'SubmitOracleTick', 'CreateSeries', 'StopSeries', 'SetKeyTier',
];

const MS = 1_000_000n;
const T0 = 1_700_000_000_000_000_000n;
const ORACLE_CENTER = 3_000_000_000_000; // 30,000.00000000

type Fields = Record<string, unknown>;

export interface GeneratorOptions {
  /**
   * Send order and dead-man commands for deleted and never-created accounts
   * too (README.md lists no account check for them). Default true; false
   * narrows the stream, e.g. to look past a known discrepancy.
   */
  inactiveAccountsTrade?: boolean;
  /**
   * Reuse client_order_ids in placements that may be rejected before the
   * duplicate check (unknown market, market not trading, invalid), so that two
   * retained orders of an account can share one id. Default true.
   */
  shareClientOrderIds?: boolean;
}

export class CommandGenerator {
  readonly rng: Rng;
  private clock = T0;
  private lastCmdTs = T0;
  private correlation = 0;
  private readonly setup: (() => RecordObject)[] = [];
  private readonly fair = new Map<number, number>();
  private oracleMid = ORACLE_CENTER;
  private oracleOutage = false;
  private count = 0;
  private readonly coids = new Map<number, bigint[]>();
  /** Per-account counters: different accounts use the same client ids, which must not collide. */
  private readonly coidCounters = new Map<number, bigint>();
  private readonly cwids = new Map<number, { cwid: bigint; amount: number; destination: string }[]>();
  private readonly cwidCounters = new Map<number, bigint>();
  /** Up to 64 earlier deposits, to retry by ref. */
  private readonly deposits: { acct: number; body: { amount: number; ref: string } }[] = [];

  private readonly inactiveTrade: boolean;
  private readonly shareCoids: boolean;

  constructor(seed: number, private readonly model: ReferenceModel, opts: GeneratorOptions = {}) {
    this.rng = new Rng(seed);
    this.inactiveTrade = opts.inactiveAccountsTrade ?? true;
    this.shareCoids = opts.shareClientOrderIds ?? true;
    this.buildSetup();
  }

  // ------------------------------------------------------------ plumbing

  private cmd(type: string, account: number, fields: Fields, opts: { producer?: number; tick?: boolean } = {}): RecordObject {
    const r = this.rng;
    let ts: bigint;
    if (opts.tick) {
      const ms = r.weighted<[number, number]>([[[0, 10], 3], [[10, 500], 4], [[500, 5000], 3]]);
      this.clock += BigInt(r.int(ms[0], ms[1])) * MS + BigInt(r.int(0, 999_999));
      ts = r.chance(0.05) ? this.lastCmdTs : this.clock;
    } else {
      const k = r.weighted<string>([['step', 70], ['equal', 10], ['back', 5], ['jump', 15]]);
      if (k === 'step') this.clock += BigInt(r.int(1, 20)) * MS + BigInt(r.int(0, 999_999));
      else if (k === 'jump') this.clock += BigInt(r.int(20, 300)) * MS;
      ts = k === 'equal' ? this.lastCmdTs : k === 'back' ? this.clock - BigInt(r.int(1, 3)) * MS : this.clock;
    }
    this.lastCmdTs = ts;
    this.correlation = (this.correlation + 1) >>> 0;
    return {
      type, producer: opts.producer ?? (type === 'ClockTick' ? 0 : 100 + r.int(0, 2)), correlation: this.correlation,
      account, seq: 0, ts, ...fields,
    };
  }

  /** Sequencer time the next command will (at least) get. */
  private now(): bigint {
    return this.clock > this.model.ts ? this.clock : this.model.ts + 1n;
  }

  private accountIds(): number[] {
    return [...this.model.accounts.keys()];
  }

  /** An account for order and dead-man commands. */
  private pickTrader(): number {
    if (this.inactiveTrade) return this.rng.chance(0.005) ? 1000 + this.rng.int(0, 2) : this.pickAccount();
    const live = [...this.model.accounts.values()].filter((a) => !a.deleted).map((a) => a.account_id);
    return live.length === 0 ? this.pickAccount() : this.rng.pick(live);
  }

  private isTrader(acct: number): boolean {
    return this.inactiveTrade || this.model.accounts.get(acct)?.deleted !== true;
  }

  private pickAccount(): number {
    const ids = this.accountIds();
    return ids.length === 0 ? 1 : this.rng.pick(ids);
  }

  /** An account id for commands that check it: usually a live one, sometimes deleted or unknown. */
  private pickAccountMaybeBad(): number {
    const r = this.rng;
    const n = this.model.accounts.size;
    if (r.chance(0.04)) return r.chance(0.5) ? 0 : n + r.int(1, 3);
    const live = [...this.model.accounts.values()].filter((a) => !a.deleted).map((a) => a.account_id);
    if (live.length > 0 && r.chance(0.95)) return r.pick(live);
    return this.pickAccount();
  }

  private marketIds(): number[] {
    return [...this.model.markets.keys()];
  }

  private pickMarketForTrading(): number {
    const r = this.rng;
    const ids = this.marketIds();
    if (ids.length === 0 || r.chance(0.03)) return r.chance(0.3) ? 0 : ids.length + r.int(1, 3);
    const trading = ids.filter((id) => this.model.markets.get(id)!.round?.status === RoundStatus.trading);
    if (trading.length > 0 && r.chance(0.93)) return r.pick(trading);
    return r.pick(ids);
  }

  private fairOf(market: number): number {
    let f = this.fair.get(market) ?? 50;
    if (this.rng.chance(0.25)) f = Math.max(15, Math.min(85, f + this.rng.int(-2, 2)));
    this.fair.set(market, f);
    return f;
  }

  // ------------------------------------------------------------ setup prefix

  private buildSetup(): void {
    const r = this.rng;
    const s = this.setup;
    s.push(() => this.cmd('CreateFeeSchedule', 0, { taker_bps: 0, maker_bps: 0 }, { producer: 1 }));
    s.push(() => this.cmd('CreateFeeSchedule', 0, { taker_bps: 700, maker_bps: 200 }, { producer: 1 }));
    s.push(() => this.cmd('CreateFeeSchedule', 0, { taker_bps: 10_001, maker_bps: 0 }, { producer: 1 }));
    s.push(() => this.cmd('CreateFeeSchedule', 0, { taker_bps: 100, maker_bps: 500 }, { producer: 1 }));
    s.push(() =>
      this.cmd('CreateMarket', 0, { category: 7, position_limit: 0, fee_schedule_id: 2, title: 'BTC/USD above strike' }, { producer: 1 }),
    );
    s.push(() =>
      this.cmd(
        'CreateMarket',
        0,
        { category: 8, position_limit: r.int(40, 80), fee_schedule_id: r.pick([1, 3]), title: 'ETH/USD above strike' },
        { producer: 1 },
      ),
    );
    s.push(() =>
      this.cmd('CreateMarket', 0, { category: 9, position_limit: 0, fee_schedule_id: 99, title: 'bad fee schedule' }, { producer: 1 }),
    );
    for (let i = 0; i < 6; i++) s.push(() => this.cmd('CreateAccount', 0, {}, { producer: 1 }));
    for (let a = 1; a <= 6; a++) {
      const amount = a === 6 ? r.int(200, 600) : r.int(20_000, 200_000);
      s.push(() => this.cmd('Deposit', a, { amount, ref: `setup-${a}` }, { producer: 1 }));
    }
    for (let a = 1; a <= 3; a++) s.push(() => this.cmd('CreateKey', a, { scopes: 3, secret: r.hex(32) }, { producer: 1 }));
    for (const src of [0, 1, 2]) s.push(() => this.oracleCmd(src));
    s.push(() => this.openRoundCmd(1, false));
    s.push(() => this.openRoundCmd(2, false));
    // A series from the start, so automated rounds cycle in every stream.
    s.push(() =>
      this.cmd(
        'CreateSeries',
        0,
        { category: 20, position_limit: 0, fee_schedule_id: 2, period_s: r.int(5, 30), title: 'BTC/USD series' },
        { producer: 1 },
      ),
    );
  }

  // ------------------------------------------------------------ the stream

  next(): RecordObject {
    this.count++;
    const setup = this.setup.shift();
    if (setup) return setup();
    if (this.count % 150 === 0) this.oracleOutage = this.rng.chance(0.3);
    const kind = this.rng.weighted<string>([
      ['place', 46], ['cancel', 8], ['decrease', 4], ['cancelAll', 1.5], ['arm', 1.5], ['disarm', 1],
      ['tick', 10], ['round', 5], ['oracle', 5], ['deposit', 3], ['withdraw', 2], ['finish', 1.5],
      ['createAccount', 0.2], ['deleteAccount', 0.05], ['createKey', 1], ['revokeKey', 1], ['keyTier', 0.5],
      ['feeSchedule', 0.1], ['market', 0.08], ['series', 0.15],
    ]);
    switch (kind) {
      case 'place': return this.place();
      case 'cancel': return this.cancelOrDecrease(false);
      case 'decrease': return this.cancelOrDecrease(true);
      case 'cancelAll': return this.cancelAll();
      case 'arm':
        return this.cmd('ArmDeadman', this.pickTrader(), {
          timeout_ms: this.rng.chance(0.7) ? this.rng.int(1000, 8000) : this.rng.int(1000, 60_000),
        });
      case 'disarm': return this.cmd('DisarmDeadman', this.pickTrader(), {});
      case 'tick': return this.cmd('ClockTick', 0, {}, { tick: true });
      case 'round': return this.roundOp();
      case 'oracle': return this.oracleOutage && this.rng.chance(0.8) ? this.cmd('ClockTick', 0, {}, { tick: true }) : this.oracleCmd();
      case 'deposit': return this.depositCmd();
      case 'withdraw': return this.withdrawCmd();
      case 'finish': return this.finishCmd();
      case 'createAccount': return this.cmd('CreateAccount', 0, {}, { producer: 1 });
      case 'deleteAccount':
        return this.cmd('DeleteAccount', this.rng.chance(0.8) ? this.pickAccount() : this.pickAccountMaybeBad(), {}, { producer: 1 });
      case 'createKey':
        return this.cmd('CreateKey', this.pickAccountMaybeBad(), { scopes: this.rng.int(1, 7), secret: this.rng.hex(32) }, { producer: 1 });
      case 'revokeKey': return this.revokeKeyCmd();
      case 'keyTier': return this.keyTierCmd();
      case 'feeSchedule': {
        const bad = this.rng.chance(0.25);
        return this.cmd('CreateFeeSchedule', 0, {
          taker_bps: bad && this.rng.chance(0.5) ? this.rng.int(10_001, 65_535) : this.rng.int(0, 1000),
          maker_bps: bad ? this.rng.int(10_001, 65_535) : this.rng.int(0, 10_000),
        }, { producer: 1 });
      }
      case 'series': return this.seriesCmd();
      case 'market': return this.cmd('CreateMarket', 0, {
        category: this.rng.int(0, 65_535), position_limit: this.rng.chance(0.5) ? 0 : this.rng.int(10, 500),
        fee_schedule_id: this.rng.int(0, this.model.feeSchedules.size + 1), title: `market ${this.count}`,
      }, { producer: 1 });
    }
    throw new Error(`random_commands: kind ${kind}`);
  }

  // ------------------------------------------------------------ orders

  private newCoid(acct: number): bigint {
    const n = (this.coidCounters.get(acct) ?? 0n) + 1n;
    this.coidCounters.set(acct, n);
    const id = this.rng.chance(0.2) ? (1n << 60n) + n : n;
    const list = this.coids.get(acct) ?? [];
    list.push(id);
    if (list.length > 24) list.shift();
    this.coids.set(acct, list);
    return id;
  }

  private place(): RecordObject {
    const r = this.rng;
    const m = this.model;
    const acct = this.pickTrader();
    const market = this.pickMarketForTrading();
    const fair = this.fairOf(market);
    let side: number = Side.buy;
    let outcome: number = r.int(0, 1);
    const freeYes = m.peekPosition(acct, market, Outcome.yes).free;
    const freeNo = m.peekPosition(acct, market, Outcome.no).free;
    if ((freeYes > 0 || freeNo > 0) && r.chance(0.45)) {
      side = Side.sell;
      outcome = freeYes > 0 && (freeNo === 0 || r.chance(0.5)) ? Outcome.yes : Outcome.no;
    } else if (r.chance(0.04)) {
      side = Side.sell;
    }
    const own = outcome === Outcome.yes ? fair : 100 - fair;
    const tick = Math.max(1, Math.min(99, own + (side === Side.buy ? r.int(-5, 6) : r.int(-6, 5))));
    let qty: number;
    if (side === Side.sell) {
      const free = outcome === Outcome.yes ? freeYes : freeNo;
      qty = free > 0 && r.chance(0.85) ? r.int(1, free) : free + r.int(1, 5);
    } else {
      const [lo, hi] = r.weighted<[number, number]>([
        [[1, 10], 60],
        [[10, 40], 30],
        [[40, 150], 9],
        [[DIFF_CONFIG.max_qty >> 1, DIFF_CONFIG.max_qty], 1],
      ]);
      qty = r.int(lo, hi);
    }
    const tif = r.weighted<number>([[Tif.gtc, 45], [Tif.gtd, 15], [Tif.ioc, 20], [Tif.fok, 20]]);
    const now = this.now();
    let expiry = 0n;
    if (tif === Tif.gtd) {
      expiry = r.chance(0.04) ? now - BigInt(r.int(0, 50)) * MS : now + BigInt(r.int(100, 20_000)) * MS;
    }
    const postOnly = (tif === Tif.gtc || tif === Tif.gtd) && r.chance(0.12) ? 1 : 0;
    const stp = r.int(0, 2);
    let hasCoid = 0;
    let coid = 0n;
    let reused = false;
    if (r.chance(0.35)) {
      hasCoid = 1;
      const prev = this.coids.get(acct);
      const tradingMarket = m.markets.get(market)?.round?.status === RoundStatus.trading;
      reused = prev !== undefined && prev.length > 0 && (this.shareCoids || tradingMarket) && r.chance(0.25);
      coid = reused ? r.pick(prev!.slice(-4)) : this.newCoid(acct);
    }
    let hasMax = 0;
    let maxCost = 0;
    let finalTif = tif;
    let finalPostOnly = postOnly;
    let finalExpiry = expiry;
    if (side === Side.buy && r.chance(0.1)) {
      hasMax = 1;
      finalTif = r.pick([Tif.gtc, Tif.ioc, Tif.fok]);
      finalPostOnly = 0;
      finalExpiry = 0n;
      maxCost = r.chance(0.25) ? r.int(1, Math.max(1, tick - 1)) : r.int(tick, qty * (tick + 3));
    }
    const f: Fields = {
      market_id: market, qty, group_id: r.chance(0.5) ? 0 : r.int(1, 3), tick, side, outcome, tif: finalTif, stp,
      post_only: finalPostOnly, has_client_order_id: hasCoid, has_max_cost: hasMax, client_order_id: coid,
      expiry_ts: finalExpiry, max_cost: maxCost,
    };
    if (r.chance(0.025) && (this.shareCoids || !reused)) this.corruptPlacement(f, now);
    return this.cmd('PlaceOrder', acct, f);
  }

  /** Makes the placement fail invalid_command in one of the ways README lists. */
  private corruptPlacement(f: Fields, now: bigint): void {
    const r = this.rng;
    switch (r.int(0, 13)) {
      case 0: f.tick = 0; break;
      case 1: f.tick = r.int(100, 255); break;
      case 2: f.qty = 0; break;
      case 3: f.qty = DIFF_CONFIG.max_qty + r.int(1, 100); break;
      case 4: f.side = r.int(2, 255); break;
      case 5: f.outcome = r.int(2, 255); break;
      case 6: f.tif = r.int(4, 255); f.expiry_ts = 0n; break;
      case 7: f.stp = r.int(3, 255); break;
      case 8: f.post_only = 1; f.tif = r.pick([Tif.ioc, Tif.fok]); f.expiry_ts = 0n; f.has_max_cost = 0; f.max_cost = 0; break;
      case 9: f.tif = Tif.gtd; f.expiry_ts = 0n; f.has_max_cost = 0; f.max_cost = 0; break;
      case 10: f.tif = r.pick([Tif.gtc, Tif.ioc, Tif.fok]); f.expiry_ts = now + 5000n * MS; break;
      case 11: f.side = Side.sell; f.has_max_cost = 1; f.max_cost = r.int(1, 5000); break;
      case 12:
        f.side = Side.buy; f.tif = Tif.gtc; f.expiry_ts = 0n; f.post_only = 1; f.has_max_cost = 1; f.max_cost = r.int(1, 5000);
        break;
      case 13:
        f.side = Side.buy; f.tif = Tif.gtd; f.expiry_ts = now + 5000n * MS; f.post_only = 0;
        f.has_max_cost = 1; f.max_cost = r.int(1, 5000);
        break;
    }
  }

  private cancelOrDecrease(decrease: boolean): RecordObject {
    const r = this.rng;
    const live = [...this.model.live.values()].filter((o) => this.isTrader(o.account));
    let acct: number;
    let id: number;
    let remaining = 5;
    const k = r.float();
    if (live.length > 0 && k < 0.72) {
      const o = r.pick(live);
      acct = o.account;
      id = o.order_id;
      remaining = o.remaining;
    } else if (live.length > 0 && k < 0.84) {
      const o = r.pick(live);
      const others = this.accountIds().filter((a) => a !== o.account && this.isTrader(a));
      acct = others.length > 0 ? r.pick(others) : o.account + 1;
      id = o.order_id;
    } else {
      acct = this.pickTrader();
      id = r.int(1, this.model.seq + 3);
    }
    if (!decrease) return this.cmd('CancelOrder', acct, { order_id: id });
    const newQty = r.weighted<number>([
      [0, 25],
      [remaining > 1 ? r.int(1, remaining - 1) : 1, 45],
      [remaining + r.int(0, 5), 30],
    ]);
    return this.cmd('DecreaseOrder', acct, { order_id: id, new_qty: newQty });
  }

  private cancelAll(): RecordObject {
    const r = this.rng;
    const withOrders = [...new Set([...this.model.live.values()].map((o) => o.account))].filter((a) => this.isTrader(a));
    const acct = withOrders.length > 0 && r.chance(0.8) ? r.pick(withOrders) : this.pickTrader();
    const market = r.chance(0.5) ? 0 : r.int(1, this.model.markets.size + 1);
    const group = r.chance(0.6) ? 0 : r.int(1, 3);
    return this.cmd('CancelAll', acct, { market_id: market, group_id: group });
  }

  // ------------------------------------------------------------ rounds and oracle

  private openRoundCmd(market: number, allowBad: boolean): RecordObject {
    const r = this.rng;
    const now = this.now();
    const close = allowBad && r.chance(0.06) ? now - BigInt(r.int(1, 2000)) * MS : now + BigInt(r.int(15_000, 90_000)) * MS;
    const strike = Math.round(this.oracleMid * (1 + (r.float() - 0.5) * 0.004));
    return this.cmd('OpenRound', 0, { market_id: market, strike, close_ts: close }, { producer: 1 });
  }

  private roundOp(): RecordObject {
    const r = this.rng;
    const ids = this.marketIds();
    if (ids.length === 0 || r.chance(0.03)) {
      const bad = ids.length + r.int(1, 3);
      return r.chance(0.5)
        ? this.openRoundCmd(bad, true)
        : this.cmd(r.pick(['FreezeRound', 'VoidRound', 'SettleRound']), 0, { market_id: bad }, { producer: 1 });
    }
    const closed = ids.filter((id) => {
      const rd = this.model.markets.get(id)!.round;
      return !rd || rd.status === RoundStatus.settled || rd.status === RoundStatus.void;
    });
    const market = closed.length > 0 && r.chance(0.85) ? r.pick(closed) : r.pick(ids);
    const rd = this.model.markets.get(market)!.round;
    const st = rd && rd.status !== RoundStatus.settled && rd.status !== RoundStatus.void ? rd.status : RoundStatus.none;
    let op: string;
    if (st === RoundStatus.none)
      op = r.weighted([
        ['OpenRound', 88],
        ['FreezeRound', 3],
        ['ProposeRound', 3],
        ['SettleRound', 3],
        ['UnfreezeRound', 3],
      ]);
    else if (st === RoundStatus.trading)
      op = r.weighted([
        ['FreezeRound', 30],
        ['VoidRound', 8],
        ['UnfreezeRound', 8],
        ['ProposeRound', 8],
        ['SettleRound', 6],
        ['DisputeRound', 6],
        ['OpenRound', 8],
      ]);
    else if (st === RoundStatus.frozen)
      op = r.weighted([
        ['UnfreezeRound', 30],
        ['ProposeRound', 40],
        ['VoidRound', 10],
        ['DisputeRound', 5],
        ['FreezeRound', 5],
        ['SettleRound', 5],
        ['OpenRound', 5],
      ]);
    else
      op = r.weighted([
        ['SettleRound', 35],
        ['DisputeRound', 35],
        ['VoidRound', 12],
        ['ProposeRound', 6],
        ['UnfreezeRound', 6],
        ['OpenRound', 6],
      ]);
    if (op === 'OpenRound') return this.openRoundCmd(market, true);
    if (op === 'ProposeRound') {
      const source = r.weighted<number>([[ProposeSource.oracle, 50], [ProposeSource.yes, 25], [ProposeSource.no, 25]]);
      return this.cmd('ProposeRound', 0, { market_id: market, source }, { producer: 1 });
    }
    return this.cmd(op, 0, { market_id: market }, { producer: 1 });
  }

  private oracleCmd(source?: number): RecordObject {
    const r = this.rng;
    this.oracleMid = Math.max(1_000_000_000_000, Math.round(this.oracleMid * (1 + (r.float() - 0.5) * 0.002)));
    const src = source ?? r.weighted<number>([[0, 40], [1, 35], [2, 20], [3, 4], [r.int(4, 63), 1]]);
    const price = Math.max(1, Math.round(this.oracleMid * (1 + (r.float() - 0.5) * 0.003)));
    return this.cmd('SubmitOracleTick', 0, { source_id: src, price }, { producer: 1 });
  }

  /** CreateSeries (sometimes a duplicate, a bad period or fee schedule) or StopSeries (sometimes of no series). */
  private seriesCmd(): RecordObject {
    const r = this.rng;
    const active = [...this.model.markets.values()].filter((m) => m.series_active).map((m) => m.category);
    if (r.chance(0.4)) {
      const category = active.length > 0 && r.chance(0.85) ? r.pick(active) : r.int(21, 24);
      return this.cmd('StopSeries', 0, { category }, { producer: 1 });
    }
    const k = r.float();
    const category = k < 0.3 && active.length > 0 ? r.pick(active) : r.int(20, 24);
    const period = k > 0.95 ? r.pick([0, 2_592_001, 4_000_000_000]) : r.int(2, 40);
    const fee = r.chance(0.05) ? this.model.feeSchedules.size + r.int(1, 3) : r.int(0, this.model.feeSchedules.size);
    return this.cmd('CreateSeries', 0, {
      category, position_limit: r.chance(0.5) ? 0 : r.int(20, 200), fee_schedule_id: fee, period_s: period, title: `series ${this.count}`,
    }, { producer: 1 });
  }

  // ------------------------------------------------------------ funding and keys

  private depositCmd(): RecordObject {
    const r = this.rng;
    const acct = this.pickAccountMaybeBad();
    // Now and then a whale deposit, so cash passes 2^32 cents; rarely one past the deposit limit (refused: the setup deposited).
    const whale = r.chance(0.02) ? r.int(2 ** 32, 2 ** 41) : r.chance(0.01) ? Number.MAX_SAFE_INTEGER : 0;
    const amount = r.chance(0.03) ? 0 : whale > 0 ? whale : r.int(1_000, 50_000);
    // Now and then a retry of an earlier deposit by its ref (the same amount: credited once), the ref again with
    // another amount (duplicate_deposit_ref), or no ref (never matched).
    const k = r.float();
    const earlier = this.deposits.length > 0 ? this.deposits[r.int(0, this.deposits.length - 1)]! : undefined;
    if (earlier !== undefined && k < 0.1) return this.cmd('Deposit', earlier.acct, earlier.body, { producer: 1 });
    if (earlier !== undefined && k < 0.13) {
      return this.cmd('Deposit', earlier.acct, { amount: Math.max(1, earlier.body.amount - 1), ref: earlier.body.ref }, { producer: 1 });
    }
    const body = { amount, ref: k < 0.16 ? '' : `dep-${this.count}` };
    if (this.deposits.length < 64) this.deposits.push({ acct, body });
    else this.deposits[r.int(0, 63)] = { acct, body };
    return this.cmd('Deposit', acct, body, { producer: 1 });
  }

  private withdrawCmd(): RecordObject {
    const r = this.rng;
    const acct = this.pickAccountMaybeBad();
    const prev = this.cwids.get(acct) ?? [];
    if (prev.length > 0 && r.chance(0.25)) {
      const p = r.pick(prev);
      if (r.chance(0.6))
        return this.cmd('RequestWithdrawal', acct, { client_withdrawal_id: p.cwid, amount: p.amount, destination: p.destination });
      const changeAmount = r.chance(0.5);
      return this.cmd('RequestWithdrawal', acct, {
        client_withdrawal_id: p.cwid,
        amount: changeAmount ? p.amount + r.int(1, 100) : p.amount,
        destination: changeAmount ? p.destination : `${p.destination}-x`,
      });
    }
    const available = this.model.accounts.get(acct)?.available ?? 0;
    let amount: number;
    const k = r.float();
    if (k < 0.03) amount = 0;
    else if (k < 0.23) amount = available + r.int(1, 1000);
    else amount = r.int(1, Math.max(1, Math.floor(available / 2)));
    const n = (this.cwidCounters.get(acct) ?? 0n) + 1n;
    this.cwidCounters.set(acct, n);
    const cwid = r.chance(0.3) ? (1n << 62n) + n : n;
    const destination = `addr-${acct}-${r.int(0, 3)}`;
    prev.push({ cwid, amount, destination });
    this.cwids.set(acct, prev);
    return this.cmd('RequestWithdrawal', acct, { client_withdrawal_id: cwid, amount, destination });
  }

  private finishCmd(): RecordObject {
    const r = this.rng;
    const all = [...this.model.withdrawals.values()];
    const pending = all.filter((w) => w.status === WithdrawalStatus.pending);
    let wid: number;
    if (pending.length > 0 && r.chance(0.75)) wid = r.pick(pending).wid;
    else if (all.length > 0 && r.chance(0.6)) wid = r.pick(all).wid;
    else wid = all.length + r.int(1, 3);
    return this.cmd(r.chance(0.6) ? 'ConfirmWithdrawal' : 'FailWithdrawal', 0, { wid }, { producer: 1 });
  }

  /** Named and custom tiers on live, revoked and unknown keys, now and then with figures out of range. */
  private keyTierCmd(): RecordObject {
    const r = this.rng;
    const keys = [...this.model.keys.values()];
    const key_id = keys.length === 0 || r.chance(0.1) ? keys.length + r.int(1, 3) : r.pick(keys).key_id;
    const tier = r.chance(0.05) ? r.int(4, 255) : r.int(0, 3);
    const bad = r.chance(0.15);
    const figure = (): number =>
      tier === 3 ? (bad && r.chance(0.3) ? r.pick([0, 10_000_001]) : r.int(1, 10_000_000)) : bad && r.chance(0.3) ? r.int(1, 100) : 0;
    return this.cmd('SetKeyTier', 0, {
      key_id, tier, read_rate_per_s: figure(), read_burst: figure(), write_rate_per_s: figure(), write_burst: figure(),
    }, { producer: 1 });
  }

  private revokeKeyCmd(): RecordObject {
    const r = this.rng;
    const keys = [...this.model.keys.values()];
    if (keys.length === 0 || r.chance(0.1))
      return this.cmd('RevokeKey', r.chance(0.5) ? 0 : this.pickAccount(), { key_id: keys.length + r.int(1, 3) });
    const k = r.pick(keys);
    const who = r.weighted<string>([['owner', 50], ['operator', 30], ['other', 20]]);
    let hdr = k.account_id;
    if (who === 'operator') hdr = 0;
    else if (who === 'other') {
      const others = this.accountIds().filter((a) => a !== k.account_id);
      hdr = others.length > 0 ? r.pick(others) : k.account_id + 1;
    }
    return this.cmd('RevokeKey', hdr, { key_id: k.key_id }, { producer: hdr === 0 ? 1 : 100 });
  }
}

/** The stream for a seed; a ReferenceModel with DIFF_CONFIG is run alongside to aim the commands. */
export function generateCommands(seed: number, count: number, opts: GeneratorOptions = {}): RecordObject[] {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(seed, model, opts);
  const out: RecordObject[] = [];
  for (let i = 0; i < count; i++) {
    // Through the codec, so the model sees what an engine would read.
    const c = decodeRecord(encodeToMem(gen.next()).mem, 0);
    model.execute(c);
    out.push(c);
  }
  return out;
}
