// wrk: the uWS hello-world ceiling measured with wrk (Debian's /usr/bin/wrk,
// C, epoll), beside the load generator's own figure: what the server can do
// when the generator costs as little as a generator can. wrk runs under
// `sh`, which reads its own /proc stat after waiting for wrk: the shell's
// cutime + cstime are wrk's CPU (a child's /proc entry is gone once it has
// been reaped, so it cannot be read from here). Main thread of the bench runner.

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

export const WRK = '/usr/bin/wrk';

export interface WrkResult {
  requests_per_s: number;
  requests: number;
  /** wrk's own CPU (user + system, all its threads), ms. */
  cpu_ms: number;
  wall_ms: number;
  /** Non-2xx/3xx answers and socket errors wrk reported. */
  errors: number;
}

export function wrkAvailable(): boolean {
  return existsSync(WRK);
}

const SCRIPT = `${WRK} "$@"; rc=$?; read -r s < /proc/$$/stat; echo "SHSTAT $s"; exit $rc`;

/** wrk -t threads -c connections -d seconds against url; rejects when wrk fails. */
export function runWrk(url: string, opts: { threads: number; connections: number; durationMs: number }): Promise<WrkResult> {
  const args = [
    '-c',
    SCRIPT,
    'wrk',
    '-t',
    String(opts.threads),
    '-c',
    String(opts.connections),
    '-d',
    `${Math.max(1, Math.round(opts.durationMs / 1000))}s`,
    url,
  ];
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn('/bin/sh', args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => {
      const wall = performance.now() - t0;
      const rate = /Requests\/sec:\s+([0-9.]+)/.exec(out);
      const total = /([0-9]+) requests in/.exec(out);
      const st = /^SHSTAT (.*)$/m.exec(out);
      if (code !== 0 || rate === null || total === null || st === null) {
        reject(new Error(`wrk failed (exit ${code}): ${out.slice(-500)} ${err.slice(-500)}`));
        return;
      }
      // Fields after ")": state is f[0], so cutime (16) is f[13] and cstime (17) is f[14]; 10 ms ticks.
      const f = st[1]!.slice(st[1]!.lastIndexOf(')') + 2).split(' ');
      const cpu = (Number(f[13]) + Number(f[14])) * 10;
      const non2xx = /Non-2xx or 3xx responses:\s+([0-9]+)/.exec(out);
      const sock = /Socket errors: connect ([0-9]+), read ([0-9]+), write ([0-9]+), timeout ([0-9]+)/.exec(out);
      const errors = (non2xx ? Number(non2xx[1]) : 0) + (sock ? Number(sock[1]) + Number(sock[2]) + Number(sock[3]) + Number(sock[4]) : 0);
      resolve({ requests_per_s: Number(rate[1]), requests: Number(total[1]), cpu_ms: cpu, wall_ms: Math.round(wall), errors });
    });
  });
}
