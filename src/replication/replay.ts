// replayHash: a fresh replay of the replicated log, for convergence checks:
// the newest snapshot object (or an empty state) plus every log entry after
// it, taken the way a follower takes them (continuity, epochs, checksums),
// folded into a read model, and its canonical state hash. At rest it equals
// GET /admin/state_hash of every node. tools/replication.js `hash` and the
// replication tests use it. Any thread of a tool or test (async I/O).

import type { EngineConfig } from '../engine/config.js';
import { checkSnapshot } from '../journal/snapshot.js';
import { decodeViews, stateHash } from '../journal/state_codec.js';
import { Header } from '../layout/records.js';
import { Views } from '../views/views.js';
import type { ScannedBatch } from './batch.js';
import { Follower } from './follower.js';
import { LogClient, type ReplicationConfig } from './log_client.js';
import { listSnapshotObjects, readSnapshotObject } from './snapshots.js';
import { ReplicationStatus } from './status.js';

/** The replay fails when the log makes no progress for this long. */
const REPLAY_STALL_MS = 10_000;

/** Applies log batches to a read model. */
class ViewsSink {
  constructor(readonly views: Views) {}

  async apply(b: ScannedBatch, afterSeq: number): Promise<void> {
    for (const o of b.offsets) if (Header.seq(b.mem, o) > afterSeq) this.views.apply(b.mem, o);
  }
}

export interface HashReport {
  seq: number;
  state_hash: string;
  snapshot: string | null;
  snapshot_seq: number;
  entries: number;
  stream_seq: number;
}

/**
 * Newest snapshot object plus the log after it, replayed and hashed. The
 * snapshot carries its engine configuration; without one the replay starts
 * from an empty state with `engine` (the server's, see engineConfigOf).
 */
export async function replayHash(cfg: ReplicationConfig, engine: Partial<EngineConfig>): Promise<HashReport> {
  const log = await LogClient.open(cfg, 'dx replication replay');
  try {
    const snap = (await listSnapshotObjects(log))[0];
    let views: Views;
    if (snap !== undefined) {
      const bytes = await readSnapshotObject(log, snap.name);
      const copy = new Uint8Array(new ArrayBuffer((bytes.length + 7) & ~7), 0, bytes.length);
      copy.set(bytes);
      views = decodeViews(checkSnapshot(copy, `${cfg.bucket}/${snap.name}`).body);
    } else {
      views = new Views(engine, {});
    }
    const base = views.asOfSeq;
    const at = await log.locate(base);
    const f = new Follower(log, new ViewsSink(views), new ReplicationStatus(ReplicationStatus.allocate('replica')), base, () => undefined);
    let entries = 0;
    if (at.streamSeq <= at.lastStreamSeq) {
      let failed: unknown = null;
      const run = f.run(at.streamSeq, 0).catch((e: unknown) => {
        failed = e;
      });
      // The consumer may sit on a NATS replica that is not current and deliver nothing (see readSnapshotObject): give up when the log stops
      // coming.
      let seen = f.streamSeq;
      let movedAt = performance.now(); // a duration: a wall-clock step is not a stall
      while (f.streamSeq < at.lastStreamSeq && failed === null) {
        await new Promise((r) => setTimeout(r, 5));
        if (f.streamSeq !== seen) [seen, movedAt] = [f.streamSeq, performance.now()];
        else if (performance.now() - movedAt > REPLAY_STALL_MS)
          failed = new Error(`replay: no log entry for ${REPLAY_STALL_MS} ms at stream seq ${f.streamSeq} of ${at.lastStreamSeq}`);
      }
      await f.stop();
      await Promise.race([run, new Promise((r) => setTimeout(r, 1000))]);
      if (failed !== null) throw failed;
      entries = f.streamSeq - at.streamSeq + 1;
    }
    return {
      seq: views.asOfSeq,
      state_hash: stateHash(views.state),
      snapshot: snap?.name ?? null,
      snapshot_seq: base,
      entries,
      stream_seq: f.streamSeq,
    };
  } finally {
    await log.close();
  }
}
