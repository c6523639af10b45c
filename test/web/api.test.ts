// The trader page's REST helpers (src/web/lib/api.ts) that keep a retried
// placement from being made twice: a fresh client_order_id per order, and
// which failures leave its outcome unknown (then the page retries with the
// same id). DOM-free, so it runs in `npm test`.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, newClientOrderId, outcomeUnknown } from '../../src/web/lib/api.js';

test('api: a client_order_id is a decimal in 1..2^64-1, a new one each time', () => {
  const ids = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const id = newClientOrderId();
    assert.match(id, /^[1-9][0-9]{0,19}$/);
    assert.ok(BigInt(id) <= 0xffffffffffffffffn);
    ids.add(id);
  }
  assert.equal(ids.size, 1000);
});

test('api: only a 504 sequencing_timeout or a lost answer leaves an outcome unknown', () => {
  const err = (status: number, code: string): ApiError =>
    new ApiError(status, { code, num: null, origin: 'gateway', message: code, details: null });
  assert.equal(outcomeUnknown(err(504, 'sequencing_timeout')), true);
  assert.equal(outcomeUnknown(err(0, 'network')), true);
  const known = [[503, 'shed'], [429, 'rate_limited'], [409, 'duplicate_client_order_id'], [422, 'insufficient_balance']] as const;
  for (const [status, code] of known) {
    assert.equal(outcomeUnknown(err(status, code)), false, code);
  }
  assert.equal(outcomeUnknown(new Error('boom')), false);
  // A retry of an unknown outcome refused before the engine looked (not of origin core) leaves it unknown; a core answer does not.
  assert.equal(outcomeUnknown(err(429, 'rate_limited'), true), true);
  const core = new ApiError(422, { code: 'insufficient_balance', num: 3, origin: 'core', message: '', details: null });
  assert.equal(outcomeUnknown(core, true), false);
});
