// A stale primary: SIGSTOP it past its lease, let the standby claim the next
// epoch and take writes (seq and ts continue; the gtd expiry, dead-man timer
// and round close due after the stop fire on the new primary), SIGCONT it: it must acknowledge nothing more (its
// next publish is refused, or it hears the new epoch first), exit with code
// 75, and started again on its data directory rejoin as a standby that
// converges with the new primary. Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { attempt } from '../support/crash/outcome.js';
import { atRest, Group, health, LEASE_MS, waitRole } from './harness.js';

test('a primary stopped past its lease is fenced, answers nothing more, exits and rejoins as a standby', { timeout: 180_000 }, async () => {
  const g = await Group.start();
  try {
    const { a, b, fx, ca } = await g.primaryAndStandby();
    let coid = 7_000_000;
    let lastSeq = 0;
    for (let i = 0; i < 20; i++) {
      const p = await ca.placeOrder({
        market_id: fx.market,
        side: 'buy',
        outcome: 'yes',
        tick: 30 + (i % 20),
        qty: 1,
        client_order_id: String(++coid),
      });
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

    a.server.child.proc.kill('SIGSTOP');
    assert.ok(Date.now() < dueMs - 500, 'the timers fell due before the primary stopped: the test proves nothing');
    await waitRole(b, 'primary', 10 * LEASE_MS + 10_000);
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
    const exit = await Promise.race([a.server.exited, sleep(20_000).then(() => null)]);
    assert.ok(exit !== null, 'the stale primary did not exit');
    assert.equal(exit.code, 75, `exit ${JSON.stringify(exit)}`);
    const why = a.server.events('replication_step_down').at(-1);
    assert.ok(why !== undefined && /fenced|later epoch|no acknowledgement|no round trip/.test(String(why.reason)), JSON.stringify(why));
    // Its write never reached the log.
    const look = await cb.orders({ client_order_id: lateCoid });
    assert.equal(look.orders.length, 0, 'a write the stale primary took is in the new primary\'s state');

    // Started again on its data directory, it rejoins as a standby and converges.
    const a2 = await g.node('a', 'on', a.dataDir);
    await waitRole(a2, 'standby', 20_000);
    const more = await cb
      .placeOrder({ market_id: fx.market, side: 'sell', outcome: 'no', tick: 90, qty: 1, client_order_id: String(++coid) })
      .catch(() => null); // landed or refused while a2 rejoins: either way the nodes must converge, checked next
    void more;
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
