// tools/journal verify beside a live server (docs/operations.md: "It can run
// beside a live server"): while the tool reads, the server goes on
// journaling, writes a snapshot at its durable seq and prunes (the snapshot
// task, src/journal/tasks.ts). The directory is sound at every moment, so the
// tool must not call it faulty (exit 1). The interleaving is forced: the tool
// runs as a child process with a module (--import) that pauses it at one
// readdir until this test has done the server's part. Test process, journal
// fixture, the snapshot task in process.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { JOURNAL_DIR } from '../../src/journal/format.js';
import { captureViews } from '../../src/journal/state_codec.js';
import { snapshot } from '../../src/journal/tasks.js';
import { Views } from '../../src/views/views.js';
import { JOURNAL_ENGINE_CONFIG, journaledRun, removeDataDir, segmentFiles, tempDataDir } from '../journal/journal_fixture.js';

const JOURNAL_TOOL = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));

/** Pauses the tool at its first readdir of HOOK_DIR (before or after the listing) until the file HOOK_GO exists. */
const HOOK = `
import fs from 'node:fs';
import { resolve } from 'node:path';
import { syncBuiltinESMExports } from 'node:module';
const real = fs.readdirSync;
let done = false;
const pause = () => {
  fs.writeFileSync(process.env.HOOK_PAUSED, '');
  const sleep = new Int32Array(new SharedArrayBuffer(4));
  while (!fs.existsSync(process.env.HOOK_GO)) Atomics.wait(sleep, 0, 0, 5);
};
fs.readdirSync = function (p, ...rest) {
  const mine = !done && resolve(String(p)) === process.env.HOOK_DIR;
  if (mine) done = true;
  if (mine && process.env.HOOK_WHEN === 'before') pause();
  const names = real.call(this, p, ...rest);
  if (mine && process.env.HOOK_WHEN === 'after') pause();
  return names;
};
syncBuiltinESMExports();
`;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * A journaled run of `count` commands in 16 KiB segments with a snapshot (the task, pruning) after each command in
 * `snapshotsAfter`; after command `pauseAt` the tool (verify) starts and is held at its first readdir of `hookDir`
 * (`when`), and released once the run is over (the server's part done meanwhile). Returns the tool's exit and output.
 */
async function verifyWhileLive(
  dir: string, o: { count: number; pauseAt: number; snapshotsAfter: number[]; hookDir: string; when: 'before' | 'after' },
): Promise<{ code: number; out: string }> {
  const hook = join(dir, 'hook.mjs');
  writeFileSync(hook, HOOK);
  const paused = join(dir, 'paused');
  const go = join(dir, 'go');
  const views = new Views(JOURNAL_ENGINE_CONFIG);
  let child: ReturnType<typeof spawn> | null = null;
  let out = '';
  const run = journaledRun(dir, 11, o.count, {
    segmentBytes: 16 << 10,
    onEvent: (m, at) => views.apply(m, at),
    each: (i, _engine, writer) => {
      if (o.snapshotsAfter.includes(i)) {
        writer.sync();
        const c = captureViews(views);
        snapshot({ dataDir: dir, seq: views.asOfSeq, tree: structuredClone(c.tree, { transfer: c.transfer }), fsync: false });
      }
      if (i !== o.pauseAt) return;
      writer.sync();
      child = spawn(process.execPath, ['--import', hook, JOURNAL_TOOL, 'verify', '--data-dir', dir,
        '--engine', JSON.stringify(JOURNAL_ENGINE_CONFIG)], {
        env: { HOOK_DIR: resolve(o.hookDir), HOOK_WHEN: o.when, HOOK_PAUSED: paused, HOOK_GO: go },
      });
      child.stdout!.on('data', (b: Buffer) => { out += b.toString(); });
      child.stderr!.on('data', (b: Buffer) => { out += b.toString(); });
      for (let t = 0; !existsSync(paused); t++) {
        assert.ok(t < 6000, 'the tool never reached the readdir it is paused at');
        sleepSync(5);
      }
    },
  });
  run.writer.close();
  writeFileSync(go, '');
  const c = child as ReturnType<typeof spawn> | null;
  assert.ok(c !== null);
  const code = await new Promise<number>((res) => c.on('close', (n) => res(n ?? -1)));
  return { code, out };
}

test('journal verify beside a live server: a snapshot written while it scans the segments is not "a lost segment"', async () => {
  const dir = tempDataDir('verify-live-snapshot');
  try {
    // The tool lists the segments at command 800, and reads them once the server has reached 1600 and snapshotted
    // there (one snapshot: nothing is pruned).
    const v = await verifyWhileLive(dir, {
      count: 1600, pauseAt: 800, snapshotsAfter: [1599], hookDir: join(dir, JOURNAL_DIR), when: 'after',
    });
    assert.equal(v.code, 0, `verify exit ${v.code} on a sound directory:\n${v.out}`);
  } finally {
    removeDataDir(dir);
  }
});

test('journal verify beside a live server: segments the snapshot task prunes while it reads are not a fault', async () => {
  const dir = tempDataDir('verify-live-prune');
  try {
    // The tool lists the segments at command 800; the server then snapshots at 1200 and 1599, and the second one
    // prunes the segments wholly before 1200.
    const v = await verifyWhileLive(dir, {
      count: 1600, pauseAt: 800, snapshotsAfter: [1200, 1599], hookDir: join(dir, JOURNAL_DIR), when: 'after',
    });
    assert.ok(segmentFiles(dir).length > 0);
    assert.equal(v.code, 0, `verify exit ${v.code} on a sound directory:\n${v.out}`);
  } finally {
    removeDataDir(dir);
  }
});
