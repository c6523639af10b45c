#!/usr/bin/env node
// run_tests: runs every dist/test/**/*.test.js with node:test (Node 20's test
// runner takes no glob patterns, and a bare directory would also load helper
// modules and worker fixtures as test files). Extra arguments go to node --test.
// Two suites need a system package, so `npm test` never picks them up and
// they run one file at a time:
// `--web` runs the browser suite, every dist/test/**/*.browser.js (Debian's chromium);
// `--nats` runs the replication suite, every dist/test/**/*.nats.test.js (nats-server).

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const web = process.argv.includes('--web');
const nats = process.argv.includes('--nats');
const suffix = web ? '.browser.js' : nats ? '.nats.test.js' : '.test.js';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith(suffix) && (web || nats || !name.endsWith('.nats.test.js'))) out.push(p);
  }
  return out;
}

const files = collect('dist/test', []);
if (files.length === 0) {
  console.error(`run_tests: no dist/test/**/*${suffix} files; run \`npm run build\` first`);
  process.exit(1);
}
const extra = process.argv.slice(2).filter((a) => a !== '--web' && a !== '--nats');
const reporters = [
  '--test-reporter=tap', '--test-reporter-destination=stdout',
  `--test-reporter=${fileURLToPath(new URL('./test_failures.mjs', import.meta.url))}`, '--test-reporter-destination=stdout',
];
const args = ['--test', '--test-force-exit', `--test-concurrency=${web || nats ? 1 : 2}`, ...reporters, ...extra, ...files];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
