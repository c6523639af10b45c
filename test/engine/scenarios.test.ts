// Engine scenarios as tables: every match path, execution outcome, core reject
// and order rule of src/engine/README.md, with balances checked to the cent.
// The invariant checker runs after every line (see scenario.ts).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CompletionStatus, Outcome, Reject, Side } from '../../src/layout/records.js';
import type { RecordObject } from '../../src/layout_codec/record_codec.js';
import { scenario } from './scenario.js';

test('match paths: mint, direct and merge move cash and shares to the cent', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    account a3 10000
    a1 buy yes 60 x10 -> resting resting=10
    check a1 available=9400 reserved=600
    a2 buy no 45 x4 -> filled filled=4 fills=60x4/mint
    check a1 available=9400 reserved=360 yes=4/0
    check a2 available=9840 reserved=0 no=4/0
    check market 1 volume=4 oi=4 last=60
    check book 1 yes=60:6 no=
    a1 cancel #1 -> ok canceled=6
    a3 buy yes 55 x3 -> resting
    a1 sell yes 50 x3 -> filled fills=55x3/direct
    check a1 available=9925 reserved=0 yes=1/0
    check a3 available=9835 reserved=0 yes=3/0
    check market 1 oi=4 volume=7 last=55
    a2 sell no 50 x2 -> resting
    check a2 no=2/2
    a1 sell yes 45 x1 -> filled fills=50x1/merge
    check a1 available=9975 yes=0/0
    check a2 available=9890 no=2/1
    check market 1 oi=3
  `);
});

test('fees: taker and maker bps with the worst-case fee reserved and released', () => {
  scenario(`
    market fees=700/200
    account a1 10000
    account a2 10000
    a1 buy yes 50 x10 -> resting
    check a1 available=9480 reserved=520
    a2 buy no 50 x10 -> filled fills=50x10/mint
    check a1 available=9495 reserved=0
    check a2 available=9482 reserved=0
    check fees 23
  `);
});

test('fees: a buy reserves only the rates it can pay: no maker fee for ioc, fok or max_cost, no taker fee for post_only', () => {
  scenario(`
    market fees=0/10000
    account seller 100000
    account buyer 5000
    seller buy no 50 x100 -> resting
    # 100 x 50 = 5000 cents and a taker fee of 0: an ioc can never rest, so it never pays the maker's 10000 bps
    buyer buy yes 50 x100 ioc -> filled filled=100
    check buyer available=0 reserved=0
  `);
  scenario(`
    market fees=0/10000
    account buyer 5000
    buyer buy yes 50 x100 fok -> canceled fok_infeasible
    check buyer available=5000 reserved=0
    buyer buy yes 50 x100 max=5000 -> canceled max_cost_infeasible
    check buyer available=5000 reserved=0
    # a gtc order may rest and pay the maker fee: ceil(10000 x 2500 / 1e6) = 25 a share on top
    buyer buy yes 50 x100 -> rejected insufficient_balance
  `);
  scenario(`
    market fees=10000/0
    account buyer 5000
    # post_only never takes: nothing is reserved for the taker's 10000 bps
    buyer buy yes 50 x100 post -> resting
    check buyer available=0 reserved=5000
  `);
});

test('price improvement and unused fee reserve are released at once', () => {
  scenario(`
    market fees=700/0
    account a1 10000
    account a2 10000
    a1 buy yes 70 x10 -> resting
    check a1 available=9280 reserved=720
    a2 buy no 40 x10 -> filled fills=70x10/mint
    # a2 reserved 10 x (40 + 2), paid 10 x 30 + ceil(700 x 10 x 30 x 70 / 1e6) = 300 + 15
    check a2 available=9685 reserved=0
    check a1 available=9300 reserved=0
    check fees 15
  `);
});

test('price-time priority: better price first, then earlier order; trades at the maker price', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    account a3 10000
    a1 buy yes 55 x2 -> resting
    a2 buy yes 56 x2 -> resting
    a3 buy yes 56 x2 -> resting
    account a4 10000
    a4 buy no 50 x5 -> filled fills=56x2/mint,56x2/mint,55x1/mint
    check #2 filled
    check #3 filled
    check #1 partially_filled remaining=1 filled=1
  `);
});

test('ioc: the remainder is canceled with reason ioc_remainder', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 60 x3 -> resting
    a2 buy no 40 x5 ioc -> canceled ioc_remainder filled=3 fills=60x3/mint
    check a2 available=9880 reserved=0 no=3/0
    a2 buy no 40 x5 ioc -> canceled ioc_remainder filled=0
  `);
});

test('fok: fills completely or is canceled with nothing traded', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 60 x3 -> resting
    a2 buy no 40 x5 fok -> canceled fok_infeasible filled=0
    check book 1 yes=60:3
    check a2 available=10000 reserved=0
    a2 buy no 40 x3 fok -> filled fills=60x3/mint
  `);
});

test('post-only: would cross -> canceled post_only_cross; else rests', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 60 x3 -> resting
    a2 buy no 40 x1 post -> canceled post_only_cross
    a2 buy no 39 x1 post -> resting
    check book 1 yes=60:3 no=39:1
  `);
});

test('self-trade prevention: cancel_taker, cancel_maker, cancel_both', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a2 buy yes 61 x1 -> resting
    a1 buy yes 60 x3 -> resting
    a1 buy no 45 x4 -> canceled self_trade_prevention filled=1 fills=61x1/mint
    check #2 resting remaining=3
    a1 buy no 45 x2 stp=cancel_maker -> resting resting=2
    check #2 canceled self_trade_prevention
    a2 buy yes 50 x1 -> resting
    a1 buy yes 54 x1 -> resting
    a1 buy yes 56 x1 stp=cancel_both -> canceled self_trade_prevention filled=0
    check #4 canceled self_trade_prevention
    check book 1 yes=54:1,50:1 no=
  `);
});

test('max_cost: buys as many shares as the budget allows, never rests', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 60 x10 -> resting
    a2 buy no 40 x10 max=125 -> canceled ioc_remainder filled=3 fills=60x3/mint
    check a2 available=9880 reserved=0
    a2 buy no 40 x10 max=39 -> canceled max_cost_infeasible filled=0
    a2 buy no 40 x2 max=1000 -> filled fills=60x2/mint
    check a2 available=9800 reserved=0
    a1 cancel #1 -> ok canceled=5
    a2 buy no 40 x2 max=1000 -> canceled max_cost_infeasible filled=0
  `);
});

test('max_cost with fees counts the fee inside the budget', () => {
  scenario(`
    market fees=1000/0
    account a1 10000
    account a2 10000
    a1 buy yes 50 x10 -> resting
    # each share costs 50 + fee; fee(q) = ceil(1000 x q x 2500 / 1e6) = ceil(2.5 q)
    a2 buy no 50 x10 max=160 -> canceled ioc_remainder filled=3 fills=50x3/mint
    check a2 available=9842
    check fees 8
  `);
});

test('core rejects: every code with its reason', () => {
  scenario(`
    market limit=5
    account a1 10000
    account a2 100
    a1 buy yes 50 x1 m=9 -> rejected unknown_market
    a1 sell yes 50 x1 -> rejected insufficient_position
    a1 buy yes 50 x6 -> rejected position_limit_exceeded
    a1 buy yes 50 x5 -> resting
    a1 buy no 20 x5 -> resting
    a1 buy yes 40 x1 -> rejected position_limit_exceeded
    a2 buy yes 50 x3 -> rejected insufficient_balance
    a1 buy no 30 x1 gtd=+0 -> rejected expiry_in_past
    a1 buy no 30 x1 ioc post -> rejected invalid_command
    a1 sell yes 30 x1 max=100 -> rejected invalid_command
    a1 buy no 0 x1 -> rejected invalid_command
    a1 buy no 10 x0 -> rejected invalid_command
    a1 cancel 999 -> rejected unknown_order
    a2 cancel #4 -> rejected unknown_order
    a2 decrease #4 1 -> rejected unknown_order
    a1 withdraw 1 20000 -> rejected withdrawal_exceeds_available
    confirm 99 -> rejected unknown_withdrawal
    unfreeze -> rejected round_state_conflict
    freeze -> ok
    a1 buy no 30 x1 -> rejected market_not_trading
    propose oracle -> rejected oracle_quorum_not_met
    check #5 canceled round_frozen
    check a1 available=10000 reserved=0
  `);
});

test('order id 0 names no order, even while the first slot holds a live one', () => {
  scenario(`
    market
    account a1 10000
    a1 buy yes 50 x5 -> resting
    a1 cancel 0 -> rejected unknown_order
    a1 decrease 0 1 -> rejected unknown_order
    check #1 resting remaining=5 filled=0
    check a1 available=9750 reserved=250
  `);
});

test('client_order_id: a retained id (live, terminal or rejected) is refused; other accounts may reuse it', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 50 x1 coid=7 -> resting
    a1 buy yes 51 x1 coid=7 -> rejected duplicate_client_order_id
    a2 buy yes 51 x1 coid=7 -> resting
    a1 cancel #1 -> ok canceled=1
    a1 buy yes 52 x1 coid=7 -> rejected duplicate_client_order_id
    a1 buy yes 50 x100000 coid=8 -> rejected insufficient_balance
    a1 buy yes 50 x1 coid=8 -> rejected duplicate_client_order_id
  `);
});

test('retention: evicted terminal and rejected orders free their client_order_id', () => {
  scenario(`
    market
    account a1 10000
    a1 buy yes 50 x1 coid=1 -> resting
    a1 cancel #1 -> ok canceled=1
    a1 buy yes 50 x1 coid=2 -> resting
    a1 cancel #2 -> ok canceled=1
    a1 buy yes 50 x1 coid=1 -> resting
    a1 buy no 40 x100000 coid=5 -> rejected insufficient_balance
    a1 buy no 40 x100000 coid=6 -> rejected insufficient_balance
    a1 buy no 40 x1 coid=5 -> resting
  `, { terminal_cap: 1, reject_cap: 1 });
});

test('max_orders: a new order first evicts a retained one (its own account first); live orders alone at the bound are refused', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 50 x1 coid=1 -> resting
    a1 cancel #1 -> ok canceled=1
    a2 buy yes 50 x1 coid=1 -> resting
    a2 cancel #2 -> ok canceled=1
    a2 buy yes 50 x1 coid=2 -> resting
    a2 buy yes 50 x1 coid=1 -> rejected duplicate_client_order_id
    a1 buy yes 50 x1 coid=3 -> resting
    a1 buy yes 50 x1 coid=1 -> resting
    a1 cancel #6 -> ok canceled=1
    a2 buy yes 50 x1 coid=1 -> resting
    a1 buy yes 50 x1 coid=1 -> rejected order_capacity_exceeded
    a1 cancel #5 -> ok canceled=1
    a1 buy no 40 x100000 coid=9 -> rejected insufficient_balance
    a1 buy yes 50 x1 coid=3 -> resting
    a1 buy yes 50 x1 coid=9 -> rejected order_capacity_exceeded
  `, { max_orders: 3, terminal_cap: 10, reject_cap: 10 });
  // Step by step (held = live + retained, at most 3; #n counts every placement line, the refused ones too):
  // #1 canceled (a1 retains it); #2 canceled (a2 retains it); #3 rests: 3 held, and a2's coid=1 is still taken.
  // #5 (a1, coid=3): a1's own #1 leaves. #6 (a1, coid=1, free again): a1 retains nothing, so a2's #2 leaves.
  // #6 canceled; a2's coid=1 (free since #2 left): a2 retains nothing, so a1's #6 leaves (the only account
  // that retains one). Three live orders: a1's coid=1 is refused, though #6 left.
  // #5 canceled: a1 retains it. The insufficient_balance reject is retained too: #5 (a1's own) leaves for it.
  // a1's coid=3 (free, #5 left) evicts a1's reject; then three live orders again, and coid=9 is refused.
});

test('decrease: absolute target, time priority kept, zero cancels', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    account a3 10000
    a1 buy yes 60 x10 -> resting
    a2 buy yes 60 x5 -> resting
    a1 decrease #1 4 -> ok new_qty=4
    check a1 available=9760 reserved=240
    check book 1 yes=60:9
    a1 decrease #1 4 -> ok new_qty=4
    a1 decrease #1 7 -> ok new_qty=4
    a3 buy no 40 x4 -> filled fills=60x4/mint
    check #1 filled
    check #2 resting remaining=5
    a2 decrease #2 0 -> ok new_qty=0
    check #2 canceled decreased_to_zero
    a2 decrease #2 1 -> rejected unknown_order
  `);
});

test('mass cancel: scoped by market and group; 0 means all', () => {
  scenario(`
    market
    account a1 10000
    a1 buy yes 50 x1 group=1 -> resting
    a1 buy yes 49 x1 group=2 -> resting
    a1 buy no 30 x1 group=1 -> resting
    market
    a1 buy no 30 x1 group=1 -> resting
    a1 cancel-all m=1 group=1 -> ok
    check #1 canceled mass_canceled
    check #3 canceled mass_canceled
    check #2 resting
    check #4 resting
    a1 cancel-all -> ok
    check a1 live=0 available=10000 reserved=0
  `);
});

test('dead-man: fires once on sequencer time, cancels everything, then disarms', () => {
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 50 x1 -> resting
    a1 buy no 30 x1 -> resting
    a2 buy no 20 x1 -> resting
    a1 deadman 1000 -> ok
    tick +500 -> dropped
    a1 deadman 1000 -> ok
    tick +600 -> dropped
    tick +500 -> ok
    check #1 canceled deadman
    check #2 canceled deadman
    check #3 resting
    tick +5000 -> dropped
    a1 deadman 2000 -> ok
    a1 disarm -> ok
    a1 disarm -> ok
    tick +3000 -> dropped
  `);
});

test('gtd: expires on a ClockTick at expiry_ts', () => {
  scenario(`
    market
    account a1 10000
    a1 buy yes 50 x2 gtd=+1000 -> resting
    a1 buy yes 40 x2 gtd=+5000 -> resting
    tick +999 -> dropped
    tick +1 -> ok
    check #1 canceled expired
    check #2 resting
    a1 cancel #2 -> ok canceled=2
    tick +10000 -> dropped
  `);
});

test('time comes first: a command that arrives when the clock is due finds expired orders canceled, a closed round frozen and ' +
  'the proposal made from the price at the close, whether or not a ClockTick came first', () => {
  // An expired maker is never filled.
  scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 60 x10 gtd=+5000 -> resting
    wait +5000
    a2 buy no 40 x10 -> resting resting=10
    check #1 canceled expired
    check a1 available=10000 reserved=0 yes=0/0
  `);
  // A round past its close_ts trades no more.
  scenario(`
    market close=60000
    account a1 10000
    wait +61000
    a1 buy yes 70 x5 -> rejected market_not_trading
    check market 1 round_status=frozen
    check a1 available=10000 reserved=0
  `);
  // An oracle tick stamped after the close does not decide the round: the price at the close (150 >= strike 100) does.
  scenario(`
    oracle 1 150
    market close=2000 strike=100
    account a1 10000
    account a2 10000
    a1 buy yes 50 x10 -> resting
    a2 buy no 50 x10 -> filled fills=50x10/mint
    wait +2500
    oracle 1 50 -> ok
    check market 1 round_status=proposed outcome=yes settle_price=150
  `);
});

test('rounds: settle pays 100 per winning share; void pays 50 per share', () => {
  const r = scenario(`
    market
    account a1 10000
    account a2 10000
    a1 buy yes 60 x4 -> resting
    a2 buy no 40 x4 -> filled fills=60x4/mint
    a1 buy yes 30 x1 -> resting
    freeze -> ok
    check #3 canceled round_frozen
    check market 1 status=frozen oi=4
    propose yes -> ok
    check market 1 status=proposed
    settle -> ok
    check market 1 status=closed round_status=settled outcome=yes oi=0
    check a1 available=10160 reserved=0 yes=0/0
    check a2 available=9840 no=0/0
    open -> ok
    a1 buy yes 50 x2 -> resting
    a2 buy no 50 x2 -> filled fills=50x2/mint
    void -> ok
    check a1 available=10160
    check a2 available=9840
    check market 1 status=closed round_status=void
    settle -> rejected round_state_conflict
  `);
  void r;
});

test('rounds: settlement removes a whole position past 2^32 shares (PositionSettled carries u64 quantities)', () => {
  // 4,295 mints of 1,000,000 pairs: each account holds 4,295,000,000 shares, past 2^32. With u32 quantities the event
  // removed only the position mod 2^32 while paying for all of it, and the rest was paid again at the next settlement.
  const N = 4295;
  const Q = 1_000_000;
  const r = scenario(`
    market
    account a1 ${N * Q}
    account a2 ${N * Q * 99}
  `);
  const place = (account: number, outcome: number, tick: number): void => {
    r.send({ type: 'PlaceOrder', account, market_id: 1, side: Side.buy, outcome, tick, qty: Q, tif: 0, stp: 0, post_only: 0, group_id: 0 });
  };
  for (let i = 0; i < N; i++) {
    place(2, Outcome.no, 99);
    place(1, Outcome.yes, 1);
  }
  r.run(`
    check a1 available=0 yes=${N * Q}/0
    check a2 available=0 no=${N * Q}/0
    freeze -> ok
    propose yes -> ok
    settle -> ok
    check a1 available=${N * Q * 100} yes=0/0
    check a2 available=0 no=0/0
    check market 1 oi=0
  `);
  const settled = r.lastEvents.filter((e) => e.type === 'PositionSettled');
  assert.deepEqual(settled.map((e) => [e.yes_qty, e.no_qty]), [[N * Q, 0], [0, N * Q]]);
});

test('rounds: close_ts freezes by itself, the oracle proposes when fresh, the dispute window settles', () => {
  scenario(`
    market close=2000 strike=100
    account a1 10000
    account a2 10000
    a1 buy yes 60 x1 -> resting
    a2 buy no 40 x1 -> filled fills=60x1/mint
    tick +2000 -> ok
    check market 1 round_status=frozen
    tick +1000 -> dropped
    oracle 1 150 -> ok
    tick +1 -> ok
    check market 1 round_status=proposed outcome=yes
    dispute -> ok
    check market 1 round_status=frozen
    tick +60000 -> ok                    # only the oracle source going stale: a disputed round is not proposed again
    check oracle price=0 fresh=0
    tick +1 -> dropped
    propose no -> ok
    tick +59999 -> dropped
    tick +1 -> ok
    check market 1 round_status=settled outcome=no
    check a2 available=10060
    check a1 available=9940
  `, { dispute_window_ms: 60_000 });
});

test('oracle: a stale source stops counting; proposal waits for quorum', () => {
  scenario(`
    market close=12000 strike=100
    account a1 10000
    oracle 1 99
    oracle 2 101
    tick +12000 -> ok                    # both sources went stale at +10000, before the close: the round waits
    check market 1 round_status=frozen
    oracle 3 120 -> ok
    tick +1 -> dropped
    oracle 1 80 -> ok
    tick +1 -> ok
    check market 1 round_status=proposed outcome=no
  `, { oracle_quorum: 2, oracle_staleness_ms: 10_000 });
});

test('deposits: a retry by ref credits once; the ref with another amount is duplicate_deposit_ref; refs are per account; no ref ' +
  'is never matched', () => {
  scenario(`
    account a1
    account a2
    a1 deposit 500 ref=w1 -> ok
    a1 deposit 500 ref=w1 -> ok
    a1 deposit 600 ref=w1 -> rejected duplicate_deposit_ref
    a2 deposit 600 ref=w1 -> ok
    a1 deposit 100 -> ok
    a1 deposit 100 -> ok
    check a1 available=700
    check a2 available=600
  `);
});

test('deposits: the completion carries the seq of the credit, a retry the first seq (no event), and an account forgets its oldest ' +
  'ref past deposit_ref_cap', () => {
  const cap = 3;
  const r = scenario('account a1', { deposit_ref_cap: cap });
  const account = 1;
  const deposit = (amount: number, ref: string): RecordObject[] => r.send({ type: 'Deposit', account, amount, ref });
  const first = deposit(7, 'wire-7');
  assert.deepEqual(first.map((e) => e.type), ['Deposited', 'CommandCompleted']);
  const seq = Number(first[0]!.seq);
  assert.equal(first[1]!.result, seq);
  const retry = deposit(7, 'wire-7');
  assert.deepEqual(retry.map((e) => e.type), ['CommandCompleted']);
  assert.equal(retry[0]!.status, CompletionStatus.ok);
  assert.equal(retry[0]!.result, seq);
  const other = deposit(8, 'wire-7');
  assert.equal(other[0]!.status, CompletionStatus.rejected);
  assert.equal(other[0]!.code_num, Reject.duplicate_deposit_ref);
  assert.equal(other[0]!.result, seq);
  const acc = r.engine.state.accounts;
  for (let i = 0; i < cap - 1; i++) deposit(1, `later-${i}`);
  assert.equal(acc.dCount[account], cap);
  assert.deepEqual(deposit(7, 'wire-7').map((e) => e.type), ['CommandCompleted'], 'still remembered at the cap');
  deposit(1, 'one-more');
  assert.equal(acc.dCount[account], cap);
  assert.equal(acc.depositRefIndex.size, cap);
  assert.deepEqual(deposit(7, 'wire-7').map((e) => e.type), ['Deposited', 'CommandCompleted'], 'forgotten: a new deposit');
  assert.equal(acc.available[account], 7 + 7 + (cap - 1) + 1);
  // The forgotten row was reused: rows in use stay at the cap.
  assert.equal(acc.depositRefIndex.size, cap);
});

test('withdrawals: held in reserved, idempotent by id, confirm pays out, fail returns', () => {
  scenario(`
    market
    account a1 10000
    a1 withdraw 1 3000 -> ok wid=1
    check a1 available=7000 reserved=3000
    a1 withdraw 1 3000 -> ok wid=1
    a1 withdraw 1 3001 -> rejected duplicate_client_withdrawal_id
    check a1 available=7000 reserved=3000
    a1 withdraw 2 2000 -> ok wid=2
    confirm 1 -> ok
    fail 2 -> ok
    confirm 2 -> rejected unknown_withdrawal
    check a1 available=7000 reserved=0
    a1 withdraw 3 7001 -> rejected withdrawal_exceeds_available
  `);
});

test('series: the first round opens at once at the fresh reference; close, proposal and settlement run by themselves; the next round ' +
  'opens at settlement', () => {
  scenario(`
    oracle 1 100
    oracle 2 120                          # lower median of 100 and 120 is 100
    series category=5 period=10 -> ok
    check market 1 round=1 round_status=trading strike=100 closes_in=10000
    account a1 10000
    account a2 10000
    a1 buy yes 60 x2 -> resting
    a2 buy no 40 x2 -> filled fills=60x2/mint
    oracle 1 130
    oracle 2 140
    tick +10001 -> ok                     # close_ts: frozen, and proposed from the oracle in the same tick
    check market 1 round=1 round_status=proposed outcome=yes settle_price=130
    tick +4999 -> dropped
    tick +1 -> ok                         # the dispute window ends: settled, paid, and round 2 opens at the reference
    check market 1 round=2 round_status=trading strike=130 closes_in=10000
    check a1 available=10080
    check a2 available=9920
    a1 buy yes 70 x1 -> resting
    a2 buy no 30 x1 -> filled fills=70x1/mint
    void -> ok                            # every share pays 50
    check a1 available=10060
    check a2 available=9940
    check market 1 round=2 round_status=void
    tick +1 -> ok                         # a voided series round is followed by the next one too
    check market 1 round=3 round_status=trading strike=130
    series category=5 period=10 -> rejected duplicate_series
    series category=6 period=0 -> rejected invalid_command
    series category=6 period=2592001 -> rejected invalid_command
  `, { oracle_staleness_ms: 30_000, dispute_window_ms: 5_000 });
});

test('series: a stale oracle holds back the first round, the proposal and the next round; fresh ticks release them; a stopped series ' +
  'opens no more rounds', () => {
  scenario(`
    oracle 1 100
    series category=7 period=20 -> ok
    check market 1 round=0                # one fresh source, quorum 2: the first round waits
    tick +1 -> dropped
    oracle 2 110
    tick +1 -> ok
    check market 1 round=1 round_status=trading strike=100 closes_in=20000
    tick +10000 -> ok                     # both sources go stale (OracleSourceExpired)
    check oracle price=0 fresh=0
    tick +10000 -> ok                     # close_ts: frozen; no quorum, so no proposal
    check market 1 round_status=frozen
    tick +5000 -> dropped
    oracle 1 90
    tick +1 -> dropped                    # one fresh source is not a quorum
    check oracle price=90 fresh=1
    oracle 2 95
    tick +1 -> ok                         # proposed from the reference now: 90 < 100
    check market 1 round_status=proposed outcome=no settle_price=90
    tick +1000 -> ok                      # settled; round 2 opens at 90
    check market 1 round=2 round_status=trading strike=90
    stop-series 7 -> ok
    stop-series 7 -> rejected unknown_series
    void -> ok
    tick +100 -> dropped                  # stopped: no round 3
    check market 1 status=closed round=2 round_status=void
    series category=7 period=20 -> ok     # a new series in the category: a new market, its round opens at once
    check market 2 round=3 round_status=trading strike=90
  `, { oracle_quorum: 2, oracle_staleness_ms: 10_000, dispute_window_ms: 1_000 });
});

test('oracle: a source going stale is an event; the reference and fresh count follow at once', () => {
  scenario(`
    market close=3600000
    oracle 1 100
    tick +5000 -> dropped
    oracle 2 300
    check oracle price=100 fresh=2
    tick +5001 -> ok                      # source 1 is over 10 s old: stale
    check oracle price=300 fresh=1
    tick +4998 -> dropped                 # source 2 is 9.999 s old
    tick +1 -> ok                         # exactly 10 s old: stale (fresh means younger than the limit)
    check oracle price=0 fresh=0
    oracle 1 200 -> ok
    check oracle price=200 fresh=1
  `, { oracle_staleness_ms: 10_000 });
});
