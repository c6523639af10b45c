// NATS faults beyond a leader kill (that one is in failover.nats.test.ts):
// with 2 of the 3 NATS nodes down the stream has no quorum, so the exchange
// must acknowledge no write: the first ones wait for a quorum that does not
// come (504 at the response budget), new ones are shed (503 shed) once the
// oldest held write has waited half the budget, and after its lease the
// primary steps down (503 not_primary, then no answer). Once the nodes are
// back a primary (the same one or the standby, or the old primary restarted)
// takes writes again, the writes cut off land at most once, and the nodes
// converge (a node that steps down meanwhile exits 75 and is started again). Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import test from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DxClient } from '../../src/client/client.js';
import { attempt } from '../support/crash/outcome.js';
import { converge, Group, health, type GroupNode } from './harness.js';

/**
 * Four clients write for `ms`, each its next placement once the last is
 * answered, starting 250 ms apart (their writes overlap, as under real load);
 * none may be acknowledged. Returns the answers by kind (a 503 shed with why:
 * load, or shutting down once the primary stepped down) and the
 * client_order_ids cut off (uncertain).
 */
async function writeWithoutQuorum(c: DxClient, market: number, ms: number): Promise<{ outcomes: Record<string, number>; cut: string[] }> {
  const cut: string[] = [];
  const outcomes: Record<string, number> = {};
  const until = Date.now() + ms;
  const client = async (i: number): Promise<void> => {
    await sleep(250 * i);
    for (let coid = 9_100_000 + i * 100_000; Date.now() < until; coid++) {
      const out = await attempt(() =>
        c.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 41, qty: 1, client_order_id: String(coid) }),
      );
      let k = out.kind === 'ok' ? 'ok' : out.kind === 'uncertain' ? `uncertain ${out.why.split(':')[0]}` : `${out.status} ${out.code}`;
      if (out.kind === 'refused' && out.code === 'shed') k += /shutting down/.test(out.message) ? ' shutting down' : ' load';
      outcomes[k] = (outcomes[k] ?? 0) + 1;
      assert.notEqual(out.kind, 'ok', `a write was acknowledged without a NATS quorum: ${JSON.stringify(out)}`);
      if (out.kind === 'uncertain') cut.push(String(coid));
      await sleep(50);
    }
  };
  await Promise.all([0, 1, 2, 3].map(client));
  return { outcomes, cut };
}

test('without a NATS quorum nothing is acknowledged and writes are shed; with it back the exchange resumes', {
  timeout: 240_000,
}, async (t) => {
  const g = await Group.start();
  try {
    const { fx, ca } = await g.primaryAndStandby();
    await ca.placeOrder({ market_id: fx.market, side: 'buy', outcome: 'yes', tick: 40, qty: 1, client_order_id: '9000001' });

    await g.nats.kill(1);
    await g.nats.kill(2);
    const { outcomes, cut } = await writeWithoutQuorum(ca, fx.market, 4000);
    t.diagnostic(`answers without a NATS quorum: ${JSON.stringify(outcomes)}`);
    assert.ok((outcomes['503 shed load'] ?? 0) > 0, `no write was shed for load: ${JSON.stringify(outcomes)}`);

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
    // Every node follows again (converge starts a node that stepped down and exited 75 again) and all agree.
    const hs = await converge(g, 90_000);
    t.diagnostic(`converged: ${JSON.stringify(hs.map((h) => `${h.name}@${h.as_of_seq}`))}`);
  } finally {
    await g.close();
  }
});
