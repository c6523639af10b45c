// start: wires the demo into the exchange process (main() of
// src/main/exchange.ts calls startDemoFor when DX_DEMO is on and hands it
// the listeners' addresses, the data dir, the round length and its
// structured log). A demo that cannot start is logged and left out; the
// exchange keeps serving. Main thread.

import { closeFetchConnections } from '../client/transport.js';
import { startDemo, type DemoOptions, type RunningDemo } from './demo.js';

/** What the exchange process tells the demo about itself. */
export interface DemoLaunch {
  /** Listen addresses as configured (0.0.0.0 and :: are dialled on loopback). */
  host: string;
  port: number;
  admin_host: string;
  admin_port: number;
  admin_token: string;
  data_dir: string;
  /** Round length of the demo series, seconds. */
  period_s: number;
  /** The process's structured log (the demo's lines carry thread "demo"). */
  log: DemoOptions['log'];
}

/** A host to connect to: listening on every address means connecting to loopback. */
function dialHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export async function startDemoFor(o: DemoLaunch): Promise<RunningDemo | null> {
  try {
    const demo = await startDemo({
      apiUrl: `http://${dialHost(o.host)}:${o.port}`,
      adminUrl: `http://${dialHost(o.admin_host)}:${o.admin_port}`,
      adminToken: o.admin_token,
      dataDir: o.data_dir,
      period_s: o.period_s,
      log: (level, f) => o.log(level, { thread: 'demo', ...f }),
    });
    const stop = demo.stop;
    demo.stop = async () => {
      await stop();
      await closeFetchConnections();
    };
    return demo;
  } catch (e) {
    o.log('error', { event: 'demo_failed', error: (e as Error).stack ?? String(e) });
    return null;
  }
}
