// checks: what the restarted exchange must serve, against the ledger. Per
// trading account: every acknowledged order is there with its seq, fields,
// fills and acknowledged cancels and decreases; nothing refused before
// sequencing shows up; cash, reservations and positions equal what its own
// fills and live orders imply (fee schedule 0); gtd orders past their expiry
// are gone. Per funding account: the exact balance and every withdrawal's
// wid, seq and status. Over all accounts: available + reserved + 100 x open
// pairs = deposits - confirmed withdrawals. Accounts retired in an earlier
// epoch stay bit for bit the same. Violations go to the ledger. Main thread
// of the crash test.

import { setTimeout as sleep } from 'node:timers/promises';
import type { DxClient } from '../../../src/client/client.js';
import type { AdminAccount, Fill, Order, PlacementFill, Position } from '../../../src/client/types.js';
import { Reject } from '../../../src/layout/records.js';
import type { ExchangeLink, Funding, Ledger, OrderRec, Trader } from './ledger.js';
import { attempt, definite } from './outcome.js';

/** A gtd order must be gone this long after its expiry_ts (clock ticks every 5 ms; generous for a loaded machine). */
const GTD_MARGIN_MS = 2000;

async function allOrders(c: DxClient): Promise<{ orders: Order[]; as_of: string[] }> {
  const orders: Order[] = [];
  const as_of: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const out = await definite('orders page', () => c.orders({ limit: 1000, cursor }));
    if (out.kind !== 'ok') throw new Error(`orders listing: ${out.kind}`);
    orders.push(...out.body.orders);
    as_of.push(out.body.as_of_seq);
    if (out.body.cursor === '') return { orders, as_of };
    cursor = out.body.cursor;
  }
}

async function allFills(c: DxClient): Promise<{ fills: Fill[]; as_of: string[] }> {
  const fills: Fill[] = [];
  const as_of: string[] = [];
  let cursor: string | undefined;
  for (;;) {
    const out = await definite('fills page', () => c.fills({ limit: 1000, cursor }));
    if (out.kind !== 'ok') throw new Error(`fills listing: ${out.kind}`);
    fills.push(...out.body.fills);
    as_of.push(out.body.as_of_seq);
    if (out.body.cursor === '') return { fills, as_of };
    cursor = out.body.cursor;
  }
}

/**
 * One consistent read of a trading account: orders, fills, positions and
 * balance at the same as_of_seq (clock-driven expiries may move it between
 * reads; then read again).
 */
async function traderView(
  ledger: Ledger,
  link: ExchangeLink,
  t: Trader,
): Promise<{ orders: Order[]; fills: Fill[]; positions: Position[]; available: number; reserved: number; at: number }> {
  const c = link.client(t.keys[1]!);
  for (let i = 0; ; i++) {
    const at = Date.now();
    const o = await allOrders(c);
    const f = await allFills(c);
    const p = await definite('positions', () => c.positions({ limit: 1000 }));
    const b = await definite('balance', () => c.balance());
    if (p.kind !== 'ok' || b.kind !== 'ok') throw new Error(`account ${t.id}: positions/balance not readable`);
    const seqs = new Set([...o.as_of, ...f.as_of, p.body.as_of_seq, b.body.as_of_seq]);
    for (const s of seqs) ledger.seen(s);
    if (seqs.size === 1 || i >= 10) {
      if (seqs.size !== 1) ledger.count('inconsistent_views_skipped');
      return {
        orders: o.orders,
        fills: f.fills,
        positions: p.body.positions,
        available: Number(b.body.available),
        reserved: Number(b.body.reserved),
        at: seqs.size === 1 ? at : -1,
      };
    }
    await sleep(150);
  }
}

function checkOrder(ledger: Ledger, rec: OrderRec, o: Order, now: number): void {
  const id = `order ${rec.order_id} (client_order_id ${rec.coid}, account ${rec.trader.id})`;
  if (rec.via === 'ws') ledger.count('ws_orders_checked');
  const r = rec.req;
  if (o.created_seq !== rec.created_seq) ledger.violate(`${id}: created_seq ${o.created_seq}, acknowledged seq ${rec.created_seq}`);
  if (o.client_order_id !== rec.coid) ledger.violate(`${id}: client_order_id ${o.client_order_id}`);
  if (
    o.market_id !== r.market_id ||
    o.side !== r.side ||
    o.outcome !== r.outcome ||
    o.tick !== r.tick ||
    o.qty !== r.qty ||
    o.tif !== (r.tif ?? 'gtc')
  ) {
    ledger.violate(
      `${id}: fields changed: ` +
        `${JSON.stringify({ market_id: o.market_id, side: o.side, outcome: o.outcome, tick: o.tick, qty: o.qty, tif: o.tif })} vs sent ` +
        `${JSON.stringify(r)}`,
    );
  }
  if (o.filled_qty + o.remaining_qty > o.qty) ledger.violate(`${id}: filled ${o.filled_qty} + remaining ${o.remaining_qty} > qty ${o.qty}`);
  const a = rec.ack;
  if (a !== undefined) {
    if (o.filled_qty < a.filled_qty) ledger.violate(`${id}: filled_qty ${o.filled_qty} below the acknowledged ${a.filled_qty}`);
    if (a.status === 'filled' || a.status === 'canceled') {
      if (o.filled_qty !== a.filled_qty || o.remaining_qty !== 0 || o.reason !== (a.reason ?? '') || o.last_update_seq !== a.seq) {
        ledger.violate(
          `${id}: acknowledged terminal (${a.status} ${a.reason ?? ''}, filled ${a.filled_qty}, seq ${a.seq}) but now reason ` +
            `"${o.reason}" filled ${o.filled_qty} remaining ${o.remaining_qty} last_update_seq ${o.last_update_seq}`,
        );
      }
      return;
    }
    if (a.status === 'rejected') return;
  }
  if (rec.cancelAck !== undefined) {
    if (o.remaining_qty !== 0 || o.reason !== 'user_canceled' || o.last_update_seq !== rec.cancelAck.seq) {
      ledger.violate(
        `${id}: cancel acknowledged at seq ${rec.cancelAck.seq} but now reason "${o.reason}" remaining ${o.remaining_qty} ` +
          `last_update_seq ${o.last_update_seq}`,
      );
    }
    return;
  }
  if (rec.decreaseAck !== undefined && o.remaining_qty > rec.decreaseAck.new_qty) {
    ledger.violate(
      `${id}: decrease to ${rec.decreaseAck.new_qty} acknowledged at seq ${rec.decreaseAck.seq} but remaining ${o.remaining_qty}`,
    );
  }
  if (o.remaining_qty === 0) {
    const allowed = new Set<string>(['']);
    if (rec.cancelSent) allowed.add('user_canceled');
    if (rec.trader.massCancel !== 'none') allowed.add('mass_canceled');
    if (r.tif === 'gtd') allowed.add('expired');
    if (rec.state === 'landed' || rec.state === 'acked') {
      // A landed-after-kill order was never seen answered: its execution outcome is whatever the engine decided.
      if (rec.ack === undefined) {
        for (const x of ['post_only_cross', 'fok_infeasible', 'ioc_remainder', 'self_trade_prevention']) allowed.add(x);
        // Or the core rejected it (a sell whose shares went meanwhile): a retained rejected order, its reason the reject code.
        if (o.filled_qty === 0 && o.last_update_seq === o.created_seq && Object.hasOwn(Reject, o.reason)) allowed.add(o.reason);
      }
    }
    if (!allowed.has(o.reason)) ledger.violate(`${id}: terminal with reason "${o.reason}", which nothing sent explains`);
    if (o.reason === '' && o.filled_qty === 0) ledger.violate(`${id}: terminal without a reason and without fills`);
  } else if (r.tif === 'gtd' && now > 0 && Number(BigInt(r.expiry_ts!) / 1_000_000n) < now - GTD_MARGIN_MS) {
    ledger.violate(
      `${id}: gtd expiry ${r.expiry_ts} passed ${now - Number(BigInt(r.expiry_ts!) / 1_000_000n)} ms ago but it is still live`,
    );
  }
}

async function verifyTrader(ledger: Ledger, link: ExchangeLink, t: Trader): Promise<void> {
  const v = await traderView(ledger, link, t);
  const byId = new Map<string, Order>();
  for (const o of v.orders) {
    byId.set(o.order_id, o);
    const rec = t.byCoid.get(o.client_order_id);
    if (rec === undefined) ledger.violate(`account ${t.id}: order ${o.order_id} with client_order_id ${o.client_order_id} was never sent`);
    else if (rec.state === 'refused')
      ledger.violate(
        `account ${t.id}: order ${o.order_id} (client_order_id ${o.client_order_id}) exists, but its placement was refused before ` +
          `sequencing`,
      );
    else if (rec.state === 'absent' || rec.state === 'uncertain' || rec.state === 'sent')
      ledger.violate(`account ${t.id}: order ${o.order_id} (client_order_id ${o.client_order_id}) is in state ${rec.state} in the ledger`);
    else if (rec.order_id !== undefined && rec.order_id !== o.order_id)
      ledger.violate(`account ${t.id}: client_order_id ${o.client_order_id} is order ${o.order_id}, acknowledged as ${rec.order_id}`);
  }
  let terminalListed = 0;
  for (const o of v.orders) if (o.remaining_qty === 0 && !isRejectReason(o.reason)) terminalListed++;
  for (const rec of t.orders) {
    if (rec.state !== 'acked' && rec.state !== 'landed') continue;
    ledger.count('orders_checked');
    const o = byId.get(rec.order_id!);
    if (o === undefined) {
      // Only retention may drop an order: a terminal one, once terminal_cap newer terminal orders exist.
      if (terminalListed < ledger.retention.terminal_cap)
        ledger.violate(
          `account ${t.id}: acknowledged order ${rec.order_id} (client_order_id ${rec.coid}, seq ${rec.created_seq}) is missing after ` +
            `restart`,
        );
      continue;
    }
    checkOrder(ledger, rec, o, v.at);
  }
  // Fills: the taker fills of each acknowledged placement, and every order's filled_qty.
  if (v.fills.length >= ledger.retention.fill_cap) {
    ledger.count('fill_checks_skipped_at_cap');
    return;
  }
  const fillsByOrder = new Map<string, Fill[]>();
  for (const f of v.fills) {
    const xs = fillsByOrder.get(f.order_id) ?? [];
    xs.push(f);
    fillsByOrder.set(f.order_id, xs);
  }
  for (const o of v.orders) {
    const sum = (fillsByOrder.get(o.order_id) ?? []).reduce((s, f) => s + f.qty, 0);
    if (sum !== o.filled_qty)
      ledger.violate(`account ${t.id}: order ${o.order_id} has filled_qty ${o.filled_qty} but its fills add up to ${sum}`);
  }
  for (const rec of t.orders) {
    if (rec.ack === undefined || rec.ack.fills.length === 0) continue;
    const taker = (fillsByOrder.get(rec.order_id!) ?? []).filter((f) => f.role === 'taker' && f.seq === rec.ack!.seq);
    if (!sameFills(rec.ack.fills, taker)) {
      ledger.violate(
        `account ${t.id}: order ${rec.order_id} was acknowledged with fills ${JSON.stringify(rec.ack.fills)} at seq ${rec.ack.seq}; its ` +
          `taker fills now are ${JSON.stringify(taker.map((f) => ({ tick_yes: f.tick_yes, qty: f.qty, path: f.path, seq: f.seq })))}`,
      );
    }
  }
  if (v.at < 0) return; // no consistent instant: the money check needs one
  // Money (fee schedule 0): cash moves only by fills at the party's own-outcome price.
  let cash = t.deposit;
  const pos = new Map<string, number>();
  for (const f of v.fills) {
    if (f.fee !== '0') ledger.violate(`account ${t.id}: fill ${f.fill_id} charged fee ${f.fee} on a fee-free market`);
    const k = `${f.market_id}:${f.outcome}`;
    if (f.side === 'buy') {
      cash -= f.qty * f.tick;
      pos.set(k, (pos.get(k) ?? 0) + f.qty);
    } else {
      cash += f.qty * f.tick;
      pos.set(k, (pos.get(k) ?? 0) - f.qty);
    }
  }
  let reservedCash = 0;
  const reservedShares = new Map<string, number>();
  for (const o of v.orders) {
    if (o.remaining_qty === 0) continue;
    if (o.side === 'buy') reservedCash += o.remaining_qty * o.tick;
    else reservedShares.set(`${o.market_id}:${o.outcome}`, (reservedShares.get(`${o.market_id}:${o.outcome}`) ?? 0) + o.remaining_qty);
  }
  if (v.available + v.reserved !== cash)
    ledger.violate(
      `account ${t.id}: available ${v.available} + reserved ${v.reserved} = ${v.available + v.reserved}, its deposit and fills give ` +
        `${cash}`,
    );
  if (v.reserved !== reservedCash) ledger.violate(`account ${t.id}: reserved ${v.reserved}, its live buy orders hold ${reservedCash}`);
  const held = new Map<string, { free: number; rfs: number }>();
  for (const p of v.positions) held.set(`${p.market_id}:${p.outcome}`, { free: p.free, rfs: p.reserved_for_sale });
  for (const k of new Set([...held.keys(), ...pos.keys(), ...reservedShares.keys()])) {
    const h = held.get(k) ?? { free: 0, rfs: 0 };
    if (h.free + h.rfs !== (pos.get(k) ?? 0))
      ledger.violate(`account ${t.id}: position ${k} holds ${h.free} free + ${h.rfs} reserved, its fills give ${pos.get(k) ?? 0}`);
    if (h.rfs !== (reservedShares.get(k) ?? 0))
      ledger.violate(`account ${t.id}: position ${k} reserves ${h.rfs} shares for sale, its live sells hold ${reservedShares.get(k) ?? 0}`);
  }
}

async function verifyFunding(ledger: Ledger, link: ExchangeLink, f: Funding, everyWithdrawal: boolean): Promise<void> {
  const a = await link.admin().account(f.id);
  ledger.seen(a.as_of_seq);
  const exp = ledger.expectedFunding(f);
  if (Number(a.available) !== exp.available || Number(a.reserved) !== exp.reserved) {
    ledger.violate(
      `funding account ${f.id}: available ${a.available} reserved ${a.reserved}; deposits and withdrawals in the ledger give ` +
        `${exp.available} and ${exp.reserved}`,
    );
  }
  let k = 0;
  for (const w of f.withdrawals) {
    const want = ledger.expectedStatus(w);
    if (!everyWithdrawal && w.epoch < ledger.epoch - 1 && want !== 'pending') continue;
    const c = link.client(f.keys[k++ % f.keys.length]!);
    const look = await definite(`withdrawal ${w.cwid}`, () => c.withdrawal(w.cwid));
    ledger.count('withdrawals_checked');
    if (want === null) {
      if (look.kind === 'ok') ledger.violate(`withdrawal ${w.cwid}: exists as wid ${look.body.wid} though its request ended ${w.state}`);
      continue;
    }
    if (look.kind !== 'ok') {
      ledger.violate(
        `acknowledged withdrawal ${w.cwid} (wid ${w.wid}, seq ${w.seq}) is missing after restart: ${look.kind} ` +
          `${'code' in look ? look.code : ''}`,
      );
      continue;
    }
    const l = look.body;
    if (l.wid !== w.wid || l.seq !== w.seq || l.amount !== String(w.amount) || l.destination !== w.destination || l.status !== want) {
      ledger.violate(
        `withdrawal ${w.cwid}: now ` +
          `${JSON.stringify({ wid: l.wid, seq: l.seq, amount: l.amount, destination: l.destination, status: l.status })}, ledger ` +
          `${JSON.stringify({ wid: w.wid, seq: w.seq, amount: String(w.amount), destination: w.destination, status: want })}`,
      );
    }
  }
}

/** Sum over every account (ids 1.. until unknown_account) and every market's open pairs. */
async function verifyConservation(ledger: Ledger, link: ExchangeLink): Promise<void> {
  const admin = link.admin();
  let cash = 0;
  let accounts = 0;
  for (let id = 1; ; id++) {
    const out = await attempt(() => admin.account(id));
    if (out.kind === 'rejected' && out.code === 'unknown_account') break;
    if (out.kind === 'refused' && out.status === 404) break;
    if (out.kind !== 'ok') throw new Error(`account ${id}: ${out.kind}`);
    cash += Number(out.body.available) + Number(out.body.reserved);
    accounts++;
  }
  const c = link.client(ledger.funding[0]!.keys[0]!);
  let pairs = 0;
  for (const m of ledger.markets) {
    const out = await definite(`market ${m}`, () => c.market(m));
    if (out.kind !== 'ok') throw new Error(`market ${m}: ${out.kind}`);
    pairs += Number(out.body.open_interest);
  }
  let deposits = 0;
  let confirmed = 0;
  for (const t of ledger.traders) deposits += t.deposit;
  for (const f of ledger.funding) {
    deposits += f.deposits;
    for (const w of f.withdrawals) if (ledger.expectedStatus(w) === 'confirmed') confirmed += w.amount;
  }
  ledger.count('conservation_checks');
  if (cash + 100 * pairs !== deposits - confirmed) {
    ledger.violate(
      `money: available + reserved over ${accounts} accounts (${cash}) + 100 x ${pairs} open pairs = ${cash + 100 * pairs}, but deposits ` +
        `${deposits} - confirmed withdrawals ${confirmed} = ${deposits - confirmed}`,
    );
  }
  if (accounts !== ledger.traders.length + ledger.funding.length)
    ledger.violate(`${accounts} accounts exist, the ledger created ${ledger.traders.length + ledger.funding.length}`);
}

function frozenView(a: AdminAccount): string {
  const pos = (a.positions ?? []).map((p) => `${p.market_id}:${p.outcome}:${p.free}:${p.reserved_for_sale}`).sort();
  return JSON.stringify({ available: a.available, reserved: a.reserved, deleted: a.deleted, positions: pos });
}

/** Every check after a restart; `full` also re-reads the accounts retired in earlier epochs and every withdrawal. */
export async function verify(ledger: Ledger, link: ExchangeLink, full: boolean): Promise<void> {
  const admin = link.admin();
  const h = await admin.health();
  if (Number(h.durable_seq) > Number(h.seq)) ledger.violate(`health: durable_seq ${h.durable_seq} > seq ${h.seq}`);
  for (const t of ledger.traders) {
    if (t.frozen !== null) {
      const a = await admin.account(t.id);
      if (frozenView(a) !== t.frozen) ledger.violate(`retired account ${t.id} changed: ${frozenView(a)}, was ${t.frozen}`);
      if (!full) continue;
    }
    await verifyTrader(ledger, link, t);
  }
  for (const f of ledger.funding) await verifyFunding(ledger, link, f, full);
  await verifyConservation(ledger, link);
}

/** Cancels every order of this epoch's traders and records their final state: it must never change again. */
export async function retire(ledger: Ledger, link: ExchangeLink, ts: Trader[]): Promise<void> {
  for (const t of ts) {
    const c = link.client(t.keys[0]!);
    const out = await definite(`cancel all ${t.id}`, () => c.cancelAll({}));
    if (out.kind !== 'ok') throw new Error(`cancel all of ${t.id}: ${out.kind}`);
    ledger.freshSeq(out.body.seq, `cancel all of ${t.id}`);
    t.massCancel = 'acked';
    const at = Number(out.body.seq);
    let a: AdminAccount;
    for (let i = 0; ; i++) {
      a = await link.admin().account(t.id);
      if (Number(a.as_of_seq) >= at) break;
      if (i > 50) throw new Error(`account ${t.id}: the control plane never reached seq ${at}`);
      await sleep(20);
    }
    if (a.reserved !== '0') ledger.violate(`account ${t.id}: reserved ${a.reserved} after cancel-all`);
    for (const p of a.positions ?? [])
      if (p.reserved_for_sale !== 0) ledger.violate(`account ${t.id}: ${p.reserved_for_sale} shares reserved for sale after cancel-all`);
    t.frozen = frozenView(a);
  }
}

function isRejectReason(reason: string): boolean {
  return (
    reason !== '' &&
    ![
      'user_canceled',
      'mass_canceled',
      'deadman',
      'expired',
      'decreased_to_zero',
      'round_frozen',
      'round_settled',
      'round_void',
      'post_only_cross',
      'fok_infeasible',
      'ioc_remainder',
      'self_trade_prevention',
      'max_cost_infeasible',
    ].includes(reason)
  );
}

function sameFills(acked: PlacementFill[], now: Fill[]): boolean {
  if (acked.length !== now.length) return false;
  const key = (f: { tick_yes: number; qty: number; path: string }): string => `${f.tick_yes}:${f.qty}:${f.path}`;
  const a = acked.map(key).sort();
  const b = now.map(key).sort();
  return a.every((x, i) => x === b[i]);
}
