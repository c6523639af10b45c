// admin: accounts, keys, funding (deposits and withdrawals), fee schedules
// and markets: the operator's and the keys service's commands. Engine
// thread. Rules in src/engine/README.md ("Accounts, keys, funding, fees,
// markets").

import {
  AccountCreated, AccountDeleted, ConfirmWithdrawal, CreateFeeSchedule, CreateMarket, Deposit, Deposited, FeeScheduleCreated, KeyCreated,
  KeyRevoked, MarketCreated, Reject, RequestWithdrawal, T_CREATE_ACCOUNT, T_CREATE_FEE_SCHEDULE, T_CREATE_KEY, T_CREATE_MARKET,
  T_CREATE_SERIES, T_DELETE_ACCOUNT, T_DEPOSIT, T_REQUEST_WITHDRAWAL, T_REVOKE_KEY, WithdrawalConfirmed, WithdrawalFailed,
  WithdrawalRequested, WithdrawalStatus, KeyTierSet, SetKeyTier, T_SET_KEY_TIER,
} from '../layout/records.js';
import type { Accounts } from '../accounts/accounts.js';
import { NIL } from '../lib/intrusive_list.js';
import type { Mem } from '../lib/mem.js';
import type { Emitter } from './emitter.js';
import { setKeyTierReject, writeKeyTierSet } from './key_tiers.js';

export function createAccount(e: Emitter): void {
  const id = e.state.accounts.count + 1;
  const o = e.begin(AccountCreated.TYPE, AccountCreated.SIZE, id);
  AccountCreated.clear_reserved(e.m, o);
  AccountCreated.set_account_id(e.m, o, id);
  e.commit(o);
  e.ok(T_CREATE_ACCOUNT, id, id);
}

export function deleteAccount(e: Emitter, account: number): void {
  const acc = e.state.accounts;
  if (!acc.isLive(account)) return e.rejected(T_DELETE_ACCOUNT, Reject.unknown_account, account);
  // A deleted account can neither trade, cancel nor withdraw: deleting one that holds anything would strand it. Live buy
  // orders and withdrawals in flight hold reserved cash, live sell orders reserved shares, so an empty account has neither.
  if (acc.available[account] !== 0 || acc.reserved[account] !== 0 || holdsShares(acc, account)) {
    return e.rejected(T_DELETE_ACCOUNT, Reject.account_not_empty, account);
  }
  // The live keys' ids first: each KeyRevoked is applied as it is written, and
  // a revocation may evict older revoked keys from the list being walked.
  let n = 0;
  for (let k = acc.keyHead[account]!; k !== NIL; k = acc.keyNext[k]!) {
    if (acc.keyRevoked[k] === 0) n = e.pushId(n, acc.keyId[k]!);
  }
  for (let i = 0; i < n; i++) emitKeyRevoked(e, e.ids[i]!, account);
  const o = e.begin(AccountDeleted.TYPE, AccountDeleted.SIZE, account);
  AccountDeleted.clear_reserved(e.m, o);
  AccountDeleted.set_account_id(e.m, o, account);
  e.commit(o);
  e.ok(T_DELETE_ACCOUNT, account, account);
}

/** True when any position of the account holds shares (free or reserved for sale). A scan of every position: rare commands only. */
function holdsShares(acc: Accounts, account: number): boolean {
  for (let p = 0; p < acc.posCount; p++) {
    if (acc.pAccount[p] !== account) continue;
    if (acc.pFree[2 * p]! + acc.pFree[2 * p + 1]! + acc.pReserved[2 * p]! + acc.pReserved[2 * p + 1]! > 0) return true;
  }
  return false;
}

export function createKey(e: Emitter, cm: Mem, co: number, account: number): void {
  const acc = e.state.accounts;
  if (!acc.isLive(account)) return e.rejected(T_CREATE_KEY, Reject.unknown_account, account);
  const id = acc.keyCount + 1;
  const m = e.m;
  const o = e.begin(KeyCreated.TYPE, KeyCreated.SIZE, account);
  KeyCreated.clear_reserved(m, o);
  KeyCreated.copy_from_CreateKey(cm, co, m, o);
  KeyCreated.set_key_id(m, o, id);
  KeyCreated.set_account_id(m, o, account);
  e.commit(o);
  e.ok(T_CREATE_KEY, account, id);
}

export function revokeKey(e: Emitter, keyId: number, account: number): void {
  const acc = e.state.accounts;
  const k = acc.keyRow(keyId);
  if (k < 0 || (account !== 0 && acc.keyAccount[k] !== account)) return e.rejected(T_REVOKE_KEY, Reject.unknown_key, account);
  if (acc.keyRevoked[k] === 0) emitKeyRevoked(e, keyId, acc.keyAccount[k]!);
  e.ok(T_REVOKE_KEY, account, keyId);
}

/** Operator: a key's rate tier (rules in key_tiers.ts); the event carries the key's owner, the completion the key id. */
export function setKeyTier(e: Emitter, cm: Mem, co: number, account: number): void {
  const num = setKeyTierReject(e.state, cm, co);
  if (num !== 0) return e.rejected(T_SET_KEY_TIER, num, account);
  const key = SetKeyTier.key_id(cm, co);
  const acc = e.state.accounts;
  const o = e.begin(KeyTierSet.TYPE, KeyTierSet.SIZE, acc.keyAccount[acc.keyRow(key)]!);
  writeKeyTierSet(cm, co, e.m, o);
  e.commit(o);
  e.ok(T_SET_KEY_TIER, account, key);
}

function emitKeyRevoked(e: Emitter, keyId: number, owner: number): void {
  const o = e.begin(KeyRevoked.TYPE, KeyRevoked.SIZE, owner);
  KeyRevoked.clear_reserved(e.m, o);
  KeyRevoked.set_key_id(e.m, o, keyId);
  KeyRevoked.set_account_id(e.m, o, owner);
  e.commit(o);
}

/**
 * Operator: credit an account. A deposit whose ref the account remembers
 * (Accounts.rememberDeposit) credits nothing: with the same amount it is a
 * retry and succeeds with the first one's seq, with another amount it is
 * refused (duplicate_deposit_ref, result = the first one's seq). The result
 * of a credit is its own seq. An empty ref is never matched.
 */
export function deposit(e: Emitter, cm: Mem, co: number, account: number): void {
  const acc = e.state.accounts;
  if (!acc.isLive(account)) return e.rejected(T_DEPOSIT, Reject.unknown_account, account);
  const amount = Deposit.amount(cm, co);
  if (amount < 1) return e.rejected(T_DEPOSIT, Reject.invalid_command, account);
  const d = acc.depositRow(account, Deposit.ref(cm, co));
  if (d >= 0) {
    if (acc.dAmount[d] === amount) return e.ok(T_DEPOSIT, account, acc.dSeq[d]!);
    return e.rejected(T_DEPOSIT, Reject.duplicate_deposit_ref, account, acc.dSeq[d]!);
  }
  // Balances are doubles: every sum of them is exact while all money ever deposited stays within 2^53 - 1 cents.
  if (acc.deposits + amount > Number.MAX_SAFE_INTEGER) return e.rejected(T_DEPOSIT, Reject.deposit_limit_exceeded, account);
  const m = e.m;
  const o = e.begin(Deposited.TYPE, Deposited.SIZE, account);
  Deposited.clear_reserved(m, o);
  Deposited.copy_from_Deposit(cm, co, m, o);
  e.commit(o);
  e.ok(T_DEPOSIT, account, e.seq);
}

export function requestWithdrawal(e: Emitter, cm: Mem, co: number, account: number): void {
  const acc = e.state.accounts;
  if (!acc.isLive(account)) return e.rejected(T_REQUEST_WITHDRAWAL, Reject.unknown_account, account);
  const amount = RequestWithdrawal.amount(cm, co);
  const cwidHi = RequestWithdrawal.client_withdrawal_id_hi(cm, co);
  const existing = acc.cwidIndex.get(account, cwidHi, RequestWithdrawal.client_withdrawal_id_lo(cm, co));
  if (existing >= 0) {
    const w = acc.withdrawalRow(existing);
    if (acc.wAmount[w] === amount && acc.wDestination[w] === RequestWithdrawal.destination(cm, co)) {
      return e.ok(T_REQUEST_WITHDRAWAL, account, existing);
    }
    return e.rejected(T_REQUEST_WITHDRAWAL, Reject.duplicate_client_withdrawal_id, account, existing);
  }
  if (amount > acc.available[account]!) return e.rejected(T_REQUEST_WITHDRAWAL, Reject.withdrawal_exceeds_available, account);
  if (amount < 1) return e.rejected(T_REQUEST_WITHDRAWAL, Reject.invalid_command, account);
  const wid = acc.withdrawalCount + 1;
  const m = e.m;
  const o = e.begin(WithdrawalRequested.TYPE, WithdrawalRequested.SIZE, account);
  WithdrawalRequested.clear_reserved(m, o);
  WithdrawalRequested.copy_from_RequestWithdrawal(cm, co, m, o);
  WithdrawalRequested.set_wid(m, o, wid);
  e.commit(o);
  e.ok(T_REQUEST_WITHDRAWAL, account, wid);
}

/** ConfirmWithdrawal (`confirm`) or FailWithdrawal of a pending withdrawal. */
export function finishWithdrawal(e: Emitter, type: number, cm: Mem, co: number, confirm: boolean, account: number): void {
  const acc = e.state.accounts;
  const wid = ConfirmWithdrawal.wid(cm, co);
  const w = acc.withdrawalRow(wid);
  if (w < 0 || acc.wStatus[w] !== WithdrawalStatus.pending) return e.rejected(type, Reject.unknown_withdrawal, account);
  const m = e.m;
  const owner = acc.wAccount[w]!;
  if (confirm) {
    const o = e.begin(WithdrawalConfirmed.TYPE, WithdrawalConfirmed.SIZE, owner);
    WithdrawalConfirmed.clear_reserved(m, o);
    WithdrawalConfirmed.set_wid(m, o, wid);
    WithdrawalConfirmed.set_amount(m, o, acc.wAmount[w]!);
    e.commit(o);
  } else {
    const o = e.begin(WithdrawalFailed.TYPE, WithdrawalFailed.SIZE, owner);
    WithdrawalFailed.clear_reserved(m, o);
    WithdrawalFailed.set_wid(m, o, wid);
    WithdrawalFailed.set_amount(m, o, acc.wAmount[w]!);
    e.commit(o);
  }
  e.ok(type, account, wid);
}

export function createFeeSchedule(e: Emitter, cm: Mem, co: number, account: number): void {
  const taker = CreateFeeSchedule.taker_bps(cm, co);
  const maker = CreateFeeSchedule.maker_bps(cm, co);
  if (taker > 10000 || maker > 10000) return e.rejected(T_CREATE_FEE_SCHEDULE, Reject.invalid_command, account);
  const id = e.state.accounts.feeCount + 1;
  const m = e.m;
  const o = e.begin(FeeScheduleCreated.TYPE, FeeScheduleCreated.SIZE, 0);
  FeeScheduleCreated.clear_reserved(m, o);
  FeeScheduleCreated.set_fee_schedule_id(m, o, id);
  FeeScheduleCreated.set_taker_bps(m, o, taker);
  FeeScheduleCreated.set_maker_bps(m, o, maker);
  e.commit(o);
  e.ok(T_CREATE_FEE_SCHEDULE, account, id);
}

export function createMarket(e: Emitter, cm: Mem, co: number, account: number): void {
  const fs = CreateMarket.fee_schedule_id(cm, co);
  if (fs !== 0 && fs > e.state.accounts.feeCount) return e.rejected(T_CREATE_MARKET, Reject.unknown_fee_schedule, account);
  e.ok(T_CREATE_MARKET, account, emitMarketCreated(e, cm, co, T_CREATE_MARKET));
}

/** MarketCreated from a CreateMarket or CreateSeries command (`type`) at co; returns the new market id. */
export function emitMarketCreated(e: Emitter, cm: Mem, co: number, type: number): number {
  const id = e.state.markets.count + 1;
  const m = e.m;
  const o = e.begin(MarketCreated.TYPE, MarketCreated.SIZE, 0);
  MarketCreated.clear_reserved(m, o);
  if (type === T_CREATE_SERIES) MarketCreated.copy_from_CreateSeries(cm, co, m, o);
  else MarketCreated.copy_from_CreateMarket(cm, co, m, o);
  MarketCreated.set_market_id(m, o, id);
  e.commit(o);
  return id;
}
