// secret_file: writes a file that holds a secret (a key, the admin token) so
// that no one but the owner can read it at any moment: its mode is 0600
// before a byte of the secret is in it, also when the file was already there
// with a looser mode (open's mode applies only to a file it creates). Main
// thread of the exchange and of dx.

import { closeSync, fchmodSync, ftruncateSync, openSync, writeFileSync } from 'node:fs';

/** Replaces the contents of the open file `fd` with `text`, after making it 0600. */
export function writeSecretFd(fd: number, text: string): void {
  fchmodSync(fd, 0o600);
  ftruncateSync(fd, 0);
  writeFileSync(fd, text);
}

/** Writes `text` to `path` (created or replaced in place), mode 0600 before any of it is written. */
export function writeSecretFile(path: string, text: string): void {
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSecretFd(fd, text);
  } finally {
    closeSync(fd);
  }
}
