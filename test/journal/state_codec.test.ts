// State codec (src/journal/state_codec.ts): a read model survives
// encodeViews/decodeViews with its state hash, its projections (every
// query answers the same) and its future: the decoded state keeps evolving,
// and an engine on it keeps deciding, exactly like the original. Anything
// that is not plain data fails loudly with its path.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { serialize } from 'node:v8';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { verify } from '../../src/engine/verify.js';
import { decodeViews, encodeViews, stateHash } from '../../src/journal/state_codec.js';
import { decodeRecord, encodeToMem } from '../../src/layout_codec/record_codec.js';
import { Views } from '../../src/views/views.js';
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

test('state_codec: a decoded read model owns its memory: neither the snapshot bytes nor another decode alias it', () => {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(SEED + 2, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out);
  const v = new Views(JOURNAL_ENGINE_CONFIG);
  for (let i = 0; i < 800; i++) {
    const { mem } = encodeToMem(gen.next());
    model.execute(decodeRecord(mem, 0));
    engine.execute(mem, 0);
    for (const o of out.offsets()) v.apply(out.mem, o);
    out.reset();
  }
  const bytes = encodeViews(v);
  const a = decodeViews(bytes);
  const b = decodeViews(bytes);
  const h = stateHash(a.state);
  // v8.deserialize hands out typed arrays that are views into its input: the codec must copy them.
  bytes.fill(0);
  assert.equal(stateHash(a.state), h, 'overwriting the snapshot bytes changed a decoded state');
  a.state.accounts.available.fill(0);
  a.state.orders.remaining.fill(0);
  assert.equal(stateHash(b.state), h, 'changing one decoded state changed another decode of the same bytes');
  // A decoded state can be encoded again (no aliasing left for the encoder to refuse).
  assert.equal(stateHash(decodeViews(encodeViews(b)).state), h);
});

test('state_codec: stateHash leaves out lookup caches and sees a change of any evolved field', () => {
  const model = new ReferenceModel(DIFF_CONFIG);
  const gen = new CommandGenerator(SEED + 1, model);
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(JOURNAL_ENGINE_CONFIG, out);
  for (let i = 0; i < 1500; i++) {
    const { mem } = encodeToMem(gen.next());
    model.execute(decodeRecord(mem, 0));
    engine.execute(mem, 0);
    out.reset();
  }
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
  for (const k of ['nil', 'negZero', 'nanFill', 'empty', 'short', 'f32', 'clamped', 'offset'] as const) {
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
