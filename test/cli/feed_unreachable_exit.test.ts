// `dx admin oracle feed --rounds n` against an exchange that cannot be
// reached: every tick fails before anything is sent, which the exit codes
// (docs/operations.md, "The dx CLI") call 3, as `dx admin oracle tick` exits.
// The feeder's error handler counts every failure as a refusal by the server
// ("tick from source 0 refused: fetch failed") and the command exits 1, which
// a script reads as "the exchange refused the ticks". No exchange; dx runs as
// a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/lib/free_port.js';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

function dx(args: string[], adminUrl: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [DX, ...args], {
      env: { PATH: process.env.PATH ?? '', DX_ADMIN_URL: adminUrl, DX_ADMIN_TOKEN: 'any-token' },
      timeout: 20_000,
    }, (err, stdout, stderr) => resolve({ code: err ? (err.code as number) : 0, stdout, stderr }));
  });
}

test('dx admin oracle feed against an unreachable exchange exits 3 (nothing sent), as oracle tick does, not 1 (refused)', async () => {
  const url = `http://127.0.0.1:${await freePort()}`;
  const tick = await dx(['admin', 'oracle', 'tick', '0', '65000'], url);
  assert.equal(tick.code, 3, tick.stderr);
  const feed = await dx(['admin', 'oracle', 'feed', '--sources', '0,1', '--rounds', '2', '--interval-ms', '10'], url);
  assert.doesNotMatch(feed.stderr, /refused: fetch failed/, 'nothing was refused: nothing reached the exchange');
  assert.equal(feed.code, 3, `exit ${feed.code}: ${feed.stderr}`);
});
