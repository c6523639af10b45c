// ledger: the crash test's client-side record of everything it sent and
// every answer it got (orders, cancels, decreases, deposits, withdrawals and
// their operator actions), the highest seq, wid and account id any answer
// carried, and the floors those were at the last kill. An answer is applied
// here (on*), whether it came from a load lane or from a retry after a
// restart; the checks compare the restarted exchange against this record.
// Violations are collected here, never thrown. Main thread of the crash test.

import type { AdminClient } from '../../../src/client/admin_client.js';
import type { DxClient } from '../../../src/client/client.js';
import type { DxWebSocket } from '../../../src/client/websocket.js';
import type { OrderRequest, Placement } from '../../../src/client/types.js';
import type { Outcome } from './outcome.js';

export type OrderState = 'sent' | 'acked' | 'landed' | 'rejected' | 'refused' | 'uncertain' | 'absent';

export interface OrderRec {
  trader: Trader;
  coid: string;
  req: OrderRequest;
  /** The lane that placed it: REST or the WebSocket lane's JSON order entry. */
  via: 'rest' | 'ws';
  epoch: number;
  state: OrderState;
  /** The 2xx placement answer (the original one, or the retry's after a kill). */
  ack?: Placement;
  rejectCode?: string;
  order_id?: string;
  created_seq?: string;
  /** A cancel by id was sent (acked, refused, rejected or cut off). */
  cancelSent: boolean;
  cancelAck?: { seq: string; canceled_qty: number };
  cancelUncertain: boolean;
  /** Smallest acknowledged decrease target, and whether any decrease was sent. */
  decreaseSent: boolean;
  decreaseAck?: { new_qty: number; seq: string };
  decreaseUncertain?: number;
  /** Known terminal (a cancel answered unknown_order). */
  terminalSeen: boolean;
}

export interface Key {
  keyId: number;
  secret: string;
}

export interface Trader {
  id: number;
  epoch: number;
  deposit: number;
  keys: Key[];
  orders: OrderRec[];
  byCoid: Map<string, OrderRec>;
  /** Free shares per `${market}:${outcome}` as last read (a hint for sells). */
  free: Map<string, number>;
  massCancel: 'none' | 'acked';
  frozen: string | null;
}

export type WStatus = 'pending' | 'confirmed' | 'failed';

export interface WithdrawalRec {
  funding: Funding;
  cwid: string;
  amount: number;
  destination: string;
  epoch: number;
  state: 'acked' | 'landed' | 'rejected' | 'refused' | 'uncertain' | 'absent';
  wid?: string;
  seq?: string;
  action?: 'confirm' | 'fail';
  actionState?: 'acked' | 'rejected' | 'refused' | 'uncertain' | 'landed' | 'absent';
}

export interface Funding {
  id: number;
  keys: Key[];
  /** Deposits known to have landed (acknowledged, or resolved from the balance after a kill). */
  deposits: number;
  uncertainDeposits: { amount: number; ref: string; why: string }[];
  withdrawals: WithdrawalRec[];
  byCwid: Map<string, WithdrawalRec>;
}

/** The exchange that is running now, as the ledger's users reach it. */
export interface ExchangeLink {
  client(k: Key, timeoutMs?: number): DxClient;
  /** A WebSocket lane client of the current server (not connected; no reconnect: a kill ends it). */
  ws(k: Key): DxWebSocket;
  admin(timeoutMs?: number): AdminClient;
  /** The seq its start recovered (0 before the recovery line). */
  recoveredSeq(): number;
}

const VIOLATIONS_MAX = 200;

export class Ledger {
  readonly violations: string[] = [];
  readonly counts: Record<string, number> = {};
  markets: number[] = [];
  readonly traders: Trader[] = [];
  readonly funding: Funding[] = [];
  epoch = 0;
  depositRef = 0;
  /** Highest seq (or as_of_seq, order_id) any answer carried so far. */
  maxSeenSeq = 0;
  maxSeenWid = 0;
  maxSeenAccount = 0;
  /** Everything seen before the last kill: new seqs must be above it. */
  seqFloor = 0;
  widFloor = 0;
  accountFloor = 0;
  retention = { terminal_cap: 1000, reject_cap: 100, fill_cap: 1000 };
  private nextCoid: bigint;
  private nextCwid: bigint;

  constructor(seed: number) {
    // Client ids: distinct per run (the seed) and never reused within it.
    this.nextCoid = (BigInt(seed) << 24n) + 1n;
    this.nextCwid = (BigInt(seed) << 24n) + 1n;
  }

  count(name: string, n = 1): void {
    this.counts[name] = (this.counts[name] ?? 0) + n;
  }

  violate(msg: string): void {
    this.count('violations');
    if (this.violations.length < VIOLATIONS_MAX) this.violations.push(`[epoch ${this.epoch}] ${msg}`);
  }

  coid(): string {
    return String(this.nextCoid++);
  }

  cwid(): string {
    return String(this.nextCwid++);
  }

  /** Records a seq an answer carried. */
  seen(seq: string | number | undefined): void {
    if (seq === undefined) return;
    const n = Number(seq);
    if (n > this.maxSeenSeq) this.maxSeenSeq = n;
  }

  /** A seq acknowledged for a command sequenced after the last restart: must be above everything seen before the kill. */
  freshSeq(seq: string, what: string): void {
    this.seen(seq);
    if (Number(seq) <= this.seqFloor)
      this.violate(`${what}: acknowledged seq ${seq} is not above seq ${this.seqFloor} seen before the last kill`);
  }

  /** Applies a placement outcome to its ledger entry (also for retries after a kill). */
  onPlacement(rec: OrderRec, out: Outcome<Placement>): void {
    switch (out.kind) {
      case 'ok': {
        const p = out.body;
        rec.state = 'acked';
        rec.ack = p;
        rec.order_id = p.order_id;
        rec.created_seq = p.seq;
        this.freshSeq(p.seq, `placement ${rec.coid}`);
        if (p.order_id !== p.seq) this.violate(`placement ${rec.coid}: order_id ${p.order_id} differs from its seq ${p.seq}`);
        if (p.client_order_id !== rec.coid) this.violate(`placement ${rec.coid}: answer names client_order_id ${p.client_order_id}`);
        if (p.filled_qty + p.resting_qty > rec.req.qty)
          this.violate(`placement ${rec.coid}: filled ${p.filled_qty} + resting ${p.resting_qty} > qty ${rec.req.qty}`);
        if (p.fills.length > 0) this.count('fills_acked', p.fills.length);
        if (rec.req.side === 'buy' && p.filled_qty > 0) {
          const key = `${rec.req.market_id}:${rec.req.outcome}`;
          rec.trader.free.set(key, (rec.trader.free.get(key) ?? 0) + p.filled_qty);
        }
        return;
      }
      case 'rejected':
        rec.state = 'rejected';
        rec.rejectCode = out.code;
        if (out.code === 'duplicate_client_order_id') this.violate(`placement ${rec.coid}: refused as a duplicate on its first send`);
        return;
      case 'refused':
        rec.state = 'refused';
        return;
      case 'uncertain':
        rec.state = 'uncertain';
        return;
    }
  }

  onCancel(rec: OrderRec, out: Outcome<{ results: unknown[] }>): void {
    if (out.kind === 'uncertain') {
      rec.cancelUncertain = true;
      return;
    }
    if (out.kind !== 'ok') return;
    rec.cancelUncertain = false;
    const item = out.body.results[0] as { status?: string; canceled_qty?: number; seq?: string; error?: { code: string } };
    if (item.error !== undefined) {
      if (item.error.code === 'unknown_order') rec.terminalSeen = true;
      else if (item.error.code === 'sequencing_timeout') rec.cancelUncertain = true; // the item may still be sequenced
      else this.violate(`cancel of ${rec.order_id}: unexpected item error ${item.error.code}`);
      return;
    }
    rec.cancelAck = { seq: item.seq!, canceled_qty: item.canceled_qty! };
    this.freshSeq(item.seq!, `cancel of ${rec.order_id}`);
  }

  onDecrease(rec: OrderRec, target: number, out: Outcome<{ new_qty: number; seq: string }>): void {
    if (out.kind === 'uncertain') {
      rec.decreaseUncertain = target;
      return;
    }
    if (out.kind === 'rejected') {
      if (out.code === 'unknown_order') rec.terminalSeen = true;
      else this.violate(`decrease of ${rec.order_id}: unexpected reject ${out.code}`);
      return;
    }
    if (out.kind !== 'ok') return;
    rec.decreaseUncertain = undefined;
    this.freshSeq(out.body.seq, `decrease of ${rec.order_id}`);
    if (out.body.new_qty > target) this.violate(`decrease of ${rec.order_id} to ${target} answered new_qty ${out.body.new_qty}`);
    if (rec.decreaseAck === undefined || out.body.new_qty < rec.decreaseAck.new_qty)
      rec.decreaseAck = { new_qty: out.body.new_qty, seq: out.body.seq };
  }

  /** What a funding account can surely withdraw: landed deposits minus every request that may hold money. */
  availableLowerBound(f: Funding): number {
    let held = 0;
    for (const w of f.withdrawals) {
      if (w.state === 'rejected' || w.state === 'refused' || w.state === 'absent') continue;
      if (w.action === 'fail' && (w.actionState === 'acked' || w.actionState === 'landed')) continue;
      held += w.amount;
    }
    return f.deposits - held;
  }

  onWithdrawal(
    w: WithdrawalRec,
    out: Outcome<{ wid: string; seq: string; status: string; client_withdrawal_id: string }>,
    retryOfLanded: boolean,
  ): void {
    switch (out.kind) {
      case 'ok': {
        const b = out.body;
        if (b.client_withdrawal_id !== w.cwid) this.violate(`withdrawal ${w.cwid}: answer names ${b.client_withdrawal_id}`);
        if (!retryOfLanded) {
          if (b.status !== 'pending') this.violate(`withdrawal ${w.cwid}: new request answered status ${b.status}`);
          this.freshSeq(b.seq, `withdrawal ${w.cwid}`);
          if (Number(b.wid) <= this.widFloor)
            this.violate(`withdrawal ${w.cwid}: wid ${b.wid} is not above wid ${this.widFloor} seen before the last kill`);
          w.state = 'acked';
          w.wid = b.wid;
          w.seq = b.seq;
        }
        if (Number(b.wid) > this.maxSeenWid) this.maxSeenWid = Number(b.wid);
        return;
      }
      case 'rejected':
        w.state = 'rejected';
        this.violate(`withdrawal ${w.cwid} of ${w.amount}: rejected ${out.code} (the lane only asks for what is surely available)`);
        return;
      case 'refused':
        w.state = 'refused';
        return;
      case 'uncertain':
        w.state = 'uncertain';
        return;
    }
  }

  onSettle(w: WithdrawalRec, out: Outcome<{ status: string; seq: string }>): void {
    switch (out.kind) {
      case 'ok':
        w.actionState = 'acked';
        this.freshSeq(out.body.seq, `${w.action} of withdrawal ${w.wid}`);
        if (out.body.status !== (w.action === 'confirm' ? 'confirmed' : 'failed'))
          this.violate(`${w.action} of withdrawal ${w.wid} answered status ${out.body.status}`);
        return;
      case 'rejected':
        w.actionState = 'rejected';
        this.violate(`${w.action} of pending withdrawal ${w.wid}: rejected ${out.code}`);
        return;
      case 'refused':
        w.actionState = 'refused';
        w.action = undefined;
        return;
      case 'uncertain':
        w.actionState = 'uncertain';
        return;
    }
  }

  /** The status a withdrawal must have, from the ledger alone. */
  expectedStatus(w: WithdrawalRec): WStatus | null {
    if (w.state !== 'acked' && w.state !== 'landed') return null;
    if (w.action !== undefined && (w.actionState === 'acked' || w.actionState === 'landed'))
      return w.action === 'confirm' ? 'confirmed' : 'failed';
    return 'pending';
  }

  /** Funding accounts never trade: their cash is exactly deposits minus what withdrawals hold or took. */
  expectedFunding(f: Funding): { available: number; reserved: number } {
    let pending = 0;
    let confirmed = 0;
    for (const w of f.withdrawals) {
      const s = this.expectedStatus(w);
      if (s === 'pending') pending += w.amount;
      else if (s === 'confirmed') confirmed += w.amount;
    }
    return { available: f.deposits - pending - confirmed, reserved: pending };
  }

  /** A new account id: above every id seen before the last kill. */
  freshAccount(id: number): void {
    if (id <= this.accountFloor) this.violate(`new account id ${id} is not above ${this.accountFloor} seen before the last kill`);
    if (id > this.maxSeenAccount) this.maxSeenAccount = id;
  }

  /** The exchange stopped (killed or stopped): whatever it serves next must keep everything seen so far. */
  raiseFloors(): void {
    this.seqFloor = this.maxSeenSeq;
    this.widFloor = this.maxSeenWid;
    this.accountFloor = this.maxSeenAccount;
  }
}
