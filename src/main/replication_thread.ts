// replication_thread: entry point of the replication worker (src/replication):
// the replicated log's reader and writer for this process. It owns the NATS
// connection of the log and heartbeats, feeds the event ring from the log on
// a standby or read replica, and publishes the event ring to the log on a
// primary (node.ts). Asynchronous: it never blocks its event loop.
//
// Messages to the main thread: ready, promoted {epoch}, step_down {reason},
// fault {error}, stopped. From it: stop (graceful: a primary publishes what
// is left and waits for the acknowledgements).

import { parentPort, workerData } from 'node:worker_threads';
import { ReplayGuard } from '../gateway/auth.js';
import { DurableSeq } from '../journal/durable.js';
import type { ReplicationConfig } from '../replication/log_client.js';
import { ReplicationNode } from '../replication/node.js';
import { ReplicationStatus } from '../replication/status.js';
import { EngineControl } from './engine_control.js';
import { log } from './log.js';

export interface ReplicationThreadData {
  mode: 'ha' | 'replica';
  cfg: ReplicationConfig;
  eventRing: SharedArrayBuffer;
  replicatorConsumer: number;
  durable: SharedArrayBuffer;
  status: SharedArrayBuffer;
  engineControl: SharedArrayBuffer | null;
  appliedSeq: number;
  dataDir: string;
  /** The gateways' replay table: its floor is raised before a promoted node takes writes. */
  replay: SharedArrayBuffer;
}

const d = workerData as ReplicationThreadData;
const post = (m: Record<string, unknown>): void => parentPort?.postMessage(m);
const node = new ReplicationNode({
  mode: d.mode, cfg: d.cfg, eventRing: d.eventRing, replicatorConsumer: d.replicatorConsumer, durable: new DurableSeq(d.durable),
  status: new ReplicationStatus(d.status), engine: d.engineControl === null ? null : new EngineControl(d.engineControl),
  appliedSeq: d.appliedSeq, dataDir: d.dataDir,
  log: (level, fields) => log(level, { thread: 'replication', ...fields }),
  beforeWritable: () => new ReplayGuard(d.replay).setNotBefore(Date.now()),
  onPromoted: (epoch) => post({ type: 'promoted', epoch }),
  onStepDown: (reason) => post({ type: 'step_down', reason }),
  onFault: (e) => post({ type: 'fault', error: e.stack ?? String(e) }),
});

parentPort?.on('message', (m: { type: string }) => {
  if (m.type !== 'stop') return;
  node.stop().then(() => {
    post({ type: 'stopped' });
    parentPort?.close();
  }, (e: unknown) => post({ type: 'fault', error: (e as Error).stack ?? String(e) }));
});

node.start().then(() => post({ type: 'ready' }), (e: unknown) => post({ type: 'fault', error: (e as Error).stack ?? String(e) }));
