// Review repro (sibling of head_keep_alive): a load balancer's health probe by
// HEAD (RFC 9110 9.3.2: HEAD is GET without the body) must see what GET sees.
// GET /health and /health/primary are registered with app.get only, so HEAD
// /health falls to the gateway's catch-all and answers 404 no such route: a
// probe by HEAD marks every node down.

import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { after, before, test } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { raw } from '../support/harness.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange({ demo: false });
});

after(async () => {
  await tx.stop();
});

test('HEAD /health and /health/primary answer as GET does, without a body, and the connection goes on', async () => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    for (const target of ['/health', '/health/primary']) {
      const get = await raw(tx.port, { method: 'GET', target, agent });
      const head = await raw(tx.port, { method: 'HEAD', target, agent });
      assert.equal(head.status, get.status, `HEAD ${target}`);
      assert.equal(head.text, '');
    }
    assert.equal((await raw(tx.port, { method: 'GET', target: '/health', agent })).status, 200);
  } finally {
    agent.destroy();
  }
});
