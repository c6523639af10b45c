// journal_jobs: the piscina pool for the journal's off-thread work
// (src/journal/tasks.ts). Main thread. One worker: a snapshot at a time, and
// start-up checks before it.

import { Piscina } from 'piscina';
import type { RecoveryPlan } from '../journal/recovery.js';
import type { SnapshotArgs, SnapshotDone } from '../journal/tasks.js';

export class JournalJobs {
  private readonly pool = new Piscina({
    filename: new URL('../journal/tasks.js', import.meta.url).href, minThreads: 0, maxThreads: 1, idleTimeout: 10_000,
  });

  plan(dataDir: string): Promise<RecoveryPlan> {
    return this.pool.run({ dataDir }, { name: 'plan' }) as Promise<RecoveryPlan>;
  }

  snapshot(args: SnapshotArgs): Promise<SnapshotDone> {
    return this.pool.run(args, { name: 'snapshot' }) as Promise<SnapshotDone>;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
