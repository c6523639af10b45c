// Storage faults: how a failed write, fdatasync or file creation is told
// apart from our own bugs and reported, and the one fault switch tests use to
// make an fdatasync fail (the kernel gives no unprivileged way to do that;
// write failures are produced for real, with RLIMIT_FSIZE or a full tmpfs).
// Journal thread, piscina snapshot worker and the main thread (start-up).

import { fdatasyncSync, writeSync } from 'node:fs';

/** The writes the journal makes: node:fs, or a failing stand-in for tests. */
export interface JournalIo {
  write(fd: number, buf: Uint8Array, offset: number, length: number): number;
  fdatasync(fd: number): void;
}

export const FS_IO: JournalIo = {
  write: (fd, buf, offset, length) => writeSync(fd, buf, offset, length),
  fdatasync: (fd) => fdatasyncSync(fd),
};

/** errno codes that mean the storage refused (full, read-only, too large, failing, forbidden), not a bug of ours. */
const STORAGE_CODES = new Set(['ENOSPC', 'EDQUOT', 'EFBIG', 'EROFS', 'EIO', 'EACCES', 'EPERM', 'ENOTDIR', 'EISDIR', 'EMFILE', 'ENFILE']);

export interface StorageFault {
  code: string;
  syscall: string;
  path: string;
  message: string;
}

/** The storage fault an error reports, or null when it is something else (an assertion, a bug). */
export function storageFault(e: unknown): StorageFault | null {
  if (!(e instanceof Error)) return null;
  const x = e as NodeJS.ErrnoException;
  if (typeof x.code !== 'string' || !STORAGE_CODES.has(x.code)) return null;
  return { code: x.code, syscall: x.syscall ?? '', path: x.path ?? '', message: x.message };
}

/** Exit status of a fail-stop on a storage fault (sysexits EX_IOERR), so a supervisor can tell it from a crash. */
export const EXIT_STORAGE = 74;
/** Exit status of a fail-stop on anything else: the journal or the engine thread failed on an assertion, a bug (EX_SOFTWARE). */
export const EXIT_BUG = 70;

/**
 * DX_JOURNAL_FAULT=fdatasync@N (tests only): the journal's N-th fdatasync in
 * this process fails with EIO, as a dying disk's would. Unset: node:fs as is.
 */
export function journalIoFromEnv(spec: string | undefined): JournalIo {
  if (spec === undefined || spec === '') return FS_IO;
  const m = /^fdatasync@([1-9][0-9]*)$/.exec(spec);
  if (m === null) throw new Error(`DX_JOURNAL_FAULT: expected fdatasync@N (N >= 1), got ${JSON.stringify(spec)}`);
  const failAt = Number(m[1]);
  let syncs = 0;
  return {
    write: FS_IO.write,
    fdatasync: (fd) => {
      if (++syncs === failAt) {
        const e = new Error(`EIO: i/o error, fdatasync (injected by DX_JOURNAL_FAULT=${spec})`);
        throw Object.assign(e, { code: 'EIO', errno: -5, syscall: 'fdatasync' });
      }
      FS_IO.fdatasync(fd);
    },
  };
}
