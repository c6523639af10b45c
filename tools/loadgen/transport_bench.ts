// loadgen_transport_hello_throughput: which keep-alive HTTP client the load
// workers should use. Starts the hello-world peer (hello_server.ts, uWS by
// default) as its own process, runs a closed loop of plain `GET /` through
// runLoad with each transport in turn (interleaved rounds), and prints one
// JSON object: throughput, p50/p99/p99.9 and the generator's CPU per request.
// A measurement, never an assertion.
//
//   node dist/tools/loadgen/transport_bench.js [--connections 8] [--duration 3s]
//        [--rounds 2] [--server uws|http] [--workers 1]

import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runLoad } from './loadgen.js';
import { TRANSPORT_KINDS } from './transports.js';

function arg(name: string, dflt: string): string {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : dflt;
}

const connections = Number(arg('--connections', '8'));
const durationMs = parseFloat(arg('--duration', '3s')) * (arg('--duration', '3s').endsWith('ms') ? 1 : 1000);
const rounds = Number(arg('--rounds', '2'));
const server = arg('--server', 'uws');
const workers = Number(arg('--workers', '1'));

const child = spawn(process.execPath, [fileURLToPath(new URL('./hello_server.js', import.meta.url)), '--kind', server], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
const port = await new Promise<number>((resolve, reject) => {
  child.stdout.once('data', (b: Buffer) => resolve(Number(b.toString().trim())));
  child.once('exit', (code) => reject(new Error(`hello server exited with ${code}`)));
});

const rows: Record<string, { throughput_per_s: number[]; p50_ms: number[]; p99_ms: number[]; p999_ms: number[]; cpu_us_per_req: number[] }> = {};
try {
  for (let r = 0; r < rounds; r++) {
    for (const transport of TRANSPORT_KINDS) {
      const res = await runLoad({
        baseUrl: `http://127.0.0.1:${port}`,
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
  child.kill('SIGTERM');
}
process.stdout.write(
  JSON.stringify({ name: 'loadgen_transport_hello_throughput', server, connections, workers, duration_ms: durationMs, results: rows }, null, 2) + '\n',
);
