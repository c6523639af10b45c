// The short failover run (`npm run test:replication`; the long one is `npm run
// test:failover`): the crash test's ledger against a primary and a standby on
// a 3-node NATS cluster, with primary SIGKILLs and one kill of the stream's
// NATS leader under load; every acknowledged answer must be on the new
// primary with the same seq and effects, nothing shown may be above the
// takeover seq, and at rest every node, a late read replica and a fresh replay
// of the bucket plus the log must have the same state hash
// (test/support/crash/failover.ts has the details). The failover times go to
// the test's diagnostics. Needs /usr/sbin/nats-server.

import assert from 'node:assert/strict';
import test from 'node:test';
import { runFailoverTest } from '../support/crash/failover.js';

test('primary kills and a NATS leader kill under load lose no acknowledged write; every node converges', {
  timeout: 600_000,
}, async (t) => {
  const r = await runFailoverTest({ kills: 3, natsKills: 1, seed: 1515, loadMinMs: 500, loadMaxMs: 1500, log: () => undefined });
  t.diagnostic(`kill to first acknowledged write (ms): ${r.failovers.map((f) => f.kill_to_ack_ms).join(', ')}; NATS-leader kills: ` +
    JSON.stringify(r.nats_faults));
  const summary = { violations: r.violations, failovers: r.failovers, nats: r.nats_faults, counts: r.counts, data_dir: r.data_dir };
  assert.equal(r.ok, true, JSON.stringify(summary, null, 2));
  assert.equal(r.primary_kills, 3);
  assert.equal(r.nats_kills, 1);
  assert.equal(r.failovers.length, 3);
  // A generous bound (the benchmark measures the figure): lease 1.5 s here.
  for (const f of r.failovers) assert.ok(f.kill_to_ack_ms < 30_000, JSON.stringify(f));
  assert.ok((r.counts.place_ok ?? 0) > 50, 'the load placed orders');
  assert.ok((r.counts.convergence_checks ?? 0) === 1 && (r.counts.journal_verify_runs ?? 0) === 2, JSON.stringify(r.counts));
});
