// Start-up with the configuration the launcher uses: `port: 0` (a fresh port
// chosen by the kernel) with two gateway threads, which uWebSockets.js can
// only share when the port is not 0, so the exchange picks one itself; and
// what a stop refuses once it has begun.
// Kept in a file of its own: when start-up fails half way, the engine and the
// first gateway thread are left running and cannot be stopped from here.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/gateway/envelope.js';
import { startTestExchange } from '../support/exchange.js';

test('startup: an exchange with two gateway threads starts on port 0 and serves on the chosen port', async () => {
  const tx = await startTestExchange({ gateways: 2, port: 0 });
  try {
    assert.ok(tx.port > 0);
    const r = await fetch(`${tx.base}/v1/exchange/status`);
    assert.equal(r.status, 401, 'the public listener answers (unsigned: 401)');
  } finally {
    await tx.stop();
  }
});

// The crash test once saw a POST /admin/snapshot on a kept-alive admin
// connection arrive after the stop had waited for the last snapshot: the
// task started on the snapshot pool the stop then closed, which aborted it
// (500 internal, snapshot_failed logged).
test('stop: a snapshot asked for once the stop has begun is refused 503 shed, not started on the pool the stop closes', async () => {
  const tx = await startTestExchange();
  try {
    const stopping = tx.ex.stop();
    await assert.rejects(tx.ex.snapshot(), (e: unknown) => e instanceof ApiError && e.code === 'shed' && e.status === 503);
    await stopping;
  } finally {
    await tx.stop();
  }
});
