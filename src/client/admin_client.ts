// AdminClient: the operator control plane (docs/ARCHITECTURE.md section 8, default
// 127.0.0.1:8082), authenticated with `Authorization: Bearer <token>` rather
// than request signatures. One method per endpoint; JSON in and out, u64
// values as decimal strings, errors as DxApiError. Runs in the caller's thread.

import { HttpTransport } from './transport.js';
import type {
  AccountCreated,
  AdminAccount,
  AdminKeyCreated,
  AdminMarkets,
  AdminOracle,
  KeyTierRequest,
  KeyTierResult,
  CreateMarketRequest,
  DepositRequest,
  FeeScheduleCreated,
  FeeScheduleRequest,
  FeeSchedules,
  Health,
  KeyRevoked,
  Ledger,
  MarketCreated,
  OpenRoundRequest,
  OracleTickRequest,
  Outcome,
  PendingWithdrawals,
  RoundActionResult,
  RoundOpened,
  Scope,
  SequencedAck,
  SeriesCreated,
  SeriesList,
  SeriesRequest,
  SeriesStopped,
  SnapshotResult,
  StateHash,
  U64,
  WithdrawalSettled,
} from './types.js';

export interface AdminClientOptions {
  /** e.g. `http://127.0.0.1:8082`. */
  baseUrl: string;
  /** From `DX_ADMIN_TOKEN` or `<data dir>/admin-token`. */
  token: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export type RoundAction = 'freeze' | 'unfreeze' | 'settle' | 'void' | 'dispute';

export class AdminClient {
  private readonly http: HttpTransport;

  constructor(opts: AdminClientOptions) {
    const auth = `Bearer ${opts.token}`;
    this.http = new HttpTransport(opts, () => ({ authorization: auth }));
  }

  /** Any control-plane call. */
  request<T = unknown>(method: string, pathWithQuery: string, body?: unknown): Promise<T> {
    return this.http.call<T>(method, pathWithQuery, body);
  }

  // ------------------------------------------------------------ accounts and keys

  createAccount(): Promise<AccountCreated> {
    return this.http.call('POST', '/admin/accounts', {});
  }

  /** Deletes the account and revokes all its keys. */
  deleteAccount(accountId: number): Promise<SequencedAck> {
    return this.http.call('DELETE', `/admin/accounts/${id(accountId)}`);
  }

  /** The only way to get a key with the `withdraw` scope. */
  createKey(accountId: number, scopes: Scope[]): Promise<AdminKeyCreated> {
    return this.http.call('POST', `/admin/accounts/${id(accountId)}/keys`, { scopes });
  }

  /** Sets a key's rate tier (a sequenced command): a named tier, or `custom` with read and write figures. */
  setKeyTier(keyId: number, req: KeyTierRequest): Promise<KeyTierResult> {
    return this.http.call('POST', `/admin/keys/${id(keyId)}/tier`, req);
  }

  /** Credits `amount` cents; `ref` is the operator's reference for the credit. */
  deposit(accountId: number, req: DepositRequest): Promise<SequencedAck> {
    return this.http.call('POST', `/admin/accounts/${id(accountId)}/deposits`, req);
  }

  /** Balance, positions and keys (no secrets). */
  account(accountId: number): Promise<AdminAccount> {
    return this.http.call('GET', `/admin/accounts/${id(accountId)}`);
  }

  /** Revokes any key (immediate, irreversible, idempotent); its WebSocket sessions close with 4003. */
  revokeKey(keyId: number): Promise<KeyRevoked> {
    return this.http.call('DELETE', `/admin/keys/${id(keyId)}`);
  }

  // ------------------------------------------------------------ fees, markets, rounds, series

  createFeeSchedule(req: FeeScheduleRequest): Promise<FeeScheduleCreated> {
    return this.http.call('POST', '/admin/fee_schedules', req);
  }

  /** Every fee schedule with its taker and maker rates. */
  feeSchedules(): Promise<FeeSchedules> {
    return this.http.call('GET', '/admin/fee_schedules');
  }

  createMarket(req: CreateMarketRequest): Promise<MarketCreated> {
    return this.http.call('POST', '/admin/markets', req);
  }

  openRound(marketId: number, req: OpenRoundRequest): Promise<RoundOpened> {
    return this.http.call('POST', `/admin/markets/${id(marketId)}/rounds`, req);
  }

  /** freeze, unfreeze, settle (a proposed round pays out at once), void, or dispute (a proposed round back to frozen). */
  roundAction(marketId: number, action: RoundAction): Promise<RoundActionResult> {
    return this.http.call('POST', `/admin/rounds/${id(marketId)}/${action}`, {});
  }

  freezeRound(marketId: number): Promise<RoundActionResult> {
    return this.roundAction(marketId, 'freeze');
  }

  unfreezeRound(marketId: number): Promise<RoundActionResult> {
    return this.roundAction(marketId, 'unfreeze');
  }

  settleRound(marketId: number): Promise<RoundActionResult> {
    return this.roundAction(marketId, 'settle');
  }

  voidRound(marketId: number): Promise<RoundActionResult> {
    return this.roundAction(marketId, 'void');
  }

  /** Without `outcome`: proposed from the oracle reference price at close. */
  proposeRound(marketId: number, outcome?: Outcome): Promise<RoundActionResult> {
    return this.http.call('POST', `/admin/rounds/${id(marketId)}/propose`, outcome === undefined ? {} : { outcome });
  }

  oracleTick(req: OracleTickRequest): Promise<SequencedAck> {
    return this.http.call('POST', '/admin/oracle/ticks', req);
  }

  /** A market whose rounds run by themselves (strike = oracle price at open, close = open + period_s). */
  createSeries(req: SeriesRequest): Promise<SeriesCreated> {
    return this.http.call('POST', '/admin/series', req);
  }

  listSeries(): Promise<SeriesList> {
    return this.http.call('GET', '/admin/series');
  }

  /** Every market with its current round. */
  markets(): Promise<AdminMarkets> {
    return this.http.call('GET', '/admin/markets');
  }

  /** The reference price and every oracle source with its last tick and freshness. */
  oracle(): Promise<AdminOracle> {
    return this.http.call('GET', '/admin/oracle');
  }

  /** The current round runs to its end; no next round opens. */
  stopSeries(category: number): Promise<SeriesStopped> {
    if (!Number.isInteger(category) || category < 0 || category > 65535) throw new RangeError(`not a category: ${category}`);
    return this.http.call('POST', `/admin/series/${category}/stop`, {});
  }

  // ------------------------------------------------------------ withdrawals

  /** Where the money is (accounts, pending withdrawals, open pairs, fees) against deposits and withdrawals, and whether it adds up. */
  ledger(): Promise<Ledger> {
    return this.http.call('GET', '/admin/ledger');
  }

  /** Withdrawals waiting for confirm or fail, oldest first. */
  pendingWithdrawals(): Promise<PendingWithdrawals> {
    return this.http.call('GET', '/admin/withdrawals');
  }

  confirmWithdrawal(wid: U64): Promise<WithdrawalSettled> {
    return this.http.call('POST', `/admin/withdrawals/${u64(wid)}/confirm`, {});
  }

  /** Marks the withdrawal failed and returns the money to `available`. */
  failWithdrawal(wid: U64): Promise<WithdrawalSettled> {
    return this.http.call('POST', `/admin/withdrawals/${u64(wid)}/fail`, {});
  }

  // ------------------------------------------------------------ operations

  snapshot(): Promise<SnapshotResult> {
    return this.http.call('POST', '/admin/snapshot', {});
  }

  health(): Promise<Health> {
    return this.http.call('GET', '/admin/health');
  }

  /** The canonical state hash of the control plane's read model (convergence checks across replicated nodes). */
  stateHash(): Promise<StateHash> {
    return this.http.call('GET', '/admin/state_hash');
  }

  /** Prometheus text exposition. */
  metrics(): Promise<string> {
    return this.http.callText('GET', '/metrics');
  }
}

function id(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > 0xffffffff) throw new RangeError(`not a u32 id: ${n}`);
  return String(n);
}

function u64(s: U64): string {
  if (typeof s !== 'string' || !/^[0-9]{1,20}$/.test(s)) throw new RangeError(`not a u64 decimal string: ${String(s)}`);
  return s;
}
