// NATS faults beyond a leader kill (that one is in failover.nats.test.ts):
// with 2 of the 3 NATS nodes down the stream has no quorum, so the exchange
// must acknowledge no write (they are shed, time out, or the primary steps
// down); once the nodes are back a primary (the same one or the standby, or
// the old primary restarted) takes writes again, the writes cut off land at
// most once, and the nodes converge. Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { attempt } from '../support/crash/outcome.js';
import { atRest, Group, health, waitRole, type GroupNode } from './harness.js';

test('without a NATS quorum nothing is acknowledged; with it back the exchange resumes', { timeout: 240_000 }, async () => {
  const g = await Group.start();
  try {
    const { fx, ca } = await g.primaryAndStandby();
    await ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 40, qty: 1, client_order_id: '9000001' });

    await g.nats.kill(1);
    await g.nats.kill(2);
    const cut: string[] = [];
    const outcomes: Record<string, number> = {};
    const until = Date.now() + 4000;
    for (let coid = 9_100_000; Date.now() < until; coid++) {
      const out = await attempt(() =>
        ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 41, qty: 1, client_order_id: String(coid) }),
      );
      const k =
        out.kind === 'ok'
          ? 'ok'
          : out.kind === 'refused'
            ? `${out.status} ${out.code}`
            : out.kind === 'uncertain'
              ? `uncertain ${out.why.split(':')[0]}`
              : `${out.status} ${out.code}`;
      outcomes[k] = (outcomes[k] ?? 0) + 1;
      assert.notEqual(out.kind, 'ok', `a write was acknowledged without a NATS quorum: ${JSON.stringify(out)}`);
      if (out.kind === 'uncertain') cut.push(String(coid));
      await sleep(50);
    }
    assert.ok(Object.keys(outcomes).length > 0);

    await g.nats.restart(1);
    await g.nats.restart(2);
    // Some node is primary again (a node that stepped down exited: start it again).
    let primary: GroupNode | null = null;
    const deadline = Date.now() + 90_000;
    while (primary === null && Date.now() < deadline) {
      for (const n of [...g.nodes]) {
        if (!n.server.running) await g.node(n.name, 'on', n.dataDir);
      }
      for (const n of g.nodes) if ((await health(n))?.role === 'primary') primary = n;
      if (primary === null) await sleep(100);
    }
    assert.ok(primary !== null, 'no primary after NATS came back');
    const cp = g.client(primary, fx.key);
    let resumed = false;
    for (let i = 0; i < 200 && !resumed; i++) {
      const out = await attempt(() =>
        cp.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 42, qty: 1, client_order_id: String(9_200_000 + i) }),
      );
      resumed = out.kind === 'ok';
      if (!resumed) await sleep(100);
    }
    assert.ok(resumed, 'the exchange did not take writes again');
    // Writes cut off during the outage landed at most once.
    for (const coid of cut) {
      const o = await cp.orders({ client_order_id: coid });
      assert.ok(o.orders.length <= 1, `client_order_id ${coid} landed ${o.orders.length} times`);
    }
    // Every node follows again: one that stepped down stops (refusing every request) and exits 75, then is started again.
    for (const n of [...g.nodes]) {
      if (n === primary) continue;
      const h = await health(n);
      if (h?.role === 'standby') continue;
      const gone: { code: number | null; signal: string | null } | null = await Promise.race([
        n.server.exited,
        sleep(45_000).then(() => null),
      ]);
      assert.ok(gone !== null, `${n.name} is ${h?.role ?? 'down'} and did not exit`);
      assert.equal(gone.code, 75, `${n.name} exited ${JSON.stringify(gone)}: ${n.server.stderrTail().slice(-3000)}`);
      await waitRole(await g.node(n.name, 'on', n.dataDir), 'standby', 30_000);
    }
    const hs = await atRest(g, g.nodes);
    assert.equal(new Set(hs.map((h) => `${h.as_of_seq}:${h.state_hash}`)).size, 1, JSON.stringify(hs));
  } finally {
    await g.close();
  }
});
