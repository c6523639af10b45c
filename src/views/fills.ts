// fills: the per-account fills projection: every account's newest fill_cap
// fills in both roles (one record per party per Filled event) in the
// RecordRings `fillRings` (owner = account), and the query that pages them
// newest first. Runs on the thread that owns the Views.

import type { FillsPage } from '../wire/responses.js';
import * as ordersModule from '../book/orders.js';
import { Filled, Header, OUTCOME_NAMES, Outcome, PATH_NAMES, SIDE_NAMES } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import { hiLoToString } from '../lib/u64.js';
import { CursorKind, cursorScope, decodeCursor, encodeCursor } from './cursor.js';
import { accountKnown, checkLimit, type FillsQuery, type ViewsData } from './model.js';

// Field offsets as module constants (an imported binding is a module cell read at every use; docs/engine-performance.md).
const { B_HAS_COID, B_OUTCOME, B_SIDE, F_ID, LB, LF, LW, W_COID_HI, W_COID_LO } = ordersModule;

// Fill record (one per party per Filled event).
const FF_FILL_ID = 0;
const FF_SEQ = 1;
const FF_ORDER_ID = 2;
const FF_FEE = 3;
export const FILL_F64 = 4;
const FU_TS_HI = 0;
const FU_TS_LO = 1;
const FU_COID_HI = 2;
const FU_COID_LO = 3;
const FU_MARKET = 4;
const FU_QTY = 5;
/** side bit 0, outcome bit 1, role bit 2 (1 = taker), path bits 3-4, has coid bit 5, tick_yes bits 8-15, own tick bits 16-23. */
const FU_PACKED = 6;
export const FILL_U32 = 7;

const ROLE_NAMES = ['maker', 'taker'] as const;

/**
 * Fold: records a Filled event (at byte offset o of m) in both parties'
 * rings. Called before evolve: the event does not carry each party's side,
 * outcome or client_order_id, so they are read from the order slab, and
 * evolve may retire the parties and, with a small terminal_cap, evict them.
 */
export function recordFills(v: ViewsData, m: Mem, o: number): void {
  const s = v.state;
  const maker = s.slotOf(Filled.maker_order_id(m, o));
  const taker = s.slotOf(Filled.taker_order_id(m, o));
  assert(maker >= 0 && taker >= 0, 'views: filled orders exist');
  const fillId = Filled.fill_id(m, o);
  const seq = Header.seq(m, o);
  const tsHi = Header.ts_hi(m, o);
  const tsLo = Header.ts_lo(m, o);
  const market = Filled.market_id(m, o);
  const qty = Filled.qty(m, o);
  const tickYes = Filled.tick_yes(m, o);
  const path = Filled.path(m, o);
  pushFill(v, Filled.maker_account(m, o), maker, 0, Filled.maker_fee(m, o), fillId, seq, tsHi, tsLo, market, qty, tickYes, path);
  pushFill(v, Filled.taker_account(m, o), taker, 1, Filled.taker_fee(m, o), fillId, seq, tsHi, tsLo, market, qty, tickYes, path);
}

function pushFill(
  v: ViewsData, account: number, slot: number, role: number, fee: number, fillId: number, seq: number, tsHi: number, tsLo: number,
  market: number, qty: number, tickYes: number, path: number,
): void {
  const ord = v.state.orders;
  const rings = v.fillRings;
  const r = rings.push(account);
  rings.setF64(r, FF_FILL_ID, fillId);
  rings.setF64(r, FF_SEQ, seq);
  rings.setF64(r, FF_ORDER_ID, ord.f64[(slot << LF) | F_ID]!);
  rings.setF64(r, FF_FEE, fee);
  const b = slot << LB;
  const outcome = ord.u8[b | B_OUTCOME]!;
  // Both parties trade at one YES-space price; an order's own price is its outcome's side of it.
  const tick = outcome === Outcome.yes ? tickYes : 100 - tickYes;
  rings.setU32(r, FU_TS_HI, tsHi);
  rings.setU32(r, FU_TS_LO, tsLo);
  rings.setU32(r, FU_COID_HI, ord.u32[(slot << LW) | W_COID_HI]!);
  rings.setU32(r, FU_COID_LO, ord.u32[(slot << LW) | W_COID_LO]!);
  rings.setU32(r, FU_MARKET, market);
  rings.setU32(r, FU_QTY, qty);
  rings.setU32(r, FU_PACKED, ord.u8[b | B_SIDE]! | (outcome << 1) | (role << 2) | (path << 3) | (ord.u8[b | B_HAS_COID]! << 5)
    | (tickYes << 8) | (tick << 16));
}

/** The account's fills in both roles, newest first (sort key: the fill's ordinal in the account's ring). */
export function fillsPage(v: ViewsData, account: number, q: FillsQuery): FillsPage {
  checkLimit(q.limit);
  const scope = cursorScope(account, q);
  const before = decodeCursor(CursorKind.fills, q.cursor, scope);
  const out: FillsPage['fills'] = [];
  let cursor = '';
  if (accountKnown(v.state, account)) {
    const rings = v.fillRings;
    const total = rings.totalOf(account);
    const from = rings.retainedFrom(account);
    for (let n = before < 0 || before > total ? total - 1 : before - 1; n >= from; n--) {
      const r = rings.slotOf(account, n);
      if (q.market_id !== undefined && rings.u32At(r, FU_MARKET) !== q.market_id) continue;
      if (q.order_id !== undefined && rings.f64At(r, FF_ORDER_ID) !== q.order_id) continue;
      if (out.length === q.limit) {
        cursor = encodeCursor(CursorKind.fills, n + 1, scope);
        break;
      }
      const packed = rings.u32At(r, FU_PACKED);
      out.push({
        fill_id: String(rings.f64At(r, FF_FILL_ID)),
        seq: String(rings.f64At(r, FF_SEQ)),
        ts: hiLoToString(rings.u32At(r, FU_TS_HI), rings.u32At(r, FU_TS_LO)),
        order_id: String(rings.f64At(r, FF_ORDER_ID)),
        client_order_id: (packed >>> 5) & 1 ? hiLoToString(rings.u32At(r, FU_COID_HI), rings.u32At(r, FU_COID_LO)) : '0',
        market_id: rings.u32At(r, FU_MARKET),
        side: SIDE_NAMES[packed & 1]!,
        outcome: OUTCOME_NAMES[(packed >>> 1) & 1]!,
        role: ROLE_NAMES[(packed >>> 2) & 1]!,
        tick_yes: (packed >>> 8) & 0xff,
        tick: (packed >>> 16) & 0xff,
        qty: rings.u32At(r, FU_QTY),
        fee: String(rings.f64At(r, FF_FEE)),
        path: PATH_NAMES[(packed >>> 3) & 3]!,
      });
    }
  }
  return { fills: out, cursor, as_of_seq: String(v.state.seq) };
}
