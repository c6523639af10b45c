// loadgen_transport_hello_throughput: which keep-alive HTTP client the load
// workers should use. Starts the hello-world peer
// (test/support/loadgen/hello_server.ts, uWS by default) as its own
// process, runs a closed loop of plain `GET /` through runLoad with each
// transport in turn (interleaved rounds), and prints one JSON object: throughput, p50/p99/p99.9 and the generator's CPU per request.
// A measurement, never an assertion.
//
//   node dist/tools/loadgen/transport_bench.js [--connections 8] [--duration 3s]
//        [--rounds 2] [--server uws|http] [--workers 1]

import { parseCommandLine } from '../../src/lib/command_line.js';
import { startHello } from '../../test/support/loadgen/hello.js';
import { runLoad } from '../../test/support/loadgen/loadgen.js';
import { TRANSPORT_KINDS } from '../../test/support/loadgen/transports.js';

const { values } = parseCommandLine(
  process.argv.slice(2),
  {
    connections: { type: 'string' },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    server: { type: 'string' },
    workers: { type: 'string' },
  },
  { positionals: false },
);
const connections = Number(values.connections ?? '8');
const duration = values.duration ?? '3s';
const durationMs = parseFloat(duration) * (duration.endsWith('ms') ? 1 : 1000);
const rounds = Number(values.rounds ?? '2');
const server = values.server ?? 'uws';
const workers = Number(values.workers ?? '1');

if (server !== 'uws' && server !== 'http') throw new Error(`--server is uws or http, got ${server}`);
const hello = await startHello(server);

const rows: Record<
  string,
  { throughput_per_s: number[]; p50_ms: number[]; p99_ms: number[]; p999_ms: number[]; cpu_us_per_req: number[] }
> = {};
try {
  for (let r = 0; r < rounds; r++) {
    for (const transport of TRANSPORT_KINDS) {
      const res = await runLoad({
        baseUrl: hello.url,
        keys: [],
        markets: [],
        mode: 'closed',
        connections,
        durationMs,
        mix: { place: 0, cancel: 0, read: 1 },
        path: 'hello',
        workers,
        transport,
      });
      const row = (rows[transport] ??= { throughput_per_s: [], p50_ms: [], p99_ms: [], p999_ms: [], cpu_us_per_req: [] });
      row.throughput_per_s.push(Math.round(res.throughput_per_s));
      row.p50_ms.push(res.latency_ms.p50);
      row.p99_ms.push(res.latency_ms.p99);
      row.p999_ms.push(res.latency_ms.p999);
      row.cpu_us_per_req.push(Math.round((res.generator_cpu.workers_ms * 1000) / Math.max(1, res.completed)));
    }
  }
} finally {
  await hello.child.terminate(5000);
}
process.stdout.write(
  JSON.stringify(
    { name: 'loadgen_transport_hello_throughput', server, connections, workers, duration_ms: durationMs, results: rows },
    null,
    2,
  ) + '\n',
);
