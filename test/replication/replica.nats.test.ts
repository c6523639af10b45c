// Read replicas: a replica started late, after snapshots went to the bucket
// and the log was purged behind them, boots from the newest snapshot object
// and converges (state hash equal to the primary's, the standby's and a fresh
// replay of the bucket plus the log); writes sent to it get 503 not_primary
// naming the primary (REST, WebSocket JSON and binary order entry); min_seq gives read-your-writes across nodes (held until
// applied, 503 replica_lagging after 200 ms); the health endpoints, /metrics
// and tools/replication.js status say who is what; binary WebSocket orders on
// the standby and the replica are refused not_primary. A replica's WebSocket
// market data follow the primary's writes: orderbook_delta (snapshot, then
// deltas) rebuilds the primary's REST book at every seq, and the trades
// stream is the primary's tape. Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'node:test';
import { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder } from '../../src/client/binary_codec.js';
import { DxApiError } from '../../src/client/errors.js';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxWebSocket } from '../../src/client/websocket.js';
import { LogClient } from '../../src/replication/log_client.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { defaults, engineConfigOf } from '../../src/main/config.js';
import { replayHash } from '../../src/replication/replay.js';
import { newestUsableSnapshot, snapshotAtLogStart } from '../../src/replication/snapshots.js';
import { BookRebuilder } from '../ws/book_rebuilder.js';
import { WsClient } from '../ws/ws_client.js';
import type { DxClient } from '../../src/client/client.js';
import { atRest, fixture, Group, health, waitRole } from './harness.js';

const TOOL = fileURLToPath(new URL('../../tools/replication.js', import.meta.url));

/**
 * `n` 1-lot YES orders, buys and sells in turn around two price levels (a
 * sell the account has no shares for becomes a NO buy); returns the last seq.
 */
async function placeMany(c: DxClient, market: number, n: number, nextCoid: () => string): Promise<number> {
  let seq = 0;
  for (let i = 0; i < n; i++) {
    const buy = i % 2 === 0;
    const req = { market_id: market, side: buy ? 'buy' : 'sell', outcome: 'yes', tick: (buy ? 40 : 60) + (i % 5), qty: 1 } as const;
    const placed = await c.placeOrder({ ...req, client_order_id: nextCoid() }).catch(async (e: unknown) => {
      // A sell needs shares: buy NO instead when the account holds none.
      if (!(e instanceof DxApiError && e.code === 'insufficient_position')) throw e;
      return c.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick: 30, qty: 1, client_order_id: nextCoid() });
    });
    seq = Number(placed.seq);
  }
  return seq;
}

test(
  'a late read replica boots from the newest snapshot object after a purge, serves reads with min_seq and refuses writes',
  { timeout: 240_000 },
  async () => {
    const g = await Group.start();
    try {
      const { a, b, fx, ca } = await g.primaryAndStandby();
      let coid = 5_000_000;
      const place = (n: number): Promise<number> => placeMany(ca, fx.market, n, () => String(++coid));
      await place(30);
      const s1 = await g.admin(a).snapshot();
      await place(30);
      const s2 = await g.admin(a).snapshot();
      assert.ok(s2.seq > s1.seq);
      // Both uploads done; the second one purged the log before the first snapshot's seq.
      for (let i = 0; i < 200 && a.server.events('replication_snapshot_uploaded').length < 2; i++) await sleep(50);
      const ups = a.server.events('replication_snapshot_uploaded');
      assert.equal(ups.length, 2, JSON.stringify(a.server.errors()));
      assert.ok(Number(ups[1]!.purged_messages) > 0, JSON.stringify(ups[1]));
      // A node finds the snapshot to boot from in the listing, and, when the listing is stale, by the log's first entry.
      const probe = await LogClient.open(g.logConfig('probe'), 'test probe');
      try {
        assert.equal((await newestUsableSnapshot(probe, () => assert.fail('the listing is current')))?.seq, Number(s2.seq));
        assert.equal((await snapshotAtLogStart(probe))?.seq, Number(s1.seq), 'the log was purged for the older kept snapshot');
      } finally {
        await probe.close();
      }
      await place(10);

      const r = await g.node('r', 'replica');
      const loaded = r.server.events('replication_snapshot_loaded').at(-1);
      assert.equal(Number(loaded?.seq), Number(s2.seq), JSON.stringify(loaded));
      assert.equal((await health(r))?.role, 'replica');
      assert.equal((await health(b))?.role, 'standby');

      // Health for a load balancer: /health/primary is 200 on the primary only.
      const status = async (base: string): Promise<number> => (await fetch(`${base}/health/primary`)).status;
      assert.equal(await status(a.server.base), 200);
      assert.equal(await status(b.server.base), 503);
      assert.equal(await status(r.server.base), 503);

      // Writes to a replica: 503 not_primary with the primary's address.
      const cr = g.client(r, fx.key);
      await assert.rejects(
        cr.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 1, qty: 1, client_order_id: String(++coid) }),
        (e: unknown) => {
          assert.ok(e instanceof DxApiError);
          assert.equal(e.status, 503);
          assert.equal(e.code, 'not_primary');
          assert.equal(e.details?.primary_url, a.server.base);
          return true;
        },
      );
      await assert.rejects(g.admin(r).createAccount(), (e: unknown) => e instanceof DxApiError && e.code === 'not_primary');
      // Binary WebSocket order records on a standby and a replica: refused not_primary (RefusalCode 6), nothing sequenced.
      for (const n of [b, r]) {
        const ws = await WsClient.connect({ port: n.server.port }, { keyId: fx.key.key_id, secret: fx.key.secret });
        try {
          const started = await ws.call('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT });
          assert.equal(started.type, 'ok', JSON.stringify(started));
          const e = new FrameEncoder(fx.account);
          e.place(41, { market_id: fx.market, side: 'buy', outcome: 'yes', tick: 2, qty: 1, client_order_id: String(++coid) });
          ws.sendRaw(Buffer.from(e.bytes()), true);
          await ws.framesUntil(1, 5000);
          const res = decodeResults(ws.frames[0]!);
          assert.deepEqual(
            res.map((x) => [n.name, x.correlation, x.status, x.code]),
            [[n.name, 41, 'refused', 'not_primary']],
          );
        } finally {
          await ws.close();
        }
      }
      assert.equal(
        (await ca.orders({ client_order_id: String(coid) })).orders.length,
        0,
        'a binary order sent to a non-primary was sequenced',
      );
      // The WebSocket order entry too: JSON answers the same 503, a binary record is refused not_primary (RefusalCode 6).
      const wsOpts = { url: r.server.base, keyId: fx.key.key_id, secret: fx.key.secret, reconnect: false };
      const rws = new DxWebSocket(wsOpts);
      await rws.connect();
      try {
        await assert.rejects(
          rws.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 1, qty: 1 }),
          (e: unknown) => e instanceof DxApiError && e.status === 503 && e.code === 'not_primary',
        );
      } finally {
        await rws.close();
      }
      const stream = await DxOrderStream.open(wsOpts);
      try {
        const refused = await stream.place({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 1, qty: 1 });
        assert.deepEqual([refused.status, refused.code], ['refused', 'not_primary']);
      } finally {
        await stream.close();
      }

      // Read-your-writes: the seq of a write on the primary, read on the replica.
      for (let i = 0; i < 20; i++) {
        const w = await ca.placeOrder({
          market_id: fx.market,
          side: 'buy',
          outcome: 'yes',
          tick: 35,
          qty: 1,
          client_order_id: String(++coid),
        });
        const read = await cr.request<{ orders: { order_id: string }[]; as_of_seq: string }>(
          'GET',
          `/v1/portfolio/orders?client_order_id=${coid}&min_seq=${w.seq}`,
        );
        assert.ok(Number(read.as_of_seq) >= Number(w.seq), `as_of_seq ${read.as_of_seq} below min_seq ${w.seq}`);
        assert.equal(read.orders[0]?.order_id, w.order_id);
      }
      const t0 = performance.now();
      await assert.rejects(cr.request('GET', `/v1/portfolio/balance?min_seq=${Number(s2.seq) + 1_000_000}`), (e: unknown) => {
        assert.ok(e instanceof DxApiError);
        assert.equal(e.status, 503);
        assert.equal(e.code, 'replica_lagging');
        return true;
      });
      assert.ok(performance.now() - t0 >= 190, 'replica_lagging came before the 200 ms hold');
      await assert.rejects(
        cr.request('GET', '/v1/portfolio/balance?min_seq=abc'),
        (e: unknown) => e instanceof DxApiError && e.status === 400 && e.code === 'invalid_field',
      );

      // At rest: the same state everywhere, and equal to a fresh replay of the bucket plus the log.
      const hs = await atRest(g, [a, b, r]);
      assert.equal(new Set(hs.map((h) => `${h.as_of_seq}:${h.state_hash}`)).size, 1, JSON.stringify(hs));
      const cfg = g.logConfig('test');
      const replay = await replayHash(cfg, engineConfigOf(defaults()));
      assert.equal(replay.state_hash, hs[0]!.state_hash, JSON.stringify({ replay, hs }));
      assert.equal(String(replay.seq), hs[0]!.as_of_seq);
      assert.equal(replay.snapshot_seq, Number(s2.seq));

      // /metrics: replication families.
      const ma = await g.admin(a).metrics();
      assert.match(ma, /^dx_replication_role\{role="primary"\} 1$/m);
      assert.match(ma, /^dx_replication_epoch 1$/m);
      assert.match(ma, /^dx_replication_ack_seconds_count [1-9][0-9]*$/m);
      const mr = await g.admin(r).metrics();
      assert.match(mr, /^dx_replication_role\{role="replica"\} 1$/m);
      assert.match(mr, /^dx_replication_apply_lag_seconds_count [1-9][0-9]*$/m);
      assert.match(mr, /^dx_replication_lag_seqs [0-9]+$/m);

      // The operator's tool: the stream, the epoch and every node's seq.
      const out = spawnSync(process.execPath, [TOOL, 'status', '--json', '--nats-urls', g.nats.urls.join(',')], {
        encoding: 'utf8',
        timeout: 30_000,
      });
      assert.equal(out.status, 0, out.stderr);
      const st = JSON.parse(out.stdout) as {
        stream: { first_seq: number; last_seq: number };
        epoch: { epoch: number; node: string };
        nodes: { node: string; role: string; seq: number }[];
      };
      assert.equal(st.epoch.epoch, 1);
      assert.ok(st.stream.first_seq > 1, 'the log was purged');
      assert.deepEqual(
        st.nodes.map((n) => `${n.node}:${n.role}`),
        ['a:primary', 'b:standby', 'r:replica'],
      );
      for (const n of st.nodes) assert.ok(n.seq >= Number(s2.seq));
      const log = await LogClient.open(cfg, 'test');
      try {
        assert.equal((await log.info()).replicas.length, 2);
      } finally {
        await log.close();
      }
      await waitRole(a, 'primary', 1000);
    } finally {
      await g.close();
    }
  },
);

test('a read replica serves WebSocket market data that follow the primary: its book stream rebuilds the primary\'s book at every ' +
  'seq, its trades are the primary\'s tape', { timeout: 180_000 }, async () => {
  const g = await Group.start();
  try {
    const a = await g.primary('a');
    const fx = await fixture(g, a);
    const admin = g.admin(a);
    const other = await admin.createAccount();
    await admin.deposit(other.account_id, { amount: '10000000', ref: 'replication-test' });
    const ok = await admin.createKey(other.account_id, ['read', 'trade']);
    const alice = g.client(a, fx.key);
    const bob = g.client(a, { key_id: ok.key_id, secret: ok.secret });
    const m = fx.market;
    const order = (outcome: 'yes' | 'no', tick: number, qty: number) => ({ market_id: m, side: 'buy', outcome, tick, qty }) as const;
    await alice.placeOrder(order('yes', 30, 5));

    const r = await g.node('r', 'replica');
    const ws = await WsClient.connect({ port: r.server.port }, { keyId: fx.key.key_id, secret: fx.key.secret });
    try {
      const sub = async (params: Record<string, unknown>): Promise<number> => {
        const x = await ws.call('subscribe', params);
        assert.equal(x.type, 'subscribed', JSON.stringify(x));
        return x.msg.sid;
      };
      await sub({ channels: ['oracle'] });
      const book = await sub({ channels: ['orderbook_delta'], market_ids: [m] });
      const trades = await sub({ channels: ['trades'], market_ids: [m] });
      const first = await ws.next((x) => x.sid === book);
      assert.deepEqual([first.type, first.msg.yes], ['orderbook_snapshot', [[30, 5]]]);
      // Everything the primary sequenced before an oracle tick has reached the replica's subscribers once that tick has.
      const barrier = async (): Promise<void> => {
        const { seq } = await admin.oracleTick({ source_id: 9, price: String(100_000_000 + Math.floor(Math.random() * 1e6)) });
        await ws.next((x) => x.type === 'oracle' && x.msg.seq === seq, 5000, `oracle tick ${seq} on the replica`);
      };
      const steps: (() => Promise<unknown>)[] = [
        () => alice.placeOrder(order('yes', 30, 7)),
        () => alice.placeOrder(order('yes', 41, 2)),
        () => bob.placeOrder(order('no', 50, 4)),
        () => bob.placeOrder(order('no', 70, 3)), // crosses 41 (2) and 30 (1)
        () => bob.placeOrder(order('no', 70, 20)), // sweeps the rest of 30, rests the rest
        () => alice.cancelAll({ market_id: m }),
      ];
      for (const step of steps) {
        await step();
        const rest = await alice.orderbook(m, 99); // the primary's book
        await barrier();
        const rb = new BookRebuilder(book, m);
        for (const x of ws.data(book)) rb.apply(x);
        const at = rest.as_of_seq;
        assert.deepEqual(rb.at(Number(at)), { yes: rest.yes, no: rest.no }, `the replica's book stream at the primary's seq ${at}`);
      }
      const tape = (await alice.trades(m, { limit: 100 })).trades.reverse();
      assert.ok(tape.length >= 3, `trades happened: ${tape.length}`);
      const streamed = ws.data(trades).map((x) => {
        assert.equal(x.type, 'trade');
        return [x.msg.trade_seq, x.msg.ts, x.msg.tick_yes, x.msg.qty, x.msg.taker_side, x.msg.taker_outcome];
      });
      assert.deepEqual(streamed, tape.map((x) => [x.seq, x.ts, x.tick_yes, x.qty, x.taker_side, x.taker_outcome]));
    } finally {
      await ws.close();
    }
  } finally {
    await g.close();
  }
});
