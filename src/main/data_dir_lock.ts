// DataDirLock: one exchange per data directory. Two processes appending to
// one journal would interleave their segments, and each would acknowledge
// writes the other's next recovery cuts as a torn tail: a second start on a
// directory in use must be refused before it reads or truncates anything.
//
// The lock is a file, `<data_dir>/LOCK`, made atomically with its content
// (written to a file of the start's own, then hard-linked as LOCK, which
// fails if LOCK exists) and holding its owner: pid, the process's start time from /proc (so a pid
// reused after a crash or a reboot is not taken for the owner), host and
// when it was taken. A start that finds the file asks whether the owner
// still runs: on this host, with a live pid and the same start time, the
// start is refused with an error naming the owner; otherwise the lock is
// stale (SIGKILL, power loss) and is taken over, one start at a time (under
// `LOCK.takeover`, made the same way), which the caller logs. A
// lock taken on another host (a shared file system) is never taken over:
// the operator removes it once that exchange is stopped. Within one process
// a second exchange on the same directory is refused the same way.
//
// Main thread only (start and stop).

import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, realpathSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'LOCK';
/** Exit status of a start refused because the directory is in use (sysexits EX_CANTCREAT: the lock cannot be created). */
export const EXIT_IN_USE = 73;

interface Owner {
  pid: number;
  /** Field 22 of /proc/<pid>/stat (clock ticks since boot), or null where there is no /proc. */
  start: string | null;
  host: string;
  taken_at: string;
}

/** Data directories locked by this process (a second exchange here is refused too). */
const heldHere = new Set<string>();

function startTimeOf(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) is in parentheses and may hold spaces: count the fields after its closing one.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
}

/**
 * True when pid has exited and only waits for its parent to reap it (state Z or X in /proc/<pid>/status): a SIGKILLed
 * exchange whose supervisor has not called wait() yet. It has no threads and no open files: it holds nothing.
 */
function exitedUnreaped(pid: number): boolean {
  try {
    // Threads 1 too: a main thread that ended alone shows Z while its other threads still run.
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    return /^State:\s*[ZX]/m.test(status) && /^Threads:\s*1$/m.test(status);
  } catch (e) {
    // No /proc, or another user's entry hidden (hidepid): not known to have exited, as before.
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'EACCES' || code === 'EPERM') return false;
    throw e;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: the process exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readOwner(path: string): Owner | null {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  try {
    const o = JSON.parse(text) as Partial<Owner>;
    if (typeof o.pid === 'number' && typeof o.host === 'string') {
      return { pid: o.pid, start: typeof o.start === 'string' ? o.start : null, host: o.host, taken_at: String(o.taken_at ?? '') };
    }
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
  }
  // Empty or unreadable: a start killed between creating the file and writing it.
  return { pid: 0, start: null, host: hostname(), taken_at: '' };
}

/** Why `o` still holds the directory, or null when its lock is stale. */
function holding(dir: string, o: Owner): string | null {
  const who = `pid ${o.pid} on ${o.host}, since ${o.taken_at || 'an unknown time'}`;
  if (o.host !== hostname()) {
    return `${who}: a lock taken on another host is not taken over; remove ${LOCK_FILE} once that exchange stopped`;
  }
  if (o.pid === process.pid) return heldHere.has(dir) ? `${who}: another exchange of this process` : null;
  if (o.pid <= 0 || !alive(o.pid) || exitedUnreaped(o.pid)) return null;
  const start = startTimeOf(o.pid);
  return o.start === null || start === null || start === o.start ? who : null;
}

function inUse(dir: string, path: string, why: string): Error {
  return Object.assign(new Error(`the data directory ${dir} is in use by ${why}`), { code: 'EBUSY', path });
}

/** link(from, to): true when it made `to`, false when `to` exists (atomic: exactly one of several starts makes it). */
function linked(from: string, to: string): boolean {
  try {
    linkSync(from, to);
    return true;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw e;
  }
}

function unlinkIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
}

function sameOwner(a: Owner, b: Owner): boolean {
  return a.pid === b.pid && a.start === b.start && a.host === b.host && a.taken_at === b.taken_at;
}

/**
 * Replaces the stale lock of `stale` with this start's (`mine`, its owner written), one start at a time: the takeover
 * is guarded by `LOCK.takeover`, linked as LOCK is. Under it, LOCK is removed only if it still names the stale owner,
 * so two starts that both found it stale never both remove a lock (the second would remove the first's new one).
 * False when another start is taking over or won: the caller reads LOCK again.
 */
function takeOver(dir: string, path: string, mine: string, stale: Owner): boolean {
  const guard = `${path}.takeover`;
  if (!linked(mine, guard)) {
    const g = readOwner(guard);
    if (g !== null && holding(dir, g) !== null) throw inUse(dir, path, `another start taking the lock over (${g.pid})`);
    // A start that died while taking over (rare: between two links): its guard is stale too. Another start may remove
    // it first (ENOENT: retry). Left open: two starts that both read the same stale guard can each remove one, the
    // second removing the first's new guard (a start died mid-takeover and two more start within moments).
    if (g !== null) unlinkIfThere(guard);
    return false;
  }
  try {
    const now = readOwner(path);
    if (now !== null && !sameOwner(now, stale)) return false;
    if (now !== null) unlinkIfThere(path);
    return linked(mine, path);
  } finally {
    unlinkIfThere(guard);
  }
}

export class DataDirLock {
  private released = false;

  private constructor(
    readonly dir: string,
    readonly path: string,
    /** The stale owner this start took over from, if any. */
    readonly tookOver: Owner | null,
  ) {}

  /** Takes the lock of `dir` (an absolute path that exists) or throws an error naming the process that holds it. */
  static take(given: string): DataDirLock {
    // One name per directory: heldHere must see the same directory through a symlink or another spelling.
    const dir = realpathSync(given);
    const path = join(dir, LOCK_FILE);
    const me: Owner = { pid: process.pid, start: startTimeOf(process.pid), host: hostname(), taken_at: new Date().toISOString() };
    // The owner is written to a file of this start's own first, then linked in place: LOCK never exists without its
    // owner, so a start that finds it always reads who holds it (an empty LOCK is left only by a power cut).
    const mine = join(dir, `.${LOCK_FILE}-${process.pid}-${randomBytes(6).toString('hex')}`);
    const fd = openSync(mine, 'wx', 0o644);
    try {
      writeSync(fd, `${JSON.stringify(me)}\n`);
    } catch (e) {
      // A full disk or a file-size limit: leave nothing behind, and let the caller report the storage fault.
      closeSync(fd);
      unlinkSync(mine);
      throw e;
    }
    closeSync(fd);
    try {
      for (let attempt = 0; attempt < 3; attempt++) {
        if (linked(mine, path)) {
          heldHere.add(dir);
          return new DataDirLock(dir, path, null);
        }
        const o = readOwner(path);
        if (o === null) continue; // its owner just released it
        const why = holding(dir, o);
        if (why !== null) throw inUse(dir, path, why);
        if (takeOver(dir, path, mine, o)) {
          heldHere.add(dir);
          return new DataDirLock(dir, path, o);
        }
      }
    } finally {
      unlinkSync(mine);
    }
    throw inUse(dir, path, 'another start at the same moment');
  }

  /** Gives the directory up (idempotent); the file is removed only while it still names this process. */
  release(): void {
    if (this.released) return;
    this.released = true;
    heldHere.delete(this.dir);
    const o = readOwner(this.path);
    if (o !== null && o.pid === process.pid && o.host === hostname()) unlinkSync(this.path);
  }
}
