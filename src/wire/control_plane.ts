// control_plane: the response bodies of the operator's control plane
// (src/admin, `/admin/*`) as TypeBox schemas. The one declaration of these
// shapes: the handlers' answers, the read models' operator reads and the
// client's types are checked against it at compile time, the tests check
// real answers against it. Not part of the OpenAPI document (which
// describes the public REST lane). No runtime state; any thread (the client
// imports the types only).

import { Type, type Static } from '@sinclair/typebox';
import { RATE_TIER_NAMES, ROUND_STATUS_NAMES, WITHDRAWAL_STATUS_NAMES } from '../layout/records.js';
import { KeyItem, ScopeName } from './keys.js';
import { asOfSeq, int, Market, oneOf, OraclePrice, Position, Round, u64, U32_MAX, Withdrawal } from './responses.js';

const seq = u64('sequence number of the command');
const marketId = int(1, U32_MAX, 'market id');
const category = int(0, 65535, 'series id');

export const AccountCreated = Type.Object({ account_id: int(1, U32_MAX, 'account id'), seq });

export const AdminKeyCreated = Type.Object({
  key_id: int(1, U32_MAX, 'key id'),
  secret: Type.String({ description: 'base64 of the 32 secret bytes' }),
  scopes: Type.Array(ScopeName),
  seq,
});

const Bucket = Type.Object({
  sustained_rate_per_s: Type.Integer({ minimum: 1, description: 'tokens per second' }),
  burst: Type.Integer({ minimum: 1, description: 'bucket size' }),
});

/** A key's tier after POST /admin/keys/{key_id}/tier: the tier and the figures it gives. */
export const KeyTierResult = Type.Object({
  key_id: int(1, U32_MAX, 'key id'),
  tier: oneOf(RATE_TIER_NAMES, 'the key\'s rate tier'),
  read: Bucket,
  write: Bucket,
  seq,
});

export const AdminAccount = Type.Object({
  account_id: int(1, U32_MAX, 'account id'),
  deleted: Type.Boolean(),
  available: u64('cents free to trade or withdraw'),
  reserved: u64('cents reserved by resting buys and pending withdrawals'),
  positions: Type.Array(Position, { description: 'every non-empty position, ascending market_id, yes before no' }),
  keys: Type.Array(KeyItem, { description: 'ascending key_id, never secrets' }),
  as_of_seq: asOfSeq,
});

export const FeeScheduleCreated = Type.Object({ fee_schedule_id: int(1, U32_MAX, 'fee schedule id'), seq });
export const MarketCreated = Type.Object({ market_id: marketId, seq });
export const RoundOpened = Type.Object({ round_number: u64('the new round'), seq });

/** A round command's answer: the status it moved the round to. */
export const RoundActionResult = Type.Object({
  status: oneOf(ROUND_STATUS_NAMES.slice(1), 'the status the command moved the round to'),
  round_number: u64('the round acted on'),
  seq,
});

/** Confirming or failing a withdrawal. */
export const WithdrawalSettled = Type.Object({ status: oneOf(WITHDRAWAL_STATUS_NAMES.slice(1), 'confirmed or failed'), seq });

export const SnapshotResult = Type.Object({
  seq: u64('the durable seq the snapshot holds'),
  path: Type.String({ description: 'the snapshot file' }),
});

export const Health = Type.Object({
  seq: u64('the engine\'s last seq'),
  durable_seq: u64('the last seq on disk'),
  lag: Type.Integer({ minimum: 0, description: 'seq - durable_seq' }),
  gateways: Type.Integer({ minimum: 1, description: 'gateway threads' }),
  engine_commands: Type.Integer({ minimum: 0, description: 'commands the engine executed since start' }),
  durability: oneOf(['fsync', 'none'], 'DX_DURABILITY'),
  journal: Type.Object({
    syncs: Type.Integer({ minimum: 0 }),
    records: Type.Integer({ minimum: 0 }),
    bytes: Type.Integer({ minimum: 0 }),
    segments: Type.Integer({ minimum: 0 }),
  }, { description: 'journal counters since start (one group old at most)' }),
});

/** One latency histogram of a lane's route and stage (benchmarks diff two reads of them). */
export const LatencyHistogram = Type.Object({
  lane: Type.String({ description: 'admin, accounts or rest (journal for the fsync histogram)' }),
  route: Type.String({ description: 'the route\'s name in its lane\'s table; (unmatched), (other)' }),
  stage: Type.String({ description: 'total, verify, publish, sequence, durable, apply, reply (fsync for the journal)' }),
  count: Type.Integer({ minimum: 0 }),
  sum_us: Type.Number({ minimum: 0 }),
  max_us: Type.Number({ minimum: 0 }),
  buckets: Type.Array(Type.Tuple([Type.Number({ minimum: 0 }), Type.Number({ minimum: 0 })]), {
    description: 'non-empty buckets as [highest µs of the bucket, count], ascending; a bucket is 1/16 of its lower bound wide',
  }),
});

/** GET /admin/latency: every non-empty latency histogram since the start, with its buckets (for benchmarks, which diff two reads). */
export const LatencyReport = Type.Object({
  histograms: Type.Array(LatencyHistogram),
  journal_fsync: Type.Union([LatencyHistogram, Type.Null()]),
});

/** GET /admin/state_hash: the canonical hash of the control plane's read model (convergence checks across replicated nodes). */
export const StateHash = Type.Object({
  as_of_seq: asOfSeq,
  state_hash: Type.String({ pattern: '^[0-9a-f]{64}$', description: 'sha256 (hex) of the canonical state at as_of_seq' }),
});

export const SeriesCreated = Type.Object({
  market_id: marketId,
  category,
  period_s: Type.Integer({ minimum: 1 }),
  round_number: u64('the first round; "0" while it waits for a fresh oracle quorum'),
  seq,
});

export const SeriesItem = Type.Object({
  category,
  market_id: marketId,
  title: Type.String(),
  period_s: Type.Integer({ minimum: 1 }),
  active: Type.Boolean({ description: 'false once stopped: the current round runs to its end and no next round opens' }),
  round: Type.Union([Round, Type.Null()], { description: 'the current round; null before the first or once evicted' }),
});

export const SeriesList = Type.Object({ series: Type.Array(SeriesItem, { description: 'ascending market_id' }), as_of_seq: asOfSeq });

export const SeriesStopped = Type.Object({ category, market_id: marketId, active: Type.Literal(false), seq });

// ---- the operator console's listings ---------------------------------------------

/** GET /admin/markets: a market as GET /v1/markets lists it, with its current round and round length. */
export const AdminMarket = Type.Object({
  ...Market.properties,
  round: Type.Union([Round, Type.Null()], { description: 'the current round in any status; null before the first or once evicted' }),
  series_period_s: Type.Integer({ minimum: 0, description: 'round length of a series market; 0 when the operator opens its rounds' }),
});

export const AdminMarkets = Type.Object({
  markets: Type.Array(AdminMarket, { description: 'every market, ascending market_id' }),
  as_of_seq: asOfSeq,
});

/** An oracle source that ever ticked: its last tick and whether it still counts toward the quorum. */
export const OracleSource = Type.Object({
  source_id: int(0, 63, 'oracle source'),
  price: u64('the source\'s last tick, x 1e8'),
  ts: u64('sequencer time of that tick, ns since the epoch'),
  fresh: Type.Boolean({ description: 'younger than staleness_ms: counts toward the quorum' }),
});

/** GET /admin/oracle: the reference price (as GET /v1/oracle/price) and every source. */
export const AdminOracle = Type.Object({
  ...OraclePrice.properties,
  staleness_ms: Type.Integer({ minimum: 1, description: 'a tick older than this no longer counts' }),
  quorum: Type.Integer({ minimum: 1, description: 'fresh sources needed to propose a round or open a series round' }),
  sources: Type.Array(OracleSource, { description: 'every source that ever ticked, ascending source_id' }),
  as_of_seq: asOfSeq,
});

/** A fee schedule as POST /admin/fee_schedules created it. */
export const FeeSchedule = Type.Object({
  fee_schedule_id: int(1, U32_MAX, 'fee schedule id (0, no fees, is not listed)'),
  taker_bps: int(0, 10000, 'basis points of the taker\'s fee: ceil(bps x qty x p x (100 - p) / 1,000,000) cents, p the fill\'s tick'),
  maker_bps: int(0, 10000, 'basis points of the maker\'s fee, the same formula'),
});

/** GET /admin/fee_schedules: every schedule, ascending fee_schedule_id. */
export const FeeSchedules = Type.Object({
  fee_schedules: Type.Array(FeeSchedule, { description: 'ascending fee_schedule_id' }),
  as_of_seq: asOfSeq,
});

/**
 * GET /admin/ledger: where the exchange's money is. Every cent deposited and
 * not paid out by a confirmed withdrawal is in an account (available or
 * reserved), backs an open YES+NO pair (100 cents each) or was collected as
 * a fee; `balanced` says that the sum holds on this read model.
 */
export const Ledger = Type.Object({
  deposits: u64('cents credited by every deposit ever'),
  withdrawn: u64('cents paid out by confirmed withdrawals ever'),
  available: u64('cents free in every account together'),
  reserved: u64('cents reserved in every account together: resting buys and pending withdrawals'),
  withdrawals_pending: u64('of reserved, the cents pending withdrawals hold until the operator confirms or fails them'),
  open_pairs: u64('YES+NO pairs outstanding over every market (each side held by someone)'),
  collateral: u64('cents backing the open pairs: 100 x open_pairs'),
  fees_collected: u64('cents paid in fees ever'),
  balanced: Type.Boolean({ description: 'available + reserved + collateral + fees_collected == deposits - withdrawn' }),
  as_of_seq: asOfSeq,
});

/** A withdrawal as its owner reads it, with the owner (operator reads). */
export const AdminWithdrawal = Type.Object({ account_id: int(1, U32_MAX, 'the account that requested it'), ...Withdrawal.properties });

/** GET /admin/withdrawals: those waiting for confirm or fail. */
export const PendingWithdrawals = Type.Object({
  withdrawals: Type.Array(AdminWithdrawal, { description: 'status pending, oldest (lowest wid) first' }),
  as_of_seq: asOfSeq,
});

export type AccountCreated = Static<typeof AccountCreated>;
export type KeyTierResult = Static<typeof KeyTierResult>;
export type AdminKeyCreated = Static<typeof AdminKeyCreated>;
export type AdminAccount = Static<typeof AdminAccount>;
export type FeeScheduleCreated = Static<typeof FeeScheduleCreated>;
export type MarketCreated = Static<typeof MarketCreated>;
export type RoundOpened = Static<typeof RoundOpened>;
export type RoundActionResult = Static<typeof RoundActionResult>;
export type WithdrawalSettled = Static<typeof WithdrawalSettled>;
export type SnapshotResult = Static<typeof SnapshotResult>;
export type Health = Static<typeof Health>;
export type LatencyHistogram = Static<typeof LatencyHistogram>;
export type LatencyReport = Static<typeof LatencyReport>;
export type StateHash = Static<typeof StateHash>;
export type SeriesCreated = Static<typeof SeriesCreated>;
export type SeriesItem = Static<typeof SeriesItem>;
export type SeriesList = Static<typeof SeriesList>;
export type SeriesStopped = Static<typeof SeriesStopped>;
export type AdminMarket = Static<typeof AdminMarket>;
export type AdminMarkets = Static<typeof AdminMarkets>;
export type OracleSource = Static<typeof OracleSource>;
export type AdminOracle = Static<typeof AdminOracle>;
export type AdminWithdrawal = Static<typeof AdminWithdrawal>;
export type PendingWithdrawals = Static<typeof PendingWithdrawals>;
export type FeeSchedule = Static<typeof FeeSchedule>;
export type FeeSchedules = Static<typeof FeeSchedules>;
export type Ledger = Static<typeof Ledger>;
