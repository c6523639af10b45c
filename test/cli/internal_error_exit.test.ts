// `dx admin account create --deposit` when the deposit is answered 500
// `internal` ("the request may not have taken effect": its outcome is
// unknown). dx itself says so (src/cli/admin_commands.ts: "a 504, a 500 or no
// answer leaves it unknown") but exits 1, which `dx help` documents as
// "refused by the server"; 4 is "sent: a change it asked for may or may not
// have been made" (the 504 got it in a45d759). A stub control plane answers.
// Test process; dx runs as a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

test('dx: a deposit answered 500 internal (outcome unknown) exits 4, as a 504 does, not 1 (refused)', async () => {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/admin/accounts') {
        res.writeHead(201).end(JSON.stringify({ account_id: 9, seq: '41' }));
      } else if (req.method === 'POST' && req.url === '/admin/accounts/9/deposits') {
        res.writeHead(500).end(JSON.stringify({
          error: { code: 'internal', num: null, origin: 'gateway', details: null, message: 'internal error' },
        }));
      } else {
        res.writeHead(404).end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  try {
    const run = await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(process.execPath, [DX, 'admin', 'account', 'create', '--deposit', '5000'], {
        env: { PATH: process.env.PATH ?? '', DX_ADMIN_URL: `http://127.0.0.1:${port}`, DX_ADMIN_TOKEN: 't0ken-for-the-stub' },
        timeout: 20_000,
      }, (err, _out, stderr) => resolve({ code: err ? (err.code as number) : 0, stderr }));
    });
    assert.match(run.stderr, /may or may not have been made/, run.stderr);
    assert.equal(run.code, 4, `exit ${run.code} ("refused by the server") after saying the outcome is unknown: ${run.stderr}`);
  } finally {
    server.close();
  }
});
