// DxWebSocket (src/client/websocket.ts) against a real exchange, through a TCP
// proxy the test can cut: data channels with their subscriptions, JSON order
// entry with errors as DxApiError, and after a cut connection a reconnect
// with backoff that subscribes again and resumes the user channel from the
// last seq it delivered (nothing missed, nothing twice); commands held when
// the connection drops fail with DxConnectionLost. DxOrderStream (binary
// order entry) over the same proxy: after a cut it runs start_binary again
// on the new connection and keeps placing, and refuses a field out of range
// before writing any of its command. close() during a handshake leaves no
// socket; a first connect that fails (DxOrderStream.open refused) leaves
// none either, and one refused on a shared connection leaves its reconnects
// alone; two streams on one connection never take each other's answers; a
// revoked key's close (4003) is not reconnected; an unsubscribe is not made
// again by a reconnect.

import assert from 'node:assert/strict';
import { WebSocketServer } from 'ws';
import { after, before, it } from 'node:test';
import { DxApiError } from '../../src/client/errors.js';
import { DxOrderStream } from '../../src/client/order_stream.js';
import { DxConnectionLost, DxWebSocket, DxWsError, type Subscription, type WsMessage } from '../../src/client/websocket.js';
import { TcpProxy } from '../support/tcp_proxy.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, newAccount, newMarket, order, type Key } from '../support/harness.js';

let tx: TestExchange;
let k: Key;
let market: number;
let proxy: TcpProxy;

before(async () => {
  tx = await startTestExchange({ demo: false });
  k = await newAccount(tx);
  market = await newMarket(tx);
  proxy = new TcpProxy(tx.port);
  await proxy.listen();
});

after(async () => {
  tx.ex.pipeline.control.setPaused(false);
  await proxy.close();
  await tx.stop();
});

it('client ws: JSON order entry answers REST bodies and throws DxApiError with the envelope', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  await ws.connect();
  try {
    const p = await ws.placeOrder(order(market, { tick: 12, qty: 2 }));
    assert.equal(p.status, 'resting');
    const d = await ws.decreaseOrder(p.order_id, 1);
    assert.equal(d.new_qty, 1);
    const b = await ws.batchPlaceOrders([order(market, { tick: 13 }), order(market, { tick: 14 })]);
    assert.equal(b.results.length, 2);
    const c = await ws.cancelOrder(p.order_id);
    assert.equal(c.canceled_qty, 1);
    const bc = await ws.batchCancelOrders(b.results.map((x) => (x as { order_id: string }).order_id));
    assert.equal(bc.results.length, 2);
    assert.match((await ws.cancelAll({ market_id: market })).seq, /^[0-9]+$/);
    await assert.rejects(
      ws.cancelOrder(p.order_id),
      (e: unknown) => e instanceof DxApiError && e.status === 404 && e.code === 'unknown_order' && e.num === 260,
    );
    await assert.rejects(
      ws.placeOrder({ ...order(market), tick: 0 }),
      (e: unknown) => e instanceof DxApiError && e.code === 'invalid_field',
    );
    await assert.rejects(ws.subscribe(['ticker']), (e: unknown) => e instanceof DxWsError && e.code === 4);
    // A market named twice is one subscription (the exchange answers it once).
    const twice = await ws.subscribe(['trades'], [market, market]);
    assert.deepEqual(twice.map((x) => [x.channel, x.market_id]), [['trades', market]]);
  } finally {
    await ws.close();
  }
});

it('client ws: a refused upgrade rejects with the DxApiError of its envelope', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: Buffer.alloc(32, 1).toString('base64'), reconnect: false });
  await assert.rejects(ws.connect(), (e: unknown) => e instanceof DxApiError && e.status === 401 && e.code === 'unauthorized');
});

it('client ws: after a cut connection it reconnects, subscribes again and resumes the user channel without a gap', async () => {
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`,
    keyId: k.keyId,
    secret: k.secret,
    backoff: { minMs: 20, maxMs: 200 },
  });
  const user: WsMessage[] = [];
  const book: { m: WsMessage; sub: Subscription }[] = [];
  ws.onData((m, sub) => {
    if (sub.channel === 'user') user.push(m);
    else book.push({ m, sub });
  });
  await ws.connect();
  try {
    await ws.subscribe(['user']);
    const [bookSub] = await ws.subscribe(['orderbook_delta'], [market]);
    const placed: string[] = [];
    for (let i = 0; i < 3; i++) placed.push((await k.client.placeOrder(order(market, { tick: 20 + i }))).order_id);
    assert.ok(await eventually(() => user.some((m) => m.type === 'order' && m.msg.order_id === placed[2])));
    const firstSid = bookSub!.sid;
    proxy.cut();
    // While it is away: more orders over REST. The user channel must deliver them after the resume.
    for (let i = 0; i < 3; i++) placed.push((await k.client.placeOrder(order(market, { tick: 30 + i }))).order_id);
    assert.ok(await eventually(() => ws.connections === 2 && ws.connected, 5000), 'reconnected');
    assert.ok(
      await eventually(() => user.some((m) => m.type === 'order' && m.msg.order_id === placed[5]), 5000),
      'the missed orders arrived',
    );
    // The resume replays exactly what was missed: each order accepted once, exchange seqs strictly increasing.
    const accepted = user.flatMap((m) => (m.type === 'order' && m.msg.status === 'resting' ? [m.msg.order_id] : []));
    assert.deepEqual(accepted, placed);
    const seqs = user.flatMap((m) => (m.type === 'user_snapshot' || !('seq' in m.msg) ? [] : [Number(m.msg.seq)]));
    for (let i = 1; i < seqs.length; i++) assert.ok(seqs[i]! >= seqs[i - 1]!, 'exchange seqs in order');
    assert.ok(!user.some((m, i) => i > 0 && m.type === 'user_snapshot'), 'resumed from the retained log, no fresh snapshot');
    // The book was subscribed again: a fresh snapshot on a new sid, which (or a delta after it) shows the last order placed while away.
    assert.ok(await eventually(() => book.some((b) => b.m.type === 'orderbook_snapshot' && b.sub.sid !== firstSid), 3000));
    const shows32 = ({ m, sub }: { m: WsMessage; sub: Subscription }): boolean => sub.sid !== firstSid && (m.type === 'orderbook_snapshot'
      ? m.msg.yes.some(([t]) => t === 32)
      : m.type === 'orderbook_delta' && m.msg.side === 'yes' && m.msg.tick === 32 && m.msg.qty > 0);
    assert.ok(await eventually(() => book.some(shows32), 3000), 'the resubscribed book has the order placed while away');
  } finally {
    await ws.close();
  }
});

it('client ws: a command held when the connection drops fails with DxConnectionLost; the next one works after the reconnect', async () => {
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`,
    keyId: k.keyId,
    secret: k.secret,
    backoff: { minMs: 20, maxMs: 100 },
  });
  await ws.connect();
  try {
    tx.ex.pipeline.control.setPaused(true);
    const held = ws.placeOrder(order(market, { tick: 3, client_order_id: '31337' }));
    await new Promise((r) => setTimeout(r, 50));
    proxy.cut();
    await assert.rejects(held, (e: unknown) => e instanceof DxConnectionLost);
    tx.ex.pipeline.control.setPaused(false);
    assert.ok(await eventually(() => ws.connected, 5000));
    // Its outcome is unknown to the client; REST answers whether it landed (it did: it was in the ring).
    assert.ok(await eventually(async () => (await k.client.orders({ client_order_id: '31337' })).orders.length === 1, 3000));
    assert.equal((await ws.placeOrder(order(market, { tick: 3 }))).status, 'resting');
  } finally {
    tx.ex.pipeline.control.setPaused(false);
    await ws.close();
  }
});

it('client ws: DxOrderStream after a cut connection reconnects, runs start_binary again and keeps placing; a record held at ' +
  'the cut fails with DxConnectionLost', async () => {
  const url = `http://127.0.0.1:${proxy.port}`;
  const ws = new DxWebSocket({ url, keyId: k.keyId, secret: k.secret, backoff: { minMs: 20, maxMs: 100 } });
  const commands: string[] = [];
  const command = ws.command.bind(ws);
  ws.command = (cmd, params) => {
    commands.push(cmd);
    return command(cmd, params);
  };
  const s = await DxOrderStream.open(ws);
  // Open handlers run in order: this one runs once the stream's own (start_binary) has finished on the new connection.
  const restarted = new Promise<void>((resolve) => ws.onOpen((reconnected) => {
    if (reconnected) resolve();
  }));
  try {
    assert.equal((await s.place(order(market, { tick: 4, client_order_id: '424201' }))).status, 'ok');
    tx.ex.pipeline.control.setPaused(true);
    const held = s.place(order(market, { tick: 4, client_order_id: '424202' }));
    await new Promise((r) => setTimeout(r, 50));
    proxy.cut();
    await assert.rejects(held, (e: unknown) => e instanceof DxConnectionLost);
    tx.ex.pipeline.control.setPaused(false);
    const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error('no reconnect within 5 s')), 5000).unref());
    await Promise.race([restarted, timeout]);
    assert.equal(ws.connections, 2);
    assert.deepEqual(commands, ['start_binary', 'start_binary'], 'the layout agreed again on the new connection');
    const after = await Promise.all([5, 6].map((tick) => s.place(order(market, { tick, client_order_id: `42420${tick}` }))));
    assert.deepEqual(after.map((r) => [r.status, r.order_status]), [['ok', 'resting'], ['ok', 'resting']]);
    assert.equal(s.account, k.accountId);
    // The held record had reached the ring before the cut: REST finds it.
    assert.ok(await eventually(async () => (await k.client.orders({ client_order_id: '424202' })).orders.length === 1, 3000));
  } finally {
    tx.ex.pipeline.control.setPaused(false);
    await s.close();
  }
});

it('client ws: DxOrderStream refuses a field out of the JSON schema\'s bounds before writing it; nothing of that command is ' +
  'sent, and the next command goes alone', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  const s = await DxOrderStream.open(ws);
  try {
    const bad: [string, Record<string, unknown>][] = [
      ['client_order_id', { client_order_id: '18446744073709551616' }], ['qty', { qty: 2 ** 32 + 5 }], ['tick', { tick: 296 }],
      ['tick', { tick: 40.9 }], ['side', { side: 'SELL' }], ['outcome', { outcome: 'No' }], ['market_id', { market_id: 2 ** 32 + market }],
      ['side', { side: 'constructor' }], ['client_order_id', { client_order_id: '0' }], ['expiry_ts', { tif: 'gtd', expiry_ts: '0' }],
    ];
    for (const [field, patch] of bad)
      await assert.rejects(s.place({ ...order(market, { tick: 7 }), ...patch } as never), (e: unknown) =>
        e instanceof RangeError && e.message.startsWith(field), `${JSON.stringify(patch)} is refused by name`);
    await assert.rejects(s.cancel('18446744073709551616'), RangeError);
    await assert.rejects(s.decrease('1', -1), RangeError);
    await assert.rejects(s.cancelAll({ market_id: 1.5 }), RangeError);
    const ok = await s.place(order(market, { tick: 7, qty: 3, client_order_id: '707070' }));
    assert.equal(ok.status, 'ok');
    const mine = (await k.client.orders({ market_id: market })).orders.filter((o) => o.tick === 7);
    assert.deepEqual(mine.map((o) => [o.order_id, o.qty, o.client_order_id]), [[ok.order_id, 3, '707070']],
      'only the valid placement reached the exchange');
  } finally {
    await s.close();
  }
});

it('client ws: two DxOrderStreams on one DxWebSocket each get the answer to their own command', async () => {
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  await ws.connect();
  const a = await DxOrderStream.open(ws);
  const b = await DxOrderStream.open(ws);
  try {
    const [ra, rb] = await Promise.all([
      a.place(order(market, { tick: 21, qty: 1, client_order_id: '9100001' })),
      b.place(order(market, { tick: 22, qty: 2, client_order_id: '9100002' })),
    ]);
    assert.equal(ra.client_order_id, '9100001', 'a\'s placement answered with a\'s order');
    assert.equal(rb.client_order_id, '9100002', 'b\'s placement answered with b\'s order');
    assert.notEqual(ra.order_id, rb.order_id);
  } finally {
    await a.close();
  }
});

it('client ws: a DxOrderStream.open(ws) refused (layout_mismatch) leaves the connection\'s later reconnects alone', async () => {
  const url = `http://127.0.0.1:${proxy.port}`;
  const ws = new DxWebSocket({ url, keyId: k.keyId, secret: k.secret, backoff: { minMs: 20, maxMs: 100 } });
  // A client built from another native layout: its start_binary names another fingerprint (the exchange refuses it).
  const command = ws.command.bind(ws);
  ws.command = (cmd, params) => command(cmd, cmd === 'start_binary' ? { ...params, layout_fingerprint: '0xdeadbeef' } : params);
  await ws.connect();
  try {
    await ws.subscribe(['user']);
    await assert.rejects(DxOrderStream.open(ws), (e: unknown) => e instanceof DxWsError && e.codeName === 'layout_mismatch');
    // The bot falls back to JSON order entry on the same connection.
    assert.equal((await ws.placeOrder(order(market, { tick: 9 }))).status, 'resting');
    proxy.cut();
    assert.ok(await eventually(() => ws.connected, 5000), 'reconnected');
    await new Promise((r) => setTimeout(r, 1000));
    assert.ok(ws.connected && ws.connections <= 3,
      `the connection stays up after the reconnect (connected ${ws.connected}, ${ws.connections} connections opened)`);
    assert.equal((await ws.placeOrder(order(market, { tick: 9 }))).status, 'resting');
  } finally {
    await ws.close();
  }
});

it('client ws: a reconnect whose subscriptions are refused again (rate_limited) ends that connection and tries later, until ' +
  'they are restored', async () => {
  const r = await newAccount(tx);
  // Three read tokens, two more a second: the upgrade and the two subscriptions take them all.
  await tx.admin.setKeyTier(r.keyId, {
    tier: 'custom', read: { sustained_rate_per_s: 2, burst: 3 }, write: { sustained_rate_per_s: 100, burst: 100 },
  });
  const url = `http://127.0.0.1:${proxy.port}`;
  const ws = new DxWebSocket({ url, keyId: r.keyId, secret: r.secret, backoff: { minMs: 300, maxMs: 1500 } });
  let opens = 0;
  ws.onOpen(() => void opens++);
  try {
    await ws.connect();
    await ws.subscribe(['oracle']);
    await ws.subscribe(['user']);
    // Reads share the bucket: empty it, so that the first reconnects find too few tokens for the upgrade and both subscriptions.
    for (let i = 0; i < 4; i++) await r.client.balance().catch(() => undefined);
    proxy.cut();
    assert.ok(await eventually(() => opens === 2, 20_000), `restored after refusals (${ws.connections} connections)`);
    assert.ok(ws.connections > 2, 'at least one reconnect was refused and ended');
  } finally {
    await ws.close();
  }
});

it('client ws: a resume starts from the last seq whose messages all arrived, and skips those of a partly received one that the ' +
  'replay sends again (a command\'s messages share its seq)', () => {
  const dx = new DxWebSocket({ url: 'http://127.0.0.1:9', keyId: 1, secret: Buffer.alloc(32, 1).toString('base64'), reconnect: false });
  const feed = (type: string, msg: Record<string, unknown>): boolean =>
    (dx as unknown as { userMessage(m: unknown): boolean }).userMessage({ type, sid: 1, seq: 0, msg });
  const order = (seq: number, id: number): boolean => feed('order', { seq: String(seq), order_id: String(id) });
  assert.equal(feed('user_snapshot', { as_of_seq: '10' }), true);
  assert.equal(dx.userSeq, 10);
  // A mass cancel at seq 11: five order messages and a balance. The connection drops after the first two.
  assert.deepEqual([order(11, 1), order(11, 2)], [true, true]);
  assert.equal(dx.userSeq, 10, 'seq 11 is not whole yet');
  assert.equal(dx.resumePoint(), '10');
  // The replay: all of seq 11 again; the two delivered before are skipped, the rest delivered once.
  assert.deepEqual([1, 2, 3, 4, 5].map((id) => order(11, id)), [false, false, true, true, true]);
  assert.equal(feed('balance', { seq: '11' }), true);
  assert.equal(order(12, 6), true);
  assert.equal(dx.userSeq, 11, 'seq 11 whole once seq 12 arrived');
  // A resume that finds the log gone answers a fresh snapshot: nothing is skipped after it.
  dx.resumePoint();
  assert.equal(feed('user_snapshot', { as_of_seq: '20' }), true);
  assert.deepEqual([order(21, 7), order(21, 8)], [true, true]);
});

it('client ws: close() while the first handshake or a reconnect is under way leaves no socket behind', async () => {
  const first = new DxWebSocket({ url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret });
  const connecting = first.connect();
  await first.close();
  await assert.rejects(connecting, DxConnectionLost);
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(first.connected, false);
  assert.equal(proxy.open, 0, 'the abandoned handshake was closed');
  const ws = new DxWebSocket({ url: `http://127.0.0.1:${proxy.port}`, keyId: k.keyId, secret: k.secret, backoff: { minMs: 0, maxMs: 0 } });
  await ws.connect();
  proxy.cut();
  // The reconnect starts at once (no backoff); close() lands while its handshake is under way or just before it.
  await new Promise((r) => setImmediate(r));
  await ws.close();
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(ws.connected, false);
  assert.equal(proxy.open, 0, 'no reconnected socket came back to life');
});

it('client ws: a refused first connect (DxOrderStream.open: layout_mismatch) leaves no socket that reconnects', async () => {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  await new Promise((r) => wss.on('listening', r));
  let open = 0;
  let total = 0;
  wss.on('connection', (s) => {
    open++;
    total++;
    s.on('close', () => open--);
    s.on('message', (d) => {
      const m = JSON.parse(String(d)) as { id: number; cmd: string };
      if (m.cmd !== 'start_binary') return;
      const error = { code: 10, name: 'layout_mismatch', msg: 'another layout', layout_fingerprint: '0xdeadbeef' };
      s.send(JSON.stringify({ id: m.id, type: 'error', msg: error }));
    });
  });
  try {
    const url = `http://127.0.0.1:${(wss.address() as { port: number }).port}`;
    const secret = Buffer.alloc(32).toString('base64');
    await assert.rejects(DxOrderStream.open({ url, keyId: 1, secret, backoff: { minMs: 10, maxMs: 20 } }));
    assert.ok(await eventually(() => open === 0, 2000), 'the refused connection was closed');
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(total, 1, 'and nothing reconnected');
  } finally {
    for (const c of wss.clients) c.terminate();
    await new Promise((r) => wss.close(() => r(undefined)));
  }
});

it('client ws: a revoked key\'s connection (close 4003) is not reconnected, and onDisconnect gets the code', async () => {
  const made = await k.keys.createKey({ scopes: ['read', 'trade'] });
  const ws = new DxWebSocket({
    url: `http://127.0.0.1:${proxy.port}`, keyId: made.key_id, secret: made.secret, backoff: { minMs: 10, maxMs: 20 },
  });
  const codes: number[] = [];
  ws.onDisconnect((code) => codes.push(code));
  await ws.connect();
  try {
    await k.keys.revokeKey(made.key_id);
    assert.ok(await eventually(() => codes.length === 1, 3000), 'the exchange closed the connection');
    assert.deepEqual(codes, [4003]);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(ws.connections, 1, 'no reconnect with the revoked key');
    assert.equal(proxy.open, 0);
  } finally {
    await ws.close();
  }
});

it('client ws: an unsubscribed stream is not subscribed again by a reconnect', async () => {
  const url = `http://127.0.0.1:${proxy.port}`;
  const ws = new DxWebSocket({ url, keyId: k.keyId, secret: k.secret, backoff: { minMs: 10, maxMs: 50 } });
  const book: WsMessage[] = [];
  ws.onData((m, sub) => {
    if (sub.channel === 'orderbook_delta') book.push(m);
  });
  await ws.connect();
  try {
    const subs = await ws.subscribe(['orderbook_delta'], [market]);
    assert.ok(await eventually(() => book.length > 0, 3000), 'the snapshot arrived');
    await ws.unsubscribe(subs);
    proxy.cut();
    assert.ok(await eventually(() => ws.connections === 2 && ws.connected, 5000), 'reconnected');
    book.length = 0;
    await k.client.placeOrder(order(market, { tick: 11 }));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(book, [], 'no book messages after the unsubscribe, across the reconnect');
  } finally {
    await ws.close();
  }
});

it('client ws: unsubscribe() while the first subscribe is in flight ends the stream, now and across a reconnect', async () => {
  const a = await newMarket(tx);
  const url = `http://127.0.0.1:${proxy.port}`;
  const ws = new DxWebSocket({ url, keyId: k.keyId, secret: k.secret, backoff: { minMs: 10, maxMs: 50 } });
  const book: number[] = [];
  ws.onData((m, sub) => {
    if (sub.channel === 'orderbook_delta') book.push(sub.market_id);
  });
  await ws.connect();
  try {
    const subscribing = ws.subscribe(['orderbook_delta'], [a]);
    await ws.unsubscribe([{ channel: 'orderbook_delta', market_id: a }]);
    assert.deepEqual(await subscribing, [], 'nothing subscribed is left');
    book.length = 0;
    await k.client.placeOrder(order(a, { tick: 13 }));
    proxy.cut();
    assert.ok(await eventually(() => ws.connections === 2 && ws.connected, 5000), 'reconnected');
    await k.client.placeOrder(order(a, { tick: 14 }));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(book, [], 'no book messages after the unsubscribe, before and after the reconnect');
  } finally {
    await ws.close();
  }
});

it('client ws: unsubscribe() while a second subscribe of a live stream is in flight ends it once (the `existing` reply carries ' +
  'the sid already ended)', async () => {
  const a = await newMarket(tx);
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  await ws.connect();
  try {
    assert.equal((await ws.subscribe(['trades'], [a])).length, 1);
    const again = ws.subscribe(['trades'], [a]);
    await ws.unsubscribe([{ channel: 'trades', market_id: a }]);
    // Before: a second unsubscribe of the sid, answered unknown_sid, and subscribe() rejected.
    assert.deepEqual(await again, []);
  } finally {
    await ws.close();
  }
});

it('client ws: unsubscribe() while a new subscribe to a stream another connection kept alive is in flight ends it on the ' +
  'exchange (the stream comes back with the sid this connection ended before)', async () => {
  const a = await newMarket(tx);
  const keeper = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  const ws = new DxWebSocket({ url: tx.base, keyId: k.keyId, secret: k.secret });
  await keeper.connect();
  await ws.connect();
  try {
    assert.equal((await keeper.subscribe(['orderbook_delta'], [a])).length, 1);
    const [first] = await ws.subscribe(['orderbook_delta'], [a]);
    await ws.unsubscribe([first!]);
    const again = ws.subscribe(['orderbook_delta'], [a]);
    await ws.unsubscribe([{ channel: 'orderbook_delta', market_id: a }]);
    assert.deepEqual(await again, []);
    // What the exchange still sends this socket for that sid (the client drops it unseen).
    const streamed: string[] = [];
    (ws as unknown as { ws: { on(e: 'message', f: (d: Buffer) => void): void } }).ws.on('message', (d) => {
      const m = JSON.parse(d.toString('utf8'));
      if (m.sid === first!.sid) streamed.push(m.type);
    });
    await k.client.placeOrder(order(a, { tick: 17 }));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(streamed, [], `the exchange still streams sid ${first!.sid} to a connection that unsubscribed it`);
  } finally {
    await ws.close();
    await keeper.close();
  }
});

it('client ws: unsubscribe() while a reconnect subscribes again ends that stream and leaves the others subscribed', async () => {
  const [a, b, c] = [market, await newMarket(tx), await newMarket(tx)];
  const url = `http://127.0.0.1:${proxy.port}`;
  const ws = new DxWebSocket({ url, keyId: k.keyId, secret: k.secret, backoff: { minMs: 0, maxMs: 0 } });
  const snaps: number[] = [];
  const deltas: number[] = [];
  ws.onData((m: WsMessage, sub: Subscription) => {
    if (m.type === 'orderbook_snapshot') snaps.push(sub.market_id);
    if (m.type === 'orderbook_delta') deltas.push(sub.market_id);
  });
  await ws.connect();
  try {
    const subsA = await ws.subscribe(['orderbook_delta'], [a]);
    await ws.subscribe(['orderbook_delta'], [b]);
    await ws.subscribe(['orderbook_delta'], [c]);
    assert.ok(await eventually(() => snaps.length === 3, 3000));
    snaps.length = 0;
    proxy.cut();
    // The new connection is open and the reconnect is subscribing market a again: unsubscribe a now.
    await eventually(() => ws.connections === 2, 5000, 0);
    await ws.unsubscribe(subsA);
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(snaps.includes(b) && snaps.includes(c), `snapshots after the reconnect: ${JSON.stringify(snaps)} (a=${a}, b=${b}, c=${c})`);
    deltas.length = 0;
    await k.client.placeOrder(order(a, { tick: 12 }));
    await k.client.placeOrder(order(b, { tick: 12 }));
    await new Promise((r) => setTimeout(r, 500));
    assert.deepEqual(deltas, [b], `book deltas after the unsubscribe of a=${a} (b=${b})`);
  } finally {
    await ws.close();
  }
});
