// The keys service's key-creation allowance and the client library's strictly
// increasing mutation timestamps, under a step of the wall clock shared by the
// client and the keys service (both on this process's main thread, as on one
// host; docs/ARCHITECTURE.md, "Wall-clock steps"). The clock first runs an
// hour fast (an operator, a resumed VM), then NTP steps it back to the true
// time: neither the allowance nor the clients' stamps may stay an hour ahead.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { DxApiError, KeysClient } from '../../src/client/index.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, type Key } from '../support/harness.js';

const HOUR = 3_600_000;
let tx: TestExchange;
const realNow = Date.now;

before(async () => {
  tx = await startTestExchange();
});
after(async () => {
  Date.now = realNow;
  await tx.stop();
});

async function failure(p: Promise<unknown>): Promise<DxApiError | null> {
  try {
    await p;
    return null;
  } catch (e) {
    if (e instanceof DxApiError) return e;
    throw e;
  }
}

test('keys: an account that used its creations while the clock ran an hour fast may create again within 6 s of the step back', async () => {
  const k: Key = await newAccount(tx);
  Date.now = () => realNow() + HOUR;
  try {
    const fast = new KeysClient({ baseUrl: tx.accountsBase, keyId: k.keyId, secret: k.secret });
    let made = 0;
    for (;;) {
      const e = await failure(fast.createKey({ label: `k${made}` }));
      if (e !== null) {
        assert.equal(e.code, 'rate_limited');
        break;
      }
      made++;
    }
    assert.equal(made, 20);
  } finally {
    Date.now = realNow; // NTP steps the clock back an hour
  }
  // A client that starts now (its own clock true, like the exchange's).
  const fresh = new KeysClient({ baseUrl: tx.accountsBase, keyId: k.keyId, secret: k.secret });
  const e = await failure(fresh.createKey({ label: 'after the step' }));
  const wait = e === null ? 0 : e.retryAfterMs ?? -1;
  const why = `after the step back: ${e?.message}; retry_after_ms ${wait} (the allowance refills one key every 6000 ms)`;
  assert.ok(e === null || wait <= 6000, why);
});

test('client: after the clock steps back an hour, a KeysClient that signed while fast still gets mutations through', async () => {
  const k: Key = await newAccount(tx);
  Date.now = () => realNow() + HOUR;
  let c: KeysClient;
  try {
    c = new KeysClient({ baseUrl: tx.accountsBase, keyId: k.keyId, secret: k.secret, now: () => Date.now() }); // the host's clock
    await c.createKey({ label: 'while fast' });
  } finally {
    Date.now = realNow;
  }
  // The same client object, right after the step (the exchange and the client agree on the time again).
  const e = await failure(c.createKey({ label: 'after the step' }));
  assert.equal(e, null, `a mutation after the step back: ${e?.message}`);
});

test('client: a DxClient whose clock steps back an hour stamps its mutations with the clock again', async () => {
  const { createServer } = await import('node:http');
  const { checkTimestamp } = await import('../../src/gateway/auth.js');
  const { DxClient } = await import('../../src/client/index.js');
  const why: (string | null)[] = [];
  // A server on the same host clock: the exchange's own timestamp check.
  const server = createServer((req, res) => {
    why.push(checkTimestamp(String(req.headers['dx-access-timestamp']), Date.now()));
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  try {
    const c = new DxClient({ baseUrl: `http://127.0.0.1:${port}`, keyId: 1, secret: Buffer.alloc(32, 1), now: () => Date.now() });
    Date.now = () => realNow() + HOUR;
    try {
      await c.cancelAll({});
    } finally {
      Date.now = realNow;
    }
    await c.cancelAll({});
    assert.deepEqual(why, [null, null], 'the second cancel-all (after the step back) is outside the server\'s window');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
});
