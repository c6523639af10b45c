// start: wires the demo into the exchange process (main() of
// src/main/exchange.ts calls startDemoFor when DX_DEMO is on): local URLs of
// the listeners, the data dir and the structured log. A demo that cannot
// start is logged and left out; the exchange keeps serving. Main thread.

import type { ExchangeConfig } from '../main/config.js';
import { closeFetchConnections } from '../client/transport.js';
import { log } from '../main/log.js';
import { startDemo, type RunningDemo } from './demo.js';

/** A host to connect to: listening on every address means connecting to loopback. */
function dialHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}


export async function startDemoFor(cfg: ExchangeConfig, ex: { port: number; admin_port: number; admin_token: string }): Promise<RunningDemo | null> {
  try {
    const demo = await startDemo({
      apiUrl: `http://${dialHost(cfg.host)}:${ex.port}`, adminUrl: `http://${dialHost(cfg.admin_host)}:${ex.admin_port}`, adminToken: ex.admin_token,
      dataDir: cfg.data_dir, period_s: cfg.demo_period_s, log: (level, f) => log(level, { thread: 'demo', ...f }),
    });
    const stop = demo.stop;
    demo.stop = async () => {
      await stop();
      await closeFetchConnections();
    };
    return demo;
  } catch (e) {
    log('error', { event: 'demo_failed', error: (e as Error).stack ?? String(e) });
    return null;
  }
}
