// startHello: the hello-world peer (hello_server.ts) as a child process on a
// port the kernel picks, for benchmarks and tools that measure the load
// generator and its transports alone. Main thread of the parent process.

import { fileURLToPath } from 'node:url';
import { NodeChild } from '../child.js';

const HELLO_JS = fileURLToPath(new URL('./hello_server.js', import.meta.url));

export interface HelloServer {
  child: NodeChild;
  port: number;
  url: string;
}

/** `uws` (default): uWebSockets.js, the exchange's own server; `http`: node:http. */
export async function startHello(kind: 'uws' | 'http' = 'uws'): Promise<HelloServer> {
  const child = new NodeChild('hello_server', [HELLO_JS, '--kind', kind, '--port', '0']);
  try {
    const m = await child.waitForLine(/^([0-9]+)$/, 10_000);
    const port = Number(m[1]);
    return { child, port, url: `http://127.0.0.1:${port}` };
  } catch (e) {
    await child.kill();
    throw e;
  }
}
