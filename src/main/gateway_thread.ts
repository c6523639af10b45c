// gateway_thread: entry point of one uWebSockets.js I/O thread. It serves
// REST on the shared port (listeners share the port, the kernel spreads
// connections), owns one command ring to the engine and one cursor on the
// event ring folded into its own read model. Never blocks: the event ring is
// drained from the event loop (a LoopPoller while requests are held, and a
// short interval otherwise so the engine is never held back by this reader).

import { parentPort, workerData } from 'node:worker_threads';
import { ReplayGuard } from '../gateway/auth.js';
import { TokenBuckets, READ_BUCKET, WRITE_BUCKET } from '../gateway/buckets.js';
import { GatewayCore } from '../gateway/core.js';
import { mountRest, type LaneOptions } from '../gateway/http.js';
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
import { SLICE_GATEWAY0, ThreadMetrics, type MetricsSpec } from '../metrics/metrics.js';
import { mountWs } from '../ws/lane.js';
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
  /** Snapshot plus journal to rebuild the read model from before listening (null: fresh). */
  recovery: RecoveryPlan | null;
  /** Metrics slices (src/metrics); this thread writes slice SLICE_GATEWAY0 + index. */
  metrics: SharedArrayBuffer;
  metrics_spec: MetricsSpec;
  /** WebSocket lane: per-key connection and subscription counts shared by the gateways (KeyCounts.allocate()). */
  ws_counts?: SharedArrayBuffer;
  /** WebSocket lane tunables (tests); defaults in src/ws/protocol.ts. */
  ws?: Partial<WsConfig>;
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
const core = new GatewayCore({
  producerId: d.producerId, producer: new CommandProducer(d.commandRing, Doorbell.attach(d.doorbell), LAYOUT_FINGERPRINT),
  eventRing: d.eventRing,
  consumerIndex: d.consumerIndex, views, response_budget_ms: d.response_budget_ms, shed_pending: d.shed_pending,
  durable: new DurableSeq(d.durable),
});
const limits = { read: READ_BUCKET, write: WRITE_BUCKET, response_budget_ms: d.response_budget_ms };
const metrics = new ThreadMetrics(d.metrics, d.metrics_spec, SLICE_GATEWAY0 + d.index, 'rest');
metrics.watch(core);
const app = u.App();
let stopping = false;
const laneOptions: LaneOptions = {
  stopping: () => stopping,
  core, buckets: new TokenBuckets(d.buckets), replay: new ReplayGuard(d.replay), limits, routes: ROUTES,
  log: (fields) => log('warn', { thread: `gateway-${d.index}`, ...fields }),
  observer: metrics,
};
// The WebSocket and MCP lanes first (exact paths before the REST lane's /v1/* wildcard): same options, same auth.
const wsLane = mountWs(app, {
  lane: laneOptions, uws: u, keyCounts: d.ws_counts ?? null, config: d.ws ?? {}, stopping: () => stopping,
  onConnections: (delta) => metrics.wsConnections(delta),
});
mountMcp(app, laneOptions);
mountRest(app, laneOptions);
// The trader page: static, unsigned; every /v1 route above still needs its signature.
mountSite(app, d.site, 'trader page', d.site_dir);
app.any('/*', (res) => {
  res.cork(() => {
    res.writeStatus('404 Not Found').writeHeader('content-type', 'application/json')
      .end(JSON.stringify({ error: { code: 'not_found', num: null, origin: 'gateway', message: 'no such route', details: null } }));
  });
});

const background = setInterval(() => {
  core.drain();
  core.expire(Date.now());
}, 2);

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
  wsLane.close();
  // Close the listen socket before the worker exits (exiting with a live
  // uWS listener aborts Node); held requests are answered by the drain.
  if (listenSocket) u.us_listen_socket_close(listenSocket);
  listenSocket = null;
  const until = Date.now() + d.response_budget_ms;
  const finish = (): void => {
    core.drain();
    core.expire(Date.now());
    if (core.pending > 0 && Date.now() < until) {
      setTimeout(finish, 1);
      return;
    }
    clearInterval(background);
    core.close();
    // The thread ends by itself once uWS has no connection left: requests
    // arriving meanwhile get 503 with Connection: close, idle keep-alive
    // connections end at uWS's idle timeout (10 s).
    parentPort?.postMessage({ type: 'stopped' });
    parentPort?.close();
  };
  finish();
});
