// The control plane and the keys service while the exchange stops: a request
// on a kept-alive connection after the stop's start is answered 503 shed
// (and its connection closed), as the REST lane answers it, instead of being
// held for an engine that no longer sequences anything and never answered.
// Test process; the exchange runs in it.

import assert from 'node:assert/strict';
import { Agent } from 'node:http';
import { test } from 'node:test';
import { ADMIN_TOKEN, startTestExchange } from '../support/exchange.js';
import { assertErrorReply, newAccount, raw, signHeaders, sleep, type RawReply } from '../support/harness.js';

function within(p: Promise<RawReply>, ms: number): Promise<RawReply | 'no answer'> {
  return Promise.race([p, sleep(ms).then(() => 'no answer' as const)]);
}

test('stop: a control-plane or keys-service request on a kept-alive connection during a stop is answered 503 shed', async () => {
  const tx = await startTestExchange({ response_budget_ms: 1000 });
  const k = await newAccount(tx);
  const h = { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' };
  const adminAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  const keysAgent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    // One request each first, so that the next ones come on connections opened before the stop.
    assert.equal((await raw(tx.ex.admin_port, { method: 'GET', target: '/admin/health', headers: h, agent: adminAgent })).status, 200);
    const g = signHeaders(k, 'GET', '/keys');
    assert.equal((await raw(tx.ex.accounts_port, { method: 'GET', target: '/keys', headers: g, agent: keysAgent })).status, 200);
    const stopping = tx.stop();
    await sleep(100);
    const body = JSON.stringify({ amount: '7', ref: 'during-stop' });
    const a = await within(raw(tx.ex.admin_port, {
      method: 'POST', target: `/admin/accounts/${k.accountId}/deposits`, body, headers: h, agent: adminAgent,
    }), 3000);
    const kb = JSON.stringify({ label: 'during-stop' });
    const s = await within(raw(tx.ex.accounts_port, {
      method: 'POST', target: '/keys', body: kb, agent: keysAgent,
      headers: { ...signHeaders(k, 'POST', '/keys', kb), 'content-type': 'application/json' },
    }).catch((e: Error) => ({ status: 0, headers: {}, text: e.message, json: undefined })), 3000);
    await stopping;
    assert.notEqual(a, 'no answer', 'control plane: no answer at all during the stop');
    assertErrorReply(a as RawReply, 503, 'shed');
    assert.notEqual(s, 'no answer', 'keys service: no answer at all during the stop');
    assertErrorReply(s as RawReply, 503, 'shed');
  } finally {
    adminAgent.destroy();
    keysAgent.destroy();
  }
});
