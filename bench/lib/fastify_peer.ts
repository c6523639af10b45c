// fastify_peer: the placement logic on Fastify / node:http
// (bench/peers/fastify_place.ts) as a child process on a fresh port, the
// peer gateway_place measures in the same run. Main thread of the bench
// runner.

import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/lib/free_port.js';
import { NodeChild } from '../../test/support/child.js';

const HOST = '127.0.0.1';
const FASTIFY_JS = fileURLToPath(new URL('../peers/fastify_place.js', import.meta.url));

export interface FastifyPeer {
  child: NodeChild;
  port: number;
  url: string;
  market_id: number;
  /** In-process set-up time of the peer (accounts, keys, deposits, seeded shares). */
  setup_ms: number;
  keys: { key_id: number; account_id: number; secret: string }[];
}

/**
 * The placement logic on Fastify / node:http (bench/peers/fastify_place.ts)
 * on a fresh port, with `keys` funded accounts holding `seed_shares` YES and
 * NO shares each (created by the peer itself, in-process).
 */
export async function startFastifyPeer(opts: {
  keys: number;
  seed_shares: number;
  deposit_cents?: number;
  nodeArgs?: string[];
}): Promise<FastifyPeer> {
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = new NodeChild('fastify_place', [
      ...(opts.nodeArgs ?? []),
      FASTIFY_JS,
      '--port',
      String(port),
      '--keys',
      String(opts.keys),
      '--seed-shares',
      String(opts.seed_shares),
      '--deposit',
      String(opts.deposit_cents ?? 100_000_000),
    ]);
    try {
      const m = await child.waitForLine(/^ready (\{.*\})$/, 60_000);
      const r = JSON.parse(m[1]!) as { port: number; market_id: number; setup_ms: number; keys: FastifyPeer['keys'] };
      if (r.port !== port) throw new Error(`fastify_place listens on ${r.port}, asked for ${port}`);
      return { child, port, url: `http://${HOST}:${port}`, market_id: r.market_id, setup_ms: r.setup_ms, keys: r.keys };
    } catch (e) {
      lastError = e as Error;
      await child.terminate(2000);
    }
  }
  throw lastError!;
}
