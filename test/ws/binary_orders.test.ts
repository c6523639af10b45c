// WebSocket binary order entry, black box with the `ws` package as the client
// and the client library's codec for the records: start_binary and the layout
// fingerprint, every command with its EntryResult, every refusal (each with
// the field's offset), core rejects, the in-flight cap, malformed frames
// (error message, then close 4002), out-of-order answers matched by
// correlation, DxOrderStream, the stage times of lane ws (JSON and binary),
// LAYOUT.md's worked example decoded, the timeout answer, shedding while
// the engine lags and while the thread stops, and a client_order_id placed
// over REST refused as a duplicate over WS JSON and in binary, and answers
// that never overtake their own user-channel events.

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { CLIENT_LAYOUT_FINGERPRINT, decodeResults, FrameEncoder, type EntryResultObject } from '../../src/client/binary_codec.js';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxWebSocket } from '../../src/client/websocket.js';
import { BinaryBatch, BinaryOrders, type BinaryPeer } from '../../src/ws/binary.js';
import { ApiError } from '../../src/gateway/envelope.js';
import type { LaneOptions } from '../../src/gateway/http.js';
import { CancelAll, CancelOrder, DecreaseOrder, Header, PlaceOrder, Scope } from '../../src/layout/records.js';
import { memOf } from '../../src/lib/mem.js';
import type { LatencyReport } from '../../src/wire/control_plane.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newKey, newMarket, order, signedRaw, sleep, type Key } from '../support/harness.js';
import { WsClient } from './ws_client.js';

let tx: TestExchange;
let alice: Key;
let bob: Key;
let market: number;
const open: WsClient[] = [];

async function binaryClient(k: Key): Promise<WsClient> {
  const c = await WsClient.connect(tx, k);
  open.push(c);
  const r = await c.call('start_binary', { layout_fingerprint: CLIENT_LAYOUT_FINGERPRINT });
  assert.equal(r.type, 'ok', JSON.stringify(r));
  assert.equal(r.msg.account_id, k.accountId);
  return c;
}

/** Sends one frame and waits for `n` answers (over however many frames), returned by correlation. */
async function exchange(c: WsClient, e: FrameEncoder, n: number): Promise<Map<number, EntryResultObject>> {
  const before0 = c.frames.length;
  c.sendRaw(Buffer.from(e.bytes()), true);
  e.reset();
  const out = new Map<number, EntryResultObject>();
  for (let have = before0; out.size < n; ) {
    await c.framesUntil(have + 1, 5000);
    for (; have < c.frames.length; have++) for (const r of decodeResults(c.frames[have]!)) out.set(r.correlation, r);
  }
  return out;
}

async function one(c: WsClient, e: FrameEncoder): Promise<EntryResultObject> {
  return [...(await exchange(c, e, 1)).values()][0]!;
}

/**
 * A place record spoiled one field at a time: what is spoiled, how (on the
 * frame's bytes) and the byte offset the refusal must name. `other` is an
 * account that is not the sender's.
 */
function refusedFields(other: number): [string, (m: Buffer) => void, number][] {
  return [
    ['producer', (m) => m.writeUInt16LE(2, 6), 6],
    ['account', (m) => m.writeUInt32LE(other, 12), 12],
    ['seq', (m) => m.writeUInt32LE(1, 16), 16],
    ['ts', (m) => m.writeUInt32LE(1, 28), 24],
    ['market_id', (m) => m.writeUInt32LE(0, 32), 32],
    ['qty 0', (m) => m.writeUInt32LE(0, 36), 36],
    ['qty above 1,000,000', (m) => m.writeUInt32LE(1_000_001, 36), 36],
    ['tick', (m) => m.writeUInt8(100, 44), 44],
    ['side', (m) => m.writeUInt8(2, 45), 45],
    ['outcome', (m) => m.writeUInt8(2, 46), 46],
    ['tif', (m) => m.writeUInt8(4, 47), 47],
    ['stp', (m) => m.writeUInt8(3, 48), 48],
    ['post_only', (m) => m.writeUInt8(2, 49), 49],
    [
      'post_only with ioc',
      (m) => {
        m.writeUInt8(1, 49);
        m.writeUInt8(2, 47);
      },
      49,
    ],
    ['has_client_order_id without an id', (m) => m.writeUInt8(1, 50), 56],
    ['an id without has_client_order_id', (m) => m.writeUInt32LE(5, 56), 56],
    ['reserved0', (m) => m.writeUInt32LE(1, 52), 52],
    ['gtd without expiry_ts', (m) => m.writeUInt8(1, 47), 64],
    ['expiry_ts without gtd', (m) => m.writeUInt32LE(1, 64), 64],
    ['max_cost without has_max_cost', (m) => m.writeUInt32LE(1, 72), 72],
    [
      'max_cost on a sell',
      (m) => {
        m.writeUInt8(1, 51);
        m.writeUInt8(1, 45);
      },
      72,
    ],
  ];
}

/** A frame of one decrease record (the offsets of its fields differ from a place's). */
function decreaseFrame(account: number): Buffer {
  const e = new FrameEncoder(account);
  e.decrease(5, '1', 1);
  return Buffer.from(e.bytes());
}

/** Frames that cannot be read as records, made from one good record: what is wrong, the bytes, what the error says. */
function malformedFrames(good: Buffer): [string, Buffer, RegExp][] {
  return [
    ['empty', Buffer.alloc(0), /empty/],
    ['not a multiple of 8', Buffer.alloc(12), /whole number of records/],
    [
      'unknown type',
      (() => {
        const b = Buffer.from(good);
        b.writeUInt16LE(5, 4);
        return b;
      })(),
      /type 5/,
    ],
    [
      'len of another type',
      (() => {
        const b = Buffer.from(good);
        b.writeUInt32LE(48, 0);
        return b;
      })(),
      /len 48/,
    ],
    ['runs past the frame', Buffer.concat([good, good]).subarray(0, 72), /run past|less than a header/],
    ['too many records', Buffer.concat(Array.from({ length: 9 }, () => good)), /more than 8 records/],
  ];
}

/** The type of each record of a binary command frame, in order. */
function recordTypes(frame: Uint8Array): number[] {
  const m = memOf(new Uint8Array(frame).buffer);
  const out: number[] = [];
  for (let o = 0; o < frame.length; o += Header.len(m, o)) out.push(Header.type(m, o));
  return out;
}

/** GET /admin/latency. */
async function latencyReport(t: TestExchange): Promise<LatencyReport> {
  const r = await fetch(`${t.adminBase}/admin/latency`, { headers: { authorization: `Bearer ${t.ex.admin_token}` } });
  assert.equal(r.status, 200);
  return (await r.json()) as LatencyReport;
}

/** The count and time of one stage of one route on lane ws, over every thread. */
function wsStageSum(rep: LatencyReport, route: string, stage: string): { count: number; sum_us: number } {
  const h = rep.histograms.filter((x) => x.lane === 'ws' && x.route === route && x.stage === stage);
  return { count: h.reduce((a, x) => a + x.count, 0), sum_us: h.reduce((a, x) => a + x.sum_us, 0) };
}

/** The bytes of the hex block that follows `title` in LAYOUT.md. */
function layoutHex(md: string, title: string): Buffer {
  const at = md.indexOf(title);
  assert.ok(at >= 0, title);
  const block = md.slice(md.indexOf('```\n', at) + 4, md.indexOf('\n```', md.indexOf('```\n', at) + 4));
  return Buffer.from(block.replace(/\s+/g, ''), 'hex');
}

before(async () => {
  // The budget test below waits for the budget to pass: 1 s, the default of a real exchange.
  tx = await startTestExchange({ demo: false, response_budget_ms: 1000, ws_max_in_flight: 4, ws: { max_records_per_frame: 8 } });
  alice = await newAccount(tx);
  bob = await newAccount(tx);
  market = await newMarket(tx);
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await Promise.all(open.map((c) => c.close()));
  await tx.stop();
});

describe('ws binary order entry', () => {
  it('binary: start_binary agrees on the fingerprint; another one is refused (code 10) and binary stays refused', async () => {
    const c = await WsClient.connect(tx, alice);
    open.push(c);
    const r = await c.call('start_binary', { layout_fingerprint: '0x00000000' });
    assert.deepEqual([r.type, r.msg.code, r.msg.name], ['error', 10, 'layout_mismatch']);
    assert.equal(r.msg.layout_fingerprint, CLIENT_LAYOUT_FINGERPRINT);
    assert.match(r.msg.msg, /native layout/);
    const bad = await c.call('start_binary', { layout_fingerprint: 'ddf822e3' });
    assert.deepEqual([bad.msg.code, bad.msg.name], [3, 'bad_params']);
    const e = new FrameEncoder(alice.accountId);
    e.cancel(1, '1');
    c.sendRaw(Buffer.from(e.bytes()), true);
    const err = await c.next((m) => m.type === 'error' && m.msg.code === 11);
    assert.equal(err.msg.name, 'malformed_frame');
    assert.match(err.msg.msg, /start_binary/);
    assert.equal((await c.waitClose()).code, 4002);
  });

  it('binary: a connection that agreed on the layout and then names another is refused binary from then on', async () => {
    const c = await binaryClient(alice);
    const r = await c.call('start_binary', { layout_fingerprint: '0x00000000' });
    assert.deepEqual([r.type, r.msg.name], ['error', 'layout_mismatch']);
    assert.match(r.msg.msg, /binary frames stay refused/);
    const before = (await alice.client.exchangeStatus()).as_of_seq;
    const e = new FrameEncoder(alice.accountId);
    e.place(1, order(market, { tick: 3, qty: 1 }));
    c.sendRaw(Buffer.from(e.bytes()), true);
    const err = await c.next((m) => m.type === 'error' && m.msg.code === 11);
    assert.equal(err.msg.name, 'malformed_frame');
    assert.equal((await c.waitClose()).code, 4002);
    assert.equal((await alice.client.exchangeStatus()).as_of_seq, before, 'the frame placed nothing');
  });

  it('binary: one frame places and cancels; answers carry seq, order id, fills and the correlation', async () => {
    const c = await binaryClient(alice);
    const e = new FrameEncoder(alice.accountId);
    // A resting NO bid at 60 from bob (REST), then alice buys 10 YES at 40 in binary: 4 fill (mint at YES 40), 6 rest.
    await bob.client.placeOrder(order(market, { outcome: 'no', tick: 60, qty: 4 }));
    e.place(7, order(market, { tick: 40, qty: 10, client_order_id: '1001' }));
    e.cancel(8, '999999');
    const rs = await exchange(c, e, 2);
    const p = rs.get(7)!;
    assert.deepEqual(
      [p.status, p.order_status, p.filled_qty, p.resting_qty, p.client_order_id, p.command_type],
      ['ok', 'partially_filled', 4, 6, '1001', 1],
    );
    assert.deepEqual(p.fills, [{ tick_yes: 40, qty: 4, path: 'mint' }]);
    assert.ok(Number(p.seq) > 0 && BigInt(p.ts) > 0n);
    const rest = (await alice.client.orders({ client_order_id: '1001' })).orders[0]!;
    assert.deepEqual([rest.order_id, rest.created_seq, rest.filled_qty], [p.order_id, p.seq, 4]);
    const x = rs.get(8)!;
    assert.deepEqual([x.status, x.code, x.num, x.order_id, x.command_type], ['rejected', 'unknown_order', 260, '999999', 2]);
    // Decrease then cancel the rest; cancel_all.
    e.decrease(9, p.order_id, 2);
    const d = await one(c, e);
    assert.deepEqual([d.status, d.result, d.order_id], ['ok', 2, p.order_id]);
    e.cancel(10, p.order_id);
    const k = await one(c, e);
    assert.deepEqual([k.status, k.result], ['ok', 2]);
    e.place(11, order(market, { tick: 5, qty: 1, group_id: 3 }));
    await one(c, e);
    e.cancelAll(12, { market_id: market, group_id: 3 });
    const all = await one(c, e);
    assert.deepEqual([all.status, all.command_type], ['ok', 4]);
    assert.equal((await alice.client.orders({ status: ['resting'] })).orders.length, 0);
  });

  it(
    'binary: execution outcomes are ok with a reason; core rejects carry the num; a reused client_order_id names the first ' + 'order',
    async () => {
      const c = await binaryClient(alice);
      const e = new FrameEncoder(alice.accountId);
      e.place(1, order(market, { tick: 3, qty: 1, tif: 'ioc' }));
      e.place(2, order(market, { tick: 3, qty: 1, client_order_id: '555' }));
      e.place(3, order(market, { tick: 4, qty: 1, client_order_id: '555' }));
      e.place(4, order(market, { side: 'sell', tick: 50, qty: 1_000 }));
      const rs = await exchange(c, e, 4);
      assert.deepEqual([rs.get(1)!.status, rs.get(1)!.order_status, rs.get(1)!.reason], ['ok', 'canceled', 'ioc_remainder']);
      const dup = rs.get(3)!;
      assert.deepEqual(
        [dup.status, dup.code, dup.num, dup.order_id, dup.order_status],
        ['rejected', 'duplicate_client_order_id', 266, rs.get(2)!.order_id, 'resting'],
      );
      assert.deepEqual([rs.get(4)!.status, rs.get(4)!.code], ['rejected', 'insufficient_position']);
    },
  );

  it('binary: each field the JSON schema refuses is refused with its byte offset, and nothing is sequenced', async () => {
    const c = await binaryClient(alice);
    const seqBefore = Number((await alice.client.exchangeStatus()).as_of_seq);
    const cases = refusedFields(bob.accountId);
    let corr = 100;
    for (const [what, spoil, offset] of cases) {
      const e = new FrameEncoder(alice.accountId);
      e.place(++corr, order(market, { tick: 10 }));
      const bytes = Buffer.from(e.bytes());
      spoil(bytes);
      c.sendRaw(bytes, true);
      const have = c.frames.length;
      const [r] = decodeResults((await c.framesUntil(have + 1))[have]!);
      assert.deepEqual([r!.correlation, r!.status, r!.code, r!.field_offset], [corr, 'refused', 'invalid_field', offset], what);
      assert.equal(r!.seq, '0', what);
    }
    const d = decreaseFrame(alice.accountId);
    d.writeUInt32LE(1, 44);
    c.sendRaw(d, true);
    const have = c.frames.length;
    assert.equal(decodeResults((await c.framesUntil(have + 1))[have]!)[0]!.field_offset, 44);
    assert.equal(Number((await alice.client.exchangeStatus()).as_of_seq), seqBefore, 'nothing was sequenced');
  });

  it('binary: an order id above 2^53 is unknown_order without sequencing; a max_cost above 2^53 is clamped as JSON does', async () => {
    const c = await binaryClient(alice);
    const e = new FrameEncoder(alice.accountId);
    e.cancel(1, '18446744073709551615');
    e.place(2, order(market, { tick: 2, qty: 1, tif: 'ioc', max_cost: '18446744073709551615' }));
    const rs = await exchange(c, e, 2);
    assert.deepEqual(
      [rs.get(1)!.status, rs.get(1)!.code, rs.get(1)!.seq, rs.get(1)!.order_id],
      ['rejected', 'unknown_order', '0', '18446744073709551615'],
    );
    assert.equal(rs.get(2)!.status, 'ok');
    const o = (await alice.client.orders({ limit: 1 })).orders[0]!;
    assert.equal(o.max_cost, String(Number.MAX_SAFE_INTEGER));
  });

  it('binary: a key without trade is refused missing_scope; an empty write bucket rate_limited with retry_after_ms', async () => {
    const reader = await newKey(tx, alice.accountId, ['read']);
    const c = await binaryClient(reader);
    const e = new FrameEncoder(alice.accountId);
    e.cancel(1, '1');
    const r = await one(c, e);
    assert.deepEqual([r.status, r.code, r.seq], ['refused', 'missing_scope', '0']);
    const k = await newAccount(tx);
    await tx.admin.setKeyTier(k.keyId, {
      tier: 'custom',
      read: { sustained_rate_per_s: 10, burst: 10 },
      write: { sustained_rate_per_s: 1, burst: 3 },
    });
    const d = await binaryClient(k);
    const f = new FrameEncoder(k.accountId);
    for (let i = 1; i <= 5; i++) f.cancel(i, String(100 + i));
    const rs = await exchange(d, f, 5);
    assert.deepEqual(
      [1, 2, 3].map((i) => rs.get(i)!.code),
      ['unknown_order', 'unknown_order', 'unknown_order'],
      'three tokens',
    );
    for (const i of [4, 5]) {
      assert.deepEqual([rs.get(i)!.status, rs.get(i)!.code], ['refused', 'rate_limited']);
      assert.ok(rs.get(i)!.retry_after_ms >= 1);
    }
  });

  it('binary: more than max_in_flight held records are refused shed; answers come back by correlation, whatever the order', async () => {
    const c = await binaryClient(bob);
    const e = new FrameEncoder(bob.accountId);
    tx.ex.pipeline.control.setPaused(true);
    for (let i = 1; i <= 6; i++) e.place(1000 - i, order(market, { tick: 2, qty: 1 }));
    c.sendRaw(Buffer.from(e.bytes()), true);
    e.reset();
    const early = decodeResults((await c.framesUntil(c.frames.length + 1))[c.frames.length - 1]!);
    assert.deepEqual(
      early.map((r) => [r.correlation, r.status, r.code]),
      [
        [995, 'refused', 'shed'],
        [994, 'refused', 'shed'],
      ],
      'the last two, at once',
    );
    tx.ex.pipeline.control.setPaused(false);
    const rest = new Map<number, EntryResultObject>();
    while (rest.size < 4) {
      const n = c.frames.length;
      await c.framesUntil(n + 1);
      for (const r of decodeResults(c.frames[n]!)) rest.set(r.correlation, r);
    }
    assert.deepEqual([...rest.keys()].sort(), [996, 997, 998, 999]);
    for (const r of rest.values()) assert.equal(r.status, 'ok');
  });

  it('binary: frames that cannot be read as records are answered malformed_frame and the connection closes with 4002', async () => {
    const e = new FrameEncoder(alice.accountId);
    e.cancel(1, '1');
    const good = Buffer.from(e.bytes());
    const frames = malformedFrames(good);
    for (const [what, bytes, why] of frames) {
      const c = await binaryClient(alice);
      c.sendRaw(bytes, true);
      const err = await c.next((m) => m.type === 'error', 3000, what);
      assert.deepEqual([err.id, err.msg.code, err.msg.name], [null, 11, 'malformed_frame'], what);
      assert.match(err.msg.msg, why, what);
      assert.deepEqual(await c.waitClose(), { code: 4002, reason: 'malformed binary frame' }, what);
    }
  });

  it('ws order entry is timed per stage on lane ws: binary records (route binary) and JSON commands (place_order), like REST', async () => {
    const k = await newAccount(tx);
    const n = 4; // the test exchange's max_in_flight
    const before0 = await latencyReport(tx);
    const c = await binaryClient(k);
    const e = new FrameEncoder(k.accountId);
    for (let i = 0; i < n; i++) e.place(100 + i, order(market, { tick: 3, qty: 1 }));
    for (const r of (await exchange(c, e, n)).values()) assert.equal(r.status, 'ok');
    for (let i = 0; i < n; i++)
      assert.equal((await c.reply(c.send('place_order', { ...order(market, { tick: 3, qty: 1 }) }), 5000)).status, 201);
    const after0 = await latencyReport(tx);
    for (const route of ['binary', 'place_order']) {
      const grew = (stage: string): { count: number; sum_us: number } => {
        const a = wsStageSum(after0, route, stage);
        const b = wsStageSum(before0, route, stage);
        return { count: a.count - b.count, sum_us: a.sum_us - b.sum_us };
      };
      const total = grew('total');
      assert.equal(total.count, n, `${route}: every placement timed`);
      let parts = 0;
      for (const stage of ['verify', 'publish', 'sequence', 'durable', 'apply', 'reply']) {
        const g = grew(stage);
        assert.equal(g.count, n, `${route}: every placement passed stage ${stage}`);
        parts += g.sum_us;
      }
      assert.ok(Math.abs(parts - total.sum_us) <= 4 * n, `${route}: stages ${parts} µs vs whole ${total.sum_us} µs`);
    }
  });

  it("binary: LAYOUT.md's worked example is what the client encodes, and decodes to what it says", () => {
    const md = readFileSync(fileURLToPath(new URL('../../../native-layout/LAYOUT.md', import.meta.url)), 'utf8');
    const hex = (title: string): Buffer => layoutHex(md, title);
    const e = new FrameEncoder(42);
    e.place(7, { market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 10, client_order_id: '1001' });
    e.cancel(8, '4700');
    assert.deepEqual(Buffer.from(e.bytes()), hex("The client's frame"));
    assert.equal(PlaceOrder.SIZE + 40, hex("The client's frame").length);
    const [placed, rejected] = decodeResults(hex('The answer frame'));
    assert.deepEqual(
      [placed!.correlation, placed!.status, placed!.seq, placed!.order_id, placed!.filled_qty, placed!.resting_qty, placed!.fills],
      [7, 'ok', '4711', '4711', 4, 6, [{ tick_yes: 40, qty: 4, path: 'mint' }]],
    );
    assert.deepEqual(
      [rejected!.correlation, rejected!.status, rejected!.code, rejected!.order_id],
      [8, 'rejected', 'unknown_order', '4700'],
    );
  });
});

it('binary: DxOrderStream places, decreases and cancels; the commands of one turn go out as one frame, split at ' +
  'max_records_per_frame', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: bob.keyId, secret: bob.secret });
  // The record types of every frame the stream sends.
  const sent: number[][] = [];
  const send = ws.sendBinary.bind(ws);
  ws.sendBinary = (frame) => {
    sent.push(recordTypes(frame));
    return send(frame);
  };
  const s = await DxOrderStream.open(ws);
  try {
    assert.equal(s.account, bob.accountId);
    const placed = await Promise.all(
      [1, 2, 3].map((i) => s.place(order(market, { tick: 6, qty: 3, client_order_id: String(8800 + i) }))),
    );
    for (const p of placed) assert.equal(p.status, 'ok');
    const [d, k] = await Promise.all([s.decrease(placed[0]!.order_id, 1), s.cancel(placed[1]!.order_id)]);
    assert.deepEqual([d.result, k.result], [1, 3]);
    const all = await s.cancelAll({ market_id: market });
    assert.equal(all.status, 'ok');
    // Ten in one turn on this exchange's 8 records per frame: 8, then 2 (ids that cannot exist: answered without sequencing).
    const many = await Promise.all(Array.from({ length: 10 }, () => s.cancel('18446744073709551615')));
    for (const r of many) assert.deepEqual([r.status, r.code], ['rejected', 'unknown_order']);
    const [P, C, D, A] = [PlaceOrder.TYPE, CancelOrder.TYPE, DecreaseOrder.TYPE, CancelAll.TYPE];
    assert.deepEqual(sent, [[P, P, P], [D, C], [A], Array(8).fill(C), [C, C]]);
    assert.equal(s.inFlight, 0);
  } finally {
    await s.close();
  }
});

it('binary: no outcome within the response budget answers status timeout (REST\'s 504 sequencing_timeout); while the engine ' +
  'lags, placements and cancel-alls are refused shed and a cancel still waits for its outcome', async () => {
  const k = await newAccount(tx);
  const c = await binaryClient(k);
  const e = new FrameEncoder(k.accountId);
  const budget = tx.ex.config.response_budget_ms;
  const send = (): number => {
    const n = c.frames.length;
    c.sendRaw(Buffer.from(e.bytes()), true);
    e.reset();
    return n;
  };
  const got = new Map<number, EntryResultObject>();
  const until = async (correlation: number, ms: number): Promise<EntryResultObject> => {
    for (let n = 0; !got.has(correlation); n++) {
      await c.framesUntil(n + 1, ms);
      for (const r of decodeResults(c.frames[n]!)) got.set(r.correlation, r);
    }
    return got.get(correlation)!;
  };
  tx.ex.pipeline.control.setPaused(true);
  try {
    e.place(1, order(market, { tick: 2, qty: 1, client_order_id: '9401' }));
    send();
    // Past half the budget the held placement makes the engine count as lagging.
    await sleep(budget / 2 + 100);
    e.place(2, order(market, { tick: 2, qty: 1, client_order_id: '9402' }));
    e.cancelAll(3, { market_id: market });
    e.cancel(4, '1');
    send();
    for (const x of [2, 3]) assert.deepEqual([(await until(x, 3000)).status, got.get(x)!.code], ['refused', 'shed'], `record ${x}`);
    assert.equal(got.has(4), false, 'a cancel is not shed: it waits');
    const t = await until(1, budget + 3000);
    assert.deepEqual([t.status, t.code, t.seq, t.client_order_id, t.command_type], ['timeout', null, '0', '9401', PlaceOrder.TYPE]);
  } finally {
    tx.ex.pipeline.control.setPaused(false);
  }
  // The cancel is answered once the engine runs again (unknown_order, or timeout if it ran out of budget on a slow machine).
  assert.notEqual((await until(4, budget + 3000)).status, 'refused');
  // The placement that timed out was in the ring: it may still land, and REST tells whether it did; the shed one never does.
  assert.ok(await eventually(async () => (await k.client.orders({ client_order_id: '9401' })).orders.length === 1, 3000));
  assert.equal((await k.client.orders({ client_order_id: '9402' })).orders.length, 0);
});

it('binary: while its thread is stopping, every record is refused shed before it takes a token or reaches the ring', () => {
  // Not reachable black box: the stop ends every connection in the turn it sets stopping, so no frame arrives after it.
  // BinaryOrders alone, then, with a lane that says it is stopping and would grant and sequence anything otherwise.
  let taken = 0;
  let submitted = 0;
  const lane = {
    stopping: () => true,
    buckets: { take: () => (taken++, 0) },
    core: { kick: () => undefined, tracing: null, submit: () => (submitted++, new Promise<never>(() => undefined)) },
  } as unknown as LaneOptions;
  let queued = 0;
  const results = new BinaryBatch();
  const peer: BinaryPeer = {
    keyId: 1, keyRow: 0, account: 7, scopes: Scope.trade, inFlight: 0, open: true, revoked: false, answers: () => results,
  };
  const e = new FrameEncoder(7);
  e.place(1, order(market, { tick: 2 }));
  e.cancel(2, '5');
  e.cancelAll(3, {});
  const bytes = new Uint8Array(e.bytes());
  new BinaryOrders(lane, 10, () => queued++).frame(peer, memOf(bytes.buffer), bytes.length, Date.now(), 0);
  const rs = decodeResults(results.bytes());
  assert.deepEqual(rs.map((r) => [r.correlation, r.status, r.code]), [1, 2, 3].map((x) => [x, 'refused', 'shed']));
  assert.deepEqual([taken, submitted, queued, peer.inFlight], [0, 0, 1, 0]);
});

it('idempotency across lanes: a client_order_id placed over REST is a duplicate over WS JSON (alone and in a batch) and in ' +
  'binary, each answer naming the REST order and its state', async () => {
  const k = await newAccount(tx);
  const first = await k.client.placeOrder(order(market, { tick: 9, qty: 2, client_order_id: '515151' }));
  assert.equal(first.status, 'resting');
  const c = await binaryClient(k);
  const json = await c.reply(c.send('place_order', { ...order(market, { tick: 10, client_order_id: '515151' }) }), 5000);
  const err = json.msg.error;
  assert.deepEqual(
    [json.type, json.status, err.code, err.num, err.origin, err.details.order_id, err.details.status],
    ['order_result', 409, 'duplicate_client_order_id', 266, 'core', first.order_id, 'resting'],
  );
  const batch = await c.reply(c.send('batch_place_orders', { orders: [order(market, { tick: 11, client_order_id: '515151' })] }), 5000);
  const item = batch.msg.results[0].error;
  assert.deepEqual([batch.status, item.code, item.details.order_id], [201, 'duplicate_client_order_id', first.order_id]);
  const e = new FrameEncoder(k.accountId);
  e.place(1, order(market, { tick: 12, client_order_id: '515151' }));
  const r = await one(c, e);
  assert.deepEqual(
    [r.status, r.code, r.num, r.order_id, r.order_status, r.client_order_id],
    ['rejected', 'duplicate_client_order_id', 266, first.order_id, 'resting', '515151'],
  );
  // Nothing else was placed: the one order is REST's, as it was sent.
  const listed = (await k.client.orders({ client_order_id: '515151' })).orders;
  assert.deepEqual(listed.map((o) => [o.order_id, o.tick, o.qty]), [[first.order_id, 9, 2]]);
});

it('binary: a command\'s answer never overtakes its user-channel events on the same connection, even when other requests ' +
  'drain the events between a batch\'s first answer and its write', async () => {
  const k = await newAccount(tx);
  await tx.admin.setKeyTier(k.keyId, { tier: 'market_maker' });
  const c = await binaryClient(k);
  // This suite's exchange holds at most 4 commands per connection: the rest are answered shed, which carry no order.
  const log: (['answer', string] | ['order', string])[] = [];
  let answers = 0;
  c.ws.on('message', (data: Buffer, isBinary: boolean) => {
    if (isBinary) {
      for (const r of decodeResults(data)) {
        answers++;
        if (r.status === 'ok') log.push(['answer', String(r.order_id)]);
      }
    }
    else {
      const m = JSON.parse(data.toString());
      if (m.type === 'order') log.push(['order', String(m.msg.order_id)]);
    }
  });
  assert.equal((await c.call('subscribe', { channels: ['user'] })).type, 'subscribed');
  // Another key's REST reads on the same gateway thread: each one drains the event ring before it is served.
  const other = await newAccount(tx);
  await tx.admin.setKeyTier(other.keyId, { tier: 'institutional' });
  const agent = new Agent({ keepAlive: true, maxSockets: 2 });
  let reading = true;
  const readers = [0, 1].map(async () => {
    while (reading) await signedRaw(tx.port, other, 'GET', '/v1/portfolio/balance', undefined, { agent });
  });
  const e = new FrameEncoder(k.accountId);
  const n = 900;
  try {
    for (let sent = 0; sent < n; ) {
      for (let i = 0; i < 1 + (sent % 3) && sent < n; i++, sent++) e.place(sent + 1, order(market, { tick: 1 + (sent % 30) }));
      c.sendRaw(Buffer.from(e.bytes()), true);
      e.reset();
      await sleep(1 + (sent % 4));
    }
    assert.ok(await eventually(() => answers === n, 10_000), 'every placement answered');
  } finally {
    reading = false;
    await Promise.all(readers);
    agent.destroy();
  }
  const seen = new Set<string>();
  const early: string[] = [];
  for (const [kind, id] of log) {
    if (kind === 'order') seen.add(id);
    else if (!seen.has(id)) early.push(id);
  }
  assert.ok(log.filter((x) => x[0] === 'answer').length > n / 4, 'a quarter or more of the placements were placed');
  assert.deepEqual(early, [], 'answers that arrived before their order\'s user-channel event');
});

it('binary: on a node that does not sequence, a cancel or decrease of an id above 2^53 is refused not_primary, as REST and ' +
  'JSON answer it (503 before the handler looks at the id), not rejected unknown_order', () => {
  // BinaryOrders alone, with a lane whose core is not writable (a standby): the black-box twin needs NATS.
  const notPrimary = (): never => {
    throw new ApiError('not_primary', 'this node is a standby: send writes to the primary');
  };
  const lane = {
    stopping: () => false,
    buckets: { take: () => 0 },
    core: { kick: () => undefined, tracing: null, assertWritable: notPrimary, hold: notPrimary },
  } as unknown as LaneOptions;
  const results = new BinaryBatch();
  const peer: BinaryPeer = {
    keyId: 1, keyRow: 0, account: 7, scopes: Scope.trade, inFlight: 0, open: true, revoked: false, answers: () => results,
  };
  const e = new FrameEncoder(7);
  e.cancel(1, '18446744073709551615');
  e.decrease(2, '9007199254740992', 1);
  e.cancel(3, '5');
  const bytes = new Uint8Array(e.bytes());
  new BinaryOrders(lane, 10, () => undefined).frame(peer, memOf(bytes.buffer), bytes.length, Date.now(), 0);
  const rs = decodeResults(results.bytes());
  assert.deepEqual(rs.map((r) => [r.correlation, r.status, r.code]), [1, 2, 3].map((x) => [x, 'refused', 'not_primary']));

  // With the connection's in-flight cap full such a cancel is shed, as the JSON lane checks the cap before the route.
  const full = new BinaryBatch();
  const busy: BinaryPeer = { ...peer, inFlight: 10, answers: () => full };
  const one = new FrameEncoder(7);
  one.cancel(4, '18446744073709551615');
  const frame = new Uint8Array(one.bytes());
  new BinaryOrders(lane, 10, () => undefined).frame(busy, memOf(frame.buffer), frame.length, Date.now(), 0);
  assert.deepEqual(decodeResults(full.bytes()).map((r) => [r.correlation, r.status, r.code]), [[4, 'refused', 'shed']]);
});
