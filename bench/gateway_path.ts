// gateway_path: the JavaScript cost of the REST lane's request path, in one
// thread, without sockets: the gateway's own code (src/gateway http.ts,
// core.ts, routes.ts, the read model, the token buckets, the replay guard,
// the metrics observer) mounted on a stand-in for the uWS App, with the
// engine running in the same thread on the same rings (command ring ->
// EngineLoop -> event ring -> GatewayCore.drain). What it leaves out is
// exactly what a hello-world request costs too (the socket reads and writes
// and uWS's own HTTP parsing), plus the thread hand-offs; so this is the
// per-request work that makes a placement or a read dearer than a hello, and
// the figure to watch when that work is trimmed (docs/latency.md).
//
//   node dist/bench/gateway_path.js [--requests N] [--batch B] [--rounds R] [--profile file.cpuprofile]
//   npm run bench -- gateway_path
//
// Each round: B signed requests handed to the REST handler at once (as uWS
// hands a loop turn's worth), the turn ends (the gateway publishes its
// commands), the engine executes them, the gateway drains the completions and
// writes the replies; repeated until N requests of each kind. Kinds:
// placements (resting buys, YES at 30 and NO at 60: they never cross) and
// reads (orderbook depth 10, balance). Reports ns per request (median of R
// rounds of N) and the engine's share measured apart. Main thread of the
// bench runner; reports, never asserts.

import { randomBytes } from 'node:crypto';
import { Session } from 'node:inspector/promises';
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { setImmediate as nextTurn } from 'node:timers/promises';
import '../src/main/v8_tuning.js';
import { Engine } from '../src/engine/engine.js';
import { ReplayGuard, sign } from '../src/gateway/auth.js';
import { TokenBuckets } from '../src/gateway/buckets.js';
import { GatewayCore } from '../src/gateway/core.js';
import { mountRest, type LaneOptions } from '../src/gateway/http.js';
import { ROUTES } from '../src/gateway/routes.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../src/gateway/uws.js';
import {
  CreateAccount, CreateKey, CreateMarket, Deposit, Header, LAYOUT_FINGERPRINT, OpenRound, Scope, SetKeyTier,
} from '../src/layout/records.js';
import { parseCommandLine, parseOrUsage } from '../src/lib/command_line.js';
import type { Mem } from '../src/lib/mem.js';
import { EngineControl } from '../src/main/engine_control.js';
import { EngineLoop, RingEventOut } from '../src/main/engine_loop.js';
import { allocateMetrics, ThreadMetrics, SLICE_GATEWAY0 } from '../src/metrics/metrics.js';
import { metricsSpec } from '../src/metrics/spec.js';
import { BroadcastProducer, BroadcastRing } from '../src/ring/broadcast_ring.js';
import { CommandProducer } from '../src/ring/command_producer.js';
import { Doorbell } from '../src/ring/doorbell.js';
import { SpscRing } from '../src/ring/spsc_ring.js';
import { BusySpinWaitStrategy } from '../src/ring/wait.js';
import { Views } from '../src/views/views.js';
import { writeUnthrottledTier } from './lib/tiers.js';
import { environment, type BenchResult } from './lib/result.js';
import { median } from '../test/support/bench/stats.js';

const USAGE =
  'usage: node dist/bench/gateway_path.js [--requests N] [--batch B] [--rounds R] [--profile file.cpuprofile] [--kinds place,read]';
const OPTIONS = {
  requests: { type: 'string' },
  batch: { type: 'string' },
  rounds: { type: 'string' },
  profile: { type: 'string' },
  kinds: { type: 'string' },
} as const;

const KEYS = 256;
const PRODUCER_GATEWAY = 2;
const PRODUCER_SETUP = 1;
const TWO32 = 4294967296;

// ------------------------------------------------------------------ a uWS stand-in

type Handler = (res: HttpResponse, req: HttpRequest) => void;

/** The App surface mountRest uses: `any(pattern, handler)`. */
class FakeApp {
  handler: Handler | null = null;
  any(_pattern: string, h: Handler): this {
    this.handler = h;
    return this;
  }
}

/** A request as uWS hands it over: method, URL, query and headers, read synchronously. */
class FakeRequest {
  constructor(
    private readonly method: string,
    private readonly url: string,
    private readonly query: string,
    private readonly headers: readonly [string, string][],
  ) {}
  getCaseSensitiveMethod(): string {
    return this.method;
  }
  getMethod(): string {
    return this.method.toLowerCase();
  }
  getUrl(): string {
    return this.url;
  }
  getQuery(): string | undefined {
    return this.query.length > 0 ? this.query : undefined;
  }
  getHeader(name: string): string {
    for (const [k, v] of this.headers) if (k === name) return v;
    return '';
  }
  forEach(cb: (k: string, v: string) => void): void {
    for (const [k, v] of this.headers) cb(k, v);
  }
}

/** A response that counts what is written: status, bytes, and replies finished. */
class FakeResponse {
  static ended = 0;
  static bytes = 0;
  static statuses = new Map<string, number>();
  private data: ((chunk: ArrayBuffer, last: boolean) => void) | null = null;
  private status = '200 OK';
  onAborted(_cb: () => void): this {
    return this;
  }
  onData(cb: (chunk: ArrayBuffer, last: boolean) => void): this {
    this.data = cb;
    return this;
  }
  cork(cb: () => void): this {
    cb();
    return this;
  }
  writeStatus(s: string): this {
    this.status = s;
    return this;
  }
  writeHeader(_k: string, _v: string): this {
    return this;
  }
  end(body?: string | Uint8Array, _close?: boolean): this {
    FakeResponse.ended++;
    FakeResponse.bytes += body === undefined ? 0 : body.length;
    FakeResponse.statuses.set(this.status, (FakeResponse.statuses.get(this.status) ?? 0) + 1);
    return this;
  }
  endWithoutBody(): this {
    return this.end();
  }
  /** The stand-in's socket takes every reply whole, so nothing waits for onWritable. */
  getWriteOffset(): number {
    return 0;
  }
  tryEnd(body: string | Uint8Array, _total: number): [boolean, boolean] {
    this.end(body);
    return [true, true];
  }
  onWritable(_cb: (offset: number) => boolean): this {
    throw new Error('gateway_path: the stand-in never asks for onWritable');
  }
  /** uWS delivers the body after the handler returned: one chunk, the last. */
  deliver(body: ArrayBuffer): void {
    this.data!(body, true);
  }
}

// ------------------------------------------------------------------ the in-thread exchange

interface Rig {
  app: FakeApp;
  core: GatewayCore;
  loop: EngineLoop;
  keys: { keyId: number; secret: Uint8Array }[];
  market: number;
}

/** Writes one command of the setup producer; `fields` fills the payload. */
function command(p: CommandProducer, type: number, size: number, account: number, fields: (m: Mem, o: number) => void): void {
  const o = p.tryClaim(size);
  if (o < 0) throw new Error('gateway_path: setup ring full');
  const m = p.mem;
  m.u32.fill(0, (o >>> 2) + 1, (o + size) >>> 2);
  Header.set_type(m, o, type);
  Header.set_producer(m, o, PRODUCER_SETUP);
  Header.set_account(m, o, account);
  const ns = Date.now() * 1e6;
  Header.set_ts(m, o, Math.floor(ns / TWO32), 0);
  fields(m, o);
}

function buildRig(): Rig {
  const gatewayRing = SpscRing.allocate(1 << 20, LAYOUT_FINGERPRINT);
  const setupRing = SpscRing.allocate(1 << 20, LAYOUT_FINGERPRINT);
  const eventRing = BroadcastRing.allocate(1 << 24, 4, LAYOUT_FINGERPRINT);
  const bell = Doorbell.allocate();
  const control = new EngineControl(EngineControl.allocate());
  const rings = [new SpscRing(setupRing, LAYOUT_FINGERPRINT), new SpscRing(gatewayRing, LAYOUT_FINGERPRINT)];
  const views = new Views({}, {});
  // The gateway's cursor opens before the engine publishes anything.
  const core = new GatewayCore({
    producerId: PRODUCER_GATEWAY,
    producer: new CommandProducer(gatewayRing, Doorbell.attach(bell), LAYOUT_FINGERPRINT),
    eventRing,
    consumerIndex: 0,
    views,
    response_budget_ms: 60_000,
    shed_pending: 1 << 15,
    wait: 'spin',
  });
  core.waiter.stop();
  const out = new RingEventOut(new BroadcastProducer(eventRing, LAYOUT_FINGERPRINT));
  const loop = new EngineLoop(new Engine({}, out), rings, out, control, new BusySpinWaitStrategy());
  const setup = new CommandProducer(setupRing, Doorbell.attach(bell), LAYOUT_FINGERPRINT);
  const run = (): void => {
    setup.publish();
    while (loop.round() > 0) core.drain();
    core.drain();
  };
  command(setup, CreateMarket.TYPE, CreateMarket.SIZE, 0, (m, o) => CreateMarket.set_category(m, o, 1));
  const market = 1;
  const closeNs = (Date.now() + 3_600_000) * 1e6;
  command(setup, OpenRound.TYPE, OpenRound.SIZE, 0, (m, o) => {
    OpenRound.set_market_id(m, o, market);
    OpenRound.set_strike(m, o, 100);
    OpenRound.set_close_ts(m, o, Math.floor(closeNs / TWO32), closeNs % TWO32 >>> 0);
  });
  run();
  const keys: { keyId: number; secret: Uint8Array }[] = [];
  for (let i = 0; i < KEYS; i++) {
    const account = i + 1;
    const secret = new Uint8Array(randomBytes(32));
    command(setup, CreateAccount.TYPE, CreateAccount.SIZE, 0, () => {});
    command(setup, Deposit.TYPE, Deposit.SIZE, account, (m, o) => Deposit.set_amount(m, o, 1e12));
    command(setup, CreateKey.TYPE, CreateKey.SIZE, account, (m, o) => {
      CreateKey.set_scopes(m, o, Scope.read | Scope.trade);
      CreateKey.set_secret(m, o, secret);
    });
    command(setup, SetKeyTier.TYPE, SetKeyTier.SIZE, 0, (m, o) => writeUnthrottledTier(m, o, i + 1));
    run();
    keys.push({ keyId: i + 1, secret });
  }
  const spec = metricsSpec(1);
  const lane: LaneOptions = {
    core,
    buckets: new TokenBuckets(TokenBuckets.allocate(), views),
    replay: new ReplayGuard(ReplayGuard.allocate()),
    limits: { response_budget_ms: 60_000 },
    routes: ROUTES,
    observer: new ThreadMetrics(allocateMetrics(spec), spec, SLICE_GATEWAY0),
  };
  const app = new FakeApp();
  mountRest(app as unknown as TemplatedApp, lane);
  return { app, core, loop, keys, market };
}

// ------------------------------------------------------------------ requests

interface Prepared {
  req: FakeRequest;
  body: ArrayBuffer;
}

type Kind = 'place' | 'read';

/** Signed requests of one kind, stamped now (inside the ±5 s window while they are used). */
function prepare(rig: Rig, kind: Kind, n: number, from: number): Prepared[] {
  const out: Prepared[] = [];
  const ts = String(Date.now());
  for (let i = 0; i < n; i++) {
    const key = rig.keys[(from + i) % rig.keys.length]!;
    let method: string;
    let url: string;
    let query = '';
    let body = '';
    if (kind === 'place') {
      method = 'POST';
      url = '/v1/portfolio/orders';
      const yes = (from + i) % 2 === 0;
      body = JSON.stringify({
        market_id: rig.market, side: 'buy', outcome: yes ? 'yes' : 'no', tick: yes ? 30 : 60, qty: 1,
        client_order_id: String(from + i + 1),
      });
    } else if ((from + i) % 2 === 0) {
      method = 'GET';
      url = `/v1/markets/${rig.market}/orderbook`;
      query = 'depth=10';
    } else {
      method = 'GET';
      url = '/v1/portfolio/balance';
    }
    const target = query.length > 0 ? `${url}?${query}` : url;
    const sig = sign(key.secret, ts, method, target, body);
    const headers: [string, string][] = [
      ['host', '127.0.0.1:8080'],
      ['content-type', 'application/json'],
      ['dx-access-key', String(key.keyId)],
      ['dx-access-timestamp', ts],
      ['dx-access-signature', sig],
    ];
    if (body.length > 0) headers.push(['content-length', String(Buffer.byteLength(body))]);
    out.push({ req: new FakeRequest(method, url, query, headers), body: new Uint8Array(Buffer.from(body)).buffer });
  }
  return out;
}

/** Hands `batch` requests to the handler per loop turn, runs the engine, drains and flushes the replies. */
async function drive(rig: Rig, reqs: Prepared[], batch: number): Promise<{ ns: number; cpuNs: number; engineNs: number }> {
  const handler = rig.app.handler!;
  let engineNs = 0;
  const target = FakeResponse.ended + reqs.length;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (let i = 0; i < reqs.length; i += batch) {
    const end = Math.min(reqs.length, i + batch);
    for (let k = i; k < end; k++) {
      const p = reqs[k]!;
      const res = new FakeResponse();
      handler(res as unknown as HttpResponse, p.req as unknown as HttpRequest);
      res.deliver(p.body);
    }
    // End of the loop turn: the gateway publishes what it wrote (setImmediate).
    await nextTurn();
    const e0 = performance.now();
    while (rig.loop.round() > 0) { /* execute every command published */ }
    engineNs += (performance.now() - e0) * 1e6;
    // As the gateway's poll does: drain, then answer what is past its budget (none here).
    rig.core.drain();
    rig.core.expire();
    // Replies become ready in the drain and are written from the next turn.
    await nextTurn();
  }
  while (FakeResponse.ended < target) await nextTurn();
  const cpu = process.cpuUsage(c0);
  return {
    ns: ((performance.now() - t0) * 1e6) / reqs.length,
    cpuNs: ((cpu.user + cpu.system) * 1000) / reqs.length,
    engineNs: engineNs / reqs.length,
  };
}

/** R rounds of N requests of one kind: the medians into metrics; returns the next request number. */
async function timeKind(
  rig: Rig, kind: Kind, o: { n: number; batch: number; rounds: number; from: number }, metrics: Record<string, number>,
): Promise<number> {
  const per: number[] = [];
  const cpu: number[] = [];
  const eng: number[] = [];
  let from = o.from;
  for (let r = 0; r < o.rounds; r++) {
    const x = await drive(rig, prepare(rig, kind, o.n, from), o.batch);
    from += o.n;
    per.push(x.ns);
    cpu.push(x.cpuNs);
    eng.push(x.engineNs);
  }
  metrics[`${kind}_ns_per_req`] = Math.round(median(per));
  metrics[`${kind}_engine_ns_per_req`] = Math.round(median(eng));
  metrics[`${kind}_gateway_ns_per_req`] = Math.round(median(per) - median(eng));
  metrics[`${kind}_cpu_ns_per_req`] = Math.round(median(cpu));
  metrics[`${kind}_ns_per_req_min`] = Math.round(Math.min(...per));
  metrics[`${kind}_ns_per_req_max`] = Math.round(Math.max(...per));
  return from;
}

/** `kinds`: time (and profile) only these of place and read (the warm-up runs both). */
export async function run(
  opts: { quick?: boolean; requests?: number; batch?: number; rounds?: number; profile?: string; kinds?: readonly Kind[] } = {},
): Promise<BenchResult> {
  const quick = opts.quick === true;
  const n = opts.requests ?? (quick ? 2_000 : 20_000);
  const batch = opts.batch ?? 32;
  const rounds = opts.rounds ?? (quick ? 3 : 7);
  const t0 = performance.now();
  const rig = buildRig();
  const metrics: Record<string, number> = {};
  const notes: string[] = [];
  let from = 0;
  // Warm-up: every path compiled before anything is timed.
  for (const kind of ['place', 'read'] as const) {
    await drive(rig, prepare(rig, kind, n, from), batch);
    from += n;
  }
  let session: Session | null = null;
  if (opts.profile !== undefined) {
    session = new Session();
    session.connect();
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 50 });
    await session.post('Profiler.start');
  }
  for (const kind of opts.kinds ?? (['place', 'read'] as const)) from = await timeKind(rig, kind, { n, batch, rounds, from }, metrics);
  if (session !== null) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(opts.profile!, JSON.stringify(profile));
    session.disconnect();
    notes.push(`CPU profile of the timed rounds: ${opts.profile}`);
  }
  const statuses = Object.fromEntries(FakeResponse.statuses);
  for (const [s, c] of Object.entries(statuses)) metrics[`status_${s.split(' ')[0]}`] = c;
  const bad = Object.keys(statuses).filter((s) => !s.startsWith('200') && !s.startsWith('201'));
  if (bad.length > 0) notes.push(`FLAG answers other than 200/201: ${JSON.stringify(statuses)}`);
  metrics.requests_per_round = n;
  metrics.batch = batch;
  metrics.rounds = rounds;
  notes.push(
    `ns per request: wall time of a round / its requests (median of ${rounds} rounds); *_engine_* is the engine's share ` +
      '(EngineLoop.round in the same thread), *_gateway_* the rest: the request path of the REST lane without sockets; ' +
      '*_cpu_* the process CPU time (all its threads: V8 collects garbage on helper threads) per request, the figure that ' +
      'holds best on a shared machine.',
  );
  return {
    name: 'gateway_path',
    ...environment(),
    workload:
      `gateway_path, one thread, no sockets: ${n} signed requests per round in loop turns of ${batch}, through mountRest's handler ` +
      `(uWS stand-in), the engine in the same thread; placements (resting buys that never cross, ${KEYS} keys in rotation, each ` +
      'with a client_order_id) and reads (orderbook depth 10 and balance, half each)',
    metrics,
    peers: {},
    ratios: {},
    notes,
    wall_s: Math.round((performance.now() - t0) / 100) / 10,
  };
}

// Run as a tool: `node dist/bench/gateway_path.js [...]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const cl = parseOrUsage(() => parseCommandLine(process.argv.slice(2), OPTIONS, { positionals: false }), USAGE);
  if (cl === null) process.exit(2);
  const num = (k: 'requests' | 'batch' | 'rounds'): number | undefined => {
    const v = cl.values[k] as string | undefined;
    return v === undefined ? undefined : Number(v);
  };
  const kinds = (cl.values.kinds as string | undefined)?.split(',').filter((k): k is Kind => k === 'place' || k === 'read');
  const profile = cl.values.profile as string | undefined;
  const r = await run({ requests: num('requests'), batch: num('batch'), rounds: num('rounds'), profile, kinds });
  console.log(JSON.stringify(r.metrics));
  for (const note of r.notes ?? []) console.log(`- ${note}`);
}
