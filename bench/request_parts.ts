// request_parts: the per-request pieces of the REST and WebSocket lanes, each
// timed alone with tinybench in this thread: the signature (the gateway's
// HMAC from key midstates), the query parser, the placement body's schema
// check, the hand-written reply JSON, the replay guard's check of a
// mutation, and the WebSocket JSON lane's frame
// text, command envelope, route input and order_result frame, and the binary
// lane's frame checks. Where the lane replaced a general tool, that tool is
// timed beside it as a peer on the same inputs (JSON.stringify against the
// hand-written bodies, Buffer's toString against the frame text, the merged
// input schema against the body-only check), so each choice has its ratio
// measured in one run. The whole-request figures are gateway_path's (REST
// in one thread) and ws_orders' (the lanes under load); these are the parts
// a change to the request path moves, small enough to be measured on a
// noisy machine (docs/latency.md, "Gateway CPU per request").
//
//   node dist/bench/request_parts.js [--quick]
//   npm run bench -- request_parts
//
// Each task call handles BATCH distinct inputs built beforehand (timer cost
// spread over them); the figure is ns per item: tinybench's median latency
// of a call divided by BATCH. Main thread of the bench runner; reports,
// never asserts.

import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Bench } from 'tinybench';
import { KeyMacs, ReplayGuard, checkMac, sign } from '../src/gateway/auth.js';
import { parseQuery } from '../src/gateway/query.js';
import { routeInput, routeInputChecker } from '../src/gateway/route_input.js';
import { OrderbookBody, PlacementBody, ROUTES, validateBody, type Route } from '../src/gateway/routes.js';
import { Header, PlaceOrder, T_PLACE_ORDER } from '../src/layout/records.js';
import { memOf } from '../src/lib/mem.js';
import { orderResult } from '../src/ws/orders.js';
import { frameProblem, recordFault } from '../src/ws/binary.js';
import { DEFAULT_WS_CONFIG, frameText, parseCommand } from '../src/ws/protocol.js';
import type { Orderbook } from '../src/wire/responses.js';
import { environment, type BenchResult } from './lib/result.js';

const BATCH = 256;
const RECORDS_PER_FRAME = 16;
const PLACE_TARGET = '/v1/portfolio/orders';
const BOOK_TARGET = '/v1/markets/1/orderbook?depth=10';

function routeNamed(name: string): Route {
  const r = ROUTES.find((x) => x.name === name);
  if (r === undefined) throw new Error(`request_parts: no route ${name}`);
  return r;
}

/** A placement body as a client sends it; i varies the values. */
function placeParams(i: number): Record<string, unknown> {
  return {
    market_id: 1 + (i % 7), side: i % 3 === 0 ? 'sell' : 'buy', outcome: i % 2 === 0 ? 'yes' : 'no', tick: 40 + (i % 20),
    qty: 1 + (i % 10), client_order_id: String(1_000_000_007 + i),
  };
}

function placementBody(i: number): PlacementBody {
  const fills = i % 2 === 0 ? [] : [{ tick_yes: 50, qty: 1 + (i % 5), path: 'direct' as const }];
  return new PlacementBody(String(9_000_000 + i * 3), String(1_000_000_007 + i), i % 2 === 0 ? 'resting' : 'partially_filled',
    String(9_000_000 + i * 3), fills.length === 0 ? 0 : fills[0]!.qty, 5, fills);
}

/** A depth-10 book of both ladders as the read model returns it (an OrderbookBody renders it, once, when first answered). */
function book(i: number): Orderbook {
  const side = (from: number): [number, number][] => Array.from({ length: 10 }, (_, k) => [from - k, 100 + ((i + k) * 37) % 900]);
  return { market_id: 1 + (i % 7), yes: side(49), no: side(49), as_of_seq: String(12_345_678 + i) };
}

/** A frame of RECORDS_PER_FRAME PlaceOrder records as a binary client writes them (producer, seq and ts zero). */
function binaryFrame(account: number, i: number): ArrayBuffer {
  const buf = new ArrayBuffer(PlaceOrder.SIZE * RECORDS_PER_FRAME);
  const m = memOf(buf);
  for (let r = 0, o = 0; r < RECORDS_PER_FRAME; r++, o += PlaceOrder.SIZE) {
    Header.set_len(m, o, PlaceOrder.SIZE);
    Header.set_type(m, o, T_PLACE_ORDER);
    Header.set_account(m, o, account);
    PlaceOrder.set_market_id(m, o, 1);
    PlaceOrder.set_qty(m, o, 1 + ((i + r) % 10));
    PlaceOrder.set_tick(m, o, 40 + ((i + r) % 20));
    PlaceOrder.set_side(m, o, (i + r) % 2);
    PlaceOrder.set_outcome(m, o, r % 2);
  }
  return buf;
}

function utf8(s: string): ArrayBuffer {
  const b = Buffer.from(s, 'utf8');
  return b.buffer.slice(b.byteOffset, b.byteOffset + b.length) as ArrayBuffer;
}

interface Inputs {
  secret: Uint8Array;
  ts: string;
  placeBodies: string[];
  placeSigs: string[];
  bookSigs: string[];
  params: Record<string, unknown>[];
  frames: ArrayBuffer[];
  frameTexts: string[];
  placements: PlacementBody[];
  books: Orderbook[];
  binary: ArrayBuffer[];
}

function inputs(): Inputs {
  const secret = new Uint8Array(randomBytes(32));
  const ts = String(Date.now());
  const params = Array.from({ length: BATCH }, (_, i) => placeParams(i));
  const placeBodies = params.map((p) => JSON.stringify(p));
  const frameTexts = params.map((p, i) => JSON.stringify({ id: 1000 + i, cmd: 'place_order', params: p }));
  return {
    secret,
    ts,
    placeBodies,
    placeSigs: placeBodies.map((b) => sign(secret, ts, 'POST', PLACE_TARGET, b)),
    bookSigs: params.map(() => sign(secret, ts, 'GET', BOOK_TARGET, '')),
    params,
    frames: frameTexts.map(utf8),
    frameTexts,
    placements: params.map((_, i) => placementBody(i)),
    books: params.map((_, i) => book(i)),
    binary: params.map((_, i) => binaryFrame(7, i)),
  };
}

type Task = [string, () => void];

/** Every timed call adds its results here (module state), so none of their work is dead code. */
let sink = 0;

function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(`request_parts: ${what}`);
}

/** The REST lane's parts (the signature, the query, the body check, the reply JSON) and their peers. */
function restTasks(x: Inputs): Task[] {
  const macs = new KeyMacs();
  const book = routeNamed('get_orderbook');
  const place = routeNamed('place_order');
  const hmac = (method: string, target: string, bodies: readonly string[] | null, sigs: readonly string[]) => (): void => {
    for (let i = 0; i < BATCH; i++) {
      const mac = macs.start(i & 15, x.secret, x.ts, method, target);
      if (bodies !== null) mac.updateAscii(bodies[i]!);
      check(checkMac(mac, sigs[i]!) === null, 'signature refused');
      macs.release(mac);
    }
  };
  return [
    ['hmac_place', hmac('POST', PLACE_TARGET, x.placeBodies, x.placeSigs)],
    ['hmac_read', hmac('GET', BOOK_TARGET, null, x.bookSigs)],
    ['query_depth', () => {
      for (let i = 0; i < BATCH; i++) sink += parseQuery('depth=10', book.query).depth as number;
    }],
    ['place_body_check', () => {
      for (let i = 0; i < BATCH; i++) check(validateBody(place, x.params[i]) !== undefined, 'body refused');
    }],
    ['placement_json', () => {
      for (let i = 0; i < BATCH; i++) sink += x.placements[i]!.json().length;
    }],
    ['placement_json_stringify', () => {
      for (let i = 0; i < BATCH; i++) sink += JSON.stringify(x.placements[i]!).length;
    }],
    ['orderbook_json', () => {
      for (let i = 0; i < BATCH; i++) sink += new OrderbookBody(x.books[i]!, i).json().length;
    }],
    ['orderbook_json_stringify', () => {
      for (let i = 0; i < BATCH; i++) sink += JSON.stringify(x.books[i]!).length;
    }],
    ['replay_guard_first_use', guardTask()],
  ];
}

/**
 * A mutation's replay-guard check (firstUse, which records it): distinct signatures at 50,000 a second, so entries
 * expire and are deleted as in a loaded gateway, in the exchange's table (2 M entries).
 */
function guardTask(): () => void {
  const guard = new ReplayGuard(ReplayGuard.allocate());
  const d = new Int32Array(8);
  let n = 0;
  let now = Date.now();
  return () => {
    for (let i = 0; i < BATCH; i++) {
      n++;
      d[0] = Math.imul(n, 0x9e3779b1);
      d[1] = n;
      now += 0.02;
      check(guard.firstUse(d, now, now) === 'first', 'a new signature refused');
    }
  };
}

/** The WebSocket lanes' parts: a JSON place_order from frame to input, its answer frame, a binary frame's checks. */
function wsTasks(x: Inputs): Task[] {
  const checker = routeInputChecker(routeNamed('place_order'));
  // The same operation's merged input (path, query and body in one closed object), checked and split as for a route
  // with path or query parameters: what every placement paid before the body-only path.
  const merged = { ...checker, bodyOnly: false };
  return [
    ['ws_frame_text', () => {
      for (let i = 0; i < BATCH; i++) sink += frameText(x.frames[i]!).length;
    }],
    ['ws_frame_text_buffer', () => {
      for (let i = 0; i < BATCH; i++) sink += Buffer.from(x.frames[i]!).toString('utf8').length;
    }],
    ['ws_parse_command', () => {
      for (let i = 0; i < BATCH; i++) sink += parseCommand(x.frameTexts[i]!, DEFAULT_WS_CONFIG).id!;
    }],
    ['ws_route_input', () => {
      for (let i = 0; i < BATCH; i++) check(routeInput(checker, x.params[i]).body !== undefined, 'input refused');
    }],
    ['ws_route_input_merged', () => {
      for (let i = 0; i < BATCH; i++) check(routeInput(merged, x.params[i]).body !== undefined, 'input refused');
    }],
    ['ws_order_result', () => {
      for (let i = 0; i < BATCH; i++) sink += orderResult(1000 + i, 201, x.placements[i]!).length;
    }],
    ['binary_frame_check', () => {
      for (let i = 0; i < BATCH; i++) {
        const buf = x.binary[i]!;
        const m = memOf(buf);
        check(frameProblem(m, buf.byteLength, 128) === null, 'frame refused');
        for (let o = 0; o < buf.byteLength; o += PlaceOrder.SIZE) check(recordFault(m, o, 7) < 0, 'record refused');
      }
    }],
  ];
}

/** Pairs timed in one run: [the lane's part, the general tool it replaced (a task), that tool's name as a peer]. */
const PEERS: [string, string, string][] = [
  ['placement_json', 'placement_json_stringify', 'json_stringify'],
  ['orderbook_json', 'orderbook_json_stringify', 'json_stringify'],
  ['ws_frame_text', 'ws_frame_text_buffer', 'buffer_to_string'],
  ['ws_route_input', 'ws_route_input_merged', 'merged_input_schema'],
];

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const quick = opts.quick === true;
  const t0 = performance.now();
  const bench = new Bench({ time: quick ? 50 : 1000, warmupTime: quick ? 20 : 300, throws: true });
  const x = inputs();
  for (const [name, fn] of [...restTasks(x), ...wsTasks(x)]) bench.add(name, fn);
  await bench.run();
  const figures: Record<string, number> = {};
  const notes: string[] = [];
  for (const t of bench.tasks) {
    const r = t.result;
    if (r.state !== 'completed') throw new Error(`request_parts: ${t.name} ${r.state}`);
    // tinybench's latencies are in ms per call; a call is BATCH items.
    figures[`${t.name}_p50_ns`] = Math.round((r.latency.p50 * 1e6) / BATCH);
    figures[`${t.name}_p99_ns`] = Math.round((r.latency.p99 * 1e6) / BATCH);
    if (r.latency.rme > 10) notes.push(`FLAG ${t.name}: relative margin of error ${r.latency.rme.toFixed(1)}%`);
  }
  // A peer's figures are filed under the part's own keys, so that the report shows them on the part's rows.
  const metrics: Record<string, number> = { ...figures };
  const peers: Record<string, Record<string, number>> = {};
  const ratios: Record<string, number> = {};
  for (const [ours, tool, peer] of PEERS) {
    for (const q of ['p50', 'p99']) {
      (peers[peer] ??= {})[`${ours}_${q}_ns`] = figures[`${tool}_${q}_ns`]!;
      delete metrics[`${tool}_${q}_ns`];
    }
    ratios[`${ours}_vs_${peer}`] = Math.round((figures[`${tool}_p50_ns`]! / figures[`${ours}_p50_ns`]!) * 100) / 100;
  }
  metrics.binary_frame_check_per_record_p50_ns = Math.round(metrics.binary_frame_check_p50_ns! / RECORDS_PER_FRAME);
  notes.push(
    `ns per item: the median of tinybench's call latencies / ${BATCH} items per call (distinct inputs built beforehand); ` +
      'p99 likewise. Each peer is the general tool a part replaced, on the same inputs; its ratio is the tool\'s median over ' +
      'the part\'s (above 1: the part is faster).',
  );
  return {
    name: 'request_parts',
    ...environment(),
    workload:
      `request_parts, one thread, tinybench (${quick ? '50' : '1000'} ms per task after warm-up), ${BATCH} items per call: ` +
      'HMAC-SHA256 of a signed placement (its body) and a signed order-book read, the order book\'s query, a placement body\'s ' +
      'schema check, a placement answer and a depth-10 order book as JSON, a WebSocket place_order frame\'s text, envelope and ' +
      `route input, its order_result frame, and the checks of a binary frame of ${RECORDS_PER_FRAME} PlaceOrder records`,
    metrics,
    peers,
    ratios,
    notes,
    wall_s: Math.round((performance.now() - t0) / 100) / 10,
  };
}

// Run as a tool: `node dist/bench/request_parts.js [--quick]`.
if (import.meta.url === `file://${process.argv[1]}`) {
  const r = await run({ quick: process.argv.includes('--quick') });
  for (const [k, v] of Object.entries(r.metrics)) console.log(k, v);
  for (const [k, v] of Object.entries(r.peers)) console.log(k, JSON.stringify(v));
  for (const [k, v] of Object.entries(r.ratios)) console.log(k, v);
  for (const note of r.notes ?? []) console.log(`- ${note}`);
}
