#!/usr/bin/env node
// run_tests: runs every dist/test/**/*.test.js with node:test (Node 20's test
// runner takes no glob patterns, and a bare directory would also load helper
// modules and worker fixtures as test files). Extra arguments go to node --test.
// Two suites need a system package, so `npm test` never picks them up and
// they run one file at a time:
// `--web` runs the browser suite, every dist/test/**/*.browser.js (Debian's chromium);
// `--nats` runs the replication suite, every dist/test/**/*.nats.test.js (nats-server).

import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

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
const args = ['--test', '--test-force-exit', `--test-concurrency=${web || nats ? 1 : 2}`, ...extra, ...files];

// The TAP stream passes through as it comes; each failed test's block is kept
// and printed again once the run ends, so the last lines of a long run (all a
// CI log's tail shows) name what failed. A custom node:test reporter cannot
// do it: --test-force-exit ends the process before a reporter's last write.
const MAX_BLOCK_LINES = 40;
const failed = [];
let block = null;
const child = spawn(process.execPath, args, { stdio: ['inherit', 'pipe', 'inherit'] });
const lines = createInterface({ input: child.stdout, crlfDelay: Infinity });
lines.on('line', (line) => {
  process.stdout.write(`${line}\n`);
  if (block !== null) {
    block.lines.push(line);
    if (line === `${block.indent}  ...`) {
      // A parent whose subtests failed says only that; the failed subtests have their own blocks.
      if (!block.lines.some((l) => l.includes("failureType: 'subtestsFailed'"))) failed.push(block.lines);
      block = null;
    }
    return;
  }
  const m = /^(\s*)not ok \d+ - /.exec(line);
  if (m) block = { indent: m[1], lines: [line] };
});
const [[code]] = await Promise.all([once(child, 'close'), once(lines, 'close')]);
if (failed.length > 0) {
  process.stdout.write(`# ${failed.length} failed test(s), again:\n`);
  for (const b of failed) {
    const shown = b.length > MAX_BLOCK_LINES ? [...b.slice(0, MAX_BLOCK_LINES), '  (cut)'] : b;
    for (const l of shown) process.stdout.write(`# | ${l}\n`);
  }
}
process.exit(code ?? 1);
