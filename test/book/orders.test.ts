// OrderSlab's slot life cycle: a freed slot is reused, and the assertions at
// its boundaries (free of a free slot, a free-list slot found in use) stop
// the engine rather than let two orders share a slot.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { F_ID, OrderSlab, LF } from '../../src/book/orders.js';
import { AssertionError } from '../../src/lib/assert.js';

test('orders: a freed slot is handed out again; freeing it twice is an assertion failure', () => {
  const slab = new OrderSlab(4);
  const a = slab.alloc();
  slab.f64[(a << LF) | F_ID] = 1;
  const b = slab.alloc();
  slab.f64[(b << LF) | F_ID] = 2;
  slab.free(a);
  assert.equal(slab.alloc(), a, 'the free list is reused first');
  slab.f64[(a << LF) | F_ID] = 3;
  slab.free(a);
  assert.throws(() => slab.free(a), (e: unknown) => e instanceof AssertionError && /already free/.test(e.message));
  assert.equal(slab.count, 1);
});

test('orders: alloc refuses a free-list slot that holds an order (id set after its free)', () => {
  const slab = new OrderSlab(4);
  const a = slab.alloc();
  slab.f64[(a << LF) | F_ID] = 7;
  slab.free(a);
  slab.f64[(a << LF) | F_ID] = 8; // a bug elsewhere writing into a free slot
  assert.throws(() => slab.alloc(), (e: unknown) => e instanceof AssertionError && /free list holds a slot in use/.test(e.message));
});
