// parseQuery (src/gateway/query.ts): a component without '%' or '+' is taken
// as it is, anything else is decoded (+ as space, percent-escapes); either
// way the answers are the ones of decoding every component, and bad input is
// a 400 with the field named. Test process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError } from '../../src/gateway/envelope.js';
import { parseQuery, type QueryParam } from '../../src/gateway/query.js';

const SPEC: readonly QueryParam[] = [
  { name: 'depth', kind: 'depth' },
  { name: 'limit', kind: 'limit' },
  { name: 'cursor', kind: 'cursor' },
  { name: 'status', kind: 'statuses', values: ['resting', 'filled', 'canceled'] },
  { name: 'side', kind: 'choice', values: ['buy', 'sell', 'a b'], default: 'buy' },
];

function refused(raw: string): { code: string; field: unknown } {
  try {
    parseQuery(raw, SPEC);
  } catch (e) {
    assert.ok(e instanceof ApiError, String(e));
    return { code: e.code, field: e.details?.field };
  }
  assert.fail(`${raw} was accepted`);
}

test('parseQuery: plain and escaped components give the same values, defaults fill the rest', () => {
  const plain = parseQuery('depth=7&cursor=abc&status=resting,filled&side=sell', SPEC);
  assert.deepEqual(plain, { depth: 7, cursor: 'abc', status: ['resting', 'filled'], side: 'sell', limit: 100 });
  const escaped = parseQuery('dep%74h=%37&cursor=a%62c&status=resting%2Cfilled&%73ide=s%65ll', SPEC);
  assert.deepEqual(escaped, plain);
  assert.deepEqual(parseQuery('side=a+b', SPEC).side, 'a b');
  assert.deepEqual(parseQuery('side=a%20b', SPEC).side, 'a b');
  assert.deepEqual(parseQuery('cursor=x%2By', SPEC).cursor, 'x+y');
  assert.deepEqual(parseQuery('', SPEC), { limit: 100, depth: 10, side: 'buy' });
  assert.deepEqual(parseQuery('&&depth=2&', SPEC).depth, 2);
});

test('parseQuery: bad escapes, unknown and repeated parameters and bad values are 400s naming the field', () => {
  assert.deepEqual(refused('depth=%zz'), { code: 'invalid_field', field: 'query' });
  assert.deepEqual(refused('%E0%A4%A=1'), { code: 'invalid_field', field: 'query' });
  assert.deepEqual(refused('deep=1'), { code: 'unknown_field', field: 'deep' });
  assert.deepEqual(refused('dep+th=1'), { code: 'unknown_field', field: 'dep th' });
  assert.deepEqual(refused('depth=1&dep%74h=2'), { code: 'invalid_field', field: 'depth' });
  assert.deepEqual(refused('depth=0'), { code: 'invalid_field', field: 'depth' });
  assert.deepEqual(refused('depth=+1'), { code: 'invalid_field', field: 'depth' });
  assert.deepEqual(refused('status=resting,open'), { code: 'invalid_field', field: 'status' });
  assert.deepEqual(refused('side=a%2Bb'), { code: 'invalid_field', field: 'side' });
});
