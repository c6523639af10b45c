// resolve: after a restart, settles every command a kill cut off (no
// answer, a timeout or a 504) by looking it up on the restarted exchange and
// retrying it, and checks that the retry applies at most once: a placement
// that had landed must be refused 409 duplicate_client_order_id naming the
// same order, one that had not must land now; a withdrawal that had landed
// must answer the same wid and seq; an operator confirm/fail that had landed
// must be refused as unknown_withdrawal; an interrupted deposit is found
// landed or not from the exact balance, then retried with its ref, which must
// credit exactly the ones that had not landed.
// Main thread of the crash test.

import type { DxClient } from '../../../src/client/client.js';
import type { Order } from '../../../src/client/types.js';
import type { ExchangeLink, Funding, Ledger, OrderRec, WithdrawalRec } from './ledger.js';
import { definite } from './outcome.js';

/** Resolves every uncertain placement, cancel, decrease, withdrawal, operator action and deposit of the ledger. */
export async function resolveCutOff(ledger: Ledger, link: ExchangeLink): Promise<void> {
  for (const t of ledger.traders) {
    const c = link.client(t.keys[0]!);
    for (const rec of t.orders) {
      if (rec.state === 'uncertain' || rec.state === 'sent') await resolvePlacement(ledger, link, c, rec);
      if (rec.cancelUncertain) {
        const out = await definite(`cancel retry ${rec.order_id}`, () => c.cancelBatch([rec.order_id!]));
        ledger.count('cancel_retried');
        ledger.onCancel(rec, out);
      }
      if (rec.decreaseUncertain !== undefined) {
        const target = rec.decreaseUncertain;
        const out = await definite(`decrease retry ${rec.order_id}`, () => c.decrease(rec.order_id!, target));
        ledger.count('decrease_retried');
        ledger.onDecrease(rec, target, out);
        rec.decreaseUncertain = undefined;
      }
    }
  }
  for (const f of ledger.funding) {
    for (const w of f.withdrawals) {
      if (w.state === 'uncertain') await resolveWithdrawal(ledger, link, f, w);
      if (w.actionState === 'uncertain') await resolveSettle(ledger, link, w);
    }
  }
  await resolveDeposits(ledger, link);
}

async function lookup(ledger: Ledger, c: DxClient, coid: string): Promise<Order[]> {
  const out = await definite(`lookup ${coid}`, () => c.orders({ client_order_id: coid }));
  if (out.kind !== 'ok') throw new Error(`lookup of client_order_id ${coid}: ${out.kind} ${'code' in out ? out.code : ''}`);
  ledger.seen(out.body.as_of_seq);
  return out.body.orders;
}

async function resolvePlacement(ledger: Ledger, link: ExchangeLink, c: DxClient, rec: OrderRec): Promise<void> {
  ledger.count('place_uncertain_resolved');
  const before = await lookup(ledger, c, rec.coid);
  if (before.length > 1) ledger.violate(`client_order_id ${rec.coid}: ${before.length} orders hold it`);
  const found = before[0];
  const retry = await definite(`placement retry ${rec.coid}`, () => c.placeOrder(rec.req));
  if (found !== undefined) {
    ledger.count('place_uncertain_had_landed');
    rec.state = 'landed';
    rec.order_id = found.order_id;
    rec.created_seq = found.created_seq;
    if (Number(found.created_seq) > ledger.seqFloor && ledger.seqFloor > 0) {
      // Sequenced before the kill, so it cannot be above what the recovery reached.
      const rs = link.recoveredSeq();
      if (Number(found.created_seq) > rs)
        ledger.violate(`client_order_id ${rec.coid}: landed at seq ${found.created_seq}, above the recovered seq ${rs}`);
    }
    if (retry.kind !== 'rejected' || retry.code !== 'duplicate_client_order_id') {
      ledger.violate(
        `client_order_id ${rec.coid} had landed as order ${found.order_id} but its retry answered ` +
          `${retry.kind}${retry.kind === 'ok' ? ` order ${retry.body.order_id}` : ` ${'code' in retry ? retry.code : ''}`} instead of ` +
          `409 duplicate_client_order_id`,
      );
    } else if (String(retry.details?.order_id) !== found.order_id) {
      ledger.violate(
        `client_order_id ${rec.coid}: duplicate refusal names order ${String(retry.details?.order_id)}, the lookup found ${found.order_id}`,
      );
    }
  } else {
    ledger.count('place_uncertain_had_not_landed');
    if (retry.kind === 'rejected' && retry.code === 'duplicate_client_order_id') {
      ledger.violate(
        `client_order_id ${rec.coid}: the lookup found no order but the retry was refused as a duplicate of ` +
          `${String(retry.details?.order_id)}`,
      );
    }
    ledger.onPlacement(rec, retry);
    if (rec.state === 'refused')
      throw new Error(`placement retry ${rec.coid} refused: ${retry.kind === 'refused' ? `${retry.status} ${retry.code}` : ''}`);
  }
  const after = await lookup(ledger, c, rec.coid);
  const expect = rec.state === 'acked' || rec.state === 'landed' || rec.state === 'rejected' ? 1 : 0;
  if (after.length !== expect)
    ledger.violate(
      `client_order_id ${rec.coid}: ${after.length} orders after the retry, expected ${expect} (applied ` +
        `${after.length > 1 ? 'more than once' : 'not at all'})`,
    );
  else if (expect === 1 && rec.order_id !== undefined && after[0]!.order_id !== rec.order_id) {
    ledger.violate(`client_order_id ${rec.coid}: order ${after[0]!.order_id} after the retry, expected ${rec.order_id}`);
  }
}

async function resolveWithdrawal(ledger: Ledger, link: ExchangeLink, f: Funding, w: WithdrawalRec): Promise<void> {
  ledger.count('withdraw_uncertain_resolved');
  const c = link.client(f.keys[0]!);
  const look = await definite(`withdrawal lookup ${w.cwid}`, () => c.withdrawal(w.cwid));
  const body = { client_withdrawal_id: w.cwid, amount: String(w.amount), destination: w.destination };
  if (look.kind === 'ok') {
    ledger.count('withdraw_uncertain_had_landed');
    const l = look.body;
    if (l.amount !== String(w.amount) || l.destination !== w.destination)
      ledger.violate(`withdrawal ${w.cwid}: landed with amount ${l.amount} to ${l.destination}, sent ${w.amount} to ${w.destination}`);
    if (l.status !== 'pending') ledger.violate(`withdrawal ${w.cwid}: nobody confirmed or failed it, yet it is ${l.status}`);
    w.state = 'landed';
    w.wid = l.wid;
    w.seq = l.seq;
    const retry = await definite(`withdrawal retry ${w.cwid}`, () => c.withdraw(body));
    if (retry.kind !== 'ok' || retry.body.wid !== l.wid || retry.body.seq !== l.seq) {
      ledger.violate(
        `withdrawal ${w.cwid} had landed as wid ${l.wid} (seq ${l.seq}) but its retry answered ` +
          `${retry.kind === 'ok' ? `wid ${retry.body.wid} seq ${retry.body.seq}` : `${retry.kind} ${'code' in retry ? retry.code : ''}`}`,
      );
    }
    if (retry.kind === 'ok') ledger.onWithdrawal(w, retry, true);
  } else if (look.kind === 'refused' && look.status === 404) {
    ledger.count('withdraw_uncertain_had_not_landed');
    const retry = await definite(`withdrawal retry ${w.cwid}`, () => c.withdraw(body));
    ledger.onWithdrawal(w, retry, false);
  } else {
    throw new Error(`withdrawal lookup ${w.cwid}: ${look.kind} ${'code' in look ? look.code : ''}`);
  }
}

async function resolveSettle(ledger: Ledger, link: ExchangeLink, w: WithdrawalRec): Promise<void> {
  ledger.count(`${w.action}_uncertain_resolved`);
  const c = link.client(w.funding.keys[0]!);
  const look = await definite(`withdrawal lookup ${w.cwid}`, () => c.withdrawal(w.cwid));
  if (look.kind !== 'ok') throw new Error(`withdrawal ${w.cwid} (wid ${w.wid}) not found while resolving its ${w.action}`);
  const admin = link.admin();
  const again = () => (w.action === 'confirm' ? admin.confirmWithdrawal(w.wid!) : admin.failWithdrawal(w.wid!));
  const want = w.action === 'confirm' ? 'confirmed' : 'failed';
  if (look.body.status === 'pending') {
    ledger.count(`${w.action}_uncertain_had_not_landed`);
    const out = await definite(`${w.action} retry ${w.wid}`, again);
    ledger.onSettle(w, out);
  } else {
    ledger.count(`${w.action}_uncertain_had_landed`);
    if (look.body.status !== want) ledger.violate(`withdrawal ${w.wid}: ${w.action} was sent, it is ${look.body.status}`);
    w.actionState = 'landed';
    const out = await definite(`${w.action} retry ${w.wid}`, again);
    if (out.kind !== 'rejected' || out.code !== 'unknown_withdrawal')
      ledger.violate(
        `withdrawal ${w.wid}: a second ${w.action} answered ${out.kind} ${'code' in out ? out.code : ''}, not unknown_withdrawal`,
      );
  }
}

async function resolveDeposits(ledger: Ledger, link: ExchangeLink): Promise<void> {
  for (const f of ledger.funding) {
    if (f.uncertainDeposits.length === 0) continue;
    const a = await link.admin().account(f.id);
    const exp = ledger.expectedFunding(f);
    const diff = Number(a.available) - exp.available;
    // Which subset of the interrupted deposits explains the difference (one lane: at most one per kill).
    const u = f.uncertainDeposits;
    let match = -1;
    for (let mask = 0; mask < 1 << u.length; mask++) {
      let sum = 0;
      for (let i = 0; i < u.length; i++) if (mask & (1 << i)) sum += u[i]!.amount;
      if (sum === diff) {
        match = mask;
        break;
      }
    }
    if (match < 0) {
      ledger.violate(
        `funding account ${f.id}: available ${a.available} differs from the ledger's ${exp.available} by ${diff}, which no subset of the ` +
          `interrupted deposits (${u.map((x) => x.amount).join(', ')}) explains`,
      );
    } else {
      for (let i = 0; i < u.length; i++) {
        if (match & (1 << i)) {
          f.deposits += u[i]!.amount;
          ledger.count('deposit_uncertain_had_landed');
        } else ledger.count('deposit_uncertain_had_not_landed');
      }
    }
    await retryDeposits(ledger, link, f, Number(a.available), Number(a.as_of_seq), match < 0 ? null : diff);
  }
}

/**
 * Retries every interrupted deposit of f with its ref: each must then be
 * credited exactly once (one that had landed is not credited again and
 * answers a seq the exchange had shown before the retries, at or below
 * `asOf`; one that had not is credited now), so available must grow by the
 * ones the balance showed as not landed.
 */
async function retryDeposits(
  ledger: Ledger,
  link: ExchangeLink,
  f: Funding,
  before: number,
  asOf: number,
  landed: number | null,
): Promise<void> {
  const admin = link.admin();
  let credited = 0;
  for (const d of f.uncertainDeposits) {
    const out = await definite(`deposit retry ${d.ref}`, () => admin.deposit(f.id, { amount: String(d.amount), ref: d.ref }));
    ledger.count('deposit_retried');
    if (out.kind !== 'ok') {
      ledger.violate(`deposit ${d.ref} to ${f.id}: its retry answered ${out.kind} ${'code' in out ? out.code : ''}`);
      continue;
    }
    if (Number(out.body.seq) > asOf) {
      credited += d.amount;
      ledger.freshSeq(out.body.seq, `deposit retry ${d.ref}`);
    } else ledger.seen(out.body.seq);
  }
  const all = f.uncertainDeposits.reduce((n, d) => n + d.amount, 0);
  if (landed !== null && credited !== all - landed) {
    const missing = all - landed;
    ledger.violate(`funding account ${f.id}: the retries credited ${credited}, but ${missing} of its interrupted deposits had not landed`);
  }
  const after = Number((await admin.account(f.id)).available);
  if (after - before !== credited) {
    ledger.violate(
      `funding account ${f.id}: retrying its interrupted deposits (${f.uncertainDeposits.map((x) => `${x.ref} ${x.amount}`).join(', ')}) ` +
        `moved available by ${after - before}, the retries' answers say ${credited}`,
    );
  }
  f.deposits += credited;
  f.uncertainDeposits = [];
}
