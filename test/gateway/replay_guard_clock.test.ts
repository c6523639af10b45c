// The replay guard under wall-clock steps. A signature's entry lives until its
// timestamp leaves the window by the wall clock, and the window is the
// contract's ±5 s on the same clock, so a step forward never lets a replay in.
// A step back can: the window accepts timestamps again whose entries were
// already deleted. The guard keeps the seconds it deleted (a few ranges) and
// refuses a signature expiring in them as `stepped` (503, sign again later)
// rather than take it for a first use; with a clock that only moves forward
// that never refuses a signature the window accepts. Test process, main
// thread, except the last test (an exchange in process).

import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { test } from 'node:test';
import { checkTimestamp, ReplayGuard } from '../../src/gateway/auth.js';
import { startTestExchange } from '../support/exchange.js';
import { newAccount, raw, signHeaders } from '../support/harness.js';

const T0 = 1_800_000_000_123;
const HOUR = 3_600_000;
/** 12 other signatures in a table of 16 slots: their probes walk over every slot, deleting what has expired. */
function probeAll(g: ReplayGuard, now: number): void {
  for (let k = 0; k < 12; k++) g.firstUse(new Int32Array([100 + k * 7919, k, 3, 4, 5, 6, 7, 9]), now, now);
}

test('replay guard: no wall-clock step lets a replay inside the window through', () => {
  for (const step of [-60_000, -10_000, -5_001, -4_999, -1000, -1, 0, 1, 999, 1000, 4_999, 5_000, 5_001, 10_000, HOUR]) {
    for (const lag of [0, 1, 500, 999, 1000, 4_000, 4_999, 5_000]) {
      const g = new ReplayGuard(ReplayGuard.allocate(1 << 4));
      const d = new Int32Array([1, 2, 3, 4, 5, 6, 7, 8]);
      const ts = T0 + 17;
      assert.equal(g.firstUse(d, ts, T0), 'first');
      const now = T0 + lag + step;
      // Another request probes the same run at the stepped clock first (the deleter), then the replay.
      probeAll(g, now);
      const inWindow = checkTimestamp(String(ts), now) === null;
      if (inWindow) assert.equal(g.firstUse(d, ts, now), 'replayed', `step ${step} ms, replay ${lag} ms later`);
    }
  }
});

test('replay guard: a signature deleted after its window is refused (stepped, never first) when the clock steps back into it', () => {
  for (const later of [6_000, 10_000, 60_000, HOUR]) {
    const g = new ReplayGuard(ReplayGuard.allocate(1 << 4));
    const d = new Int32Array([1, 2, 3, 4, 5, 6, 7, 8]);
    const ts = T0 + 17;
    assert.equal(g.firstUse(d, ts, T0), 'first');
    // `later` ms on, other mutations probe the run and delete the first entry.
    probeAll(g, T0 + later);
    // The clock steps back by `later` (NTP, a resumed VM, an operator): the window accepts ts again.
    const now = T0 + 200;
    assert.equal(checkTimestamp(String(ts), now), null);
    // 6 s on, the entry (expiring at the second after ts + 5 s) was not deleted yet: it is still remembered.
    assert.equal(g.firstUse(d, ts, now), later === 6_000 ? 'replayed' : 'stepped', `the clock stepped back ${later} ms`);
    if (later === 6_000) continue;
    // A client that signs again after the time the guard names passes once the clock gets there.
    const after = g.signAfter(now);
    assert.ok(after > now && after <= T0 + later + 1000, `sign after ${after - T0} ms`);
    assert.equal(g.firstUse(new Int32Array([9, 9, 9, 4, 5, 6, 7, 8]), after, after), 'first');
  }
});

/** One signature of a family that all start at the same slot: each probe walks the others and deletes what has expired. */
const sig = (k: number): Int32Array => new Int32Array([k, k ^ 0x55, 3, 4, 5, 6, 7, 8]);

/**
 * A guard that saw 10 s of traffic (a signature a second), then a minute with the clock an hour fast, then `back`
 * seconds at the true time again, each signature a first use; the fast minute's signatures, and the next k for sig.
 */
function hourFastMinute(back: number): { g: ReplayGuard; fast: [Int32Array, number][]; k: number } {
  const g = new ReplayGuard(ReplayGuard.allocate(1 << 6));
  let k = 1;
  for (let s = 0; s < 10; s++) assert.equal(g.firstUse(sig(k++), T0 + s * 1000, T0 + s * 1000), 'first');
  const fast: [Int32Array, number][] = [];
  for (let s = 0; s < 60; s++) {
    const now = T0 + 10_000 + HOUR + s * 1000;
    fast.push([sig(k), now]);
    assert.equal(g.firstUse(sig(k++), now, now), 'first');
  }
  for (let s = 0; s < back; s++) {
    const now = T0 + 70_000 + s * 1000;
    assert.equal(g.firstUse(sig(k++), now, now), 'first', `${s} s after the step back to the true time`);
  }
  return { g, fast, k };
}

test('replay guard: after the clock ran an hour fast for a minute and steps back, new signatures pass at once; the fast ' +
  'seconds, once the true time reaches them, are refused', () => {
  const { g, fast } = hourFastMinute(10);
  const [d, ts] = fast[0]!;
  assert.equal(g.firstUse(d, ts, ts + 100), 'stepped', 'a signature used while the clock ran fast, replayed when the true time reaches it');
});

test('replay guard: idle gaps (each a range of deleted seconds of its own) and an hour fast still let the true time through', () => {
  const g = new ReplayGuard(ReplayGuard.allocate(1 << 6));
  let k = 1;
  let now = T0;
  // 30 bursts of 3 mutations, 20 s of silence after each: 30 gaps in the expiries the guard deletes.
  for (let b = 0; b < 30; b++, now += 20_000) {
    for (let i = 0; i < 3; i++, now += 1000) assert.equal(g.firstUse(sig(k++), now, now), 'first');
  }
  for (let s = 0; s < 60; s++) assert.equal(g.firstUse(sig(k++), now + HOUR + s * 1000, now + HOUR + s * 1000), 'first');
  now += 60_000;
  for (let s = 0; s < 10; s++, now += 1000) assert.equal(g.firstUse(sig(k++), now, now), 'first', `${s} s after the step back`);
});

test('replay guard: a clock that only moves forward, signatures up to the window\'s edge and deletions on every probe, never ' +
  'refuses a first use', () => {
  const g = new ReplayGuard(ReplayGuard.allocate(1 << 12));
  let k = 1;
  for (let now = T0; now < T0 + 120_000; now += 137) {
    for (const age of [0, 2_500, 4_999, 5_000]) {
      const d = new Int32Array([k, k ^ 0x33, 3, 4, 5, 6, 7, 8]);
      k++;
      assert.equal(g.firstUse(d, now - age, now), 'first', `at ${now - T0} ms, a signature ${age} ms old`);
    }
  }
});

test('replay guard: after a 20 s step back, the time to sign after is about 20 s on, not the end of an hour-fast range ' +
  'still ahead', () => {
  const { g, k: first } = hourFastMinute(40);
  let k = first;
  // Then a second step back, of 20 s: a mutation signed now expires in seconds already deleted.
  const now = T0 + 90_000;
  assert.equal(g.firstUse(sig(k++), now, now), 'stepped');
  // A signature stamped 21 s on passes (its expiry second was never deleted)...
  assert.equal(g.firstUse(sig(k++), now + 21_000, now + 21_000), 'first');
  // ...so the earliest time to sign after is at most that (the hour-fast range still ahead is not this one).
  const wait = g.signAfter(now) - now;
  assert.ok(wait <= 21_000, `signAfter tells the client to wait ${wait} ms`);
});

/** The slot a signature's entry starts from in the exchange's guard (2^21 entries; ReplayGuard.home). */
function homeOf(secret: string, ts: number, method: string, target: string, body: string): number {
  const mac = createHmac('sha256', Buffer.from(secret, 'base64')).update(`${ts}\n${method}\n${target}\n${body}`).digest();
  return (Math.imul(mac.readUInt32LE(0) ^ mac.readUInt32LE(4), 0x9e3779b1) >>> 0) & ((1 << 21) - 1);
}

test('keys service: a captured POST /keys replayed after the clock steps back 20 s is refused 503 shed with the time to sign ' +
  'after, not taken as a new key', async () => {
  const tx = await startTestExchange({ demo: false });
  const realNow = Date.now;
  try {
    const k = await newAccount(tx);
    const LATER = 20_000;
    const t = Date.now();
    // A key creation signed at t, and a later mutation (signed at t + 20 s) whose guard entry starts at the same slot.
    const firsts = new Map<number, string>();
    for (let i = 0; i < 4096; i++) {
      const body = JSON.stringify({ label: `f${i}`, scopes: ['read'] });
      firsts.set(homeOf(k.secret, t, 'POST', '/keys', body), body);
    }
    let later = '';
    let body = '';
    for (let j = 0; later === ''; j++) {
      const target = `/keys/${1_000_000 + j}`;
      const h = homeOf(k.secret, t + LATER, 'DELETE', target, '');
      if (firsts.has(h)) [later, body] = [target, firsts.get(h)!];
    }
    const captured = { ...signHeaders(k, 'POST', '/keys', body, t), 'content-type': 'application/json' };
    const port = tx.ex.accounts_port;
    const first = await raw(port, { method: 'POST', target: '/keys', body, headers: captured });
    assert.equal(first.status, 201, first.text);
    assert.equal((await raw(port, { method: 'POST', target: '/keys', body, headers: captured })).status, 401, 'replayed at once');
    // 20 s later (the keys service runs on this thread: stepping Date.now stands in for the time passing), another mutation.
    Date.now = () => realNow() + LATER;
    const other = await raw(port, { method: 'DELETE', target: later, headers: signHeaders(k, 'DELETE', later, '', t + LATER) });
    assert.equal(other.status, 404, other.text); // authenticated (unknown_key): its guard probe deleted the first entry
    // The host clock steps back 20 s (NTP, a resumed VM): t is inside the window again.
    Date.now = realNow;
    const replay = await raw(port, { method: 'POST', target: '/keys', body, headers: captured });
    assert.equal(replay.status, 503, `the replay was answered ${replay.status} ${replay.text}`);
    assert.equal(replay.json.error.code, 'shed');
    // Only the deleted entry's second is refused: a signature stamped a second later passes.
    const wait = Number(replay.json.error.details.retry_after_ms);
    assert.ok(wait >= 1 && wait <= 1000, replay.text);
    assert.equal((await tx.admin.account(k.accountId)).keys.length, 2, 'the account\'s key and the one first creation');
  } finally {
    Date.now = realNow;
    await tx.stop();
  }
});
