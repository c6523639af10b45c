// State codec: turns the exchange state (ExchangeState, or a whole Views read
// model, which holds one) into bytes and back, for snapshots, and hashes it
// for the replay proofs. Generic over the object graph, so a field added to
// the state is carried without codec changes: numbers, strings, booleans,
// null, typed arrays, arrays, Maps, plain objects, and instances of the
// classes registered below. Anything else (a function, an unregistered class)
// throws: state must stay plain data (evolve is its only mutator).
//
// The graph is rewritten into plain values (class instances become tagged
// records) and serialized with v8.serialize, which keeps typed arrays compact.
// Each typed array is stored with its own bytes (Node's serializer copies
// views, and packing slices them), so two views of one ArrayBuffer would come
// back as two separate buffers: encoding refuses such aliasing.
//
// Threads: the main thread (a snapshot's capture, the state hash), piscina workers (its serialization),
// start-up recovery, tools.

import { createHash } from 'node:crypto';
import { deserialize, serialize } from 'node:v8';
import { Accounts } from '../accounts/accounts.js';
import { Book } from '../book/book.js';
import { OrderSlab, STRIDE } from '../book/orders.js';
import { Markets } from '../engine/markets.js';
import { ExchangeState } from '../engine/state.js';
import { IdIndex } from '../lib/id_index.js';
import { TimerHeap } from '../lib/timer_heap.js';
import { U32x3Map } from '../lib/u32x3_map.js';
import { RecordRings, type RingPerOwner } from '../views/record_rings.js';
import { FILL_F64, FILL_U32 } from '../views/fills.js';
import { TAPE_F64, TAPE_U32 } from '../views/tape.js';
import { Views } from '../views/views.js';

type Ctor = abstract new (...args: never[]) => object;

/** Every class whose instances may live inside the state. */
const CLASSES: Record<string, Ctor> = {
  ExchangeState, Markets, Book, OrderSlab, Accounts, IdIndex, U32x3Map, TimerHeap, RecordRings, Views,
};
const NAME_OF = new Map<unknown, string>(Object.entries(CLASSES).map(([k, v]) => [v.prototype, k]));

/**
 * Fields that are caches of other state (filled by lookups, not only by
 * evolve): carried in snapshots, left out of the state hash, because a live
 * engine and a replica fed the same events fill them differently.
 */
const CACHE_FIELDS = new Set(['lastPosMarket', 'lastPosSlot']);

const TAG = '\u0000class';
const MAP_TAG = '\u0000map';
const ARRAY_TAG = '\u0000typed';

type Typed = Exclude<ArrayBufferView, DataView>;
const TYPED: Record<string, new (n: number) => Typed> = {
  Int8Array, Uint8Array, Uint8ClampedArray, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array,
};

/**
 * Tables are preallocated to capacity and mostly unused: a typed array is
 * stored as its prefix up to the last element that differs from the final
 * one, plus that final value and the length (a 512k-order table of zeros or
 * -1 costs a few bytes).
 */
function packTyped(v: Typed, path: string, copies: Copies, highWater: number): unknown {
  const name = v.constructor.name;
  if (!(name in TYPED)) throw new Error(`state_codec: ${name} at ${path} is not supported`);
  const a = v as unknown as ArrayLike<number>;
  const n = a.length;
  if (n === 0) return copyPrefix(v, 0, copies);
  const last = a[n - 1]!;
  // Below a table's high-water mark (rounded up to whole 8-byte words: it is
  // zeros up to there too) the trailing run is found by the same word scan.
  const mark = Math.min(n, Math.ceil(highWater / 8) * 8);
  const below = (): Typed => (v as unknown as { subarray(a: number, b: number): Typed }).subarray(0, mark);
  let end = mark === n ? trailingRunBound(v) : Object.is(a[mark - 1], last) ? trailingRunBound(below()) : mark;
  while (end > 0 && Object.is(a[end - 1], last)) end--;
  if (n - end < 64) return copyPrefix(v, n, copies);
  return { [ARRAY_TAG]: name, length: n, fill: last, prefix: copyPrefix(v, end, copies) };
}

/** A copy of v[0, to) in a buffer of its own, listed for the transfer; ViewsCapture.step fills it. */
function copyPrefix(v: Typed, to: number, copies: Copies): Typed {
  const c = new TYPED[v.constructor.name]!(to);
  copies.transfer.push(c.buffer as ArrayBuffer);
  if (to > 0) {
    const bytes = c.byteLength;
    copies.pending.push({ src: new Uint8Array(v.buffer, v.byteOffset, bytes), dst: new Uint8Array(c.buffer, 0, bytes), done: 0 });
  }
  return c;
}

/**
 * An element index at or past the start of v's trailing run of its final
 * value, found a 32-bit word at a time (the byte pattern of the final element
 * repeats every 8 bytes): one monomorphic loop over the unused capacity of a
 * preallocated table instead of an element-wise Object.is through a view of
 * any type, which was most of a snapshot's encoding (a few hundred ms per
 * snapshot of a 4 M-order table). packTyped finishes element by element from
 * here. Views whose offset or length do not allow whole words: the last
 * element.
 */
function trailingRunBound(v: Typed): number {
  const n = (v as unknown as ArrayLike<number>).length;
  if (v.byteOffset % 4 !== 0 || v.byteLength % 8 !== 0) return n - 1;
  const w = new Uint32Array(v.buffer, v.byteOffset, v.byteLength >>> 2);
  // The final element's bytes, repeated to 8 bytes: the pattern of an 8-byte-aligned stretch of the run.
  const bpe = (v as unknown as { BYTES_PER_ELEMENT: number }).BYTES_PER_ELEMENT;
  const own = new Uint8Array(v.buffer, v.byteOffset + v.byteLength - bpe, bpe);
  const pattern = new Uint8Array(8);
  for (let b = 0; b < 8; b++) pattern[b] = own[b % bpe]!;
  const p = new Uint32Array(pattern.buffer);
  const even = p[0]!;
  const odd = p[1]!; // the word count is even: the last word's index is odd
  let i = w.length;
  while (i > 0 && w[i - 1] === ((i - 1) & 1 ? odd : even)) i--;
  // Words [i, end) match: the elements wholly inside them hold the final value's bytes.
  return Math.min(n - 1, Math.ceil((i * 4) / bpe));
}

function unpackTyped(rec: Record<string, unknown>): Typed {
  const out = new TYPED[rec[ARRAY_TAG] as string]!(rec.length as number) as unknown as {
    set(a: ArrayLike<number>): void;
    fill(x: number, from: number): void;
  };
  const prefix = rec.prefix as unknown as ArrayLike<number>;
  out.set(prefix);
  // A new typed array is zeros already: filling it with 0 would only commit the pages of an unused table.
  if (!Object.is(rec.fill, 0)) out.fill(rec.fill as number, prefix.length);
  return out as unknown as Typed;
}

/** A copy a capture in steps has still to fill, as bytes: dst[0, done) holds src's so far. */
interface PendingCopy {
  src: Uint8Array;
  dst: Uint8Array;
  done: number;
}

/** Where a capture's copies go: their buffers (the transfer list) and the copying still to do. */
interface Copies {
  transfer: ArrayBuffer[];
  pending: PendingCopy[];
}

/** ArrayBuffers met while encoding, with the path of the first view of each (aliasing check). */
type Buffers = Map<ArrayBufferLike, string> | null;

/**
 * Plain data for v8.serialize. With `copies` (a snapshot's capture) every
 * typed array is packed into a copy of its own, whose buffer is listed there;
 * without (the state hash) typed arrays are the state's own.
 */
function toTree(
  v: unknown, exclude: Set<string> | null, path: string, copies: Copies | null = null, buffers: Buffers = null, highWater = Infinity,
): unknown {
  if (v === null || typeof v !== 'object') {
    if (typeof v === 'function' || typeof v === 'symbol' || typeof v === 'bigint')
      throw new Error(`state_codec: ${typeof v} at ${path} (state must be plain data)`);
    return v;
  }
  if (ArrayBuffer.isView(v)) {
    if (v.buffer instanceof SharedArrayBuffer) throw new Error(`state_codec: SharedArrayBuffer view at ${path}`);
    if (buffers !== null) {
      const first = buffers.get(v.buffer);
      if (first !== undefined)
        throw new Error(
          `state_codec: ${path} and ${first} are views of one ArrayBuffer; a snapshot would split them (state must not alias memory)`,
        );
      buffers.set(v.buffer, path);
    }
    if (copies === null) return v;
    if (!(v instanceof DataView)) return packTyped(v as Typed, path, copies, highWater);
    const c = v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength) as ArrayBuffer;
    copies.transfer.push(c);
    return new DataView(c);
  }
  // Elements that are plain values pass as they are (a million-account table of strings builds no path per element).
  if (Array.isArray(v)) return v.map((x, i) => (isPlainValue(x) ? x : toTree(x, exclude, `${path}[${i}]`, copies, buffers)));
  if (v instanceof Map) {
    const entries: [unknown, unknown][] = [];
    for (const [k, x] of v) entries.push([k, toTree(x, exclude, `${path}.get(${String(k)})`, copies, buffers)]);
    return { [MAP_TAG]: entries };
  }
  // The state hash (exclude set) sees an IdIndex as its (id, slot) pairs: its
  // layout (table size, which ids overflowed) follows how it grew, which
  // differs between a recovered index and one replayed from an older point
  // (the upgrade of a snapshot from before its growth changed rebuilds it).
  if (exclude !== null && v instanceof IdIndex) return { [TAG]: 'IdIndex', pairs: v.pairsById() };
  const proto = Object.getPrototypeOf(v);
  const fields: Record<string, unknown> = {};
  // An order table's slots hold their initial zeros from its high-water mark on: packing need not scan them. Its one stored
  // array is the slots' bytes.
  const mark = v instanceof OrderSlab ? v.highWater * STRIDE : Infinity;
  for (const k of Object.keys(v)) {
    if (exclude !== null && exclude.has(k)) continue;
    fields[k] = toTree((v as Record<string, unknown>)[k], exclude, `${path}.${k}`, copies, buffers, mark);
  }
  if (proto === Object.prototype || proto === null) return fields;
  const name = NAME_OF.get(proto);
  if (name === undefined)
    throw new Error(
      `state_codec: instance of unregistered class ${(v as object).constructor?.name} at ${path}; add it to CLASSES in ` +
        `src/journal/state_codec.ts`,
    );
  return { [TAG]: name, fields };
}

function isPlainValue(x: unknown): boolean {
  const t = typeof x;
  return x === null || t === 'number' || t === 'string' || t === 'boolean' || t === 'undefined';
}

/**
 * Fields a class gained after snapshots were written with it: [class, field,
 * the field it follows]. A snapshot without one gets it as null, in its
 * place among the others (the state hash walks fields in their order, and
 * adding one afterwards would also make V8 keep the object as a dictionary);
 * the class's upgradeDecoded then derives its value.
 */
const ADDED_FIELDS: readonly (readonly [cls: string, field: string, after: string])[] = [
  ['Accounts', 'retainedBits', 'rejCount'],
  ['ExchangeState', 'termGone', 'rejTotal'],
  ['ExchangeState', 'rejGone', 'termGone'],
  ['ExchangeState', 'heldOrders', 'retiredAt'],
  ['ExchangeState', 'retainedOrders', 'heldOrders'],
];

/** A class's stored fields with the ones its snapshot predates added as null in their places (ADDED_FIELDS). */
function withAddedFields(cls: string, fields: Record<string, unknown>): Record<string, unknown> {
  let out = fields;
  for (const [c, field, after] of ADDED_FIELDS) {
    if (c !== cls || field in out) continue;
    const next: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(out)) {
      next[k] = x;
      if (k === after) next[field] = null;
    }
    if (!(field in next)) throw new Error(`state_codec: ${cls}.${after} is missing from the snapshot`);
    out = next;
  }
  return out;
}

function fromTree(t: unknown): unknown {
  if (t === null || typeof t !== 'object') return t;
  // v8.deserialize hands back typed arrays as views into the snapshot's bytes
  // (or into Node's shared Buffer pool when unaligned): copy each into its own
  // buffer, or the recovered state aliases memory and the next encode refuses it.
  if (ArrayBuffer.isView(t))
    return t instanceof DataView
      ? new DataView(t.buffer.slice(t.byteOffset, t.byteOffset + t.byteLength))
      : (t as unknown as { slice(): unknown }).slice();
  if (Array.isArray(t)) return t.map(fromTree);
  const rec = t as Record<string, unknown>;
  if (ARRAY_TAG in rec) return unpackTyped(rec);
  if (MAP_TAG in rec) return new Map((rec[MAP_TAG] as [unknown, unknown][]).map(([k, x]) => [k, fromTree(x)]));
  if (TAG in rec) {
    // A ring per owner, from a snapshot written before RecordRings: plain fields, converted by decodeViews.
    if (rec[TAG] === 'RecordRing') return fromTree(rec.fields);
    const ctor = CLASSES[rec[TAG] as string];
    if (ctor === undefined) throw new Error(`state_codec: unknown class ${String(rec[TAG])} in the snapshot`);
    const obj = Object.create(ctor.prototype) as Record<string, unknown>;
    for (const [k, x] of Object.entries(withAddedFields(rec[TAG] as string, rec.fields as Record<string, unknown>))) {
      obj[k] = fromTree(x);
    }
    // Snapshots written before a class changed its internal encoding are converted here.
    if (ctor === U32x3Map) U32x3Map.upgradeDecoded(obj as unknown as U32x3Map);
    if (ctor === IdIndex) IdIndex.upgradeDecoded(obj as unknown as IdIndex);
    if (ctor === Accounts) Accounts.upgradeDecoded(obj as unknown as Accounts);
    if (ctor === ExchangeState) ExchangeState.upgradeDecoded(obj as unknown as ExchangeState);
    // An OrderSlab stores only its packed bytes (its other typed views alias them and are not enumerable): the decoded
    // fields are adopted by a constructed slab, which rebuilds the views (and converts the older one-array-per-field layout).
    if (ctor === OrderSlab) return OrderSlab.fromDecoded(obj as unknown as OrderSlab);
    return obj;
  }
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(rec)) out[k] = fromTree(x);
  return out;
}

/**
 * A read model's snapshot, detached from the model: plain data that shares no
 * memory with it (every typed array packed into a copy), so the thread that
 * keeps the model goes on applying events while another thread serializes
 * this. `transfer` lists the copies' buffers, for postMessage's transfer list.
 */
export interface CapturedViews {
  tree: unknown;
  transfer: ArrayBuffer[];
}

export function captureViews(views: Views): CapturedViews {
  const c = new ViewsCapture(views);
  c.step(Infinity);
  return c;
}

/**
 * A capture in steps, for a model too large to copy in one event-loop turn:
 * the constructor lays out the tree and allocates every copy (the packing
 * scans run then), and each step() fills the copies with at most `bytes`
 * more. The model must not change until step() returns true (the control
 * plane holds its events meanwhile: GatewayCore.holdEvents); the tree is
 * complete only then.
 */
export class ViewsCapture implements CapturedViews {
  readonly tree: unknown;
  readonly transfer: ArrayBuffer[] = [];
  /** The seq the capture is of. */
  readonly seq: number;
  private readonly pending: PendingCopy[] = [];
  private next = 0;

  constructor(views: Views) {
    this.seq = views.asOfSeq;
    this.tree = toTree(views, null, 'views', { transfer: this.transfer, pending: this.pending }, new Map());
  }

  /** Copies up to `bytes` more; true when every copy is complete. */
  step(bytes: number): boolean {
    let budget = bytes;
    while (this.next < this.pending.length && budget > 0) {
      const p = this.pending[this.next]!;
      const k = Math.min(p.src.length - p.done, budget);
      p.dst.set(p.src.subarray(p.done, p.done + k), p.done);
      p.done += k;
      budget -= k;
      if (p.done === p.src.length) this.pending[this.next++] = EMPTY_COPY;
    }
    return this.next === this.pending.length;
  }
}

/** What a finished pending copy is replaced by: the capture drops its views of the model as it goes. */
const EMPTY_COPY: PendingCopy = { src: new Uint8Array(0), dst: new Uint8Array(0), done: 0 };

/** The snapshot body of a captured read model (the bytes decodeViews reads). */
export function serializeCaptured(tree: unknown): Buffer {
  return serialize(tree);
}

/** Serializes a read model (Views, with its ExchangeState). */
export function encodeViews(views: Views): Buffer {
  return serializeCaptured(captureViews(views).tree);
}

export function decodeViews(bytes: Uint8Array): Views {
  const v = fromTree(deserialize(bytes));
  if (!(v instanceof Views)) throw new Error('state_codec: the snapshot does not hold a read model');
  // A snapshot written before RecordRings holds a ring per market and per account: converted to the store.
  const old = v as unknown as { tapes: unknown; fillRings: unknown };
  const upgrade = (x: unknown, cap: number, f64: number, u32: number): unknown =>
    Array.isArray(x) ? RecordRings.fromRingPerOwner(x as RingPerOwner[], cap, f64, u32) : x;
  old.tapes = upgrade(old.tapes, v.config.tape_cap, TAPE_F64, TAPE_U32);
  old.fillRings = upgrade(old.fillRings, v.config.fill_cap, FILL_F64, FILL_U32);
  return v;
}

/**
 * SHA-256 (hex) of the exchange state, caches left out: equal for the live
 * engine, every read model's state and any recovery of the same events.
 * Canonical: v8.serialize is not (it writes the same number as a small
 * integer or as a double depending on how V8 happens to hold it), so the
 * hash walks the graph itself: numbers as float64, strings as UTF-8, typed
 * arrays as their bytes, containers with their sizes.
 */
export function stateHash(state: ExchangeState): string {
  const h = createHash('sha256');
  const scratch = new DataView(new ArrayBuffer(8));
  const u8 = new Uint8Array(scratch.buffer);
  const tag = (c: string, n: number): void => {
    h.update(c);
    scratch.setUint32(0, n >>> 0, true);
    h.update(u8.subarray(0, 4));
  };
  const walk = (v: unknown): void => {
    if (v === null || v === undefined) return void h.update(v === null ? 'n' : 'u');
    switch (typeof v) {
      case 'boolean': return void h.update(v ? 't' : 'f');
      case 'number':
        scratch.setFloat64(0, v, true);
        h.update('d');
        return void h.update(u8);
      case 'string': {
        const b = Buffer.from(v, 'utf8');
        tag('s', b.length);
        return void h.update(b);
      }
      default: break;
    }
    if (ArrayBuffer.isView(v)) {
      tag(`a${v.constructor.name}`, v.byteLength);
      return void h.update(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    }
    if (Array.isArray(v)) {
      tag('[', v.length);
      for (const x of v) walk(x);
      return;
    }
    const rec = v as Record<string, unknown>;
    const keys = Object.keys(rec);
    tag('{', keys.length);
    for (const k of keys) {
      walk(k);
      walk(rec[k]);
    }
  };
  walk(toTree(state, CACHE_FIELDS, 'state'));
  return h.digest('hex');
}
