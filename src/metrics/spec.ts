// spec: the route labels of GET /metrics, built from the route tables of the
// three HTTP listeners (REST lane with its MCP endpoint, accounts service,
// control plane). Main thread: it imports the tables; worker threads receive
// the resulting plain MetricsSpec in workerData and never import this file.

import { KEY_ROUTES } from '../keys_service/routes.js';
import { ADMIN_ROUTES } from '../admin/admin.js';
import { ROUTES } from '../gateway/routes.js';
import type { MetricsSpec } from './metrics.js';

export { SLICE_ACCOUNTS, SLICE_CONTROL, SLICE_GATEWAY0 } from './metrics.js';

export function metricsSpec(): MetricsSpec {
  return {
    lanes: [
      { lane: 'admin', routes: ADMIN_ROUTES.map((r) => r.name) },
      { lane: 'accounts', routes: KEY_ROUTES.map((r) => r.name) },
      { lane: 'rest', routes: [...ROUTES.map((r) => r.name), 'mcp'] },
    ],
  };
}

export function sliceNames(gateways: number): string[] {
  return ['control', 'accounts', ...Array.from({ length: gateways }, (_v, i) => `gateway-${i}`)];
}
