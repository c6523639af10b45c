// binary_codec: the client's encoder and decoder of binary order-entry frames
// on the WebSocket lane (native-layout/LAYOUT.md, "Binary order entry"):
// command records in their native layout out, EntryResult records in. It
// uses the generated accessors of src/layout, the same code the exchange
// reads and writes them with, so client and server cannot disagree on an
// offset; the layout fingerprint travels in start_binary. Runs in the
// caller's thread; no I/O.

import {
  CANCEL_REASON_NAMES, CancelAll, CancelOrder, CODES, DecreaseOrder, ENTRY_STATUS_NAMES, EntryFill, EntryResult, Header, LAYOUT_FINGERPRINT,
  ORDER_STATUS_NAMES, Outcome, PATH_NAMES, PlaceOrder, REFUSAL_CODE_NAMES, Side, Stp, T_ENTRY_RESULT, Tif,
} from '../layout/records.js';
import { memOf, type Mem } from '../lib/mem.js';
import type { FillPath, OrderRequest, U64 } from './types.js';

/** The fingerprint this client was built with, as start_binary sends it. */
export const CLIENT_LAYOUT_FINGERPRINT = `0x${LAYOUT_FINGERPRINT.toString(16).padStart(8, '0')}`;

const U64_MAX = (1n << 64n) - 1n;

function u64(v: U64 | bigint | number, what: string): bigint {
  if (typeof v === 'number' && !Number.isSafeInteger(v)) throw new RangeError(`${what} must be a u64, got ${String(v)}`);
  if (typeof v === 'string' && !/^[0-9]{1,20}$/.test(v))
    throw new RangeError(`${what} must be a u64 decimal string, got ${JSON.stringify(v)}`);
  const b = typeof v === 'bigint' ? v : BigInt(v);
  if (b < 0n || b > U64_MAX) throw new RangeError(`${what} must be a u64, got ${String(v)}`);
  return b;
}

/** A u64 of at least 1 (the JSON schema's PositiveU64String: 0 means none, so it cannot be sent as present). */
function positiveU64(v: U64 | bigint | number, what: string): bigint {
  const b = u64(v, what);
  if (b === 0n) throw new RangeError(`${what} must be at least 1, got ${String(v)}`);
  return b;
}

/** An integer in lo..hi, as the JSON schemas bound the field; else a RangeError (never wrapped into the field's width). */
function int(v: unknown, lo: number, hi: number, what: string): number {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
    throw new RangeError(`${what} must be an integer in ${lo}..${hi}, got ${String(v)}`);
  return v;
}

/** An enum value by its name (an own key of the generated table); a RangeError for any other name. */
function named(table: Record<string, number>, v: unknown, what: string): number {
  if (typeof v !== 'string' || !Object.hasOwn(table, v))
    throw new RangeError(`${what} must be one of ${Object.keys(table).join(', ')}, got ${String(v)}`);
  return table[v]!;
}

const U32_MAX = 4294967295;

/** Commands of one binary frame, encoded back to back (PlaceOrder, CancelOrder, DecreaseOrder, CancelAll). */
export class FrameEncoder {
  private mem: Mem = memOf(new ArrayBuffer(4096));
  private len = 0;
  /** Records in the frame so far. */
  count = 0;

  /** `account`: the connection's account (start_binary's answer names it). */
  constructor(readonly account: number) {}

  private begin(type: number, size: number, correlation: number): number {
    if (this.len + size > this.mem.u8.length) {
      const grown = memOf(new ArrayBuffer(Math.max(this.mem.u8.length * 2, this.len + size)));
      grown.u8.set(this.mem.u8.subarray(0, this.len));
      this.mem = grown;
    }
    const o = this.len;
    this.mem.u8.fill(0, o, o + size);
    Header.set_len(this.mem, o, size);
    Header.set_type(this.mem, o, type);
    Header.set_correlation(this.mem, o, correlation >>> 0);
    Header.set_account(this.mem, o, this.account);
    this.len += size;
    this.count++;
    return o;
  }

  /**
   * A placement with the JSON request's fields (the same defaults: gtc, cancel_taker, no group). Every field is checked
   * against the JSON schema's bounds first: a bad one throws a RangeError and leaves the frame as it was.
   */
  place(correlation: number, r: OrderRequest): void {
    const market = int(r.market_id, 1, U32_MAX, 'market_id');
    const qty = int(r.qty, 1, 1_000_000, 'qty');
    const group = int(r.group_id ?? 0, 0, U32_MAX, 'group_id');
    const tick = int(r.tick, 1, 99, 'tick');
    const side = named(Side, r.side, 'side');
    const outcome = named(Outcome, r.outcome, 'outcome');
    const tif = named(Tif, r.tif ?? 'gtc', 'tif');
    const stp = named(Stp, r.stp ?? 'cancel_taker', 'stp');
    if (r.post_only !== undefined && typeof r.post_only !== 'boolean')
      throw new RangeError(`post_only must be a boolean, got ${String(r.post_only)}`);
    const coid = r.client_order_id === undefined ? null : positiveU64(r.client_order_id, 'client_order_id');
    const expiry = r.expiry_ts === undefined ? null : positiveU64(r.expiry_ts, 'expiry_ts');
    const maxCost = r.max_cost === undefined ? null : u64(r.max_cost, 'max_cost');
    const o = this.begin(PlaceOrder.TYPE, PlaceOrder.SIZE, correlation);
    const n = this.mem; // after begin: it may have grown the buffer
    PlaceOrder.set_market_id(n, o, market);
    PlaceOrder.set_qty(n, o, qty);
    PlaceOrder.set_group_id(n, o, group);
    PlaceOrder.set_tick(n, o, tick);
    PlaceOrder.set_side(n, o, side);
    PlaceOrder.set_outcome(n, o, outcome);
    PlaceOrder.set_tif(n, o, tif);
    PlaceOrder.set_stp(n, o, stp);
    PlaceOrder.set_post_only(n, o, r.post_only === true ? 1 : 0);
    if (coid !== null) {
      PlaceOrder.set_has_client_order_id(n, o, 1);
      PlaceOrder.set_client_order_id(n, o, Number(coid >> 32n), Number(coid & 0xffffffffn));
    }
    if (expiry !== null) PlaceOrder.set_expiry_ts(n, o, Number(expiry >> 32n), Number(expiry & 0xffffffffn));
    if (maxCost !== null) {
      PlaceOrder.set_has_max_cost(n, o, 1);
      n.u32[(o + 72) >>> 2] = Number(maxCost & 0xffffffffn);
      n.u32[(o + 76) >>> 2] = Number(maxCost >> 32n);
    }
  }

  cancel(correlation: number, orderId: U64 | number): void {
    const v = u64(orderId, 'order_id');
    const o = this.begin(CancelOrder.TYPE, CancelOrder.SIZE, correlation);
    this.mem.u32[(o + 32) >>> 2] = Number(v & 0xffffffffn);
    this.mem.u32[(o + 36) >>> 2] = Number(v >> 32n);
  }

  decrease(correlation: number, orderId: U64 | number, newQty: number): void {
    const v = u64(orderId, 'order_id');
    const q = int(newQty, 0, U32_MAX, 'new_qty');
    const o = this.begin(DecreaseOrder.TYPE, DecreaseOrder.SIZE, correlation);
    this.mem.u32[(o + 32) >>> 2] = Number(v & 0xffffffffn);
    this.mem.u32[(o + 36) >>> 2] = Number(v >> 32n);
    DecreaseOrder.set_new_qty(this.mem, o, q);
  }

  /** Mass cancel; 0 or absent market_id / group_id = all. */
  cancelAll(correlation: number, q: { market_id?: number; group_id?: number } = {}): void {
    const market = int(q.market_id ?? 0, 0, U32_MAX, 'market_id');
    const group = int(q.group_id ?? 0, 0, U32_MAX, 'group_id');
    const o = this.begin(CancelAll.TYPE, CancelAll.SIZE, correlation);
    CancelAll.set_market_id(this.mem, o, market);
    CancelAll.set_group_id(this.mem, o, group);
  }

  /** The frame so far (a view: send or copy it before the next reset). */
  bytes(): Uint8Array {
    return this.mem.u8.subarray(0, this.len);
  }

  reset(): void {
    this.len = 0;
    this.count = 0;
  }
}

/** An EntryResult as a plain object; u64 values as decimal strings, enums by name. */
export interface EntryResultObject {
  correlation: number;
  status: 'ok' | 'rejected' | 'refused' | 'timeout';
  /** The command type answered (1 PlaceOrder, 2 CancelOrder, 3 DecreaseOrder, 4 CancelAll). */
  command_type: number;
  /** rejected and refused: the error code's name (codes.json; refused: a gateway code); else null. */
  code: string | null;
  /** rejected: the core num; else null. */
  num: number | null;
  field_offset: number;
  seq: U64;
  ts: U64;
  order_id: U64;
  /** A placement that is ok: resting, partially_filled, filled or canceled; duplicate_client_order_id: the existing order's; else ''. */
  order_status: string;
  /** A placement canceled by an execution outcome: the reason; else ''. */
  reason: string;
  filled_qty: number;
  resting_qty: number;
  result: number;
  client_order_id: U64;
  retry_after_ms: number;
  fills: { tick_yes: number; qty: number; path: FillPath }[];
}

const CORE_BY_NUM = new Map(CODES.filter((c) => c.num !== null).map((c) => [c.num!, c.code]));

function u64At(m: Mem, at: number): U64 {
  const lo = m.u32[at >>> 2]!;
  const hi = m.u32[(at >>> 2) + 1]!;
  return hi === 0 ? String(lo) : String((BigInt(hi) << 32n) | BigInt(lo));
}

/** Decodes every EntryResult of an answer frame, in order; throws on bytes that are not EntryResults. */
export function decodeResults(frame: Uint8Array): EntryResultObject[] {
  if (frame.byteLength % 8 !== 0) throw new Error(`binary_codec: a frame of ${frame.byteLength} bytes is not whole records`);
  // Copy into an aligned buffer of its own (a received Buffer may sit at any offset of a pooled one).
  const copy = new Uint8Array(frame.byteLength);
  copy.set(frame);
  const m = memOf(copy.buffer);
  const out: EntryResultObject[] = [];
  for (let o = 0; o < frame.byteLength;) {
    const len = Header.len(m, o);
    if (Header.type(m, o) !== T_ENTRY_RESULT || len < EntryResult.SIZE || o + len > frame.byteLength) {
      throw new Error(`binary_codec: byte ${o} does not start an EntryResult (type ${Header.type(m, o)}, len ${len})`);
    }
    const status = ENTRY_STATUS_NAMES[EntryResult.status(m, o)] as EntryResultObject['status'];
    const codeNum = EntryResult.code(m, o);
    const code =
      status === 'rejected'
        ? (CORE_BY_NUM.get(codeNum) ?? `num_${codeNum}`)
        : status === 'refused'
          ? (REFUSAL_CODE_NAMES[codeNum] ?? `refusal_${codeNum}`)
          : null;
    // order_status means something for a placement that is ok, and for a duplicate client_order_id (the existing order's).
    const withStatus = (status === 'ok' && EntryResult.command_type(m, o) === PlaceOrder.TYPE) || code === 'duplicate_client_order_id';
    const fills: EntryResultObject['fills'] = [];
    for (let i = 0, n = EntryResult.fill_count(m, o); i < n; i++) {
      const at = o + EntryResult.SIZE + i * EntryFill.SIZE;
      fills.push({ tick_yes: EntryFill.tick_yes(m, at), qty: EntryFill.qty(m, at), path: PATH_NAMES[EntryFill.path(m, at)] as FillPath });
    }
    out.push({
      correlation: Header.correlation(m, o),
      status,
      command_type: EntryResult.command_type(m, o),
      code,
      num: status === 'rejected' ? codeNum : null,
      field_offset: EntryResult.field_offset(m, o),
      seq: u64At(m, o + 16),
      ts: u64At(m, o + 24),
      order_id: u64At(m, o + 40),
      order_status: withStatus ? ORDER_STATUS_NAMES[EntryResult.order_status(m, o)]! : '',
      reason: EntryResult.reason(m, o) === 0 ? '' : CANCEL_REASON_NAMES[EntryResult.reason(m, o)]!,
      filled_qty: EntryResult.filled_qty(m, o),
      resting_qty: EntryResult.resting_qty(m, o),
      result: EntryResult.result(m, o),
      client_order_id: u64At(m, o + 64),
      retry_after_ms: EntryResult.retry_after_ms(m, o),
      fills,
    });
    o += len;
  }
  return out;
}
