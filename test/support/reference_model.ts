// reference_model: the engine rules of src/engine/README.md implemented a
// second time, independently of src/engine, with plain objects, Maps and
// arrays sorted on demand. Obviously correct beats fast: the differential
// test runs it beside the typed-array engine and compares every event.
//
// Input: one command in record_codec object form (as decodeRecord returns it).
// Output: the events of that command in the same object form (header fields
// seq, ts, producer, correlation, account; reserved fields omitted), or []
// when the command is dropped (a ClockTick with nothing due).
//
// Readings chosen where README.md is silent (kept in step with the engine
// after the first differential runs; see the report of the first run):
// - an event's `account`: the order's account for order events, the taker's on
//   Filled, the owner on key and withdrawal events, the holder on
//   PositionSettled, 0 on fee schedule, market, round and oracle events; a
//   CommandCompleted carries header.account, except CreateAccount's, which
//   carries the new account.
// - CommandCompleted.result beyond the listed ones: RevokeKey the key_id,
//   DeleteAccount the account_id, Confirm/FailWithdrawal the wid, Deposit
//   the Deposited seq (the first one's for a retry by ref and for
//   duplicate_deposit_ref); 0 for CancelAll, DisarmDeadman,
//   SubmitOracleTick, ClockTick and every other reject except
//   duplicate_client_withdrawal_id. A rejected cancel or
//   decrease still echoes the requested order_id.
// - RoundTransitioned to frozen (dispute included), trading or void carries
//   outcome none and settle_price 0; a dispute marks the round for good (an
//   unfreeze does not clear it), so it is never auto-proposed again.
// - unknown_account means "not live" (deleted accounts included) wherever
//   README names it.
// - RequestWithdrawal idempotency is per account (client_withdrawal_id),
//   while the withdrawal is retained: an account keeps its pending ones and
//   its newest withdrawal_cap finished ones; an evicted one is unknown (its
//   wid cannot be confirmed, its client_withdrawal_id makes a new one).
// - Deposit idempotency is per account (a non-empty ref), while the deposit
//   is among the account's newest deposit_ref_cap deposits with a ref.
// - An account keeps its live keys and its newest revoked_key_cap revoked
//   ones; revoking an evicted key is unknown_key.
// - Market volume and last_tick_yes describe the current round: OpenRound
//   resets them; a market keeps its last round_number after round eviction.

import {
  CancelReason, CompletionStatus, MarketStatus, Outcome, OrderStatus, Path, ProposeSource, RECORDS, Reject,
  RoundOutcome, RoundStatus, Side, Stp, Tif, WithdrawalStatus, type RecordInfo,
} from '../../src/layout/records.js';
import type { RecordObject } from '../../src/layout_codec/record_codec.js';

export interface ModelConfig {
  max_qty: number;
  terminal_cap: number;
  reject_cap: number;
  round_cap: number;
  withdrawal_cap: number;
  revoked_key_cap: number;
  deposit_ref_cap: number;
  oracle_staleness_ms: number;
  oracle_quorum: number;
  dispute_window_ms: number;
  /** Orders held at once, live and retained; a placement beyond is order_capacity_exceeded. */
  max_orders: number;
}

export const MODEL_DEFAULTS: ModelConfig = {
  max_qty: 1_000_000,
  terminal_cap: 1000,
  reject_cap: 100,
  round_cap: 1000,
  withdrawal_cap: 1000,
  revoked_key_cap: 100,
  deposit_ref_cap: 1000,
  oracle_staleness_ms: 10_000,
  oracle_quorum: 1,
  dispute_window_ms: 60_000,
  max_orders: 1 << 24, // the engine's default (src/engine/config.ts MAX_ORDERS_LIMIT)
};

// The summary shape is the comparison contract with the engine (src/engine/summary.ts).
export type { Summary } from '../../src/engine/summary.js';
import type { Summary } from '../../src/engine/summary.js';

export interface MOrder {
  order_id: number;
  account: number;
  market_id: number;
  side: number;
  outcome: number;
  tick: number;
  qty: number;
  group_id: number;
  tif: number;
  stp: number;
  post_only: number;
  has_client_order_id: number;
  client_order_id: bigint;
  expiry_ts: bigint;
  has_max_cost: number;
  max_cost: number;
  fee_per_share: number;
  ladder: number;
  ladder_tick: number;
  remaining: number;
  filled: number;
  /** Buys: cash still held in reserved for this order. */
  reserve_left: number;
  /** max_cost orders: cost (q * p + fee) of the fills so far. */
  spent: number;
  /** OrderStatus; live orders keep resting here and statusOf() refines it. */
  status: number;
  reason: number;
  on_book: boolean;
}

/** A PlaceOrder command's order fields. */
interface PlacementRequest {
  market_id: number; qty: number; group_id: number; tick: number; side: number; outcome: number; tif: number;
  stp: number; post_only: number; has_client_order_id: number; has_max_cost: number; client_order_id: bigint;
  expiry_ts: bigint; max_cost: number;
}

export interface MAccount { account_id: number; available: number; reserved: number; deleted: boolean }
export interface MPosition { free: number; rfs: number }
export interface MRound {
  round_number: number;
  market_id: number;
  strike: number;
  open_ts: bigint;
  close_ts: bigint;
  status: number;
  outcome: number;
  settle_price: number;
  proposed_ts: bigint;
  disputed: boolean;
}
export interface MMarket {
  market_id: number;
  category: number;
  position_limit: number;
  fee_schedule_id: number;
  title: string;
  volume: number;
  open_interest: number;
  last_tick_yes: number;
  /** The current round, or the last one once it is terminal; null before the first. */
  round: MRound | null;
  /** Series: round length in seconds (0 = not a series), whether it still opens rounds, and since when it has had no open round. */
  series_period_s: number;
  series_active: boolean;
  series_waiting_since: bigint;
}
export interface MWithdrawal {
  wid: number;
  account_id: number;
  client_withdrawal_id: bigint;
  amount: number;
  destination: string;
  status: number;
}
export interface MKey { key_id: number; account_id: number; scopes: number; revoked: boolean }

const NS_PER_MS = 1_000_000n;
const recordByName = new Map<string, RecordInfo>(RECORDS.map((r) => [r.name, r]));

function info(name: string): RecordInfo {
  const r = recordByName.get(name);
  if (!r) throw new Error(`reference_model: unknown record ${name}`);
  return r;
}

function defaultOf(type: string, js: string | undefined, size: number): unknown {
  if (type === 'u64') return js === 'hilo' ? 0n : 0;
  if (type === 'utf8') return '';
  if (type === 'bytes') return '00'.repeat(size);
  return 0;
}

/** ceil(bps * q * p * (100 - p) / 1_000_000), exact. */
export function feeOf(bps: number, q: number, p: number): number {
  const num = bps * q * p * (100 - p);
  let f = Math.floor(num / 1_000_000);
  while (f * 1_000_000 > num) f--;
  while (f * 1_000_000 < num) f++;
  return f;
}

/** Worst-case fee per share reserved by a buy at tick. */
export function feePerShare(takerBps: number, makerBps: number, tick: number): number {
  const w = tick <= 50 ? tick * (100 - tick) : 2500;
  return ceilDiv(Math.max(takerBps, makerBps) * w, 1_000_000);
}

function ceilDiv(a: number, b: number): number {
  let f = Math.floor(a / b);
  while (f * b > a) f--;
  while (f * b < a) f++;
  return f;
}

interface EventTemplate { defaults: [string, unknown][]; kinds: Map<string, string> }
const templates = new Map<string, EventTemplate>();

/** Every non-reserved field of an event record with its zero value, and the JS type each field takes. */
function eventTemplate(name: string): EventTemplate {
  let t = templates.get(name);
  if (!t) {
    const r = info(name);
    if (r.kind !== 'event') throw new Error(`reference_model: ${name} is not an event`);
    t = { defaults: [], kinds: new Map() };
    for (const f of r.fields) {
      if (f.name.startsWith('reserved')) continue;
      const d = defaultOf(f.type, f.js, f.size);
      t.defaults.push([f.name, d]);
      t.kinds.set(f.name, typeof d);
    }
    templates.set(name, t);
  }
  return t;
}

function isTerminalRound(status: number): boolean {
  return status === RoundStatus.settled || status === RoundStatus.void;
}

interface Ctx {
  seq: number;
  ts: bigint;
  producer: number;
  correlation: number;
  commandType: number;
  headerAccount: number;
  events: RecordObject[];
}

export class ReferenceModel {
  readonly config: ModelConfig;
  seq = 0;
  ts = 0n;
  fees_collected = 0;
  deposits_total = 0;
  confirmed_total = 0;

  readonly accounts = new Map<number, MAccount>();
  readonly positions = new Map<string, MPosition>();
  /** Live orders (accepted, not terminal). */
  readonly live = new Map<number, MOrder>();
  /** Per account: terminal (filled, canceled) and rejected orders, oldest first. */
  readonly retained = new Map<number, { terminal: MOrder[]; rejected: MOrder[] }>();
  readonly markets = new Map<number, MMarket>();
  readonly feeSchedules = new Map<number, { taker_bps: number; maker_bps: number }>();
  readonly rounds = new Map<number, MRound>();
  readonly terminalRounds: MRound[] = [];
  /** Oracle sources: last price and tick time; `expired` once OracleSourceExpired was emitted for that tick. */
  readonly oracle = new Map<number, { price: number; ts: bigint; expired: boolean }>();
  /** What GET /v1/oracle/price shows: the reference as of the last oracle event. */
  oracleView = { price: 0, fresh_source_count: 0, seq: 0 };
  readonly deadman = new Map<number, { timeout_ms: number; fires_at_ts: bigint }>();
  readonly withdrawals = new Map<number, MWithdrawal>();
  /** Per account, its remembered deposits by ref (insertion order = oldest first; at most deposit_ref_cap). */
  readonly depositRefs = new Map<number, Map<string, { amount: number; seq: number }>>();
  readonly keys = new Map<number, MKey>();

  private nextAccount = 0;
  private nextKey = 0;
  private nextWid = 0;
  private nextFeeSchedule = 0;
  private nextMarket = 0;
  private nextRound = 0;
  private nextFill = 0;
  private ctx: Ctx | null = null;


  constructor(config: Partial<ModelConfig> = {}) {
    this.config = { ...MODEL_DEFAULTS, ...config };
  }

  // ---------------------------------------------------------------- driver

  execute(cmd: RecordObject): RecordObject[] {
    const type = info(cmd.type);
    if (type.kind !== 'command') throw new Error(`reference_model: ${cmd.type} is not a command`);
    const cmdTs = cmd.ts as bigint;
    const ts = cmdTs > this.ts + 1n ? cmdTs : this.ts + 1n;
    // Time comes first: a command that arrives when a ClockTick would do something at its ts is preceded by that tick
    // (the clock's: producer 0, correlation 0), and follows it at ts + 1.
    const before: RecordObject[] = [];
    let at = ts;
    while (cmd.type !== 'ClockTick') {
      const tick = this.run({ type: 'ClockTick', producer: 0, correlation: 0, account: 0, ts: at }, info('ClockTick').type, at);
      if (tick.length === 0) break;
      before.push(...tick);
      at += 1n;
    }
    const events = this.run(cmd, type.type, at);
    if (events.length === 0 && cmd.type !== 'ClockTick') throw new Error(`reference_model: ${cmd.type} emitted nothing`);
    return before.length === 0 ? events : [...before, ...events];
  }

  /** Decides one command at ts; its events (none: a ClockTick with nothing due, which keeps seq and ts). */
  private run(cmd: RecordObject, commandType: number, ts: bigint): RecordObject[] {
    const ctx: Ctx = {
      seq: this.seq + 1,
      ts,
      producer: cmd.producer as number,
      correlation: cmd.correlation as number,
      commandType,
      headerAccount: cmd.account as number,
      events: [],
    };
    this.ctx = ctx;
    try {
      this.dispatch(cmd);
    } finally {
      this.ctx = null;
    }
    if (ctx.events.length === 0) return [];
    this.seq = ctx.seq;
    this.ts = ts;
    return ctx.events;
  }

  private dispatch(c: RecordObject): void {
    switch (c.type) {
      case 'PlaceOrder': return this.placeOrder(c);
      case 'CancelOrder': return this.cancelOrderCmd(c);
      case 'DecreaseOrder': return this.decreaseOrder(c);
      case 'CancelAll': return this.cancelAll(c);
      case 'ArmDeadman': return this.armDeadman(c);
      case 'DisarmDeadman': return this.disarmDeadman();
      case 'ClockTick': return this.clockTick();
      case 'CreateAccount': return this.createAccount();
      case 'DeleteAccount': return this.deleteAccount();
      case 'CreateKey': return this.createKey(c);
      case 'RevokeKey': return this.revokeKey(c);
      case 'SetKeyTier': return this.setKeyTier(c);
      case 'Deposit': return this.deposit(c);
      case 'RequestWithdrawal': return this.requestWithdrawal(c);
      case 'ConfirmWithdrawal': return this.finishWithdrawal(c, true);
      case 'FailWithdrawal': return this.finishWithdrawal(c, false);
      case 'CreateFeeSchedule': return this.createFeeSchedule(c);
      case 'CreateMarket': return this.createMarket(c);
      case 'OpenRound': return this.openRound(c);
      case 'FreezeRound':
      case 'UnfreezeRound':
      case 'ProposeRound':
      case 'DisputeRound':
      case 'SettleRound':
      case 'VoidRound':
        return this.roundCommand(c);
      case 'SubmitOracleTick': return this.oracleTick(c);
      case 'CreateSeries': return this.createSeries(c);
      case 'StopSeries': return this.stopSeries(c);
    }
    throw new Error(`reference_model: unhandled command ${c.type}`);
  }

  private get now(): Ctx {
    if (!this.ctx) throw new Error('reference_model: no command in progress');
    return this.ctx;
  }

  // ---------------------------------------------------------------- events

  private emit(name: string, account: number, fields: Record<string, unknown>): void {
    const ctx = this.now;
    const t = eventTemplate(name);
    const ev: RecordObject = {
      type: name, producer: ctx.producer, correlation: ctx.correlation, account, seq: ctx.seq, ts: ctx.ts,
    };
    for (const [k, v] of t.defaults) ev[k] = v;
    for (const k in fields) {
      const v = fields[k];
      const want = t.kinds.get(k);
      if (want === undefined) throw new Error(`reference_model: ${name} has no field ${k}`);
      if (typeof v !== want) throw new Error(`reference_model: ${name}.${k} must be ${want}, got ${typeof v}`);
      if (typeof v === 'number' && (!Number.isSafeInteger(v) || v < 0)) throw new Error(`reference_model: ${name}.${k} = ${v}`);
      ev[k] = v;
    }
    ctx.events.push(ev);
  }

  private complete(f: {
    status?: number; order_status?: number; reason?: number; code_num?: number; order_id?: number;
    filled_qty?: number; resting_qty?: number; result?: number; result_ts?: bigint; account?: number;
  }): void {
    const ctx = this.now;
    this.emit('CommandCompleted', f.account ?? ctx.headerAccount, {
      status: f.status ?? CompletionStatus.ok,
      order_status: f.order_status ?? 0,
      reason: f.reason ?? CancelReason.none,
      command_type: ctx.commandType,
      code_num: f.code_num ?? 0,
      order_id: f.order_id ?? 0,
      filled_qty: f.filled_qty ?? 0,
      resting_qty: f.resting_qty ?? 0,
      result: f.result ?? 0,
      result_ts: f.result_ts ?? 0n,
    });
  }

  private reject(code: number, extra: { order_id?: number; order_status?: number; result?: number } = {}): void {
    this.complete({ status: CompletionStatus.rejected, code_num: code, ...extra });
  }

  // ---------------------------------------------------------------- helpers

  private liveAccount(id: number): MAccount | undefined {
    const a = this.accounts.get(id);
    return a && !a.deleted ? a : undefined;
  }

  private account(id: number): MAccount {
    const a = this.accounts.get(id);
    if (!a) throw new Error(`reference_model: account ${id} was never created but holds value`);
    return a;
  }

  position(account: number, market: number, outcome: number): MPosition {
    const k = `${account}:${market}:${outcome}`;
    let p = this.positions.get(k);
    if (!p) {
      p = { free: 0, rfs: 0 };
      this.positions.set(k, p);
    }
    return p;
  }

  peekPosition(account: number, market: number, outcome: number): MPosition {
    return this.positions.get(`${account}:${market}:${outcome}`) ?? { free: 0, rfs: 0 };
  }

  private retention(account: number): { terminal: MOrder[]; rejected: MOrder[] } {
    let r = this.retained.get(account);
    if (!r) {
      r = { terminal: [], rejected: [] };
      this.retained.set(account, r);
    }
    return r;
  }

  private fees(market: MMarket): { taker_bps: number; maker_bps: number } {
    if (market.fee_schedule_id === 0) return { taker_bps: 0, maker_bps: 0 };
    const s = this.feeSchedules.get(market.fee_schedule_id);
    if (!s) throw new Error('reference_model: market with unknown fee schedule');
    return s;
  }

  statusOf(o: MOrder): number {
    if (o.status === OrderStatus.resting || o.status === OrderStatus.partially_filled) {
      return o.filled > 0 ? OrderStatus.partially_filled : OrderStatus.resting;
    }
    return o.status;
  }

  /** Live orders of the market's ladder in priority order (best tick first, then order_id). */
  private ladderOrders(market: number, ladder: number): MOrder[] {
    const out: MOrder[] = [];
    for (const o of this.live.values()) if (o.on_book && o.market_id === market && o.ladder === ladder) out.push(o);
    out.sort((a, b) => b.ladder_tick - a.ladder_tick || a.order_id - b.order_id);
    return out;
  }

  /** Live orders and every account's retained terminal and rejected ones: what a read model holds. */
  private heldOrders(): number {
    let n = this.live.size;
    for (const r of this.retained.values()) n += r.terminal.length + r.rejected.length;
    return n;
  }

  /** PlaceOrder check 3: a field out of range or a combination that makes no sense. */
  private invalidPlacement(req: PlacementRequest): boolean {
    return (
      req.tick < 1 || req.tick > 99 ||
      req.qty === 0 || req.qty > this.config.max_qty ||
      req.side > Side.sell || req.outcome > Outcome.no || req.tif > Tif.fok || req.stp > Stp.cancel_both ||
      req.post_only > 1 || req.has_client_order_id > 1 || req.has_max_cost > 1 ||
      (req.post_only !== 0 && (req.tif === Tif.ioc || req.tif === Tif.fok)) ||
      (req.tif === Tif.gtd && req.expiry_ts === 0n) ||
      (req.tif !== Tif.gtd && req.expiry_ts !== 0n) ||
      (req.has_max_cost !== 0 && req.side === Side.sell) ||
      (req.has_max_cost !== 0 && (req.post_only !== 0 || req.tif === Tif.gtd))
    );
  }

  /** Before acct holds one more order (a reject, which is not one more when its reject list is full): makeRoom at the bound. */
  private roomFor(acct: number, reject: boolean): void {
    if (this.heldOrders() < this.config.max_orders) return;
    if (reject && this.retention(acct).rejected.length >= this.config.reject_cap) return;
    this.makeRoom(acct);
  }

  /**
   * At max_orders, before a new order is held: one retained order leaves.
   * The placing account's own if it has any, else the first account (by id,
   * wrapping past the last) from 1 + seq mod (accounts created) that has any;
   * its oldest rejected order, else its oldest terminal one.
   */
  private makeRoom(acct: number): void {
    const holds = (a: number): boolean => {
      const r = this.retained.get(a);
      return r !== undefined && r.terminal.length + r.rejected.length > 0;
    };
    let victim = acct;
    if (!holds(victim)) {
      const n = this.nextAccount;
      const start = 1 + (this.now.seq % n);
      const order = [...Array(n).keys()].map((i) => ((start - 1 + i) % n) + 1);
      const found = order.find(holds);
      if (found === undefined) throw new Error('reference_model: max_orders reached with nothing retained');
      victim = found;
    }
    const r = this.retained.get(victim)!;
    if (r.rejected.length > 0) r.rejected.shift();
    else r.terminal.shift();
  }

  private liveOrdersSorted(pred: (o: MOrder) => boolean): MOrder[] {
    return [...this.live.values()].filter(pred).sort((a, b) => a.order_id - b.order_id);
  }

  /** The order left the live set as filled or canceled: retain it, evicting the oldest beyond terminal_cap. */
  private becameTerminal(o: MOrder): void {
    this.live.delete(o.order_id);
    o.on_book = false;
    const r = this.retention(o.account);
    r.terminal.push(o);
    while (r.terminal.length > this.config.terminal_cap) r.terminal.shift();
  }

  /**
   * Gives back what `qty` shares of live order o held: a buy's cash (all of a
   * max-cost reservation, which is not per share) to available, a sell's
   * shares to free. Returns the cash released (0 for a sell).
   */
  private unreserve(o: MOrder, qty: number): number {
    if (o.side !== Side.buy) {
      const p = this.position(o.account, o.market_id, o.outcome);
      p.rfs -= qty;
      p.free += qty;
      return 0;
    }
    const release = o.has_max_cost ? o.reserve_left : qty * (o.tick + o.fee_per_share);
    const a = this.account(o.account);
    o.reserve_left -= release;
    a.reserved -= release;
    a.available += release;
    return release;
  }

  private cancel(o: MOrder, reason: number): void {
    if (!this.live.has(o.order_id)) throw new Error(`reference_model: cancel of non-live order ${o.order_id}`);
    const qty = o.remaining;
    const release = this.unreserve(o, qty);
    if (o.side === Side.buy && o.reserve_left !== 0) throw new Error('reference_model: buy reservation drifted');
    o.remaining = 0;
    o.status = OrderStatus.canceled;
    o.reason = reason;
    this.emit('OrderCanceled', o.account, { order_id: o.order_id, canceled_qty: qty, reason, release_cash: release });
    this.becameTerminal(o);
  }

  // ---------------------------------------------------------------- PlaceOrder

  private placeOrder(c: RecordObject): void {
    const ctx = this.now;
    const acct = c.account as number;
    const req = {
      market_id: c.market_id as number,
      qty: c.qty as number,
      group_id: c.group_id as number,
      tick: c.tick as number,
      side: c.side as number,
      outcome: c.outcome as number,
      tif: c.tif as number,
      stp: c.stp as number,
      post_only: c.post_only as number,
      has_client_order_id: c.has_client_order_id as number,
      has_max_cost: c.has_max_cost as number,
      client_order_id: c.client_order_id as bigint,
      expiry_ts: c.expiry_ts as bigint,
      max_cost: c.max_cost as number,
    };
    const rejectPlacement = (code: number): void => {
      this.emit('OrderRejected', acct, { order_id: ctx.seq, ...req, code_num: code });
      const o = this.makeOrder(ctx.seq, acct, req, 0);
      o.status = OrderStatus.rejected;
      this.roomFor(acct, true);
      const r = this.retention(acct);
      r.rejected.push(o);
      while (r.rejected.length > this.config.reject_cap) r.rejected.shift();
      this.reject(code, { order_status: OrderStatus.rejected, order_id: ctx.seq });
    };

    // 1. unknown_account (no OrderRejected, nothing retained)
    if (!this.liveAccount(acct)) {
      this.reject(Reject.unknown_account);
      return;
    }
    // 2. duplicate_client_order_id (no OrderRejected, nothing retained)
    if (req.has_client_order_id === 1) {
      const existing = this.findClientOrder(acct, req.client_order_id);
      if (existing) {
        this.reject(Reject.duplicate_client_order_id, { order_id: existing.order_id, order_status: this.statusOf(existing) });
        return;
      }
    }
    // 2a. order_capacity_exceeded (no OrderRejected, nothing retained): live orders alone fill max_orders
    if (this.live.size >= this.config.max_orders) {
      this.reject(Reject.order_capacity_exceeded);
      return;
    }
    // 3. invalid_command
    if (this.invalidPlacement(req)) return rejectPlacement(Reject.invalid_command);
    // 4. unknown_market
    const market = this.markets.get(req.market_id);
    if (!market) return rejectPlacement(Reject.unknown_market);
    // 5. market_not_trading
    if (!market.round || market.round.status !== RoundStatus.trading) return rejectPlacement(Reject.market_not_trading);
    // 5. expiry_in_past
    if (req.tif === Tif.gtd && req.expiry_ts <= ctx.ts) return rejectPlacement(Reject.expiry_in_past);
    const fs = this.fees(market);
    // A buy reserves the worst fee it can pay: as a taker unless post_only, as a maker unless it can never rest.
    const rests = req.tif !== Tif.ioc && req.tif !== Tif.fok && req.has_max_cost === 0;
    const fps = req.side === Side.buy ? feePerShare(req.post_only === 1 ? 0 : fs.taker_bps, rests ? fs.maker_bps : 0, req.tick) : 0;
    let reserveCash = 0;
    if (req.side === Side.buy) {
      reserveCash = req.qty * (req.tick + fps);
      if (req.has_max_cost !== 0) reserveCash = Math.min(reserveCash, req.max_cost);
    }
    const a = this.accounts.get(acct);
    if (req.side === Side.sell) {
      // 6. insufficient_position
      if (this.peekPosition(acct, req.market_id, req.outcome).free < req.qty) return rejectPlacement(Reject.insufficient_position);
    } else {
      // 7. position_limit_exceeded
      if (market.position_limit !== 0) {
        const p = this.peekPosition(acct, req.market_id, req.outcome);
        let buying = 0;
        for (const o of this.live.values()) {
          if (o.account === acct && o.market_id === req.market_id && o.outcome === req.outcome && o.side === Side.buy)
            buying += o.remaining;
        }
        if (p.free + p.rfs + buying + req.qty > market.position_limit) return rejectPlacement(Reject.position_limit_exceeded);
      }
      // 8. insufficient_balance
      if ((a ? a.available : 0) < reserveCash) return rejectPlacement(Reject.insufficient_balance);
    }

    // Accepted: the reservation is taken (and, at max_orders, a retained order leaves).
    this.roomFor(acct, false);
    const o = this.makeOrder(ctx.seq, acct, req, fps);
    if (o.side === Side.buy) {
      const acc = this.account(acct);
      acc.available -= reserveCash;
      acc.reserved += reserveCash;
      o.reserve_left = reserveCash;
    } else {
      const p = this.position(acct, o.market_id, o.outcome);
      p.free -= o.qty;
      p.rfs += o.qty;
    }
    this.live.set(o.order_id, o);
    this.emit('OrderAccepted', acct, {
      order_id: o.order_id, market_id: o.market_id, qty: o.qty, group_id: o.group_id, tick: o.tick, side: o.side,
      outcome: o.outcome, tif: o.tif, stp: o.stp, post_only: o.post_only, has_client_order_id: o.has_client_order_id,
      has_max_cost: o.has_max_cost, fee_per_share: fps, client_order_id: o.client_order_id, expiry_ts: o.expiry_ts,
      max_cost: o.max_cost, reserve_cash: reserveCash,
    });

    const makers = this.ladderOrders(o.market_id, 1 - o.ladder);
    let done = false;
    if (o.post_only !== 0) {
      const best = makers[0];
      if (best && best.ladder_tick + o.ladder_tick >= 100) {
        this.cancel(o, CancelReason.post_only_cross);
        done = true;
      }
    }
    if (!done && o.tif === Tif.fok && !this.fokFeasible(o, makers, fs.taker_bps)) {
      this.cancel(o, CancelReason.fok_infeasible);
      done = true;
    }
    if (!done) {
      this.matchLoop(o, makers, market, fs);
      if (this.live.has(o.order_id) && o.remaining > 0) {
        if (o.has_max_cost !== 0 && o.filled === 0) this.cancel(o, CancelReason.max_cost_infeasible);
        else if (o.tif === Tif.ioc || o.tif === Tif.fok || o.has_max_cost !== 0) this.cancel(o, CancelReason.ioc_remainder);
        else {
          o.on_book = true;
          this.emit('OrderRested', acct, { order_id: o.order_id });
        }
      }
    }
    const status = this.statusOf(o);
    this.complete({
      order_id: o.order_id,
      order_status: status,
      reason: status === OrderStatus.canceled ? o.reason : CancelReason.none,
      filled_qty: o.filled,
      resting_qty: o.on_book ? o.remaining : 0,
    });
  }

  private makeOrder(id: number, acct: number, req: PlacementRequest, fps: number): MOrder {
    const buy = req.side === Side.buy;
    return {
      order_id: id, account: acct, ...req, fee_per_share: fps,
      ladder: buy ? req.outcome : 1 - req.outcome,
      ladder_tick: buy ? req.tick : 100 - req.tick,
      remaining: req.qty, filled: 0, reserve_left: 0, spent: 0,
      status: OrderStatus.resting, reason: CancelReason.none, on_book: false,
    };
  }

  /** The retained order (live, terminal or rejected) of the account with this client_order_id; the newest when several. */
  findClientOrder(acct: number, coid: bigint): MOrder | undefined {
    let best: MOrder | undefined;
    const consider = (o: MOrder): void => {
      if (o.account === acct && o.has_client_order_id !== 0 && o.client_order_id === coid && (!best || o.order_id > best.order_id))
        best = o;
    };
    for (const o of this.live.values()) consider(o);
    const r = this.retained.get(acct);
    if (r) {
      for (const o of r.terminal) consider(o);
      for (const o of r.rejected) consider(o);
    }
    return best;
  }

  /** Taker's own-outcome price against a maker resting at ladder tick m. */
  private takerPrice(taker: MOrder, m: number): number {
    return taker.side === Side.buy ? 100 - m : m;
  }

  /** Most shares q' <= q with q' * p + fee(q') <= budget (cost is non-decreasing in q'). */
  private affordable(q: number, p: number, bps: number, budget: number): number {
    const cost = (n: number): number => n * p + feeOf(bps, n, p);
    let lo = 0;
    let hi = q;
    while (lo < hi) {
      const mid = Math.ceil((lo + hi) / 2);
      if (cost(mid) <= budget) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** fok pre-walk: would the match loop fill the whole quantity? Mirrors matchLoop without side effects. */
  private fokFeasible(o: MOrder, makers: MOrder[], takerBps: number): boolean {
    let need = o.remaining;
    let spent = 0;
    walk: for (const mk of makers) {
      if (mk.ladder_tick + o.ladder_tick < 100) break;
      if (mk.account === o.account) {
        if (o.stp === Stp.cancel_maker) continue;
        break;
      }
      let mrem = mk.remaining;
      while (need > 0 && mrem > 0) {
        let q = Math.min(need, mrem);
        if (o.has_max_cost !== 0) {
          const p = this.takerPrice(o, mk.ladder_tick);
          q = this.affordable(q, p, takerBps, o.max_cost - spent);
          if (q === 0) break walk;
          spent += q * p + feeOf(takerBps, q, p);
        }
        need -= q;
        mrem -= q;
      }
      if (need === 0) break;
    }
    return need === 0;
  }

  private matchLoop(o: MOrder, makers: MOrder[], market: MMarket, fs: { taker_bps: number; maker_bps: number }): void {
    let i = 0;
    while (o.remaining > 0 && i < makers.length) {
      const mk = makers[i]!;
      if (!this.live.has(mk.order_id)) {
        i++;
        continue;
      }
      if (mk.ladder_tick + o.ladder_tick < 100) break;
      if (mk.account === o.account) {
        if (o.stp === Stp.cancel_taker) {
          this.cancel(o, CancelReason.self_trade_prevention);
          return;
        }
        if (o.stp === Stp.cancel_maker) {
          this.cancel(mk, CancelReason.self_trade_prevention);
          i++;
          continue;
        }
        this.cancel(mk, CancelReason.self_trade_prevention);
        this.cancel(o, CancelReason.self_trade_prevention);
        return;
      }
      let q = Math.min(o.remaining, mk.remaining);
      if (o.has_max_cost !== 0) {
        q = this.affordable(q, this.takerPrice(o, mk.ladder_tick), fs.taker_bps, o.max_cost - o.spent);
        if (q === 0) return;
      }
      this.fill(mk, o, q, market, fs);
      if (mk.remaining === 0) i++;
    }
  }

  /** One party's side of a fill; returns its release (buys) or 0 (sells). */
  private settleParty(o: MOrder, q: number, p: number, fee: number): number {
    const a = this.account(o.account);
    if (o.side === Side.buy) {
      const cost = q * p + fee;
      let release: number;
      if (o.has_max_cost !== 0) {
        release = o.remaining === 0 ? o.reserve_left : cost;
        o.spent += cost;
      } else {
        release = q * (o.tick + o.fee_per_share);
      }
      if (release > o.reserve_left) throw new Error(`reference_model: order ${o.order_id} releases more than it reserved`);
      o.reserve_left -= release;
      a.reserved -= release;
      a.available += release - cost;
      this.position(o.account, o.market_id, o.outcome).free += q;
      return release;
    }
    const pos = this.position(o.account, o.market_id, o.outcome);
    pos.rfs -= q;
    a.available += q * p - fee;
    return 0;
  }

  private fill(mk: MOrder, tk: MOrder, q: number, market: MMarket, fs: { taker_bps: number; maker_bps: number }): void {
    const m = mk.ladder_tick;
    const pm = mk.side === Side.buy ? m : 100 - m;
    const pt = this.takerPrice(tk, m);
    const makerFee = feeOf(fs.maker_bps, q, pm);
    const takerFee = feeOf(fs.taker_bps, q, pt);
    mk.remaining -= q;
    mk.filled += q;
    tk.remaining -= q;
    tk.filled += q;
    const makerRelease = this.settleParty(mk, q, pm, makerFee);
    const takerRelease = this.settleParty(tk, q, pt, takerFee);
    const path = mk.side === Side.buy && tk.side === Side.buy ? Path.mint
      : mk.side === Side.sell && tk.side === Side.sell ? Path.merge : Path.direct;
    if (path === Path.mint) market.open_interest += q;
    else if (path === Path.merge) market.open_interest -= q;
    const tickYes = mk.ladder === 0 ? m : 100 - m;
    market.volume += q;
    market.last_tick_yes = tickYes;
    this.fees_collected += makerFee + takerFee;
    this.nextFill += 1;
    this.emit('Filled', tk.account, {
      fill_id: this.nextFill, maker_order_id: mk.order_id, taker_order_id: tk.order_id, maker_account: mk.account,
      taker_account: tk.account, market_id: market.market_id, qty: q, tick_yes: tickYes, path,
      taker_side: tk.side, taker_outcome: tk.outcome, maker_fee: makerFee, taker_fee: takerFee,
      maker_release: makerRelease, taker_release: takerRelease,
    });
    if (mk.remaining === 0) {
      mk.status = OrderStatus.filled;
      this.becameTerminal(mk);
    }
    if (tk.remaining === 0) {
      tk.status = OrderStatus.filled;
      this.becameTerminal(tk);
    }
  }

  // ---------------------------------------------------------------- other order commands

  private cancelOrderCmd(c: RecordObject): void {
    const id = c.order_id as number;
    const o = this.live.get(id);
    if (!o || o.account !== (c.account as number)) return this.reject(Reject.unknown_order, { order_id: id });
    const qty = o.remaining;
    this.cancel(o, CancelReason.user_canceled);
    this.complete({ order_id: id, result: qty });
  }

  private decreaseOrder(c: RecordObject): void {
    const id = c.order_id as number;
    const o = this.live.get(id);
    if (!o || o.account !== (c.account as number)) return this.reject(Reject.unknown_order, { order_id: id });
    const n = Math.min(o.remaining, c.new_qty as number);
    if (n === 0) {
      this.cancel(o, CancelReason.decreased_to_zero);
    } else if (n < o.remaining) {
      const release = this.unreserve(o, o.remaining - n);
      o.remaining = n;
      this.emit('OrderDecreased', o.account, { order_id: id, new_qty: n, release_cash: release });
    }
    this.complete({ order_id: id, result: n });
  }

  private cancelAll(c: RecordObject): void {
    const acct = c.account as number;
    const market = c.market_id as number;
    const group = c.group_id as number;
    if (!this.liveAccount(acct)) return this.reject(Reject.unknown_account);
    for (const o of this.liveOrdersSorted(
      (x) => x.account === acct && (market === 0 || x.market_id === market) && (group === 0 || x.group_id === group),
    )) {
      this.cancel(o, CancelReason.mass_canceled);
    }
    this.complete({});
  }

  private armDeadman(c: RecordObject): void {
    const acct = c.account as number;
    const timeout = c.timeout_ms as number;
    if (!this.liveAccount(acct)) return this.reject(Reject.unknown_account);
    const fires = this.now.ts + BigInt(timeout) * NS_PER_MS;
    this.deadman.set(acct, { timeout_ms: timeout, fires_at_ts: fires });
    this.emit('DeadmanArmed', acct, { timeout_ms: timeout, fires_at_ts: fires });
    this.complete({ result: timeout, result_ts: fires });
  }

  private disarmDeadman(): void {
    const acct = this.now.headerAccount;
    if (!this.liveAccount(acct)) return this.reject(Reject.unknown_account);
    if (this.deadman.has(acct)) {
      this.deadman.delete(acct);
      this.emit('DeadmanDisarmed', acct, { fired: 0 });
    }
    this.complete({});
  }

  // ---------------------------------------------------------------- ClockTick

  private clockTick(): void {
    const ts = this.now.ts;
    // 1. gtd expiries by (expiry_ts, order_id)
    const expired = [...this.live.values()]
      .filter((o) => o.tif === Tif.gtd && o.expiry_ts <= ts)
      .sort((a, b) => (a.expiry_ts < b.expiry_ts ? -1 : a.expiry_ts > b.expiry_ts ? 1 : a.order_id - b.order_id));
    for (const o of expired) if (this.live.has(o.order_id)) this.cancel(o, CancelReason.expired);
    // 2. dead-man timers by (fires_at_ts, account)
    const due = [...this.deadman.entries()]
      .filter(([, d]) => d.fires_at_ts <= ts)
      .sort((a, b) => (a[1].fires_at_ts < b[1].fires_at_ts ? -1 : a[1].fires_at_ts > b[1].fires_at_ts ? 1 : a[0] - b[0]));
    for (const [acct] of due) {
      for (const o of this.liveOrdersSorted((x) => x.account === acct)) this.cancel(o, CancelReason.deadman);
      this.deadman.delete(acct);
      this.emit('DeadmanDisarmed', acct, { fired: 1 });
    }
    // 2b. oracle sources whose last tick is staleness old, by (that time, source_id); each event
    // carries the reference at ts with every stale source left out
    const staleness = BigInt(this.config.oracle_staleness_ms) * NS_PER_MS;
    const stale = [...this.oracle.entries()]
      .filter(([, src]) => !src.expired && ts - src.ts >= staleness)
      .sort((a, b) => (a[1].ts < b[1].ts ? -1 : a[1].ts > b[1].ts ? 1 : a[0] - b[0]));
    if (stale.length > 0) {
      const now = this.oracleAt(ts);
      for (const [id, src] of stale) {
        src.expired = true;
        this.oracleView = { price: now.ref, fresh_source_count: now.count, seq: this.now.seq };
        this.emit('OracleSourceExpired', 0, { source_id: id, fresh_source_count: now.count, ref_price: now.ref });
      }
    }
    // 3. trading rounds at close_ts, by (close_ts, market_id)
    const closing = [...this.markets.values()]
      .filter((m) => m.round && m.round.status === RoundStatus.trading && m.round.close_ts <= ts)
      .sort((a, b) => (a.round!.close_ts < b.round!.close_ts ? -1 : a.round!.close_ts > b.round!.close_ts ? 1 : a.market_id - b.market_id));
    for (const m of closing) this.freeze(m);
    // 4. frozen, undisputed, closed rounds propose from the oracle
    this.proposeClosed(ts);
    // 5. proposed rounds past the dispute window, by (proposed_ts + window, market_id)
    const window = BigInt(this.config.dispute_window_ms) * NS_PER_MS;
    const settling = [...this.markets.values()]
      .filter((m) => m.round && m.round.status === RoundStatus.proposed && m.round.proposed_ts + window <= ts)
      .sort((a, b) => {
        const x = a.round!.proposed_ts;
        const y = b.round!.proposed_ts;
        return x < y ? -1 : x > y ? 1 : a.market_id - b.market_id;
      });
    for (const m of settling) this.endRound(m, false);
    // 6. active series without an open round get their next one when the quorum is fresh,
    // strike = the reference at ts, by (time they became roundless, market_id)
    const waiting = [...this.markets.values()]
      .filter((m) => m.series_active && (!m.round || isTerminalRound(m.round.status)))
      .sort((a, b) =>
        a.series_waiting_since < b.series_waiting_since
          ? -1
          : a.series_waiting_since > b.series_waiting_since
            ? 1
            : a.market_id - b.market_id,
      );
    if (waiting.length > 0) {
      const o = this.oracleAt(ts);
      if (o.count >= this.config.oracle_quorum) for (const m of waiting) this.openSeriesRound(m, o.ref);
    }
    // Nothing due: dropped (execute() returns no events and keeps seq and ts).
    if (this.now.events.length > 0) this.complete({});
  }

  // ---------------------------------------------------------------- rounds and oracle

  /** Closed rounds by (close_ts, market_id): from the sources fresh at close_ts when they make the quorum, else from those fresh at ts. */
  private proposeClosed(ts: bigint): void {
    const now = this.oracleAt(ts);
    const proposing = [...this.markets.values()]
      .filter((m) => m.round && m.round.status === RoundStatus.frozen && !m.round.disputed && m.round.close_ts <= ts)
      .sort((a, b) =>
        a.round!.close_ts < b.round!.close_ts ? -1 : a.round!.close_ts > b.round!.close_ts ? 1 : a.market_id - b.market_id,
      );
    for (const m of proposing) {
      const atClose = this.oracleAtClose(m.round!.close_ts);
      const o = atClose.count >= this.config.oracle_quorum ? atClose : now;
      if (o.count >= this.config.oracle_quorum) this.propose(m, o.ref >= m.round!.strike ? RoundOutcome.yes : RoundOutcome.no, o.ref);
    }
  }

  /** The sources fresh at a round's close: last tick <= close_ts < last tick + staleness. */
  oracleAtClose(close: bigint): { count: number; ref: number } {
    const staleness = BigInt(this.config.oracle_staleness_ms) * NS_PER_MS;
    const prices: number[] = [];
    for (const s of this.oracle.values()) if (s.ts <= close && close - s.ts < staleness) prices.push(s.price);
    prices.sort((a, b) => a - b);
    return { count: prices.length, ref: prices.length === 0 ? 0 : prices[(prices.length - 1) >> 1]! };
  }

  oracleAt(ts: bigint): { count: number; ref: number } {
    const staleness = BigInt(this.config.oracle_staleness_ms) * NS_PER_MS;
    const prices: number[] = [];
    for (const s of this.oracle.values()) if (ts - s.ts < staleness) prices.push(s.price);
    prices.sort((a, b) => a - b);
    return { count: prices.length, ref: prices.length === 0 ? 0 : prices[(prices.length - 1) >> 1]! };
  }

  private transitioned(r: MRound, status: number, outcome: number, settlePrice: number): void {
    this.emit('RoundTransitioned', 0, { round_number: r.round_number, market_id: r.market_id, status, outcome, settle_price: settlePrice });
  }

  private freeze(m: MMarket): void {
    const r = m.round!;
    for (const o of this.liveOrdersSorted((x) => x.market_id === m.market_id)) this.cancel(o, CancelReason.round_frozen);
    r.status = RoundStatus.frozen;
    this.transitioned(r, RoundStatus.frozen, RoundOutcome.none, 0);
  }

  private propose(m: MMarket, outcome: number, settlePrice: number): void {
    const r = m.round!;
    r.status = RoundStatus.proposed;
    r.outcome = outcome;
    r.settle_price = settlePrice;
    r.proposed_ts = this.now.ts;
    this.transitioned(r, RoundStatus.proposed, outcome, settlePrice);
  }

  /** Settle (at the proposed outcome) or void: cancel resting orders, pay positions, transition. */
  private endRound(m: MMarket, isVoid: boolean): void {
    const r = m.round!;
    const reason = isVoid ? CancelReason.round_void : CancelReason.round_settled;
    for (const o of this.liveOrdersSorted((x) => x.market_id === m.market_id)) this.cancel(o, reason);
    const holders = new Map<number, { yes: number; no: number }>();
    for (const [k, p] of this.positions) {
      const [a, mk, oc] = k.split(':').map(Number) as [number, number, number];
      if (mk !== m.market_id) continue;
      if (p.rfs !== 0) throw new Error('reference_model: shares reserved for sale after the cancels');
      if (p.free === 0) continue;
      const h = holders.get(a) ?? { yes: 0, no: 0 };
      if (oc === Outcome.yes) h.yes += p.free;
      else h.no += p.free;
      holders.set(a, h);
    }
    for (const acct of [...holders.keys()].sort((x, y) => x - y)) {
      const h = holders.get(acct)!;
      const payout = isVoid ? 50 * (h.yes + h.no) : 100 * (r.outcome === RoundOutcome.yes ? h.yes : h.no);
      this.positions.delete(`${acct}:${m.market_id}:${Outcome.yes}`);
      this.positions.delete(`${acct}:${m.market_id}:${Outcome.no}`);
      this.account(acct).available += payout;
      this.emit('PositionSettled', acct, { market_id: m.market_id, round_number: r.round_number, yes_qty: h.yes, no_qty: h.no, payout });
    }
    m.open_interest = 0;
    r.status = isVoid ? RoundStatus.void : RoundStatus.settled;
    m.series_waiting_since = this.now.ts;
    if (isVoid) {
      r.outcome = RoundOutcome.none;
      r.settle_price = 0;
    }
    this.transitioned(r, r.status, r.outcome, r.settle_price);
    this.terminalRounds.push(r);
    while (this.terminalRounds.length > this.config.round_cap) this.rounds.delete(this.terminalRounds.shift()!.round_number);
  }

  private openRound(c: RecordObject): void {
    const m = this.markets.get(c.market_id as number);
    if (!m) return this.reject(Reject.unknown_market);
    const closeTs = c.close_ts as bigint;
    if ((m.round && !isTerminalRound(m.round.status)) || closeTs <= this.now.ts) return this.reject(Reject.round_state_conflict);
    this.nextRound += 1;
    const r: MRound = {
      round_number: this.nextRound, market_id: m.market_id, strike: c.strike as number, open_ts: this.now.ts,
      close_ts: closeTs, status: RoundStatus.trading, outcome: RoundOutcome.none, settle_price: 0, proposed_ts: 0n,
      disputed: false,
    };
    this.rounds.set(r.round_number, r);
    m.round = r;
    // Market data describe the current round: a new round starts with no volume and no last trade.
    m.volume = 0;
    m.last_tick_yes = 0;
    this.emit('RoundOpened', 0, { round_number: r.round_number, market_id: m.market_id, strike: r.strike, close_ts: closeTs });
    this.complete({ result: r.round_number });
  }

  private roundCommand(c: RecordObject): void {
    const m = this.markets.get(c.market_id as number);
    if (!m) return this.reject(Reject.unknown_market);
    const r = m.round;
    const st = r ? r.status : RoundStatus.none;
    switch (c.type) {
      case 'FreezeRound':
        if (st !== RoundStatus.trading) return this.reject(Reject.round_state_conflict);
        this.freeze(m);
        break;
      case 'UnfreezeRound':
        if (st !== RoundStatus.frozen || !(this.now.ts < r!.close_ts)) return this.reject(Reject.round_state_conflict);
        r!.status = RoundStatus.trading;
        this.transitioned(r!, RoundStatus.trading, RoundOutcome.none, 0);
        break;
      case 'ProposeRound': {
        const source = c.source as number;
        if (source > ProposeSource.no) return this.reject(Reject.invalid_command);
        if (st !== RoundStatus.frozen) return this.reject(Reject.round_state_conflict);
        if (source === ProposeSource.oracle) {
          const { count, ref } = this.oracleAt(this.now.ts);
          if (count < this.config.oracle_quorum) return this.reject(Reject.oracle_quorum_not_met);
          this.propose(m, ref >= r!.strike ? RoundOutcome.yes : RoundOutcome.no, ref);
        } else {
          this.propose(m, source === ProposeSource.yes ? RoundOutcome.yes : RoundOutcome.no, 0);
        }
        break;
      }
      case 'DisputeRound':
        if (st !== RoundStatus.proposed) return this.reject(Reject.round_state_conflict);
        r!.status = RoundStatus.frozen;
        r!.disputed = true;
        r!.outcome = RoundOutcome.none;
        r!.settle_price = 0;
        this.transitioned(r!, RoundStatus.frozen, RoundOutcome.none, 0);
        break;
      case 'SettleRound':
        if (st !== RoundStatus.proposed) return this.reject(Reject.round_state_conflict);
        this.endRound(m, false);
        break;
      case 'VoidRound':
        if (st !== RoundStatus.trading && st !== RoundStatus.frozen && st !== RoundStatus.proposed)
          return this.reject(Reject.round_state_conflict);
        this.endRound(m, true);
        break;
    }
    this.complete({ result: r!.round_number });
  }

  private oracleTick(c: RecordObject): void {
    const ts = this.now.ts;
    const source = c.source_id as number;
    const price = c.price as number;
    this.oracle.set(source, { price, ts, expired: false });
    const { count, ref } = this.oracleAt(ts);
    this.oracleView = { price: ref, fresh_source_count: count, seq: this.now.seq };
    this.emit('OracleTicked', 0, { source_id: source, fresh_source_count: count, price, ref_price: ref });
    this.complete({});
  }

  // ---------------------------------------------------------------- accounts, keys, funding, fees, markets

  private createAccount(): void {
    this.nextAccount += 1;
    const id = this.nextAccount;
    this.accounts.set(id, { account_id: id, available: 0, reserved: 0, deleted: false });
    this.emit('AccountCreated', id, { account_id: id });
    // The completion concerns the new account (the command's header names none).
    this.complete({ result: id, account: id });
  }

  private deleteAccount(): void {
    const acct = this.now.headerAccount;
    const a = this.liveAccount(acct);
    if (!a) return this.reject(Reject.unknown_account);
    const shares = [...this.positions.entries()].some(([k, p]) => k.startsWith(`${acct}:`) && p.free + p.rfs > 0);
    if (a.available !== 0 || a.reserved !== 0 || shares) return this.reject(Reject.account_not_empty);
    const keys = [...this.keys.values()].filter((k) => k.account_id === acct && !k.revoked).sort((x, y) => x.key_id - y.key_id);
    for (const k of keys) {
      this.emit('KeyRevoked', acct, { key_id: k.key_id, account_id: acct });
      this.retireKey(k);
    }
    a.deleted = true;
    this.emit('AccountDeleted', acct, { account_id: acct });
    this.complete({ result: acct });
  }

  private createKey(c: RecordObject): void {
    const acct = this.now.headerAccount;
    if (!this.liveAccount(acct)) return this.reject(Reject.unknown_account);
    this.nextKey += 1;
    const k: MKey = { key_id: this.nextKey, account_id: acct, scopes: c.scopes as number, revoked: false };
    this.keys.set(k.key_id, k);
    this.emit('KeyCreated', acct, {
      key_id: k.key_id,
      account_id: acct,
      scopes: k.scopes,
      secret: c.secret as string,
      label: (c.label as string) ?? '',
    });
    this.complete({ result: k.key_id });
  }

  private revokeKey(c: RecordObject): void {
    const hdr = this.now.headerAccount;
    const k = this.keys.get(c.key_id as number);
    if (!k || (hdr !== 0 && k.account_id !== hdr)) return this.reject(Reject.unknown_key);
    if (!k.revoked) {
      this.emit('KeyRevoked', k.account_id, { key_id: k.key_id, account_id: k.account_id });
      this.retireKey(k);
    }
    this.complete({ result: k.key_id });
  }

  /** Named tiers (0..2) carry no figures; custom (3) carries four, each 1..10,000,000; the key must exist and not be revoked. */
  private setKeyTier(c: RecordObject): void {
    const k = this.keys.get(c.key_id as number);
    if (!k || k.revoked) return this.reject(Reject.unknown_key);
    const tier = c.tier as number;
    const figures = [c.read_rate_per_s, c.read_burst, c.write_rate_per_s, c.write_burst].map((x) => (x as number | undefined) ?? 0);
    const ok = tier === 3 ? figures.every((f) => f >= 1 && f <= 10_000_000) : tier <= 2 && figures.every((f) => f === 0);
    if (!ok) return this.reject(Reject.invalid_command);
    this.emit('KeyTierSet', k.account_id, {
      key_id: k.key_id, tier, read_rate_per_s: figures[0], read_burst: figures[1], write_rate_per_s: figures[2], write_burst: figures[3],
    });
    this.complete({ result: k.key_id });
  }

  /** Revoked keys per account, oldest revoked first: retention beyond revoked_key_cap. */
  private readonly revokedKeys = new Map<number, number[]>();

  private retireKey(k: MKey): void {
    k.revoked = true;
    const revoked = this.revokedKeys.get(k.account_id) ?? [];
    revoked.push(k.key_id);
    while (revoked.length > this.config.revoked_key_cap) this.keys.delete(revoked.shift()!);
    this.revokedKeys.set(k.account_id, revoked);
  }

  private deposit(c: RecordObject): void {
    const acct = this.now.headerAccount;
    const a = this.liveAccount(acct);
    if (!a) return this.reject(Reject.unknown_account);
    const amount = c.amount as number;
    if (amount === 0) return this.reject(Reject.invalid_command);
    const ref = c.ref as string;
    const refs = this.depositRefs.get(acct) ?? new Map<string, { amount: number; seq: number }>();
    const first = ref === '' ? undefined : refs.get(ref);
    if (first !== undefined) {
      if (first.amount === amount) return this.complete({ result: first.seq });
      return this.reject(Reject.duplicate_deposit_ref, { result: first.seq });
    }
    if (this.deposits_total + amount > Number.MAX_SAFE_INTEGER) return this.reject(Reject.deposit_limit_exceeded);
    a.available += amount;
    this.deposits_total += amount;
    this.emit('Deposited', acct, { amount, ref });
    if (ref !== '') {
      refs.set(ref, { amount, seq: this.now.seq });
      while (refs.size > this.config.deposit_ref_cap) refs.delete(refs.keys().next().value!);
      this.depositRefs.set(acct, refs);
    }
    this.complete({ result: this.now.seq });
  }

  private requestWithdrawal(c: RecordObject): void {
    const acct = this.now.headerAccount;
    const a = this.liveAccount(acct);
    if (!a) return this.reject(Reject.unknown_account);
    const cwid = c.client_withdrawal_id as bigint;
    const amount = c.amount as number;
    const destination = c.destination as string;
    const existing = [...this.withdrawals.values()].find((w) => w.account_id === acct && w.client_withdrawal_id === cwid);
    if (existing) {
      if (existing.amount === amount && existing.destination === destination) return this.complete({ result: existing.wid });
      return this.reject(Reject.duplicate_client_withdrawal_id, { result: existing.wid });
    }
    if (amount > a.available) return this.reject(Reject.withdrawal_exceeds_available);
    if (amount === 0) return this.reject(Reject.invalid_command);
    this.nextWid += 1;
    const w: MWithdrawal = {
      wid: this.nextWid,
      account_id: acct,
      client_withdrawal_id: cwid,
      amount,
      destination,
      status: WithdrawalStatus.pending,
    };
    this.withdrawals.set(w.wid, w);
    a.available -= amount;
    a.reserved += amount;
    this.emit('WithdrawalRequested', acct, { wid: w.wid, client_withdrawal_id: cwid, amount, destination });
    this.complete({ result: w.wid });
  }

  /** Finished withdrawals per account, oldest first: retention beyond withdrawal_cap. */
  private readonly finishedWithdrawals = new Map<number, number[]>();

  private finishWithdrawal(c: RecordObject, confirm: boolean): void {
    const w = this.withdrawals.get(c.wid as number);
    if (!w || w.status !== WithdrawalStatus.pending) return this.reject(Reject.unknown_withdrawal);
    const a = this.account(w.account_id);
    a.reserved -= w.amount;
    if (confirm) {
      w.status = WithdrawalStatus.confirmed;
      this.confirmed_total += w.amount;
      this.emit('WithdrawalConfirmed', w.account_id, { wid: w.wid, amount: w.amount });
    } else {
      w.status = WithdrawalStatus.failed;
      a.available += w.amount;
      this.emit('WithdrawalFailed', w.account_id, { wid: w.wid, amount: w.amount });
    }
    const finished = this.finishedWithdrawals.get(w.account_id) ?? [];
    finished.push(w.wid);
    while (finished.length > this.config.withdrawal_cap) this.withdrawals.delete(finished.shift()!);
    this.finishedWithdrawals.set(w.account_id, finished);
    this.complete({ result: w.wid });
  }

  private createFeeSchedule(c: RecordObject): void {
    const taker = c.taker_bps as number;
    const maker = c.maker_bps as number;
    if (taker > 10_000 || maker > 10_000) return this.reject(Reject.invalid_command);
    this.nextFeeSchedule += 1;
    this.feeSchedules.set(this.nextFeeSchedule, { taker_bps: taker, maker_bps: maker });
    this.emit('FeeScheduleCreated', 0, { fee_schedule_id: this.nextFeeSchedule, taker_bps: taker, maker_bps: maker });
    this.complete({ result: this.nextFeeSchedule });
  }

  private createMarket(c: RecordObject): void {
    const fsId = c.fee_schedule_id as number;
    if (fsId !== 0 && !this.feeSchedules.has(fsId)) return this.reject(Reject.unknown_fee_schedule);
    this.nextMarket += 1;
    const m: MMarket = {
      market_id: this.nextMarket, category: c.category as number, position_limit: c.position_limit as number,
      fee_schedule_id: fsId, title: c.title as string, volume: 0, open_interest: 0, last_tick_yes: 0, round: null,
      series_period_s: 0, series_active: false, series_waiting_since: 0n,
    };
    this.markets.set(m.market_id, m);
    this.emit('MarketCreated', 0, {
      market_id: m.market_id, category: m.category, position_limit: m.position_limit, fee_schedule_id: fsId, title: m.title,
    });
    this.complete({ result: m.market_id });
  }

  // ---------------------------------------------------------------- series

  private createSeries(c: RecordObject): void {
    const period = c.period_s as number;
    const fsId = c.fee_schedule_id as number;
    const category = c.category as number;
    if (period < 1 || period > 2_592_000) return this.reject(Reject.invalid_command);
    if (fsId !== 0 && !this.feeSchedules.has(fsId)) return this.reject(Reject.unknown_fee_schedule);
    if ([...this.markets.values()].some((m) => m.series_active && m.category === category)) return this.reject(Reject.duplicate_series);
    this.nextMarket += 1;
    const m: MMarket = {
      market_id: this.nextMarket, category, position_limit: c.position_limit as number, fee_schedule_id: fsId,
      title: c.title as string, volume: 0, open_interest: 0, last_tick_yes: 0, round: null,
      series_period_s: period, series_active: true, series_waiting_since: this.now.ts,
    };
    this.markets.set(m.market_id, m);
    this.emit('MarketCreated', 0, {
      market_id: m.market_id,
      category,
      position_limit: m.position_limit,
      fee_schedule_id: fsId,
      title: m.title,
    });
    this.emit('SeriesCreated', 0, { market_id: m.market_id, category, period_s: period });
    const o = this.oracleAt(this.now.ts);
    if (o.count >= this.config.oracle_quorum) this.openSeriesRound(m, o.ref);
    this.complete({ result: m.market_id });
  }

  private stopSeries(c: RecordObject): void {
    const category = c.category as number;
    const m = [...this.markets.values()].find((x) => x.series_active && x.category === category);
    if (!m) return this.reject(Reject.unknown_series);
    m.series_active = false;
    this.emit('SeriesStopped', 0, { market_id: m.market_id, category });
    this.complete({ result: m.market_id });
  }

  private openSeriesRound(m: MMarket, strike: number): void {
    const closeTs = this.now.ts + BigInt(m.series_period_s) * 1_000_000_000n;
    this.nextRound += 1;
    const r: MRound = {
      round_number: this.nextRound, market_id: m.market_id, strike, open_ts: this.now.ts, close_ts: closeTs,
      status: RoundStatus.trading, outcome: RoundOutcome.none, settle_price: 0, proposed_ts: 0n, disputed: false,
    };
    this.rounds.set(r.round_number, r);
    m.round = r;
    m.volume = 0;
    m.last_tick_yes = 0;
    this.emit('RoundOpened', 0, { round_number: r.round_number, market_id: m.market_id, strike, close_ts: closeTs });
  }

  // ---------------------------------------------------------------- summary and invariants

  summary(): Summary {
    const accounts = [...this.accounts.values()]
      .sort((a, b) => a.account_id - b.account_id)
      .map((a) => ({ account_id: a.account_id, available: a.available, reserved: a.reserved, deleted: a.deleted }));
    const positions: Summary['positions'] = [];
    for (const [k, p] of this.positions) {
      if (p.free === 0 && p.rfs === 0) continue;
      const [a, m, o] = k.split(':').map(Number) as [number, number, number];
      positions.push({ account_id: a, market_id: m, outcome: o, free: p.free, reserved_for_sale: p.rfs });
    }
    positions.sort((x, y) => x.account_id - y.account_id || x.market_id - y.market_id || x.outcome - y.outcome);
    const live = [...this.live.values()].sort((a, b) => a.order_id - b.order_id);
    const orders = live.map((o) => ({
      order_id: o.order_id, account_id: o.account, market_id: o.market_id, side: o.side, outcome: o.outcome,
      tick: o.tick, remaining: o.remaining, filled: o.filled,
    }));
    const levels = new Map<string, Summary['book'][number]>();
    for (const o of live) {
      if (!o.on_book) continue;
      const k = `${o.market_id}:${o.ladder}:${o.ladder_tick}`;
      let l = levels.get(k);
      if (!l) {
        l = { market_id: o.market_id, ladder: o.ladder, tick: o.ladder_tick, qty: 0, order_ids: [] };
        levels.set(k, l);
      }
      l.qty += o.remaining;
      l.order_ids.push(o.order_id);
    }
    const book = [...levels.values()].sort((x, y) => x.market_id - y.market_id || x.ladder - y.ladder || x.tick - y.tick);
    const markets = [...this.markets.values()].sort((a, b) => a.market_id - b.market_id).map((m) => {
      const r = m.round;
      let status: number = MarketStatus.closed;
      if (r && r.status === RoundStatus.trading) status = MarketStatus.trading;
      else if (r && r.status === RoundStatus.frozen) status = MarketStatus.frozen;
      else if (r && r.status === RoundStatus.proposed) status = MarketStatus.proposed;
      return {
        market_id: m.market_id, status, round_number: r ? r.round_number : 0, volume: m.volume,
        open_interest: m.open_interest, last_tick_yes: m.last_tick_yes,
      };
    });
    const deadman = [...this.deadman.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([a, d]) => ({ account_id: a, fires_at_ts: d.fires_at_ts.toString() }));
    const withdrawals = [...this.withdrawals.values()].sort((a, b) => a.wid - b.wid)
      .map((w) => ({ wid: w.wid, account_id: w.account_id, amount: w.amount, status: w.status }));
    let openPairs = 0;
    for (const m of this.markets.values()) openPairs += m.open_interest;
    const series = [...this.markets.values()].filter((m) => m.series_period_s > 0).sort((a, b) => a.market_id - b.market_id)
      .map((m) => ({ market_id: m.market_id, category: m.category, period_s: m.series_period_s, active: m.series_active }));
    return {
      seq: this.seq, fees_collected: this.fees_collected, open_pairs_total: openPairs, accounts, positions, orders, book, markets, deadman,
      withdrawals, series, oracle: { ...this.oracleView },
    };
  }

  /** Throws when the money rules of README.md do not hold. */
  checkInvariants(): void {
    const fail = (msg: string): never => {
      throw new Error(`reference_model invariant: ${msg} (after seq ${this.seq})`);
    };
    let cash = 0;
    let openPairs = 0;
    for (const m of this.markets.values()) {
      if (m.open_interest < 0) fail(`market ${m.market_id} open interest ${m.open_interest}`);
      openPairs += m.open_interest;
    }
    const heldReserve = new Map<number, number>();
    for (const o of this.live.values()) {
      if (o.remaining <= 0) fail(`live order ${o.order_id} with remaining ${o.remaining}`);
      if (!o.on_book) fail(`live order ${o.order_id} off the book`);
      if (o.side === Side.buy) {
        if (o.reserve_left !== o.remaining * (o.tick + o.fee_per_share)) fail(`order ${o.order_id} reserve ${o.reserve_left}`);
        heldReserve.set(o.account, (heldReserve.get(o.account) ?? 0) + o.reserve_left);
      }
    }
    for (const w of this.withdrawals.values()) {
      if (w.status === WithdrawalStatus.pending) heldReserve.set(w.account_id, (heldReserve.get(w.account_id) ?? 0) + w.amount);
    }
    for (const a of this.accounts.values()) {
      if (a.available < 0 || a.reserved < 0) fail(`account ${a.account_id} negative cash`);
      if (a.reserved !== (heldReserve.get(a.account_id) ?? 0))
        fail(`account ${a.account_id} reserved ${a.reserved} != ${heldReserve.get(a.account_id) ?? 0}`);
      cash += a.available + a.reserved;
    }
    if (cash + 100 * openPairs + this.fees_collected !== this.deposits_total - this.confirmed_total) {
      fail(`money: ${cash} + 100 * ${openPairs} + ${this.fees_collected} != ${this.deposits_total} - ${this.confirmed_total}`);
    }
    const selling = new Map<string, number>();
    for (const o of this.live.values()) {
      if (o.side === Side.sell) {
        const k = `${o.account}:${o.market_id}:${o.outcome}`;
        selling.set(k, (selling.get(k) ?? 0) + o.remaining);
      }
    }
    const shares = new Map<number, [number, number]>();
    for (const [k, p] of this.positions) {
      if (p.free < 0 || p.rfs < 0) fail(`position ${k} negative`);
      if (p.rfs !== (selling.get(k) ?? 0)) fail(`position ${k} reserved_for_sale ${p.rfs} != ${selling.get(k) ?? 0}`);
      const [, m, oc] = k.split(':').map(Number) as [number, number, number];
      const s = shares.get(m) ?? [0, 0];
      s[oc]! += p.free + p.rfs;
      shares.set(m, s);
    }
    for (const m of this.markets.values()) {
      const s = shares.get(m.market_id) ?? [0, 0];
      if (s[0] !== m.open_interest || s[1] !== m.open_interest)
        fail(`market ${m.market_id} shares ${s[0]}/${s[1]} vs open interest ${m.open_interest}`);
    }
    for (const [acct, r] of this.retained) {
      if (r.terminal.length > this.config.terminal_cap || r.rejected.length > this.config.reject_cap) fail(`retention of ${acct}`);
    }
  }
}
