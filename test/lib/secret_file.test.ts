// secret_file (src/lib/secret_file.ts): a secret written over a file that was
// already there with a looser mode is never readable by others, not even for
// the moment between the write and a chmod after it: the file is 0600 when
// the first byte of the secret is written (watched by replacing node:fs's
// writeFileSync; syncBuiltinESMExports carries it to the module's import).

import assert from 'node:assert/strict';
import fs, { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeSecretFile } from '../../src/lib/secret_file.js';

test('writeSecretFile: a file that was 0644 is 0600 before the secret is written into it, and holds only the secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-secret-'));
  const file = join(dir, 'key.json');
  writeFileSync(file, 'an older and longer content', { mode: 0o644 });
  fs.chmodSync(file, 0o644);
  const real = fs.writeFileSync;
  const modes: number[] = [];
  fs.writeFileSync = ((target: fs.PathOrFileDescriptor, ...rest: unknown[]) => {
    if (typeof target === 'number') modes.push(fs.fstatSync(target).mode & 0o777);
    else if (fs.existsSync(target)) modes.push(statSync(target).mode & 0o777);
    return (real as (...a: unknown[]) => void)(target, ...rest);
  }) as typeof fs.writeFileSync;
  syncBuiltinESMExports();
  try {
    writeSecretFile(file, 'secret\n');
  } finally {
    fs.writeFileSync = real;
    syncBuiltinESMExports();
  }
  try {
    assert.deepEqual(modes, [0o600], 'the mode when the secret was written');
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.equal(readFileSync(file, 'utf8'), 'secret\n');
    rmSync(file);
    writeSecretFile(file, 'new\n');
    assert.deepEqual([statSync(file).mode & 0o777, readFileSync(file, 'utf8')], [0o600, 'new\n'], 'a file it creates');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
