// DataDirLock: one exchange per data directory. Two processes appending to
// one journal would interleave their segments, and each would acknowledge
// writes the other's next recovery cuts as a torn tail: a second start on a
// directory in use must be refused before it reads or truncates anything.
//
// The lock is a file, `<data_dir>/LOCK`, created exclusively (O_EXCL) and
// holding its owner: pid, the process's start time from /proc (so a pid
// reused after a crash or a reboot is not taken for the owner), host and
// when it was taken. A start that finds the file asks whether the owner
// still runs: on this host, with a live pid and the same start time, the
// start is refused with an error naming the owner; otherwise the lock is
// stale (SIGKILL, power loss) and is taken over, which the caller logs. A
// lock taken on another host (a shared file system) is never taken over:
// the operator removes it once that exchange is stopped. Within one process
// a second exchange on the same directory is refused the same way.
//
// Main thread only (start and stop).

import { hostname } from 'node:os';
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
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
  if (o.pid <= 0 || !alive(o.pid)) return null;
  const start = startTimeOf(o.pid);
  return o.start === null || start === null || start === o.start ? who : null;
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
  static take(dir: string): DataDirLock {
    const path = join(dir, LOCK_FILE);
    let stale: Owner | null = null;
    for (let attempt = 0; attempt < 2; attempt++) {
      let fd: number;
      try {
        fd = openSync(path, 'wx', 0o644);
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
        const o = readOwner(path);
        if (o === null) continue; // its owner just released it
        const why = holding(dir, o);
        if (why !== null) {
          throw Object.assign(new Error(`the data directory ${dir} is in use by ${why}`), { code: 'EBUSY', path });
        }
        stale = o;
        unlinkSync(path);
        continue;
      }
      const me: Owner = { pid: process.pid, start: startTimeOf(process.pid), host: hostname(), taken_at: new Date().toISOString() };
      try {
        writeSync(fd, `${JSON.stringify(me)}\n`);
      } catch (e) {
        // A full disk or a file-size limit: leave no lock behind, and let the caller report the storage fault.
        closeSync(fd);
        unlinkSync(path);
        throw e;
      }
      closeSync(fd);
      heldHere.add(dir);
      return new DataDirLock(dir, path, stale);
    }
    const e = new Error(`the data directory ${dir} is being locked by another start at the same moment`);
    throw Object.assign(e, { code: 'EBUSY', path });
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
