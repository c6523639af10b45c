// A directory the exchange creates is fsynced into its parent, so that a power
// cut cannot lose the directory (and with it a journal synced inside it): the
// data directory at start-up, each directory makeDirDurable makes, and the data
// directory the replication node state is written into. The test watches the
// main thread's fsyncs by replacing node:fs's openSync and fsyncSync
// (syncBuiltinESMExports carries the replacement to the modules' named imports).

import assert from 'node:assert/strict';
import fs, { mkdtempSync, rmSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { makeDirDurable } from '../../src/journal/writer.js';
import { writeNodeState } from '../../src/replication/local_state.js';
import { startTestExchange } from '../support/exchange.js';

/** Runs body while recording the paths of the directories fsynced on this thread. */
async function syncedDirs(body: () => unknown): Promise<string[]> {
  const open = fs.openSync;
  const fsync = fs.fsyncSync;
  const paths = new Map<number, string>();
  const synced: string[] = [];
  fs.openSync = ((path: fs.PathLike, ...rest: unknown[]) => {
    const fd = (open as (...a: unknown[]) => number)(path, ...rest);
    paths.set(fd, String(path));
    return fd;
  }) as typeof fs.openSync;
  fs.fsyncSync = (fd: number) => {
    const p = paths.get(fd);
    if (p !== undefined && fs.statSync(p).isDirectory()) synced.push(p);
    fsync(fd);
  };
  syncBuiltinESMExports();
  try {
    await body();
  } finally {
    fs.openSync = open;
    fs.fsyncSync = fsync;
    syncBuiltinESMExports();
  }
  return synced;
}

function freshRoot(): string {
  return mkdtempSync(join(tmpdir(), 'dx-dirsync-'));
}

test('makeDirDurable syncs the parent of every directory it made, and nothing when the directory was there', async () => {
  const root = freshRoot();
  try {
    const made = await syncedDirs(() => makeDirDurable(join(root, 'a', 'b'), true));
    assert.deepEqual(made.sort(), [root, join(root, 'a')].sort());
    assert.deepEqual(await syncedDirs(() => makeDirDurable(join(root, 'a', 'b'), true)), []);
    assert.deepEqual(await syncedDirs(() => makeDirDurable(join(root, 'c'), false)), [], 'durability none syncs nothing');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('a start on a data directory that does not exist yet syncs its entry into the parent', async () => {
  const root = freshRoot();
  const dataDir = join(root, 'new', 'data');
  try {
    let stop = async (): Promise<void> => undefined;
    const synced = await syncedDirs(async () => {
      stop = (await startTestExchange({ data_dir: dataDir })).stop;
    });
    await stop();
    assert.ok(synced.includes(join(root, 'new')), `the data directory's parent was not synced: ${synced.join(', ')}`);
    assert.ok(synced.includes(root), `the parent of the new parent was not synced: ${synced.join(', ')}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test('the replication node state written into a new data directory syncs that directory into its parent', async () => {
  const root = freshRoot();
  try {
    const synced = await syncedDirs(() => writeNodeState(join(root, 'node'), { primary_epoch: 1 }));
    assert.ok(synced.includes(root), `the new directory's parent was not synced: ${synced.join(', ')}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
