// fastify_place: the comparison peer of gateway_place. The same REST logic
// as the exchange (the same route table, HMAC signature check and replay
// guard, token buckets, TypeBox schemas, placement encoding and the real
// Engine + Views) served by Fastify on node:http in ONE thread, with the
// engine called in-process: the conventional architecture, so the benchmark
// shows what uWS I/O threads + SharedArrayBuffer rings + one matching worker
// buy. Runs as its own process (like test/support/loadgen/hello_server.ts):
//
//   node dist/bench/peers/fastify_place.js --port 0 --keys 512 --seed-shares 5000
//
// At start it creates, directly through its engine (no HTTP), one market with
// a trading round and `keys` accounts, each with a deposit, one read+trade key
// and `seed-shares` YES and NO shares (minted at tick 50 between pairs of
// accounts, so sells are real placements), then listens on 127.0.0.1 and
// prints ONE line:
//
//   ready {"port":..,"market_id":..,"setup_ms":..,"keys":[{"key_id","account_id","secret"}]}
//
// SIGTERM / SIGINT close the server and exit 0.
//
// What differs from the exchange on purpose: no rings, no second thread, no
// journal (compare with the exchange at --durability none); the engine's
// events are applied to the read model right after each command (the
// exchange's gateway does the same from the event ring). What differs by
// necessity: Fastify answers its own errors for transport-level problems
// (body over the limit, malformed HTTP) in its own format; the benchmark's
// requests never trigger them.

import { createHmac } from 'node:crypto';
import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { ReplayGuard } from '../../src/gateway/auth.js';
import { TokenBuckets } from '../../src/gateway/buckets.js';
import {
  NO_FILLS, completionOf, stageTimes, type CommandWriter, type Completion, type CompletionWaiter, type GatewayCore, type StageTimes,
} from '../../src/gateway/core.js';
import { ApiError } from '../../src/gateway/envelope.js';
import {
  BODY_CAP_BYTES, admitRoute, asApiError, authenticate, invokeRoute, type InFlight, type LaneOptions, startMac,
} from '../../src/gateway/http.js';
import { ROUTES, parseRouteQuery, validateBody, type Route } from '../../src/gateway/routes.js';
import { parseJson } from '../../src/gateway/schemas.js';
import {
  CompletionStatus, CreateAccount, CreateKey, CreateMarket, Deposit, Filled, Header, OpenRound, Outcome,
  PATH_NAMES, PlaceOrder, Scope, Side, Stp, T_COMMAND_COMPLETED, T_CREATE_ACCOUNT, T_CREATE_KEY, T_CREATE_MARKET, T_DEPOSIT,
  SetKeyTier, T_FILLED, T_OPEN_ROUND, T_PLACE_ORDER, T_SET_KEY_TIER, Tif,
} from '../../src/layout/records.js';
import { parseCommandLine } from '../../src/lib/command_line.js';
import { memOf, type Mem } from '../../src/lib/mem.js';
import { bigIntHi, bigIntLo } from '../../src/lib/u64.js';
import { Views } from '../../src/views/views.js';
import type { PlacementFill } from '../../src/wire/responses.js';
import { writeUnthrottledTier } from '../lib/tiers.js';

/** The producer id written on this peer's commands (any id; there is one producer). */
const PRODUCER = 1;

/**
 * The subset of GatewayCore that the route handlers and the request checks
 * use, implemented synchronously over an in-process Engine: submit() writes
 * the command, executes it, applies every event to the read model and
 * resolves with the completion, exactly as GatewayCore builds it from the
 * event ring.
 */
/** What the route handlers and the lane's checks use of GatewayCore (so a new use is a compile error here, not a 500). */
type PeerCore = Pick<GatewayCore, 'views' | 'producerId' | 'pending' | 'tracing' | 'drain' | 'kick' | 'wouldShed' | 'assertWritable' |
  'submit' | 'hold'>;

class InProcessCore implements PeerCore {
  readonly views: Views;
  readonly producerId = PRODUCER;
  pending = 0;
  /** Stage times are not kept in-process. */
  tracing: StageTimes | null = null;
  private readonly out = new BufferEventOut(1 << 22);
  private readonly engine: Engine;
  private readonly cmd: Mem = memOf(new ArrayBuffer(4096));
  private correlation = 0;

  constructor() {
    this.engine = new Engine({}, this.out);
    this.views = new Views({}, {});
  }

  drain(): number {
    return 0;
  }

  kick(): void {}

  wouldShed(_n: number): boolean {
    return false;
  }

  /** A single process is always the one that sequences. */
  assertWritable(): void {}

  /** Executes one command now; the same header fields as GatewayCore.submit writes. */
  execute(type: number, size: number, account: number, write: (m: Mem, o: number) => void): Completion {
    const m = this.cmd;
    m.u32.fill(0, 0, size >>> 2);
    const tsNs = BigInt(Date.now()) * 1_000_000n;
    Header.set_len(m, 0, size);
    Header.set_type(m, 0, type);
    Header.set_producer(m, 0, PRODUCER);
    Header.set_correlation(m, 0, (this.correlation = (this.correlation + 1) & 0xffff));
    Header.set_account(m, 0, account);
    Header.set_seq(m, 0, 0);
    Header.set_ts(m, 0, bigIntHi(tsNs), bigIntLo(tsNs));
    write(m, 0);
    this.engine.execute(m, 0);
    const em = this.out.mem;
    const end = this.out.length;
    let fills: PlacementFill[] | null = null;
    let completion: Completion | null = null;
    for (let o = 0; o < end; o += Header.len(em, o)) {
      this.views.apply(em, o);
      const t = Header.type(em, o);
      if (t === T_FILLED && Filled.taker_account(em, o) === Header.account(em, o)) {
        (fills ??= []).push({ tick_yes: Filled.tick_yes(em, o), qty: Filled.qty(em, o), path: PATH_NAMES[Filled.path(em, o)]! });
      } else if (t === T_COMMAND_COMPLETED) {
        completion = completionOf(em, o, fills ?? NO_FILLS);
      }
    }
    this.out.reset();
    if (completion === null) throw new Error(`fastify_place: command type ${type} produced no completion`);
    return completion;
  }

  /** GatewayCore.submit's contract; resolves at once (there is nothing to wait for in-process). */
  submit(type: number, size: number, account: number, _sheddable: boolean, write: (m: Mem, o: number) => void): Promise<Completion | null> {
    return Promise.resolve(this.execute(type, size, account, write));
  }

  /** GatewayCore.hold's contract; the waiter gets its completion at once. */
  hold(type: number, size: number, account: number, _sheddable: boolean, cmd: CommandWriter, waiter: CompletionWaiter): void {
    waiter.complete(this.execute(type, size, account, (m, o) => cmd.write(m, o)));
  }
}

// ------------------------------------------------------------------ set-up

interface PeerKey {
  key_id: number;
  account_id: number;
  secret: string;
}

function ok(c: Completion, what: string): number {
  if (c.status !== CompletionStatus.ok) throw new Error(`fastify_place setup: ${what} rejected with num ${c.code_num}`);
  return c.result;
}

function setup(
  core: InProcessCore,
  n: number,
  seedShares: number,
  depositCents: number,
  secretSeed: string,
): { market: number; keys: PeerKey[] } {
  const market = ok(core.execute(T_CREATE_MARKET, CreateMarket.SIZE, 0, (m, o) => {
    CreateMarket.set_category(m, o, 0);
    CreateMarket.set_position_limit(m, o, 0);
    CreateMarket.set_fee_schedule_id(m, o, 0);
    CreateMarket.set_title(m, o, 'bench: fastify peer');
  }), 'create market');
  const closeNs = (BigInt(Date.now()) + 3_600_000n) * 1_000_000n;
  ok(core.execute(T_OPEN_ROUND, OpenRound.SIZE, 0, (m, o) => {
    OpenRound.set_market_id(m, o, market);
    OpenRound.set_strike(m, o, 100_000_000);
    OpenRound.set_close_ts(m, o, bigIntHi(closeNs), bigIntLo(closeNs));
  }), 'open round');
  const count = seedShares > 0 ? n + (n % 2) : n;
  const keys: PeerKey[] = [];
  for (let i = 0; i < count; i++) {
    const account = ok(core.execute(T_CREATE_ACCOUNT, CreateAccount.SIZE, 0, () => {}), 'create account');
    ok(core.execute(T_DEPOSIT, Deposit.SIZE, account, (m, o) => {
      Deposit.set_amount(m, o, depositCents);
      Deposit.set_ref(m, o, 'bench');
    }), 'deposit');
    const secret = createHmac('sha256', secretSeed).update(String(i)).digest();
    const keyId = ok(core.execute(T_CREATE_KEY, CreateKey.SIZE, account, (m, o) => {
      CreateKey.set_scopes(m, o, Scope.read | Scope.trade);
      CreateKey.set_secret(m, o, secret);
      CreateKey.set_label(m, o, 'bench');
    }), 'create key');
    // The exchange's keys never throttle in the benchmark (bench/lib/tiers.ts): nor do these.
    ok(core.execute(T_SET_KEY_TIER, SetKeyTier.SIZE, 0, (m, o) => writeUnthrottledTier(m, o, keyId)), 'key tier');
    keys.push({ key_id: keyId, account_id: account, secret: secret.toString('base64') });
  }
  if (seedShares > 0) {
    // Pairs (2i, 2i+1): one bids YES 50 and the other NO 50 (a mint), then the other way round.
    const buy = (account: number, outcome: number): Completion => core.execute(T_PLACE_ORDER, PlaceOrder.SIZE, account, (m, o) => {
      PlaceOrder.set_market_id(m, o, market);
      PlaceOrder.set_qty(m, o, seedShares);
      PlaceOrder.set_tick(m, o, 50);
      PlaceOrder.set_side(m, o, Side.buy);
      PlaceOrder.set_outcome(m, o, outcome);
      PlaceOrder.set_tif(m, o, Tif.gtc);
      PlaceOrder.set_stp(m, o, Stp.cancel_taker);
    });
    for (let i = 0; i + 1 < count; i += 2) {
      const a = keys[i]!.account_id;
      const b = keys[i + 1]!.account_id;
      for (const [x, y] of [[a, b], [b, a]] as const) {
        ok(buy(x, Outcome.yes), 'seed buy');
        const c = buy(y, Outcome.no);
        ok(c, 'seed buy');
        if (c.filled_qty !== seedShares) throw new Error(`fastify_place setup: seeding filled ${c.filled_qty} of ${seedShares}`);
      }
    }
  }
  return { market, keys };
}

// ------------------------------------------------------------------ the server

/** `/v1/markets/{market_id}` -> `/v1/markets/:market_id` (find-my-way syntax). */
function fastifyPath(path: string): string {
  return path.replace(/\{([a-z_]+)\}/g, ':$1');
}

function reply(r: FastifyReply, status: number, body: unknown): void {
  void r.code(status).header('content-type', 'application/json').send(body === undefined ? '' : JSON.stringify(body));
}

function replyError(r: FastifyReply, e: unknown): void {
  const api = asApiError(e);
  if (api !== null) {
    reply(r, api.status, api.body());
    return;
  }
  process.stderr.write(`fastify_place: handler fault: ${(e as Error)?.stack ?? String(e)}\n`);
  reply(r, 500, new ApiError('internal').body());
}

async function main(): Promise<void> {
  const { values } = parseCommandLine(process.argv.slice(2), {
    port: { type: 'string' }, keys: { type: 'string' }, 'seed-shares': { type: 'string' }, deposit: { type: 'string' },
  }, { positionals: false });
  const port = Number(values.port ?? '0');
  const n = Number(values.keys ?? '512');
  const seedShares = Number(values['seed-shares'] ?? '5000');
  const deposit = Number(values.deposit ?? '100000000');
  const t0 = performance.now();
  const core = new InProcessCore();
  const { market, keys } = setup(core, n, seedShares, deposit, `dx-fastify-peer-${process.pid}-${Date.now()}`);
  const setupMs = Math.round(performance.now() - t0);

  const opts: LaneOptions = {
    core: core as PeerCore as GatewayCore,
    buckets: new TokenBuckets(TokenBuckets.allocate(), core.views),
    replay: new ReplayGuard(ReplayGuard.allocate()),
    limits: { response_budget_ms: 1000 },
    routes: ROUTES,
  };

  const app = Fastify({ logger: false, bodyLimit: BODY_CAP_BYTES, keepAliveTimeout: 60_000 });
  // Raw bodies: the signature covers the bytes as sent, and the exchange's own
  // JSON rules (depth cap, no prototype keys) and TypeBox schemas validate them.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  const handle = (route: Route, params: readonly string[]) => (req: FastifyRequest, res: FastifyReply): void => {
    const url = req.raw.url ?? req.url;
    const q = url.indexOf('?');
    const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    const f: InFlight = {
      aborted: false,
      done: false,
      method: req.method,
      path: q >= 0 ? url.slice(0, q) : url,
      target: url,
      query: q >= 0 ? url.slice(q + 1) : '',
      keyHeader: String(req.headers['dx-access-key'] ?? ''),
      tsHeader: String(req.headers['dx-access-timestamp'] ?? ''),
      sigHeader: String(req.headers['dx-access-signature'] ?? ''),
      authorization: '',
      contentLengths: 1,
      held: null,
      size: raw.length,
      tooLarge: false,
      routeName: route.name,
      mac: null,
      ...stageTimes(),
    };
    try {
      // The same checks in the same order as the exchange's gateway (src/gateway/http.ts onRequest).
      startMac(core.views, f);
      if (f.mac !== null && raw.length > 0) f.mac.update(raw);
      const now = Date.now();
      const caller = authenticate(opts, f, route.name, now);
      admitRoute(opts, route, caller, now);
      let body: unknown;
      if (route.body === 'empty' || route.body === 'none') {
        if (raw.length > 0) throw new ApiError('unexpected_body', `${f.method} ${route.path} takes no body`);
      } else {
        if (raw.length === 0) throw new ApiError('invalid_json', 'a JSON body is required');
        body = validateBody(route, parseJson(raw));
      }
      const query = parseRouteQuery(route, f.query);
      const p = req.params as Record<string, string>;
      const out = invokeRoute(opts, route, caller, params.map((name) => p[name]!), query, body, now);
      if (out instanceof Promise) out.then((r) => reply(res, r.status, r.body), (e) => replyError(res, e));
      else reply(res, out.status, out.body);
    } catch (e) {
      replyError(res, e);
    }
  };
  for (const route of ROUTES) {
    const params = route.segments.filter((s) => s.startsWith('{')).map((s) => s.slice(1, -1));
    app.route({ method: route.method, url: fastifyPath(route.path), handler: handle(route, params) });
  }
  app.setNotFoundHandler((req, res) => reply(res, 404, new ApiError('not_found', `no route ${req.method} ${req.url}`).body()));

  await app.listen({ host: '127.0.0.1', port });
  const a = app.server.address();
  const actual = typeof a === 'object' && a !== null ? a.port : port;
  process.stdout.write(`ready ${JSON.stringify({ port: actual, market_id: market, setup_ms: setupMs, keys })}\n`);
  let closing = false;
  const stop = (): void => {
    if (closing) return;
    closing = true;
    app.server.closeAllConnections();
    app.close().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((e: unknown) => {
  process.stderr.write(`fastify_place: ${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
