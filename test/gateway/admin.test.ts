// Control plane (docs/ARCHITECTURE.md section 8), black box: the operator listener of
// src/admin/admin.ts. Every request needs `Authorization: Bearer <token>`;
// JSON in and out, closed schemas, the REST lane's error envelope, u64 as
// strings. Each endpoint's success shape and its effect as seen through the
// REST lane. One exchange, one gateway thread.

import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { AdminClient } from '../../src/client/index.js';
import type { PendingWithdrawals } from '../../src/client/types.js';
import * as C from '../../src/wire/control_plane.js';
import { KeyRevoked } from '../../src/wire/keys.js';
import { SequencedAck } from '../../src/wire/responses.js';
import { ADMIN_TOKEN, startTestExchange, type TestExchange } from '../support/exchange.js';
import {
  assertErrorReply, closeInAnHour, newAccount, newMarket, order, raw, rejects, type Key, type RawReply,
} from '../support/harness.js';
import { assertWireShape } from '../support/wire_shapes.js';

let tx: TestExchange;

before(async () => {
  tx = await startTestExchange();
});

after(async () => {
  await tx.stop();
});

function admin(
  method: string,
  target: string,
  body?: string | Buffer,
  headers: Record<string, string> = { authorization: `Bearer ${ADMIN_TOKEN}` },
): Promise<RawReply> {
  return raw(tx.ex.admin_port, {
    method,
    target,
    body,
    headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
  });
}

test('control plane: every request needs the bearer token, else 401 unauthorized', async () => {
  const bad: (Record<string, string>)[] = [
    {},
    { authorization: 'Bearer wrong-token' },
    { authorization: `Bearer ${ADMIN_TOKEN}x` },
    { authorization: `Bearer${ADMIN_TOKEN}` },
    { authorization: `Basic ${Buffer.from(`admin:${ADMIN_TOKEN}`).toString('base64')}` },
    { authorization: ADMIN_TOKEN },
    { 'x-admin-token': ADMIN_TOKEN },
  ];
  const targets: [string, string, string | undefined][] = [
    ['GET', '/admin/health', undefined],
    ['POST', '/admin/accounts', '{}'],
    ['POST', '/admin/accounts/1/deposits', '{"amount":"100"}'],
    ['GET', '/admin/nowhere', undefined],
  ];
  for (const headers of bad) {
    for (const [method, target, body] of targets) {
      assertErrorReply(await admin(method, target, body, headers), 401, 'unauthorized');
    }
  }
  // The scheme is case-insensitive (RFC 9110, 11.1), and more than one space may follow it.
  for (const authorization of [`bearer ${ADMIN_TOKEN}`, `BEARER ${ADMIN_TOKEN}`, `Bearer  ${ADMIN_TOKEN}`]) {
    assert.equal((await admin('GET', '/admin/health', undefined, { authorization })).status, 200, authorization);
  }
  const wrong = new AdminClient({ baseUrl: tx.adminBase, token: 'nope' });
  await rejects(wrong.createAccount(), 401, 'unauthorized');
});

test('data dir: the journal and the snapshots, which hold every key\'s secret, are readable by the exchange\'s user only', async () => {
  const a = await newAccount(tx);
  await tx.admin.snapshot();
  const dir = tx.ex.config.data_dir;
  const mode = (p: string): string => (statSync(p).mode & 0o777).toString(8);
  assert.ok(a.keyId > 0);
  for (const d of [dir, join(dir, 'journal'), join(dir, 'snapshots')]) assert.equal(mode(d), '700', d);
  for (const sub of ['journal', 'snapshots']) {
    const files = readdirSync(join(dir, sub));
    assert.ok(files.length > 0, `files in ${sub}`);
    for (const f of files) assert.equal(mode(join(dir, sub, f)), '600', `${sub}/${f}`);
  }
});

test('control plane: an account that holds cash, reserved cash or shares is not deleted (409 account_not_empty, nothing ' +
  'changes)', async () => {
  const funded = await newAccount(tx, { deposit: '1000' });
  await rejects(tx.admin.deleteAccount(funded.accountId), 409, 'account_not_empty', { num: 281, origin: 'core' });
  assert.equal((await funded.client.balance()).available, '1000', 'its key still works and its cash is where it was');
});

test('control plane: it is not reachable through the public REST listener', async () => {
  for (const target of ['/admin/health', '/admin/accounts', '/v1/admin/health']) {
    const r = await raw(tx.port, { method: 'GET', target, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    assert.ok(r.status === 404 || r.status === 401, `${target} on the public port: ${r.status}`);
    assert.notEqual(r.status, 200);
  }
});

test('control plane: POST /admin/accounts answers 201 {account_id} and GET /admin/accounts/{id} the balance, positions and ' +
  'keys', async () => {
  const r = await admin('POST', '/admin/accounts', '{}');
  assert.equal(r.status, 201, r.text);
  assertWireShape(C.AccountCreated, r.json);
  assert.equal(typeof r.json.account_id, 'number');
  const empty = await admin('POST', '/admin/accounts');
  assert.equal(empty.status, 201, 'an empty body counts as {}');
  const id = r.json.account_id as number;
  const k = await tx.admin.createKey(id, ['read']);
  const got = await admin('GET', `/admin/accounts/${id}`);
  assert.equal(got.status, 200, got.text);
  assertWireShape(C.AdminAccount, got.json);
  assert.equal(got.json.account_id, id);
  assert.equal(got.json.available, '0');
  assert.deepEqual(got.json.positions, []);
  assert.deepEqual(
    got.json.keys.map((x: { key_id: number }) => x.key_id),
    [k.key_id],
  );
  assert.ok(!got.text.includes(k.secret), 'no secret in the operator view');
  assertErrorReply(await admin('GET', '/admin/accounts/99999'), 404, 'unknown_account', { num: 269, origin: 'core' });
});

test('control plane: POST /admin/accounts/{id}/keys answers 201 {key_id, secret, scopes}, withdraw included, and the key signs at ' +
  'once', async () => {
  const { account_id } = await tx.admin.createAccount();
  const r = await admin('POST', `/admin/accounts/${account_id}/keys`, '{"scopes":["read","trade","withdraw"]}');
  assert.equal(r.status, 201, r.text);
  assertWireShape(C.AdminKeyCreated, r.json);
  assert.equal(typeof r.json.key_id, 'number');
  assert.deepEqual(r.json.scopes, ['read', 'trade', 'withdraw']);
  assert.equal(Buffer.from(r.json.secret, 'base64').length, 32);
  const { DxClient } = await import('../../src/client/index.js');
  const c = new DxClient({ baseUrl: tx.base, keyId: r.json.key_id, secret: r.json.secret });
  assert.deepEqual((await c.limits()).scopes, ['read', 'trade', 'withdraw']);
  assertErrorReply(await admin('POST', `/admin/accounts/${account_id}/keys`, '{"scopes":[]}'), 400, 'invalid_field');
  assertErrorReply(await admin('POST', `/admin/accounts/${account_id}/keys`, '{"scopes":["admin"]}'), 400, 'invalid_field');
  assertErrorReply(await admin('POST', '/admin/accounts/99999/keys', '{"scopes":["read"]}'), 404, 'unknown_account', {
    num: 269,
    origin: 'core',
  });
});

test('control plane: POST /admin/accounts/{id}/deposits answers 201 {seq} and credits the cents', async () => {
  const k = await newAccount(tx, { deposit: '0' });
  const r = await admin('POST', `/admin/accounts/${k.accountId}/deposits`, '{"amount":"12345","ref":"wire-1"}');
  assert.equal(r.status, 201, r.text);
  assertWireShape(SequencedAck, r.json);
  assert.deepEqual(Object.keys(r.json), ['seq']);
  assert.equal((await k.client.balance()).available, '12345');
  assertErrorReply(await admin('POST', `/admin/accounts/${k.accountId}/deposits`, '{"amount":"0"}'), 400, 'invalid_field');
  assertErrorReply(await admin('POST', `/admin/accounts/${k.accountId}/deposits`, '{"amount":100}'), 400, 'invalid_field');
  assertErrorReply(await admin('POST', '/admin/accounts/99999/deposits', '{"amount":"1"}'), 404, 'unknown_account', {
    num: 269,
    origin: 'core',
  });
});

test('control plane: a deposit that would take all deposits past 2^53 - 1 cents is 422 deposit_limit_exceeded and credits nothing',
  async () => {
    // Its own exchange: the money deposited here would refuse every later deposit of the shared one.
    const own = await startTestExchange();
    try {
      const k = await newAccount(own, { deposit: '0' });
      const deposit = (amount: string): Promise<RawReply> => raw(own.ex.admin_port, {
        method: 'POST', target: `/admin/accounts/${k.accountId}/deposits`, body: `{"amount":"${amount}"}`,
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      });
      assert.equal((await deposit('9007199254740990')).status, 201);
      assert.equal((await deposit('1')).status, 201);
      assertErrorReply(await deposit('1'), 422, 'deposit_limit_exceeded', { num: 280, origin: 'core' });
      assert.equal((await k.client.balance()).available, '9007199254740991');
    } finally {
      await own.stop();
    }
  });

test('control plane and keys service: a title, ref or key label holding U+0000 or longer than its field in UTF-8 bytes is 400 ' +
  'invalid_field', async () => {
  const k = await newAccount(tx, { deposit: '0' });
  const cases: [string, string, string, string][] = [
    ['/admin/markets', JSON.stringify({ category: 1, position_limit: 0, fee_schedule_id: 0, title: 'BTC\u0000 above' }), 'title', 'NUL'],
    [`/admin/accounts/${k.accountId}/deposits`, JSON.stringify({ amount: '5', ref: 'tx\u0000x' }), 'ref', 'NUL'],
    // 22 three-byte characters: 66 bytes in a 64-byte field.
    [`/admin/accounts/${k.accountId}/deposits`, JSON.stringify({ amount: '5', ref: '€'.repeat(22) }), 'ref', 'bytes'],
  ];
  for (const [target, body, field, why] of cases) {
    const r = await admin('POST', target, body);
    assertErrorReply(r, 400, 'invalid_field');
    assert.equal(r.json.error.details?.field, field, why);
  }
  assert.equal((await k.client.balance()).available, '0', 'no refused deposit was credited');
  const e = await rejects(k.keys.createKey({ label: 'bot\u0000x' }), 400, 'invalid_field');
  assert.equal(e.details?.field, 'label');
  assert.equal((await k.keys.listKeys()).keys.length, 1, 'no key was created');
});

test('control plane: DELETE /admin/accounts/{id} answers 200 {seq} and revokes every key of the account', async () => {
  const k = await newAccount(tx, { deposit: '0' });
  await k.client.balance();
  const r = await admin('DELETE', `/admin/accounts/${k.accountId}`);
  assert.equal(r.status, 200, r.text);
  assertWireShape(SequencedAck, r.json);
  assert.match(r.json.seq, /^[0-9]+$/);
  await rejects(k.client.balance(), 401, 'unauthorized');
  const view = await admin('GET', `/admin/accounts/${k.accountId}`);
  assert.equal(view.json.deleted, true);
  assert.ok(view.json.keys.every((x: { revoked: boolean }) => x.revoked));
  assertErrorReply(await admin('DELETE', `/admin/accounts/${k.accountId}`), 404, 'unknown_account', { num: 269, origin: 'core' });
});

test('control plane: POST /admin/fee_schedules answers 201 {fee_schedule_id} and its taker fee is charged on fills', async () => {
  const r = await admin('POST', '/admin/fee_schedules', '{"taker_bps":700,"maker_bps":0}');
  assert.equal(r.status, 201, r.text);
  assertWireShape(C.FeeScheduleCreated, r.json);
  const fs = r.json.fee_schedule_id as number;
  assert.equal(typeof fs, 'number');
  const m = await newMarket(tx, { fee_schedule_id: fs });
  assert.equal((await (await newAccount(tx)).client.market(m)).fee_schedule_id, fs);
  const maker = await newAccount(tx);
  const taker = await newAccount(tx);
  await maker.client.placeOrder(order(m, { tick: 50, qty: 100 }));
  await taker.client.placeOrder(order(m, { outcome: 'no', tick: 50, qty: 100 }));
  // ceil(700 x 100 x 50 x 50 / 1,000,000) = 175 cents.
  assert.equal((await taker.client.fills({ market_id: m })).fills[0]!.fee, '175');
  assert.equal((await maker.client.fills({ market_id: m })).fills[0]!.fee, '0');
  assertErrorReply(await admin('POST', '/admin/fee_schedules', '{"taker_bps":10001,"maker_bps":0}'), 400, 'invalid_field');
});

test('control plane: POST /admin/markets answers 201 {market_id}; the market is closed until a round opens', async () => {
  const r = await admin(
    'POST',
    '/admin/markets',
    JSON.stringify({ title: 'ETH above strike', category: 3, position_limit: 500, fee_schedule_id: 0 }),
  );
  assert.equal(r.status, 201, r.text);
  assertWireShape(C.MarketCreated, r.json);
  const m = r.json.market_id as number;
  const k = await newAccount(tx);
  const mk = await k.client.market(m);
  assert.deepEqual(
    { title: mk.title, position_limit: mk.position_limit, status: mk.status, close_ts: mk.close_ts },
    { title: 'ETH above strike', position_limit: 500, status: 'closed', close_ts: '0' },
  );
  await rejects(k.client.round(m), 404, 'round_not_found');
  assertErrorReply(
    await admin('POST', '/admin/markets', JSON.stringify({ title: 'x', category: 1, position_limit: 1, fee_schedule_id: 9999 })),
    404,
    'unknown_fee_schedule',
    { num: 271, origin: 'core' },
  );
  assertErrorReply(
    await admin('POST', '/admin/markets', JSON.stringify({ title: 'x', category: 70000, position_limit: 1, fee_schedule_id: 0 })),
    400,
    'invalid_field',
  );
});

test('control plane: POST /admin/markets/{id}/rounds answers 201 {round_number}; a second open round is 409 ' +
  'round_state_conflict', async () => {
  const m = await newMarket(tx, { round: false });
  const close = closeInAnHour();
  const r = await admin('POST', `/admin/markets/${m}/rounds`, JSON.stringify({ strike: '5000000000000', close_ts: close }));
  assert.equal(r.status, 201, r.text);
  assertWireShape(C.RoundOpened, r.json);
  const k = await newAccount(tx);
  const round = await k.client.round(m);
  assert.deepEqual(
    { round_number: round.round_number, status: round.status, strike: round.strike, close_ts: round.close_ts },
    { round_number: r.json.round_number, status: 'trading', strike: '5000000000000', close_ts: close },
  );
  assertErrorReply(
    await admin('POST', `/admin/markets/${m}/rounds`, JSON.stringify({ strike: '1', close_ts: close })),
    409,
    'round_state_conflict',
    { num: 272, origin: 'core' },
  );
  assertErrorReply(
    await admin('POST', '/admin/markets/9999/rounds', JSON.stringify({ strike: '1', close_ts: close })),
    404,
    'unknown_market',
    { num: 265, origin: 'core' },
  );
  const past = String(BigInt(Date.now() - 1000) * 1_000_000n);
  const m2 = await newMarket(tx, { round: false });
  assertErrorReply(
    await admin('POST', `/admin/markets/${m2}/rounds`, JSON.stringify({ strike: '1', close_ts: past })),
    409,
    'round_state_conflict',
    { num: 272, origin: 'core' },
  );
});

/** A market where `yes` holds 2 YES shares (bought at 40) and `no` holds 2 NO shares (bought at 60), plus a resting order. */
async function heldMarket(): Promise<{ m: number; yes: Key; no: Key; restingId: string }> {
  const m = await newMarket(tx);
  const yes = await newAccount(tx, { deposit: '10000' });
  const no = await newAccount(tx, { deposit: '10000' });
  await yes.client.placeOrder(order(m, { tick: 40, qty: 2 }));
  await no.client.placeOrder(order(m, { outcome: 'no', tick: 60, qty: 2 }));
  const resting = await yes.client.placeOrder(order(m, { tick: 10, qty: 1 }));
  return { m, yes, no, restingId: resting.order_id };
}

test('control plane: freeze and unfreeze answer 200 {status, seq}; freezing cancels resting orders with reason round_frozen', async () => {
  const { m, yes, restingId } = await heldMarket();
  const f = await admin('POST', `/admin/rounds/${m}/freeze`, '{}');
  assert.equal(f.status, 200, f.text);
  assertWireShape(C.RoundActionResult, f.json);
  assert.equal(f.json.status, 'frozen');
  assert.equal((await yes.client.round(m)).status, 'frozen');
  const canceled = (await yes.client.orders({ status: ['canceled'] })).orders.find((o) => o.order_id === restingId);
  assert.equal(canceled?.reason, 'round_frozen');
  assertErrorReply(await admin('POST', `/admin/rounds/${m}/freeze`, '{}'), 409, 'round_state_conflict', { num: 272, origin: 'core' });
  const u = await admin('POST', `/admin/rounds/${m}/unfreeze`);
  assert.equal(u.status, 200, u.text);
  assert.equal(u.json.status, 'trading');
  assertErrorReply(await admin('POST', `/admin/rounds/${m}/unfreeze`, '{}'), 409, 'round_state_conflict', { num: 272, origin: 'core' });
  assertErrorReply(await admin('POST', '/admin/rounds/9999/freeze', '{}'), 404, 'unknown_market', { num: 265, origin: 'core' });
});

test('control plane: propose, dispute, propose from the oracle and settle walk the round to settled and pay 100 cents per winning ' +
  'share', async () => {
  const { m, yes, no } = await heldMarket();
  assertErrorReply(await admin('POST', `/admin/rounds/${m}/propose`, '{"outcome":"no"}'), 409, 'round_state_conflict', {
    num: 272,
    origin: 'core',
  });
  await tx.admin.freezeRound(m);
  const p = await admin('POST', `/admin/rounds/${m}/propose`, '{"outcome":"no"}');
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json.status, 'proposed');
  assert.equal((await yes.client.round(m)).outcome, 'no');
  const d = await admin('POST', `/admin/rounds/${m}/dispute`, '{}');
  assert.equal(d.status, 200, d.text);
  assert.equal(d.json.status, 'frozen');
  // No oracle source has ticked on this exchange yet.
  assertErrorReply(await admin('POST', `/admin/rounds/${m}/propose`, '{}'), 409, 'oracle_quorum_not_met', { num: 273, origin: 'core' });
  const tick = await admin('POST', '/admin/oracle/ticks', '{"source_id":5,"price":"6100000000000"}');
  assert.equal(tick.status, 201, tick.text);
  const po = await admin('POST', `/admin/rounds/${m}/propose`, '{}');
  assert.equal(po.status, 200, po.text);
  const proposed = await yes.client.round(m);
  assert.equal(proposed.status, 'proposed');
  assert.equal(proposed.outcome, 'yes', 'the oracle price is above the strike');
  assert.notEqual(proposed.settle_price, '0');
  assert.notEqual(proposed.proposed_ts, '0');
  const before = { yes: BigInt((await yes.client.balance()).available), no: BigInt((await no.client.balance()).available) };
  const s = await admin('POST', `/admin/rounds/${m}/settle`, '{}');
  assert.equal(s.status, 200, s.text);
  assert.equal(s.json.status, 'settled');
  const settled = await yes.client.round(m);
  assert.equal(settled.status, 'settled');
  assert.notEqual(settled.settled_ts, '0');
  assert.equal(BigInt((await yes.client.balance()).available) - before.yes, 200n, 'two winning YES shares pay 200 cents');
  assert.equal(BigInt((await no.client.balance()).available) - before.no, 0n, 'losing shares pay nothing');
  assert.deepEqual((await yes.client.positions({ market_id: m })).positions, [], 'settled shares are gone');
  assertErrorReply(await admin('POST', `/admin/rounds/${m}/settle`, '{}'), 409, 'round_state_conflict', { num: 272, origin: 'core' });
});

test('control plane: void answers 200 {status, seq} and pays 50 cents per share of either outcome', async () => {
  const { m, yes, no } = await heldMarket();
  const before = { yes: BigInt((await yes.client.balance()).available), no: BigInt((await no.client.balance()).available) };
  const v = await admin('POST', `/admin/rounds/${m}/void`, '{}');
  assert.equal(v.status, 200, v.text);
  assert.equal(v.json.status, 'void');
  assert.equal((await yes.client.round(m)).status, 'void');
  assert.equal((await yes.client.market(m)).status, 'closed', 'a market without an open round is closed');
  assert.equal(
    BigInt((await yes.client.balance()).available) - before.yes,
    100n + 10n,
    '2 x 50 cents plus the released reservation of the canceled 1 @ 10',
  );
  assert.equal(BigInt((await no.client.balance()).available) - before.no, 100n);
  assertErrorReply(await admin('POST', `/admin/rounds/${m}/void`, '{}'), 409, 'round_state_conflict', { num: 272, origin: 'core' });
  const again = await admin('POST', `/admin/markets/${m}/rounds`, JSON.stringify({ strike: '1', close_ts: closeInAnHour() }));
  assert.equal(again.status, 201, 'a new round opens after a void one');
});

test('control plane: POST /admin/oracle/ticks answers 201 {seq} and refuses an unknown source or a zero price', async () => {
  const r = await admin('POST', '/admin/oracle/ticks', '{"source_id":0,"price":"6000000000000"}');
  assert.equal(r.status, 201, r.text);
  assert.deepEqual(Object.keys(r.json), ['seq']);
  assertErrorReply(await admin('POST', '/admin/oracle/ticks', '{"source_id":64,"price":"1"}'), 400, 'invalid_field');
  assertErrorReply(await admin('POST', '/admin/oracle/ticks', '{"source_id":1,"price":"0"}'), 400, 'invalid_field');
});

test('control plane: withdrawal confirm and fail answer 200 {status, seq}; an unknown or finished withdrawal is 404 ' +
  'unknown_withdrawal', async () => {
  const k = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  const w = await k.client.withdraw({ client_withdrawal_id: '5', amount: '100', destination: 'd' });
  const c = await admin('POST', `/admin/withdrawals/${w.wid}/confirm`, '{}');
  assert.equal(c.status, 200, c.text);
  assertWireShape(C.WithdrawalSettled, c.json);
  assert.equal(c.json.status, 'confirmed');
  assertErrorReply(await admin('POST', `/admin/withdrawals/${w.wid}/confirm`, '{}'), 404, 'unknown_withdrawal', {
    num: 274,
    origin: 'core',
  });
  assertErrorReply(await admin('POST', `/admin/withdrawals/${w.wid}/fail`, '{}'), 404, 'unknown_withdrawal', { num: 274, origin: 'core' });
  const w2 = await k.client.withdraw({ client_withdrawal_id: '6', amount: '100', destination: 'd' });
  const f = await admin('POST', `/admin/withdrawals/${w2.wid}/fail`, '{}');
  assert.equal(f.status, 200, f.text);
  assert.equal(f.json.status, 'failed');
  assertErrorReply(await admin('POST', '/admin/withdrawals/99999/confirm', '{}'), 404, 'unknown_withdrawal', { num: 274, origin: 'core' });
});

test('control plane: GET /admin/health answers seq, durable_seq, lag and gateways', async () => {
  const r = await admin('GET', '/admin/health');
  assert.equal(r.status, 200, r.text);
  assertWireShape(C.Health, r.json);
  assert.equal(r.json.gateways, 1);
  assert.ok(BigInt(r.json.seq) > 0n);
});

test('control plane: GET /admin/state_hash answers as_of_seq and the state\'s sha256, the same on a second read at rest', async () => {
  const a = await admin('GET', '/admin/state_hash');
  assert.equal(a.status, 200, a.text);
  const first = assertWireShape(C.StateHash, a.json);
  const b = assertWireShape(C.StateHash, (await admin('GET', '/admin/state_hash')).json);
  if (b.as_of_seq === first.as_of_seq) assert.equal(b.state_hash, first.state_hash);
});

test('control plane: GET /admin/markets lists markets with their rounds; GET /admin/oracle every source and its freshness', async () => {
  const m = await newMarket(tx, { title: 'listed with its round' });
  const bare = await newMarket(tx, { title: 'no round yet', round: false });
  const r = await admin('GET', '/admin/markets');
  assert.equal(r.status, 200, r.text);
  const listing = assertWireShape(C.AdminMarkets, r.json);
  const byId = new Map(listing.markets.map((x) => [x.market_id, x]));
  assert.deepEqual([...byId.keys()], [...byId.keys()].sort((a, b) => a - b), 'ascending market_id');
  const listed = byId.get(m)!;
  assert.equal(listed.title, 'listed with its round');
  assert.equal(listed.status, 'trading');
  assert.equal(listed.series_period_s, 0);
  const round = listed.round!;
  assert.equal(round.status, 'trading');
  assert.equal(round.round_number, listed.round_number);
  assert.equal('as_of_seq' in round, false);
  assert.equal(round.market_id, m);
  assert.equal(byId.get(bare)!.round, null);
  assert.deepEqual(await tx.admin.markets(), r.json);

  await admin('POST', '/admin/oracle/ticks', '{"source_id":3,"price":"6100000000000"}');
  await admin('POST', '/admin/oracle/ticks', '{"source_id":1,"price":"6000000000000"}');
  const o = await tx.admin.oracle();
  assertWireShape(C.AdminOracle, o);
  assert.equal(o.staleness_ms, 10_000);
  assert.equal(o.quorum, 1);
  const s1 = o.sources.find((x) => x.source_id === 1)!;
  const s3 = o.sources.find((x) => x.source_id === 3)!;
  assert.deepEqual([s1.price, s1.fresh, s3.price, s3.fresh], ['6000000000000', true, '6100000000000', true]);
  assert.ok(BigInt(s3.ts) > 0n && BigInt(s1.ts) > BigInt(s3.ts), 'each source\'s last tick time');
  assert.deepEqual(o.sources.map((x) => x.source_id), [...o.sources.map((x) => x.source_id)].sort((a, b) => a - b));
  const pub = await newAccount(tx);
  const price = await pub.client.oraclePrice();
  assert.deepEqual({ price: o.price, fresh_source_count: o.fresh_source_count, seq: o.seq }, price);
});

test('control plane: GET /admin/withdrawals lists the pending ones, oldest first, until confirmed or failed', async () => {
  const k = await newAccount(tx, { deposit: '1000', scopes: ['read', 'withdraw'] });
  const a = await k.client.withdraw({ client_withdrawal_id: '71', amount: '100', destination: 'bank:a' });
  const b = await k.client.withdraw({ client_withdrawal_id: '72', amount: '200', destination: 'bank:b' });
  const mine = async (): Promise<PendingWithdrawals['withdrawals']> =>
    (await tx.admin.pendingWithdrawals()).withdrawals.filter((w) => w.account_id === k.accountId);
  const before2 = await mine();
  assert.deepEqual(before2.map((w) => [w.wid, w.amount, w.destination, w.status, w.client_withdrawal_id]), [
    [a.wid, '100', 'bank:a', 'pending', '71'], [b.wid, '200', 'bank:b', 'pending', '72'],
  ]);
  assertWireShape(C.PendingWithdrawals, await tx.admin.pendingWithdrawals());
  await tx.admin.confirmWithdrawal(a.wid);
  assert.deepEqual((await mine()).map((w) => w.wid), [b.wid]);
  await tx.admin.failWithdrawal(b.wid);
  assert.deepEqual(await mine(), []);
});

test('control plane: GET /admin/fee_schedules lists every schedule with its rates, ascending id', async () => {
  const a = (await tx.admin.createFeeSchedule({ taker_bps: 250, maker_bps: 10 })).fee_schedule_id;
  const b = (await tx.admin.createFeeSchedule({ taker_bps: 0, maker_bps: 10000 })).fee_schedule_id;
  const r = await admin('GET', '/admin/fee_schedules');
  assert.equal(r.status, 200, r.text);
  assertWireShape(C.FeeSchedules, r.json);
  const list = (r.json as C.FeeSchedules).fee_schedules;
  assert.deepEqual(list.map((f) => f.fee_schedule_id), list.map((_, i) => i + 1), 'every id from 1, in order');
  assert.deepEqual(list.slice(-2), [
    { fee_schedule_id: a, taker_bps: 250, maker_bps: 10 }, { fee_schedule_id: b, taker_bps: 0, maker_bps: 10000 },
  ]);
});

test('control plane: GET /admin/ledger follows deposits, trades with fees, pending and confirmed withdrawals, and adds up', async () => {
  const at = async (): Promise<Record<string, bigint>> => {
    const r = await admin('GET', '/admin/ledger');
    assert.equal(r.status, 200, r.text);
    assertWireShape(C.Ledger, r.json);
    assert.equal(r.json.balanced, true, r.text);
    assert.equal(BigInt(r.json.collateral), 100n * BigInt(r.json.open_pairs));
    const out: Record<string, bigint> = {};
    for (const [k, v] of Object.entries(r.json as C.Ledger)) if (typeof v === 'string' && k !== 'as_of_seq') out[k] = BigInt(v);
    return out;
  };
  const l0 = await at();
  const fs = (await tx.admin.createFeeSchedule({ taker_bps: 700, maker_bps: 100 })).fee_schedule_id;
  const m = await newMarket(tx, { fee_schedule_id: fs });
  const maker = await newAccount(tx, { deposit: '10000' });
  const taker = await newAccount(tx, { deposit: '20000', scopes: ['read', 'trade', 'withdraw'] });
  await maker.client.placeOrder(order(m, { tick: 40, qty: 10 }));
  await maker.client.placeOrder(order(m, { tick: 30, qty: 5 }));
  await taker.client.placeOrder(order(m, { outcome: 'no', tick: 60, qty: 10 }));
  const w1 = await taker.client.withdraw({ client_withdrawal_id: '901', amount: '300', destination: 'bank' });
  await taker.client.withdraw({ client_withdrawal_id: '902', amount: '200', destination: 'bank' });
  await tx.admin.confirmWithdrawal(w1.wid);
  const l1 = await at();
  const d = (k: string): bigint => l1[k]! - l0[k]!;
  // Taker: ceil(700 x 10 x 60 x 40 / 1e6) = 17 cents; maker: ceil(100 x 10 x 40 x 60 / 1e6) = 3.
  assert.deepEqual(
    {
      deposits: d('deposits'), withdrawn: d('withdrawn'), pending: d('withdrawals_pending'), pairs: d('open_pairs'),
      fees: d('fees_collected'),
    },
    { deposits: 30000n, withdrawn: 300n, pending: 200n, pairs: 10n, fees: 20n },
  );
  // The maker's resting buy of 5 at 30 (150 cents and its fee reserve) and the pending withdrawal are reserved.
  assert.ok(d('reserved') >= 350n, `reserved grew by ${d('reserved')}`);
  assert.equal(d('available') + d('reserved'), 30000n - 300n - 1000n - 20n);
});

test('control plane: DELETE /admin/keys/{key_id} revokes any key at once, idempotently; an unknown key is 404 unknown_key', async () => {
  const k = await newAccount(tx);
  await k.client.balance();
  const r = await admin('DELETE', `/admin/keys/${k.keyId}`);
  assert.equal(r.status, 200, r.text);
  assertWireShape(KeyRevoked, r.json);
  assert.deepEqual({ ...r.json, seq: '' }, { key_id: k.keyId, revoked: true, seq: '' });
  await rejects(k.client.balance(), 401, 'unauthorized');
  assert.equal((await tx.admin.revokeKey(k.keyId)).revoked, true, 'idempotent');
  const view = await tx.admin.account(k.accountId);
  assert.deepEqual(view.keys?.map((x) => [x.key_id, x.revoked]), [[k.keyId, true]]);
  assertErrorReply(await admin('DELETE', '/admin/keys/999999'), 404, 'unknown_key', { num: 270, origin: 'core' });
  assertErrorReply(await admin('DELETE', '/admin/keys/0'), 400, 'invalid_field');
});

test('control plane: closed schemas, unknown routes, wrong methods and query parameters give the error envelope', async () => {
  const unknownField = await admin('POST', '/admin/accounts', '{"name":"x"}');
  assertErrorReply(unknownField, 400, 'unknown_field');
  assert.equal(unknownField.json.error.details.field, 'name');
  assertErrorReply(await admin('POST', '/admin/fee_schedules', '{"taker_bps":'), 400, 'invalid_json');
  assertErrorReply(await admin('POST', '/admin/accounts', '{"__proto__":{}}'), 400, 'invalid_json');
  // Two Content-Length headers (which one framed the body?): refused, as on the REST lane.
  const twice = await raw(tx.ex.admin_port, {
    method: 'POST', target: '/admin/accounts', body: '{}',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json', 'content-length': ['2', '2'] },
  });
  assertErrorReply(twice, 400, 'invalid_field');
  const notUtf8 = Buffer.concat([Buffer.from('{"taker_bps":1,"maker_bps":0,"name":"f'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
  assertErrorReply(await admin('POST', '/admin/fee_schedules', notUtf8), 400, 'invalid_json');
  assertErrorReply(await admin('GET', '/admin/nowhere'), 404, 'not_found');
  const m = await admin('PUT', '/admin/health');
  assertErrorReply(m, 405, 'method_not_allowed');
  assert.equal(m.headers.allow, 'GET');
  assertErrorReply(await admin('GET', '/admin/health?verbose=1'), 400, 'unknown_field');
  assertErrorReply(await admin('DELETE', '/admin/accounts/1', '{}'), 400, 'unexpected_body');
  assertErrorReply(await admin('POST', '/admin/accounts', JSON.stringify({ pad: 'x'.repeat(70 * 1024) })), 413, 'body_too_large');
});
