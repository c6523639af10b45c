// The data directory's lock (src/main/data_dir_lock.ts): a directory held by
// a running process (another one, or another exchange of this one) is
// refused with an error naming the holder; a lock left by a dead process, by
// a reused pid or by a start killed before it wrote the file is taken over;
// a lock from another host is never taken over; a lock of a killed process
// its parent has not reaped yet (a zombie) is taken over; release removes only a lock
// that still names this process; of two starts at the same moment exactly
// one gets the lock, fresh or stale. End to end: a second exchange process on a
// data directory in use exits 73 with one line naming the first, and a start
// after a SIGKILL takes the dead process's lock over and recovers.

import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DataDirLock, LOCK_FILE } from '../../src/main/data_dir_lock.js';
import { killOnExit } from '../support/child.js';
import { ExchangeProcess, spawnExchange } from '../support/exchange.js';

const LOCK_MODULE = new URL('../../src/main/data_dir_lock.js', import.meta.url).href;

function freshDir(): string {
  return mkdtempSync(join(tmpdir(), 'dx-lock-'));
}

function writeLock(dir: string, owner: Record<string, unknown> | string): void {
  writeFileSync(join(dir, LOCK_FILE), typeof owner === 'string' ? owner : JSON.stringify(owner));
}

/** A child process that takes the lock of `dir`, says so, and runs until killed. */
async function holder(dir: string): Promise<ChildProcess> {
  const code = `const { DataDirLock } = await import(${JSON.stringify(LOCK_MODULE)});
    DataDirLock.take(${JSON.stringify(dir)}); process.stdout.write('locked\\n'); setInterval(() => undefined, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
  killOnExit(child);
  await new Promise<void>((res, rej) => {
    child.stdout!.on('data', (b: Buffer) => {
      if (b.toString().includes('locked')) res();
    });
    child.once('exit', (c) => rej(new Error(`the holder exited ${c} before it locked`)));
  });
  return child;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((res) => child.once('exit', res));
}

test('data dir lock: a second exchange of this process is refused (a symlink too); release frees the directory, removes the file', () => {
  const dir = freshDir();
  try {
    const lock = DataDirLock.take(dir);
    assert.equal(lock.tookOver, null);
    const owner = JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number; host: string };
    assert.equal(owner.pid, process.pid);
    assert.equal(owner.host, hostname());
    assert.throws(() => DataDirLock.take(dir), (e: NodeJS.ErrnoException) => {
      assert.equal(e.code, 'EBUSY');
      assert.match(e.message, new RegExp(`in use by pid ${process.pid} .*another exchange of this process`));
      return true;
    });
    // However the directory is named (here through a symlink).
    const alias = `${dir}-alias`;
    symlinkSync(dir, alias);
    try {
      assert.throws(() => DataDirLock.take(alias), (e: NodeJS.ErrnoException) => e.code === 'EBUSY');
    } finally {
      rmSync(alias);
    }
    lock.release();
    lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), false);
    DataDirLock.take(dir).release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('data dir lock: a directory held by a running process is refused; once that process is killed its lock is taken over', async () => {
  const dir = freshDir();
  try {
    const child = await holder(dir);
    assert.throws(() => DataDirLock.take(dir), new RegExp(`in use by pid ${child.pid} on ${hostname()}`));
    child.kill('SIGKILL');
    await exited(child);
    const lock = DataDirLock.take(dir);
    assert.equal(lock.tookOver?.pid, child.pid, 'the dead holder\'s lock was taken over');
    lock.release();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('data dir lock: a live pid with another start time (a pid reused after a crash) and an empty file are stale', async () => {
  const dir = freshDir();
  const held = freshDir();
  const child = await holder(held);
  try {
    writeLock(dir, { pid: child.pid, start: '1', host: hostname(), taken_at: '2026-01-01T00:00:00Z' });
    const lock = DataDirLock.take(dir);
    assert.equal(lock.tookOver?.pid, child.pid);
    lock.release();
    writeLock(dir, '');
    DataDirLock.take(dir).release();
  } finally {
    child.kill('SIGKILL');
    await exited(child);
    rmSync(dir, { recursive: true, force: true });
    rmSync(held, { recursive: true, force: true });
  }
});

/** Two child processes that call take() on `dir` at the same moment; what each printed (TOOK or REFUSED). */
function race(dir: string): Promise<string[]> {
  const at = Date.now() + 300;
  const code = `const { DataDirLock } = await import(${JSON.stringify(LOCK_MODULE)});
    while (Date.now() < ${at}) {}
    try { DataDirLock.take(${JSON.stringify(dir)}); console.log('TOOK'); setTimeout(() => undefined, 300); }
    catch (e) { console.log('REFUSED ' + e.code); }`;
  return Promise.all([0, 1].map(() => new Promise<string>((res) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { stdio: ['ignore', 'pipe', 'inherit'] });
    killOnExit(child);
    let out = '';
    child.stdout!.on('data', (b: Buffer) => (out += b.toString()));
    child.once('exit', () => res(out.trim()));
  })));
}

test('data dir lock: of two starts at the same moment exactly one takes the lock, on a fresh directory and over a stale lock ' +
  '(the lock never exists without its owner, and takeovers go one at a time)', async () => {
  for (const stale of [false, true]) {
    for (let trial = 0; trial < 6; trial++) {
      const dir = freshDir();
      try {
        if (stale) writeLock(dir, { pid: 999_999_999, start: '1', host: hostname(), taken_at: 'then' });
        const outs = await race(dir);
        assert.deepEqual(outs.filter((o) => o === 'TOOK').length, 1, `${stale ? 'stale' : 'fresh'} trial ${trial}: ${outs.join(', ')}`);
        assert.ok(outs.some((o) => o === 'REFUSED EBUSY'), outs.join(', '));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
});

test('data dir lock: a lock taken on another host is never taken over, and release leaves a lock that is not its own', () => {
  const dir = freshDir();
  try {
    writeLock(dir, { pid: 1, start: null, host: 'elsewhere.example', taken_at: '2026-11-25T00:00:00Z' });
    assert.throws(() => DataDirLock.take(dir), /in use by pid 1 on elsewhere\.example.*another host is not taken over; remove LOCK/);
    rmSync(join(dir, LOCK_FILE));
    const lock = DataDirLock.take(dir);
    writeLock(dir, { pid: 1, start: null, host: 'elsewhere.example', taken_at: '' });
    lock.release();
    assert.equal(existsSync(join(dir, LOCK_FILE)), true, 'a lock naming another owner stays');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('data dir lock: a second exchange on a directory in use exits 73 naming the first; after a SIGKILL the next start takes over', {
  timeout: 120_000,
}, async () => {
  const dir = freshDir();
  try {
    const first = await spawnExchange({ data_dir: dir });
    const second = new ExchangeProcess({ data_dir: dir });
    const refused = await second.exited;
    assert.equal(refused.code, 73, second.stderrTail());
    assert.match(second.stderrTail(), new RegExp(`dx: cannot start: the data directory ${dir} is in use by pid ${first.pid} on `));
    assert.ok((await first.admin().createAccount()).account_id > 0, 'the first exchange runs on');
    await first.kill();
    const third = await spawnExchange({ data_dir: dir });
    const taken = third.events('data_dir_lock');
    assert.equal(taken.length, 1, JSON.stringify(taken));
    assert.equal((taken[0]!.stale_lock_taken_over as { pid: number }).pid, first.pid);
    const stopped = await third.stop();
    assert.equal(stopped.code, 0);
    assert.equal(existsSync(join(dir, LOCK_FILE)), false, 'a clean stop removes its lock');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('data dir lock: the lock of a SIGKILLed process that is still a zombie (not reaped by its parent) is stale', async () => {
  const dir = freshDir();
  const code = `const { DataDirLock } = await import(${JSON.stringify(LOCK_MODULE)});
    DataDirLock.take(${JSON.stringify(dir)}); process.stdout.write('locked\\n'); setInterval(() => undefined, 1000);`;
  // The holder's parent is `sleep` (the shell execs it): nothing ever waits for the holder, as with a supervisor that
  // restarts before it reaps, or a container whose PID 1 does not reap.
  const sh = spawn('sh', ['-c', `'${process.execPath}' --input-type=module -e "$HOLDER" & exec sleep 30`], {
    env: { ...process.env, HOLDER: code }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  try {
    await new Promise<void>((res, rej) => {
      sh.stdout!.on('data', (b: Buffer) => { if (b.toString().includes('locked')) res(); });
      sh.once('exit', (c) => rej(new Error(`exited ${c}`)));
    });
    const pid = (JSON.parse(readFileSync(join(dir, LOCK_FILE), 'utf8')) as { pid: number }).pid;
    process.kill(pid, 'SIGKILL');
    // A zombie once its last thread is gone: the leader shows Z while the killed process's other threads still exit.
    let status = '';
    for (let i = 0; i < 250 && !/^State:\s*Z[\s\S]*^Threads:\s*1$/m.test(status); i++) {
      await sleep(20);
      status = readFileSync(`/proc/${pid}/status`, 'utf8');
    }
    assert.match(status, /^State:\s*Z[\s\S]*^Threads:\s*1$/m, 'the killed holder is a zombie');
    const lock = DataDirLock.take(dir); // refused with EBUSY "in use by pid <zombie>" before the fix
    assert.equal(lock.tookOver?.pid, pid);
    lock.release();
  } finally {
    sh.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});
