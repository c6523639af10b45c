// freePort: a TCP port that nothing on `host` holds right now, the kernel's
// pick for port 0, bound and released at once. The exchange uses it for the
// public port of several gateway threads (uWebSockets.js sets SO_REUSEPORT
// only for a non-zero port); tests, tools and benchmarks use it for the
// ports they hand to a server of their own. Binding with node:net first
// also fails on a port a stale uWS listener holds, where uWS itself would
// silently share it. Any thread with an event loop; never the engine.

import { createServer } from 'node:net';

export async function freePort(host = '127.0.0.1'): Promise<number> {
  return (await freePorts(1, host))[0]!;
}

/**
 * n distinct free ports: all n are held at once before any is released (one
 * port picked and released after another can come back twice).
 */
export async function freePorts(n: number, host = '127.0.0.1'): Promise<number[]> {
  const servers = Array.from({ length: n }, () => createServer());
  try {
    return await Promise.all(servers.map((s) => new Promise<number>((resolve, reject) => {
      s.unref();
      s.once('error', reject);
      s.listen(0, host, () => {
        const a = s.address();
        const port = typeof a === 'object' && a !== null ? a.port : 0;
        if (port > 0) resolve(port);
        else reject(new Error(`no port from listen(0) on ${host}`));
      });
    })));
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => (s.listening ? s.close(() => resolve()) : resolve()))));
  }
}
