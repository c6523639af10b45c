// Start-up with the configuration the launcher uses: `port: 0` (a fresh port
// chosen by the kernel) with two gateway threads, which uWebSockets.js can
// only share when the port is not 0, so the exchange picks one itself.
// Kept in a file of its own: when start-up fails half way, the engine and the
// first gateway thread are left running and cannot be stopped from here.

import assert from 'node:assert/strict';
import { test } from 'node:test';
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
