// `dx admin oracle feed` when its ticks get no outcome: against an exchange
// that cannot be reached every tick fails before anything is sent, which the
// exit codes (docs/operations.md, "The dx CLI") call 3, as `dx admin oracle
// tick` exits (the feed said "refused" and exited 1, which a script reads as
// "the exchange refused the ticks"); a tick answered 500 `internal` is exit 4,
// and with --json stdout is one JSON document (the error's), not the summary
// followed by it. No exchange, or a stub that answers 500; dx runs as a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
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

test('dx admin oracle feed --json with a tick answered 500 prints one JSON document and exits 4', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { code: 'internal', num: null, origin: 'gateway', message: 'boom', details: null } }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  try {
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
    const feed = await dx(['admin', 'oracle', 'feed', '--json', '--sources', '0', '--rounds', '1', '--interval-ms', '10'], url);
    assert.equal(feed.code, 4, `exit ${feed.code}: ${feed.stderr}`);
    assert.doesNotThrow(() => JSON.parse(feed.stdout), `stdout is one JSON document: ${feed.stdout}`);
  } finally {
    server.close();
  }
});
