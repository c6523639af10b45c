// Engine: the sequencer and decide(state, command) -> events. Runs on the one
// matching worker thread (and in tests, tools and benchmarks). For each
// command it assigns seq and ts, then emits events; each event is written in
// place into the EventOut and immediately applied with evolve, so decide
// always reads the state as of the previous event. The rules are in
// src/engine/README.md. No node:* imports, no clock, no allocation on the
// placement path (time and randomness arrive on commands).

import { feeCents, feePerShare, affordableQty } from '../accounts/fees.js';
import { Book } from '../book/book.js';
import { NIL } from '../book/orders.js';
import {
  AccountCreated, AccountDeleted, ArmDeadman, CancelAll, CancelOrder, CommandCompleted, CompletionStatus, ConfirmWithdrawal,
  CreateFeeSchedule, CreateKey, CreateMarket, DeadmanArmed, DeadmanDisarmed, DecreaseOrder, Deposit, Deposited,
  FeeScheduleCreated, Filled, Header, KeyCreated, KeyRevoked, MarketCreated, OpenRound, OracleTicked, OrderAccepted,
  OrderCanceled, OrderDecreased, OrderRejected, OrderRested, OrderStatus, PlaceOrder, PositionSettled, ProposeRound,
  ProposeSource, Reject, RequestWithdrawal, RevokeKey, RoundOpened, RoundOutcome, RoundStatus, RoundTransitioned,
  Side, Stp, SubmitOracleTick, T_ARM_DEADMAN, T_CANCEL_ALL, T_CANCEL_ORDER, T_CLOCK_TICK, T_CONFIRM_WITHDRAWAL,
  T_CREATE_ACCOUNT, T_CREATE_FEE_SCHEDULE, T_CREATE_KEY, T_CREATE_MARKET, T_DECREASE_ORDER, T_DELETE_ACCOUNT,
  T_DEPOSIT, T_DISARM_DEADMAN, T_DISPUTE_ROUND, T_FAIL_WITHDRAWAL, T_FREEZE_ROUND, T_OPEN_ROUND, T_PLACE_ORDER,
  T_PROPOSE_ROUND, T_REQUEST_WITHDRAWAL, T_REVOKE_KEY, T_SETTLE_ROUND, T_SUBMIT_ORACLE_TICK, T_UNFREEZE_ROUND,
  T_VOID_ROUND, Tif, CancelReason, WithdrawalConfirmed, WithdrawalFailed, WithdrawalRequested, WithdrawalStatus,
  FreezeRound, CreateSeries, StopSeries, SeriesCreated, SeriesStopped, OracleSourceExpired, T_CREATE_SERIES, T_STOP_SERIES,
} from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { addHiLo, cmpHiLo } from '../lib/u64.js';
import type { EngineConfig } from './config.js';
import type { EventOut } from './event_out.js';
import { evolve } from './evolve.js';
import { ORACLE_SOURCES } from './markets.js';
import { ExchangeState } from './state.js';

/** Longest series round: 30 days, so that period_s x 1e9 ns stays a safe integer. */
export const SERIES_PERIOD_MAX_S = 2_592_000;

export class Engine {
  readonly state: ExchangeState;
  private readonly out: EventOut;
  private readonly m: Mem;
  // The command being decided.
  private seq = 0;
  private tsHi = 0;
  private tsLo = 0;
  private producer = 0;
  private correlation = 0;
  private readonly hilo = new Uint32Array(2);
  private idScratch = new Float64Array(256);
  private readonly priceScratch = new Float64Array(ORACLE_SOURCES);
  private readonly staleNs: number;

  /** `state`: a recovered state to continue from (snapshot plus replayed journal); a fresh one otherwise. */
  constructor(config: Partial<EngineConfig>, out: EventOut, state?: ExchangeState) {
    this.state = state ?? new ExchangeState(config);
    this.out = out;
    this.m = out.mem;
    this.staleNs = this.state.config.oracle_staleness_ms * 1_000_000;
  }

  /**
   * Sequences and decides one command record at `co` in `cm`. Returns the
   * command's seq, or 0 when it was dropped (a ClockTick with nothing due).
   * The caller publishes the EventOut (per command or per batch).
   */
  execute(cm: Mem, co: number): number {
    const s = this.state;
    const type = Header.type(cm, co);
    // ts = max(command ts, previous ts + 1): strictly increasing.
    let hi = Header.ts_hi(cm, co);
    let lo = Header.ts_lo(cm, co);
    addHiLo(s.tsHi, s.tsLo, 1, this.hilo);
    if (cmpHiLo(hi, lo, this.hilo[0]!, this.hilo[1]!) < 0) {
      hi = this.hilo[0]!;
      lo = this.hilo[1]!;
    }
    if (type === T_CLOCK_TICK && !this.due(hi, lo)) return 0;
    this.seq = s.seq + 1;
    this.tsHi = hi;
    this.tsLo = lo;
    this.producer = Header.producer(cm, co);
    this.correlation = Header.correlation(cm, co);
    const account = Header.account(cm, co);
    switch (type) {
      case T_PLACE_ORDER: this.placeOrder(cm, co, account); break;
      case T_CANCEL_ORDER: this.cancelOrder(CancelOrder.order_id(cm, co), account); break;
      case T_DECREASE_ORDER: this.decreaseOrder(DecreaseOrder.order_id(cm, co), DecreaseOrder.new_qty(cm, co), account); break;
      case T_CANCEL_ALL: this.cancelAll(CancelAll.market_id(cm, co), CancelAll.group_id(cm, co), account); break;
      case T_ARM_DEADMAN: this.armDeadman(ArmDeadman.timeout_ms(cm, co), account); break;
      case T_DISARM_DEADMAN: this.disarmDeadman(account); break;
      case T_CLOCK_TICK: this.clockTick(); break;
      case T_CREATE_ACCOUNT: this.createAccount(); break;
      case T_DELETE_ACCOUNT: this.deleteAccount(account); break;
      case T_CREATE_KEY: this.createKey(cm, co, account); break;
      case T_REVOKE_KEY: this.revokeKey(RevokeKey.key_id(cm, co), account); break;
      case T_DEPOSIT: this.deposit(cm, co, account); break;
      case T_REQUEST_WITHDRAWAL: this.requestWithdrawal(cm, co, account); break;
      case T_CONFIRM_WITHDRAWAL: this.finishWithdrawal(ConfirmWithdrawal.wid(cm, co), true, type, account); break;
      case T_FAIL_WITHDRAWAL: this.finishWithdrawal(ConfirmWithdrawal.wid(cm, co), false, type, account); break;
      case T_CREATE_FEE_SCHEDULE: this.createFeeSchedule(cm, co, account); break;
      case T_CREATE_MARKET: this.createMarket(cm, co, account); break;
      case T_OPEN_ROUND: this.openRound(cm, co, account); break;
      case T_FREEZE_ROUND:
      case T_UNFREEZE_ROUND:
      case T_DISPUTE_ROUND:
      case T_SETTLE_ROUND:
      case T_VOID_ROUND:
      case T_PROPOSE_ROUND: this.roundControl(type, FreezeRound.market_id(cm, co), type === T_PROPOSE_ROUND ? ProposeRound.source(cm, co) : 0, account); break;
      case T_SUBMIT_ORACLE_TICK: this.oracleTick(SubmitOracleTick.source_id(cm, co), SubmitOracleTick.price(cm, co), account); break;
      case T_CREATE_SERIES: this.createSeries(cm, co, account); break;
      case T_STOP_SERIES: this.stopSeries(StopSeries.category(cm, co), account); break;
      default: this.reject(type, Reject.invalid_command, account); break;
    }
    return this.seq;
  }

  // ---- emission ----------------------------------------------------------

  /** Claims and zeroes an event record, writes its header; returns its offset. */
  private begin(type: number, size: number, account: number): number {
    const m = this.m;
    // Callers write every field and clear_reserved() the rest, so the record
    // needs no zeroing pass.
    const o = this.out.claim(size);
    Header.set_len(m, o, size);
    Header.set_type(m, o, type);
    Header.set_producer(m, o, this.producer);
    Header.set_correlation(m, o, this.correlation);
    Header.set_account(m, o, account);
    Header.set_seq(m, o, this.seq);
    Header.set_ts(m, o, this.tsHi, this.tsLo);
    return o;
  }

  private commit(o: number): void {
    evolve(this.state, this.m, o);
  }

  private complete(
    commandType: number, account: number, status: number, codeNum: number, orderStatus: number, reason: number,
    orderId: number, filledQty: number, restingQty: number, result: number, resultHi: number, resultLo: number,
  ): void {
    const m = this.m;
    const o = this.begin(CommandCompleted.TYPE, CommandCompleted.SIZE, account);
    CommandCompleted.clear_reserved(this.m, o);
    CommandCompleted.set_status(m, o, status);
    CommandCompleted.set_order_status(m, o, orderStatus);
    CommandCompleted.set_reason(m, o, reason);
    CommandCompleted.set_command_type(m, o, commandType);
    CommandCompleted.set_code_num(m, o, codeNum);
    CommandCompleted.set_order_id(m, o, orderId);
    CommandCompleted.set_filled_qty(m, o, filledQty);
    CommandCompleted.set_resting_qty(m, o, restingQty);
    CommandCompleted.set_result(m, o, result);
    CommandCompleted.set_result_ts(m, o, resultHi, resultLo);
    this.commit(o);
  }

  private ok(commandType: number, account: number, result: number): void {
    this.complete(commandType, account, CompletionStatus.ok, 0, 0, 0, 0, 0, 0, result, 0, 0);
  }

  private reject(commandType: number, codeNum: number, account: number, result = 0, orderId = 0): void {
    this.complete(commandType, account, CompletionStatus.rejected, codeNum, 0, 0, orderId, 0, 0, result, 0, 0);
  }

  /** Cancels a live order's whole remainder, releasing its reservation. */
  private cancel(slot: number, reason: number): void {
    const s = this.state;
    const ord = s.orders;
    const m = this.m;
    const o = this.begin(OrderCanceled.TYPE, OrderCanceled.SIZE, ord.account[slot]!);
    OrderCanceled.clear_reserved(this.m, o);
    OrderCanceled.set_order_id(m, o, ord.id[slot]!);
    OrderCanceled.set_canceled_qty(m, o, ord.remaining[slot]!);
    OrderCanceled.set_reason(m, o, reason);
    OrderCanceled.set_release_cash(m, o, ord.side[slot] === Side.buy ? ord.reservedCash[slot]! : 0);
    this.commit(o);
  }

  // ---- placement -----------------------------------------------------------

  private placeOrder(cm: Mem, co: number, account: number): void {
    const s = this.state;
    const acc = s.accounts;
    const mk = s.markets;
    const market = PlaceOrder.market_id(cm, co);
    const qty = PlaceOrder.qty(cm, co);
    const tick = PlaceOrder.tick(cm, co);
    const side = PlaceOrder.side(cm, co);
    const outcome = PlaceOrder.outcome(cm, co);
    const tif = PlaceOrder.tif(cm, co);
    const stp = PlaceOrder.stp(cm, co);
    const postOnly = PlaceOrder.post_only(cm, co);
    const hasCoid = PlaceOrder.has_client_order_id(cm, co);
    const hasMaxCost = PlaceOrder.has_max_cost(cm, co);
    const coidHi = PlaceOrder.client_order_id_hi(cm, co);
    const coidLo = PlaceOrder.client_order_id_lo(cm, co);
    const expHi = PlaceOrder.expiry_ts_hi(cm, co);
    const expLo = PlaceOrder.expiry_ts_lo(cm, co);
    const maxCost = PlaceOrder.max_cost(cm, co);
    const hasExpiry = expHi !== 0 || expLo !== 0;

    if (!acc.isLive(account)) {
      this.reject(T_PLACE_ORDER, Reject.unknown_account, account);
      return;
    }
    if (hasCoid === 1) {
      const dup = s.coidIndex.get(account, coidHi, coidLo);
      if (dup >= 0) {
        // Not retained as a reject of its own: the existing order answers.
        this.complete(T_PLACE_ORDER, account, CompletionStatus.rejected, Reject.duplicate_client_order_id, s.orders.status[dup]!, 0, s.orders.id[dup]!, 0, 0, 0, 0, 0);
        return;
      }
    }
    let code = 0;
    if (
      tick < 1 || tick > 99 || qty < 1 || qty > s.config.max_qty || side > 1 || outcome > 1 || tif > 3 || stp > 2 ||
      postOnly > 1 || hasCoid > 1 || hasMaxCost > 1 ||
      (postOnly === 1 && (tif === Tif.ioc || tif === Tif.fok)) ||
      (tif === Tif.gtd) !== hasExpiry ||
      (hasMaxCost === 1 && (side === Side.sell || postOnly === 1 || tif === Tif.gtd))
    ) {
      code = Reject.invalid_command;
    } else if (!mk.exists(market)) {
      code = Reject.unknown_market;
    } else if (mk.roundStatus(market) !== RoundStatus.trading) {
      code = Reject.market_not_trading;
    }
    let fps = 0;
    let reserve = 0;
    if (code === 0) {
      if (tif === Tif.gtd && cmpHiLo(expHi, expLo, this.tsHi, this.tsLo) <= 0) {
        code = Reject.expiry_in_past;
      } else {
        const p = acc.findPosition(account, market);
        const k = p < 0 ? -1 : 2 * p + outcome;
        if (side === Side.sell) {
          if (k < 0 || acc.pFree[k]! < qty) code = Reject.insufficient_position;
        } else {
          const limit = mk.positionLimit[market]!;
          const held = k < 0 ? 0 : acc.pFree[k]! + acc.pReserved[k]! + acc.pBuying[k]!;
          if (limit !== 0 && held + qty > limit) {
            code = Reject.position_limit_exceeded;
          } else {
            const fs = mk.feeSchedule[market]!;
            fps = feePerShare(acc.feeTaker[fs]!, acc.feeMaker[fs]!, tick);
            reserve = qty * (tick + fps);
            if (hasMaxCost === 1 && maxCost < reserve) reserve = maxCost;
            if (acc.available[account]! < reserve) code = Reject.insufficient_balance;
          }
        }
      }
    }
    const m = this.m;
    if (code !== 0) {
      const o = this.begin(OrderRejected.TYPE, OrderRejected.SIZE, account);
      OrderRejected.clear_reserved(this.m, o);
      OrderRejected.set_order_id(m, o, this.seq);
      OrderRejected.set_market_id(m, o, market);
      OrderRejected.set_qty(m, o, qty);
      OrderRejected.set_group_id(m, o, PlaceOrder.group_id(cm, co));
      OrderRejected.set_tick(m, o, tick);
      OrderRejected.set_side(m, o, side);
      OrderRejected.set_outcome(m, o, outcome);
      OrderRejected.set_tif(m, o, tif);
      OrderRejected.set_stp(m, o, stp);
      OrderRejected.set_post_only(m, o, postOnly);
      OrderRejected.set_has_client_order_id(m, o, hasCoid);
      OrderRejected.set_has_max_cost(m, o, hasMaxCost);
      OrderRejected.set_code_num(m, o, code);
      OrderRejected.set_client_order_id(m, o, coidHi, coidLo);
      OrderRejected.set_expiry_ts(m, o, expHi, expLo);
      OrderRejected.set_max_cost(m, o, maxCost);
      this.commit(o);
      this.complete(T_PLACE_ORDER, account, CompletionStatus.rejected, code, OrderStatus.rejected, 0, this.seq, 0, 0, 0, 0, 0);
      return;
    }

    const orderId = this.seq;
    let o = this.begin(OrderAccepted.TYPE, OrderAccepted.SIZE, account);
    OrderAccepted.clear_reserved(this.m, o);
    OrderAccepted.set_order_id(m, o, orderId);
    OrderAccepted.set_market_id(m, o, market);
    OrderAccepted.set_qty(m, o, qty);
    OrderAccepted.set_group_id(m, o, PlaceOrder.group_id(cm, co));
    OrderAccepted.set_tick(m, o, tick);
    OrderAccepted.set_side(m, o, side);
    OrderAccepted.set_outcome(m, o, outcome);
    OrderAccepted.set_tif(m, o, tif);
    OrderAccepted.set_stp(m, o, stp);
    OrderAccepted.set_post_only(m, o, postOnly);
    OrderAccepted.set_has_client_order_id(m, o, hasCoid);
    OrderAccepted.set_has_max_cost(m, o, hasMaxCost);
    OrderAccepted.set_fee_per_share(m, o, fps);
    OrderAccepted.set_client_order_id(m, o, coidHi, coidLo);
    OrderAccepted.set_expiry_ts(m, o, expHi, expLo);
    OrderAccepted.set_max_cost(m, o, maxCost);
    OrderAccepted.set_reserve_cash(m, o, reserve);
    this.commit(o);

    const ord = s.orders;
    const book = s.book;
    const taker = s.slotOf(orderId);
    const ladder = ord.ladder[taker]!;
    const lt = ord.ladderTick[taker]!;
    const opp = ladder ^ 1;
    const bestIdx = (market << 1) | opp;
    const fs = mk.feeSchedule[market]!;
    const takerBps = acc.feeTaker[fs]!;
    const makerBps = acc.feeMaker[fs]!;
    const isBuy = side === Side.buy;
    let reason = 0;

    if (postOnly === 1) {
      const b = book.best[bestIdx]!;
      if (b !== 0 && lt + b >= 100) reason = CancelReason.post_only_cross;
    } else if (tif === Tif.fok && !this.fokFeasible(market, opp, lt, account, stp, qty, hasMaxCost === 1 ? maxCost : -1, takerBps, isBuy)) {
      reason = CancelReason.fok_infeasible;
    }

    let filledQty = 0;
    let spent = 0;
    if (reason === 0) {
      let rem = qty;
      while (rem > 0) {
        const b = book.best[bestIdx]!;
        if (b === 0 || lt + b < 100) break;
        const maker = book.levelHead[Book.level(market, opp, b)]!;
        if (ord.account[maker] === account) {
          if (stp === Stp.cancel_maker) {
            this.cancel(maker, CancelReason.self_trade_prevention);
            continue;
          }
          if (stp === Stp.cancel_both) this.cancel(maker, CancelReason.self_trade_prevention);
          reason = CancelReason.self_trade_prevention;
          break;
        }
        const makerRem = ord.remaining[maker]!;
        let q = rem < makerRem ? rem : makerRem;
        const takerLadderP = 100 - b;
        const takerP = isBuy ? takerLadderP : b;
        if (hasMaxCost === 1) {
          q = affordableQty(maxCost - spent, q, takerP, takerBps);
          if (q === 0) break;
        }
        const makerIsBuy = ord.side[maker] === Side.buy;
        const makerP = makerIsBuy ? b : 100 - b;
        const makerFee = feeCents(makerBps, q, makerP);
        const takerFee = feeCents(takerBps, q, takerP);
        const makerRelease = makerIsBuy ? q * (ord.tick[maker]! + ord.feePerShare[maker]!) : 0;
        let takerRelease = 0;
        if (isBuy) {
          if (hasMaxCost === 1) takerRelease = rem - q === 0 ? ord.reservedCash[taker]! : q * takerP + takerFee;
          else takerRelease = q * (tick + fps);
        }
        o = this.begin(Filled.TYPE, Filled.SIZE, account);
        Filled.clear_reserved(this.m, o);
        Filled.set_fill_id(m, o, s.fillCount + 1);
        Filled.set_maker_order_id(m, o, ord.id[maker]!);
        Filled.set_taker_order_id(m, o, orderId);
        Filled.set_maker_account(m, o, ord.account[maker]!);
        Filled.set_taker_account(m, o, account);
        Filled.set_market_id(m, o, market);
        Filled.set_qty(m, o, q);
        Filled.set_tick_yes(m, o, opp === 0 ? b : 100 - b);
        Filled.set_path(m, o, makerIsBuy ? (isBuy ? 0 : 1) : (isBuy ? 1 : 2));
        Filled.set_taker_side(m, o, side);
        Filled.set_taker_outcome(m, o, outcome);
        Filled.set_maker_fee(m, o, makerFee);
        Filled.set_taker_fee(m, o, takerFee);
        Filled.set_maker_release(m, o, makerRelease);
        Filled.set_taker_release(m, o, takerRelease);
        this.commit(o);
        rem -= q;
        filledQty += q;
        spent += q * takerP + takerFee;
      }
      if (reason === 0 && rem > 0) {
        if (hasMaxCost === 1) reason = filledQty === 0 ? CancelReason.max_cost_infeasible : CancelReason.ioc_remainder;
        else if (tif === Tif.ioc || tif === Tif.fok) reason = CancelReason.ioc_remainder;
      }
    }

    let status: number;
    let resting = 0;
    if (reason !== 0) {
      this.cancel(taker, reason);
      status = OrderStatus.canceled;
    } else if (ord.remaining[taker]! === 0 && filledQty === qty) {
      status = OrderStatus.filled;
    } else {
      resting = ord.remaining[taker]!;
      o = this.begin(OrderRested.TYPE, OrderRested.SIZE, account);
      OrderRested.clear_reserved(this.m, o);
      OrderRested.set_order_id(m, o, orderId);
      this.commit(o);
      status = filledQty === 0 ? OrderStatus.resting : OrderStatus.partially_filled;
    }
    this.complete(T_PLACE_ORDER, account, CompletionStatus.ok, 0, status, reason, orderId, filledQty, resting, 0, 0, 0);
  }

  /** Would a fok order of qty fill completely right now? Walks as matching would. */
  private fokFeasible(market: number, opp: number, lt: number, account: number, stp: number, qty: number, budget: number, takerBps: number, isBuy: boolean): boolean {
    const s = this.state;
    const ord = s.orders;
    const book = s.book;
    let need = qty;
    let spent = 0;
    for (let b = book.best[(market << 1) | opp]!; b >= 1 && lt + b >= 100; b--) {
      for (let slot = book.levelHead[Book.level(market, opp, b)]!; slot !== NIL; slot = ord.next[slot]!) {
        if (ord.account[slot] === account) {
          if (stp === Stp.cancel_maker) continue;
          return false;
        }
        let q = ord.remaining[slot]!;
        if (q > need) q = need;
        if (budget >= 0) {
          const p = isBuy ? 100 - b : b;
          const afford = affordableQty(budget - spent, q, p, takerBps);
          spent += afford * p + feeCents(takerBps, afford, p);
          need -= afford;
          if (afford < q) return need === 0;
        } else {
          need -= q;
        }
        if (need === 0) return true;
      }
    }
    return false;
  }

  // ---- other order commands ------------------------------------------------

  private cancelOrder(orderId: number, account: number): void {
    const s = this.state;
    const slot = s.slotOf(orderId);
    if (slot < 0 || s.orders.account[slot] !== account || s.orders.onBook[slot] !== 1) {
      this.reject(T_CANCEL_ORDER, Reject.unknown_order, account, 0, orderId);
      return;
    }
    const qty = s.orders.remaining[slot]!;
    this.cancel(slot, CancelReason.user_canceled);
    this.complete(T_CANCEL_ORDER, account, CompletionStatus.ok, 0, 0, 0, orderId, 0, 0, qty, 0, 0);
  }

  private decreaseOrder(orderId: number, newQty: number, account: number): void {
    const s = this.state;
    const ord = s.orders;
    const slot = s.slotOf(orderId);
    if (slot < 0 || ord.account[slot] !== account || ord.onBook[slot] !== 1) {
      this.reject(T_DECREASE_ORDER, Reject.unknown_order, account, 0, orderId);
      return;
    }
    const rem = ord.remaining[slot]!;
    const n = newQty < rem ? newQty : rem;
    if (n === 0) {
      this.cancel(slot, CancelReason.decreased_to_zero);
    } else if (n < rem) {
      const m = this.m;
      const o = this.begin(OrderDecreased.TYPE, OrderDecreased.SIZE, account);
      OrderDecreased.clear_reserved(this.m, o);
      OrderDecreased.set_order_id(m, o, orderId);
      OrderDecreased.set_new_qty(m, o, n);
      OrderDecreased.set_release_cash(m, o, ord.side[slot] === Side.buy ? (rem - n) * (ord.tick[slot]! + ord.feePerShare[slot]!) : 0);
      this.commit(o);
    }
    this.complete(T_DECREASE_ORDER, account, CompletionStatus.ok, 0, 0, 0, orderId, 0, 0, n, 0, 0);
  }

  private cancelAll(market: number, group: number, account: number): void {
    const s = this.state;
    if (!s.accounts.isLive(account)) {
      this.reject(T_CANCEL_ALL, Reject.unknown_account, account);
      return;
    }
    this.cancelWhere(account, market, group, CancelReason.mass_canceled);
    this.ok(T_CANCEL_ALL, account, 0);
  }

  /** Cancels the account's live orders in ascending order_id, filtered by market and group (0 = any). */
  private cancelWhere(account: number, market: number, group: number, reason: number): void {
    const ord = this.state.orders;
    let slot = this.state.accounts.liveHead[account]!;
    while (slot !== NIL) {
      const next = ord.anext[slot]!;
      if ((market === 0 || ord.market[slot] === market) && (group === 0 || ord.groupId[slot] === group)) this.cancel(slot, reason);
      slot = next;
    }
  }

  private armDeadman(timeoutMs: number, account: number): void {
    if (!this.state.accounts.isLive(account)) {
      this.reject(T_ARM_DEADMAN, Reject.unknown_account, account);
      return;
    }
    addHiLo(this.tsHi, this.tsLo, timeoutMs * 1_000_000, this.hilo);
    const hi = this.hilo[0]!;
    const lo = this.hilo[1]!;
    const m = this.m;
    const o = this.begin(DeadmanArmed.TYPE, DeadmanArmed.SIZE, account);
    DeadmanArmed.clear_reserved(this.m, o);
    DeadmanArmed.set_timeout_ms(m, o, timeoutMs);
    DeadmanArmed.set_fires_at_ts(m, o, hi, lo);
    this.commit(o);
    this.complete(T_ARM_DEADMAN, account, CompletionStatus.ok, 0, 0, 0, 0, 0, 0, timeoutMs, hi, lo);
  }

  private disarmDeadman(account: number): void {
    if (!this.state.accounts.isLive(account)) {
      this.reject(T_DISARM_DEADMAN, Reject.unknown_account, account);
      return;
    }
    if (this.state.accounts.deadArmed[account] === 1) this.emitDisarmed(account, 0);
    this.ok(T_DISARM_DEADMAN, account, 0);
  }

  private emitDisarmed(account: number, fired: number): void {
    const o = this.begin(DeadmanDisarmed.TYPE, DeadmanDisarmed.SIZE, account);
    DeadmanDisarmed.clear_reserved(this.m, o);
    DeadmanDisarmed.set_fired(this.m, o, fired);
    this.commit(o);
  }

  // ---- clock ---------------------------------------------------------------

  private due(hi: number, lo: number): boolean {
    const s = this.state;
    if (
      s.expiries.dueAt(hi, lo) || s.deadmen.dueAt(hi, lo) || s.oracleExpiries.dueAt(hi, lo) || s.closes.dueAt(hi, lo) ||
      s.disputeDeadlines.dueAt(hi, lo)
    ) return true;
    // Proposals and series openings wait for a fresh oracle quorum.
    return (s.awaitingProposal.dueAt(hi, lo) || s.seriesWaiting.dueAt(hi, lo)) && this.freshPrices(hi, lo, -1, 0) >= s.config.oracle_quorum;
  }

  private clockTick(): void {
    const s = this.state;
    const hi = this.tsHi;
    const lo = this.tsLo;
    while (s.expiries.dueAt(hi, lo)) this.cancel(s.expiries.peek(), CancelReason.expired);
    while (s.deadmen.dueAt(hi, lo)) {
      const a = s.deadmen.peek();
      this.cancelWhere(a, 0, 0, CancelReason.deadman);
      this.emitDisarmed(a, 1);
    }
    if (s.oracleExpiries.dueAt(hi, lo)) {
      // Every event of this tick carries the reference as of ts, all stale sources excluded.
      const n = this.freshPrices(hi, lo, -1, 0);
      const ref = n === 0 ? 0 : this.priceScratch[(n - 1) >> 1]!;
      while (s.oracleExpiries.dueAt(hi, lo)) this.sourceExpired(s.oracleExpiries.peek(), n, ref);
    }
    while (s.closes.dueAt(hi, lo)) this.freeze(s.closes.peek());
    if (s.awaitingProposal.dueAt(hi, lo) && this.freshPrices(hi, lo, -1, 0) >= s.config.oracle_quorum) {
      while (s.awaitingProposal.dueAt(hi, lo)) this.propose(s.awaitingProposal.peek(), ProposeSource.oracle);
    }
    while (s.disputeDeadlines.dueAt(hi, lo)) this.endRound(s.disputeDeadlines.peek(), RoundStatus.settled);
    if (s.seriesWaiting.dueAt(hi, lo)) {
      const n = this.freshPrices(hi, lo, -1, 0);
      if (n >= s.config.oracle_quorum) {
        const strike = this.priceScratch[(n - 1) >> 1]!;
        while (s.seriesWaiting.dueAt(hi, lo)) this.openSeriesRound(s.seriesWaiting.peek(), strike);
      }
    }
    this.ok(T_CLOCK_TICK, 0, 0);
  }

  private sourceExpired(source: number, fresh: number, ref: number): void {
    const m = this.m;
    const o = this.begin(OracleSourceExpired.TYPE, OracleSourceExpired.SIZE, 0);
    OracleSourceExpired.clear_reserved(m, o);
    OracleSourceExpired.set_source_id(m, o, source);
    OracleSourceExpired.set_fresh_source_count(m, o, fresh);
    OracleSourceExpired.set_ref_price(m, o, ref);
    this.commit(o);
  }

  // ---- rounds and oracle ---------------------------------------------------

  private transition(market: number, status: number, outcome: number, settlePrice: number): void {
    const mk = this.state.markets;
    const r = mk.round[market]!;
    const m = this.m;
    const o = this.begin(RoundTransitioned.TYPE, RoundTransitioned.SIZE, 0);
    RoundTransitioned.clear_reserved(this.m, o);
    RoundTransitioned.set_round_number(m, o, mk.rNumber[r]!);
    RoundTransitioned.set_market_id(m, o, market);
    RoundTransitioned.set_status(m, o, status);
    RoundTransitioned.set_outcome(m, o, outcome);
    RoundTransitioned.set_settle_price(m, o, settlePrice);
    this.commit(o);
  }

  /** Cancels every resting order of the market in ascending order_id. */
  private cancelMarketOrders(market: number, reason: number): void {
    const s = this.state;
    const ord = s.orders;
    const book = s.book;
    let n = 0;
    for (let ladder = 0; ladder < 2; ladder++) {
      for (let t = 1; t < 100; t++) {
        for (let slot = book.levelHead[Book.level(market, ladder, t)]!; slot !== NIL; slot = ord.next[slot]!) {
          if (n === this.idScratch.length) {
            const bigger = new Float64Array(n * 2);
            bigger.set(this.idScratch);
            this.idScratch = bigger;
          }
          this.idScratch[n++] = ord.id[slot]!;
        }
      }
    }
    const ids = this.idScratch.subarray(0, n).sort();
    for (let i = 0; i < n; i++) this.cancel(s.slotOf(ids[i]!), reason);
  }

  private freeze(market: number): void {
    this.cancelMarketOrders(market, CancelReason.round_frozen);
    this.transition(market, RoundStatus.frozen, 0, 0);
  }

  private propose(market: number, source: number): void {
    const mk = this.state.markets;
    const r = mk.round[market]!;
    if (source === ProposeSource.oracle) {
      const n = this.freshPrices(this.tsHi, this.tsLo, -1, 0);
      const price = this.priceScratch[(n - 1) >> 1]!;
      this.transition(market, RoundStatus.proposed, price >= mk.rStrike[r]! ? RoundOutcome.yes : RoundOutcome.no, price);
    } else {
      this.transition(market, RoundStatus.proposed, source === ProposeSource.yes ? RoundOutcome.yes : RoundOutcome.no, 0);
    }
  }

  /** Settles (paying the proposed outcome) or voids (50/50) the market's current round. */
  private endRound(market: number, status: number): void {
    const s = this.state;
    const mk = s.markets;
    const acc = s.accounts;
    const r = mk.round[market]!;
    this.cancelMarketOrders(market, status === RoundStatus.void ? CancelReason.round_void : CancelReason.round_settled);
    const outcome = status === RoundStatus.void ? RoundOutcome.none : mk.rOutcome[r]!;
    let n = 0;
    for (let p = acc.marketPosHead[market]!; p !== NIL; p = acc.pNextInMarket[p]!) {
      if (acc.pFree[2 * p]! > 0 || acc.pFree[2 * p + 1]! > 0) {
        if (n === this.idScratch.length) {
          const bigger = new Float64Array(n * 2);
          bigger.set(this.idScratch);
          this.idScratch = bigger;
        }
        this.idScratch[n++] = acc.pAccount[p]!;
      }
    }
    const accounts = this.idScratch.subarray(0, n).sort();
    const m = this.m;
    for (let i = 0; i < n; i++) {
      const a = accounts[i]!;
      const p = acc.findPosition(a, market);
      const yes = acc.pFree[2 * p]!;
      const no = acc.pFree[2 * p + 1]!;
      const payout = status === RoundStatus.void ? (yes + no) * 50 : outcome === RoundOutcome.yes ? yes * 100 : no * 100;
      const o = this.begin(PositionSettled.TYPE, PositionSettled.SIZE, a);
      PositionSettled.clear_reserved(this.m, o);
      PositionSettled.set_market_id(m, o, market);
      PositionSettled.set_round_number(m, o, mk.rNumber[r]!);
      PositionSettled.set_yes_qty(m, o, yes);
      PositionSettled.set_no_qty(m, o, no);
      PositionSettled.set_payout(m, o, payout);
      this.commit(o);
    }
    this.transition(market, status, outcome, status === RoundStatus.void ? 0 : mk.rSettlePrice[r]!);
  }

  /** Opens the next round of a series market: strike given, close_ts = ts + period. */
  private openSeriesRound(market: number, strike: number): void {
    const mk = this.state.markets;
    addHiLo(this.tsHi, this.tsLo, mk.seriesPeriodS[market]! * 1_000_000_000, this.hilo);
    this.emitRoundOpened(market, strike, this.hilo[0]!, this.hilo[1]!);
  }

  private emitRoundOpened(market: number, strike: number, closeHi: number, closeLo: number): number {
    const rn = this.state.markets.roundCount + 1;
    const m = this.m;
    const o = this.begin(RoundOpened.TYPE, RoundOpened.SIZE, 0);
    RoundOpened.clear_reserved(this.m, o);
    RoundOpened.set_round_number(m, o, rn);
    RoundOpened.set_market_id(m, o, market);
    RoundOpened.set_strike(m, o, strike);
    RoundOpened.set_close_ts(m, o, closeHi, closeLo);
    this.commit(o);
    return rn;
  }

  private openRound(cm: Mem, co: number, account: number): void {
    const mk = this.state.markets;
    const market = OpenRound.market_id(cm, co);
    const closeHi = OpenRound.close_ts_hi(cm, co);
    const closeLo = OpenRound.close_ts_lo(cm, co);
    if (!mk.exists(market)) return this.reject(T_OPEN_ROUND, Reject.unknown_market, account);
    const st = mk.roundStatus(market);
    if ((st !== 0 && st !== RoundStatus.settled && st !== RoundStatus.void) || cmpHiLo(closeHi, closeLo, this.tsHi, this.tsLo) <= 0) {
      return this.reject(T_OPEN_ROUND, Reject.round_state_conflict, account);
    }
    const rn = this.emitRoundOpened(market, OpenRound.strike(cm, co), closeHi, closeLo);
    this.ok(T_OPEN_ROUND, account, rn);
  }

  private roundControl(type: number, market: number, source: number, account: number): void {
    const s = this.state;
    const mk = s.markets;
    if (!mk.exists(market)) return this.reject(type, Reject.unknown_market, account);
    const r = mk.round[market]!;
    const st = mk.roundStatus(market);
    let allowed = false;
    switch (type) {
      case T_FREEZE_ROUND: allowed = st === RoundStatus.trading; break;
      case T_UNFREEZE_ROUND: allowed = st === RoundStatus.frozen && cmpHiLo(this.tsHi, this.tsLo, mk.rCloseHi[r]!, mk.rCloseLo[r]!) < 0; break;
      case T_PROPOSE_ROUND: allowed = st === RoundStatus.frozen; break;
      case T_DISPUTE_ROUND: allowed = st === RoundStatus.proposed; break;
      case T_SETTLE_ROUND: allowed = st === RoundStatus.proposed; break;
      case T_VOID_ROUND: allowed = st === RoundStatus.trading || st === RoundStatus.frozen || st === RoundStatus.proposed; break;
    }
    if (type === T_PROPOSE_ROUND && source > 2) return this.reject(type, Reject.invalid_command, account);
    if (!allowed) return this.reject(type, Reject.round_state_conflict, account);
    switch (type) {
      case T_FREEZE_ROUND: this.freeze(market); break;
      case T_UNFREEZE_ROUND: this.transition(market, RoundStatus.trading, 0, 0); break;
      case T_PROPOSE_ROUND:
        if (source === ProposeSource.oracle && this.freshPrices(this.tsHi, this.tsLo, -1, 0) < s.config.oracle_quorum) {
          return this.reject(type, Reject.oracle_quorum_not_met, account);
        }
        this.propose(market, source);
        break;
      case T_DISPUTE_ROUND: this.transition(market, RoundStatus.frozen, 0, 0); break;
      case T_SETTLE_ROUND: this.endRound(market, RoundStatus.settled); break;
      case T_VOID_ROUND: this.endRound(market, RoundStatus.void); break;
    }
    this.ok(type, account, mk.rNumber[r]!);
  }

  /**
   * Collects the prices of sources fresh at (hi, lo) into priceScratch,
   * sorted ascending; `extraSource` (>= 0) counts as ticked at (hi, lo) with
   * `extraPrice`. Returns how many there are.
   */
  private freshPrices(hi: number, lo: number, extraSource: number, extraPrice: number): number {
    const mk = this.state.markets;
    let n = 0;
    for (let src = 0; src < ORACLE_SOURCES; src++) {
      if (src === extraSource) {
        this.priceScratch[n++] = extraPrice;
        continue;
      }
      if (mk.srcSeen[src] !== 1) continue;
      addHiLo(mk.srcTsHi[src]!, mk.srcTsLo[src]!, this.staleNs, this.hilo);
      if (cmpHiLo(this.hilo[0]!, this.hilo[1]!, hi, lo) > 0) this.priceScratch[n++] = mk.srcPrice[src]!;
    }
    this.priceScratch.subarray(0, n).sort();
    return n;
  }

  private oracleTick(source: number, price: number, account: number): void {
    if (source >= ORACLE_SOURCES || price < 1) return this.reject(T_SUBMIT_ORACLE_TICK, Reject.invalid_command, account);
    const n = this.freshPrices(this.tsHi, this.tsLo, source, price);
    const m = this.m;
    const o = this.begin(OracleTicked.TYPE, OracleTicked.SIZE, 0);
    OracleTicked.clear_reserved(this.m, o);
    OracleTicked.set_source_id(m, o, source);
    OracleTicked.set_fresh_source_count(m, o, n);
    OracleTicked.set_price(m, o, price);
    OracleTicked.set_ref_price(m, o, this.priceScratch[(n - 1) >> 1]!);
    this.commit(o);
    this.ok(T_SUBMIT_ORACLE_TICK, account, 0);
  }

  // ---- accounts, keys, funding, fees, markets ------------------------------

  private createAccount(): void {
    const id = this.state.accounts.count + 1;
    const o = this.begin(AccountCreated.TYPE, AccountCreated.SIZE, id);
    AccountCreated.clear_reserved(this.m, o);
    AccountCreated.set_account_id(this.m, o, id);
    this.commit(o);
    this.ok(T_CREATE_ACCOUNT, id, id);
  }

  private deleteAccount(account: number): void {
    const acc = this.state.accounts;
    if (!acc.isLive(account)) return this.reject(T_DELETE_ACCOUNT, Reject.unknown_account, account);
    const m = this.m;
    // The live keys first (each KeyRevoked is applied as it is written, and a
    // revocation may evict older revoked keys from the list being walked).
    let n = 0;
    for (let k = acc.keyHead[account]!; k !== NIL; k = acc.keyNext[k]!) {
      if (acc.keyRevoked[k] === 1) continue;
      if (n === this.idScratch.length) {
        const bigger = new Float64Array(n * 2);
        bigger.set(this.idScratch);
        this.idScratch = bigger;
      }
      this.idScratch[n++] = acc.keyId[k]!;
    }
    for (let i = 0; i < n; i++) {
      const o = this.begin(KeyRevoked.TYPE, KeyRevoked.SIZE, account);
      KeyRevoked.clear_reserved(this.m, o);
      KeyRevoked.set_key_id(m, o, this.idScratch[i]!);
      KeyRevoked.set_account_id(m, o, account);
      this.commit(o);
    }
    const o = this.begin(AccountDeleted.TYPE, AccountDeleted.SIZE, account);
    AccountDeleted.clear_reserved(this.m, o);
    AccountDeleted.set_account_id(m, o, account);
    this.commit(o);
    this.ok(T_DELETE_ACCOUNT, account, account);
  }

  private createKey(cm: Mem, co: number, account: number): void {
    const acc = this.state.accounts;
    if (!acc.isLive(account)) return this.reject(T_CREATE_KEY, Reject.unknown_account, account);
    const id = acc.keyCount + 1;
    const m = this.m;
    const o = this.begin(KeyCreated.TYPE, KeyCreated.SIZE, account);
    KeyCreated.clear_reserved(this.m, o);
    KeyCreated.set_key_id(m, o, id);
    KeyCreated.set_account_id(m, o, account);
    KeyCreated.set_scopes(m, o, CreateKey.scopes(cm, co));
    KeyCreated.set_secret(m, o, CreateKey.secret(cm, co));
    KeyCreated.set_label(m, o, CreateKey.label(cm, co));
    this.commit(o);
    this.ok(T_CREATE_KEY, account, id);
  }

  private revokeKey(keyId: number, account: number): void {
    const acc = this.state.accounts;
    const k = acc.keyRow(keyId);
    if (k < 0 || (account !== 0 && acc.keyAccount[k] !== account)) return this.reject(T_REVOKE_KEY, Reject.unknown_key, account);
    if (acc.keyRevoked[k] === 0) {
      const owner = acc.keyAccount[k]!;
      const o = this.begin(KeyRevoked.TYPE, KeyRevoked.SIZE, owner);
      KeyRevoked.clear_reserved(this.m, o);
      KeyRevoked.set_key_id(this.m, o, keyId);
      KeyRevoked.set_account_id(this.m, o, owner);
      this.commit(o);
    }
    this.ok(T_REVOKE_KEY, account, keyId);
  }

  private deposit(cm: Mem, co: number, account: number): void {
    const acc = this.state.accounts;
    if (!acc.isLive(account)) return this.reject(T_DEPOSIT, Reject.unknown_account, account);
    const amount = Deposit.amount(cm, co);
    if (amount < 1) return this.reject(T_DEPOSIT, Reject.invalid_command, account);
    const m = this.m;
    const o = this.begin(Deposited.TYPE, Deposited.SIZE, account);
    Deposited.clear_reserved(this.m, o);
    Deposited.set_amount(m, o, amount);
    Deposited.set_ref(m, o, Deposit.ref(cm, co));
    this.commit(o);
    this.ok(T_DEPOSIT, account, 0);
  }

  private requestWithdrawal(cm: Mem, co: number, account: number): void {
    const acc = this.state.accounts;
    if (!acc.isLive(account)) return this.reject(T_REQUEST_WITHDRAWAL, Reject.unknown_account, account);
    const hi = RequestWithdrawal.client_withdrawal_id_hi(cm, co);
    const lo = RequestWithdrawal.client_withdrawal_id_lo(cm, co);
    const amount = RequestWithdrawal.amount(cm, co);
    const destination = RequestWithdrawal.destination(cm, co);
    const existing = acc.cwidIndex.get(account, hi, lo);
    if (existing >= 0) {
      const w = acc.withdrawalRow(existing);
      if (acc.wAmount[w] === amount && acc.wDestination[w] === destination) return this.ok(T_REQUEST_WITHDRAWAL, account, existing);
      return this.reject(T_REQUEST_WITHDRAWAL, Reject.duplicate_client_withdrawal_id, account, existing);
    }
    if (amount > acc.available[account]!) return this.reject(T_REQUEST_WITHDRAWAL, Reject.withdrawal_exceeds_available, account);
    if (amount < 1) return this.reject(T_REQUEST_WITHDRAWAL, Reject.invalid_command, account);
    const wid = acc.withdrawalCount + 1;
    const m = this.m;
    const o = this.begin(WithdrawalRequested.TYPE, WithdrawalRequested.SIZE, account);
    WithdrawalRequested.clear_reserved(this.m, o);
    WithdrawalRequested.set_wid(m, o, wid);
    WithdrawalRequested.set_client_withdrawal_id(m, o, hi, lo);
    WithdrawalRequested.set_amount(m, o, amount);
    WithdrawalRequested.set_destination(m, o, destination);
    this.commit(o);
    this.ok(T_REQUEST_WITHDRAWAL, account, wid);
  }

  private finishWithdrawal(wid: number, confirm: boolean, type: number, account: number): void {
    const acc = this.state.accounts;
    const w = acc.withdrawalRow(wid);
    if (w < 0 || acc.wStatus[w] !== WithdrawalStatus.pending) return this.reject(type, Reject.unknown_withdrawal, account);
    const m = this.m;
    const owner = acc.wAccount[w]!;
    if (confirm) {
      const o = this.begin(WithdrawalConfirmed.TYPE, WithdrawalConfirmed.SIZE, owner);
      WithdrawalConfirmed.clear_reserved(this.m, o);
      WithdrawalConfirmed.set_wid(m, o, wid);
      WithdrawalConfirmed.set_amount(m, o, acc.wAmount[w]!);
      this.commit(o);
    } else {
      const o = this.begin(WithdrawalFailed.TYPE, WithdrawalFailed.SIZE, owner);
      WithdrawalFailed.clear_reserved(this.m, o);
      WithdrawalFailed.set_wid(m, o, wid);
      WithdrawalFailed.set_amount(m, o, acc.wAmount[w]!);
      this.commit(o);
    }
    this.ok(type, account, wid);
  }

  private createFeeSchedule(cm: Mem, co: number, account: number): void {
    const taker = CreateFeeSchedule.taker_bps(cm, co);
    const maker = CreateFeeSchedule.maker_bps(cm, co);
    if (taker > 10000 || maker > 10000) return this.reject(T_CREATE_FEE_SCHEDULE, Reject.invalid_command, account);
    const id = this.state.accounts.feeCount + 1;
    const m = this.m;
    const o = this.begin(FeeScheduleCreated.TYPE, FeeScheduleCreated.SIZE, 0);
    FeeScheduleCreated.clear_reserved(this.m, o);
    FeeScheduleCreated.set_fee_schedule_id(m, o, id);
    FeeScheduleCreated.set_taker_bps(m, o, taker);
    FeeScheduleCreated.set_maker_bps(m, o, maker);
    this.commit(o);
    this.ok(T_CREATE_FEE_SCHEDULE, account, id);
  }

  private createMarket(cm: Mem, co: number, account: number): void {
    const s = this.state;
    const fs = CreateMarket.fee_schedule_id(cm, co);
    if (fs !== 0 && fs > s.accounts.feeCount) return this.reject(T_CREATE_MARKET, Reject.unknown_fee_schedule, account);
    const id = this.emitMarketCreated(CreateMarket.category(cm, co), CreateMarket.position_limit(cm, co), fs, CreateMarket.title(cm, co));
    this.ok(T_CREATE_MARKET, account, id);
  }

  private emitMarketCreated(category: number, positionLimit: number, fs: number, title: string): number {
    const id = this.state.markets.count + 1;
    const m = this.m;
    const o = this.begin(MarketCreated.TYPE, MarketCreated.SIZE, 0);
    MarketCreated.clear_reserved(this.m, o);
    MarketCreated.set_market_id(m, o, id);
    MarketCreated.set_category(m, o, category);
    MarketCreated.set_position_limit(m, o, positionLimit);
    MarketCreated.set_fee_schedule_id(m, o, fs);
    MarketCreated.set_title(m, o, title);
    this.commit(o);
    return id;
  }

  // ---- series --------------------------------------------------------------

  private createSeries(cm: Mem, co: number, account: number): void {
    const s = this.state;
    const period = CreateSeries.period_s(cm, co);
    const fs = CreateSeries.fee_schedule_id(cm, co);
    const category = CreateSeries.category(cm, co);
    if (period < 1 || period > SERIES_PERIOD_MAX_S) return this.reject(T_CREATE_SERIES, Reject.invalid_command, account);
    if (fs !== 0 && fs > s.accounts.feeCount) return this.reject(T_CREATE_SERIES, Reject.unknown_fee_schedule, account);
    if (s.markets.activeSeries(category) !== 0) return this.reject(T_CREATE_SERIES, Reject.duplicate_series, account);
    const id = this.emitMarketCreated(category, CreateSeries.position_limit(cm, co), fs, CreateSeries.title(cm, co));
    const m = this.m;
    const o = this.begin(SeriesCreated.TYPE, SeriesCreated.SIZE, 0);
    SeriesCreated.clear_reserved(m, o);
    SeriesCreated.set_market_id(m, o, id);
    SeriesCreated.set_category(m, o, category);
    SeriesCreated.set_period_s(m, o, period);
    this.commit(o);
    // The first round opens at once when the oracle allows it, else on a later ClockTick.
    const n = this.freshPrices(this.tsHi, this.tsLo, -1, 0);
    if (n >= s.config.oracle_quorum) this.openSeriesRound(id, this.priceScratch[(n - 1) >> 1]!);
    this.ok(T_CREATE_SERIES, account, id);
  }

  private stopSeries(category: number, account: number): void {
    const market = this.state.markets.activeSeries(category);
    if (market === 0) return this.reject(T_STOP_SERIES, Reject.unknown_series, account);
    const m = this.m;
    const o = this.begin(SeriesStopped.TYPE, SeriesStopped.SIZE, 0);
    SeriesStopped.clear_reserved(m, o);
    SeriesStopped.set_market_id(m, o, market);
    SeriesStopped.set_category(m, o, category);
    this.commit(o);
    this.ok(T_STOP_SERIES, account, market);
  }
}

