// The trader page's WebSocket client (src/web/lib/lane.ts) against a
// scripted socket: subscriptions answered by sid, the per-subscription seq
// check, a fresh snapshot asked for (and the stale messages dropped) on a
// gap, a gap reported on a channel without snapshots, and a dropped
// connection reopened with a new signature and every subscription made
// again; a revoked key (4003) stops it. DOM-free, so it runs in `npm test`.

import assert from 'node:assert/strict';
import { afterEach, test } from 'node:test';
import { Lane, type WsSigner } from '../../src/web/lib/lane.js';
import { FakeSocket } from '../support/fake_socket.js';

const g = globalThis as unknown as { WebSocket: unknown };
const saved = g.WebSocket;
let urls = 0;
const api: WsSigner = { wsUrl: async () => `ws://test/v1/ws?sig=${++urls}` };

afterEach(() => {
  g.WebSocket = saved;
  FakeSocket.all = [];
});

async function started(): Promise<{ lane: Lane; ws: FakeSocket; statuses: string[]; errors: string[] }> {
  g.WebSocket = FakeSocket;
  const lane = new Lane(api);
  const statuses: string[] = [];
  const errors: string[] = [];
  lane.onStatus = (s) => statuses.push(s);
  lane.onError = (e) => errors.push(e);
  lane.start();
  await new Promise((r) => setImmediate(r));
  const ws = FakeSocket.all[0]!;
  ws.open();
  return { lane, ws, statuses, errors };
}

test('lane: a book subscription takes its snapshot and deltas in seq order; a gap asks for a snapshot and drops what is ' +
  'stale', async () => {
  const { lane, ws, statuses } = await started();
  assert.deepEqual(statuses, ['live']);
  const got: [string, number][] = [];
  lane.subscribe('orderbook_delta', 7, (m) => got.push([m.type, m.seq]));
  const sub = ws.last();
  assert.deepEqual(sub, { id: sub.id, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ids: [7] } });
  ws.push({ id: sub.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3, market_id: 7 } });
  ws.push({ type: 'orderbook_snapshot', sid: 3, seq: 10, msg: {} });
  ws.push({ type: 'orderbook_delta', sid: 3, seq: 11, msg: {} });
  ws.push({ type: 'orderbook_delta', sid: 3, seq: 13, msg: {} }); // 12 is missing
  const ask = ws.last();
  assert.deepEqual(ask, { id: ask.id, cmd: 'update_subscription', params: { sid: 3, action: 'get_snapshot' } });
  ws.push({ type: 'orderbook_delta', sid: 3, seq: 14, msg: {} }); // dropped: the snapshot is coming
  ws.push({ id: ask.id, type: 'ok', msg: { sid: 3, action: 'get_snapshot' } });
  ws.push({ type: 'orderbook_snapshot', sid: 3, seq: 14, msg: {} });
  ws.push({ type: 'orderbook_delta', sid: 3, seq: 15, msg: {} });
  assert.deepEqual(got, [
    ['orderbook_snapshot', 10],
    ['orderbook_delta', 11],
    ['orderbook_snapshot', 14],
    ['orderbook_delta', 15],
  ]);
  // Another stream's messages go to their own handlers only.
  ws.push({ type: 'orderbook_delta', sid: 99, seq: 1, msg: {} });
  assert.equal(got.length, 4);
  lane.stop();
});

test('lane: a gap on a channel without snapshots is reported to its handlers; errors are reported, not thrown', async () => {
  const { lane, ws, errors } = await started();
  const got: [string, number][] = [];
  lane.subscribe('trades', 7, (m) => got.push([m.type, m.seq]));
  const sub = ws.last();
  ws.push({ id: sub.id, type: 'subscribed', msg: { channel: 'trades', sid: 4, market_id: 7 } });
  ws.push({ type: 'trade', sid: 4, seq: 50, msg: {} }); // the stream's numbering: any first seq
  ws.push({ type: 'trade', sid: 4, seq: 52, msg: {} });
  ws.push({ type: 'trade', sid: 4, seq: 53, msg: {} });
  assert.deepEqual(got, [['trade', 50], ['gap', 52], ['trade', 52], ['trade', 53]]);
  ws.push({ id: 77, type: 'error', msg: { code: 6, name: 'unknown_market', msg: 'no such market' } });
  assert.deepEqual(errors, ['WebSocket: unknown_market: no such market']);
  lane.stop();
});

test('lane: a dropped connection is reopened with a fresh signature and every subscription is made again; 4003 stops it', async () => {
  const { lane, ws, statuses } = await started();
  lane.subscribe('user', null, () => {});
  lane.subscribe('oracle', null, () => {});
  const unsubscribe = lane.subscribe('rounds', 1, () => {});
  assert.equal(ws.sent.length, 3);
  ws.push({ id: ws.sent[2].id, type: 'subscribed', msg: { channel: 'rounds', sid: 9 } });
  unsubscribe();
  assert.deepEqual(ws.last().params, { sids: [9] });
  ws.drop();
  assert.equal(lane.status, 'reconnecting');
  await new Promise((r) => setTimeout(r, 700));
  const again = FakeSocket.all[1]!;
  assert.notEqual(again.url, ws.url, 'a new signature');
  again.open();
  assert.deepEqual(again.sent.map((m) => m.params.channels[0]).sort(), ['oracle', 'user']);
  again.drop(4003);
  assert.deepEqual(statuses, ['live', 'reconnecting', 'live', 'revoked']);
  await new Promise((r) => setTimeout(r, 700));
  assert.equal(FakeSocket.all.length, 2, 'no reconnect after a revocation');
  lane.stop();
});

test('lane: leaving a market and coming back before the first subscribe is answered still gives the book a snapshot ' +
  '(the exchange answers the second subscribe `existing` with the same sid, and the first one took the snapshot)', async () => {
  const { lane, ws } = await started();
  const got: string[] = [];
  const leave = lane.subscribe('orderbook_delta', 7, () => {});
  const first = ws.last();
  leave();
  lane.subscribe('orderbook_delta', 7, (m) => got.push(m.type));
  const second = ws.last();
  assert.equal(second.cmd, 'subscribe');
  // The exchange, in order: the first subscribe makes the stream and sends its snapshot; the second finds it there.
  ws.push({ id: first.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3, market_id: 7 } });
  ws.push({ type: 'orderbook_snapshot', sid: 3, seq: 0, msg: {} });
  ws.push({ id: second.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3, market_id: 7, existing: true } });
  assert.ok(!ws.sent.some((c) => c.cmd === 'unsubscribe'), 'the stream the page still shows must not be unsubscribed');
  const ask = ws.last();
  assert.deepEqual(ask, { id: ask.id, cmd: 'update_subscription', params: { sid: 3, action: 'get_snapshot' } });
  ws.push({ type: 'orderbook_delta', sid: 3, seq: 1, msg: {} }); // before the snapshot asked for: dropped
  ws.push({ id: ask.id, type: 'ok', msg: { sid: 3, action: 'get_snapshot' } });
  ws.push({ type: 'orderbook_snapshot', sid: 3, seq: 1, msg: {} });
  ws.push({ type: 'orderbook_delta', sid: 3, seq: 2, msg: {} });
  assert.deepEqual(got, ['orderbook_snapshot', 'orderbook_delta']);
  lane.stop();
});

test('lane: leaving, coming back and leaving again before the first reply ends the stream once (both replies carry its sid)', async () => {
  const { lane, ws } = await started();
  const leaveFirst = lane.subscribe('orderbook_delta', 7, () => {});
  const first = ws.last();
  leaveFirst();
  const leaveSecond = lane.subscribe('orderbook_delta', 7, () => {});
  const second = ws.last();
  leaveSecond();
  ws.push({ id: first.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3, market_id: 7 } });
  ws.push({ id: second.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3, market_id: 7, existing: true } });
  const ends = ws.sent.filter((c) => c.cmd === 'unsubscribe');
  assert.deepEqual(ends.map((c) => c.params), [{ sids: [3] }], 'one unsubscribe: a second would be answered unknown_sid');
  lane.stop();
});

test('lane: stopped (signed out) while the sign-in URL is being signed, it opens no socket with the key afterwards', async () => {
  g.WebSocket = FakeSocket;
  let release!: (url: string) => void;
  const lane = new Lane({ wsUrl: () => new Promise<string>((r) => (release = r)) });
  const statuses: string[] = [];
  lane.onStatus = (s) => statuses.push(s);
  lane.start();
  lane.subscribe('user', null, () => {});
  lane.stop();
  release('ws://test/v1/ws?sig=late');
  await new Promise((r) => setImmediate(r));
  assert.equal(FakeSocket.all.length, 0, 'a socket signed with the key was opened after sign-out');
  assert.deepEqual(statuses, ['stopped']);
});

test('lane: a get_snapshot refused rate_limited (code 8) is asked again once a token returns, so the user stream does not ' +
  'stay silent for good', async () => {
  const { lane, ws } = await started();
  const got: [string, number][] = [];
  lane.subscribe('user', null, (m) => got.push([m.type, m.seq]));
  const sub = ws.last();
  ws.push({ id: sub.id, type: 'subscribed', msg: { channel: 'user', sid: 5 } });
  ws.push({ type: 'user_snapshot', sid: 5, seq: 0, msg: {} });
  ws.push({ type: 'order', sid: 5, seq: 2, msg: {} }); // 1 is missing
  const ask = ws.last();
  assert.equal(ask.params.action, 'get_snapshot');
  ws.push({ id: ask.id, type: 'error', msg: { code: 8, name: 'rate_limited', msg: 'read bucket empty', retry_after_ms: '20' } });
  await new Promise((r) => setTimeout(r, 300));
  const again = ws.sent.filter((c) => c.cmd === 'update_subscription');
  assert.equal(again.length, 2, 'the refused snapshot was never asked again: every later user message is dropped');
  ws.push({ type: 'user_snapshot', sid: 5, seq: 3, msg: {} });
  ws.push({ type: 'order', sid: 5, seq: 4, msg: {} });
  assert.deepEqual(got, [['user_snapshot', 0], ['user_snapshot', 3], ['order', 4]]);
  lane.stop();
});

test('lane: a subscribe refused rate_limited is made again once a token returns (the book would wait for its snapshot ' +
  'for good)', async () => {
  const { lane, ws } = await started();
  lane.subscribe('orderbook_delta', 7, () => {});
  const sub = ws.last();
  ws.push({ id: sub.id, type: 'error', msg: { code: 8, name: 'rate_limited', msg: 'read bucket empty', retry_after_ms: '20' } });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(ws.sent.filter((c) => c.cmd === 'subscribe').length, 2, 'the refused subscribe was never made again');
  lane.stop();
});

/** Subscribes the book of market 7 and answers it with `sid`; returns the function that leaves it. */
function bookSubscribed(lane: Lane, ws: FakeSocket, sid: number): () => void {
  const leave = lane.subscribe('orderbook_delta', 7, () => {});
  ws.push({ id: ws.last().id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid, market_id: 7 } });
  return leave;
}

/** The book of market 7 (sid 3) subscribed and left; its unsubscribe refused rate_limited (retry after 20 ms). */
function leftAndRefused(lane: Lane, ws: FakeSocket): void {
  bookSubscribed(lane, ws, 3)();
  const end = ws.last();
  assert.deepEqual(end.params, { sids: [3] });
  ws.push({ id: end.id, type: 'error', msg: { code: 8, name: 'rate_limited', msg: 'rate limit exceeded', retry_after_ms: '20' } });
}

test('lane: a market left, shown again and left again is unsubscribed each time, though its stream kept its sid (other ' +
  'connections kept it alive: the exchange answers the new subscribe, not existing, with the sid this connection ended)', async () => {
  const { lane, ws } = await started();
  bookSubscribed(lane, ws, 3)();
  const end = ws.last();
  assert.deepEqual(end.params, { sids: [3] });
  ws.push({ id: end.id, type: 'ok', msg: { sids: [3] } });
  // Shown again: a new subscription of this connection to the same public stream, which keeps its sid.
  bookSubscribed(lane, ws, 3)();
  const ends = ws.sent.filter((c) => c.cmd === 'unsubscribe');
  assert.equal(ends.length, 2, 'the second subscription of sid 3 was never ended: the exchange streams it to the page for good');
  lane.stop();
});

test('lane: an unsubscribe refused rate_limited is sent again once a token returns (else the stream left keeps coming ' +
  'and holds one of the key\'s subscriptions while the page is open)', async () => {
  const { lane, ws } = await started();
  leftAndRefused(lane, ws);
  await new Promise((r) => setTimeout(r, 300));
  const ends = ws.sent.filter((c) => c.cmd === 'unsubscribe');
  assert.equal(ends.length, 2, 'the refused unsubscribe was never sent again');
  lane.stop();
});

test('lane: an unsubscribe refused rate_limited is not sent again once the market is shown again, even before the new ' +
  'subscribe is answered (that subscribe is answered `existing` with the same sid: ending it would leave the book silent)', async () => {
  const { lane, ws } = await started();
  leftAndRefused(lane, ws);
  // Shown again while the retry waits; its subscribe is on its way (the exchange still has sid 3 on this connection).
  lane.subscribe('orderbook_delta', 7, () => {});
  const again = ws.last();
  assert.equal(again.cmd, 'subscribe');
  await new Promise((r) => setTimeout(r, 300));
  ws.push({ id: again.id, type: 'subscribed', msg: { channel: 'orderbook_delta', sid: 3, market_id: 7, existing: true } });
  const ends = ws.sent.filter((c) => c.cmd === 'unsubscribe');
  assert.equal(ends.length, 1, 'the stream shown again was unsubscribed after its subscribe: the exchange ends it, the book goes silent');
  lane.stop();
});
