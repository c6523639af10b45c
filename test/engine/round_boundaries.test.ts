// Round boundaries: the engine against the reference model on seeded
// streams aimed at the times where rounds change state: a round's close_ts,
// the end of a proposal's dispute window, an oracle source's staleness and a
// gtd order's expiry, each hit at -1, 0 and +1 ns (and gtd orders expiring
// 1 or 2 ns after another deadline), with clock jumps of
// seconds and minutes and commands stamped in the past. The dispute window
// (0, 1 ms or more), the quorum, the staleness and round_cap vary per seed.
// After every command: no maker filled at or past its expiry or its round's
// close, no order live past its expiry, the event bytes equal the model's, and verify()
// (money: cash + reserved + 100 per open pair + fees == deposits -
// withdrawals) holds on the engine and on a read model folded from its
// events. Every RESTART_EVERY commands, a restart: the read model's snapshot
// is decoded into a matching-only engine that must then write the same bytes
// as the uninterrupted one, and the rounds pages and each market's current
// round equal the model's. Run alone: `node --test
// dist/test/engine/round_boundaries.test.js`. Test process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { verify } from '../../src/engine/verify.js';
import { summarize } from '../../src/engine/summary.js';
import { Views } from '../../src/views/views.js';
import { decodeViews, encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { checks } from '../../src/lib/assert.js';
import { memOf } from '../../src/lib/mem.js';
import { decodeRecord, encodeRecord, encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { Rng } from '../../src/lib/rng.js';
import { ProposeSource, RoundStatus, Side, Tif, WithdrawalStatus } from '../../src/layout/records.js';
import { ReferenceModel, type ModelConfig } from '../support/reference_model.js';

const MS = 1_000_000n;
const T0 = 1_700_000_000_000_000_000n;
const RESTART_EVERY = 400;

/** The operator's round commands by the round's status (0: none, or ended), with weights. */
const ROUND_OPS: Record<number, [string, number][]> = {
  0: [['OpenRound', 90], ['SettleRound', 5], ['VoidRound', 5]],
  [RoundStatus.trading]: [['FreezeRound', 30], ['VoidRound', 10], ['SettleRound', 5], ['ProposeRound', 5], ['UnfreezeRound', 3]],
  [RoundStatus.frozen]: [['ProposeRound', 40], ['UnfreezeRound', 25], ['VoidRound', 10], ['SettleRound', 5], ['FreezeRound', 3]],
  [RoundStatus.proposed]: [['SettleRound', 35], ['DisputeRound', 35], ['VoidRound', 15], ['ProposeRound', 5], ['FreezeRound', 3]],
};

function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
}

class Gen {
  clock = T0;
  corr = 0;
  n = 0;
  mid = 3_000_000_000_000;
  fair = new Map<number, number>();
  setup: (() => RecordObject)[] = [];
  constructor(readonly r: Rng, readonly m: ReferenceModel, readonly cfg: ModelConfig, readonly accounts: number) {
    const s = this.setup;
    s.push(() => this.c('CreateFeeSchedule', 0, { taker_bps: 700, maker_bps: 200 }));
    s.push(() => this.c('CreateFeeSchedule', 0, { taker_bps: 100, maker_bps: 500 }));
    s.push(() => this.c('CreateMarket', 0, { category: 1, position_limit: 0, fee_schedule_id: 1, title: 'm1' }));
    s.push(() => this.c('CreateMarket', 0, { category: 2, position_limit: 0, fee_schedule_id: 0, title: 'm2' }));
    for (let a = 1; a <= accounts; a++) s.push(() => this.c('CreateAccount', 0, {}));
    for (let a = 1; a <= accounts; a++) s.push(() => this.c('Deposit', a, { amount: this.r.int(5_000, 100_000), ref: `d${a}` }));
    for (const src of [0, 1, 2]) s.push(() => this.oracle(src));
    s.push(() => this.openRound(1));
    s.push(() => this.openRound(2));
    s.push(() => this.series(20, 2, this.r.int(2, 20), 's20'));
    s.push(() => this.series(21, 1, this.r.int(1, 8), 's21'));
  }

  /** A command at ts chosen by the time strategy. */
  c(type: string, account: number, f: Record<string, unknown>): RecordObject {
    const r = this.r;
    const k = r.weighted<string>([['step', 60], ['boundary', 25], ['same', 5], ['jump', 6], ['bigjump', 1], ['back', 3]]);
    let ts: bigint;
    if (k === 'boundary') {
      const targets = this.targets();
      if (targets.length > 0) {
        const t = r.pick(targets) + BigInt(r.int(-1, 1));
        ts = t;
        if (t > this.clock) this.clock = t;
      } else {
        this.clock += BigInt(r.int(1, 50)) * MS;
        ts = this.clock;
      }
    } else if (k === 'step') {
      this.clock += BigInt(r.int(1, 60)) * MS + BigInt(r.int(0, 999_999));
      ts = this.clock;
    } else if (k === 'jump') {
      this.clock += BigInt(r.int(1000, 15_000)) * MS;
      ts = this.clock;
    } else if (k === 'bigjump') {
      this.clock += BigInt(r.int(60_000, 600_000)) * MS;
      ts = this.clock;
    } else if (k === 'back') {
      ts = this.clock - BigInt(r.int(1, 5000)) * MS;
    } else ts = this.clock;
    this.corr = (this.corr + 1) >>> 0;
    return { type, producer: account === 0 ? 1 : 100, correlation: this.corr, account, seq: 0, ts, ...f };
  }

  /** Times at which something falls due. */
  targets(): bigint[] {
    const out: bigint[] = [];
    const m = this.m;
    for (const mk of m.markets.values()) {
      const rd = mk.round;
      if (!rd) continue;
      if (rd.status === RoundStatus.trading || rd.status === RoundStatus.frozen) out.push(rd.close_ts);
      if (rd.status === RoundStatus.proposed) out.push(rd.proposed_ts + BigInt(this.cfg.dispute_window_ms) * MS);
    }
    for (const s of m.oracle.values()) if (!s.expired) out.push(s.ts + BigInt(this.cfg.oracle_staleness_ms) * MS);
    for (const o of m.live.values()) {
      const e = (o as unknown as { expiry_ts?: bigint }).expiry_ts;
      if (typeof e === 'bigint' && e > 0n) out.push(e);
    }
    return out;
  }

  series(category: number, feeSchedule: number, periodS: number, title: string): RecordObject {
    return this.c('CreateSeries', 0, { category, position_limit: 0, fee_schedule_id: feeSchedule, period_s: periodS, title });
  }

  openRound(market: number): RecordObject {
    const close = (this.clock > this.m.ts ? this.clock : this.m.ts) + BigInt(this.r.int(2000, 40_000)) * MS + BigInt(this.r.int(0, 3));
    const strike = Math.round(this.mid * (1 + (this.r.float() - 0.5) * 0.004));
    return this.c('OpenRound', 0, { market_id: market, strike, close_ts: close });
  }

  oracle(src?: number): RecordObject {
    this.mid = Math.max(1_000_000_000_000, Math.round(this.mid * (1 + (this.r.float() - 0.5) * 0.004)));
    const s = src ?? this.r.weighted<number>([[0, 40], [1, 35], [2, 25]]);
    return this.c('SubmitOracleTick', 0, { source_id: s, price: Math.round(this.mid * (1 + (this.r.float() - 0.5) * 0.003)) });
  }

  place(): RecordObject {
    const r = this.r;
    const m = this.m;
    const acct = r.int(1, this.accounts);
    const markets = [...m.markets.keys()];
    const trading = markets.filter((id) => m.markets.get(id)!.round?.status === RoundStatus.trading);
    const market = trading.length > 0 && r.chance(0.9) ? r.pick(trading) : r.pick(markets);
    let f = this.fair.get(market) ?? 50;
    if (r.chance(0.3)) f = Math.max(5, Math.min(95, f + r.int(-3, 3)));
    this.fair.set(market, f);
    let side: number = Side.buy;
    let outcome = r.int(0, 1);
    const py = m.peekPosition(acct, market, 0).free;
    const pn = m.peekPosition(acct, market, 1).free;
    if ((py > 0 || pn > 0) && r.chance(0.45)) {
      side = Side.sell;
      outcome = py > 0 && (pn === 0 || r.chance(0.5)) ? 0 : 1;
    }
    const own = outcome === 0 ? f : 100 - f;
    const tick = Math.max(1, Math.min(99, own + (side === Side.buy ? r.int(-4, 5) : r.int(-5, 4))));
    const free = outcome === 0 ? py : pn;
    const qty = side === Side.sell ? r.int(1, Math.max(1, free)) : r.int(1, 60);
    const tif = r.weighted<number>([[Tif.gtc, 70], [Tif.ioc, 15], [Tif.gtd, 15]]);
    const now = this.clock > m.ts ? this.clock : m.ts;
    // Some expire 1 or 2 ns after another deadline: a command at that deadline runs 1 ns later, when this one is due too.
    const ahead = tif === Tif.gtd && r.chance(0.3) ? this.targets().filter((t) => t > now) : [];
    const expiry = tif !== Tif.gtd ? 0n
      : ahead.length > 0 ? r.pick(ahead) + BigInt(r.int(1, 2)) : now + BigInt(r.int(1, 8000)) * MS + BigInt(r.int(0, 2));
    let hasMax = 0;
    let maxCost = 0;
    let finalTif = tif;
    let finalExpiry = expiry;
    if (side === Side.buy && r.chance(0.08)) {
      hasMax = 1;
      finalTif = Tif.ioc;
      finalExpiry = 0n;
      maxCost = r.int(tick, qty * (tick + 3));
    }
    return this.c('PlaceOrder', acct, {
      market_id: market, qty, group_id: 0, tick, side, outcome, tif: finalTif, stp: r.int(0, 2), post_only: 0,
      has_client_order_id: 0, has_max_cost: hasMax, client_order_id: 0n, expiry_ts: finalExpiry, max_cost: maxCost,
    });
  }

  roundOp(): RecordObject {
    const r = this.r;
    const m = this.m;
    const market = r.pick([...m.markets.keys()]);
    const rd = m.markets.get(market)!.round;
    const st = rd && rd.status !== RoundStatus.settled && rd.status !== RoundStatus.void ? rd.status : 0;
    const op = r.weighted<string>(ROUND_OPS[st] ?? ROUND_OPS[RoundStatus.proposed]!);
    if (op === 'OpenRound') return this.openRound(market);
    if (op === 'ProposeRound') {
      return this.c('ProposeRound', 0, { market_id: market, source: r.pick([ProposeSource.oracle, ProposeSource.yes, ProposeSource.no]) });
    }
    return this.c(op, 0, { market_id: market });
  }

  next(): RecordObject {
    this.n++;
    const s = this.setup.shift();
    if (s) return s();
    const r = this.r;
    const k = r.weighted<string>([
      ['place', 50], ['cancel', 6], ['tick', 12], ['round', 7], ['oracle', 10], ['deposit', 2], ['withdraw', 2], ['finish', 2],
      ['series', 0.5], ['cancelAll', 1],
    ]);
    switch (k) {
      case 'place': return this.place();
      case 'cancel': {
        const live = [...this.m.live.values()];
        if (live.length === 0) return this.c('ClockTick', 0, {});
        const o = r.pick(live);
        return this.c('CancelOrder', o.account, { order_id: o.order_id });
      }
      case 'cancelAll': return this.c('CancelAll', r.int(1, this.accounts), { market_id: 0, group_id: 0 });
      case 'tick': return this.c('ClockTick', 0, {});
      case 'round': return this.roundOp();
      case 'oracle': return this.oracle();
      case 'deposit': return this.c('Deposit', r.int(1, this.accounts), { amount: r.int(1, 50_000), ref: `x${this.n}` });
      case 'withdraw': {
        const a = r.int(1, this.accounts);
        const av = this.m.accounts.get(a)?.available ?? 0;
        const amount = r.int(1, Math.max(1, av));
        return this.c('RequestWithdrawal', a, { client_withdrawal_id: BigInt(this.n), amount, destination: 'x' });
      }
      case 'finish': {
        const pend = [...this.m.withdrawals.values()].filter((w) => w.status === WithdrawalStatus.pending);
        if (pend.length === 0) return this.c('ClockTick', 0, {});
        return this.c(r.chance(0.6) ? 'ConfirmWithdrawal' : 'FailWithdrawal', 0, { wid: r.pick(pend).wid });
      }
      case 'series': {
        const active = [...this.m.markets.values()].filter((x) => x.series_active).map((x) => x.category);
        if (active.length > 0 && r.chance(0.5)) return this.c('StopSeries', 0, { category: r.pick(active) });
        return this.series(r.int(20, 23), r.int(0, 2), r.int(1, 5), 't');
      }
    }
    throw new Error(k);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array, n: number): boolean {
  return Buffer.from(a.buffer, a.byteOffset, n).equals(Buffer.from(b.buffer, b.byteOffset, n));
}

/** One seed's run: the model, the engine, its read model and (after the first restart point) the restarted engine. */
class Run {
  readonly model: ReferenceModel;
  readonly gen: Gen;
  readonly ecfg: ModelConfig & { order_capacity: number; account_capacity: number; market_capacity: number };
  readonly out = new BufferEventOut(1 << 22);
  readonly engine: Engine;
  readonly views: Views;
  readonly enc = memOf(new ArrayBuffer(1 << 22));
  restarted: Engine | null = null;
  rout = new BufferEventOut(1 << 22);
  settles = 0;
  restarts = 0;

  constructor(readonly seed: number) {
    const r = new Rng(seed);
    const cfg: ModelConfig = {
      max_qty: 1000, terminal_cap: 8, reject_cap: 4, round_cap: r.int(1, 4), withdrawal_cap: 3, revoked_key_cap: 2, deposit_ref_cap: 2,
      oracle_staleness_ms: r.int(1000, 15_000), oracle_quorum: r.int(1, 3), dispute_window_ms: r.pick([0, 1, r.int(1, 5000)]),
      max_orders: 1 << 24,
    };
    this.model = new ReferenceModel(cfg);
    this.gen = new Gen(r, this.model, cfg, r.int(3, 14));
    this.ecfg = { ...cfg, order_capacity: 256, account_capacity: 16, market_capacity: 4 };
    this.engine = new Engine(this.ecfg, this.out);
    this.views = new Views(this.ecfg);
  }

  /** Runs command i; a failure's description, or null. */
  step(i: number): string | null {
    const { mem } = encodeToMem(this.gen.next());
    const cmd = decodeRecord(mem, 0);
    let expected: RecordObject[];
    // Makers' deadlines before the command: no fill may come at or after a maker's expiry or its round's close.
    const deadlines = cmd.type === 'PlaceOrder' ? this.makerDeadlines() : null;
    try {
      expected = this.model.execute(cmd);
      this.model.checkInvariants();
    } catch (e) {
      return `#${i}: model threw ${(e as Error).message} cmd=${show(cmd)}`;
    }
    try {
      this.engine.execute(mem, 0);
      this.restarted?.execute(mem, 0);
    } catch (e) {
      return `#${i}: engine threw ${(e as Error).stack} cmd=${show(cmd)}`;
    }
    const late = deadlines === null ? null : lateFill(expected, deadlines);
    if (late !== null) return `#${i}: ${late} cmd=${show(cmd)}`;
    for (const o of this.model.live.values()) {
      if (o.expiry_ts > 0n && o.expiry_ts <= this.model.ts) return `#${i}: order ${o.order_id} live at ${this.model.ts}, past its expiry`;
    }
    const out = this.out;
    let at = 0;
    for (const e of expected) at += encodeRecord(this.enc, at, e);
    if (!(at === out.length && sameBytes(this.enc.u8, out.mem.u8, at))) {
      return `#${i}: engine != model\n cmd=${show(cmd)}\n model=${show(expected)}\n engine=${show(out.take())}`;
    }
    if (this.restarted !== null) {
      if (!(this.rout.length === out.length && sameBytes(this.rout.mem.u8, out.mem.u8, out.length))) {
        return `#${i}: restarted engine != engine\n cmd=${show(cmd)}\n engine=${show(out.take())}\n restarted=${show(this.rout.take())}`;
      }
      this.rout.reset();
    }
    for (const o of out.offsets()) this.views.apply(out.mem, o);
    for (const e of expected) if (e.type === 'PositionSettled') this.settles++;
    out.reset();
    const bad = verify(this.engine.state);
    if (bad.length > 0) return `#${i}: verify(engine): ${bad.join('; ')} cmd=${show(cmd)}`;
    const badViews = verify(this.views.state);
    if (badViews.length > 0) return `#${i}: verify(views): ${badViews.join('; ')}`;
    return (i + 1) % RESTART_EVERY === 0 ? this.restart(i) : null;
  }

  /** Each live order's last ns to trade in: the earlier of its gtd expiry and its round's close, minus 1. */
  makerDeadlines(): Map<number, bigint> {
    const out = new Map<number, bigint>();
    for (const o of this.model.live.values()) {
      const close = this.model.markets.get(o.market_id)?.round?.close_ts ?? 0n;
      let last = close > 0n ? close - 1n : -1n;
      if (o.expiry_ts > 0n && (last < 0n || o.expiry_ts - 1n < last)) last = o.expiry_ts - 1n;
      out.set(o.order_id, last);
    }
    return out;
  }

  /** The read model's rounds pages (every category, several limits) and current rounds against the model's. */
  roundsMismatch(i: number): string | null {
    const { model, views } = this;
    for (const category of [undefined, 1, 2, 20, 21]) {
      for (const limit of [1, 2, 3, 100]) {
        const got: string[] = [];
        let cursor: string | undefined;
        for (let guard = 0; guard < 100; guard++) {
          const page = views.rounds({ limit, cursor, category } as never);
          for (const x of page.rounds) got.push(x.round_number);
          if (page.cursor === '') break;
          cursor = page.cursor;
        }
        const want = [...model.rounds.values()]
          .filter((x) => category === undefined || model.markets.get(x.market_id)!.category === category)
          .map((x) => x.round_number).sort((a, b) => b - a).map(String);
        if (got.join(',') !== want.join(',')) return `#${i}: rounds pages cat=${category} limit=${limit}: ${got} != ${want}`;
      }
    }
    for (const mk of model.markets.values()) {
      const cur = views.round(mk.market_id);
      const want = mk.round && model.rounds.has(mk.round.round_number) ? String(mk.round.round_number) : null;
      if ((cur?.round_number ?? null) !== want) return `#${i}: current round of ${mk.market_id}: ${cur?.round_number} != ${want}`;
    }
    return null;
  }

  /** The checks of a restart point, then a matching-only engine from the read model's snapshot. */
  restart(i: number): string | null {
    if (stateHash(this.views.state) !== stateHash(this.engine.state)) return `#${i}: views hash != engine hash`;
    const pages = this.roundsMismatch(i);
    if (pages !== null) return pages;
    const v2 = decodeViews(encodeViews(this.views));
    if (stateHash(v2.state) !== stateHash(this.views.state)) return `#${i}: snapshot round trip changes the hash`;
    v2.state.enterMatchingOnly();
    this.rout = new BufferEventOut(1 << 22);
    this.restarted = new Engine(this.ecfg, this.rout, v2.state);
    this.restarts++;
    return null;
  }
}

/** A seed's failure, or null; totals go to `seen`. */
/** A fill of a maker at or past its expiry or its round's close, described; null when there is none. */
function lateFill(events: readonly RecordObject[], lastNs: ReadonlyMap<number, bigint>): string | null {
  for (const e of events) {
    if (e.type !== 'Filled') continue;
    const last = lastNs.get(Number(e.maker_order_id));
    if (last !== undefined && last >= 0n && BigInt(e.ts as bigint) > last) {
      return `maker ${e.maker_order_id} filled at ${e.ts}, after its last ns to trade (${last})`;
    }
  }
  return null;
}

function runSeed(seed: number, count: number, seen: { settles: number; restarts: number }): string | null {
  const run = new Run(seed);
  for (let i = 0; i < count; i++) {
    const f = run.step(i);
    if (f !== null) return `seed ${seed} ${f}`;
  }
  seen.settles += run.settles;
  seen.restarts += run.restarts;
  if (JSON.stringify(summarize(run.engine.state)) !== JSON.stringify(run.model.summary())) return `seed ${seed}: summary differs`;
  return null;
}

const SEEDS = 30;
const COMMANDS = 3000;

test(`round boundaries: engine = reference model, money balanced, restarts byte-identical (${SEEDS} seeds x ${COMMANDS} commands)`, () => {
  const costly = checks.costly;
  checks.costly = true;
  const seen = { settles: 0, restarts: 0 };
  try {
    for (let seed = 1; seed <= SEEDS; seed++) {
      const f = runSeed(seed, COMMANDS, seen);
      if (f !== null) assert.fail(f);
    }
  } finally {
    checks.costly = costly;
  }
  // The streams reach what they are for: settlements paid and restarts taken.
  assert.ok(seen.settles > 100, `only ${seen.settles} positions settled`);
  assert.equal(seen.restarts, SEEDS * Math.floor(COMMANDS / RESTART_EVERY));
});
