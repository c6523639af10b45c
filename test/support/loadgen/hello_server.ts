// A hello-world peer for measuring the load generator and its transports
// alone: answers every request 201 with a small JSON body. Runs as its own
// process (so it does not share the generator's threads). Prints its port
// on the first line of stdout, then serves until SIGTERM / SIGINT.
//
//   node dist/test/support/loadgen/hello_server.js [--kind uws|http] [--port 0]
//
// `uws` (default) is uWebSockets.js, the exchange's own server, and refuses
// to run on the package's silent JavaScript fallback; `http` is node:http.

import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type * as UwsTypes from 'uWebSockets.js';
import { parseCommandLine } from '../../../src/lib/command_line.js';

const BODY = '{"order_id":"1","client_order_id":"1","status":"resting","seq":"1","filled_qty":0,"resting_qty":1,"fills":[]}';

const { values } = parseCommandLine(process.argv.slice(2), { kind: { type: 'string' }, port: { type: 'string' } }, { positionals: false });
const kind = values.kind ?? 'uws';
const port = Number(values.port ?? '0');

if (kind === 'uws') {
  const require = createRequire(import.meta.url);
  const uws = require('uWebSockets.js') as typeof UwsTypes;
  if (!Function.prototype.toString.call(uws.App).includes('[native code]')) {
    throw new Error('uWebSockets.js native module is not in use; refusing to measure its JavaScript fallback');
  }
  let listen: UwsTypes.us_listen_socket | false = false;
  uws
    .App()
    .any('/*', (res) => {
      // Drain the body (a placement carries one) before answering.
      res.onAborted(() => undefined);
      res.onData((_chunk, last) => {
        if (last) res.cork(() => res.writeStatus('201 Created').writeHeader('content-type', 'application/json').end(BODY));
      });
    })
    .listen('127.0.0.1', port, (s) => {
      if (!s) throw new Error(`cannot listen on 127.0.0.1:${port}`);
      listen = s;
      process.stdout.write(`${uws.us_socket_local_port(s)}\n`);
    });
  const stop = (): void => {
    if (listen) uws.us_listen_socket_close(listen);
    listen = false;
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else if (kind === 'http') {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end(BODY);
    });
  });
  server.keepAliveTimeout = 60_000;
  server.listen(port, '127.0.0.1', () => {
    const a = server.address();
    process.stdout.write(`${typeof a === 'object' && a !== null ? a.port : port}\n`);
  });
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
} else {
  throw new Error(`--kind is uws or http, got ${kind}`);
}
