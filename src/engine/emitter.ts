// Emitter: writes the events of the command being decided and applies each
// one at once. Engine thread (and tests, tools, benchmarks). It holds the
// command's sequencing (seq, ts, producer, correlation), claims each record
// in the EventOut, writes its header, and after the caller filled the fields
// applies it: order events through apply.ts with the slots decide holds (the
// fused path), the rest through evolve. With `viaEvolve` every event goes
// through evolve instead, as a read model applies it: the differential test
// runs an engine each way and requires the same event bytes and state hash.
// The completion record (CommandCompleted) is written by the named helpers at
// the end of this file, one per kind of outcome.

import * as recordsModule from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import * as applyModule from './apply.js';
import type { AcceptedOrder, Fill } from './apply.js';
import type { EventOut } from './event_out.js';
import * as evolveModule from './evolve.js';
import { ORACLE_SOURCES } from './markets.js';
import type { ExchangeState } from './state.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const { CommandCompleted, CompletionStatus, Header, OrderAccepted, T_PLACE_ORDER } = recordsModule;
const { applyAccepted, applyCanceled, applyDecreased, applyFilled, applyRejected, applyRested } = applyModule;
const { evolve } = evolveModule;

export class Emitter {
  readonly state: ExchangeState;
  readonly m: Mem;
  private readonly out: EventOut;
  /** Apply every event through evolve (the differential test's reference engine); false on the fused path. */
  readonly viaEvolve: boolean;
  // The command being decided.
  seq = 0;
  tsHi = 0;
  tsLo = 0;
  producer = 0;
  correlation = 0;
  /** Seq of the last command that wrote its completion (the engine asserts every command does). */
  completedSeq = 0;
  /** Scratch for u64 arithmetic (addHiLo). */
  readonly hilo = new Uint32Array(2);
  /** Scratch for sorted id lists (orders to cancel, accounts to pay out); grows when a list is longer. */
  ids = new Float64Array(256);
  /** Scratch for the fresh oracle prices. */
  readonly prices = new Float64Array(ORACLE_SOURCES);

  constructor(state: ExchangeState, out: EventOut, viaEvolve: boolean) {
    this.state = state;
    this.out = out;
    this.m = out.mem;
    this.viaEvolve = viaEvolve;
  }

  /** Starts a sequenced command: its events carry these; the fused path's state moves to its seq and ts now. */
  startCommand(seq: number, tsHi: number, tsLo: number, producer: number, correlation: number): void {
    this.seq = seq;
    this.tsHi = tsHi;
    this.tsLo = tsLo;
    this.producer = producer;
    this.correlation = correlation;
    if (!this.viaEvolve) {
      const s = this.state;
      s.seq = seq;
      s.tsHi = tsHi;
      s.tsLo = tsLo;
    }
  }

  /** Claims an event record and writes its header; the caller writes every field (and clear_reserved) before applying it. */
  begin(type: number, size: number, account: number): number {
    const o = this.out.claim(size);
    // One call of whole-word stores: a setter per field measured 5-8% slower (the generator's Header.write).
    Header.write(this.m, o, size, type, this.producer, this.correlation, account, this.seq, this.tsHi, this.tsLo);
    return o;
  }

  /** Applies an event off the order path (accounts, rounds, oracle, ...) through evolve. */
  commit(o: number): void {
    evolve(this.state, this.m, o);
  }

  // ---- the order events: fused, or through evolve --------------------------

  /** Applies the OrderAccepted at o, whose fields decide holds in f; returns the new order's slot. */
  accepted(o: number, f: AcceptedOrder): number {
    if (!this.viaEvolve) return applyAccepted(this.state, f);
    this.commit(o);
    return this.state.slotOf(OrderAccepted.order_id(this.m, o));
  }

  rested(o: number, slot: number): void {
    if (this.viaEvolve) this.commit(o);
    else applyRested(this.state, this.m, o, slot);
  }

  /** Applies the Filled at o, which decide wrote from f. */
  filled(o: number, f: Fill, maker: number, taker: number): void {
    if (this.viaEvolve) this.commit(o);
    else applyFilled(this.state, f, maker, taker);
  }

  canceled(o: number, slot: number): void {
    if (this.viaEvolve) this.commit(o);
    else applyCanceled(this.state, this.m, o, slot);
  }

  decreased(o: number, slot: number): void {
    if (this.viaEvolve) this.commit(o);
    else applyDecreased(this.state, this.m, o, slot);
  }

  rejectedOrder(o: number): void {
    if (this.viaEvolve) this.commit(o);
    else applyRejected(this.state, this.m, o);
  }

  /** Appends v to the id scratch at index n (growing it); returns n + 1. */
  pushId(n: number, v: number): number {
    if (n === this.ids.length) {
      const bigger = new Float64Array(n * 2);
      bigger.set(this.ids);
      this.ids = bigger;
    }
    this.ids[n] = v;
    return n + 1;
  }

  // ---- completions: the last event of every command ------------------------

  /** The command succeeded; `result` is its number (an id, a round number, a quantity), 0 when none. */
  ok(commandType: number, account: number, result: number): void {
    this.complete(account, CompletionStatus.ok, 0, 0, commandType, 0, 0, 0, 0, result, 0, 0);
  }

  /** The command succeeded with a result and a time (ArmDeadman: timeout and fires_at_ts). */
  okAt(commandType: number, account: number, result: number, hi: number, lo: number): void {
    this.complete(account, CompletionStatus.ok, 0, 0, commandType, 0, 0, 0, 0, result, hi, lo);
  }

  /** The command was refused with reject code `code`; changes nothing else. */
  rejected(commandType: number, code: number, account: number, result = 0): void {
    this.complete(account, CompletionStatus.rejected, 0, 0, commandType, code, 0, 0, 0, result, 0, 0);
  }

  /** A cancel or decrease of `orderId` succeeded; `result` is the quantity canceled or kept. */
  orderOk(commandType: number, account: number, orderId: number, result: number): void {
    this.complete(account, CompletionStatus.ok, 0, 0, commandType, 0, orderId, 0, 0, result, 0, 0);
  }

  /** A cancel or decrease named an order that is not the account's live order. */
  orderRejected(commandType: number, code: number, account: number, orderId: number): void {
    this.complete(account, CompletionStatus.rejected, 0, 0, commandType, code, orderId, 0, 0, 0, 0, 0);
  }

  /** A placement was accepted: its status (and cancel reason), and how much filled and rests. */
  placed(account: number, orderId: number, orderStatus: number, reason: number, filledQty: number, restingQty: number): void {
    this.complete(account, CompletionStatus.ok, orderStatus, reason, T_PLACE_ORDER, 0, orderId, filledQty, restingQty, 0, 0, 0);
  }

  /**
   * A placement was refused with `code`: `orderId` and `orderStatus` are the
   * retained reject's (OrderRejected) or, for a duplicate client_order_id,
   * the existing order's.
   */
  placementRejected(account: number, code: number, orderId: number, orderStatus: number): void {
    this.complete(account, CompletionStatus.rejected, orderStatus, 0, T_PLACE_ORDER, code, orderId, 0, 0, 0, 0, 0);
  }

  /**
   * Writes the CommandCompleted (its fields in layout order, as the helpers
   * above name them) in one call of whole-word stores: a setter per field
   * measured 3-6% slower on the engine_match stream (tools/engine_ab).
   * The sub-word fields must fit (write does not mask them): statuses and
   * reasons are enums, codes u16; commandType, an unknown command's u16
   * type included, is the top byte of its word, so the shift truncates it
   * exactly as the u8 setter did.
   */
  private complete(
    account: number, status: number, orderStatus: number, reason: number, commandType: number, code: number, orderId: number,
    filledQty: number, restingQty: number, result: number, resultTsHi: number, resultTsLo: number,
  ): void {
    const o = this.begin(CommandCompleted.TYPE, CommandCompleted.SIZE, account);
    CommandCompleted.write(
      this.m, o, status, orderStatus, reason, commandType, code, orderId, filledQty, restingQty, result, resultTsHi, resultTsLo,
    );
    this.completed(o);
  }

  /** CommandCompleted changes nothing but seq and ts, which the fused path set at the command's start. */
  private completed(o: number): void {
    this.completedSeq = this.seq;
    if (this.viaEvolve) this.commit(o);
  }
}
