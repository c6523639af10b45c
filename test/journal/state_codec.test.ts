// State codec (src/journal/state_codec.ts): a read model survives
// encodeViews/decodeViews with its state hash, its projections (every
// query answers the same) and its future: the decoded state keeps evolving,
// and an engine on it keeps deciding, exactly like the original. Anything
// that is not plain data fails loudly with its path. A snapshot holds what the
// state retains, whatever the seq, and the state hash sees content, not layout.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deserialize, serialize } from 'node:v8';
import {
  B_TICK, F_ID, F_RESERVED_CASH, LB, LF, LW, ORDER_FIELDS, OrderSlab, SB, SF, SH, SW, W_PREV, W_REMAINING,
} from '../../src/book/orders.js';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { verify } from '../../src/engine/verify.js';
import { captureViews, decodeViews, encodeViews, serializeCaptured, stateHash } from '../../src/journal/state_codec.js';
import { IdIndex } from '../../src/lib/id_index.js';
import { Outcome, Side, Stp, Tif } from '../../src/layout/records.js';
import { decodeRecord, encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { RecordRings } from '../../src/views/record_rings.js';
import { Views, type ViewsConfig } from '../../src/views/views.js';
import { ReferenceModel } from '../support/reference_model.js';
import { CommandGenerator, DIFF_CONFIG } from '../support/random_commands.js';
import { JOURNAL_ENGINE_CONFIG } from './journal_fixture.js';

const SEED = 31;
const BEFORE = 6000;
const AFTER = 6000;

/** Every query of a read model that takes no client input, for all its accounts, markets and withdrawals. */
function answers(v: Views): Record<string, unknown> {
  const s = v.state;
  const q = (f: () => unknown): unknown => {
    try {
      return f();
    } catch (e) {
      return { threw: (e as Error).message };
    }
  };
  const page = { limit: 1000 };
  const out: Record<string, unknown> = {
    as_of_seq: v.asOfSeq, markets: q(() => v.markets(page)), rounds: q(() => v.rounds(page)), series: q(() => v.series()),
    oracle: q(() => v.oraclePrice()), retention: q(() => v.retention()),
  };
  for (let m = 1; m <= s.markets.count; m++) out[`market ${m}`] = [q(() => v.orderbook(m, 100)), q(() => v.trades(m, page))];
  for (let a = 1; a <= s.accounts.count; a++) {
    out[`account ${a}`] = [
      q(() => v.balance(a)), q(() => v.positions(a, page)), q(() => v.fills(a, page)), q(() => v.orders(a, page)),
      q(() => v.deadman(a)), q(() => v.keys(a)),
    ];
  }
  for (let w = 1; w <= s.accounts.withdrawalCount; w++) out[`withdrawal ${w}`] = q(() => v.withdrawalByWid(w));
  return out;
}

/** An engine after n random commands of the generator (the model beside it keeps them valid). */
function engineAfter(seed: number, n: number): Engine {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(seed, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out);
  for (let i = 0; i < n; i++) {
    const { mem } = encodeToMem(gen.next());
    model.execute(decodeRecord(mem, 0));
    engine.execute(mem, 0);
    out.reset();
  }
  return engine;
}

test('state_codec: a read model round-trips with its hash and answers, then evolves and decides identically', (t) => {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(SEED, model);
  const outA = new BufferEventOut(1 << 22);
  const engineA = new Engine(JOURNAL_ENGINE_CONFIG, outA);
  const original = new Views(JOURNAL_ENGINE_CONFIG);
  const next = (): ReturnType<typeof encodeToMem>['mem'] => {
    const { mem } = encodeToMem(gen.next());
    model.execute(decodeRecord(mem, 0));
    return mem;
  };
  for (let i = 0; i < BEFORE; i++) {
    engineA.execute(next(), 0);
    for (const o of outA.offsets()) original.apply(outA.mem, o);
    outA.reset();
  }
  const bytes = encodeViews(original);
  const copy = decodeViews(bytes);
  t.diagnostic(`seed=${SEED}: ${BEFORE} commands -> seq ${original.asOfSeq}, snapshot body ${bytes.length} bytes`);
  assert.ok(copy instanceof Views);
  assert.equal(stateHash(copy.state), stateHash(original.state));
  assert.equal(stateHash(copy.state), stateHash(engineA.state));
  assert.deepEqual(answers(copy), answers(original));
  assert.deepEqual(verify(copy.state), []);

  // An engine continuing from a second decode, and the decoded read model, follow the original stream.
  const outB = new BufferEventOut(1 << 22);
  const engineB = new Engine(JOURNAL_ENGINE_CONFIG, outB, decodeViews(bytes).state);
  let events = 0;
  for (let i = 0; i < AFTER; i++) {
    const mem = next();
    const seqA = engineA.execute(mem, 0);
    const seqB = engineB.execute(mem, 0);
    assert.equal(seqB, seqA);
    if (Buffer.compare(outA.mem.u8.subarray(0, outA.length), outB.mem.u8.subarray(0, outB.length)) !== 0) {
      assert.deepEqual(outB.take(), outA.take(), `command ${BEFORE + i}: the engine on the decoded state emitted other events`);
    }
    for (const o of outA.offsets()) {
      original.apply(outA.mem, o);
      copy.apply(outA.mem, o);
      events++;
    }
    outA.reset();
    outB.reset();
  }
  assert.ok(events > AFTER, 'the continuation produced events');
  const h = stateHash(engineA.state);
  assert.deepEqual([stateHash(engineB.state), stateHash(original.state), stateHash(copy.state)], [h, h, h]);
  assert.deepEqual(answers(copy), answers(original));
  assert.deepEqual(verify(copy.state), []);

  // A second round trip after the continuation.
  const again = decodeViews(encodeViews(copy));
  assert.equal(stateHash(again.state), h);
  assert.deepEqual(answers(again), answers(original));
});

/** An engine and a read model fed its events, and `run(n)`: n more random commands of the generator to both. */
function fed(seed: number, views: Partial<ViewsConfig> = {}): { engine: Engine; v: Views; run: (n: number) => void } {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(seed, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out);
  const v = new Views(JOURNAL_ENGINE_CONFIG, views);
  const run = (n: number): void => {
    for (let i = 0; i < n; i++) {
      const { mem } = encodeToMem(gen.next());
      model.execute(decodeRecord(mem, 0));
      engine.execute(mem, 0);
      for (const o of out.offsets()) v.apply(out.mem, o);
      out.reset();
    }
  };
  return { engine, v, run };
}

/** A store as the snapshots before RecordRings held it: one tagged RecordRing per owner (record n at slot n % cap). */
function ringPerOwner(r: RecordRings): unknown[] {
  const out: unknown[] = [];
  for (let owner = 0; owner < r.total.length; owner++) {
    const total = r.totalOf(owner);
    if (total === 0) continue;
    const cap = r.max;
    const f64 = new Float64Array(cap * r.f64Stride);
    const u32 = new Uint32Array(cap * r.u32Stride);
    for (let n = r.retainedFrom(owner); n < total; n++) {
      const k = r.slotOf(owner, n);
      for (let i = 0; i < r.f64Stride; i++) f64[(n % cap) * r.f64Stride + i] = r.f64At(k, i);
      for (let i = 0; i < r.u32Stride; i++) u32[(n % cap) * r.u32Stride + i] = r.u32At(k, i);
    }
    const fields = { total, cap, f64, u32, max: r.max, f64Stride: r.f64Stride, u32Stride: r.u32Stride };
    out[owner] = { '\u0000class': 'RecordRing', fields };
  }
  return out;
}

test('state_codec: a snapshot from before RecordRings (a ring per market and per account) decodes to the same answers', () => {
  const { v, run } = fed(SEED + 5, { tape_cap: 5, fill_cap: 13 });
  run(3000);
  assert.ok(v.fillRings.retainedRecords() > 0 && v.tapes.retainedFrom(1) > 0, 'the load traded past the caps');
  const tree = deserialize(encodeViews(v)) as { fields: Record<string, unknown> };
  tree.fields.tapes = ringPerOwner(v.tapes);
  tree.fields.fillRings = ringPerOwner(v.fillRings);
  const back = decodeViews(serialize(tree));
  assert.ok(back.tapes instanceof RecordRings && back.fillRings instanceof RecordRings);
  assert.deepEqual(answers(back), answers(v));
  assert.deepEqual(back.tables(), v.tables());
});

test('state_codec: a decoded read model owns its memory: neither the snapshot bytes nor another decode alias it', () => {
  const { v, run } = fed(SEED + 2);
  run(800);
  const bytes = encodeViews(v);
  const a = decodeViews(bytes);
  const b = decodeViews(bytes);
  const h = stateHash(a.state);
  // v8.deserialize hands out typed arrays that are views into its input: the codec must copy them.
  bytes.fill(0);
  assert.equal(stateHash(a.state), h, 'overwriting the snapshot bytes changed a decoded state');
  a.state.accounts.available.fill(0);
  a.state.orders.u8.fill(0);
  assert.equal(stateHash(b.state), h, 'changing one decoded state changed another decode of the same bytes');
  // A decoded state can be encoded again (no aliasing left for the encoder to refuse).
  assert.equal(stateHash(decodeViews(encodeViews(b)).state), h);
});

test('state_codec: a captured read model is detached: the model evolves on, its buffers stay its own, the capture keeps its seq', () => {
  const { engine, v, run } = fed(SEED + 3);
  run(1500);
  const seq = v.asOfSeq;
  const h = stateHash(v.state);
  const c = captureViews(v);
  // Moved to another thread as piscina moves a task's transfer list: the model's own tables stay usable.
  const moved = structuredClone(c.tree, { transfer: c.transfer });
  assert.ok(c.transfer.every((b) => b.byteLength === 0), 'every listed buffer was moved');
  assert.equal(stateHash(v.state), h, 'moving the capture changed the model');
  run(1500);
  assert.notEqual(stateHash(v.state), h);
  assert.equal(stateHash(engine.state), stateHash(v.state), 'the model evolved on as the engine did');
  const back = decodeViews(serializeCaptured(moved));
  assert.equal(back.asOfSeq, seq);
  assert.equal(stateHash(back.state), h, 'the capture holds the state at its seq');
});

test('state_codec: an order table is packed to its high-water mark, whatever lies just below it', () => {
  for (const top of [0, 1, 7, 8, 9, 13, 16, 100]) {
    const v = new Views(JOURNAL_ENGINE_CONFIG);
    const ord = v.state.orders;
    for (let i = 0; i < top; i++) ord.alloc();
    for (let i = 0; i < top; i++) {
      ord.f64[(i << LF) | F_ID] = i + 1;
      ord.u32[(i << LW) | W_REMAINING] = i % 3 === 2 ? 0 : i + 5; // zeros below the mark, and a last slot that may be zero
      ord.u8[(i << LB) | B_TICK] = i === top - 1 ? 99 : 0; // one value at the very last slot only
      ord.i32[(i << LW) | W_PREV] = -1;
      ord.f64[(i << LF) | F_RESERVED_CASH] = i === 0 ? 1.5 : 0;
    }
    const back = decodeViews(serializeCaptured(captureViews(v).tree)).state.orders;
    assert.equal(back.highWater, top);
    assert.ok(ord.capacity - top >= 64, 'the table has unused capacity to pack');
    assert.deepEqual(Array.from(back.u8), Array.from(ord.u8), `the slots' bytes with ${top} slots used`);
  }
});

test('state_codec: stateHash leaves out lookup caches and sees a change of any evolved field', () => {
  const engine = engineAfter(SEED + 1, 1500);
  const s = engine.state;
  const before = stateHash(s);
  // Lookups fill caches (differently on the engine and on a replica): not state.
  for (let id = 1; id <= s.seq; id += 7) s.slotOf(id);
  for (let a = 1; a <= s.accounts.count; a++) for (let m = 1; m <= s.markets.count; m++) s.accounts.findPosition(a, m);
  assert.equal(stateHash(s), before);
  // Any real difference shows.
  s.accounts.available[1] = s.accounts.available[1]! + 1;
  assert.notEqual(stateHash(s), before);
  s.accounts.available[1] = s.accounts.available[1]! - 1;
  assert.equal(stateHash(s), before);
  s.markets.volume[1] = s.markets.volume[1]! + 1;
  assert.notEqual(stateHash(s), before);
});

test('state_codec: typed-array edge values, empty and sparse containers round-trip exactly', () => {
  const v = new Views(JOURNAL_ENGINE_CONFIG);
  const nil = new Int32Array(5000).fill(-1);
  nil[3] = 7;
  const negZero = new Float64Array(300).fill(-0);
  negZero[0] = 0;
  negZero[1] = Number.NaN;
  const sparse: string[] = [];
  sparse[4] = 'ü → 😀';
  const probe = {
    nil,
    negZero,
    nanFill: new Float64Array(100).fill(Number.NaN),
    empty: new Uint8Array(0),
    short: Uint16Array.of(1, 2, 3),
    f32: Float32Array.of(1.5, -0, Number.POSITIVE_INFINITY),
    clamped: new Uint8ClampedArray(90).fill(255),
    offset: new Uint32Array(new ArrayBuffer(4096), 1024, 200).fill(9),
    // A trailing run found a word at a time: elements that share a word with the run, or whose other half matches it.
    u8Run: Uint8Array.from({ length: 1000 }, (_, i) => (i === 517 ? 8 : 7)),
    u16Pair: Uint16Array.from({ length: 800 }, (_, i) => (i === 798 ? 5 : i < 300 ? i : 3)),
    i32Pair: Int32Array.from({ length: 800 }, (_, i) => (i === 798 ? 5 : i < 100 ? i : 0)),
    f64Half: Float64Array.from({ length: 400 }, (_, i) => (i === 250 ? 2 ** 32 * 3 + 1 : i === 251 ? 1 : 2 ** 32 * 3)),
    odd: new Int16Array(new ArrayBuffer(4096), 2, 300).fill(-1),
    map: new Map<number, unknown>([
      [2, [1, 'x', null]],
      [1, { y: undefined }],
    ]),
    sparse,
    big: 2 ** 53 - 1,
    neg: -0,
  };
  (v as unknown as { probe: unknown }).probe = probe;
  const back = (decodeViews(encodeViews(v)) as unknown as { probe: typeof probe }).probe;
  const typed = [
    'nil', 'negZero', 'nanFill', 'empty', 'short', 'f32', 'clamped', 'offset', 'u8Run', 'u16Pair', 'i32Pair', 'f64Half', 'odd',
  ] as const;
  for (const k of typed) {
    const a = probe[k] as unknown as ArrayLike<number>;
    const b = back[k] as unknown as ArrayLike<number>;
    assert.equal(b.constructor, a.constructor, k);
    assert.equal(b.length, a.length, k);
    for (let i = 0; i < a.length; i++) assert.ok(Object.is(a[i], b[i]), `${k}[${i}]: ${a[i]} became ${b[i]}`);
  }
  assert.deepEqual([...back.map.entries()], [...probe.map.entries()]);
  assert.ok('y' in (back.map.get(1) as object));
  assert.equal(back.sparse.length, 5);
  assert.ok(!(0 in back.sparse), 'a hole stays a hole');
  assert.equal(back.sparse[4], 'ü → 😀');
  assert.ok(Object.is(back.neg, -0));
  assert.equal(back.big, 2 ** 53 - 1);
  // An empty read model too.
  const empty = new Views(JOURNAL_ENGINE_CONFIG);
  const e2 = decodeViews(encodeViews(empty));
  assert.equal(stateHash(e2.state), stateHash(empty.state));
  assert.deepEqual(answers(e2), answers(empty));
});

test('state_codec: a function, symbol, bigint, unregistered class, shared or aliased memory in the state throws with its path', () => {
  class Stranger {
    n = 1;
  }
  const cases: [string, (v: Views) => void, RegExp, RegExp | null][] = [
    [
      'function',
      (v) => {
        (v.state.accounts as unknown as Record<string, unknown>).onChange = () => 0;
      },
      /function at views\.state\.accounts\.onChange /,
      /function at state\.accounts\.onChange /,
    ],
    [
      'symbol',
      (v) => {
        (v.state.markets as unknown as Record<string, unknown>).tag = Symbol('x');
      },
      /symbol at views\.state\.markets\.tag /,
      /symbol at state\.markets\.tag /,
    ],
    [
      'bigint',
      (v) => {
        (v.state as unknown as Record<string, unknown>).total = 5n;
      },
      /bigint at views\.state\.total /,
      /bigint at state\.total /,
    ],
    [
      'class',
      (v) => {
        (v.state.markets as unknown as Record<string, unknown>).extra = new Stranger();
      },
      /unregistered class Stranger at views\.state\.markets\.extra;/,
      /unregistered class Stranger at state\.markets\.extra;/,
    ],
    [
      'class in a map',
      (v) => {
        (v.state as unknown as Record<string, unknown>).probe = new Map([[5, [1, new Stranger()]]]);
      },
      /unregistered class Stranger at views\.state\.probe\.get\(5\)\[1\]/,
      /Stranger at state\.probe\.get\(5\)\[1\]/,
    ],
    [
      'date',
      (v) => {
        (v as unknown as Record<string, unknown>).when = new Date(0);
      },
      /unregistered class Date at views\.when/,
      null,
    ],
    [
      'shared memory',
      (v) => {
        (v.state.orders as unknown as Record<string, unknown>).shared = new Int32Array(new SharedArrayBuffer(64));
      },
      /SharedArrayBuffer view at views\.state\.orders\.shared/,
      /SharedArrayBuffer view at state\.orders\.shared/,
    ],
    [
      'aliased memory',
      (v) => {
        (v.state.accounts as unknown as Record<string, unknown>).alias = new Uint8Array(v.state.accounts.available.buffer);
      },
      /views\.state\.accounts\.alias and views\.state\.accounts\.available are views of one ArrayBuffer/,
      null,
    ],
    [
      'unsupported typed array',
      (v) => {
        (v.state as unknown as Record<string, unknown>).wide = new BigInt64Array(4);
      },
      /BigInt64Array at views\.state\.wide is not supported/,
      null,
    ],
  ];
  for (const [what, poison, encodeError, hashError] of cases) {
    const v = new Views(JOURNAL_ENGINE_CONFIG);
    poison(v);
    assert.throws(() => encodeViews(v), encodeError, what);
    if (hashError !== null) assert.throws(() => stateHash(v.state), hashError, what);
  }
});

test('state_codec: decodeViews refuses bytes that do not hold a read model or name an unknown class', () => {
  assert.throws(() => decodeViews(serialize({ a: 1 })), /does not hold a read model/);
  assert.throws(() => decodeViews(serialize({ '\u0000class': 'Nope', fields: {} })), /unknown class Nope in the snapshot/);
  assert.throws(() => decodeViews(encodeViews(new Views()).subarray(0, 100)));
});

test('state_codec: a snapshot holds what the state retains, not how far the seqs have gone', () => {
  // The soak's finding: the order index was a table sized for the most orders
  // (2 x order_capacity entries) indexed by the order id, a seq; rising ids
  // wrote it end to end, so every copy of the state (engine, read models,
  // the snapshot worker's) grew resident 16 bytes a seq and each snapshot
  // carried the table up to the newest id. One account places and cancels
  // the same order shape again and again: a constant set of retained
  // orders (terminal_cap), seqs rising.
  const config = { ...JOURNAL_ENGINE_CONFIG, order_capacity: 1 << 16, terminal_cap: 20 };
  const out = new BufferEventOut(1 << 20);
  const engine = new Engine(config, out);
  const v = new Views(config);
  let ts = 1_750_000_000_000_000_000n;
  const send = (cmd: RecordObject): RecordObject => {
    ts += 1_000_000n;
    const seq = engine.execute(encodeToMem({ producer: 100, correlation: 1, ts, ...cmd }).mem, 0);
    assert.ok(seq > 0, `${cmd.type} sequenced`);
    for (const o of out.offsets()) v.apply(out.mem, o);
    const events = out.take();
    out.reset();
    return events[events.length - 1]!;
  };
  const account = send({ type: 'CreateAccount' }).result as number;
  send({ type: 'Deposit', account, amount: 1_000_000 });
  const market = send({ type: 'CreateMarket', category: 1, position_limit: 0, fee_schedule_id: 0, title: 'm' }).result as number;
  send({ type: 'OpenRound', market_id: market, strike: 100, close_ts: ts + 3_600_000_000_000n });
  const place = { type: 'PlaceOrder', account, market_id: market, side: Side.buy, outcome: Outcome.yes, tick: 40, qty: 1, tif: Tif.gtc,
    stp: Stp.cancel_taker } as const;
  const cycles = (n: number): void => {
    for (let i = 0; i < n; i++) {
      send(place);
      send({ type: 'CancelAll', account, market_id: market, group_id: 0 });
    }
  };
  cycles(1000);
  const early = encodeViews(v).length;
  cycles(30_000); // 60,000 seqs later
  const late = encodeViews(v).length;
  assert.equal(v.state.orderIndex.size, 20);
  assert.ok(late <= early + 1024, `snapshot body ${early} bytes at seq ${v.asOfSeq - 60_000}, ${late} bytes 60,000 seqs later`);
  for (const s of [engine.state, v.state]) {
    assert.ok(s.orderIndex.tableEntries <= 1024, `order index of ${s.orderIndex.tableEntries} entries`);
  }
});

test('state_codec: stateHash sees the order index as its (id, slot) pairs, not its layout', () => {
  // A snapshot from before the index grew incrementally decodes into a
  // rebuilt index (IdIndex.upgradeDecoded), whose layout differs from the
  // one a replay from an older snapshot grows: the same state, the same hash.
  const engine = engineAfter(SEED + 3, 1500);
  const s = engine.state as unknown as { orderIndex: IdIndex };
  const before = stateHash(engine.state);
  const pairs = s.orderIndex.pairsById();
  assert.ok(pairs.length > 20, 'orders indexed');
  const relaid = new IdIndex(1 << 16);
  for (let i = pairs.length - 2; i >= 0; i -= 2) relaid.set(pairs[i]!, pairs[i + 1]!);
  assert.notEqual(relaid.tableEntries, s.orderIndex.tableEntries);
  const original = s.orderIndex;
  s.orderIndex = relaid;
  assert.equal(stateHash(engine.state), before, 'another layout of the same pairs');
  relaid.delete(pairs[0]!);
  relaid.set(pairs[0]!, pairs[1]! + 1);
  assert.notEqual(stateHash(engine.state), before, 'an id pointing at another slot');
  s.orderIndex = original;
  assert.equal(stateHash(engine.state), before);
});

/** The OrderSlab of `s` as it was stored before the packing: one typed array per field, `capacity` long, in the old field order. */
function legacySlab(s: OrderSlab): OrderSlab {
  const ctor = { u8: Uint8Array, u16: Uint16Array, u32: Uint32Array, i32: Int32Array, f64: Float64Array };
  const stride = { u8: SB, u16: SH, u32: SW, i32: SW, f64: SF };
  const old = Object.create(OrderSlab.prototype) as Record<string, unknown>;
  const fields = s as unknown as Record<string, number>;
  for (const k of ['capacity', 'count', 'freeHead', 'top']) old[k] = fields[k];
  for (const [name, view, at] of ORDER_FIELDS) {
    const col = new ctor[view](s.capacity);
    for (let slot = 0; slot < s.capacity; slot++) col[slot] = s[view][slot * stride[view] + at]!;
    old[name] = col;
  }
  return old as unknown as OrderSlab;
}

test('state_codec: a snapshot whose orders are in the older one-array-per-field layout decodes to the same orders', () => {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(SEED + 4, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out);
  const v = new Views(JOURNAL_ENGINE_CONFIG);
  for (let i = 0; i < 5000; i++) {
    const { mem } = encodeToMem(gen.next());
    model.execute(decodeRecord(mem, 0));
    engine.execute(mem, 0);
    for (const o of out.offsets()) v.apply(out.mem, o);
    out.reset();
  }
  const state = v.state as unknown as { orders: OrderSlab };
  const packed = state.orders;
  const used = `${packed.count} of ${packed.highWater}`;
  assert.ok(packed.count > 50 && packed.highWater > packed.count, `live, retained and freed slots (${used} used)`);
  state.orders = legacySlab(packed);
  const bytes = encodeViews(v);
  state.orders = packed;
  assert.ok(Object.keys(deserializeFields(bytes)).includes('remaining'), 'the snapshot holds the older layout');
  const decoded = decodeViews(bytes);
  assert.ok(decoded.state.orders instanceof OrderSlab);
  assert.deepEqual(decoded.state.orders.u8, packed.u8, 'the same bytes, slot for slot');
  assert.equal(decoded.state.orders.highWater, packed.highWater);
  assert.equal(stateHash(decoded.state), stateHash(v.state));
  assert.equal(stateHash(decoded.state), stateHash(engine.state));
  assert.deepEqual(answers(decoded), answers(v));
  assert.deepEqual(verify(decoded.state), []);
  // It keeps allocating from the same free list.
  assert.equal(decoded.state.orders.alloc(), packed.alloc());
});

/** The stored fields of the OrderSlab in an encoded read model. */
function deserializeFields(bytes: Buffer): Record<string, unknown> {
  type Rec = { fields: Record<string, Rec> };
  return (deserialize(bytes) as Rec).fields.state!.fields.orders!.fields;
}

test('state_codec: a snapshot from before max_orders (no retained count or bits) decodes to the same state, which evolves alike', () => {
  const config = { ...JOURNAL_ENGINE_CONFIG, terminal_cap: 5, reject_cap: 3, max_orders: 60 };
  const model = new ReferenceModel({ ...DIFF_CONFIG, max_orders: 60 });
  const gen = new CommandGenerator(SEED + 5, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(config, out);
  const v = new Views(config);
  const run = (n: number, views: Views[]): void => {
    for (let i = 0; i < n; i++) {
      const { mem } = encodeToMem(gen.next());
      model.execute(decodeRecord(mem, 0));
      engine.execute(mem, 0);
      for (const o of out.offsets()) for (const x of views) x.apply(out.mem, o);
      out.reset();
    }
  };
  run(2000, [v]);
  assert.ok(v.state.retainedOrders > 0, 'retained orders');
  type Rec = { fields: Record<string, Rec> };
  const tree = deserialize(encodeViews(v)) as Rec;
  const st = tree.fields.state!.fields;
  for (const k of ['retainedOrders', 'heldOrders', 'termGone', 'rejGone']) delete st[k];
  delete st.accounts!.fields.retainedBits;
  const old = decodeViews(serialize(tree));
  assert.equal(stateHash(old.state), stateHash(v.state), 'the derived count and bits are the ones kept live');
  // At max_orders 60 the next commands evict at the bound: the upgraded state picks the same orders.
  run(2000, [v, old]);
  assert.equal(stateHash(old.state), stateHash(v.state));
  assert.equal(stateHash(v.state), stateHash(engine.state));
  assert.deepEqual(answers(old), answers(v));
});
