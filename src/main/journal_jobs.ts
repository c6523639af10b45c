// journal_jobs: the piscina pool for the journal's off-thread work
// (src/journal/tasks.ts). Main thread. One worker: a snapshot at a time, and
// start-up checks before it. The worker lives as long as the exchange
// (minThreads 1): with a thread started per snapshot, a 30-minute soak saw
// the process's resident memory step up by 85 MiB at one snapshot and stay
// (a new thread gets a fresh malloc arena, which keeps its pages); one
// thread reuses its own, and a snapshot saves a thread start and a cold JIT.
// A snapshot's read model comes captured from the main thread (its buffers
// transferred, not copied): the worker keeps no state between tasks.

import { Piscina } from 'piscina';
import type { RecoveryPlan } from '../journal/recovery.js';
import type { SnapshotArgs, SnapshotDone } from '../journal/tasks.js';

export class JournalJobs {
  private readonly pool = new Piscina({
    filename: new URL('../journal/tasks.js', import.meta.url).href, minThreads: 1, maxThreads: 1, idleTimeout: 10_000,
  });

  plan(dataDir: string): Promise<RecoveryPlan> {
    return this.pool.run({ dataDir }, { name: 'plan' }) as Promise<RecoveryPlan>;
  }

  /** `transfer`: the buffers of args.tree (CapturedViews.transfer), moved to the worker. */
  snapshot(args: SnapshotArgs, transfer: ArrayBuffer[]): Promise<SnapshotDone> {
    return this.pool.run(args, { name: 'snapshot', transferList: transfer }) as Promise<SnapshotDone>;
  }

  close(): Promise<void> {
    return this.pool.destroy();
  }
}
