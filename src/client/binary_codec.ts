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
  const b = typeof v === 'bigint' ? v : BigInt(v);
  if (b < 0n || b > U64_MAX) throw new RangeError(`${what} must be a u64, got ${String(v)}`);
  return b;
}

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

  /** A placement with the JSON request's fields (the same defaults: gtc, cancel_taker, no group). */
  place(correlation: number, r: OrderRequest): void {
    const m = this.mem;
    const o = this.begin(PlaceOrder.TYPE, PlaceOrder.SIZE, correlation);
    PlaceOrder.set_market_id(m, o, r.market_id);
    PlaceOrder.set_qty(m, o, r.qty);
    PlaceOrder.set_group_id(m, o, r.group_id ?? 0);
    PlaceOrder.set_tick(m, o, r.tick);
    PlaceOrder.set_side(m, o, Side[r.side]);
    PlaceOrder.set_outcome(m, o, Outcome[r.outcome]);
    PlaceOrder.set_tif(m, o, Tif[r.tif ?? 'gtc']);
    PlaceOrder.set_stp(m, o, Stp[r.stp ?? 'cancel_taker']);
    PlaceOrder.set_post_only(m, o, r.post_only === true ? 1 : 0);
    if (r.client_order_id !== undefined) {
      const v = u64(r.client_order_id, 'client_order_id');
      PlaceOrder.set_has_client_order_id(m, o, 1);
      PlaceOrder.set_client_order_id(m, o, Number(v >> 32n), Number(v & 0xffffffffn));
    }
    if (r.expiry_ts !== undefined) {
      const v = u64(r.expiry_ts, 'expiry_ts');
      PlaceOrder.set_expiry_ts(m, o, Number(v >> 32n), Number(v & 0xffffffffn));
    }
    if (r.max_cost !== undefined) {
      const v = u64(r.max_cost, 'max_cost');
      PlaceOrder.set_has_max_cost(m, o, 1);
      m.u32[(o + 72) >>> 2] = Number(v & 0xffffffffn);
      m.u32[(o + 76) >>> 2] = Number(v >> 32n);
    }
  }

  cancel(correlation: number, orderId: U64 | number): void {
    const o = this.begin(CancelOrder.TYPE, CancelOrder.SIZE, correlation);
    const v = u64(orderId, 'order_id');
    this.mem.u32[(o + 32) >>> 2] = Number(v & 0xffffffffn);
    this.mem.u32[(o + 36) >>> 2] = Number(v >> 32n);
  }

  decrease(correlation: number, orderId: U64 | number, newQty: number): void {
    const o = this.begin(DecreaseOrder.TYPE, DecreaseOrder.SIZE, correlation);
    const v = u64(orderId, 'order_id');
    this.mem.u32[(o + 32) >>> 2] = Number(v & 0xffffffffn);
    this.mem.u32[(o + 36) >>> 2] = Number(v >> 32n);
    DecreaseOrder.set_new_qty(this.mem, o, newQty);
  }

  /** Mass cancel; 0 or absent market_id / group_id = all. */
  cancelAll(correlation: number, q: { market_id?: number; group_id?: number } = {}): void {
    const o = this.begin(CancelAll.TYPE, CancelAll.SIZE, correlation);
    CancelAll.set_market_id(this.mem, o, q.market_id ?? 0);
    CancelAll.set_group_id(this.mem, o, q.group_id ?? 0);
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
