// REST and WebSocket JSON order entry, differentially: one seeded stream of
// 1,000 order commands (placements of every kind, batches, cancels by id,
// decreases, mass cancels with filters, and malformed ones) is sent once over
// REST and once over the WebSocket lane to two fresh exchanges set up alike.
// Every answer must be the same status and the same body, apart from ids,
// seqs and timestamps (mapped to their first appearance). WS_DIFF_SEED=n
// reruns a seed.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { Rng } from '../../src/lib/rng.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { closeInAnHour, newAccount, newMarket, signedRaw, type Key } from '../support/harness.js';
import { WsClient, type Msg } from './ws_client.js';

const SEED = Number(process.env.WS_DIFF_SEED ?? '20261122');
const COMMANDS = 1000;
const TRADERS = 3;

interface Leg {
  tx: TestExchange;
  keys: Key[];
  markets: number[];
}

async function setUp(): Promise<Leg> {
  const tx = await startTestExchange({ demo: false, durability: 'none' });
  const keys: Key[] = [];
  for (let i = 0; i < TRADERS; i++) {
    const k = await newAccount(tx, { deposit: '5000000' });
    // A tier that does not throttle: the stream is sent as fast as the answers come.
    await tx.admin.setKeyTier(k.keyId, { tier: 'institutional' });
    keys.push(k);
  }
  const markets = [await newMarket(tx), await newMarket(tx, { position_limit: 40 })];
  return { tx, keys, markets };
}

type Params = Record<string, unknown>;
interface Cmd {
  trader: number;
  cmd: string;
  params: Params;
}

/** The stream, every random choice drawn up front; order ids are resolved against the ids each leg's answers named. */
function stream(seed: number): ((ids: string[]) => Cmd)[] {
  const r = new Rng(seed);
  const out: ((ids: string[]) => Cmd)[] = [];
  const placement = (market: number): Params => {
    const o: Params = {
      market_id: market,
      side: r.chance(0.25) ? 'sell' : 'buy',
      outcome: r.chance(0.5) ? 'yes' : 'no',
      tick: r.int(30, 70),
      qty: r.int(1, 20),
    };
    const tif = r.weighted<string>([['gtc', 6], ['ioc', 2], ['fok', 1], ['gtd', 1]]);
    if (tif !== 'gtc') o.tif = tif;
    if (tif === 'gtd') o.expiry_ts = r.chance(0.8) ? closeInAnHour() : '1';
    if (tif === 'gtc' && r.chance(0.2)) o.post_only = true;
    if (r.chance(0.4)) o.client_order_id = String(r.int(1, 400));
    if (o.side === 'buy' && tif === 'ioc' && r.chance(0.3)) o.max_cost = String(r.int(0, 2000));
    if (r.chance(0.3)) o.group_id = r.int(1, 3);
    if (r.chance(0.2)) o.stp = r.pick(['cancel_taker', 'cancel_maker', 'cancel_both']);
    // Now and then a mistake the schema or the placement rules refuse.
    const bad = r.int(0, 40);
    if (bad === 0) o.tick = 0;
    if (bad === 1) o.colour = 'red';
    if (bad === 2) o.qty = 1_000_001;
    if (bad === 3) o.tif = 'ioc';
    if (bad === 3) o.post_only = true;
    if (bad === 4) o.market_id = 999;
    return o;
  };
  // An order id: mostly one of the last 40 named, else any number. Drawn now; resolved against each leg's own ids later.
  const pickId = (): ((ids: string[]) => string) => {
    const any = r.chance(0.1);
    const random = String(r.int(1, 5000));
    const back = r.int(0, 39);
    return (ids) => (any || ids.length === 0 ? random : ids[Math.max(0, ids.length - 1 - back)]!);
  };
  for (let i = 0; i < COMMANDS; i++) {
    const trader = r.int(0, TRADERS - 1);
    const market = r.int(0, 1);
    const kind = r.weighted<string>([['place', 50], ['batch', 8], ['cancel', 15], ['batchCancel', 6], ['decrease', 10], ['cancelAll', 2]]);
    switch (kind) {
      case 'place': { const p = placement(market); out.push(() => ({ trader, cmd: 'place_order', params: p })); break; }
      case 'batch': {
        const n = r.chance(0.05) ? 21 : r.int(1, 5);
        const orders = Array.from({ length: n }, () => placement(market));
        out.push(() => ({ trader, cmd: 'batch_place_orders', params: { orders } }));
        break;
      }
      case 'cancel': {
        const id = pickId();
        out.push((ids) => ({ trader, cmd: 'cancel_order', params: { order_id: id(ids) } }));
        break;
      }
      case 'batchCancel': {
        const picks = Array.from({ length: r.int(1, 4) }, () => pickId());
        out.push((ids) => ({ trader, cmd: 'batch_cancel_orders', params: { order_ids: picks.map((id) => id(ids)) } }));
        break;
      }
      case 'decrease': {
        const q = r.chance(0.05) ? -1 : r.int(0, 10);
        const id = pickId();
        out.push((ids) => ({ trader, cmd: 'decrease_order', params: { order_id: id(ids), new_qty: q } }));
        break;
      }
      case 'cancelAll': {
        const p: Params = {};
        if (r.chance(0.5)) p.market_id = market;
        if (r.chance(0.5)) p.group_id = r.int(0, 3);
        out.push(() => ({ trader, cmd: 'cancel_all', params: p }));
        break;
      }
    }
  }
  return out;
}

/** markets[i] of the stream -> this leg's market id. */
function localize(c: Cmd, leg: Leg): Cmd {
  const fix = (o: Params): Params =>
    'market_id' in o && typeof o.market_id === 'number' && o.market_id < 2 ? { ...o, market_id: leg.markets[o.market_id]! } : o;
  const params = c.params.orders !== undefined ? { ...c.params, orders: (c.params.orders as Params[]).map(fix) } : fix(c.params);
  return { ...c, params };
}

/** The REST request of a WebSocket order command, answered as {status, body} (cancel_order: its one item, as the lane answers it). */
async function viaRest(leg: Leg, c: Cmd): Promise<{ status: number; body: unknown }> {
  const k = leg.keys[c.trader]!;
  const p = c.params;
  const call = async (method: string, target: string, body?: unknown): Promise<{ status: number; body: unknown }> => {
    const r = await signedRaw(leg.tx.port, k, method, target, body === undefined ? undefined : JSON.stringify(body));
    return { status: r.status, body: r.json };
  };
  switch (c.cmd) {
    case 'place_order': return call('POST', '/v1/portfolio/orders', p);
    case 'batch_place_orders': return call('POST', '/v1/portfolio/orders/batch', p);
    case 'batch_cancel_orders': return call('DELETE', '/v1/portfolio/orders/batch', p);
    case 'cancel_order': {
      const r = await call('DELETE', '/v1/portfolio/orders/batch', { order_ids: [p.order_id] });
      const item = (r.body as { results: { error?: { code: string } }[] }).results[0]!;
      return { status: item.error === undefined ? 200 : item.error.code === 'unknown_order' ? 404 : 0, body: item };
    }
    case 'decrease_order': return call('POST', `/v1/portfolio/orders/${p.order_id as string}/decrease`, { new_qty: p.new_qty });
    case 'cancel_all': {
      const q = Object.entries(p).map(([n, v]) => `${n}=${String(v)}`).join('&');
      return call('DELETE', `/v1/portfolio/orders${q === '' ? '' : `?${q}`}`);
    }
  }
  throw new Error(`no REST twin for ${c.cmd}`);
}

/** Ids and seqs replaced by their order of first appearance in the leg, timestamps dropped. */
class Normalizer {
  private readonly ids = new Map<string, string>();
  private readonly seqs = new Map<string, string>();
  norm(v: unknown, key = ''): unknown {
    if (Array.isArray(v)) return v.map((x) => this.norm(x, key));
    if (v !== null && typeof v === 'object') {
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) out[k] = this.norm(x, k);
      return out;
    }
    if (typeof v !== 'string') return v;
    if (key === 'order_id') return this.map(this.ids, v, 'order');
    if (key === 'seq' || key.endsWith('_seq')) return this.map(this.seqs, v, 'seq');
    if (key === 'ts' || key.endsWith('_ts')) return 'ts';
    return v;
  }

  private map(m: Map<string, string>, v: string, what: string): string {
    let x = m.get(v);
    if (x === undefined) m.set(v, (x = `${what}#${m.size}`));
    return x;
  }
}

let rest: Leg;
let ws: Leg;
const conns: WsClient[] = [];

before(async () => {
  rest = await setUp();
  ws = await setUp();
  for (const k of ws.keys) conns.push(await WsClient.connect(ws.tx, k));
});

after(async () => {
  await Promise.all(conns.map((c) => c.close()));
  await rest.tx.stop();
  await ws.tx.stop();
});

it(`ws differential: ${COMMANDS} seeded order commands answer the same over REST and over the WebSocket lane (seed ${SEED})`, async () => {
  const cmds = stream(SEED);
  const restIds: string[] = [];
  const wsIds: string[] = [];
  const nRest = new Normalizer();
  const nWs = new Normalizer();
  const seen = new Map<string, number>();
  const collect = (ids: string[], body: unknown): void => {
    const b = body as { order_id?: string; results?: { order_id?: string }[] };
    if (typeof b?.order_id === 'string') ids.push(b.order_id);
    for (const x of b?.results ?? []) if (typeof x.order_id === 'string') ids.push(x.order_id);
  };
  for (let i = 0; i < cmds.length; i++) {
    const a = localize(cmds[i]!(restIds), rest);
    const b = localize(cmds[i]!(wsIds), ws);
    const r = await viaRest(rest, a);
    const c = conns[b.trader]!;
    const reply: Msg = await c.reply(c.send(b.cmd, b.params), 5000);
    assert.equal(reply.type, 'order_result');
    const what = `command ${i} (seed ${SEED}): ${b.cmd} ${JSON.stringify(b.params).slice(0, 300)}`;
    assert.equal(reply.status, r.status, `${what}\n REST ${JSON.stringify(r.body)}\n WS ${JSON.stringify(reply.msg)}`);
    assert.deepEqual(nWs.norm(reply.msg), nRest.norm(r.body), what);
    collect(restIds, r.body);
    collect(wsIds, reply.msg);
    const key = `${b.cmd} ${r.status}`;
    seen.set(key, (seen.get(key) ?? 0) + 1);
  }
  // The stream reached every command with successes and refusals.
  for (const want of [
    'place_order 201',
    'place_order 400',
    'place_order 409',
    'place_order 422',
    'batch_place_orders 201',
    'batch_place_orders 400',
    'cancel_order 200',
    'cancel_order 404',
    'batch_cancel_orders 200',
    'decrease_order 200',
    'decrease_order 404',
    'decrease_order 400',
    'cancel_all 202',
  ]) {
    assert.ok((seen.get(want) ?? 0) > 0, `the stream never produced ${want}: ${JSON.stringify([...seen])}`);
  }
});
