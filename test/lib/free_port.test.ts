// freePorts: n ports at once are distinct and each can be bound right after.
// Test process, main thread.

import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { freePort, freePorts } from '../../src/lib/free_port.js';

test('free_port: 30 ports taken at once are distinct and free; freePort gives one port', async () => {
  const ports = await freePorts(30);
  assert.equal(new Set(ports).size, 30, `duplicates in ${ports.join(',')}`);
  for (const p of ports) {
    const s = createServer();
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(p, '127.0.0.1', () => resolve());
    });
    await new Promise<void>((resolve) => s.close(() => resolve()));
  }
  const one = await freePort();
  assert.ok(Number.isInteger(one) && one > 0 && one < 65536);
});
