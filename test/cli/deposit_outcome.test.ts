// `dx admin account create --deposit` when the deposit's outcome is unknown:
// after a 504 sequencing_timeout the deposit may still be sequenced, and a
// 500 internal "may not have taken effect", so the CLI must not tell the
// operator it was not made; it says the outcome is unknown and how to repeat
// it with its ref (credited at most once), and exits 4 ("sent: a change it
// asked for may or may not have been made"), not 1 ("refused by the
// server"). A stub control plane answers as the exchange does. Test process;
// dx runs as a child.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const DX = fileURLToPath(new URL('../../src/cli/dx.js', import.meta.url));

/** Runs the command against a stub control plane whose deposit answers `status` with `error`. */
async function createWithDeposit(status: number, error: object): Promise<{ code: number; stderr: string }> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.setHeader('content-type', 'application/json');
      if (req.method === 'POST' && req.url === '/admin/accounts') {
        res.writeHead(201).end(JSON.stringify({ account_id: 9, seq: '41' }));
      } else if (req.method === 'POST' && req.url === '/admin/accounts/9/deposits') {
        res.writeHead(status).end(JSON.stringify({ error: { num: null, origin: 'gateway', details: null, ...error } }));
      } else {
        res.writeHead(404).end('{}');
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as { port: number }).port;
  try {
    return await new Promise<{ code: number; stderr: string }>((resolve) => {
      execFile(process.execPath, [DX, 'admin', 'account', 'create', '--deposit', '5000'], {
        env: { PATH: process.env.PATH ?? '', DX_ADMIN_URL: `http://127.0.0.1:${port}`, DX_ADMIN_TOKEN: 't0ken-for-the-stub' },
        timeout: 20_000,
      }, (err, _out, stderr) => resolve({ code: err ? (err.code as number) : 0, stderr }));
    });
  } finally {
    server.close();
  }
}

test('dx: account create --deposit does not say the deposit was not made when its outcome is unknown (504, 500); exit 4', async () => {
  const answers: [number, object][] = [
    [504, { code: 'sequencing_timeout', message: 'No sequenced outcome within response_budget_ms; the command may still be sequenced.' }],
    [500, { code: 'internal', message: 'internal error' }],
  ];
  for (const [status, error] of answers) {
    const run = await createWithDeposit(status, error);
    assert.doesNotMatch(run.stderr, /deposit was not made/, run.stderr);
    assert.match(run.stderr, /may or may not have been made/, run.stderr);
    assert.match(run.stderr, /dx admin deposit 9 5000 --ref 'dx admin account create'/, run.stderr);
    assert.equal(run.code, 4, `${status}: exit ${run.code} after saying the outcome is unknown: ${run.stderr}`);
  }
});
