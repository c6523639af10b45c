// Control plane (docs/ARCHITECTURE.md section 8): the operator's listener, bound to 127.0.0.1 by
// default, authenticated with `Authorization: Bearer <token>`. JSON in and
// out, closed schemas, the same error envelope, u64 as strings. Every action
// is a sequenced command on the control plane's own ring (producer 1), so it
// is journaled like any trade. Control-plane (main) thread.

import { randomBytes, timingSafeEqual } from 'node:crypto';
import {
  CompletionStatus, ConfirmWithdrawal, CreateFeeSchedule, CreateKey, CreateMarket, Deposit, FreezeRound, OpenRound, ProposeRound,
  ProposeSource, SubmitOracleTick, T_CONFIRM_WITHDRAWAL, T_CREATE_ACCOUNT, T_CREATE_FEE_SCHEDULE, T_CREATE_KEY,
  T_CREATE_MARKET, T_DELETE_ACCOUNT, T_DEPOSIT, T_DISPUTE_ROUND, T_FAIL_WITHDRAWAL, T_FREEZE_ROUND, T_OPEN_ROUND, T_PROPOSE_ROUND,
  T_SETTLE_ROUND, T_SUBMIT_ORACLE_TICK, T_UNFREEZE_ROUND, T_VOID_ROUND, CreateAccount, DeleteAccount,
  CreateSeries, StopSeries, T_CREATE_SERIES, T_STOP_SERIES, RateTier, SetKeyTier, T_SET_KEY_TIER, RevokeKey, T_REVOKE_KEY,
} from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { monoUs } from '../lib/mono_clock.js';
import type { Completion, GatewayCore } from '../gateway/core.js';
import { ApiError, codeByNum } from '../gateway/envelope.js';
import {
  deferReply, endHead, fail, finish, observe, receive, refuseDuplicateLength, send, statusLine, type InFlight, type Observer,
} from '../gateway/http.js';
import { pathId, u64Halves } from '../gateway/query.js';
import { matchRoute, type Reply } from '../gateway/routes.js';
import { compile, parseJson, safeField, storedText, validate, type Checker } from '../gateway/schemas.js';
import {
  AdminDepositBody,
  AdminFeeScheduleBody,
  AdminKeyBody,
  AdminKeyTierBody,
  AdminMarketBody,
  AdminOracleTickBody,
  AdminProposeBody,
  AdminRoundBody,
  AdminSeriesBody,
  EmptyBody,
} from '../wire/requests.js';
import type * as Q from '../wire/requests.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../gateway/uws.js';
import { openApiDocument } from '../openapi/openapi.js';
import { stateHash } from '../journal/state_codec.js';
import type { TSchema } from '@sinclair/typebox';
import type * as C from '../wire/control_plane.js';
import { scopeBits, scopeNames, type KeyRevoked } from '../wire/keys.js';
import { RATE_TIERS } from '../gateway/buckets.js';
import { KEY_CREATION_TIMEOUT, revokeLateKey } from '../gateway/key_creation.js';
import type { SequencedAck } from '../wire/responses.js';

export interface AdminContext {
  core: GatewayCore;
  /** Health facts the main thread knows (engine seq, gateways). */
  health: () => C.Health;
  /** Writes a snapshot of the state at the current durable seq (off-thread); resolves with where. */
  snapshot: () => Promise<{ seq: number; path: string }>;
  /** Structured log of operator actions and faults (never secrets). */
  log: (fields: Record<string, unknown>) => void;
  /** GET /metrics: the Prometheus text exposition, merged across threads (src/metrics). */
  metrics: () => string;
  /** GET /admin/latency: the latency histograms with their buckets (src/metrics). */
  latency: () => C.LatencyReport;
  /** True once the exchange's stop has begun: every request is refused 503 shed and its connection closed, as on REST. */
  stopping?: () => boolean;
}

interface AdminRequest {
  params: string[];
  body: unknown;
}

interface AdminRoute {
  name: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  segments: string[];
  scope: number;
  body: 'none' | Checker<TSchema>;
  handler: (r: AdminRequest, ctx: AdminContext) => Reply | Promise<Reply>;
}

/** A rejection's result, in its details under this name (`result` when not listed). */
const RESULT_DETAIL: Partial<Record<string, string>> = { duplicate_deposit_ref: 'seq' };

async function sequenced(
  core: GatewayCore,
  type: number,
  size: number,
  account: number,
  write: (m: Mem, o: number) => void,
  late?: (c: Completion) => void,
): Promise<Completion> {
  const r = await core.submit(type, size, account, false, write, late);
  if (r === null) throw new ApiError('sequencing_timeout', late === undefined ? undefined : KEY_CREATION_TIMEOUT);
  if (r.status === CompletionStatus.rejected) {
    const code = codeByNum(r.code_num).code;
    throw new ApiError(code, undefined, r.result !== 0 ? { [RESULT_DETAIL[code] ?? 'result']: String(r.result) } : null);
  }
  return r;
}

function route(
  name: string,
  method: AdminRoute['method'],
  path: string,
  body: AdminRoute['body'],
  handler: AdminRoute['handler'],
): AdminRoute {
  return { name, method, path, segments: path.split('/').filter((s) => s.length > 0), scope: 0, body, handler };
}

/**
 * A round command answers the status it moved the round to. (Not the read
 * model's current round: by the time the answer is written the clock may
 * already have moved on, e.g. a series opening its next round after a void.)
 */
function roundAction(name: string, type: number, to: C.RoundActionResult['status']): AdminRoute {
  return route(`round_${name}`, 'POST', `/admin/rounds/{market_id}/${name}`, compile(EmptyBody), async (r, ctx) => {
    const market = pathId('market_id', r.params[0]!);
    const c = await sequenced(ctx.core, type, FreezeRound.SIZE, 0, (m, o) => FreezeRound.set_market_id(m, o, market));
    ctx.log({ event: 'operator', action: `round_${name}`, market_id: market, round_number: c.result });
    return { status: 200, body: { status: to, round_number: String(c.result), seq: String(c.seq) } satisfies C.RoundActionResult };
  });
}

export const ADMIN_ROUTES: AdminRoute[] = [
  route('create_account', 'POST', '/admin/accounts', compile(EmptyBody), async (_r, ctx) => {
    const c = await sequenced(ctx.core, T_CREATE_ACCOUNT, CreateAccount.SIZE, 0, () => {});
    ctx.log({ event: 'operator', action: 'create_account', account_id: c.result });
    return { status: 201, body: { account_id: c.result, seq: String(c.seq) } satisfies C.AccountCreated };
  }),
  route('delete_account', 'DELETE', '/admin/accounts/{account_id}', 'none', async (r, ctx) => {
    const a = pathId('account_id', r.params[0]!);
    const c = await sequenced(ctx.core, T_DELETE_ACCOUNT, DeleteAccount.SIZE, a, () => {});
    ctx.log({ event: 'operator', action: 'delete_account', account_id: a });
    return { status: 200, body: { seq: String(c.seq) } satisfies SequencedAck };
  }),
  route('get_account', 'GET', '/admin/accounts/{account_id}', 'none', (r, ctx) => {
    const a = ctx.core.views.adminAccount(pathId('account_id', r.params[0]!));
    if (!a) throw new ApiError('unknown_account');
    return { status: 200, body: a };
  }),
  route('create_key', 'POST', '/admin/accounts/{account_id}/keys', compile(AdminKeyBody), async (r, ctx) => {
    const a = pathId('account_id', r.params[0]!);
    const bits = scopeBits((r.body as Q.AdminKeyRequest).scopes);
    const secret = randomBytes(32);
    const c = await sequenced(ctx.core, T_CREATE_KEY, CreateKey.SIZE, a, (m, o) => {
      CreateKey.set_scopes(m, o, bits);
      CreateKey.set_secret(m, o, secret);
      CreateKey.set_label(m, o, 'operator');
    }, (late) => revokeLateKey(ctx.core, late, 0, ctx.log));
    ctx.log({ event: 'operator', action: 'create_key', account_id: a, key_id: c.result, scopes: scopeNames(bits) });
    const body = {
      key_id: c.result, secret: secret.toString('base64'), scopes: scopeNames(bits), seq: String(c.seq),
    } satisfies C.AdminKeyCreated;
    return { status: 201, body };
  }),
  // A key's rate tier: a sequenced command (journaled, replayed); every gateway applies it when it folds the event.
  route('set_key_tier', 'POST', '/admin/keys/{key_id}/tier', compile(AdminKeyTierBody), async (r, ctx) => {
    const key = pathId('key_id', r.params[0]!);
    const b = r.body as Q.KeyTierRequest;
    const custom = b.tier === 'custom';
    for (const f of ['read', 'write'] as const) {
      if (custom && b[f] === undefined)
        throw new ApiError('invalid_field', `tier custom needs ${f}`, { field: f, reason: 'required with tier custom' });
      if (!custom && b[f] !== undefined)
        throw new ApiError('invalid_field', `${f} is given by tier ${b.tier}`, { field: f, reason: 'only with tier custom' });
    }
    const c = await sequenced(ctx.core, T_SET_KEY_TIER, SetKeyTier.SIZE, 0, (m, o) => {
      SetKeyTier.set_key_id(m, o, key);
      SetKeyTier.set_tier(m, o, RateTier[b.tier]);
      if (!custom) return;
      SetKeyTier.set_read_rate_per_s(m, o, b.read!.sustained_rate_per_s);
      SetKeyTier.set_read_burst(m, o, b.read!.burst);
      SetKeyTier.set_write_rate_per_s(m, o, b.write!.sustained_rate_per_s);
      SetKeyTier.set_write_burst(m, o, b.write!.burst);
    });
    // What this command set (the read model may already hold a later change of the key, applied in the same drain).
    const t = b.tier === 'custom' ? { tier: b.tier, read: b.read!, write: b.write! } : { tier: b.tier, ...RATE_TIERS[b.tier] };
    ctx.log({ event: 'operator', action: 'set_key_tier', key_id: key, tier: t.tier, read: t.read, write: t.write });
    return { status: 200, body: { key_id: key, tier: t.tier, read: t.read, write: t.write, seq: String(c.seq) } satisfies C.KeyTierResult };
  }),
  route('deposit', 'POST', '/admin/accounts/{account_id}/deposits', compile(AdminDepositBody), async (r, ctx) => {
    const a = pathId('account_id', r.params[0]!);
    const b = r.body as Q.DepositRequest;
    const amount = safeField(b.amount, 'amount', 1);
    const ref = storedText(b.ref ?? '', 'ref', 64);
    const c = await sequenced(ctx.core, T_DEPOSIT, Deposit.SIZE, a, (m, o) => {
      Deposit.set_amount(m, o, amount);
      Deposit.set_ref(m, o, ref);
    });
    // A retry of a deposit the account remembers by its ref credits nothing and answers the first one's seq.
    const retry = c.result !== c.seq;
    const seq = String(c.result);
    ctx.log({ event: 'operator', action: 'deposit', account_id: a, amount: String(amount), ref: b.ref ?? '', seq, retry });
    return { status: 201, body: { seq } satisfies SequencedAck };
  }),
  route('create_fee_schedule', 'POST', '/admin/fee_schedules', compile(AdminFeeScheduleBody), async (r, ctx) => {
    const b = r.body as Q.FeeScheduleRequest;
    const c = await sequenced(ctx.core, T_CREATE_FEE_SCHEDULE, CreateFeeSchedule.SIZE, 0, (m, o) => {
      CreateFeeSchedule.set_taker_bps(m, o, b.taker_bps);
      CreateFeeSchedule.set_maker_bps(m, o, b.maker_bps);
    });
    ctx.log({ event: 'operator', action: 'create_fee_schedule', fee_schedule_id: c.result });
    return { status: 201, body: { fee_schedule_id: c.result, seq: String(c.seq) } satisfies C.FeeScheduleCreated };
  }),
  route('create_market', 'POST', '/admin/markets', compile(AdminMarketBody), async (r, ctx) => {
    const b = r.body as Q.CreateMarketRequest;
    storedText(b.title, 'title', 128);
    const c = await sequenced(ctx.core, T_CREATE_MARKET, CreateMarket.SIZE, 0, (m, o) => {
      CreateMarket.set_category(m, o, b.category);
      CreateMarket.set_position_limit(m, o, b.position_limit);
      CreateMarket.set_fee_schedule_id(m, o, b.fee_schedule_id);
      CreateMarket.set_title(m, o, b.title);
    });
    ctx.log({ event: 'operator', action: 'create_market', market_id: c.result });
    return { status: 201, body: { market_id: c.result, seq: String(c.seq) } satisfies C.MarketCreated };
  }),
  route('open_round', 'POST', '/admin/markets/{market_id}/rounds', compile(AdminRoundBody), async (r, ctx) => {
    const market = pathId('market_id', r.params[0]!);
    const b = r.body as Q.OpenRoundRequest;
    const strike = safeField(b.strike, 'strike');
    const [hi, lo] = u64Halves('close_ts', b.close_ts);
    const c = await sequenced(ctx.core, T_OPEN_ROUND, OpenRound.SIZE, 0, (m, o) => {
      OpenRound.set_market_id(m, o, market);
      OpenRound.set_strike(m, o, strike);
      OpenRound.set_close_ts(m, o, hi, lo);
    });
    ctx.log({ event: 'operator', action: 'open_round', market_id: market, round_number: c.result });
    return { status: 201, body: { round_number: String(c.result), seq: String(c.seq) } satisfies C.RoundOpened };
  }),
  roundAction('freeze', T_FREEZE_ROUND, 'frozen'),
  roundAction('unfreeze', T_UNFREEZE_ROUND, 'trading'),
  roundAction('settle', T_SETTLE_ROUND, 'settled'),
  roundAction('void', T_VOID_ROUND, 'void'),
  roundAction('dispute', T_DISPUTE_ROUND, 'frozen'),
  route('round_propose', 'POST', '/admin/rounds/{market_id}/propose', compile(AdminProposeBody), async (r, ctx) => {
    const market = pathId('market_id', r.params[0]!);
    const outcome = (r.body as Q.ProposeRequest).outcome;
    const source = outcome === undefined ? ProposeSource.oracle : ProposeSource[outcome];
    const c = await sequenced(ctx.core, T_PROPOSE_ROUND, ProposeRound.SIZE, 0, (m, o) => {
      ProposeRound.set_market_id(m, o, market);
      ProposeRound.set_source(m, o, source);
    });
    ctx.log({ event: 'operator', action: 'round_propose', market_id: market, round_number: c.result, source: outcome ?? 'oracle' });
    return { status: 200, body: { status: 'proposed', round_number: String(c.result), seq: String(c.seq) } satisfies C.RoundActionResult };
  }),
  route('oracle_tick', 'POST', '/admin/oracle/ticks', compile(AdminOracleTickBody), async (r, ctx) => {
    const b = r.body as Q.OracleTickRequest;
    const price = safeField(b.price, 'price', 1);
    const c = await sequenced(ctx.core, T_SUBMIT_ORACLE_TICK, SubmitOracleTick.SIZE, 0, (m, o) => {
      SubmitOracleTick.set_source_id(m, o, b.source_id);
      SubmitOracleTick.set_price(m, o, price);
    });
    return { status: 201, body: { seq: String(c.seq) } satisfies SequencedAck };
  }),
  // Listings for the operator console, from the control plane's read model.
  route('operator_markets', 'GET', '/admin/markets', 'none', (_r, ctx) => ({ status: 200, body: ctx.core.views.adminMarkets() })),
  route('oracle_sources', 'GET', '/admin/oracle', 'none', (_r, ctx) => ({ status: 200, body: ctx.core.views.adminOracle() })),
  route('pending_withdrawals', 'GET', '/admin/withdrawals', 'none', (_r, ctx) => ({
    status: 200, body: ctx.core.views.pendingWithdrawals(),
  })),
  route('fee_schedules', 'GET', '/admin/fee_schedules', 'none', (_r, ctx) => ({ status: 200, body: ctx.core.views.feeSchedules() })),
  route('ledger', 'GET', '/admin/ledger', 'none', (_r, ctx) => ({ status: 200, body: ctx.core.views.ledger() })),
  route('revoke_key', 'DELETE', '/admin/keys/{key_id}', 'none', async (r, ctx) => {
    const keyId = pathId('key_id', r.params[0]!);
    // Account 0: the operator may revoke any key (idempotent, like the keys service's DELETE /keys/{key_id}).
    const c = await sequenced(ctx.core, T_REVOKE_KEY, RevokeKey.SIZE, 0, (m, o) => RevokeKey.set_key_id(m, o, keyId));
    ctx.log({ event: 'operator', action: 'revoke_key', key_id: keyId });
    return { status: 200, body: { key_id: keyId, revoked: true, seq: String(c.seq) } satisfies KeyRevoked };
  }),
  route('withdrawal_confirm', 'POST', '/admin/withdrawals/{wid}/confirm', compile(EmptyBody), async (r, ctx) => {
    const wid = pathId('wid', r.params[0]!);
    const c = await sequenced(ctx.core, T_CONFIRM_WITHDRAWAL, ConfirmWithdrawal.SIZE, 0, (m, o) => ConfirmWithdrawal.set_wid(m, o, wid));
    ctx.log({ event: 'operator', action: 'withdrawal_confirm', wid });
    return { status: 200, body: { status: 'confirmed', seq: String(c.seq) } satisfies C.WithdrawalSettled };
  }),
  route('withdrawal_fail', 'POST', '/admin/withdrawals/{wid}/fail', compile(EmptyBody), async (r, ctx) => {
    const wid = pathId('wid', r.params[0]!);
    const c = await sequenced(ctx.core, T_FAIL_WITHDRAWAL, ConfirmWithdrawal.SIZE, 0, (m, o) => ConfirmWithdrawal.set_wid(m, o, wid));
    ctx.log({ event: 'operator', action: 'withdrawal_fail', wid });
    return { status: 200, body: { status: 'failed', seq: String(c.seq) } satisfies C.WithdrawalSettled };
  }),
  route('snapshot', 'POST', '/admin/snapshot', compile(EmptyBody), async (_r, ctx) => {
    const done = await ctx.snapshot();
    ctx.log({ event: 'operator', action: 'snapshot', seq: done.seq, path: done.path });
    return { status: 200, body: { seq: String(done.seq), path: done.path } satisfies C.SnapshotResult };
  }),
  route('health', 'GET', '/admin/health', 'none', (_r, ctx) => ({ status: 200, body: ctx.health() })),
  route('latency', 'GET', '/admin/latency', 'none', (_r, ctx) => ({ status: 200, body: ctx.latency() })),
  // The canonical state hash of the control plane's read model at its as_of_seq (convergence checks across nodes; O(state)).
  route('state_hash', 'GET', '/admin/state_hash', 'none', (_r, ctx) => {
    ctx.core.drain();
    const body = { as_of_seq: String(ctx.core.views.asOfSeq), state_hash: stateHash(ctx.core.views.state) } satisfies C.StateHash;
    return { status: 200, body };
  }),
  // The OpenAPI 3.1 description of the public REST and MCP surface (src/openapi), built once.
  route('openapi', 'GET', '/admin/openapi.json', 'none', () => ({ status: 200, body: openApiDocument() })),
  route('create_series', 'POST', '/admin/series', compile(AdminSeriesBody), async (r, ctx) => {
    const b = r.body as Q.SeriesRequest;
    storedText(b.title, 'title', 128);
    const c = await sequenced(ctx.core, T_CREATE_SERIES, CreateSeries.SIZE, 0, (m, o) => {
      CreateSeries.set_category(m, o, b.category);
      CreateSeries.set_position_limit(m, o, b.position_limit);
      CreateSeries.set_fee_schedule_id(m, o, b.fee_schedule_id);
      CreateSeries.set_period_s(m, o, b.period_s);
      CreateSeries.set_title(m, o, b.title);
    });
    // The first round opened in the same command when the oracle quorum was fresh; else it waits.
    const round = ctx.core.views.round(c.result);
    ctx.log({ event: 'operator', action: 'create_series', category: b.category, market_id: c.result, period_s: b.period_s });
    return {
      status: 201,
      body: {
        market_id: c.result, category: b.category, period_s: b.period_s, round_number: round ? round.round_number : '0', seq: String(c.seq),
      } satisfies C.SeriesCreated,
    };
  }),
  route('list_series', 'GET', '/admin/series', 'none', (_r, ctx) => ({ status: 200, body: ctx.core.views.series() })),
  route('stop_series', 'POST', '/admin/series/{category}/stop', compile(EmptyBody), async (r, ctx) => {
    const raw = r.params[0]!;
    if (!/^[0-9]{1,5}$/.test(raw) || Number(raw) > 65535)
      throw new ApiError('invalid_field', 'category must be 0..65535', { field: 'category', reason: 'must be 0..65535' });
    const category = Number(raw);
    const c = await sequenced(ctx.core, T_STOP_SERIES, StopSeries.SIZE, 0, (m, o) => StopSeries.set_category(m, o, category));
    ctx.log({ event: 'operator', action: 'stop_series', category, market_id: c.result });
    return { status: 200, body: { category, market_id: c.result, active: false, seq: String(c.seq) } satisfies C.SeriesStopped };
  }),
  // Answered as text by mountAdmin (the handler is never called).
  route('metrics', 'GET', '/metrics', 'none', () => {
    throw new Error('admin: GET /metrics is answered by mountAdmin');
  }),
];

/** The Prometheus text exposition (format 0.0.4); every write inside cork, as the JSON replies. */
function sendText(res: HttpResponse, f: InFlight, status: number, text: string): void {
  if (f.aborted || f.done) return;
  f.done = true;
  res.cork(() => {
    res.writeStatus(statusLine(status));
    res.writeHeader('content-type', 'text/plain; version=0.0.4; charset=utf-8');
    if (f.method === 'HEAD') endHead(res, Buffer.byteLength(text));
    else res.end(text);
  });
}

/** Constant-time bearer token check. The scheme is case-insensitive, and one or more spaces follow it (RFC 9110, 11.1 and 11.4). */
function tokenOk(header: string, token: Buffer): boolean {
  const m = /^bearer +/i.exec(header);
  if (m === null) return false;
  const given = Buffer.from(header.slice(m[0].length));
  return given.length === token.length && timingSafeEqual(given, token);
}

export function mountAdmin(app: TemplatedApp, ctx: AdminContext, token: string, observer?: Observer): void {
  const tok = Buffer.from(token);
  const opts = { observer, log: ctx.log };
  app.any('/*', (res: HttpResponse, req: HttpRequest) => receive(res, req, (f: InFlight, raw: Buffer) => {
    try {
      // After the stop's start no command would be sequenced: refuse at once instead of holding to no answer.
      if (ctx.stopping?.()) {
        f.closeAfter = true;
        throw new ApiError('shed', 'the exchange is shutting down');
      }
      ctx.core.drain();
      if (!tokenOk(f.authorization, tok)) throw new ApiError('unauthorized', 'missing or invalid bearer token');
      const match = matchRoute(ADMIN_ROUTES as never, f.method, f.path) as
        { route: AdminRoute; params: string[] } | { allowed: string[] } | null;
      if (match === null) throw new ApiError('not_found', `no route ${f.method} ${f.path}`);
      if ('allowed' in match) {
        send(res, f, 405, new ApiError('method_not_allowed').body(), { allow: match.allowed.join(', ') });
        observe(observer, f, 405, 'method_not_allowed');
        return;
      }
      f.routeName = match.route.name;
      refuseDuplicateLength(f);
      if (f.tooLarge) throw new ApiError('body_too_large');
      let body: unknown;
      if (match.route.body === 'none') {
        if (raw.length > 0) throw new ApiError('unexpected_body', `${f.method} ${match.route.path} takes no body`);
      } else {
        body = validate(match.route.body, raw.length === 0 ? {} : parseJson(raw));
      }
      if (f.query.length > 0)
        throw new ApiError('unknown_field', 'the control plane takes no query parameters', { field: f.query.split('=')[0] });
      if (match.route.name === 'metrics') {
        sendText(res, f, 200, ctx.metrics());
        observe(observer, f, 200, null);
        return;
      }
      f.tVerified = monoUs();
      // The commands the handler submits carry this request's stage times.
      ctx.core.tracing = f;
      let out: Reply | Promise<Reply>;
      try {
        out = match.route.handler({ params: match.params, body }, ctx);
      } finally {
        ctx.core.tracing = null;
      }
      if (out instanceof Promise) {
        ctx.core.kick();
        out.then((r) => deferReply(() => finish(res, f, r, observer)), (e) => deferReply(() => fail(res, f, e, opts)));
      } else {
        finish(res, f, out, observer);
      }
    } catch (e) {
      fail(res, f, e, opts);
    }
  }));
}
