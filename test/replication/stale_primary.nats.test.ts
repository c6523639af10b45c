// A stale primary: SIGSTOP it past its lease, let the standby claim the next
// epoch and take writes, SIGCONT it: it must acknowledge nothing more (its
// next publish is refused, or it hears the new epoch first), exit with code
// 75, and started again on its data directory rejoin as a standby that
// converges with the new primary. Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { attempt } from '../support/crash/outcome.js';
import { atRest, fixture, Group, health, LEASE_MS, waitRole } from './harness.js';

test('a primary stopped past its lease is fenced, answers nothing more, exits and rejoins as a standby', { timeout: 180_000 }, async () => {
  const g = await Group.start();
  try {
    const a = await g.primary('a');
    const b = await g.node('b');
    const fx = await fixture(g, a);
    const ca = g.client(a, fx.key);
    let coid = 7_000_000;
    let lastSeq = 0;
    for (let i = 0; i < 20; i++) {
      const p = await ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 30 + (i % 20), qty: 1, client_order_id: String(++coid) });
      lastSeq = Number(p.seq);
    }

    a.server.child.proc.kill('SIGSTOP');
    await waitRole(b, 'primary', 10 * LEASE_MS + 10_000);
    const takeover = Number(b.server.events('replication_claimed').at(-1)?.seq);
    assert.ok(takeover >= lastSeq, `the standby took over at seq ${takeover}, below ${lastSeq} acknowledged before`);
    const cb = g.client(b, fx.key);
    const lastOnA = String(coid);
    const onB = await cb.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'no', tick: 20, qty: 1, client_order_id: String(++coid) });
    assert.ok(Number(onB.seq) > takeover);
    // seq and ts continue on the new primary: the old primary's last order is there, and ts never went back.
    const a1 = (await cb.orders({ client_order_id: lastOnA })).orders[0]!;
    const b1 = (await cb.orders({ client_order_id: String(coid) })).orders[0]!;
    assert.equal(Number(a1.created_seq), lastSeq);
    assert.ok(BigInt(b1.created_ts) > BigInt(a1.created_ts), `ts ${b1.created_ts} after ${a1.created_ts}`);

    // The old primary wakes up with a write in hand: it must not acknowledge it.
    a.server.child.proc.kill('SIGCONT');
    const lateCoid = String(++coid);
    const late = await attempt(() => ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 10, qty: 1, client_order_id: lateCoid }));
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
    const more = await cb.placeOrder({ market_id: fx.market, side: 'sell', outcome: 'no', tick: 90, qty: 1, client_order_id: String(++coid) }).catch(() => null);
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
