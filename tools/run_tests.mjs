#!/usr/bin/env node
// run_tests: runs every dist/test/**/*.test.js with node:test (Node 20's test
// runner takes no glob patterns, and a bare directory would also load helper
// modules and worker fixtures as test files). Extra arguments go to node --test.

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith('.test.js')) out.push(p);
  }
  return out;
}

// Files ending .nats.test.js need a NATS server (/usr/sbin/nats-server):
// `npm run test:replication` runs them (`--nats`), `npm test` leaves them out.
const nats = process.argv.includes('--nats');
const files = collect('dist/test', []).filter((f) => f.endsWith('.nats.test.js') === nats);
if (files.length === 0) {
  console.error('run_tests: no dist/test/**/*.test.js files; run `npm run build` first');
  process.exit(1);
}
const args = ['--test', '--test-force-exit', nats ? '--test-concurrency=1' : '--test-concurrency=2', ...process.argv.slice(2).filter((a) => a !== '--nats'), ...files];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
