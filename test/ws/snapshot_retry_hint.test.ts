// A user snapshot refused rate_limited (it costs a read token per 100 open
// orders, the command's own included): a client that waits the error's
// retry_after_ms gets its snapshot, rather than being refused forever.
// One exchange, two gateway threads.

import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { newAccount, newMarket, order, sleep } from '../support/harness.js';
import { WsClient } from './ws_client.js';

const BIG = { sustained_rate_per_s: 1_000_000, burst: 1_000_000 };
let tx: TestExchange;
const open: WsClient[] = [];

before(async () => {
  tx = await startTestExchange({ gateways: 2, demo: false });
});

after(async () => {
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

it('snapshot retry hint: waiting retry_after_ms after each refusal gets the user snapshot', async () => {
  const k = await newAccount(tx, { deposit: '10000000' });
  const m = await newMarket(tx);
  await tx.admin.setKeyTier(k.keyId, { tier: 'custom', read: BIG, write: BIG });
  // 320 open orders: a user snapshot costs min(4, burst 4 less 1) = 3 read tokens.
  for (let b = 0; b < 16; b++) await k.client.placeBatch(Array.from({ length: 20 }, (_, i) => order(m, { tick: 1 + i, qty: 1 })));
  await tx.admin.setKeyTier(k.keyId, { tier: 'custom', read: { sustained_rate_per_s: 2, burst: 4 }, write: BIG });
  const c = await WsClient.connect(tx, k); // 1 token
  open.push(c);
  const r = await c.call('subscribe', { channels: ['user'] }); // 3 tokens: the bucket is empty
  assert.equal(r.type, 'subscribed', JSON.stringify(r));
  const hints: number[] = [];
  const t0 = Date.now();
  for (;;) {
    const a = await c.call('update_subscription', { sid: r.msg.sid, action: 'get_snapshot' });
    if (a.type === 'ok') break;
    assert.equal(a.msg.name, 'rate_limited', JSON.stringify(a));
    hints.push(Number(a.msg.retry_after_ms));
    assert.ok(Date.now() - t0 < 6000, `still refused after ${Date.now() - t0} ms, waiting each hint: ${hints.join(', ')}`);
    await sleep(hints.at(-1)!);
  }
  // 3 tokens at 2/s are back 1.5 s after the subscribe; correct hints get there by the second try.
  assert.ok(hints.length <= 2, `snapshot after ${hints.length} refusals, hints ${hints.join(', ')}`);
});
