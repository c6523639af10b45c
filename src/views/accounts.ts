// accounts: the account queries of the read model: money, the dead-man
// timer, the deposit address, withdrawals (and the operator's pending list),
// keys (the per-request lookups of authentication and the listings) and the
// operator's account view. Read
// from the folded engine state's accounts. Runs on the thread that owns the
// Views.

import { createHash } from 'node:crypto';
import { NIL } from '../book/orders.js';
import { moneyBalanced, moneyTotals } from '../engine/verify.js';
import { RATE_TIER_NAMES, WITHDRAWAL_STATUS_NAMES, WithdrawalStatus } from '../layout/records.js';
import { hiLoToString } from '../lib/u64.js';
import type { AdminAccount, AdminWithdrawal, FeeSchedule, FeeSchedules, Ledger, PendingWithdrawals } from '../wire/control_plane.js';
import { scopeNames, type KeyItem } from '../wire/keys.js';
import type { Balance, DeadmanState, DepositAddress, Withdrawal } from '../wire/responses.js';
import { accountKnown, type ViewsData } from './model.js';
import { positionEntries } from './positions.js';

export interface KeyInfo {
  account_id: number;
  /** Scope bits (Scope enum). */
  scopes: number;
  revoked: boolean;
  /** 32-byte view into the state's key table: valid until the next apply(); never keep it. */
  secret: Uint8Array;
  /** The key's row: its index in the gateways' per-key tables (token buckets, WebSocket counts). */
  row: number;
}

export function balance(v: ViewsData, account: number): Balance {
  const acc = v.state.accounts;
  const known = accountKnown(v.state, account);
  return {
    available: known ? String(acc.available[account]!) : '0',
    reserved: known ? String(acc.reserved[account]!) : '0',
    as_of_seq: String(v.state.seq),
  };
}

/**
 * out[0] = cents available, out[1] = cents reserved, zeros for an unknown
 * account (the fan-out compares them per command; nothing allocated).
 */
export function cashNumbers(v: ViewsData, account: number, out: Float64Array): void {
  const known = accountKnown(v.state, account);
  out[0] = known ? v.state.accounts.available[account]! : 0;
  out[1] = known ? v.state.accounts.reserved[account]! : 0;
}

export function deadman(v: ViewsData, account: number): DeadmanState {
  const acc = v.state.accounts;
  const armed = accountKnown(v.state, account) && acc.deadArmed[account] === 1;
  return {
    armed,
    timeout_ms: armed ? acc.deadTimeoutMs[account]! : 0,
    fires_at_ts: armed ? hiLoToString(acc.deadHi[account]!, acc.deadLo[account]!) : '0',
    seq: String(v.state.seq),
  };
}

/** A deterministic per-account deposit address: "dx1" + the first 40 hex digits of sha256("dx-deposit:<account_id>"). */
export function depositAddress(v: ViewsData, account: number): DepositAddress {
  const h = createHash('sha256').update(`dx-deposit:${account}`).digest('hex');
  return { address: `dx1${h.slice(0, 40)}`, as_of_seq: String(v.state.seq) };
}

/** The withdrawal in row w (src/accounts/accounts.ts). */
function withdrawalView(v: ViewsData, w: number): Withdrawal {
  const acc = v.state.accounts;
  return {
    wid: String(acc.wWid[w]!),
    client_withdrawal_id: hiLoToString(acc.wCwidHi[w]!, acc.wCwidLo[w]!),
    status: WITHDRAWAL_STATUS_NAMES[acc.wStatus[w]!]!,
    amount: String(acc.wAmount[w]!),
    destination: acc.wDestination[w]!,
    seq: String(acc.wSeq[w]!),
    as_of_seq: String(v.state.seq),
  };
}

/** The account's withdrawal by client_withdrawal_id (hi, lo halves); null when none. */
export function withdrawal(v: ViewsData, account: number, cwidHi: number, cwidLo: number): Withdrawal | null {
  if (!accountKnown(v.state, account)) return null;
  const acc = v.state.accounts;
  const wid = acc.cwidIndex.get(account, cwidHi >>> 0, cwidLo >>> 0);
  return wid < 0 ? null : withdrawalView(v, acc.withdrawalRow(wid));
}

/** A retained withdrawal by wid (operator); null when unknown or evicted. */
export function withdrawalByWid(v: ViewsData, wid: number): AdminWithdrawal | null {
  const acc = v.state.accounts;
  const w = acc.withdrawalRow(wid);
  return w < 0 ? null : { account_id: acc.wAccount[w]!, ...withdrawalView(v, w) };
}

/**
 * Withdrawals waiting for confirm or fail, oldest (lowest wid) first. Pending
 * withdrawals are always retained; rows are reused, so they are sorted by
 * wid. O(withdrawal rows); operator read.
 */
export function pendingWithdrawals(v: ViewsData): PendingWithdrawals {
  const acc = v.state.accounts;
  const rows: number[] = [];
  for (let w = 0; w < acc.wTop; w++) {
    if (acc.wWid[w] !== 0 && acc.wStatus[w] === WithdrawalStatus.pending) rows.push(w);
  }
  rows.sort((a, b) => acc.wWid[a]! - acc.wWid[b]!);
  const out: AdminWithdrawal[] = rows.map((w) => ({ account_id: acc.wAccount[w]!, ...withdrawalView(v, w) }));
  return { withdrawals: out, as_of_seq: String(v.state.seq) };
}

/** Every fee schedule, ascending id. O(schedules); operator read. */
export function feeSchedules(v: ViewsData): FeeSchedules {
  const acc = v.state.accounts;
  const out: FeeSchedule[] = [];
  for (let id = 1; id <= acc.feeCount; id++) out.push({ fee_schedule_id: id, taker_bps: acc.feeTaker[id]!, maker_bps: acc.feeMaker[id]! });
  return { fee_schedules: out, as_of_seq: String(v.state.seq) };
}

/**
 * Where the money is: the totals of every account, the pending withdrawals
 * and the open pairs, beside deposits, confirmed withdrawals and fees, and
 * whether they add up (the identity src/engine/verify.ts checks).
 * O(accounts + withdrawal rows + markets); operator read.
 */
export function ledger(v: ViewsData): Ledger {
  const acc = v.state.accounts;
  const t = moneyTotals(v.state);
  let pending = 0;
  for (let w = 0; w < acc.wTop; w++) if (acc.wWid[w] !== 0 && acc.wStatus[w] === WithdrawalStatus.pending) pending += acc.wAmount[w]!;
  return {
    deposits: String(acc.deposits), withdrawn: String(acc.withdrawn), available: String(t.available), reserved: String(t.reserved),
    withdrawals_pending: String(pending), open_pairs: String(t.pairs), collateral: String(100 * t.pairs),
    fees_collected: String(acc.feesCollected), balanced: moneyBalanced(v.state, t), as_of_seq: String(v.state.seq),
  };
}

/** The account that requested withdrawal wid, 0 when evicted (the fan-out's confirm/fail events carry only the wid). */
export function withdrawalAccount(v: ViewsData, wid: number): number {
  const acc = v.state.accounts;
  const w = acc.withdrawalRow(wid);
  return w < 0 ? 0 : acc.wAccount[w]!;
}

// ---- keys ----------------------------------------------------------------------------

/** The key's row (src/accounts/accounts.ts), -1 when unknown or evicted. */
export function keyRow(v: ViewsData, keyId: number): number {
  return v.state.accounts.keyRow(keyId);
}

/** Owner of a key, 0 when there is no such key. Cheap: used on every request. */
export function keyAccount(v: ViewsData, keyId: number): number {
  const k = keyRow(v, keyId);
  return k < 0 ? 0 : v.state.accounts.keyAccount[k]!;
}

/** Scope bits of a key (Scope enum), 0 when there is no such key. */
export function keyScopes(v: ViewsData, keyId: number): number {
  const k = keyRow(v, keyId);
  return k < 0 ? 0 : v.state.accounts.keyScopes[k]!;
}

/** True when the key is revoked (deleting an account revokes its keys); false for an unknown key (check keyAccount first). */
export function keyRevoked(v: ViewsData, keyId: number): boolean {
  const k = keyRow(v, keyId);
  return k >= 0 && v.state.accounts.keyRevoked[k] === 1;
}

/** The key's 32 secret bytes as a view into the state (valid until the next apply(); never keep it), null when unknown. */
export function keySecret(v: ViewsData, keyId: number): Uint8Array | null {
  const k = keyRow(v, keyId);
  return k < 0 ? null : v.state.accounts.keySecret.subarray(k * 32, k * 32 + 32);
}

/** Rate tier of the key in row k (RateTier; 0 = default, also for k < 0). */
export function keyTier(v: ViewsData, k: number): number {
  return k >= 0 ? v.state.accounts.keyTier[k]! : 0;
}

/** Custom tier figure i of the key in row k (0 read rate, 1 read burst, 2 write rate, 3 write burst); 0 for named tiers. */
export function keyFigure(v: ViewsData, k: number, i: number): number {
  return k >= 0 ? v.state.accounts.keyFigures[k * 4 + i]! : 0;
}

export function keyInfo(v: ViewsData, keyId: number): KeyInfo | null {
  const k = keyRow(v, keyId);
  if (k < 0) return null;
  const acc = v.state.accounts;
  return {
    account_id: acc.keyAccount[k]!,
    scopes: acc.keyScopes[k]!,
    revoked: acc.keyRevoked[k] === 1,
    secret: acc.keySecret.subarray(k * 32, k * 32 + 32),
    row: k,
  };
}

/** The account's keys in ascending key_id (live ones and the retained revoked ones), never secrets (keys service GET /keys, operator). */
export function keyList(v: ViewsData, account: number): KeyItem[] {
  const acc = v.state.accounts;
  const out: KeyItem[] = [];
  if (!accountKnown(v.state, account)) return out;
  for (let k = acc.keyHead[account]!; k !== NIL; k = acc.keyNext[k]!) {
    out.push({
      key_id: acc.keyId[k]!,
      scopes: scopeNames(acc.keyScopes[k]!),
      revoked: acc.keyRevoked[k] === 1,
      tier: RATE_TIER_NAMES[acc.keyTier[k]!]!,
    });
  }
  return out;
}

/** Operator view of an account: balance, every position and its keys; null when the account never existed. */
export function adminAccount(v: ViewsData, account: number): AdminAccount | null {
  if (!accountKnown(v.state, account)) return null;
  const acc = v.state.accounts;
  return {
    account_id: account,
    deleted: acc.deleted[account] === 1,
    available: String(acc.available[account]!),
    reserved: String(acc.reserved[account]!),
    positions: positionEntries(v, account, undefined, -1).map((e) => e.item),
    keys: keyList(v, account),
    as_of_seq: String(v.state.seq),
  };
}
