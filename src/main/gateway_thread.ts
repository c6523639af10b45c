// gateway_thread: entry point of one uWebSockets.js I/O thread. It serves
// REST on the shared port (listeners share the port, the kernel spreads
// connections), owns one command ring to the engine and one cursor on the
// event ring folded into its own read model. Never blocks: the event ring is
// drained from the event loop by GatewayCore's LoopWaitStrategy (promptly
// while requests are held, by its wait kind; parked on durable_seq's
// doorbell otherwise, so an idle thread uses no CPU).

import { parentPort, workerData } from 'node:worker_threads';
import { ReplayGuard } from '../gateway/auth.js';
import { TokenBuckets } from '../gateway/buckets.js';
import { GatewayCore } from '../gateway/core.js';
import { endHead, flushClientLog, mountRest, type LaneOptions } from '../gateway/http.js';
import { ROUTES } from '../gateway/routes.js';
import { mountSite, type StaticSite } from '../gateway/static_site.js';
import { uws, type ListenSocket } from '../gateway/uws.js';
import type { EngineConfig } from '../engine/config.js';
import { LAYOUT_FINGERPRINT } from '../layout/records.js';
import { CommandProducer } from '../ring/command_producer.js';
import { Doorbell } from '../ring/doorbell.js';
import { Views, type ViewsConfig } from '../views/views.js';
import { DurableSeq } from '../journal/durable.js';
import { recoverViews, type RecoveryPlan } from '../journal/recovery.js';
import { mountMcp } from '../mcp/http.js';
import { SLICE_GATEWAY0, sliceNamed, ThreadMetrics, type MetricsSpec } from '../metrics/metrics.js';
import { mountWs } from '../ws/lane.js';
import type { WaitKind } from '../ring/wait.js';
import { mountHealth } from '../gateway/health.js';
import { ReplicationStatus } from '../replication/status.js';
import type { WsConfig } from '../ws/protocol.js';
import { log } from './log.js';

export interface GatewayThreadData {
  index: number;
  producerId: number;
  consumerIndex: number;
  host: string;
  port: number;
  commandRing: SharedArrayBuffer;
  doorbell: SharedArrayBuffer;
  eventRing: SharedArrayBuffer;
  buckets: SharedArrayBuffer;
  replay: SharedArrayBuffer;
  engine: Partial<EngineConfig>;
  views: Partial<ViewsConfig>;
  response_budget_ms: number;
  shed_pending: number;
  /** The journal's durable_seq word: events are applied (and answered) only up to it. */
  durable: SharedArrayBuffer;
  /** SeqStamps of the engine (per round) and the journal (per group commit): the stage times of held requests. */
  sequenced_stamps: SharedArrayBuffer;
  durable_stamps: SharedArrayBuffer;
  /** How this thread waits for completions (src/ring/wait.ts). */
  wait: WaitKind;
  /** Snapshot plus journal to rebuild the read model from before listening (null: fresh). */
  recovery: RecoveryPlan | null;
  /** Metrics slices (src/metrics); this thread writes slice SLICE_GATEWAY0 + index (REST) and `ws-<index>` (WebSocket order entry). */
  metrics: SharedArrayBuffer;
  metrics_spec: MetricsSpec;
  /** WebSocket lane: per-key connection and subscription counts shared by the gateways (KeyCounts.allocate()). */
  ws_counts?: SharedArrayBuffer;
  /** WebSocket lane tunables (tests); defaults in src/ws/protocol.ts. */
  ws?: Partial<WsConfig>;
  /** With replication: the node's role and the primary's address (src/replication/status.ts). */
  replication?: SharedArrayBuffer | null;
  /** The trader page (read once by the main thread); null when not built. */
  site: StaticSite | null;
  /** Where it was looked for (the 404 names it). */
  site_dir: string;
}

const d = workerData as GatewayThreadData;
const u = uws();
const views = d.recovery === null ? new Views(d.engine, d.views) : recoverViews(d.recovery, d.engine, d.views);
// The cursor on the event ring opens after recovery and before any command
// can be sent (the main thread opens listeners only once every reader is in).
const replication = d.replication ? new ReplicationStatus(d.replication) : null;
const durable = new DurableSeq(d.durable);
const core = new GatewayCore({
  producerId: d.producerId, producer: new CommandProducer(d.commandRing, Doorbell.attach(d.doorbell), LAYOUT_FINGERPRINT),
  eventRing: d.eventRing,
  consumerIndex: d.consumerIndex, views, response_budget_ms: d.response_budget_ms, shed_pending: d.shed_pending,
  durable, replication, sequencedStamps: d.sequenced_stamps, durableStamps: d.durable_stamps, wait: d.wait,
});
const limits = { response_budget_ms: d.response_budget_ms };
const metrics = new ThreadMetrics(d.metrics, d.metrics_spec, SLICE_GATEWAY0 + d.index);
metrics.watch(core);
const app = u.App();
let stopping = false;
const laneOptions: LaneOptions = {
  stopping: () => stopping,
  core, buckets: new TokenBuckets(d.buckets, views), replay: new ReplayGuard(d.replay), limits, routes: ROUTES,
  log: (fields) => log('warn', { thread: `gateway-${d.index}`, ...fields }),
  observer: metrics,
};
// The WebSocket and MCP lanes first (exact paths before the REST lane's /v1/* wildcard): same options, same auth.
const wsLane = mountWs(app, {
  lane: laneOptions, uws: u, keyCounts: d.ws_counts ?? null, config: d.ws ?? {}, stopping: () => stopping,
  onConnections: (delta) => metrics.wsConnections(delta),
  observer: new ThreadMetrics(d.metrics, d.metrics_spec, sliceNamed(d.metrics_spec, `ws-${d.index}`)),
});
mountMcp(app, laneOptions);
mountHealth(app, { status: replication, durable, appliedSeq: () => {
  core.drain();
  return core.views.asOfSeq;
} });
mountRest(app, laneOptions);
// The trader page: static, unsigned; every /v1 route above still needs its signature.
mountSite(app, d.site, 'trader page', d.site_dir);
const NO_ROUTE = JSON.stringify({ error: { code: 'not_found', num: null, origin: 'gateway', message: 'no such route', details: null } });
app.any('/*', (res, req) => {
  const head = req.getCaseSensitiveMethod().toUpperCase() === 'HEAD';
  res.cork(() => {
    res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json');
    // A response to HEAD carries no body (RFC 9110 9.3.2): bytes after its head would be read as the next response.
    if (head) endHead(res, Buffer.byteLength(NO_ROUTE));
    else res.end(NO_ROUTE);
  });
});


let listenSocket: ListenSocket | null = null;
const listen = (): void => {
  app.listen(d.host, d.port, (ls) => {
    if (!ls) {
      parentPort?.postMessage({ type: 'error', message: `gateway ${d.index}: cannot listen on ${d.host}:${d.port}` });
      return;
    }
    listenSocket = ls;
    parentPort?.postMessage({ type: 'listening', port: u.us_socket_local_port(ls) });
  });
};
parentPort?.postMessage({ type: 'recovered', seq: views.asOfSeq });

parentPort?.on('message', (msg: { type: string }) => {
  if (msg.type === 'listen') return listen();
  if (msg.type !== 'stop') return;
  stopping = true;
  // Close the listen socket before the worker exits (exiting with a live
  // uWS listener aborts Node); held requests are answered by the drain,
  // WebSocket order commands too: their connections close (1001) once answered.
  if (listenSocket) u.us_listen_socket_close(listenSocket);
  listenSocket = null;
  const until = performance.now() + d.response_budget_ms;
  const finish = (): void => {
    core.drain();
    // One clock reading for both: every request held before the stop is due by `until`, so none is left held.
    const now = performance.now();
    core.expire(now);
    if (core.pending > 0 && now < until) {
      setTimeout(finish, 1);
      return;
    }
    // After the promise reactions of the last completions (JSON order answers are queued by them).
    setImmediate(closeThread);
  };
  const closeThread = (): void => {
    wsLane.close();
    core.close();
    // A flood's count of left-out log lines is written now: the thread may end within the flush timer's second.
    flushClientLog();
    // The thread ends by itself once uWS has no connection left: requests
    // arriving meanwhile get 503 with Connection: close, idle keep-alive
    // connections end at uWS's idle timeout (10 s).
    parentPort?.postMessage({ type: 'stopped' });
    parentPort?.close();
  };
  finish();
});
