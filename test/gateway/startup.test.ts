// Start-up with the test configuration the harness would like to use:
// `port: 0` (a fresh port chosen by the kernel) with two gateway threads.
// Kept in a file of its own: when start-up fails half way, the engine and the
// first gateway thread are left running and cannot be stopped from here.

import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ADMIN_TOKEN, closeFetchConnections } from './harness.js';
import { defaults } from '../../src/main/config.js';
import { startExchange } from '../../src/main/exchange.js';

test('startup: an exchange with two gateway threads starts on port 0 and serves on the chosen port', async () => {
  const cfg = {
    ...defaults(), port: 0, accounts_port: 0, admin_port: 0, gateways: 2, admin_token: ADMIN_TOKEN,
    data_dir: mkdtempSync(join(tmpdir(), 'dx-gateway-startup-')),
  };
  const ex = await startExchange(cfg);
  try {
    assert.ok(ex.port > 0);
    const r = await fetch(`http://127.0.0.1:${ex.port}/v1/exchange/status`);
    assert.equal(r.status, 401, 'the public listener answers (unsigned: 401)');
  } finally {
    await closeFetchConnections();
    await ex.stop();
  }
});
