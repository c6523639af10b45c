// Accounts.retainingFrom: the search max_orders' eviction uses for an account
// that retains ended orders (src/engine/apply.ts makeRoom): the first marked
// account at or after the start, wrapping past the last account to 1, across
// the words of the bit set.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Accounts } from '../../src/accounts/accounts.js';

/** Accounts 1..n, the given ones marked. */
function accountsWith(n: number, marked: number[]): Accounts {
  const acc = new Accounts(4, 4);
  acc.ensureAccounts(n);
  acc.count = n;
  for (const a of marked) acc.markRetaining(a);
  return acc;
}

/** The same search, one account at a time. */
function slowly(n: number, marked: Set<number>, start: number): number {
  for (let i = 0; i < n; i++) {
    const a = ((start - 1 + i) % n) + 1;
    if (marked.has(a)) return a;
  }
  return 0;
}

test('accounts: retainingFrom finds the first marked account from the start, wrapping, in every word', () => {
  for (const n of [1, 5, 31, 32, 33, 64, 100, 1000]) {
    for (let trial = 0; trial < 20; trial++) {
      const marked = new Set<number>();
      const k = trial % 4 === 0 ? 0 : 1 + ((trial * 7) % Math.min(n, 9));
      for (let i = 0; i < k; i++) marked.add(1 + ((trial * 131 + i * 977) % n));
      const acc = accountsWith(n, [...marked]);
      for (let start = 1; start <= n; start += Math.max(1, Math.floor(n / 37))) {
        assert.equal(acc.retainingFrom(start), slowly(n, marked, start), `n ${n}, marked ${[...marked]}, start ${start}`);
      }
    }
  }
});

test('accounts: an unmarked account is passed over; the last one unmarked leaves nothing to find', () => {
  const acc = accountsWith(70, [3, 40, 69]);
  assert.equal(acc.retainingFrom(41), 69);
  acc.unmarkRetaining(69);
  assert.equal(acc.retainingFrom(41), 3, 'wraps past the last account');
  acc.unmarkRetaining(3);
  acc.unmarkRetaining(40);
  assert.equal(acc.retainingFrom(1), 0);
});
