// Stale primaries. (1) SIGSTOP the primary past its lease, let the standby
// claim the next epoch and take writes (seq and ts continue; the gtd expiry,
// dead-man timer and round close due after the stop fire on the new
// primary), SIGCONT it: it must acknowledge nothing more, answer nothing
// more, exit with code 75, and started again on its data directory rejoin as
// a standby that converges with the new primary. Woken, its replication
// thread runs its overdue lease check (or reads the new epoch's heartbeats)
// before a write can reach the log, so it steps down for that reason. (2) The
// fence itself: a claim lands in the log while the primary runs and hears no
// later primary (a standby whose heartbeats do not reach it; the test plays
// that standby): the primary's next publish is refused by the stream's
// expected last sequence, it steps down "fenced", exits 75, its write is
// never acknowledged nor in the log, and it rejoins, cutting that write from
// its journal. Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DxClient } from '../../src/client/client.js';
import { LogClient } from '../../src/replication/log_client.js';
import { attempt } from '../support/crash/outcome.js';
import { signedRaw } from '../support/harness.js';
import { atRest, fixture, Group, health, LEASE_MS, waitRole, type Fixture, type GroupNode } from './harness.js';

/**
 * A stepped-down primary answers nothing more: a read gets 503 not_primary
 * (fenced), 503 shed (shutting down), or no answer once it has exited.
 */
async function answersNothing(n: GroupNode, c: DxClient): Promise<void> {
  const read = await attempt(() => c.balance());
  if (read.kind === 'refused') assert.ok(read.status === 503 && /^(not_primary|shed)$/.test(read.code), JSON.stringify(read));
  else assert.equal(read.kind, 'uncertain', `${n.name} answered a read after stepping down: ${JSON.stringify(read)}`);
}

/**
 * A placement signed now for `node`, before it takes over (as if sent to the old primary, whose replay table the standby
 * never saw); the check to run after the takeover: refused 503 shed (below the replay floor; while the timestamp is still
 * inside the window).
 */
function signedBeforeTakeover(node: GroupNode, fx: Fixture): () => Promise<void> {
  const ts = Date.now();
  const body = JSON.stringify({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 2, qty: 1 });
  return async () => {
    const key = { keyId: fx.key.key_id, secret: fx.key.secret };
    const r = await signedRaw(node.server.port, key, 'POST', '/v1/portfolio/orders', body, { ts });
    if (Date.now() - ts < 4000) assert.deepEqual([r.status, r.json?.error?.code], [503, 'shed'], `signed before the promotion: ${r.text}`);
  };
}

test('a primary stopped past its lease is fenced, answers nothing more, exits and rejoins as a standby', { timeout: 180_000 }, async () => {
  const g = await Group.start();
  try {
    const { a, b, fx, ca } = await g.primaryAndStandby();
    let coid = 7_000_000;
    let lastSeq = 0;
    for (let i = 0; i < 20; i++) {
      const tick = 30 + (i % 20);
      const p = await ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick, qty: 1, client_order_id: String(++coid) });
      lastSeq = Number(p.seq);
    }

    // Timers that fall due after the primary stopped: a gtd expiry, a dead-man
    // timer and a round's close. Only the promoted standby's engine loop can fire them.
    const admin = g.admin(a);
    const dueMs = Date.now() + 8000;
    const dueNs = String(BigInt(dueMs) * 1_000_000n);
    const m2 = (await admin.createMarket({ title: 'closes after the takeover', category: 0, position_limit: 0, fee_schedule_id: 0 }))
      .market_id;
    await admin.openRound(m2, { strike: '100000000', close_ts: dueNs });
    const gtd = await ca.placeOrder({
      market_id: fx.market,
      side: 'buy',
      outcome: 'yes',
      tick: 5,
      qty: 1,
      tif: 'gtd',
      expiry_ts: dueNs,
      client_order_id: String(++coid),
    });
    const onM2 = await ca.placeOrder({ market_id: m2, side: 'buy', outcome: 'yes', tick: 5, qty: 1, client_order_id: String(++coid) });
    const sleeperAcct = await admin.createAccount();
    await admin.deposit(sleeperAcct.account_id, { amount: '100000', ref: 'replication-test' });
    const sk = await admin.createKey(sleeperAcct.account_id, ['read', 'trade']);
    const sleeper = g.client(a, { key_id: sk.key_id, secret: sk.secret });
    const sleeperOrder = await sleeper.placeOrder({
      market_id: fx.market,
      side: 'buy',
      outcome: 'no',
      tick: 5,
      qty: 1,
      client_order_id: '1',
    });
    const armed = await sleeper.armDeadman(Math.max(1000, dueMs - Date.now()));
    lastSeq = Number(onM2.seq);

    const replay = signedBeforeTakeover(b, fx);
    a.server.child.proc.kill('SIGSTOP');
    assert.ok(Date.now() < dueMs - 500, 'the timers fell due before the primary stopped: the test proves nothing');
    await waitRole(b, 'primary', 10 * LEASE_MS + 10_000);
    await replay();
    const takeover = Number(b.server.events('replication_claimed').at(-1)?.seq);
    assert.ok(takeover >= Number(armed.seq), `the standby took over at seq ${takeover}, below ${armed.seq} acknowledged before`);
    const cb = g.client(b, fx.key);
    const lastOnA = String(coid);
    const onB = await cb.placeOrder({
      market_id: fx.market,
      side: 'buy',
      outcome: 'no',
      tick: 20,
      qty: 1,
      client_order_id: String(++coid),
    });
    assert.ok(Number(onB.seq) > takeover);
    // seq and ts continue on the new primary: the old primary's last order is there, and ts never went back.
    const a1 = (await cb.orders({ client_order_id: lastOnA })).orders[0]!;
    const b1 = (await cb.orders({ client_order_id: String(coid) })).orders[0]!;
    assert.equal(Number(a1.created_seq), lastSeq);
    assert.ok(BigInt(b1.created_ts) > BigInt(a1.created_ts), `ts ${b1.created_ts} after ${a1.created_ts}`);

    // The new primary's clock runs (engine loop, started at the promotion): the timers fire, at or after their due time.
    const reasonOf = async (c: typeof ca, id: string): Promise<string> =>
      (await c.orders({ limit: 1000 })).orders.find((o) => o.order_id === id)?.reason ?? 'gone';
    const sb = g.client(b, { key_id: sk.key_id, secret: sk.secret });
    const until = Date.now() + 25_000;
    const fired = async (): Promise<boolean> =>
      (await reasonOf(cb, gtd.order_id)) === 'expired' && (await cb.round(m2)).status === 'frozen' && !(await sb.deadman()).armed;
    while (!(await fired())) {
      assert.ok(
        Date.now() < until,
        JSON.stringify({ gtd: await reasonOf(cb, gtd.order_id), round: (await cb.round(m2)).status, deadman: await sb.deadman() }),
      );
      await sleep(100);
    }
    assert.equal(await reasonOf(sb, sleeperOrder.order_id), 'deadman');
    assert.equal(await reasonOf(cb, onM2.order_id), 'round_frozen');

    // The old primary wakes up with a write in hand: it must not acknowledge it.
    a.server.child.proc.kill('SIGCONT');
    const lateCoid = String(++coid);
    const late = await attempt(() =>
      ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 10, qty: 1, client_order_id: lateCoid }),
    );
    assert.notEqual(late.kind, 'ok', `the stale primary acknowledged a write: ${JSON.stringify(late)}`);
    await answersNothing(a, ca);
    const exit = await Promise.race([a.server.exited, sleep(20_000).then(() => null)]);
    assert.ok(exit !== null, 'the stale primary did not exit');
    assert.equal(exit.code, 75, `exit ${JSON.stringify(exit)}`);
    const why = a.server.events('replication_step_down').at(-1);
    assert.match(String(why?.reason), /^(no round trip to NATS for \d+ ms|a primary of a later epoch is heartbeating: b in epoch 2)/);
    // Its write never reached the log.
    const look = await cb.orders({ client_order_id: lateCoid });
    assert.equal(look.orders.length, 0, 'a write the stale primary took is in the new primary\'s state');

    // Started again on its data directory, it rejoins as a standby and converges.
    const a2 = await g.node('a', 'on', a.dataDir);
    await waitRole(a2, 'standby', 20_000);
    await cb
      .placeOrder({ market_id: fx.market, side: 'sell', outcome: 'no', tick: 90, qty: 1, client_order_id: String(++coid) })
      .catch(() => null); // landed or refused while a2 rejoins: either way the nodes must converge, checked next
    const hs = await atRest(g, [b, a2]);
    assert.equal(hs[0]!.as_of_seq, hs[1]!.as_of_seq, JSON.stringify(hs));
    assert.equal(hs[0]!.state_hash, hs[1]!.state_hash, JSON.stringify(hs));
    const h = await health(a2);
    assert.equal(h?.role, 'standby');
    assert.equal(h?.epoch, 2);
  } finally {
    await g.close();
  }
});

test('a primary whose log another node claimed is refused at its next publish (fenced), answers nothing more, exits and rejoins', {
  timeout: 180_000,
}, async (t) => {
  const g = await Group.start();
  try {
    const a = await g.primary('a');
    const fx = await fixture(g, a);
    const ca = g.client(a, fx.key);
    let coid = 8_000_000;
    const place = (tick: number): Promise<unknown> =>
      ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick, qty: 1, client_order_id: String(++coid) });
    for (let i = 0; i < 10; i++) await place(30 + i);
    const lastAcked = coid;

    // Epoch 2 claimed after the log's last entry, by a node that never heartbeats: a keeps its lease (it reaches NATS) and
    // hears no later primary, so only the stream can tell it.
    const log = await LogClient.open(g.logConfig('claimer'), 'test claimer');
    let claimSeq = 0;
    try {
      const last = (await log.lastEntry())!;
      assert.equal(last.epoch, 1);
      claimSeq = await log.publishClaim(2, last.lastSeq, last.streamSeq);
    } finally {
      await log.close();
    }
    await sleep(2 * LEASE_MS);
    assert.equal((await health(a))?.role, 'primary', 'a stepped down before it published: the test proves nothing');

    const lateCoid = String(++coid);
    const late = await attempt(() =>
      ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 11, qty: 1, client_order_id: lateCoid }),
    );
    t.diagnostic(`the write after the claim: ${JSON.stringify(late)}`);
    assert.notEqual(late.kind, 'ok', `a fenced primary acknowledged a write: ${JSON.stringify(late)}`);
    await answersNothing(a, ca);
    const exit = await Promise.race([a.server.exited, sleep(20_000).then(() => null)]);
    assert.ok(exit !== null, 'the fenced primary did not exit');
    assert.equal(exit.code, 75, `exit ${JSON.stringify(exit)}`);
    const why = a.server.events('replication_step_down');
    assert.deepEqual(why.map((e) => e.reason), [`fenced: the log moved on to epoch 2 (claim at stream seq ${claimSeq})`]);

    // A standby started now takes over (epoch 3, after the silent claimer's lease): the late write is not in the log.
    const b = await g.node('b');
    await waitRole(b, 'primary', 10 * LEASE_MS + 10_000);
    assert.equal((await health(b))?.epoch, 3);
    const cb = g.client(b, fx.key);
    assert.equal((await cb.orders({ client_order_id: lateCoid })).orders.length, 0, 'the refused write is in the log');
    assert.equal((await cb.orders({ client_order_id: String(lastAcked) })).orders.length, 1, 'an acknowledged write is missing');
    // a, started again on its data directory, cuts the write it journaled but never got acknowledged, and converges.
    const a2 = await g.node('a', 'on', a.dataDir);
    await waitRole(a2, 'standby', 20_000);
    await cb.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 12, qty: 1, client_order_id: String(++coid) });
    const hs = await atRest(g, [b, a2]);
    assert.equal(new Set(hs.map((h) => `${h.as_of_seq}:${h.state_hash}`)).size, 1, JSON.stringify(hs));
    assert.equal((await g.client(a2, fx.key).orders({ client_order_id: lateCoid })).orders.length, 0);
  } finally {
    await g.close();
  }
});
