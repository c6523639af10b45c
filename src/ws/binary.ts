// binary: order entry in binary frames on the WebSocket lane (the rules are
// native-layout/wire.json's, rendered in LAYOUT.md). A frame holds command
// records in their native layout; each is checked by the JSON schemas' rules,
// charged one write token, stamped (producer, correlation, seq, time) by
// GatewayCore.hold and copied into the thread's command ring. Answers are
// EntryResult records appended to the connection's BinaryBatch and written
// as binary frames by the lane. Gateway threads; no JSON and no BigInt on
// this path.
//
// Order of checks per record, as REST: write token (429) -> scope (403) ->
// fields (400) -> shedding (503). A frame that cannot be read as records is
// refused whole before any record runs (the lane closes the connection).

import { type CommandWriter, type Completion, type CompletionWaiter, type StageTimes } from '../gateway/core.js';
import { monoUs } from '../lib/mono_clock.js';
import { BUCKET_WRITE } from '../gateway/buckets.js';
import { ApiError, codeByNum, codeInfo } from '../gateway/envelope.js';
import type { LaneOptions, Observer } from '../gateway/http.js';
import {
  CancelAll,
  CancelOrder,
  CompletionStatus,
  DecreaseOrder,
  EntryFill,
  EntryResult,
  EntryStatus,
  HEADER_SIZE,
  Header,
  LAYOUT_FINGERPRINT,
  PATH_NAMES,
  PlaceOrder,
  REFUSAL_CODE_NAMES,
  RefusalCode,
  Reject,
  Scope,
  Side,
  T_CANCEL_ALL,
  T_CANCEL_ORDER,
  T_DECREASE_ORDER,
  T_ENTRY_RESULT,
  T_PLACE_ORDER,
  Tif,
} from '../layout/records.js';
import { memOf, type Mem } from '../lib/mem.js';
import type { OrderPeer } from './orders.js';

/** The layout fingerprint as agreed at start_binary ("0x" and 8 lowercase hex digits). */
export const FINGERPRINT_TEXT = `0x${LAYOUT_FINGERPRINT.toString(16).padStart(8, '0')}`;

/** Largest PlaceOrder qty (the JSON schema's maximum). */
const MAX_QTY = 1_000_000;

/** Answers waiting to be written to one connection, coalesced into one binary frame per flush. */
export class BinaryBatch {
  mem: Mem = memOf(new ArrayBuffer(0));
  len = 0;
  /** True while the batch is in the connection's output queue. */
  queued = false;

  /** Claims `size` bytes (a multiple of 8) at the end; returns their offset. */
  claim(size: number): number {
    const need = this.len + size;
    if (need > this.mem.u8.length) {
      let cap = Math.max(4096, this.mem.u8.length * 2);
      while (cap < need) cap *= 2;
      const grown = memOf(new ArrayBuffer(cap));
      grown.u8.set(this.mem.u8.subarray(0, this.len));
      this.mem = grown;
    }
    const o = this.len;
    this.len = need;
    this.mem.u8.fill(0, o, need);
    return o;
  }

  /** The bytes to send; reset() after sending (uWS copied them). */
  bytes(): Uint8Array {
    return this.mem.u8.subarray(0, this.len);
  }

  reset(): void {
    this.len = 0;
    this.queued = false;
  }
}

/** A connection as binary order entry sees it. */
export interface BinaryPeer extends OrderPeer {
  /** True once this thread applied the key's revocation: nothing sequenced after it is sent (the connection closes, 4003). */
  readonly revoked: boolean;
  /**
   * The batch to append answers to: one that is last in the connection's output queue, or one not queued yet. Never a
   * batch with other messages queued behind it: a command's user-channel events are queued before its answer, and a
   * later answer must not overtake them.
   */
  answers(): BinaryBatch;
}

/** Record size of each command that binary frames may carry (0: not allowed). */
function sizeOf(type: number): number {
  switch (type) {
    case T_PLACE_ORDER: return PlaceOrder.SIZE;
    case T_CANCEL_ORDER: return CancelOrder.SIZE;
    case T_DECREASE_ORDER: return DecreaseOrder.SIZE;
    case T_CANCEL_ALL: return CancelAll.SIZE;
    default: return 0;
  }
}

/** Null when the frame reads as 1..maxRecords whole command records; else what is wrong, and where. */
export function frameProblem(m: Mem, bytes: number, maxRecords: number): string | null {
  if (bytes === 0) return 'an empty frame';
  if (bytes % 8 !== 0) return `a frame of ${bytes} bytes is not a whole number of records (records are multiples of 8 bytes)`;
  let n = 0;
  for (let o = 0; o < bytes; n++) {
    if (n === maxRecords) return `more than ${maxRecords} records in one frame`;
    if (bytes - o < HEADER_SIZE) return `record at byte ${o}: ${bytes - o} bytes left, less than a header`;
    const type = Header.type(m, o);
    const size = sizeOf(type);
    if (size === 0) return `record at byte ${o}: type ${type} is not PlaceOrder (1), CancelOrder (2), DecreaseOrder (3) or CancelAll (4)`;
    const len = Header.len(m, o);
    if (len !== size) return `record at byte ${o}: len ${len}, but type ${type} is ${size} bytes`;
    if (o + len > bytes) return `record at byte ${o}: its ${len} bytes run past the end of the frame (${bytes} bytes)`;
    o += len;
  }
  return null;
}

/**
 * The byte offset of the first field of the record at o that the JSON
 * schemas' rules refuse (invalid_field), or -1 when every field is in range.
 */
export function recordFault(m: Mem, o: number, account: number): number {
  if (Header.producer(m, o) !== 0) return 6;
  if (Header.account(m, o) !== account) return 12;
  if (Header.seq(m, o) !== 0) return 16;
  if (Header.ts_hi(m, o) !== 0 || Header.ts_lo(m, o) !== 0) return 24;
  switch (Header.type(m, o)) {
    case T_PLACE_ORDER: return placeFault(m, o);
    case T_DECREASE_ORDER: return m.u32[(o + 44) >>> 2] !== 0 ? 44 : -1; // reserved0
    default: return -1;
  }
}

/** PlaceOrder: ranges and enums of PlaceOrderBody, then the flag combinations of routes.ts encodeOrder. */
function placeFault(m: Mem, o: number): number {
  if (PlaceOrder.market_id(m, o) < 1) return 32;
  const qty = PlaceOrder.qty(m, o);
  if (qty < 1 || qty > MAX_QTY) return 36;
  const tick = PlaceOrder.tick(m, o);
  if (tick < 1 || tick > 99) return 44;
  if (PlaceOrder.side(m, o) > 1) return 45;
  if (PlaceOrder.outcome(m, o) > 1) return 46;
  const tif = PlaceOrder.tif(m, o);
  if (tif > Tif.fok) return 47;
  if (PlaceOrder.stp(m, o) > 2) return 48;
  const postOnly = PlaceOrder.post_only(m, o);
  if (postOnly > 1) return 49;
  const hasCoid = PlaceOrder.has_client_order_id(m, o);
  if (hasCoid > 1) return 50;
  const hasMax = PlaceOrder.has_max_cost(m, o);
  if (hasMax > 1) return 51;
  if (m.u32[(o + 52) >>> 2] !== 0) return 52; // reserved0
  const coidZero = PlaceOrder.client_order_id_hi(m, o) === 0 && PlaceOrder.client_order_id_lo(m, o) === 0;
  if (coidZero === (hasCoid === 1)) return 56; // present means 1..2^64-1; absent means 0
  if (postOnly === 1 && (tif === Tif.ioc || tif === Tif.fok)) return 49;
  const expiryZero = PlaceOrder.expiry_ts_hi(m, o) === 0 && PlaceOrder.expiry_ts_lo(m, o) === 0;
  if (expiryZero === (tif === Tif.gtd)) return 64; // gtd needs expiry_ts, and expiry_ts needs gtd
  const maxZero = m.u32[(o + 72) >>> 2] === 0 && m.u32[(o + 76) >>> 2] === 0;
  if (hasMax === 0) return maxZero ? -1 : 72;
  // max_cost: buys only; such an order never rests (no post_only, no gtd).
  if (PlaceOrder.side(m, o) === Side.sell || postOnly === 1 || tif === Tif.gtd) return 72;
  return -1;
}

/** Writes the fixed part of an EntryResult (everything zero but the header and status); returns its offset. */
function begin(b: BinaryBatch, correlation: number, account: number, commandType: number, status: number, fills: number): number {
  const size = EntryResult.SIZE + fills * EntryFill.SIZE;
  const o = b.claim(size);
  const m = b.mem;
  Header.set_len(m, o, size);
  Header.set_type(m, o, T_ENTRY_RESULT);
  Header.set_correlation(m, o, correlation);
  Header.set_account(m, o, account);
  EntryResult.set_status(m, o, status);
  EntryResult.set_command_type(m, o, commandType);
  EntryResult.set_fill_count(m, o, fills);
  return o;
}

/**
 * One record on its way: the fields its answer needs (read while the frame is
 * still valid), the copy of the command a held one may need later, and its
 * answer once the completion comes. One object per record: it is both the
 * command's writer and its completion's waiter (GatewayCore.hold).
 */
class PendingRecord implements CommandWriter, CompletionWaiter, StageTimes {
  // Its stage times (metrics): the frame's arrival and check are its head and verified stamps.
  tVerified = NaN;
  tPublished = NaN;
  tSequenced = NaN;
  tDurable = NaN;
  tApplied = NaN;
  tReplied = NaN;
  coidHi = 0;
  coidLo = 0;
  /** The record's words: the frame's own (written at once) or a copy (a command that may wait for room). */
  src: Uint32Array = EMPTY_WORDS;
  base = 0;
  size = 0;
  /** A budget above 2^53-1 cents cannot bind: clamped, as the JSON lane does. */
  clamp = false;
  peer: BinaryPeer | null = null;
  orders: BinaryOrders | null = null;

  constructor(
    readonly correlation: number,
    readonly type: number,
    public tHead: number,
  ) {}

  write(d: Mem, at: number): void {
    const u = d.u32;
    const to = at >>> 2;
    const src = this.src;
    const base = this.base;
    for (let i = HEADER_SIZE >>> 2, end = this.size >>> 2; i < end; i++) u[to + i] = src[base + i]!;
    if (this.clamp) PlaceOrder.set_max_cost(d, at, Number.MAX_SAFE_INTEGER);
    // The frame is gone after this turn: a written record no longer needs it.
    this.src = EMPTY_WORDS;
  }

  complete(c: Completion | null): void {
    this.orders!.completed(this.peer!, this, c);
  }
}

const EMPTY_WORDS = new Uint32Array(0);

/** The HTTP status REST would have answered (metrics count binary answers alike). */
function restStatus(type: number, status: number, code: number): number {
  switch (status) {
    case EntryStatus.ok: return type === T_PLACE_ORDER ? 201 : type === T_CANCEL_ALL ? 202 : 200;
    case EntryStatus.rejected: return codeByNum(code).http;
    case EntryStatus.refused: return codeInfo(REFUSAL_CODE_NAMES[code]!).http;
    default: return 504;
  }
}

/** The error code REST would have answered, null for a success. */
function restCode(status: number, code: number): string | null {
  switch (status) {
    case EntryStatus.ok: return null;
    case EntryStatus.rejected: return codeByNum(code).code;
    case EntryStatus.refused: return REFUSAL_CODE_NAMES[code]!;
    default: return 'sequencing_timeout';
  }
}

/**
 * Binary order entry of one gateway thread. `queued(peer, batch)` is called
 * when a batch of the connection gained its first answer since it was last
 * written: the connection queues it for output.
 */
export class BinaryOrders {
  constructor(
    private readonly lane: LaneOptions,
    private readonly maxInFlight: number,
    private readonly queued: (peer: BinaryPeer, batch: BinaryBatch) => void,
    private readonly observer?: Observer,
  ) {}

  /** Runs every record of a frame that frameProblem() accepted; `headUs` is monoUs() at its arrival. */
  frame(peer: BinaryPeer, m: Mem, bytes: number, now: number, headUs: number): void {
    const verifiedUs = monoUs();
    for (let o = 0; o < bytes; o += Header.len(m, o)) this.record(peer, m, o, now, headUs, verifiedUs);
    this.lane.core.kick();
  }

  private record(peer: BinaryPeer, m: Mem, o: number, now: number, headUs: number, verifiedUs: number): void {
    const type = Header.type(m, o);
    const p = new PendingRecord(Header.correlation(m, o), type, headUs);
    p.tVerified = verifiedUs;
    if (type === T_PLACE_ORDER) {
      p.coidHi = PlaceOrder.client_order_id_hi(m, o);
      p.coidLo = PlaceOrder.client_order_id_lo(m, o);
    }
    const lane = this.lane;
    if (lane.stopping?.()) return this.refuse(peer, p, RefusalCode.shed, 0, 0);
    const wait = lane.buckets.take(peer, BUCKET_WRITE, 1, now);
    if (wait > 0) return this.refuse(peer, p, RefusalCode.rate_limited, 0, wait);
    if ((peer.scopes & Scope.trade) === 0) return this.refuse(peer, p, RefusalCode.missing_scope, 0, 0);
    const fault = recordFault(m, o, peer.account);
    if (fault >= 0) return this.refuse(peer, p, RefusalCode.invalid_field, fault, 0);
    // The in-flight cap before the id, as the JSON lane checks it before invokeRoute.
    if (peer.inFlight >= this.maxInFlight) return this.refuse(peer, p, RefusalCode.shed, 0, 0);
    // An order id above 2^53 cannot exist (ids are seqs): unknown_order, as REST answers it, without sequencing; a node
    // that does not sequence says not_primary first, as REST's invokeRoute does before the handler reads the id.
    if ((type === T_CANCEL_ORDER || type === T_DECREASE_ORDER) && m.u32[(o + 36) >>> 2]! >= 0x200000) {
      try {
        lane.core.assertWritable();
      } catch (e) {
        if (e instanceof ApiError && e.code === 'not_primary') return this.refuse(peer, p, RefusalCode.not_primary, 0, 0);
        throw e;
      }
      return this.rejectUnknownOrder(peer, p, m, o);
    }
    const sheddable = type === T_PLACE_ORDER || type === T_CANCEL_ALL;
    const size = Header.len(m, o);
    // Sheddable commands are written into the ring now or refused; the others
    // may wait in the core's queue for room, after this frame is gone: copy them.
    p.src = sheddable ? m.u32 : m.u32.slice(o >>> 2, (o + size) >>> 2);
    p.base = sheddable ? o >>> 2 : 0;
    p.size = size;
    p.clamp = type === T_PLACE_ORDER && m.u32[(o + 76) >>> 2]! >= 0x200000;
    p.peer = peer;
    p.orders = this;
    lane.core.tracing = p;
    // As invokeRoute does: a command of this key that waits for room is not written once the key is revoked.
    lane.core.callerKey = peer.keyId;
    try {
      lane.core.hold(type, size, peer.account, sheddable, p, p);
    } catch (e) {
      if (e instanceof ApiError && e.code === 'shed') return this.refuse(peer, p, RefusalCode.shed, 0, 0);
      if (e instanceof ApiError && e.code === 'not_primary') return this.refuse(peer, p, RefusalCode.not_primary, 0, 0);
      throw e;
    } finally {
      lane.core.tracing = null;
      lane.core.callerKey = 0;
    }
    peer.inFlight++;
  }

  private refuse(peer: BinaryPeer, p: PendingRecord, code: number, fieldOffset: number, retryAfterMs: number): void {
    this.observe(p, EntryStatus.refused, code);
    if (!peer.open) return;
    const b = peer.answers();
    const o = begin(b, p.correlation, peer.account, p.type, EntryStatus.refused, 0);
    EntryResult.set_code(b.mem, o, code);
    EntryResult.set_field_offset(b.mem, o, fieldOffset);
    EntryResult.set_retry_after_ms(b.mem, o, retryAfterMs);
    EntryResult.set_client_order_id(b.mem, o, p.coidHi, p.coidLo);
    this.mark(peer, b);
  }

  private rejectUnknownOrder(peer: BinaryPeer, p: PendingRecord, m: Mem, o: number): void {
    this.observe(p, EntryStatus.rejected, Reject.unknown_order);
    if (!peer.open) return;
    const hi = m.u32[(o + 36) >>> 2]!;
    const lo = m.u32[(o + 32) >>> 2]!;
    const b = peer.answers();
    const r = begin(b, p.correlation, peer.account, p.type, EntryStatus.rejected, 0);
    EntryResult.set_code(b.mem, r, Reject.unknown_order);
    // The id as sent (it does not fit the safe accessor): both halves.
    b.mem.u32[(r + 40) >>> 2] = lo;
    b.mem.u32[(r + 44) >>> 2] = hi;
    this.mark(peer, b);
  }

  /** The outcome of a held record (PendingRecord.complete). */
  completed(peer: BinaryPeer, p: PendingRecord, c: Completion | null): void {
    peer.inFlight--;
    if (c === null) this.observe(p, EntryStatus.timeout, 0);
    else this.observe(p, c.status === CompletionStatus.rejected ? EntryStatus.rejected : EntryStatus.ok, c.code_num);
    // After the revocation no private message goes out, as Fanout.queue drops the JSON lane's answers.
    if (!peer.open || peer.revoked) return;
    const b = peer.answers();
    if (c === null) {
      const o = begin(b, p.correlation, peer.account, p.type, EntryStatus.timeout, 0);
      EntryResult.set_client_order_id(b.mem, o, p.coidHi, p.coidLo);
      this.mark(peer, b);
      return;
    }
    const rejected = c.status === CompletionStatus.rejected;
    const fills = rejected ? 0 : c.fills.length;
    const o = begin(b, p.correlation, peer.account, p.type, rejected ? EntryStatus.rejected : EntryStatus.ok, fills);
    const m = b.mem;
    Header.set_seq(m, o, c.seq);
    Header.set_ts(m, o, c.ts_hi, c.ts_lo);
    EntryResult.set_code(m, o, rejected ? c.code_num : 0);
    EntryResult.set_order_status(m, o, c.order_status);
    EntryResult.set_reason(m, o, c.reason);
    EntryResult.set_order_id(m, o, c.order_id);
    EntryResult.set_filled_qty(m, o, c.filled_qty);
    EntryResult.set_resting_qty(m, o, c.resting_qty);
    if (p.type === T_CANCEL_ORDER || p.type === T_DECREASE_ORDER) EntryResult.set_result(m, o, rejected ? 0 : c.result);
    EntryResult.set_client_order_id(m, o, p.coidHi, p.coidLo);
    for (let i = 0; i < fills; i++) {
      const f = c.fills[i]!;
      const at = o + EntryResult.SIZE + i * EntryFill.SIZE;
      EntryFill.set_qty(m, at, f.qty);
      EntryFill.set_tick_yes(m, at, f.tick_yes);
      EntryFill.set_path(m, at, PATH_NAMES.indexOf(f.path));
    }
    this.mark(peer, b);
  }

  private observe(p: PendingRecord, status: number, code: number): void {
    const obs = this.observer;
    if (obs === undefined) return;
    p.tReplied = monoUs();
    obs.onResponse('binary', restStatus(p.type, status, code), restCode(status, code), p);
  }

  private mark(peer: BinaryPeer, b: BinaryBatch): void {
    if (b.queued) return;
    b.queued = true;
    this.queued(peer, b);
  }
}
