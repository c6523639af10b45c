// Public health answers for a load balancer in front of a replicated group,
// on every gateway thread's REST port, unauthenticated (they show no account
// data): GET /health is 200 with this node's role, epoch, applied seq and lag;
// GET /health/primary is the same body with 200 on the node that takes writes
// (the primary, or a node without replication) and 503 elsewhere, so a TCP
// load balancer can route writes by it. Gateway threads.

import { endHead } from './http.js';
import type { HttpResponse, TemplatedApp } from './uws.js';
import type { DurableSeq } from '../journal/durable.js';
import type { ReplicationStatus } from '../replication/status.js';

export interface HealthSource {
  status: ReplicationStatus | null;
  durable: DurableSeq | null;
  /** Seq of the last command this thread's read model applied. */
  appliedSeq: () => number;
}

export function healthBody(h: HealthSource): { writable: boolean; body: Record<string, unknown> } {
  const applied = h.appliedSeq();
  const s = h.status;
  if (s === null)
    return { writable: true, body: { role: 'off', as_of_seq: String(applied), durable_seq: String(h.durable?.get() ?? applied) } };
  const f = s.figures();
  const primarySeq = f.role === 'primary' ? applied : Math.max(applied, f.primary_seq);
  return {
    writable: s.writable,
    body: {
      role: f.role,
      epoch: f.epoch,
      as_of_seq: String(applied),
      durable_seq: String(h.durable?.get() ?? applied),
      primary_url: f.primary_url,
      primary_seq: String(primarySeq),
      lag_seqs: primarySeq - applied,
      lag_ms: f.role === 'primary' ? 0 : Math.round(f.lag_ms * 10) / 10,
    },
  };
}

export function mountHealth(app: TemplatedApp, h: HealthSource): void {
  const answer = (res: HttpResponse, primaryCheck: boolean, head = false): void => {
    const { writable, body } = healthBody(h);
    const ok = !primaryCheck || writable;
    const json = JSON.stringify(body);
    res.cork(() => {
      res
        .writeStatus(ok ? '200 OK' : '503 Service Unavailable')
        .writeHeader('content-type', 'application/json')
        .writeHeader('cache-control', 'no-store');
      // HEAD is GET without the body (RFC 9110 9.3.2): a load balancer may probe either way.
      if (head) endHead(res, Buffer.byteLength(json));
      else res.end(json);
    });
  };
  app.get('/health', (res) => answer(res, false));
  app.get('/health/primary', (res) => answer(res, true));
  app.head('/health', (res) => answer(res, false, true));
  app.head('/health/primary', (res) => answer(res, true, true));
}
