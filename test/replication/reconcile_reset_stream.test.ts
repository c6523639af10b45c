// Replication.reconcile (src/main/replication.ts) against a log that is not
// the one this data directory was primary of: an empty stream (the NATS
// stores were rebuilt, or --nats-stream names another stream) holds no claim
// of the epoch replication.json records. A standby's journal ahead of the log
// is refused ("does not belong to this log"); a former primary's must be
// refused too, not cut to the empty log's end (every segment and snapshot,
// acknowledged orders with them). No NATS: a fake log client. Test process,
// main thread.

import assert from 'node:assert/strict';
import test from 'node:test';
import { planRecovery } from '../../src/journal/recovery.js';
import { Replication } from '../../src/main/replication.js';
import { writeNodeState } from '../../src/replication/local_state.js';
import { journaledRun, removeDataDir, segmentFiles, tempDataDir } from '../journal/journal_fixture.js';

function reconcileOn(dir: string): Promise<unknown> {
  // The log: an empty stream (no entry, no claim).
  const log = {
    lastEntry: async () => null,
    claimOf: async () => null,
    locate: async () => ({ streamSeq: 1, firstStored: null, lastSeqInStream: 0, lastStreamSeq: 0 }),
  };
  const ctor = Replication as unknown as new (mode: string, cfg: unknown, log: unknown, dataDir: string) => Replication;
  const r = new ctor('ha', { stream: 'DX', bucket: 'DX-snapshots' }, log, dir);
  const plan = planRecovery(dir, { repair: true });
  return r.reconcile(plan, async () => planRecovery(dir, { repair: true }));
}

test('reconcile: a former primary\'s journal is not cut to the end of an empty stream that holds none of its epochs', async () => {
  const dir = tempDataDir('repl-reset-stream');
  try {
    journaledRun(dir, 21, 200).writer.close();
    const before = planRecovery(dir, { repair: false }).lastSeq;
    assert.ok(before > 100);
    writeNodeState(dir, { primary_epoch: 3 });
    const outcome = await reconcileOn(dir).then(() => 'started', (e: Error) => `refused: ${e.message}`);
    const after = planRecovery(dir, { repair: false }).lastSeq;
    assert.equal(after, before, `reconcile ${outcome}, and the journal now ends at seq ${after} (was ${before}); ` +
      `${segmentFiles(dir).length} segments left`);
    assert.match(outcome, /^refused/);
  } finally {
    removeDataDir(dir);
  }
});

test('reconcile: a standby\'s journal ahead of an empty stream is refused (as documented), and kept', async () => {
  const dir = tempDataDir('repl-reset-stream');
  try {
    journaledRun(dir, 21, 200).writer.close();
    const before = planRecovery(dir, { repair: false }).lastSeq;
    await assert.rejects(reconcileOn(dir), /does not belong to this log/);
    assert.equal(planRecovery(dir, { repair: false }).lastSeq, before);
  } finally {
    removeDataDir(dir);
  }
});
