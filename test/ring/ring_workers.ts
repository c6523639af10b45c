// Starts ring_worker_fixture.js workers for the ring tests and collects
// their single result message. Test thread only.

import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { FixtureResult, FixtureRole } from './ring_worker_fixture.js';

export interface Started {
  readonly worker: Worker;
  readonly done: Promise<FixtureResult>;
}

/** A control buffer shared by the workers of one test (see the fixture header). */
export function newControl(): SharedArrayBuffer {
  return new SharedArrayBuffer(64);
}

export function startWorker(role: FixtureRole, ctl: SharedArrayBuffer): Started {
  const worker = new Worker(new URL('./ring_worker_fixture.js', import.meta.url), { workerData: { ...role, ctl } });
  const done = new Promise<FixtureResult>((resolve, reject) => {
    let got: FixtureResult | null = null;
    worker.on('message', (m: FixtureResult) => {
      got = m;
    });
    worker.on('error', reject);
    worker.on('exit', (code) => {
      if (got !== null) resolve(got);
      else reject(new Error(`${role.role} worker exited with code ${code} and no result`));
    });
  });
  return { worker, done };
}

export async function online(s: Started): Promise<void> {
  await once(s.worker, 'online');
}
