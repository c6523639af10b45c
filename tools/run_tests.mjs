#!/usr/bin/env node
// run_tests: runs every dist/test/**/*.test.js with node:test (Node 20's test
// runner takes no glob patterns, and a bare directory would also load helper
// modules and worker fixtures as test files). Extra arguments go to node --test.
// `--web` runs the browser suite instead: every dist/test/**/*.browser.js
// (they need Debian's chromium, so `npm test` never picks them up), one file
// at a time.

import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const web = process.argv.includes('--web');
const suffix = web ? '.browser.js' : '.test.js';

function collect(dir, out) {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) collect(p, out);
    else if (name.endsWith(suffix)) out.push(p);
  }
  return out;
}

const files = collect('dist/test', []);
if (files.length === 0) {
  console.error(`run_tests: no dist/test/**/*${suffix} files; run \`npm run build\` first`);
  process.exit(1);
}
const extra = process.argv.slice(2).filter((a) => a !== '--web');
const args = ['--test', '--test-force-exit', `--test-concurrency=${web ? 1 : 2}`, ...extra, ...files];
const r = spawnSync(process.execPath, args, { stdio: 'inherit' });
process.exit(r.status ?? 1);
