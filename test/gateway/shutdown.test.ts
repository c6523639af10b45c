// Graceful shutdown without signals: RunningExchange.stop() resolves, closes
// every listener, answers what is held, and leaves nothing that keeps the
// process alive. The last check runs in a child process
// (shutdown_child.ts) that must exit by itself after stop().

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Agent } from 'node:http';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { startTestExchange } from '../support/exchange.js';
import { closeFetchConnections, newAccount, newMarket, order, raw, signedRaw, sleep } from '../support/harness.js';

function runChild(
  gateways: number,
): Promise<{ code: number | null; signal: string | null; out: string; err: string; exitedAfterStopMs: number }> {
  const file = fileURLToPath(new URL('./shutdown_child.js', import.meta.url));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [file, String(gateways)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DX_LOG_LEVEL: 'error' },
    });
    let out = '';
    let err = '';
    let stoppedAt = 0;
    const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (stoppedAt === 0 && out.includes('stopped')) stoppedAt = Date.now();
    });
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(killer);
      resolve({ code, signal, out, err, exitedAfterStopMs: stoppedAt === 0 ? -1 : Date.now() - stoppedAt });
    });
  });
}

test('shutdown: stop() resolves, and then the process exits by itself (no listener, worker or timer left)', async () => {
  const r = await runChild(2);
  assert.match(r.out, /stopped \d+/, `the child printed stopped (stderr: ${r.err})`);
  assert.equal(r.signal, null, `the child was not killed (${r.signal}); stderr: ${r.err}`);
  assert.equal(r.code, 0, r.err);
  assert.ok(r.exitedAfterStopMs >= 0 && r.exitedAfterStopMs < 2000, `exited ${r.exitedAfterStopMs} ms after stop()`);
  const stopMs = Number(/stopped (\d+)/.exec(r.out)![1]);
  assert.ok(stopMs < 3000, `stop() took ${stopMs} ms`);
});

test('shutdown: stop() closes the public, accounts and control-plane listeners', async () => {
  const tx = await startTestExchange();
  await newAccount(tx);
  await closeFetchConnections();
  await tx.stop();
  for (const port of [tx.port, tx.ex.accounts_port, tx.ex.admin_port]) {
    await assert.rejects(
      raw(port, { method: 'GET', target: '/v1/exchange/status' }),
      (e: NodeJS.ErrnoException) => e.code === 'ECONNREFUSED',
      `port ${port} is closed`,
    );
  }
});

test('shutdown: a request held when stop() is called is answered, and stop() still resolves', async () => {
  const tx = await startTestExchange({ response_budget_ms: 300 });
  const k = await newAccount(tx);
  const m = await newMarket(tx);
  await closeFetchConnections();
  tx.ex.pipeline.control.setPaused(true);
  const held = signedRaw(tx.port, k, 'POST', '/v1/portfolio/orders', JSON.stringify(order(m)));
  await sleep(50);
  const t0 = Date.now();
  await tx.stop();
  const stopMs = Date.now() - t0;
  const r = await held;
  assert.ok(r.status === 201 || r.status === 504, `the held placement was answered: ${r.status} ${r.text}`);
  assert.ok(stopMs < 3000, `stop() took ${stopMs} ms`);
});

test('shutdown: stop() resolves while a client keeps an idle keep-alive connection open', async () => {
  const tx = await startTestExchange();
  const k = await newAccount(tx);
  await closeFetchConnections();
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const r = await signedRaw(tx.port, k, 'GET', '/v1/portfolio/balance', undefined, { agent });
    assert.equal(r.status, 200);
    const stopped = tx.stop().then(() => true);
    const done = await Promise.race([stopped, sleep(2000).then(() => false)]);
    assert.ok(done, 'stop() resolved within 2 s although an idle client connection was open');
  } finally {
    agent.destroy();
    await tx.stop();
  }
});
