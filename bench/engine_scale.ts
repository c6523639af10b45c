// engine_scale: how the engine's cost grows with the book, the accounts and
// the markets. Bench runner main thread; never imported by src/.
//
// Cases (see CASES): 1 k to 10 M resting orders, 10 to 10,000 markets, 10 k
// and 1 M accounts. Each case runs engine_match's command mix (~50% passive
// limits that rest, ~30% limits aimed at the opposite best that fill 1..6
// makers or sweep a thin level and rest, ~20% cancels of live orders; buys
// and sells of YES and NO) over many markets:
//   - setup (untimed): a fee schedule (taker 700 / maker 0 bps), the markets
//     with an open round each, the accounts with a deposit; every account
//     trades in one home market (account a in market 1 + (a - 1) % markets)
//     and gets YES and NO shares there from two mint trades with a partner;
//     then passive orders, market after market, until the case's resting
//     orders rest;
//   - the timed stream: `commands` commands of the mix in uniformly chosen
//     markets, by accounts of those markets.
// The stream is generated on one engine (reading its state to aim crossing
// orders and pick live cancel targets), which is then dropped; a second
// engine repeats the same setup (same seed, same decisions) and runs the
// stream: 10% untimed warm-up, then throughput segments (the loop execute +
// out.reset(), median of the segments), then a latency part (hrtime around
// every single command). Tables are preallocated from the configuration
// (order_capacity etc., as DX_*_CAPACITY sizes them in the exchange); one
// extra run builds a case with the default capacities and reports the worst
// single setup command while the tables grow.
//
// Durability (the 1 M orders / 1 M accounts case): the generating engine
// appends every event to a journal (no fsync); after the timed run the
// benchmark times the recovery plan (scan + checksums), the replay of the
// whole journal into a read model and into the engine's own state, and a
// snapshot of the read model (encode, write, read back).

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
// The engine's V8 flags, set as the exchange sets them (src/main/v8_tuning.ts).
import { V8_FLAGS } from '../src/main/v8_tuning.js';

import { Book } from '../src/book/book.js';
import type { EngineConfig } from '../src/engine/config.js';
import { Engine } from '../src/engine/engine.js';
import { BufferEventOut } from '../src/engine/event_out.js';
import { evolve } from '../src/engine/evolve.js';
import { ExchangeState } from '../src/engine/state.js';
import { verify } from '../src/engine/verify.js';
import { planRecovery, recoverViews, replay } from '../src/journal/recovery.js';
import { readSnapshot, writeSnapshot } from '../src/journal/snapshot.js';
import { decodeViews, encodeViews } from '../src/journal/state_codec.js';
import { JournalWriter } from '../src/journal/writer.js';
import {
  CancelOrder, CommandCompleted, CompletionStatus, CreateFeeSchedule, CreateMarket, Deposit, Filled, Header, OpenRound, OrderCanceled,
  OrderRested, PlaceOrder, Side, Stp, T_COMMAND_COMPLETED, T_CREATE_ACCOUNT, T_FILLED, T_ORDER_CANCELED, T_ORDER_RESTED, Tif,
} from '../src/layout/records.js';
import { memOf, type Mem } from '../src/lib/mem.js';
import { mulberry32 } from '../src/lib/rng.js';
import { CommandHeaders } from './lib/command_headers.js';
import { environment, type BenchResult } from './lib/result.js';
import { median, percentiles } from '../test/support/bench/stats.js';
import { GcWatch } from './lib/gc_watch.js';
import { B_ON_BOOK, LB, LW, W_ACCOUNT, W_NEXT, W_REMAINING } from '../src/book/orders.js';

interface Case {
  name: string;
  orders: number;
  markets: number;
  accounts: number;
  /** Timed commands (the 1 k case runs the long, GC-watched stream). */
  commands: number;
  /** Journal the events and time recovery and snapshot. */
  durability?: boolean;
  /** Share of the stream timed per command (the rest after the warm-up is timed in segments); LATENCY_SHARE when absent. */
  latencyShare?: number;
}

const CASES_FULL: Case[] = [
  // The long run: 10 M commands timed in segments under a GC observer.
  { name: 'o1k_m10_a10k', orders: 1_000, markets: 10, accounts: 10_000, commands: 12_000_000, latencyShare: 0.06 },
  { name: 'o100k_m1000_a10k', orders: 100_000, markets: 1_000, accounts: 10_000, commands: 500_000 },
  { name: 'o1m_m1000_a10k', orders: 1_000_000, markets: 1_000, accounts: 10_000, commands: 500_000 },
  { name: 'o1m_m1000_a1m', orders: 1_000_000, markets: 1_000, accounts: 1_000_000, commands: 500_000, durability: true },
  { name: 'o10m_m10000_a1m', orders: 10_000_000, markets: 10_000, accounts: 1_000_000, commands: 500_000 },
];
const CASES_QUICK: Case[] = [
  { name: 'o1k_m10_a10k', orders: 1_000, markets: 10, accounts: 1_000, commands: 200_000 },
  { name: 'o100k_m1000_a10k', orders: 100_000, markets: 1_000, accounts: 10_000, commands: 100_000, durability: true },
];
/** The case the growth run repeats with the default (small) table sizes. */
const GROWTH_CASE = 'o1m_m1000_a10k';
const GROWTH_CASE_QUICK = 'o100k_m1000_a10k';
/** The case compared with the 1 k one for the ratio key: the same 10 k accounts, 1,000x the orders, 100x the markets. */
const RATIO_CASE = 'o1m_m1000_a10k';
const RATIO_CASE_QUICK = 'o100k_m1000_a10k';

const SEED = 0x5ca1e;
const TAKER_BPS = 700;
const MAKER_BPS = 0;
// Every account's deposit: all deposits together must stay within 2^53 - 1 cents (deposit_limit_exceeded), so
// 1e9 (1 M accounts: 1e15 cents). An account's most is its mint (2 x 50 x MINT_QTY cents) and a few thousand orders.
const DEPOSIT_CENTS = 1e9;
const MINT_QTY = 100_000;
const SHARE_PASSIVE = 0.5;
const SHARE_CROSSING = 0.3; // the rest are cancels
const SHARE_CROSS_REST = 0.2;
const REST_SWEEP_MAX = 4;
const PASSIVE_TOP = 49;
const PASSIVE_DEPTH = 10;
const WARM_SHARE = 0.05;
const LATENCY_SHARE = 0.3;
const SEGMENTS = 5;
const MIB = 2 ** 20;
const round = (x: number, d = 0): number => Math.round(x * 10 ** d) / 10 ** d;

function engineConfigFor(c: Case, preallocate: boolean): Partial<EngineConfig> {
  if (!preallocate) return {};
  // Every slot the case can use: the mint orders (retained), the resting book, the stream's orders.
  const orders = c.orders + 2 * c.accounts + c.commands + 1024;
  return {
    order_capacity: orders, account_capacity: c.accounts + 16, market_capacity: c.markets + 16, position_capacity: c.accounts * 2 + 16,
  };
}

/**
 * Writes, runs and tracks commands: each command is encoded (into a scratch
 * record, or appended to the timed stream) and executed on this generator's
 * engine at once, so the next one can be aimed at the state it left.
 */
class Generator {
  readonly out = new BufferEventOut(1 << 20);
  readonly engine: Engine;
  private readonly rng = mulberry32(SEED);
  private readonly headers = new CommandHeaders();
  private readonly scratch = memOf(new ArrayBuffer(256));
  /** Live resting order ids and, by id, their index + 1 in liveIds (0 = not live). */
  private readonly liveIds: Float64Array;
  private liveCount = 0;
  private readonly livePos: Int32Array;
  /** Timed stream being written (null while setting up). */
  private stream: Mem | null = null;
  bytes = 0;
  journal: JournalWriter | null = null;
  /** Longest single command (ns) while timing the setup (the growth run), else 0. */
  timeSetup = false;
  maxSetupNs = 0;
  maxSetupAt = 0;
  commandsRun = 0;
  /** Called after the accounts are created and funded, and after the mint (memory marks of the timed run). */
  onAccounts: (() => void) | null = null;
  onMint: (() => void) | null = null;

  constructor(readonly c: Case, config: Partial<EngineConfig>, matchingOnly: boolean) {
    this.engine = new Engine(config, this.out);
    if (matchingOnly) this.engine.state.enterMatchingOnly();
    const maxSeq = 64 + 2 * c.markets + 4 * c.accounts + c.orders + c.commands;
    this.liveIds = new Float64Array(c.orders + c.commands + 1024);
    this.livePos = new Int32Array(maxSeq + 1);
  }

  get live(): number {
    return this.liveCount;
  }

  // ---- encoding and running ---------------------------------------------------

  private header(type: number, size: number, account: number): { m: Mem; o: number } {
    let m = this.scratch;
    let o = 0;
    if (this.stream !== null) {
      m = this.stream;
      o = this.bytes;
      if (o + size > m.u8.length) throw new Error('engine_scale: stream buffer too small');
    }
    this.headers.write(m, o, type, size, account);
    return { m, o };
  }

  /** Executes the record at o, checks that it was not rejected, tracks liveness; returns its seq. */
  private run(m: Mem, o: number): number {
    let seq: number;
    if (this.timeSetup) {
      const t0 = process.hrtime.bigint();
      seq = this.engine.execute(m, o);
      const ns = Number(process.hrtime.bigint() - t0);
      if (ns > this.maxSetupNs) {
        this.maxSetupNs = ns;
        this.maxSetupAt = seq;
      }
    } else {
      seq = this.engine.execute(m, o);
    }
    this.commandsRun++;
    if (this.stream !== null) this.bytes = o + Header.len(m, o);
    const em = this.out.mem;
    const st = this.engine.state;
    const end = this.out.length;
    for (let e = 0; e < end; e += Header.len(em, e)) {
      switch (Header.type(em, e)) {
        case T_ORDER_RESTED: this.addLive(OrderRested.order_id(em, e)); break;
        case T_ORDER_CANCELED: this.dropLive(OrderCanceled.order_id(em, e)); break;
        case T_FILLED: {
          const maker = Filled.maker_order_id(em, e);
          const slot = st.slotOf(maker);
          if (slot < 0 || st.orders.u8[(slot << LB) | B_ON_BOOK] !== 1) this.dropLive(maker);
          break;
        }
        case T_COMMAND_COMPLETED:
          if (CommandCompleted.status(em, e) !== CompletionStatus.ok) {
            const code = CommandCompleted.code_num(em, e);
            throw new Error(`engine_scale: generated command type ${Header.type(m, o)} at seq ${seq} was rejected with code ${code}`);
          }
          break;
      }
      if (this.journal !== null) this.journal.append(em, e);
    }
    this.out.reset();
    return seq;
  }

  private addLive(id: number): void {
    this.liveIds[this.liveCount] = id;
    this.livePos[id] = ++this.liveCount;
  }

  private dropLive(id: number): void {
    const i = this.livePos[id]! - 1;
    if (i < 0) return;
    const last = this.liveIds[--this.liveCount]!;
    this.liveIds[i] = last;
    this.livePos[last] = i + 1;
    this.livePos[id] = 0;
  }

  // ---- setup -------------------------------------------------------------------

  /** The same setup on every engine built from this case (same seed, same decisions). */
  setup(): void {
    const c = this.c;
    let h = this.header(CreateFeeSchedule.TYPE, CreateFeeSchedule.SIZE, 0);
    CreateFeeSchedule.set_taker_bps(h.m, h.o, TAKER_BPS);
    CreateFeeSchedule.set_maker_bps(h.m, h.o, MAKER_BPS);
    this.run(h.m, h.o);
    for (let k = 1; k <= c.markets; k++) {
      h = this.header(CreateMarket.TYPE, CreateMarket.SIZE, 0);
      CreateMarket.set_fee_schedule_id(h.m, h.o, 1);
      CreateMarket.set_title(h.m, h.o, `bench: engine_scale ${k}`);
      this.run(h.m, h.o);
      h = this.header(OpenRound.TYPE, OpenRound.SIZE, 0);
      OpenRound.set_market_id(h.m, h.o, k);
      OpenRound.set_strike(h.m, h.o, 50 * 1e8);
      OpenRound.set_close_ts(h.m, h.o, this.headers.tsHi + 100_000, 0);
      this.run(h.m, h.o);
    }
    for (let a = 1; a <= c.accounts; a++) {
      h = this.header(T_CREATE_ACCOUNT, 32, 0);
      this.run(h.m, h.o);
      h = this.header(Deposit.TYPE, Deposit.SIZE, a);
      Deposit.set_amount(h.m, h.o, DEPOSIT_CENTS);
      Deposit.set_ref(h.m, h.o, 'bench');
      this.run(h.m, h.o);
    }
    if (this.onAccounts !== null) this.onAccounts();
    // Mint: a buys YES at 50 against its partner's NO at 50, then the other way round.
    for (let a = 1; a <= c.accounts; a++) {
      const b = this.partner(a);
      this.place(a, homeMarket(c, a), Side.buy, 0, 50, MINT_QTY);
      this.place(b, homeMarket(c, a), Side.buy, 1, 50, MINT_QTY);
    }
    if (this.onMint !== null) this.onMint();
    let k = 0;
    while (this.liveCount < c.orders) {
      this.passive(1 + (k % c.markets));
      k++;
    }
  }


  /** The account after a in the same home market (wrapping). */
  private partner(a: number): number {
    const c = this.c;
    const n = accountsIn(c, homeMarket(c, a));
    const i = Math.floor((a - 1) / c.markets);
    return homeMarket(c, a) + c.markets * ((i + 1) % n);
  }

  // ---- orders ------------------------------------------------------------------

  private place(account: number, market: number, side: number, outcome: number, tick: number, qty: number): number {
    const h = this.header(PlaceOrder.TYPE, PlaceOrder.SIZE, account);
    PlaceOrder.set_market_id(h.m, h.o, market);
    PlaceOrder.set_qty(h.m, h.o, qty);
    PlaceOrder.set_tick(h.m, h.o, tick);
    PlaceOrder.set_side(h.m, h.o, side);
    PlaceOrder.set_outcome(h.m, h.o, outcome);
    PlaceOrder.set_tif(h.m, h.o, Tif.gtc);
    PlaceOrder.set_stp(h.m, h.o, Stp.cancel_taker);
    return this.run(h.m, h.o);
  }

  private freeShares(account: number, market: number, outcome: number): number {
    const acc = this.engine.state.accounts;
    const p = acc.findPosition(account, market);
    return p < 0 ? 0 : acc.pFree[2 * p + outcome]!;
  }

  private placeOnLadder(account: number, market: number, ladder: number, ladderTick: number, qty: number): void {
    if (this.rng() < 0.5 && this.freeShares(account, market, 1 - ladder) >= qty) {
      this.place(account, market, Side.sell, 1 - ladder, 100 - ladderTick, qty);
    } else {
      this.place(account, market, Side.buy, ladder, ladderTick, qty);
    }
  }

  private size(): number {
    const q = 1 + Math.floor(-Math.log(1 - this.rng()) * 20);
    return q > 1000 ? 1000 : q;
  }

  private randomAccountIn(market: number): number {
    return market + this.c.markets * Math.floor(this.rng() * accountsIn(this.c, market));
  }

  /** A limit order at ladder tick 40..49 that rests without crossing. */
  private passive(market: number): void {
    const book = this.engine.state.book;
    const ladder = this.rng() < 0.5 ? 0 : 1;
    const oppBest = book.best[(market << 1) | (ladder ^ 1)]!;
    let off = Math.floor(-Math.log(1 - this.rng()) * 2.5);
    if (off >= PASSIVE_DEPTH) off = PASSIVE_DEPTH - 1;
    let lt = PASSIVE_TOP - off;
    if (oppBest !== 0 && lt > 99 - oppBest) lt = 99 - oppBest;
    if (lt < 1) lt = 1;
    this.placeOnLadder(this.randomAccountIn(market), market, ladder, lt, this.size());
  }

  /** engine_match's crossing order, in `market`: aimed at 1..6 makers in priority order, or a thin best level plus a rest. */
  private crossing(market: number): void {
    const st = this.engine.state;
    const book = st.book;
    const ord = st.orders;
    let ladder = this.rng() < 0.5 ? 0 : 1;
    if (book.best[(market << 1) | (ladder ^ 1)] === 0) ladder ^= 1;
    const opp = ladder ^ 1;
    const b = book.best[(market << 1) | opp]!;
    if (b === 0) return this.passive(market);
    const owners: number[] = [];
    let qty = 0;
    let lastTick = b;
    const lv0 = Book.level(market, opp, b);
    if (this.rng() < SHARE_CROSS_REST && book.levelCount[lv0]! <= REST_SWEEP_MAX) {
      for (let s = book.levelHead[lv0]!; s >= 0; s = ord.i32[(s << LW) | W_NEXT]!) owners.push(ord.u32[(s << LW) | W_ACCOUNT]!);
      qty = book.levelQty[lv0]! + this.size();
    } else {
      let pMore = 0.15 + (0.6 * (this.liveCount - this.c.orders)) / this.c.orders;
      if (pMore < 0.02) pMore = 0.02;
      if (pMore > 0.9) pMore = 0.9;
      let k = 1;
      while (k < 6 && this.rng() < pMore) k++;
      let taken = 0;
      let lastRem = 0;
      walk: for (let t = b; t >= 1; t--) {
        for (let s = book.levelHead[Book.level(market, opp, t)]!; s >= 0; s = ord.i32[(s << LW) | W_NEXT]!) {
          owners.push(ord.u32[(s << LW) | W_ACCOUNT]!);
          lastRem = ord.u32[(s << LW) | W_REMAINING]!;
          qty += lastRem;
          lastTick = t;
          if (++taken === k) break walk;
        }
      }
      if (lastRem > 1 && this.rng() < 0.35) qty -= 1 + Math.floor(this.rng() * (lastRem - 1));
    }
    // A taker that owns none of the makers it reaches (so self-trade prevention never fires).
    for (let tries = 0; tries < 32; tries++) {
      const account = this.randomAccountIn(market);
      if (!owners.includes(account)) return this.placeOnLadder(account, market, ladder, 100 - lastTick, qty);
    }
    this.passive(market);
  }

  private cancel(): void {
    if (this.liveCount === 0) return this.passive(1 + Math.floor(this.rng() * this.c.markets));
    const id = this.liveIds[Math.floor(this.rng() * this.liveCount)]!;
    const st = this.engine.state;
    const h = this.header(CancelOrder.TYPE, CancelOrder.SIZE, st.orders.u32[((st.slotOf(id)) << LW) | W_ACCOUNT]!);
    CancelOrder.set_order_id(h.m, h.o, id);
    this.run(h.m, h.o);
  }

  /** Writes the timed stream into `stream` (each command also runs here); returns its byte length. */
  writeStream(stream: Mem, commands: number): number {
    this.stream = stream;
    this.bytes = 0;
    for (let i = 0; i < commands; i++) {
      const r = this.rng();
      const market = 1 + Math.floor(this.rng() * this.c.markets);
      if (r < SHARE_PASSIVE) this.passive(market);
      else if (r < SHARE_PASSIVE + SHARE_CROSSING) this.crossing(market);
      else this.cancel();
    }
    this.stream = null;
    return this.bytes;
  }
}

function describeCase(c: Case): string {
  return `${c.name} (${c.orders} resting orders, ${c.markets} markets, ${c.accounts} accounts, ${c.commands} commands)`;
}

function homeMarket(c: Case, account: number): number {
  return 1 + ((account - 1) % c.markets);
}

function accountsIn(c: Case, market: number): number {
  return Math.floor((c.accounts - market) / c.markets) + 1;
}

// ---- measurement helpers ---------------------------------------------------------

function gcFunction(): () => void {
  const g = (globalThis as { gc?: () => void }).gc;
  if (typeof g === 'function') return g;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

function rss(): number {
  const m = process.memoryUsage();
  return m.rss;
}

/** Median ns of two back-to-back performance.now() reads (the latency part's timer: a double, so no allocation and no GC). */
function timerOverheadNs(): number {
  const xs = new Float64Array(100_000);
  for (let i = 0; i < xs.length; i++) {
    const a = performance.now();
    const b = performance.now();
    xs[i] = (b - a) * 1e6;
  }
  return median(xs);
}

const SPAN = 1024;

/** Up to SPAN commands from off (before end); returns the next offset. */
function span(engine: Engine, out: BufferEventOut, mem: Mem, off: number, end: number): number {
  const u32 = mem.u32;
  for (let n = 0; n < SPAN && off < end; n++) {
    engine.execute(mem, off);
    out.reset();
    off += u32[off >>> 2]!;
  }
  return off;
}

/** The timed part in SEGMENTS segments: commands/s of each. */
function timeSegments(
  engine: Engine, out: BufferEventOut, stream: Mem, p: { from: number; to: number; warmN: number; tpN: number },
): number[] {
  const rates: number[] = [];
  let off = p.from;
  const segN = Math.floor(p.tpN / SEGMENTS);
  for (let s = 0; s < SEGMENTS; s++) {
    const n = s === SEGMENTS - 1 ? p.tpN - segN * (SEGMENTS - 1) : segN;
    const end = s === SEGMENTS - 1 ? p.to : offsetOf(stream, p.warmN + segN * (s + 1));
    const t0 = process.hrtime.bigint();
    off = runUntil(engine, out, stream, off, end);
    rates.push((n / Number(process.hrtime.bigint() - t0)) * 1e9);
  }
  return rates;
}

function runUntil(engine: Engine, out: BufferEventOut, mem: Mem, off: number, end: number): number {
  while (off < end) off = span(engine, out, mem, off, end);
  return off;
}

/** Per-command latencies (ns, timer overhead not yet subtracted) of the commands in [off, end); returns the samples. */
interface Latencies {
  samples: Float64Array;
  /** Each sample's start on the performance.now() timeline (ms), to match GC entries. */
  starts: Float64Array;
  /** Per sample: the CPU time (ns) the process used over its block of CPU_BLOCK commands. */
  blockCpuNs: Float64Array;
  startMs: number;
  endMs: number;
}

/** Commands per reading of the thread's CPU time in the latency part. */
const CPU_BLOCK = 64;

/**
 * The process's CPU time so far (ns), all threads (process.cpuUsage:
 * getrusage, which adds the running thread's time up to now). Not
 * /proc/thread-self/schedstat: that lags a running thread by up to a
 * scheduler tick (4 ms here), which is coarser than what it has to judge.
 * The other threads of this process (V8's helpers) only add to it, so it
 * stays an upper bound of the engine thread's own CPU time.
 */
class ProcessCpu {
  ns(): number {
    const u = process.cpuUsage();
    return (u.user + u.system) * 1000;
  }

  close(): void {}
}

function latencies(engine: Engine, out: BufferEventOut, mem: Mem, off: number, end: number, n: number): Latencies {
  const u32 = mem.u32;
  const samples = new Float64Array(n);
  const starts = new Float64Array(n);
  const blockCpuNs = new Float64Array(n);
  const cpu = new ProcessCpu();
  let i = 0;
  const startMs = performance.now();
  while (off < end) {
    const first = i;
    const c0 = cpu.ns();
    for (let k = 0; k < CPU_BLOCK && off < end; k++) {
      const a = performance.now();
      engine.execute(mem, off);
      const b = performance.now();
      samples[i] = (b - a) * 1e6;
      starts[i++] = a;
      out.reset();
      off += u32[off >>> 2]!;
    }
    blockCpuNs.fill(cpu.ns() - c0, first, i);
  }
  cpu.close();
  return {
    samples: samples.subarray(0, i), starts: starts.subarray(0, i), blockCpuNs: blockCpuNs.subarray(0, i), startMs,
    endMs: performance.now(),
  };
}

/**
 * Marks the samples whose window a GC overlapped. Neither the engine nor the
 * timer allocates per command, so a collection there is another's (the
 * observer's own, the bench's); such samples count in the percentiles and in
 * max_ns, not in max_ns_outside_gc or max_cpu_ns.
 */
function gcOverlaps(ns: Float64Array, starts: Float64Array, gcs: readonly { start: number; duration: number }[]): Uint8Array {
  const sorted = gcs.slice().sort((x, y) => x.start - y.start);
  const hit = new Uint8Array(ns.length);
  let g = 0;
  for (let i = 0; i < ns.length; i++) {
    const s0 = starts[i]!;
    const s1 = s0 + ns[i]! / 1e6;
    while (g < sorted.length && sorted[g]!.start + sorted[g]!.duration < s0) g++;
    if (g < sorted.length && sorted[g]!.start <= s1) hit[i] = 1;
  }
  return hit;
}

/**
 * Outside the GC-overlapped samples: the largest sample, and the largest CPU
 * time a single command can have taken: no more than its own wall time, and
 * no more than the CPU the process used over its whole block (CPU_BLOCK
 * commands). A sample whose wall time is far above its block's CPU time was
 * not running: the thread was descheduled (another process, the hypervisor),
 * not stalled by the engine.
 */
function worstOutsideGc(ns: Float64Array, blockCpuNs: Float64Array, gc: Uint8Array): { max: number; maxCpu: number; descheduled: number } {
  let max = 0;
  let maxCpu = 0;
  let descheduled = 0;
  for (let i = 0; i < ns.length; i++) {
    if (gc[i] === 1) continue;
    const cpu = blockCpuNs[i]!;
    const bound = ns[i]! < cpu ? ns[i]! : cpu;
    if (ns[i]! > max) max = ns[i]!;
    if (bound > maxCpu) maxCpu = bound;
    if (ns[i]! > cpu + 100_000) descheduled++;
  }
  return { max, maxCpu, descheduled };
}

/** Offset of the n-th command of the stream. */
function offsetOf(mem: Mem, n: number): number {
  let o = 0;
  for (let i = 0; i < n; i++) o += mem.u32[o >>> 2]!;
  return o;
}

interface CaseResult {
  metrics: Record<string, number>;
  notes: string[];
  /** The journal the generating engine wrote (durability cases), timed after the case's engines are gone. */
  journal: { dir: string; events: number; bytes: number } | null;
}

async function runCase(c: Case, gc: () => void): Promise<CaseResult> {
  const notes: string[] = [];
  const config = engineConfigFor(c, true);
  // 1. Generate the stream on engine A (and journal its events for the durability case).
  const tGen = performance.now();
  let dir: string | null = null;
  const genA = new Generator(c, config, true);
  if (c.durability === true) {
    dir = mkdtempSync(join(tmpdir(), 'dx-engine-scale-'));
    genA.journal = new JournalWriter({ dataDir: dir, nextSeq: 1, fsync: false });
  }
  genA.setup();
  const setupCommands = genA.commandsRun;
  const stream = memOf(new ArrayBuffer(c.commands * PlaceOrder.SIZE));
  const bytes = genA.writeStream(stream, c.commands);
  const finalSeq = genA.engine.state.seq;
  const finalFees = genA.engine.state.accounts.feesCollected;
  const finalLive = genA.live;
  genA.journal?.close();
  const journalEvents = genA.journal?.records ?? 0;
  const journalBytes = genA.journal?.bytes ?? 0;
  const genMs = performance.now() - tGen;
  // Drop A before B allocates its tables.
  (genA as { engine: Engine | null }).engine = null;
  gc();

  // 2. Engine B: the same setup, then the timed stream.
  const genB = new Generator(c, config, true);
  genB.setup();
  gc();
  const engine = genB.engine;
  const out = genB.out;
  const bad = c.orders <= 100_000 ? verify(engine.state) : [];
  if (bad.length > 0) throw new Error(`engine_scale ${c.name}: state after setup fails verify: ${bad.slice(0, 3).join('; ')}`);

  const warmN = Math.floor(c.commands * WARM_SHARE);
  const latN = Math.floor(c.commands * (c.latencyShare ?? LATENCY_SHARE));
  const tpN = c.commands - warmN - latN;
  const oWarm = offsetOf(stream, warmN);
  const oLat = offsetOf(stream, warmN + tpN);
  runUntil(engine, out, stream, 0, oWarm);
  const watch = new GcWatch();
  const heapBefore = process.memoryUsage().heapUsed;
  const tpStart = performance.now();
  const rates = timeSegments(engine, out, stream, { from: oWarm, to: oLat, warmN, tpN });
  const tpEnd = performance.now();
  const heapAfter = process.memoryUsage().heapUsed;
  const overhead = timerOverheadNs();
  const lat = latencies(engine, out, stream, oLat, bytes, latN);
  await watch.stop();
  const st = engine.state;
  if (st.seq !== finalSeq || st.accounts.feesCollected !== finalFees) {
    throw new Error(`engine_scale ${c.name}: the timed engine diverged from the generator (seq ${st.seq}/${finalSeq})`);
  }
  const adj = new Float64Array(lat.samples.length);
  for (let i = 0; i < adj.length; i++) adj[i] = Math.max(0, lat.samples[i]! - overhead);
  const p = percentiles(adj, [50, 99, 99.9, 100]);
  const worst = worstOutsideGc(adj, lat.blockCpuNs, gcOverlaps(adj, lat.starts, watch.entries));
  const gcTp = watch.within([[tpStart, tpEnd]]);
  const gcLat = watch.within([[lat.startMs, lat.endMs]]);
  const resting = c.orders;
  const m: Record<string, number> = {
    commands_per_s: round(median(rates)),
    p50_ns: round(p.get(50)!),
    p99_ns: round(p.get(99)!),
    p999_ns: round(p.get(99.9)!),
    max_ns: round(p.get(100)!),
    max_ns_outside_gc: round(worst.max),
    max_cpu_ns: round(worst.maxCpu),
    descheduled_samples: worst.descheduled,
    resting_orders: resting,
    resting_orders_end: finalLive,
    markets: c.markets,
    accounts: c.accounts,
    timed_commands: tpN,
    latency_commands: latN,
    setup_commands: setupCommands,
    generate_s: round(genMs / 1000, 1),
    gc_count_timed: gcTp.count,
    gc_count_latency: gcLat.count,
    heap_delta_timed_mib: round((heapAfter - heapBefore) / MIB, 3),
  };
  notes.push(
    `${c.name}: throughput segments ${rates.map((r) => round(r / 1e6, 3)).join(', ')} M/s; ${gcTp.count} GCs in the timed segments, ` +
    `${gcLat.count} in the latency part.`,
  );
  return { metrics: m, notes, journal: dir === null ? null : { dir, events: journalEvents, bytes: journalBytes } };
}

/** Recovery and snapshot timings over the journal written while generating. */
function durability(dir: string, c: Case, events: number, bytes: number, notes: string[]): Record<string, number> {
  let t = performance.now();
  const plan = planRecovery(dir, { repair: false });
  const planMs = performance.now() - t;
  t = performance.now();
  const views = recoverViews(plan, engineConfigFor(c, true), {});
  const viewsMs = performance.now() - t;
  t = performance.now();
  const state = new ExchangeState(engineConfigFor(c, true));
  state.enterMatchingOnly();
  replay(plan, 0, (m, o) => evolve(state, m, o));
  const engineMs = performance.now() - t;
  let resting = 0;
  for (let s = 0; s < views.state.orders.highWater; s++) if (views.state.orders.u8[(s << LB) | B_ON_BOOK] === 1) resting++;
  t = performance.now();
  const body = encodeViews(views);
  const encodeMs = performance.now() - t;
  t = performance.now();
  const path = writeSnapshot(dir, views.asOfSeq, body, true);
  const writeMs = performance.now() - t;
  t = performance.now();
  const back = decodeViews(readSnapshot(path).body);
  const loadMs = performance.now() - t;
  if (back.asOfSeq !== views.asOfSeq) throw new Error('engine_scale: the snapshot read back holds another seq');
  notes.push(
    `${c.name} durability: ${events} journaled events (${round(bytes / MIB)} MiB, no fsync while writing), ` +
    `${resting} resting orders at the end; plan (scan and checksums) ${round(planMs)} ms, replay into a read model ${round(viewsMs)} ms, ` +
    `into the engine's state ${round(engineMs)} ms; snapshot of the read model: encode ${round(encodeMs)} ms, ` +
    `write + fsync ${round(writeMs)} ms (${round(body.length / MIB)} MiB), read back and decode ${round(loadMs)} ms.`,
  );
  return {
    journal_events: events,
    journal_mib: round(bytes / MIB),
    snapshot_resting_orders: resting,
    recovery_plan_s: round(planMs / 1000, 2),
    recovery_replay_views_s: round(viewsMs / 1000, 2),
    recovery_replay_engine_s: round(engineMs / 1000, 2),
    recovery_s_per_million_events: round((planMs + viewsMs) / 1000 / (events / 1e6), 3),
    snapshot_encode_s: round(encodeMs / 1000, 2),
    snapshot_write_s: round(writeMs / 1000, 2),
    snapshot_mib: round(body.length / MIB),
    snapshot_load_s: round(loadMs / 1000, 2),
  };
}

/**
 * Resident memory of the case's state, built in a fresh process (here the
 * earlier cases' freed memory stays resident and is reused, which hides
 * growth): RSS marks after the engine is created, after the accounts are
 * created and funded, after the mint and after the resting orders.
 */
function memoryProbe(c: Case, quick: boolean): Record<string, number> {
  const args = ['--expose-gc', fileURLToPath(import.meta.url), '--memory-probe', c.name, ...(quick ? ['--quick'] : [])];
  const r = spawnSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (r.status !== 0) throw new Error(`engine_scale: the memory probe of ${c.name} failed (${r.status}): ${r.stderr}`);
  type Marks = { rss0: number; rssE: number; rss1: number; rss2: number; rss3: number; resting: number };
  const marks = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Marks;
  return {
    rss_preallocated_mib: round((marks.rssE - marks.rss0) / MIB, 1),
    rss_engine_mib: round((marks.rss3 - marks.rss0) / MIB, 1),
    bytes_per_account: round((marks.rss1 - marks.rssE) / c.accounts, 1),
    bytes_per_resting_order: round((marks.rss3 - marks.rss2) / marks.resting, 1),
  };
}

/** The probe's child: builds the case and prints its RSS marks as JSON. */
function probeChild(name: string, quick: boolean): void {
  const c = (quick ? CASES_QUICK : CASES_FULL).find((x) => x.name === name);
  if (c === undefined) throw new Error(`engine_scale: no case ${name}`);
  const gc = gcFunction();
  gc();
  const rss0 = rss();
  const g = new Generator({ ...c, commands: 0 }, engineConfigFor(c, true), true);
  gc();
  const rssE = rss();
  let rss1 = 0;
  let rss2 = 0;
  g.onAccounts = (): void => {
    gc();
    rss1 = rss();
  };
  g.onMint = (): void => {
    gc();
    rss2 = rss();
  };
  g.setup();
  gc();
  const rss3 = rss();
  process.stdout.write(`${JSON.stringify({ rss0, rssE, rss1, rss2, rss3, resting: g.live })}\n`);
}

/** The worst single command over every case: by the wall clock outside GCs, with the timer's GCs, and bounded by CPU time. */
function worstCommand(cases: Iterable<Record<string, number>>): {
  max_command_ns: number; max_command_ns_with_timer_gc: number; max_command_cpu_ns: number; descheduled_samples: number;
} {
  const w = { max_command_ns: 0, max_command_ns_with_timer_gc: 0, max_command_cpu_ns: 0, descheduled_samples: 0 };
  for (const m of cases) {
    w.max_command_ns = Math.max(w.max_command_ns, m.max_ns_outside_gc!);
    w.max_command_ns_with_timer_gc = Math.max(w.max_command_ns_with_timer_gc, m.max_ns!);
    w.max_command_cpu_ns = Math.max(w.max_command_cpu_ns, m.max_cpu_ns!);
    w.descheduled_samples += m.descheduled_samples!;
  }
  return w;
}

/** The growth run: the case's setup with the default table sizes, timing every command. */
function growthRun(c: Case, gc: () => void): { maxNs: number; atSeq: number } {
  gc();
  const g = new Generator({ ...c, commands: 0 }, engineConfigFor(c, false), true);
  g.timeSetup = true;
  g.setup();
  const r = { maxNs: g.maxSetupNs, atSeq: g.maxSetupAt };
  (g as { engine: Engine | null }).engine = null;
  gc();
  return r;
}

/** Runs the cases one after the other: each one's metrics (keyed `<case>_<metric>` in `metrics`), notes, and durability figures. */
async function runCases(cases: readonly Case[], gc: () => void, withDurability: boolean): Promise<{
  metrics: Record<string, number>; notes: string[]; byName: Map<string, Record<string, number>>;
}> {
  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  const byName = new Map<string, Record<string, number>>();
  for (const c of cases) {
    const r = await runCase(c, gc);
    gc();
    if (r.journal !== null) {
      if (withDurability) Object.assign(r.metrics, durability(r.journal.dir, c, r.journal.events, r.journal.bytes, r.notes));
      rmSync(r.journal.dir, { recursive: true, force: true });
    }
    byName.set(c.name, r.metrics);
    for (const [k, v] of Object.entries(r.metrics)) metrics[`${c.name}_${k}`] = v;
    notes.push(...r.notes);
    gc();
  }
  return { metrics, notes, byName };
}

/**
 * Only the named cases (`--cases a,b` of bench/run.js), for A/B comparisons: their metrics, the ratio when both of its cases
 * ran, and the memory probe of the last named case; no durability figures, no growth run, no summary keys of the other cases.
 */
async function runSelected(names: readonly string[], quick: boolean): Promise<BenchResult> {
  const all = quick ? CASES_QUICK : CASES_FULL;
  for (const n of names) if (!all.some((c) => c.name === n)) throw new Error(`engine_scale: no case ${n}`);
  const cases = all.filter((c) => names.includes(c.name));
  const gc = gcFunction();
  const { metrics, notes, byName } = await runCases(cases, gc, false);
  notes.unshift(`Only the cases ${names.join(', ')} (--cases).`);
  const base = byName.get(all[0]!.name);
  const ratioCase = byName.get(quick ? RATIO_CASE_QUICK : RATIO_CASE);
  if (base !== undefined && ratioCase !== undefined)
    metrics.ratio_1m_orders_1000_markets_vs_1k = round(ratioCase.commands_per_s! / base.commands_per_s!, 3);
  const last = cases[cases.length - 1]!;
  for (const [k, v] of Object.entries(memoryProbe(last, quick))) metrics[`${last.name}_${k}`] = v;
  const env = environment();
  return { name: 'engine_scale', node: env.node, machine: env.machine, workload: `engine_scale, cases ${names.join(', ')}`, metrics,
    peers: {}, ratios: {}, notes };
}

export async function run(opts: { quick?: boolean; cases?: readonly string[] } = {}): Promise<BenchResult> {
  const quick = opts.quick === true;
  if (opts.cases !== undefined) return runSelected(opts.cases, quick);
  const cases = quick ? CASES_QUICK : CASES_FULL;
  const gc = gcFunction();
  const { metrics, notes, byName } = await runCases(cases, gc, true);
  const growthName = quick ? GROWTH_CASE_QUICK : GROWTH_CASE;
  const growth = growthRun(cases.find((c) => c.name === growthName)!, gc);
  const base = byName.get(cases[0]!.name)!;
  const ratioCase = byName.get(quick ? RATIO_CASE_QUICK : RATIO_CASE)!;
  const worst = worstCommand(byName.values());
  const maxNs = worst.max_command_ns;
  metrics.ratio_1m_orders_1000_markets_vs_1k = round(ratioCase.commands_per_s! / base.commands_per_s!, 3);
  Object.assign(metrics, worst);
  const memory = memoryProbe(cases[cases.length - 1]!, quick);
  for (const [k, v] of Object.entries(memory)) metrics[`${cases[cases.length - 1]!.name}_${k}`] = v;
  metrics.bytes_per_resting_order = memory.bytes_per_resting_order!;
  metrics.bytes_per_account = memory.bytes_per_account!;
  metrics.growth_max_command_ns = round(growth.maxNs);
  metrics.gc_count_long_run = base.gc_count_timed!;
  metrics.long_run_commands = base.timed_commands!;
  const durable = byName.get(cases.find((c) => c.durability === true)!.name)!;
  const durableKeys = [
    'journal_events', 'recovery_plan_s', 'recovery_replay_views_s', 'recovery_replay_engine_s', 'recovery_s_per_million_events',
    'snapshot_resting_orders', 'snapshot_encode_s', 'snapshot_write_s', 'snapshot_mib', 'snapshot_load_s',
  ] as const;
  for (const k of durableKeys) {
    if (durable[k] !== undefined) metrics[k] = durable[k]!;
  }
  const timedPct = round((1 - WARM_SHARE - LATENCY_SHARE) * 100);
  const longPct = round((cases[0]!.latencyShare ?? LATENCY_SHARE) * 100);
  const met = (ok: boolean): string => (ok ? 'met' : 'NOT met');
  notes.unshift(
    `Each case: setup (untimed), then ${round(WARM_SHARE * 100)}% of the stream untimed, the next ${timedPct}% timed in ${SEGMENTS} ` +
    `segments (commands_per_s = their median), the last ${round(LATENCY_SHARE * 100)}% with performance.now() around every command ` +
    `(percentiles and max, timer overhead subtracted; the long-run case times ${longPct}% per command). Tables are preallocated from ` +
    'the configuration (order_capacity, account_capacity, market_capacity, position_capacity: DX_*_CAPACITY in the exchange), so ' +
    'nothing grows while timing.',
    `Growth: the ${growthName} setup with the default table sizes (they double when full) took at most ` +
    `${round(growth.maxNs / 1e6, 2)} ms for one command (seq ${growth.atSeq}): the stall a doubling costs, and why production sizes ` +
    'the tables from the configuration.',
    'Memory (the largest case, built again in a fresh process so that no freed memory is reused): bytes_per_resting_order = ' +
    'resident memory (RSS) added while the setup placed the resting orders, over their number; bytes_per_account = RSS added by ' +
    `creating and funding the accounts, over their number. What the preallocation touches up front (tables filled with -1 at ` +
    `creation: per-account lists, book levels, the gtd expiry heap at 4 bytes per order of capacity) is ` +
    `${cases[cases.length - 1]!.name}_rss_preallocated_mib.`,
    'max_command_ns is the worst single command over every case\'s latency part, leaving out the samples a garbage collection ' +
    'overlapped (the engine allocates nothing per command, gc_count_timed, and the timer reads doubles, so none is expected); ' +
    'max_command_ns_with_timer_gc and <case>_max_ns keep them. max_command_cpu_ns (over the same samples) bounds each command by ' +
    `the CPU time the process used over its block of ${CPU_BLOCK} commands (process.cpuUsage): a command far slower by the wall ` +
    'clock than its block\'s CPU time was descheduled by the host, not stalled by the engine (descheduled_samples counts them).',
    `ratio_1m_orders_1000_markets_vs_1k = ${quick ? RATIO_CASE_QUICK : RATIO_CASE} throughput / ${cases[0]!.name} throughput (the same ` +
    `accounts). The ${cases[0]!.name} case runs ${base.timed_commands} timed commands under a GC observer: gc_count_long_run counts ` +
    'the collections in them (the engine allocates nothing per command).',
    `V8 flags: ${V8_FLAGS.join(' ')} (src/main/v8_tuning.ts). The engine runs as the exchange's engine thread runs it ` +
    '(ExchangeState.enterMatchingOnly).',
    `Targets (reported, not asserted): ratio >= 0.7: ${met(metrics.ratio_1m_orders_1000_markets_vs_1k >= 0.7)}; no command over ` +
    `1 ms: by the wall clock ${met(maxNs <= 1e6)} (${round(maxNs / 1000)} µs), by its CPU time ` +
    `${met(worst.max_command_cpu_ns <= 1e6)} (${round(worst.max_command_cpu_ns / 1000)} µs); <= 200 bytes per resting order: ` +
    `${met(metrics.bytes_per_resting_order <= 200)}.`,
  );
  const env = environment();
  return {
    name: 'engine_scale',
    node: env.node,
    machine: env.machine,
    workload:
      `engine_scale single thread, in process: seed ${SEED}, engine_match's mix (~50% passive, ~30% crossing, ~20% cancels; ` +
      'buys and sells of YES and NO) ' +
      `over uniformly chosen markets, each account trading in its home market; cases ${cases.map(describeCase).join('; ')}.`,
    metrics,
    peers: {},
    ratios: {},
    notes,
  };
}

if (process.argv[2] === '--memory-probe' && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  probeChild(process.argv[3]!, process.argv[4] === '--quick');
}
