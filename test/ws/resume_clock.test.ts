// The WebSocket lane keeps an account's user log for resume_window_ms after
// its last user subscription ends (docs/websocket.md, Resume), measured on the
// gateway thread's monotonic clock: a wall-clock step forward must not drop
// the idle logs at the next sweep (a client that lost its connection a moment
// ago could not resume), nor a step back keep them (and stop the expiry) for
// the length of the step. The lane is built on a GatewayCore of its own
// (test/support/gateway_core.ts), its connection callbacks called directly.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as delay } from 'node:timers/promises';
import { ReplayGuard } from '../../src/gateway/auth.js';
import { TokenBuckets } from '../../src/gateway/buckets.js';
import type { GatewayCore } from '../../src/gateway/core.js';
import { WsLane } from '../../src/ws/lane.js';
import { coreWithoutEngine } from '../support/gateway_core.js';

const realNow = Date.now;
const ACCOUNT = 7;

/** A lane with one connection of ACCOUNT subscribed to `user`, which then closes (at the real time). */
function closedUserConnection(resumeWindowMs: number): { lane: WsLane; core: GatewayCore; sweep: () => void } {
  const core = coreWithoutEngine(1000);
  const lane = new WsLane({} as never, {
    lane: {
      core,
      buckets: new TokenBuckets(TokenBuckets.allocate(16)),
      replay: new ReplayGuard(ReplayGuard.allocate(16)),
      limits: {} as never,
      routes: [],
    },
    uws: {} as never,
    keyCounts: null,
    config: { resume_window_ms: resumeWindowMs },
  });
  const inner = lane as unknown as { onClose(ws: unknown): void; sweep: () => void };
  // The lane's Conn as far as onClose reads it.
  const conn = {
    keyId: 1, keyRow: 0, account: ACCOUNT, open: true, out: [], subs: new Map(), byTopic: new Map(), user: null as unknown, ws: {},
  };
  const log = lane.fanout.userLog(ACCOUNT);
  const user = { peer: conn, sid: 1, account: ACCOUNT, seq: 0 };
  lane.fanout.addUserSub(log, user as never);
  const sub = { sid: 1, channel: 'user', user };
  conn.subs.set(1, sub);
  conn.user = sub;
  inner.onClose({ getUserData: () => ({ conn }) }); // the client's connection drops
  return { lane, core, sweep: () => inner.sweep() };
}

test('ws: the clock steps forward an hour 50 ms after a user connection dropped: its log is kept for the resume window', async () => {
  const { lane, core, sweep } = closedUserConnection(300_000);
  try {
    await delay(50);
    Date.now = () => realNow() + 3_600_000;
    try {
      sweep();
    } finally {
      Date.now = realNow;
    }
    const why = 'the user log was dropped 50 ms after the connection ended (resume window 5 min)';
    assert.ok(lane.fanout.existingLog(ACCOUNT) !== undefined, why);
  } finally {
    lane.close();
    core.close();
  }
});

test('ws: the clock steps back an hour after a user connection dropped: its log still goes once the resume window has passed', async () => {
  const { lane, core, sweep } = closedUserConnection(200);
  try {
    Date.now = () => realNow() - 3_600_000;
    try {
      await delay(400);
      sweep();
    } finally {
      Date.now = realNow;
    }
    const why = 'the user log is kept 400 ms after the connection ended (resume window 200 ms)';
    assert.equal(lane.fanout.existingLog(ACCOUNT), undefined, why);
  } finally {
    lane.close();
    core.close();
  }
});
