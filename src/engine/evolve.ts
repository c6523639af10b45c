// evolve(state, event): the only code that changes ExchangeState. It runs on
// the engine thread right after decide writes each event, in every gateway
// thread's read model, and in recovery (snapshot + replay, no re-matching).
// It imports nothing engine-only, reads no clock and makes no decisions: every
// choice is in the event; evolve applies it with plain arithmetic.

import { NIL, type OrderSlab } from '../book/orders.js';
import type { Accounts } from '../accounts/accounts.js';
import {
  AccountCreated, AccountDeleted, DeadmanArmed, Deposited, FeeScheduleCreated, Filled, Header, KeyCreated, KeyRevoked,
  MarketCreated, OracleSourceExpired, OracleTicked, OrderAccepted, OrderCanceled, OrderDecreased, OrderRejected, OrderRested, OrderStatus,
  PositionSettled, RoundOpened, RoundStatus, RoundTransitioned, Side, T_ACCOUNT_CREATED, T_ACCOUNT_DELETED,
  T_COMMAND_COMPLETED, T_DEADMAN_ARMED, T_DEADMAN_DISARMED, T_DEPOSITED, T_FEE_SCHEDULE_CREATED, T_FILLED,
  SeriesCreated, SeriesStopped, T_KEY_CREATED, T_KEY_REVOKED, T_MARKET_CREATED, T_ORACLE_SOURCE_EXPIRED, T_ORACLE_TICKED,
  T_SERIES_CREATED, T_SERIES_STOPPED, T_ORDER_ACCEPTED, T_ORDER_CANCELED,
  T_ORDER_DECREASED, T_ORDER_REJECTED, T_ORDER_RESTED, T_POSITION_SETTLED, T_ROUND_OPENED, T_ROUND_TRANSITIONED,
  T_WITHDRAWAL_CONFIRMED, T_WITHDRAWAL_FAILED, T_WITHDRAWAL_REQUESTED, Tif, WithdrawalConfirmed,
  WithdrawalRequested, WithdrawalStatus,
} from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { addHiLo } from '../lib/u64.js';
import type { ExchangeState } from './state.js';

const scratchHiLo = new Uint32Array(2);

export function evolve(s: ExchangeState, m: Mem, o: number): void {
  const type = Header.type(m, o);
  s.seq = Header.seq(m, o);
  s.tsHi = Header.ts_hi(m, o);
  s.tsLo = Header.ts_lo(m, o);
  switch (type) {
    case T_COMMAND_COMPLETED: return;
    case T_FILLED: return onFilled(s, m, o);
    case T_ORDER_ACCEPTED: return onOrderAccepted(s, m, o);
    case T_ORDER_RESTED: return onOrderRested(s, m, o);
    case T_ORDER_CANCELED: return onOrderCanceled(s, m, o);
    case T_ORDER_DECREASED: return onOrderDecreased(s, m, o);
    case T_ORDER_REJECTED: return onOrderRejected(s, m, o);
    case T_DEADMAN_ARMED: {
      const a = Header.account(m, o);
      const acc = s.accounts;
      acc.deadArmed[a] = 1;
      acc.deadTimeoutMs[a] = DeadmanArmed.timeout_ms(m, o);
      acc.deadHi[a] = DeadmanArmed.fires_at_ts_hi(m, o);
      acc.deadLo[a] = DeadmanArmed.fires_at_ts_lo(m, o);
      s.deadmen.set(a, acc.deadHi[a]!, acc.deadLo[a]!);
      return;
    }
    case T_DEADMAN_DISARMED: {
      const a = Header.account(m, o);
      s.accounts.deadArmed[a] = 0;
      s.deadmen.remove(a);
      return;
    }
    case T_ACCOUNT_CREATED: {
      const id = AccountCreated.account_id(m, o);
      assert(id === s.accounts.count + 1, 'evolve: account ids are consecutive');
      s.accounts.ensureAccounts(id);
      s.accounts.count = id;
      return;
    }
    case T_ACCOUNT_DELETED:
      s.accounts.deleted[AccountDeleted.account_id(m, o)] = 1;
      return;
    case T_KEY_CREATED: {
      const acc = s.accounts;
      const k = acc.addKey(KeyCreated.key_id(m, o), KeyCreated.account_id(m, o));
      acc.keyScopes[k] = KeyCreated.scopes(m, o);
      acc.keySecret.set(KeyCreated.secret(m, o), k * 32);
      acc.keyLabel[k] = KeyCreated.label(m, o);
      return;
    }
    case T_KEY_REVOKED: {
      const k = s.accounts.keyRow(KeyRevoked.key_id(m, o));
      assert(k >= 0 && s.accounts.keyRevoked[k] === 0, 'evolve: a revoked key was live');
      s.accounts.revokeKey(k, s.config.revoked_key_cap);
      return;
    }
    case T_DEPOSITED: {
      const amount = Deposited.amount(m, o);
      const a = Header.account(m, o);
      s.accounts.available[a] = s.accounts.available[a]! + amount;
      s.accounts.deposits += amount;
      return;
    }
    case T_WITHDRAWAL_REQUESTED: {
      const acc = s.accounts;
      const wid = WithdrawalRequested.wid(m, o);
      const a = Header.account(m, o);
      const amount = WithdrawalRequested.amount(m, o);
      const w = acc.addWithdrawal(wid, a);
      acc.wAmount[w] = amount;
      acc.wStatus[w] = WithdrawalStatus.pending;
      acc.wCwidHi[w] = WithdrawalRequested.client_withdrawal_id_hi(m, o);
      acc.wCwidLo[w] = WithdrawalRequested.client_withdrawal_id_lo(m, o);
      acc.wDestination[w] = WithdrawalRequested.destination(m, o);
      acc.wSeq[w] = s.seq;
      acc.cwidIndex.set(a, acc.wCwidHi[w]!, acc.wCwidLo[w]!, wid);
      acc.available[a] = acc.available[a]! - amount;
      acc.reserved[a] = acc.reserved[a]! + amount;
      return;
    }
    case T_WITHDRAWAL_CONFIRMED: {
      const acc = s.accounts;
      const w = acc.withdrawalRow(WithdrawalConfirmed.wid(m, o));
      assert(w >= 0 && acc.wStatus[w] === WithdrawalStatus.pending, 'evolve: a confirmed withdrawal was pending');
      const a = acc.wAccount[w]!;
      const amount = acc.wAmount[w]!;
      acc.wStatus[w] = WithdrawalStatus.confirmed;
      acc.reserved[a] = acc.reserved[a]! - amount;
      acc.withdrawn += amount;
      acc.finishWithdrawal(w, s.config.withdrawal_cap);
      return;
    }
    case T_WITHDRAWAL_FAILED: {
      const acc = s.accounts;
      const w = acc.withdrawalRow(WithdrawalConfirmed.wid(m, o));
      assert(w >= 0 && acc.wStatus[w] === WithdrawalStatus.pending, 'evolve: a failed withdrawal was pending');
      const a = acc.wAccount[w]!;
      const amount = acc.wAmount[w]!;
      acc.wStatus[w] = WithdrawalStatus.failed;
      acc.reserved[a] = acc.reserved[a]! - amount;
      acc.available[a] = acc.available[a]! + amount;
      acc.finishWithdrawal(w, s.config.withdrawal_cap);
      return;
    }
    case T_FEE_SCHEDULE_CREATED: {
      const acc = s.accounts;
      const id = FeeScheduleCreated.fee_schedule_id(m, o);
      assert(id === acc.feeCount + 1, 'evolve: fee schedule ids are consecutive');
      acc.ensureFeeSchedules(id);
      acc.feeCount = id;
      acc.feeTaker[id] = FeeScheduleCreated.taker_bps(m, o);
      acc.feeMaker[id] = FeeScheduleCreated.maker_bps(m, o);
      return;
    }
    case T_MARKET_CREATED: {
      const mk = s.markets;
      const id = MarketCreated.market_id(m, o);
      assert(id === mk.count + 1, 'evolve: market ids are consecutive');
      mk.ensureMarkets(id);
      s.book.ensureMarkets(id);
      s.accounts.ensureMarkets(id);
      mk.count = id;
      mk.category[id] = MarketCreated.category(m, o);
      mk.positionLimit[id] = MarketCreated.position_limit(m, o);
      mk.feeSchedule[id] = MarketCreated.fee_schedule_id(m, o);
      mk.title[id] = MarketCreated.title(m, o);
      return;
    }
    case T_ROUND_OPENED: return onRoundOpened(s, m, o);
    case T_ROUND_TRANSITIONED: return onRoundTransitioned(s, m, o);
    case T_POSITION_SETTLED: {
      const acc = s.accounts;
      const a = Header.account(m, o);
      const p = acc.findPosition(a, PositionSettled.market_id(m, o));
      assert(p >= 0, 'evolve: settled position exists');
      acc.pFree[2 * p] = acc.pFree[2 * p]! - PositionSettled.yes_qty(m, o);
      acc.pFree[2 * p + 1] = acc.pFree[2 * p + 1]! - PositionSettled.no_qty(m, o);
      acc.available[a] = acc.available[a]! + PositionSettled.payout(m, o);
      return;
    }
    case T_ORACLE_TICKED: {
      const mk = s.markets;
      const src = OracleTicked.source_id(m, o);
      mk.srcSeen[src] = 1;
      mk.srcPrice[src] = OracleTicked.price(m, o);
      mk.srcTsHi[src] = s.tsHi;
      mk.srcTsLo[src] = s.tsLo;
      mk.oraclePrice = OracleTicked.ref_price(m, o);
      mk.oracleFresh = OracleTicked.fresh_source_count(m, o);
      mk.oracleSeq = s.seq;
      // Fresh while ts - last_ts < staleness: stale from last_ts + staleness on.
      addHiLo(s.tsHi, s.tsLo, s.config.oracle_staleness_ms * 1_000_000, scratchHiLo);
      s.oracleExpiries.set(src, scratchHiLo[0]!, scratchHiLo[1]!);
      return;
    }
    case T_ORACLE_SOURCE_EXPIRED: {
      const mk = s.markets;
      s.oracleExpiries.remove(OracleSourceExpired.source_id(m, o));
      mk.oraclePrice = OracleSourceExpired.ref_price(m, o);
      mk.oracleFresh = OracleSourceExpired.fresh_source_count(m, o);
      mk.oracleSeq = s.seq;
      return;
    }
    case T_SERIES_CREATED: {
      const mk = s.markets;
      const market = SeriesCreated.market_id(m, o);
      assert(market === mk.count && mk.round[market] === -1, 'evolve: a series starts with the market created just before');
      mk.seriesPeriodS[market] = SeriesCreated.period_s(m, o);
      mk.seriesActive[market] = 1;
      s.seriesWaiting.set(market, s.tsHi, s.tsLo);
      return;
    }
    case T_SERIES_STOPPED: {
      const market = SeriesStopped.market_id(m, o);
      s.markets.seriesActive[market] = 0;
      s.seriesWaiting.remove(market);
      return;
    }
  }
  throw new Error(`evolve: unknown event type ${type}`);
}

function onOrderAccepted(s: ExchangeState, m: Mem, o: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const slot = ord.alloc();
  const id = OrderAccepted.order_id(m, o);
  const a = Header.account(m, o);
  const market = OrderAccepted.market_id(m, o);
  const side = OrderAccepted.side(m, o);
  const outcome = OrderAccepted.outcome(m, o);
  const tick = OrderAccepted.tick(m, o);
  const qty = OrderAccepted.qty(m, o);
  ord.id[slot] = id;
  ord.account[slot] = a;
  ord.market[slot] = market;
  ord.remaining[slot] = qty;
  ord.groupId[slot] = OrderAccepted.group_id(m, o);
  ord.tick[slot] = tick;
  ord.side[slot] = side;
  ord.outcome[slot] = outcome;
  ord.tif[slot] = OrderAccepted.tif(m, o);
  ord.hasCoid[slot] = OrderAccepted.has_client_order_id(m, o);
  ord.ladder[slot] = side === Side.buy ? outcome : 1 - outcome;
  ord.ladderTick[slot] = side === Side.buy ? tick : 100 - tick;
  ord.status[slot] = OrderStatus.resting;
  ord.feePerShare[slot] = OrderAccepted.fee_per_share(m, o);
  ord.coidHi[slot] = OrderAccepted.client_order_id_hi(m, o);
  ord.coidLo[slot] = OrderAccepted.client_order_id_lo(m, o);
  ord.expHi[slot] = OrderAccepted.expiry_ts_hi(m, o);
  ord.expLo[slot] = OrderAccepted.expiry_ts_lo(m, o);
  if (!s.matchingOnly) {
    ord.qty[slot] = qty;
    ord.filled[slot] = 0;
    ord.stp[slot] = OrderAccepted.stp(m, o);
    ord.postOnly[slot] = OrderAccepted.post_only(m, o);
    ord.hasMaxCost[slot] = OrderAccepted.has_max_cost(m, o);
    ord.maxCost[slot] = OrderAccepted.max_cost(m, o);
    ord.reason[slot] = 0;
    ord.rejectCode[slot] = 0;
    ord.createdTsHi[slot] = s.tsHi;
    ord.createdTsLo[slot] = s.tsLo;
    ord.lastUpdateSeq[slot] = s.seq;
  }
  s.indexOrder(id, slot);
  if (ord.hasCoid[slot] === 1) s.coidIndex.set(a, ord.coidHi[slot]!, ord.coidLo[slot]!, slot);
  // Live list: ascending order_id, so append at the tail.
  const tail = acc.liveTail[a]!;
  ord.aprev[slot] = tail;
  if (tail === NIL) acc.liveHead[a] = slot;
  else ord.anext[tail] = slot;
  acc.liveTail[a] = slot;
  const p = acc.position(a, market);
  ord.posSlot[slot] = p;
  if (side === Side.buy) {
    const r = OrderAccepted.reserve_cash(m, o);
    ord.reservedCash[slot] = r;
    acc.available[a] = acc.available[a]! - r;
    acc.reserved[a] = acc.reserved[a]! + r;
    acc.pBuying[2 * p + outcome] = acc.pBuying[2 * p + outcome]! + qty;
  } else {
    ord.reservedCash[slot] = 0;
    acc.pFree[2 * p + outcome] = acc.pFree[2 * p + outcome]! - qty;
    acc.pReserved[2 * p + outcome] = acc.pReserved[2 * p + outcome]! + qty;
  }
}

function onOrderRested(s: ExchangeState, m: Mem, o: number): void {
  const slot = s.slotOf(OrderRested.order_id(m, o));
  assert(slot >= 0, 'evolve: rested order exists');
  const ord = s.orders;
  s.book.append(ord, slot);
  if (ord.tif[slot] === Tif.gtd) s.expiries.set(slot, ord.expHi[slot]!, ord.expLo[slot]!);
}

function onOrderRejected(s: ExchangeState, m: Mem, o: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const slot = ord.alloc();
  const id = OrderRejected.order_id(m, o);
  const a = Header.account(m, o);
  const side = OrderRejected.side(m, o);
  const outcome = OrderRejected.outcome(m, o);
  const tick = OrderRejected.tick(m, o);
  ord.id[slot] = id;
  ord.account[slot] = a;
  ord.market[slot] = OrderRejected.market_id(m, o);
  ord.qty[slot] = OrderRejected.qty(m, o);
  ord.remaining[slot] = 0;
  ord.filled[slot] = 0;
  ord.groupId[slot] = OrderRejected.group_id(m, o);
  ord.tick[slot] = tick;
  ord.side[slot] = side;
  ord.outcome[slot] = outcome;
  ord.tif[slot] = OrderRejected.tif(m, o);
  ord.stp[slot] = OrderRejected.stp(m, o);
  ord.postOnly[slot] = OrderRejected.post_only(m, o);
  ord.hasCoid[slot] = OrderRejected.has_client_order_id(m, o);
  ord.hasMaxCost[slot] = OrderRejected.has_max_cost(m, o);
  ord.ladder[slot] = (side === Side.buy ? outcome : 1 - outcome) & 1;
  ord.ladderTick[slot] = 0;
  ord.status[slot] = OrderStatus.rejected;
  ord.reason[slot] = 0;
  ord.feePerShare[slot] = 0;
  ord.rejectCode[slot] = OrderRejected.code_num(m, o);
  ord.posSlot[slot] = -1;
  ord.reservedCash[slot] = 0;
  ord.maxCost[slot] = OrderRejected.max_cost(m, o);
  ord.coidHi[slot] = OrderRejected.client_order_id_hi(m, o);
  ord.coidLo[slot] = OrderRejected.client_order_id_lo(m, o);
  ord.expHi[slot] = OrderRejected.expiry_ts_hi(m, o);
  ord.expLo[slot] = OrderRejected.expiry_ts_lo(m, o);
  ord.createdTsHi[slot] = s.tsHi;
  ord.createdTsLo[slot] = s.tsLo;
  ord.lastUpdateSeq[slot] = s.seq;
  s.indexOrder(id, slot);
  if (ord.hasCoid[slot] === 1) s.coidIndex.set(a, ord.coidHi[slot]!, ord.coidLo[slot]!, slot);
  // Rejected FIFO, oldest first; evict beyond reject_cap.
  const tail = acc.rejTail[a]!;
  ord.aprev[slot] = tail;
  ord.anext[slot] = NIL;
  if (tail === NIL) acc.rejHead[a] = slot;
  else ord.anext[tail] = slot;
  acc.rejTail[a] = slot;
  acc.rejCount[a] = acc.rejCount[a]! + 1;
  if (acc.rejCount[a]! > s.config.reject_cap) {
    const old = acc.rejHead[a]!;
    const next = ord.anext[old]!;
    acc.rejHead[a] = next;
    if (next === NIL) acc.rejTail[a] = NIL;
    else ord.aprev[next] = NIL;
    acc.rejCount[a] = acc.rejCount[a]! - 1;
    forget(s, old);
  }
}

/** Drops a retained order from the slab and its indexes (retention eviction). */
function forget(s: ExchangeState, slot: number): void {
  const ord = s.orders;
  const id = ord.id[slot]!;
  s.unindexOrder(id);
  if (ord.hasCoid[slot] === 1) s.coidIndex.delete(ord.account[slot]!, ord.coidHi[slot]!, ord.coidLo[slot]!);
  ord.free(slot);
}

/** Moves a live order to its account's terminal FIFO; evicts beyond terminal_cap. */
function retire(s: ExchangeState, slot: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const a = ord.account[slot]!;
  const p = ord.aprev[slot]!;
  const n = ord.anext[slot]!;
  if (p === NIL) acc.liveHead[a] = n;
  else ord.anext[p] = n;
  if (n === NIL) acc.liveTail[a] = p;
  else ord.aprev[n] = p;
  const tail = acc.termTail[a]!;
  ord.aprev[slot] = tail;
  ord.anext[slot] = NIL;
  if (tail === NIL) acc.termHead[a] = slot;
  else ord.anext[tail] = slot;
  acc.termTail[a] = slot;
  acc.termCount[a] = acc.termCount[a]! + 1;
  if (acc.termCount[a]! > s.config.terminal_cap) {
    const old = acc.termHead[a]!;
    const next = ord.anext[old]!;
    acc.termHead[a] = next;
    if (next === NIL) acc.termTail[a] = NIL;
    else ord.aprev[next] = NIL;
    acc.termCount[a] = acc.termCount[a]! - 1;
    forget(s, old);
  }
}

/** Applies one party's side of a fill: q shares at own-outcome price p. */
function settleParty(ord: OrderSlab, acc: Accounts, slot: number, q: number, p: number, fee: number, release: number): void {
  const a = ord.account[slot]!;
  const k = 2 * ord.posSlot[slot]! + ord.outcome[slot]!;
  if (ord.side[slot] === Side.buy) {
    ord.reservedCash[slot] = ord.reservedCash[slot]! - release;
    acc.reserved[a] = acc.reserved[a]! - release;
    acc.available[a] = acc.available[a]! + release - q * p - fee;
    acc.pFree[k] = acc.pFree[k]! + q;
    acc.pBuying[k] = acc.pBuying[k]! - q;
  } else {
    acc.pReserved[k] = acc.pReserved[k]! - q;
    acc.available[a] = acc.available[a]! + q * p - fee;
  }
}

function onFilled(s: ExchangeState, m: Mem, o: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const maker = s.slotOf(Filled.maker_order_id(m, o));
  const taker = s.slotOf(Filled.taker_order_id(m, o));
  assert(maker >= 0 && taker >= 0, 'evolve: filled orders exist');
  const q = Filled.qty(m, o);
  const mTick = ord.ladderTick[maker]!;
  const makerFee = Filled.maker_fee(m, o);
  const takerFee = Filled.taker_fee(m, o);
  // Maker trades at its own ladder price; the taker at the complement.
  const makerP = ord.side[maker] === Side.buy ? mTick : 100 - mTick;
  const takerP = ord.side[taker] === Side.buy ? 100 - mTick : mTick;
  settleParty(ord, acc, maker, q, makerP, makerFee, Filled.maker_release(m, o));
  settleParty(ord, acc, taker, q, takerP, takerFee, Filled.taker_release(m, o));
  acc.feesCollected += makerFee + takerFee;
  s.fillCount = Filled.fill_id(m, o);

  const seq = s.seq;
  const mRem = ord.remaining[maker]! - q;
  ord.remaining[maker] = mRem;
  if (!s.matchingOnly) {
    ord.filled[maker] = ord.filled[maker]! + q;
    ord.lastUpdateSeq[maker] = seq;
  }
  if (mRem === 0) {
    s.book.remove(ord, maker, q);
    if (ord.tif[maker] === Tif.gtd) s.expiries.remove(maker);
    ord.status[maker] = OrderStatus.filled;
    retire(s, maker);
  } else {
    s.book.reduce(ord, maker, q);
    ord.status[maker] = OrderStatus.partially_filled;
  }
  const tRem = ord.remaining[taker]! - q;
  ord.remaining[taker] = tRem;
  if (!s.matchingOnly) {
    ord.filled[taker] = ord.filled[taker]! + q;
    ord.lastUpdateSeq[taker] = seq;
  }
  if (tRem === 0) {
    ord.status[taker] = OrderStatus.filled;
    retire(s, taker);
  } else {
    ord.status[taker] = OrderStatus.partially_filled;
  }

  const market = Filled.market_id(m, o);
  const mk = s.markets;
  const path = Filled.path(m, o);
  mk.volume[market] = mk.volume[market]! + q;
  if (path === 0) mk.openInterest[market] = mk.openInterest[market]! + q;
  else if (path === 2) mk.openInterest[market] = mk.openInterest[market]! - q;
  mk.lastTickYes[market] = Filled.tick_yes(m, o);
}

function onOrderCanceled(s: ExchangeState, m: Mem, o: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const slot = s.slotOf(OrderCanceled.order_id(m, o));
  assert(slot >= 0, 'evolve: canceled order exists');
  const rem = OrderCanceled.canceled_qty(m, o);
  assert(rem === ord.remaining[slot], 'evolve: cancel covers the whole remainder');
  if (ord.onBook[slot] === 1) s.book.remove(ord, slot, rem);
  if (ord.tif[slot] === Tif.gtd) s.expiries.remove(slot);
  const a = ord.account[slot]!;
  const k = 2 * ord.posSlot[slot]! + ord.outcome[slot]!;
  if (ord.side[slot] === Side.buy) {
    const release = OrderCanceled.release_cash(m, o);
    ord.reservedCash[slot] = ord.reservedCash[slot]! - release;
    acc.reserved[a] = acc.reserved[a]! - release;
    acc.available[a] = acc.available[a]! + release;
    acc.pBuying[k] = acc.pBuying[k]! - rem;
  } else {
    acc.pReserved[k] = acc.pReserved[k]! - rem;
    acc.pFree[k] = acc.pFree[k]! + rem;
  }
  ord.remaining[slot] = 0;
  ord.status[slot] = OrderStatus.canceled;
  if (!s.matchingOnly) {
    ord.reason[slot] = OrderCanceled.reason(m, o);
    ord.lastUpdateSeq[slot] = s.seq;
  }
  retire(s, slot);
}

function onOrderDecreased(s: ExchangeState, m: Mem, o: number): void {
  const ord = s.orders;
  const acc = s.accounts;
  const slot = s.slotOf(OrderDecreased.order_id(m, o));
  assert(slot >= 0 && ord.onBook[slot] === 1, 'evolve: decreased order rests');
  const newQty = OrderDecreased.new_qty(m, o);
  const removed = ord.remaining[slot]! - newQty;
  s.book.reduce(ord, slot, removed);
  ord.remaining[slot] = newQty;
  if (!s.matchingOnly) ord.lastUpdateSeq[slot] = s.seq;
  const a = ord.account[slot]!;
  const k = 2 * ord.posSlot[slot]! + ord.outcome[slot]!;
  if (ord.side[slot] === Side.buy) {
    const release = OrderDecreased.release_cash(m, o);
    ord.reservedCash[slot] = ord.reservedCash[slot]! - release;
    acc.reserved[a] = acc.reserved[a]! - release;
    acc.available[a] = acc.available[a]! + release;
    acc.pBuying[k] = acc.pBuying[k]! - removed;
  } else {
    acc.pReserved[k] = acc.pReserved[k]! - removed;
    acc.pFree[k] = acc.pFree[k]! + removed;
  }
}

function onRoundOpened(s: ExchangeState, m: Mem, o: number): void {
  const mk = s.markets;
  const market = RoundOpened.market_id(m, o);
  const r = mk.openRound(market, RoundOpened.round_number(m, o));
  mk.rMarket[r] = market;
  mk.rStatus[r] = RoundStatus.trading;
  mk.rOutcome[r] = 0;
  mk.rDisputed[r] = 0;
  mk.rStrike[r] = RoundOpened.strike(m, o);
  mk.rSettlePrice[r] = 0;
  mk.rOpenHi[r] = s.tsHi;
  mk.rOpenLo[r] = s.tsLo;
  mk.rCloseHi[r] = RoundOpened.close_ts_hi(m, o);
  mk.rCloseLo[r] = RoundOpened.close_ts_lo(m, o);
  mk.rProposedHi[r] = 0;
  mk.rProposedLo[r] = 0;
  mk.rSettledHi[r] = 0;
  mk.rSettledLo[r] = 0;
  // A new round starts with a fresh book and fresh statistics.
  mk.volume[market] = 0;
  mk.openInterest[market] = 0;
  mk.lastTickYes[market] = 0;
  s.closes.set(market, mk.rCloseHi[r]!, mk.rCloseLo[r]!);
  s.seriesWaiting.remove(market);
}

function onRoundTransitioned(s: ExchangeState, m: Mem, o: number): void {
  const mk = s.markets;
  const market = RoundTransitioned.market_id(m, o);
  const r = mk.round[market]!;
  assert(r >= 0 && mk.rNumber[r] === RoundTransitioned.round_number(m, o), 'evolve: a transition is of the market\'s current round');
  const from = mk.rStatus[r]!;
  const to = RoundTransitioned.status(m, o);
  mk.rStatus[r] = to;
  s.closes.remove(market);
  s.awaitingProposal.remove(market);
  s.disputeDeadlines.remove(market);
  switch (to) {
    case RoundStatus.trading:
      s.closes.set(market, mk.rCloseHi[r]!, mk.rCloseLo[r]!);
      return;
    case RoundStatus.frozen:
      if (from === RoundStatus.proposed) {
        mk.rDisputed[r] = 1;
        mk.rOutcome[r] = 0;
        mk.rSettlePrice[r] = 0;
      }
      if (mk.rDisputed[r] === 0) s.awaitingProposal.set(market, mk.rCloseHi[r]!, mk.rCloseLo[r]!);
      return;
    case RoundStatus.proposed:
      mk.rOutcome[r] = RoundTransitioned.outcome(m, o);
      mk.rSettlePrice[r] = RoundTransitioned.settle_price(m, o);
      mk.rProposedHi[r] = s.tsHi;
      mk.rProposedLo[r] = s.tsLo;
      addHiLo(s.tsHi, s.tsLo, s.config.dispute_window_ms * 1_000_000, scratchHiLo);
      s.disputeDeadlines.set(market, scratchHiLo[0]!, scratchHiLo[1]!);
      return;
    case RoundStatus.settled:
    case RoundStatus.void: {
      mk.rOutcome[r] = RoundTransitioned.outcome(m, o);
      if (to === RoundStatus.void) mk.rSettlePrice[r] = 0;
      mk.rSettledHi[r] = s.tsHi;
      mk.rSettledLo[r] = s.tsLo;
      mk.openInterest[market] = 0;
      mk.endRound(r, s.config.round_cap);
      // An active series waits for its next round from now on.
      if (mk.seriesActive[market] === 1) s.seriesWaiting.set(market, s.tsHi, s.tsLo);
      return;
    }
  }
  throw new Error(`evolve: round status ${to}`);
}

