// A subscribe that arrives while the event ring holds a half-published
// command is deferred (lane.ts onMessage) and run by the pump once the
// command is whole. docs/websocket.md: "A subscribe first drains and
// publishes everything pending, then takes the snapshot and joins the topic,
// so the snapshot and the stream meet exactly", and the replies come first,
// then each stream's first data. The lane is built on a GatewayCore of its
// own (test/support/gateway_core.ts) with a stand-in uWS app and sockets; the
// drain that completes the command is stood in for (it leaves one delta of
// the stream queued, as Fanout.completeCommand does).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ReplayGuard } from '../../src/gateway/auth.js';
import { TokenBuckets } from '../../src/gateway/buckets.js';
import { WsLane } from '../../src/ws/lane.js';
import { coreWithoutEngine } from '../support/gateway_core.js';

const ACCOUNT = 7;
const MARKET = 1;

class FakeWs {
  readonly got: string[] = [];
  readonly topics = new Set<string>();
  constructor(readonly data: { conn: unknown }) {}
  getUserData(): { conn: unknown } { return this.data; }
  subscribe(t: string): boolean { this.topics.add(t); return true; }
  unsubscribe(t: string): boolean { return this.topics.delete(t); }
  send(m: string): number { this.got.push(m); return 1; }
  cork(f: () => void): void { f(); }
  getBufferedAmount(): number { return 0; }
  end(): void {}
}

function conn(keyRow: number): Record<string, unknown> {
  return {
    keyId: keyRow + 1, keyRow, account: ACCOUNT, scopes: 0xff, out: [], queued: false, open: true, revoked: false,
    subs: new Map(), byTopic: new Map(), user: null, inFlight: 0, allowance: 0, binary: false, ws: null,
    answers() { throw new Error('no binary'); }, written() {},
  };
}

/** A lane on a core without an engine, a stand-in uWS app (publish reaches the sockets subscribed to the topic) and views. */
function rig() {
  const core = coreWithoutEngine(1000);
  const sockets: FakeWs[] = [];
  const app = {
    publish(topic: string, msg: string): boolean {
      for (const s of sockets) if (s.topics.has(topic)) s.got.push(msg);
      return true;
    },
  };
  const lane = new WsLane(app as never, {
    lane: {
      core, buckets: new TokenBuckets(TokenBuckets.allocate(16)), replay: new ReplayGuard(ReplayGuard.allocate(16)),
      limits: {} as never, routes: [],
    },
    uws: {} as never, keyCounts: null,
  });
  const views = core.views as unknown as Record<string, unknown>;
  views.marketExists = () => true;
  views.keyAccount = () => ACCOUNT;
  views.keyRevoked = () => false;
  views.bookLevels = () => {};
  views.orderbook = () => null;
  const inner = lane as unknown as {
    onOpen(ws: unknown): void; onMessage(ws: unknown, m: ArrayBuffer, bin: boolean): void; onClose(ws: unknown): void;
  };
  const fanout = lane.fanout as unknown as { midCommand: boolean; publish(s: unknown, type: string, body: string): void };
  const open = (row: number): FakeWs => {
    const ws = new FakeWs({ conn: conn(row) });
    sockets.push(ws);
    inner.onOpen(ws);
    return ws;
  };
  const cmd = (ws: FakeWs, id: number): void =>
    inner.onMessage(ws, new TextEncoder().encode(JSON.stringify({
      id, cmd: 'subscribe', params: { channels: ['orderbook_delta'], market_ids: [MARKET] },
    })).buffer as ArrayBuffer, false);
  return { core, lane, inner, fanout, sockets, open, cmd };
}

test('ws: a deferred subscribe to a live orderbook stream gets no delta its snapshot includes, nor any before its reply', async () => {
  const { core, lane, inner, fanout, sockets, open, cmd } = rig();
  try {
    // A is subscribed: the stream exists (seq 0).
    const a = open(0);
    cmd(a, 1);
    await delay(5);
    const snapA = a.got.map((x) => JSON.parse(x)).find((m) => m.type === 'orderbook_snapshot');
    assert.ok(snapA !== undefined, JSON.stringify(a.got));
    // The ring holds a half-published command: B's subscribe is deferred.
    const b = open(1);
    fanout.midCommand = true;
    cmd(b, 1);
    assert.deepEqual(b.got, [], 'deferred');
    // The pump's next drain completes the command: one delta of the stream is rendered (seq 1).
    const stream = (lane.fanout as unknown as { streams: Map<string, unknown> }).streams.get(`orderbook_delta:${MARKET}`);
    let done = false;
    core.drain = () => {
      if (done) return 0;
      done = true;
      fanout.midCommand = false;
      fanout.publish(stream, 'orderbook_delta', `{"market_id":${MARKET},"side":"yes","tick":30,"qty":5,"delta":5,"as_of_seq":"9"}`);
      return 1;
    };
    await delay(50);
    const got = b.got.map((x) => JSON.parse(x));
    const first = got.findIndex((m) => m.id === 1);
    assert.equal(got[first]?.type, 'subscribed', JSON.stringify(got));
    const snap = got.find((m) => m.type === 'orderbook_snapshot');
    assert.ok(snap !== undefined, JSON.stringify(got));
    const deltas = got.filter((m) => m.type === 'orderbook_delta');
    assert.deepEqual(
      deltas.filter((d) => d.seq <= snap.seq), [],
      `B got deltas its snapshot (seq ${snap.seq}) already includes: ${JSON.stringify(got)}`,
    );
    assert.equal(first, 0, `B got data before the reply to its subscribe: ${JSON.stringify(got)}`);
    // A saw the delta once.
    assert.equal(a.got.map((x) => JSON.parse(x)).filter((m) => m.type === 'orderbook_delta').length, 1);
  } finally {
    for (const s of sockets) inner.onClose(s);
    lane.close();
    core.close();
  }
});
