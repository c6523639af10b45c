// spec: the route labels of GET /metrics, built from the route tables of the
// three HTTP listeners (REST lane with its MCP endpoint, keys service,
// control plane) and the WebSocket lane's order commands, and the slices of
// the threads that answer them. Main thread: it imports the tables; worker
// threads receive the resulting plain MetricsSpec in workerData and never
// import this file.

import { KEY_ROUTES } from '../keys_service/routes.js';
import { ADMIN_ROUTES } from '../admin/admin.js';
import { ROUTES } from '../gateway/routes.js';
import { ORDER_COMMANDS } from '../ws/orders.js';
import type { MetricsSpec } from './metrics.js';

export { SLICE_ACCOUNTS, SLICE_CONTROL, SLICE_GATEWAY0 } from './metrics.js';

/**
 * Slice 0 the control plane (lane admin), 1 the keys service, 2 + i
 * gateway thread i (lane rest), then `ws-i` the same thread's WebSocket
 * order entry (lane ws).
 */
export function metricsSpec(gateways: number): MetricsSpec {
  return {
    lanes: [
      { lane: 'admin', routes: ADMIN_ROUTES.map((r) => r.name) },
      { lane: 'accounts', routes: KEY_ROUTES.map((r) => r.name) },
      { lane: 'rest', routes: [...ROUTES.map((r) => r.name), 'mcp'] },
      // WebSocket order entry: each JSON command, and every record of binary frames.
      { lane: 'ws', routes: [...Object.keys(ORDER_COMMANDS), 'binary'] },
    ],
    slices: [
      { name: 'control', lane: 'admin' },
      { name: 'accounts', lane: 'accounts' },
      ...Array.from({ length: gateways }, (_v, i) => ({ name: `gateway-${i}`, lane: 'rest' })),
      ...Array.from({ length: gateways }, (_v, i) => ({ name: `ws-${i}`, lane: 'ws' })),
    ],
  };
}
