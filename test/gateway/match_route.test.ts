// matchRoute: the memo of parameterless matches gives the same answers as a
// scan of the route table, for every route and for paths that are not a
// route's own string, and holds at most one entry per route.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { matchRoute, ROUTES, type Route } from '../../src/gateway/routes.js';

/** The reference: the linear scan matchRoute is defined by. */
function scan(routes: readonly Route[], method: string, path: string): { name: string; params: string[] } | { allowed: string[] } | null {
  const segs = path.split('/').filter((s) => s.length > 0);
  let allowed: string[] | null = null;
  for (const r of routes) {
    if (r.segments.length !== segs.length) continue;
    const params: string[] = [];
    if (!r.segments.every((w, i) => (w.startsWith('{') ? (params.push(segs[i]!), true) : w === segs[i]))) continue;
    if (r.method === method) return { name: r.name, params };
    (allowed ??= []).push(r.method);
  }
  return allowed ? { allowed } : null;
}

function same(method: string, path: string): void {
  const got = matchRoute(ROUTES, method, path);
  const want = scan(ROUTES, method, path);
  const plain = got === null ? null : 'route' in got ? { name: got.route.name, params: [...got.params] } : { allowed: got.allowed };
  assert.deepEqual(plain, want, `${method} ${path}`);
}

test('matchRoute: memoized and scanned answers agree for every route, variant paths, other methods and unknown paths', () => {
  const paths: string[] = [];
  for (const r of ROUTES) {
    const concrete = r.segments.map((s) => (s.startsWith('{') ? '12345' : s)).join('/');
    paths.push(`/${concrete}`, `/${concrete}/`, `//${concrete}`, `/${concrete}/extra`);
  }
  paths.push('/', '/v1', '/v1/nope', '/v2/portfolio/orders');
  // Twice: the second pass answers from the memo where the first filled it.
  for (let pass = 0; pass < 2; pass++) {
    for (const p of paths) for (const m of ['GET', 'POST', 'DELETE', 'PUT', 'HEAD']) same(m, p);
  }
});

test('matchRoute: a parameterless match is shared and frozen, a parameter match is fresh', () => {
  const a = matchRoute(ROUTES, 'POST', '/v1/portfolio/orders');
  const b = matchRoute(ROUTES, 'POST', '/v1/portfolio/orders');
  assert.ok(a !== null && 'route' in a && b !== null && 'route' in b);
  assert.equal(a, b);
  assert.ok(Object.isFrozen(a.params));
  const withParam = ROUTES.find((r) => r.method === 'GET' && r.segments.some((s) => s.startsWith('{')))!;
  const p = `/${withParam.segments.map((s) => (s.startsWith('{') ? '7' : s)).join('/')}`;
  const x = matchRoute(ROUTES, 'GET', p);
  const y = matchRoute(ROUTES, 'GET', p);
  assert.ok(x !== null && 'route' in x && y !== null && 'route' in y);
  assert.notEqual(x, y);
  assert.ok(x.params.includes('7'));
});
