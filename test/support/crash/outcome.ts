// outcome: what an answer of the exchange says about a command, for checks
// that must tell "refused" from "may have landed" (the crash test, the
// restart tests). Main thread of the test or tool process.

import { setTimeout as sleep } from 'node:timers/promises';
import { DxApiError } from '../../../src/client/errors.js';

/**
 * - ok: 2xx, acknowledged (durable by contract);
 * - rejected: a core reject (origin `core`): sequenced, with no effect
 *   beyond a retained rejected order;
 * - refused: a gateway error (400/401/403/404/429/503): never sequenced;
 * - uncertain: no answer (transport error, client timeout), 504
 *   sequencing_timeout or a 5xx without our envelope: it may have landed.
 */
export type Outcome<T> =
  | { kind: 'ok'; body: T }
  | { kind: 'rejected'; status: number; code: string; details: Record<string, unknown> | null }
  | { kind: 'refused'; status: number; code: string; message: string }
  | { kind: 'uncertain'; why: string };

export async function attempt<T>(call: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { kind: 'ok', body: await call() };
  } catch (e) {
    if (e instanceof DxApiError) {
      if (e.origin === 'core') return { kind: 'rejected', status: e.status, code: e.code, details: e.details };
      if (e.origin === 'gateway' && e.status !== 504 && e.status !== 500) {
        return { kind: 'refused', status: e.status, code: e.code, message: e.body.message };
      }
      return { kind: 'uncertain', why: `${e.status} ${e.code}` };
    }
    const err = e as Error & { cause?: { code?: string; message?: string } };
    return { kind: 'uncertain', why: `${err.name}: ${err.cause?.code ?? err.cause?.message ?? err.message}` };
  }
}

/**
 * attempt() against an exchange that is up: a refusal for rate or shedding
 * (429, 503) is retried (20 times, 200 ms apart), no answer at all throws;
 * anything else is returned.
 */
export async function definite<T>(what: string, call: () => Promise<T>): Promise<Outcome<T>> {
  for (let i = 0; ; i++) {
    const out = await attempt(call);
    if (out.kind === 'refused' && (out.status === 429 || out.status === 503) && i < 20) {
      await sleep(200);
      continue;
    }
    if (out.kind === 'uncertain') throw new Error(`${what}: no definite answer from a running exchange (${out.why})`);
    return out;
  }
}
