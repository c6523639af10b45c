// The trader page's store (src/web/trader/store.ts) against a scripted
// socket and scripted REST reads: what the page shows after the lane comes
// back from a drop, and after a gap on the trades stream. DOM-free, so it
// runs in `npm test`.

import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import type { SignedApi } from '../../src/web/lib/api.js';
import { TraderStore } from '../../src/web/trader/store.js';
import { FakeSocket } from '../support/fake_socket.js';

declare global {
  // The browser globals the store and its api module name (the store's tests give it the first; the second is never read).
  function requestAnimationFrame(cb: () => void): number;
  var location: { protocol: string; host: string };
}

const g = globalThis as unknown as { WebSocket: unknown; requestAnimationFrame: unknown };
const saved = g.WebSocket;
afterEach(() => {
  g.WebSocket = saved;
  FakeSocket.all = [];
});

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

/** REST reads answered by path (query dropped) from `routes`; a function answers each call afresh. */
function fakeApi(routes: Record<string, unknown>): SignedApi {
  let urls = 0;
  return {
    keyId: 1,
    wsUrl: async () => `ws://test/v1/ws?sig=${++urls}`,
    get: async (target: string) => {
      const path = target.split('?')[0]!;
      const r = routes[path];
      if (r === undefined) throw new Error(`no route ${path}`);
      return typeof r === 'function' ? (r as () => unknown)() : structuredClone(r);
    },
    call: async () => {
      throw new Error('no writes here');
    },
  } as unknown as SignedApi;
}

const market = {
  market_id: 1, title: 'BTC', status: 'trading', best_yes_bid: 0, best_yes_ask: 0, display_tick: 0, last_tick_yes: 0,
  volume: '0', open_interest: '0', position_limit: 0, fee_schedule_id: 0, close_ts: '0', round_number: '5',
};
function round(n: string, status: string) {
  return {
    round_number: n, market_id: 1, category: 0, status, strike: '6500000000000', open_ts: '1', close_ts: '2', outcome: '',
    settle_price: '0', proposed_ts: '0', settled_ts: '0',
  };
}
function fill(id: string, seq: string) {
  return {
    fill_id: id, seq, ts: '1', order_id: id, client_order_id: '0', market_id: 1, side: 'buy', outcome: 'yes', role: 'taker',
    tick_yes: 50, tick: 50, qty: 1, fee: '0', path: 'direct',
  };
}
function trade(seq: string) {
  return { seq, ts: '1', market_id: 1, tick_yes: 50, qty: 1, taker_side: 'buy', taker_outcome: 'yes' };
}
const userSnapshot = { orders: [], balance: { available: '1000', reserved: '0' }, positions: [], as_of_seq: '10', resumed: false };

async function started(routes: Record<string, unknown>): Promise<{ store: TraderStore; ws: FakeSocket }> {
  g.WebSocket = FakeSocket;
  g.requestAnimationFrame = (cb: () => void) => setImmediate(cb);
  const store = new TraderStore(fakeApi(routes));
  await store.start();
  await tick();
  const ws = FakeSocket.all[0]!;
  ws.open();
  return { store, ws };
}

async function reconnect(): Promise<FakeSocket> {
  FakeSocket.all[0]!.drop();
  await new Promise((r) => setTimeout(r, 700));
  const again = FakeSocket.all[1]!;
  again.open();
  return again;
}

test('trader store: fills made while the lane was down are shown once it is back (the user snapshot carries no fills)', async () => {
  let fills = [fill('1', '5')];
  const { store, ws } = await started({
    '/v1/oracle/price': { price: '0', fresh_source_count: 0, seq: '0' },
    '/v1/portfolio/fills': () => ({ fills, cursor: '', as_of_seq: '10' }),
    '/v1/markets': { markets: [market], cursor: '', as_of_seq: '10' },
    '/v1/markets/1/trades': { trades: [], cursor: '', as_of_seq: '10' },
    '/v1/rounds/1': { ...round('5', 'trading'), as_of_seq: '10' },
  });
  const sids = ws.answerSubscribes();
  ws.push({ type: 'user_snapshot', sid: sids.get('user'), seq: 0, msg: userSnapshot });
  await tick();
  assert.deepEqual(store.fills.map((f) => f.fill_id), ['1']);
  // Down; meanwhile an order of the account fills (no message reaches this page).
  fills = [fill('2', '20'), fill('1', '5')];
  const again = await reconnect();
  const sids2 = again.answerSubscribes();
  again.push({ type: 'user_snapshot', sid: sids2.get('user'), seq: 0, msg: { ...userSnapshot, as_of_seq: '25' } });
  await tick();
  await tick();
  assert.equal(store.connection, 'live');
  assert.deepEqual(store.fills.map((f) => f.fill_id), ['2', '1'], 'the fill made while the lane was down is missing');
  store.stop();
});

test('trader store: a round (or oracle price) that moved on while the lane was down is shown once it is back (their ' +
  'streams have no snapshot)', async () => {
  let current = round('5', 'trading');
  let oracle = { price: '6500000000000', fresh_source_count: 3, seq: '9' };
  const { store, ws } = await started({
    '/v1/oracle/price': () => oracle,
    '/v1/portfolio/fills': { fills: [], cursor: '', as_of_seq: '10' },
    '/v1/markets': { markets: [market], cursor: '', as_of_seq: '10' },
    '/v1/markets/1/trades': { trades: [], cursor: '', as_of_seq: '10' },
    '/v1/rounds/1': () => ({ ...current, as_of_seq: current.round_number === '5' ? '10' : '40' }),
  });
  ws.answerSubscribes();
  await tick();
  assert.equal(store.round?.round_number, '5');
  // Down; meanwhile round 5 settles and round 6 opens (the round messages went to no one).
  current = round('6', 'trading');
  oracle = { price: '6600000000000', fresh_source_count: 0, seq: '38' };
  const again = await reconnect();
  again.answerSubscribes();
  await tick();
  await tick();
  assert.equal(store.connection, 'live');
  assert.equal(store.round?.round_number, '6', 'the round panel still shows the round that ended while the lane was down');
  assert.deepEqual(store.oracle, oracle, 'the oracle panel still shows the price from before the drop');
  store.stop();
});

test('trader store: trades that arrive while the tape is re-read after a gap stay on the tape', async () => {
  let answer: (v: unknown) => void = () => {};
  let calls = 0;
  const { store, ws } = await started({
    '/v1/oracle/price': { price: '0', fresh_source_count: 0, seq: '0' },
    '/v1/portfolio/fills': { fills: [], cursor: '', as_of_seq: '10' },
    '/v1/markets': { markets: [market], cursor: '', as_of_seq: '10' },
    '/v1/markets/1/trades': () =>
      ++calls === 1 ? { trades: [trade('8')], cursor: '', as_of_seq: '10' } : new Promise((r) => (answer = r)),
    '/v1/rounds/1': { ...round('5', 'trading'), as_of_seq: '10' },
  });
  const sids = ws.answerSubscribes();
  await tick();
  const sid = sids.get('trades');
  const msg = (s: string) => ({
    market_id: 1, tick_yes: 50, qty: 1, taker_outcome: 'yes', taker_side: 'buy', trade_seq: s, fill_id: s, ts: '1',
  });
  ws.push({ type: 'trade', sid, seq: 0, msg: msg('20') });
  ws.push({ type: 'trade', sid, seq: 2, msg: msg('30') }); // stream seq 1 is missing: the tape is read again
  await tick();
  assert.equal(calls, 2);
  ws.push({ type: 'trade', sid, seq: 3, msg: msg('40') }); // while that read is on its way
  answer({ trades: [trade('30'), trade('25'), trade('20'), trade('8')], cursor: '', as_of_seq: '35' });
  await tick();
  assert.deepEqual(store.tape.map((t) => t.seq), ['40', '30', '25', '20', '8'], 'trade 40 vanished from the tape');
  store.stop();
});

test('trader store: when the tape read fails (a 429, say), live trades still reach the tape', async () => {
  const { store, ws } = await started({
    '/v1/oracle/price': { price: '0', fresh_source_count: 0, seq: '0' },
    '/v1/portfolio/fills': { fills: [], cursor: '', as_of_seq: '10' },
    '/v1/markets': { markets: [market], cursor: '', as_of_seq: '10' },
    '/v1/markets/1/trades': () => Promise.reject(new Error('429 rate_limited: read bucket empty')),
    '/v1/rounds/1': { ...round('5', 'trading'), as_of_seq: '10' },
  });
  const sids = ws.answerSubscribes();
  await tick();
  assert.match(store.notice, /rate_limited/);
  const msg = { market_id: 1, tick_yes: 50, qty: 1, taker_outcome: 'yes', taker_side: 'buy', trade_seq: '20', fill_id: '20', ts: '1' };
  ws.push({ type: 'trade', sid: sids.get('trades'), seq: 0, msg });
  await tick();
  assert.deepEqual(store.tape.map((t) => t.seq), ['20'], 'the live tape stays empty for good');
  store.stop();
});
