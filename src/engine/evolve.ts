// evolve(state, event): applies one event to ExchangeState. It runs in every
// gateway thread's read model, in recovery (snapshot + replay, no re-matching)
// and on the engine thread for the events off the order path; the order
// events' changes live in apply.ts, which the engine thread's fused path
// calls directly with the slots it holds (the differential test proves both
// ways build the same state). It imports nothing engine-only, reads no clock
// and makes no decisions: every choice is in the event; evolve applies it
// with plain arithmetic.

import {
  AccountCreated, AccountDeleted, DeadmanArmed, Deposited, FeeScheduleCreated, Header, KeyCreated, KeyRevoked,
  MarketCreated, OracleSourceExpired, OracleTicked, OrderCanceled, OrderDecreased, OrderRested,
  PositionSettled, RoundOpened, RoundStatus, RoundTransitioned, T_ACCOUNT_CREATED, T_ACCOUNT_DELETED,
  T_COMMAND_COMPLETED, T_DEADMAN_ARMED, T_DEADMAN_DISARMED, T_DEPOSITED, T_FEE_SCHEDULE_CREATED, T_FILLED,
  SeriesCreated, SeriesStopped, T_KEY_CREATED, T_KEY_REVOKED, T_MARKET_CREATED, T_ORACLE_SOURCE_EXPIRED, T_ORACLE_TICKED,
  T_SERIES_CREATED, T_SERIES_STOPPED, T_ORDER_ACCEPTED, T_ORDER_CANCELED, T_KEY_TIER_SET,
  T_ORDER_DECREASED, T_ORDER_REJECTED, T_ORDER_RESTED, T_POSITION_SETTLED, T_ROUND_OPENED, T_ROUND_TRANSITIONED,
  T_WITHDRAWAL_CONFIRMED, T_WITHDRAWAL_FAILED, T_WITHDRAWAL_REQUESTED, WithdrawalConfirmed,
  WithdrawalRequested, WithdrawalStatus,
} from '../layout/records.js';
import { assert, fail } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { addHiLo } from '../lib/u64.js';
import { applyKeyTierSet } from './key_tiers.js';
import { AcceptedOrder, Fill, applyAccepted, applyCanceled, applyDecreased, applyFilled, applyRejected, applyRested } from './apply.js';
import type { ExchangeState } from './state.js';

const scratchHiLo = new Uint32Array(2);
/** Scratch for the OrderAccepted and the Filled being applied. */
const accepted = new AcceptedOrder();
const fill = new Fill();

export function evolve(s: ExchangeState, m: Mem, o: number): void {
  const type = Header.type(m, o);
  const seq = Header.seq(m, o);
  // The events of one command share its seq; the next command's is one more.
  if (seq !== s.seq && seq !== s.seq + 1) fail('evolve: seqs increase by one per command');
  s.seq = seq;
  s.tsHi = Header.ts_hi(m, o);
  s.tsLo = Header.ts_lo(m, o);
  switch (type) {
    case T_COMMAND_COMPLETED: return;
    // Order events: find the slots, then the changes the fused path makes too.
    case T_FILLED: {
      const f = fill.readEvent(m, o);
      return applyFilled(s, f, s.slotOf(f.makerId), s.slotOf(f.takerId));
    }
    case T_ORDER_ACCEPTED: applyAccepted(s, accepted.readEvent(m, o)); return;
    case T_ORDER_RESTED: return applyRested(s, m, o, s.slotOf(OrderRested.order_id(m, o)));
    case T_ORDER_CANCELED: return applyCanceled(s, m, o, s.slotOf(OrderCanceled.order_id(m, o)));
    case T_ORDER_DECREASED: return applyDecreased(s, m, o, s.slotOf(OrderDecreased.order_id(m, o)));
    case T_ORDER_REJECTED: return applyRejected(s, m, o);
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
    case T_KEY_TIER_SET: return applyKeyTierSet(s, m, o);
    case T_DEPOSITED: return applyDeposited(s, m, o);
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
      acc.reserveCash(a, amount);
      return;
    }
    case T_WITHDRAWAL_CONFIRMED: {
      const acc = s.accounts;
      const w = acc.withdrawalRow(WithdrawalConfirmed.wid(m, o));
      assert(w >= 0 && acc.wStatus[w] === WithdrawalStatus.pending, 'evolve: a confirmed withdrawal was pending');
      const a = acc.wAccount[w]!;
      const amount = acc.wAmount[w]!;
      acc.wStatus[w] = WithdrawalStatus.confirmed;
      acc.releaseCash(a, amount, amount);
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
      acc.releaseCash(a, amount, 0);
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
      const yes = acc.pFree[2 * p]! - PositionSettled.yes_qty(m, o);
      const no = acc.pFree[2 * p + 1]! - PositionSettled.no_qty(m, o);
      assert(yes >= 0 && no >= 0, 'evolve: a settlement removes at most the shares held');
      acc.pFree[2 * p] = yes;
      acc.pFree[2 * p + 1] = no;
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

/** A deposit: credited, and its ref (if any) remembered for the account's retries. */
function applyDeposited(s: ExchangeState, m: Mem, o: number): void {
  const amount = Deposited.amount(m, o);
  const a = Header.account(m, o);
  s.accounts.available[a] = s.accounts.available[a]! + amount;
  s.accounts.deposits += amount;
  const ref = Deposited.ref(m, o);
  if (ref !== '') s.accounts.rememberDeposit(a, ref, amount, s.seq, s.config.deposit_ref_cap);
}
