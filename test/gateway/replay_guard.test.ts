// ReplayGuard (src/gateway/auth.ts) on its own: a signature is refused while
// its timestamp is inside the window and forgotten after; an expired
// neighbour in a probe run never hides a live duplicate behind it; a table
// with no room refuses ('full') instead of letting a mutation through; and a
// long run with signatures expiring all the time answers exactly as a plain
// map of what is still inside the window; nothing signed before the process
// started passes. Through the lanes' authenticate():
// a replay is 401, a guard with no room 503 shed. Test process, main thread.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REPLAY_WINDOW_MS, ReplayGuard, sign } from '../../src/gateway/auth.js';
import { ApiError } from '../../src/gateway/envelope.js';
import { authenticate, CLIENT_LOG_FLUSH_MS, flushClientLog, startMac, type InFlight, type LaneOptions } from '../../src/gateway/http.js';
import { digestHi, digestLo } from '../../src/lib/hmac_sha256.js';
import { Rng } from '../../src/lib/rng.js';
import type { Views } from '../../src/views/views.js';

/** A digest (as checkMac leaves it) whose first 64 bits are lo, hi. */
function digest(lo: number, hi: number): Int32Array {
  const d = new Int32Array(8);
  // digestLo/digestHi byte-swap the first two words: find the words that read back as lo, hi.
  const swap = (v: number): number => ((v & 0xff) << 24) | ((v & 0xff00) << 8) | ((v >>> 8) & 0xff00) | (v >>> 24);
  d[0] = swap(lo);
  d[1] = swap(hi);
  assert.equal(digestLo(d) >>> 0, lo >>> 0);
  assert.equal(digestHi(d) >>> 0, hi >>> 0);
  return d;
}

/** The home slot the guard computes for (lo, hi) in a table of `entries`. */
function home(lo: number, hi: number, entries: number): number {
  return (Math.imul(lo ^ hi, 0x9e3779b1) >>> 0) & (entries - 1);
}

const T0 = 1_700_000_000_000;

test('replay guard: lookup finds what firstUse recorded inside the window and records nothing itself', () => {
  const g = new ReplayGuard(ReplayGuard.allocate(64));
  const d = digest(0x1234, 0x5678);
  assert.equal(g.lookup(d, T0), 'first');
  assert.equal(g.lookup(d, T0), 'first', 'a lookup is not a use');
  assert.equal(g.firstUse(d, T0, T0), 'first');
  assert.equal(g.lookup(d, T0 + 1000), 'replayed');
  assert.equal(g.lookup(d, T0 + REPLAY_WINDOW_MS + 2000), 'first', 'forgotten with the window');
  // A table full of other live signatures: firstUse has no room ('full'), but a lookup only reads: not seen.
  const full = new ReplayGuard(ReplayGuard.allocate(256));
  for (let i = 0; i < 256; i++) assert.equal(full.firstUse(digest(i + 1, 7), T0, T0), 'first');
  assert.equal(full.firstUse(d, T0, T0), 'full');
  assert.equal(full.lookup(d, T0), 'first');
});

test('replay guard: a signature is refused while its timestamp is inside the window, and forgotten once it has left it', () => {
  const g = new ReplayGuard(ReplayGuard.allocate(64));
  const d = digest(0x1234, 0x5678);
  assert.equal(g.firstUse(d, T0, T0), 'first');
  assert.equal(g.firstUse(d, T0, T0 + 1), 'replayed');
  // A client clock 4 s ahead: its timestamp stays inside the window until T0 + 4 s + 5 s.
  const ahead = digest(0x9999, 0x1);
  assert.equal(g.firstUse(ahead, T0 + 4000, T0), 'first');
  assert.equal(g.firstUse(ahead, T0 + 4000, T0 + 4000 + REPLAY_WINDOW_MS), 'replayed', 'the last moment checkTimestamp passes it');
  assert.equal(g.firstUse(d, T0, T0 + REPLAY_WINDOW_MS), 'replayed');
  // Past ts + window (rounded up to the second) no replay of it can pass checkTimestamp, so it is forgotten.
  assert.equal(g.occupancy(T0 + REPLAY_WINDOW_MS + 1000).live, 1, 'only the signature from the clock ahead is left');
  assert.equal(g.firstUse(d, T0, T0 + REPLAY_WINDOW_MS + 1000), 'first');
});

test('replay guard: a node that starts or takes over refuses (early) every single-use signature stamped before its floor, ' +
  'shared by every guard over the same memory', () => {
  const sab = ReplayGuard.allocate(64);
  new ReplayGuard(sab).setNotBefore(T0 + 4000);
  const g = new ReplayGuard(sab);
  assert.equal(g.notBefore, T0 + 4000, 'shared by every guard over the same memory');
  assert.equal(g.firstUse(digest(1, 2), T0 - 1, T0 + 10), 'early', 'signed before the start');
  assert.equal(g.firstUse(digest(5, 6), T0 + 3999, T0 + 10), 'early');
  assert.equal(g.firstUse(digest(3, 4), T0 + 4000, T0 + 10), 'first');
  assert.equal(g.firstUse(digest(3, 4), T0 + 4000, T0 + 20), 'replayed');
  assert.equal(new ReplayGuard(ReplayGuard.allocate(64)).firstUse(digest(1, 2), T0 - 1, T0), 'first', 'no floor unless set');
});

test('replay guard: an expired entry earlier in the run does not hide a live duplicate behind it', () => {
  const entries = 16;
  const g = new ReplayGuard(ReplayGuard.allocate(entries));
  // Two signatures with one home slot: x takes it, a goes next to it.
  const x = { lo: 1, hi: 0 };
  let a = { lo: 2, hi: 0 };
  while (home(a.lo, a.hi, entries) !== home(x.lo, x.hi, entries)) a = { lo: a.lo + 1, hi: 0 };
  const dx = digest(x.lo, x.hi);
  const da = digest(a.lo, a.hi);
  assert.equal(g.firstUse(dx, T0 - 4000, T0), 'first'); // x's timestamp leaves the window first
  assert.equal(g.firstUse(da, T0 + 4000, T0), 'first');
  // x has expired, a has not: a replay of a must still be found past x's slot.
  const later = T0 + 7000;
  assert.equal(g.firstUse(da, T0 + 4000, later), 'replayed');
  assert.equal(g.occupancy(later).live, 1);
  // x is forgotten and can be used again (its old entry was deleted on the way).
  assert.equal(g.firstUse(dx, later, later), 'first');
  assert.equal(g.firstUse(da, T0 + 4000, later), 'replayed');
});

test('replay guard: with no room left it refuses (full) instead of letting the mutation through', () => {
  const entries = 8;
  const g = new ReplayGuard(ReplayGuard.allocate(entries));
  const seen: Int32Array[] = [];
  let lo = 1;
  for (; seen.length < entries; lo++) {
    const d = digest(lo, 7);
    assert.equal(g.firstUse(d, T0, T0), 'first');
    seen.push(d);
  }
  assert.equal(g.firstUse(digest(lo, 7), T0, T0), 'full', 'a new signature with every slot live');
  for (const d of seen) assert.equal(g.firstUse(d, T0, T0 + 2000), 'replayed', 'a full table still finds every live one');
  // Once they expire there is room again.
  assert.equal(g.firstUse(digest(lo, 7), T0 + 7000, T0 + 7000), 'first');
});

test('replay guard: a long run with signatures expiring all the time answers as a map of what is inside the window', () => {
  const entries = 1024;
  const g = new ReplayGuard(ReplayGuard.allocate(entries));
  const rng = new Rng(913);
  const model = new Map<string, number>(); // "lo:hi" -> expiry second
  const sent: { lo: number; hi: number; ts: number }[] = [];
  let now = T0;
  let replays = 0;
  for (let step = 0; step < 60_000; step++) {
    now += rng.int(0, 40); // about 50 signatures a second: ~300 live at a time in 1,024 slots
    // One in four sends again one of the last 50 signatures (inside the window or just past it).
    const old = sent.length > 0 && rng.int(0, 3) === 0 ? sent[sent.length - 1 - rng.int(0, Math.min(50, sent.length) - 1)]! : null;
    // Half the signatures share their low 32 bits with another one, so runs form.
    const s = old ?? { lo: rng.int(0, 300), hi: rng.int(0, 0xffffffff), ts: now + rng.int(-REPLAY_WINDOW_MS, REPLAY_WINDOW_MS) };
    if (Math.abs(s.ts - now) > REPLAY_WINDOW_MS) continue; // checkTimestamp would refuse it before the guard
    if (old === null) sent.push(s);
    const key = `${s.lo}:${s.hi >>> 0}`;
    const nowS = Math.floor(now / 1000);
    const exp = model.get(key);
    const want = exp !== undefined && exp >= nowS ? 'replayed' : 'first';
    if (want === 'first') model.set(key, Math.ceil((s.ts + REPLAY_WINDOW_MS) / 1000));
    else replays++;
    assert.equal(g.firstUse(digest(s.lo, s.hi), s.ts, now), want, `step ${step}: ${key} at ${now}`);
  }
  assert.ok(replays > 1000, `${replays} replays checked`);
  let live = 0;
  const nowS = Math.floor(now / 1000);
  for (const exp of model.values()) if (exp >= nowS) live++;
  assert.equal(g.occupancy(now).live, live);
});

/** A read model with one key, id 5 of account 1 (every scope), and its secret. */
function keyFiveViews(secret: Uint8Array): Pick<Views, 'keyInfo' | 'keyRow' | 'keySecret'> {
  return {
    keyInfo: (id: number) => (id === 5 ? { account_id: 1, scopes: 7, revoked: false, secret, row: 0 } : null),
    keyRow: (id: number) => (id === 5 ? 0 : -1),
    keySecret: () => secret,
  };
}

test('replay guard: through authenticate, a replay is 401 unauthorized, a guard with no room 503 shed, and a signature below ' +
  'the floor 503 shed with retry_after_ms', () => {
  const secret = new Uint8Array(32).fill(9);
  const views = keyFiveViews(secret);
  const logs: Record<string, unknown>[] = [];
  // One slot: the second distinct signature inside the window finds no room.
  const opts = { core: { views }, replay: new ReplayGuard(ReplayGuard.allocate(1)), log: (f: Record<string, unknown>) => logs.push(f) };
  const target = '/v1/portfolio/orders';
  const request = (ts: number, body: string): InFlight => {
    const f = {
      method: 'POST', target, keyHeader: '5', tsHeader: String(ts), sigHeader: sign(secret, String(ts), 'POST', target, body), mac: null,
    } as unknown as InFlight;
    startMac(views, f);
    f.mac!.update(Buffer.from(body));
    return f;
  };
  const now = Date.now();
  const lane = opts as unknown as LaneOptions;
  assert.equal(authenticate(lane, request(now, '{"a":1}'), 'place_order', now).account, 1);
  const refused = (f: InFlight, code: string, status: number): void => {
    const is = (e: unknown): boolean => e instanceof ApiError && e.code === code && e.status === status;
    assert.throws(() => authenticate(lane, f, 'place_order', now), is);
  };
  refused(request(now, '{"a":1}'), 'unauthorized', 401);
  refused(request(now, '{"b":2}'), 'shed', 503);
  // Below the floor of a node that just started: 503 shed, with the wait until a new signature passes.
  opts.replay.setNotBefore(now + 3000);
  const early = (() => {
    try {
      authenticate(lane, request(now, '{"c":3}'), 'place_order', now);
    } catch (e) {
      return e;
    }
    return null;
  })();
  assert.ok(early instanceof ApiError && early.code === 'shed' && early.status === 503, String(early));
  assert.equal((early.body().error.details as { retry_after_ms: string }).retry_after_ms, '3000');
  assert.deepEqual(logs.map((l) => l.event), ['auth_failed', 'replay_guard_full', 'auth_early']);
  assert.equal(logs[0]!.reason, 'replayed signature');
});

/** One sign-in of key 5 with a bad signature, refused by authenticate (a log line a client can cause). */
/** A lane whose log lines are kept in `logs`, for key 5 of keyFiveViews. */
function loggingLane(): { lane: unknown; views: ReturnType<typeof keyFiveViews>; logs: Record<string, unknown>[] } {
  const views = keyFiveViews(new Uint8Array(32).fill(9));
  const logs: Record<string, unknown>[] = [];
  const lane = { core: { views }, replay: new ReplayGuard(ReplayGuard.allocate()), log: (f: Record<string, unknown>) => logs.push(f) };
  return { lane, views, logs };
}

function refuseBadSignature(lane: unknown, views: ReturnType<typeof keyFiveViews>): void {
  const now = Date.now();
  const f = { method: 'GET', target: '/v1/markets', keyHeader: '5', tsHeader: String(now), sigHeader: 'AAAA', mac: null };
  startMac(views, f as unknown as InFlight);
  assert.throws(() => authenticate(lane as LaneOptions, f as unknown as InFlight, 'list_markets', now), ApiError);
}

test('auth: the log lines a client can cause are a burst of 50 a thread, then 10 a second; the next line counts the rest', () => {
  flushClientLog(); // nothing left over from the tests before
  const { lane, views, logs } = loggingLane();
  const bad = (): void => refuseBadSignature(lane, views);
  // The clock stands still during the flood (on a loaded machine 1,000 refusals took 300 ms: three refills of 10 a second,
  // each writing a line that resets the count), then moves 250 ms: 2.5 tokens.
  const realNow = Date.now;
  const t = realNow();
  try {
    Date.now = () => t;
    for (let i = 0; i < 1000; i++) bad();
    assert.ok(logs.length >= 40 && logs.length <= 50, `${logs.length} lines for 1,000 refusals`);
    Date.now = () => t + 250;
    const before = logs.length;
    bad();
    assert.equal(logs.length, before + 1);
    assert.equal(logs.at(-1)!.suppressed, 1000 - before, JSON.stringify(logs.at(-1)));
  } finally {
    Date.now = realNow;
  }
});

test('auth: a flood of client-caused log lines that stops is still counted, by a line of its own', async () => {
  const { lane, views, logs } = loggingLane();
  for (let i = 0; i < 500; i++) refuseBadSignature(lane, views);
  const written = logs.length;
  assert.ok(written < 500, `${written} lines for 500 refusals`);
  await new Promise((r) => setTimeout(r, CLIENT_LOG_FLUSH_MS + 200));
  const total = logs.slice(written).filter((l) => l.event === 'client_log_suppressed');
  assert.equal(total.length, 1, JSON.stringify(logs.slice(written)));
  const counted = logs.reduce((n, l) => n + 1 + ((l.suppressed as number | undefined) ?? 0), 0) - total.length;
  assert.equal(counted, 500, 'every refusal is a line or in a count');
});

test('auth: a thread that stops within the flush timer\'s second writes its count of left-out lines as it stops', async () => {
  const { lane, views, logs } = loggingLane();
  // Spend whatever budget the tests before left, so that this flood's lines are left out.
  for (let i = 0; i < 500; i++) refuseBadSignature(lane, views);
  await new Promise((r) => setTimeout(r, CLIENT_LOG_FLUSH_MS + 200));
  const from = logs.length;
  for (let i = 0; i < 300; i++) refuseBadSignature(lane, views);
  flushClientLog(); // what the gateway thread does as it stops
  const counted = refusalsIn(logs.slice(from));
  assert.equal(counted, 300, JSON.stringify(logs.slice(from)));
  // The timer was cleared with the count: nothing is written twice.
  await new Promise((r) => setTimeout(r, CLIENT_LOG_FLUSH_MS + 200));
  const after = refusalsIn(logs.slice(from));
  assert.equal(after, 300, JSON.stringify(logs.slice(from)));
});

/** Refusals that lines account for: each refusal line, plus the counts of left-out ones on any line. */
function refusalsIn(lines: Record<string, unknown>[]): number {
  return lines.reduce((n, l) => n + (l.event === 'client_log_suppressed' ? 0 : 1) + ((l.suppressed as number | undefined) ?? 0), 0);
}
