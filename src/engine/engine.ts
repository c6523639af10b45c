// Engine: the sequencer and decide(state, command) -> events. Runs on the one
// matching worker thread (and in tests, tools and benchmarks). For each
// command it assigns seq and ts, then dispatches once on the command type to
// the command's module: placement.ts (PlaceOrder and the match loop),
// order_commands.ts (cancel, decrease, cancel-all, dead-man), rounds.ts
// (clock, rounds, oracle, series) and admin.ts (accounts, keys, funding,
// fees, markets). Each event is written in place into the EventOut and
// applied at once (emitter.ts), so decide always reads the state as of the
// previous event. The rules are in src/engine/README.md. No node:* imports, no
// clock, no allocation on the placement path (time and randomness arrive on
// commands).

import * as recordsModule from '../layout/records.js';
import * as assertModule from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import * as u64Module from '../lib/u64.js';
import * as adminModule from './admin.js';
import type { EngineConfig } from './config.js';
import { Emitter } from './emitter.js';
import type { EventOut } from './event_out.js';
import * as orderCommandsModule from './order_commands.js';
import * as placementModule from './placement.js';
import { Taker } from './placement.js';
import * as roundsModule from './rounds.js';
import { ExchangeState } from './state.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const {
  ArmDeadman, CancelAll, CancelOrder, DecreaseOrder, FreezeRound, Header, ProposeRound, Reject, RevokeKey, StopSeries, SubmitOracleTick,
  T_ARM_DEADMAN, T_CANCEL_ALL, T_CANCEL_ORDER, T_CLOCK_TICK, T_CONFIRM_WITHDRAWAL, T_CREATE_ACCOUNT, T_CREATE_FEE_SCHEDULE, T_CREATE_KEY,
  T_CREATE_MARKET, T_CREATE_SERIES, T_DECREASE_ORDER, T_DELETE_ACCOUNT, T_DEPOSIT, T_DISARM_DEADMAN, T_DISPUTE_ROUND, T_FAIL_WITHDRAWAL,
  T_FREEZE_ROUND, T_OPEN_ROUND, T_PLACE_ORDER, T_PROPOSE_ROUND, T_REQUEST_WITHDRAWAL, T_REVOKE_KEY, T_SETTLE_ROUND, T_STOP_SERIES,
  T_SET_KEY_TIER, T_SUBMIT_ORACLE_TICK, T_UNFREEZE_ROUND, T_VOID_ROUND,
} = recordsModule;
const { fail } = assertModule;
const { addHiLo, cmpHiLo } = u64Module;
const {
  createAccount, createFeeSchedule, createKey, createMarket, deleteAccount, deposit, finishWithdrawal, requestWithdrawal, revokeKey,
  setKeyTier,
} = adminModule;
const { armDeadman, cancelAll, cancelOrder, decreaseOrder, disarmDeadman } = orderCommandsModule;
const { placeOrder } = placementModule;
const { clockDue, clockTick, createSeries, nextDueMs, oracleTick, openRound, roundControl, stopSeries } = roundsModule;

/** The producer id of the clock's ticks (the exchange's timer ring, src/main/engine_loop.ts PRODUCER_CLOCK). */
const CLOCK_PRODUCER = 0;

export interface EngineOptions {
  /**
   * Apply every event through evolve, as a read model does, instead of the
   * fused path. Only the differential test's reference engine sets it.
   */
  viaEvolve?: boolean;
}

export class Engine {
  readonly state: ExchangeState;
  private readonly e: Emitter;
  private readonly taker = new Taker();
  private readonly hilo = new Uint32Array(2);

  /** `state`: a recovered state to continue from (snapshot plus replayed journal); a fresh one otherwise. */
  constructor(config: Partial<EngineConfig>, out: EventOut, state?: ExchangeState, options: EngineOptions = {}) {
    this.state = state ?? new ExchangeState(config);
    this.e = new Emitter(this.state, out, options.viaEvolve === true);
  }

  /**
   * Sequences and decides one command record at `co` in `cm`. Returns the
   * command's seq, or 0 when it was dropped (a ClockTick with nothing due).
   * When a ClockTick would do something at the command's ts, that tick is
   * sequenced first (its own seq and completion). The caller publishes the
   * EventOut (per command or per batch).
   */
  execute(cm: Mem, co: number): number {
    const s = this.state;
    const e = this.e;
    const type = Header.type(cm, co);
    // ts = max(command ts, previous ts + 1): strictly increasing.
    let hi = Header.ts_hi(cm, co);
    let lo = Header.ts_lo(cm, co);
    addHiLo(s.tsHi, s.tsLo, 1, this.hilo);
    if (cmpHiLo(hi, lo, this.hilo[0]!, this.hilo[1]!) < 0) {
      hi = this.hilo[0]!;
      lo = this.hilo[1]!;
    }
    if (type === T_CLOCK_TICK) {
      if (!clockDue(e, hi, lo)) return 0;
    } else {
      // Time comes first: what is due at this command's ts (a round's close, an order's expiry, a dead-man) is sequenced
      // before it, as the clock's own tick at ts, and the command follows at ts + 1 (README, "ClockTick"), where
      // something else may be due (an expiry 1 ns later): tick again until nothing is.
      while (clockDue(e, hi, lo)) {
        this.tick(hi, lo);
        addHiLo(hi, lo, 1, this.hilo);
        hi = this.hilo[0]!;
        lo = this.hilo[1]!;
      }
    }
    const seq = s.seq + 1;
    e.startCommand(seq, hi, lo, Header.producer(cm, co), Header.correlation(cm, co));
    const account = Header.account(cm, co);
    switch (type) {
      case T_PLACE_ORDER: placeOrder(e, this.taker, cm, co, account); break;
      case T_CANCEL_ORDER: cancelOrder(e, CancelOrder.order_id(cm, co), account); break;
      case T_DECREASE_ORDER: decreaseOrder(e, DecreaseOrder.order_id(cm, co), DecreaseOrder.new_qty(cm, co), account); break;
      case T_CANCEL_ALL: cancelAll(e, CancelAll.market_id(cm, co), CancelAll.group_id(cm, co), account); break;
      case T_ARM_DEADMAN: armDeadman(e, ArmDeadman.timeout_ms(cm, co), account); break;
      case T_DISARM_DEADMAN: disarmDeadman(e, account); break;
      case T_CLOCK_TICK: clockTick(e); break;
      case T_CREATE_ACCOUNT: createAccount(e); break;
      case T_DELETE_ACCOUNT: deleteAccount(e, account); break;
      case T_CREATE_KEY: createKey(e, cm, co, account); break;
      case T_REVOKE_KEY: revokeKey(e, RevokeKey.key_id(cm, co), account); break;
      case T_DEPOSIT: deposit(e, cm, co, account); break;
      case T_REQUEST_WITHDRAWAL: requestWithdrawal(e, cm, co, account); break;
      case T_CONFIRM_WITHDRAWAL: finishWithdrawal(e, type, cm, co, true, account); break;
      case T_FAIL_WITHDRAWAL: finishWithdrawal(e, type, cm, co, false, account); break;
      case T_CREATE_FEE_SCHEDULE: createFeeSchedule(e, cm, co, account); break;
      case T_CREATE_MARKET: createMarket(e, cm, co, account); break;
      case T_OPEN_ROUND: openRound(e, cm, co, account); break;
      case T_FREEZE_ROUND:
      case T_UNFREEZE_ROUND:
      case T_DISPUTE_ROUND:
      case T_SETTLE_ROUND:
      case T_VOID_ROUND:
      case T_PROPOSE_ROUND: {
        const source = type === T_PROPOSE_ROUND ? ProposeRound.source(cm, co) : 0;
        roundControl(e, type, FreezeRound.market_id(cm, co), source, account);
        break;
      }
      case T_SUBMIT_ORACLE_TICK: oracleTick(e, SubmitOracleTick.source_id(cm, co), SubmitOracleTick.price(cm, co), account); break;
      case T_CREATE_SERIES: createSeries(e, cm, co, account); break;
      case T_STOP_SERIES: stopSeries(e, StopSeries.category(cm, co), account); break;
      case T_SET_KEY_TIER: setKeyTier(e, cm, co, account); break;
      default: e.rejected(type, Reject.invalid_command, account); break;
    }
    // Every sequenced command ends with its completion; seqs strictly increase.
    if (!(e.completedSeq === seq && s.seq === seq)) fail('engine: a command ended without its completion');
    return seq;
  }

  /** A ClockTick at (hi, lo), sequenced as the clock's (producer 0, correlation 0), for a command that arrived when it was due. */
  private tick(hi: number, lo: number): void {
    const s = this.state;
    const e = this.e;
    const seq = s.seq + 1;
    e.startCommand(seq, hi, lo, CLOCK_PRODUCER, 0);
    clockTick(e);
    if (!(e.completedSeq === seq && s.seq === seq)) fail('engine: a due ClockTick ended without its completion');
  }

  /** The last sequenced ts, ms since the epoch. */
  lastTsMs(): number {
    return (this.state.tsHi * 4294967296 + this.state.tsLo) / 1e6;
  }

  /** When the next ClockTick can have an effect, ms since the epoch; Infinity when nothing is scheduled (rounds.ts nextDueMs). */
  nextDueMs(): number {
    return nextDueMs(this.e);
  }
}
