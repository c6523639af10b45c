// Accounts: cash (available, reserved), positions per (account, market,
// outcome), keys, withdrawals, fee schedules and the exchange's money totals.
// Engine thread and gateway read models (the same evolve writes both).
// Invariants (checked by engine/verify.ts): no negative cash or shares;
// reserved == open buy reservations + pending withdrawals; reserved_for_sale
// == open sell quantity; sum(cash) + 100 x open pairs + fees_collected ==
// deposits - confirmed withdrawals. The movement helpers below assert the
// cheap half of that at every step (a reservation covers what it releases,
// no count goes negative); verify.ts recomputes the rest.

import * as assertModule from '../lib/assert.js';
import { assert } from '../lib/assert.js';
import * as growModule from '../lib/grow.js';
import { IdIndex } from '../lib/id_index.js';
import * as intrusiveListModule from '../lib/intrusive_list.js';
import { U32x3Map } from '../lib/u32x3_map.js';

// The imports the hot paths use, as module constants: V8 (Node 20) loads an
// imported binding from its module cell and checks it for the temporal dead
// zone at every use, even in optimized code, where a module const folds to a
// constant (docs/engine-performance.md, "Imported bindings").
const { fail } = assertModule;
const { grown, nextCapacity } = growModule;
const { NIL, popHeadSingly, pushTail, pushTailSingly, unlink } = intrusiveListModule;

/** The deposit ref index's key: the account's digits, a NUL (never in a ref), the ref. */
function depositRefKey(account: number, ref: string): string {
  return `${account}\u0000${ref}`;
}

/** 32-bit words of a bit set over account ids 0..capacity-1 (retainedBits). */
function bitWords(capacity: number): number {
  return (capacity >>> 5) + 1;
}

export class Accounts {
  /** Accounts ever created; ids are 1..count. */
  count = 0;
  private capacity = 0;
  available = new Float64Array(0);
  reserved = new Float64Array(0);
  deleted = new Uint8Array(0);
  // Order lists per account (slots in OrderSlab): live in ascending order_id,
  // terminal and rejected in the order they became so (oldest first).
  liveHead = new Int32Array(0);
  liveTail = new Int32Array(0);
  termHead = new Int32Array(0);
  termTail = new Int32Array(0);
  termCount = new Uint32Array(0);
  rejHead = new Int32Array(0);
  rejTail = new Int32Array(0);
  rejCount = new Uint32Array(0);
  /**
   * One bit per account (bit a & 31 of word a >>> 5): set while the account
   * retains ended orders (terminal or rejected), for the eviction at
   * max_orders (apply.ts makeRoom), which looks for such an account.
   */
  retainedBits = new Uint32Array(0);
  // Dead-man timer.
  deadArmed = new Uint8Array(0);
  deadTimeoutMs = new Uint32Array(0);
  deadHi = new Uint32Array(0);
  deadLo = new Uint32Array(0);
  // Per account: the market and position slot of its last lookup (0 = none).
  lastPosMarket = new Uint32Array(0);
  lastPosSlot = new Int32Array(0);
  // Per account: its keys (rows linked by keyNext) and its revoked keys, oldest revoked first (keyRevLink).
  keyHead = new Int32Array(0);
  keyTail = new Int32Array(0);
  kRevHead = new Int32Array(0);
  kRevTail = new Int32Array(0);
  kRevCount = new Uint32Array(0);
  // Per account: its finished withdrawals, oldest first (rows linked by wLink).
  wFinHead = new Int32Array(0);
  wFinTail = new Int32Array(0);
  wFinCount = new Uint32Array(0);
  // Per account: its remembered deposit refs, oldest first (rows linked by dLink).
  dHead = new Int32Array(0);
  dTail = new Int32Array(0);
  dCount = new Uint32Array(0);

  // Positions: slot per (account, market); outcome o at [2 * slot + o].
  posIndex: U32x3Map;
  posCount = 0;
  private posCapacity = 0;
  pAccount = new Uint32Array(0);
  pMarket = new Uint32Array(0);
  pFree = new Float64Array(0);
  pReserved = new Float64Array(0);
  pBuying = new Float64Array(0);
  /** Next position slot of the same market (for settlement), NIL-terminated. */
  pNextInMarket = new Int32Array(0);
  marketPosHead = new Int32Array(0);

  // Keys, in reused rows: each account keeps its live keys and its newest
  // revoked_key_cap revoked ones (in the order they were revoked); an evicted
  // key is unknown (authentication refuses it as it refuses a revoked one).
  // Per account the keys form a list in ascending key_id (keyHead, keyNext,
  // keyPrev); the revoked ones also a queue (kRev*, keyRevLink). Rows in use
  // <= live keys + accounts x revoked_key_cap. The row is also the key's
  // index in the gateways' per-key tables (token buckets, WebSocket counts),
  // which a key id, growing with every key ever created, could not be.
  /** Key ids issued (the last key_id). */
  keyCount = 0;
  /** Rows holding a key. */
  keyRows = 0;
  /** Rows ever used: 0..keyTop-1 exist. */
  keyTop = 0;
  private keyCapacity = 0;
  private keyFree = NIL;
  /** key_id per row; 0 = a free row. */
  keyId = new Float64Array(0);
  keyAccount = new Uint32Array(0);
  keyScopes = new Uint8Array(0);
  keyRevoked = new Uint8Array(0);
  /** 32 bytes per row. */
  keySecret = new Uint8Array(0);
  keyLabel: string[] = [];
  /** The account's key list (ascending key_id), doubly linked; keyNext also links the free rows. */
  keyNext = new Int32Array(0);
  keyPrev = new Int32Array(0);
  /** Next revoked key of the same account, in revocation order. */
  keyRevLink = new Int32Array(0);
  /** key_id -> row of known (live or retained revoked) keys. */
  readonly keyIndex = new IdIndex(64);
  /** Rate tier (RateTier) per key row; 0 = default (a reused row starts at 0). */
  keyTier = new Uint8Array(0);
  /** Custom tier figures per key row at [4 * row]: read rate, read burst, write rate, write burst (0 for named tiers). */
  keyFigures = new Uint32Array(0);

  // Withdrawals, in reused rows: each account keeps its pending withdrawals
  // and its newest withdrawal_cap finished ones (in the order they finished,
  // wFin* per account); an evicted one frees its row, its wid and its
  // client_withdrawal_id (a later request with that id is a new withdrawal).
  // Rows in use <= pending + accounts x withdrawal_cap. Only evolve changes
  // rows, in event order, so every fold reuses the same rows.
  /** Wids issued (the last wid). */
  withdrawalCount = 0;
  /** Rows holding a withdrawal. */
  withdrawalRows = 0;
  /** Rows ever used: 0..wTop-1 exist. */
  wTop = 0;
  private wCapacity = 0;
  private wFree = NIL;
  /** wid per row; 0 = a free row. */
  wWid = new Float64Array(0);
  /** Next row in the free list or in the account's finished queue, NIL at the end. */
  wLink = new Int32Array(0);
  /** wid -> row of retained withdrawals. */
  readonly widIndex = new IdIndex(64);
  wAccount = new Uint32Array(0);
  wAmount = new Float64Array(0);
  wStatus = new Uint8Array(0);
  wCwidHi = new Uint32Array(0);
  wCwidLo = new Uint32Array(0);
  wDestination: string[] = [];
  wSeq = new Float64Array(0);
  cwidIndex = new U32x3Map(256);

  // Deposit refs, in reused rows: each account remembers the refs of its
  // newest deposit_ref_cap deposits made with a ref (oldest forgotten first),
  // so a deposit retried with its ref is credited once. Rows in use <=
  // accounts x deposit_ref_cap. Only evolve changes rows, in event order.
  /**
   * depositRefKey(account, ref) -> row: derived from the rows (dKey), so not
   * stored (not enumerable: snapshots and the state hash leave it out) and
   * rebuilt when a snapshot is decoded (upgradeDecoded).
   */
  declare readonly depositRefIndex: Map<string, number>;
  private dTop = 0;
  private dCapacity = 0;
  private dFree = NIL;
  /** Next row in the free list or in the account's queue, NIL at the end. */
  dLink = new Int32Array(0);
  dAmount = new Float64Array(0);
  /** The seq of the Deposited event. */
  dSeq = new Float64Array(0);
  dKey: string[] = [];

  // Fee schedules: ids 1..feeCount (0 = no fees).
  feeCount = 0;
  feeTaker = new Uint16Array(16);
  feeMaker = new Uint16Array(16);

  // Money totals.
  deposits = 0;
  withdrawn = 0;
  feesCollected = 0;

  constructor(accountCapacity: number, positionCapacity: number) {
    Object.defineProperty(this, 'depositRefIndex', { writable: false, enumerable: false, configurable: false, value: new Map() });
    // The map doubles past half full: twice the positions expected.
    this.posIndex = new U32x3Map(Math.max(1024, 2 * positionCapacity));
    this.ensureAccounts(accountCapacity);
    this.ensurePositions(positionCapacity);
    this.ensureKeys(accountCapacity);
    this.ensureWithdrawals(64);
  }

  /** Marks account a as retaining ended orders (see retainedBits). */
  markRetaining(a: number): void {
    this.retainedBits[a >>> 5] = this.retainedBits[a >>> 5]! | (1 << (a & 31));
  }

  /** Account a retains no ended order any more. */
  unmarkRetaining(a: number): void {
    this.retainedBits[a >>> 5] = this.retainedBits[a >>> 5]! & ~(1 << (a & 31));
  }

  /** The first account from `start` on (then from 1, wrapping) that retains ended orders; 0 if none does. */
  retainingFrom(start: number): number {
    const bits = this.retainedBits;
    const last = this.count >>> 5;
    const first = start >>> 5;
    // The start word without the accounts below start, then the words after it, then from word 0 up to and with it.
    let w = first;
    let word = bits[w]! & (~0 << (start & 31));
    for (let i = 0; i <= last + 1; i++) {
      // Only accounts 1..count ever have their bit set.
      if (word !== 0) return (w << 5) | (31 - Math.clz32(word & -word));
      w = w >= last ? 0 : w + 1;
      word = bits[w]!;
    }
    return 0;
  }

  /**
   * A decoded snapshot's derived fields: the deposit ref index from the rows;
   * retainedBits, in snapshots written before it (decoded as null, in its
   * place: state_codec), from the retention counts.
   */
  static upgradeDecoded(x: Accounts): void {
    const index = new Map<string, number>();
    for (let a = 1; a <= x.count; a++) for (let d = x.dHead[a]!; d !== NIL; d = x.dLink[d]!) index.set(x.dKey[d]!, d);
    Object.defineProperty(x, 'depositRefIndex', { writable: false, enumerable: false, configurable: false, value: index });
    if (x.retainedBits !== null) return;
    x.retainedBits = new Uint32Array(bitWords(x.capacity));
    for (let a = 1; a <= x.count; a++) if (x.termCount[a]! + x.rejCount[a]! > 0) x.markRetaining(a);
  }

  isLive(account: number): boolean {
    return account >= 1 && account <= this.count && this.deleted[account] === 0;
  }

  ensureAccounts(n: number): void {
    if (n < this.capacity) return;
    const cap = nextCapacity(this.capacity, n + 1);
    this.available = grown(this.available, cap);
    this.reserved = grown(this.reserved, cap);
    this.deleted = grown(this.deleted, cap);
    this.liveHead = grown(this.liveHead, cap, NIL);
    this.liveTail = grown(this.liveTail, cap, NIL);
    this.termHead = grown(this.termHead, cap, NIL);
    this.termTail = grown(this.termTail, cap, NIL);
    this.termCount = grown(this.termCount, cap);
    this.rejHead = grown(this.rejHead, cap, NIL);
    this.rejTail = grown(this.rejTail, cap, NIL);
    this.rejCount = grown(this.rejCount, cap);
    this.retainedBits = grown(this.retainedBits, bitWords(cap));
    this.deadArmed = grown(this.deadArmed, cap);
    this.deadTimeoutMs = grown(this.deadTimeoutMs, cap);
    this.deadHi = grown(this.deadHi, cap);
    this.deadLo = grown(this.deadLo, cap);
    this.lastPosMarket = grown(this.lastPosMarket, cap);
    this.lastPosSlot = grown(this.lastPosSlot, cap);
    this.keyHead = grown(this.keyHead, cap, NIL);
    this.keyTail = grown(this.keyTail, cap, NIL);
    this.kRevHead = grown(this.kRevHead, cap, NIL);
    this.kRevTail = grown(this.kRevTail, cap, NIL);
    this.kRevCount = grown(this.kRevCount, cap);
    this.wFinHead = grown(this.wFinHead, cap, NIL);
    this.wFinTail = grown(this.wFinTail, cap, NIL);
    this.wFinCount = grown(this.wFinCount, cap);
    this.dHead = grown(this.dHead, cap, NIL);
    this.dTail = grown(this.dTail, cap, NIL);
    this.dCount = grown(this.dCount, cap);
    this.capacity = cap;
  }

  ensureMarkets(n: number): void {
    if (n < this.marketPosHead.length) return;
    this.marketPosHead = grown(this.marketPosHead, nextCapacity(this.marketPosHead.length, n + 1), NIL);
  }

  private ensurePositions(n: number): void {
    if (n < this.posCapacity) return;
    const cap = nextCapacity(this.posCapacity, n + 1);
    this.pAccount = grown(this.pAccount, cap);
    this.pMarket = grown(this.pMarket, cap);
    this.pFree = grown(this.pFree, cap * 2);
    this.pReserved = grown(this.pReserved, cap * 2);
    this.pBuying = grown(this.pBuying, cap * 2);
    this.pNextInMarket = grown(this.pNextInMarket, cap, NIL);
    this.posCapacity = cap;
  }

  /** The position slot of (account, market), or -1 when the account never had one. */
  findPosition(account: number, market: number): number {
    // Position slots never move, so each account's last (market, slot) is a
    // safe cache: a trader mostly places in the market it just traded.
    if (this.lastPosMarket[account] === market) return this.lastPosSlot[account]!;
    const p = this.posIndex.get(account, market, 0);
    if (p >= 0) {
      this.lastPosMarket[account] = market;
      this.lastPosSlot[account] = p;
    }
    return p;
  }

  /** The position slot of (account, market), created empty when missing. */
  position(account: number, market: number): number {
    let p = this.findPosition(account, market);
    if (p >= 0) return p;
    p = this.posCount++;
    this.ensurePositions(p + 1);
    this.ensureMarkets(market);
    this.pAccount[p] = account;
    this.pMarket[p] = market;
    this.pNextInMarket[p] = this.marketPosHead[market]!;
    this.marketPosHead[market] = p;
    this.posIndex.set(account, market, 0, p);
    this.lastPosMarket[account] = market;
    this.lastPosSlot[account] = p;
    return p;
  }

  // ---- cash and share movements (evolve's order and withdrawal events) ------

  /** Moves `amount` from a's available cash to reserved (an order's or a withdrawal's reservation). */
  reserveCash(a: number, amount: number): void {
    const left = this.available[a]! - amount;
    if (!(left >= 0)) fail('accounts: a reservation exceeds available cash');
    this.available[a] = left;
    this.reserved[a] = this.reserved[a]! + amount;
  }

  /** Takes `release` out of a's reserved cash, pays `cost` out of it and returns the rest to available. */
  releaseCash(a: number, release: number, cost: number): void {
    const left = this.reserved[a]! - release;
    if (!(left >= 0)) fail('accounts: a release exceeds the reserved cash');
    if (!(cost <= release)) fail('accounts: a payment exceeds the reservation released for it');
    this.reserved[a] = left;
    this.available[a] = this.available[a]! + release - cost;
  }

  /** Moves q shares of position entry k from free to reserved_for_sale (a sell order). */
  reserveShares(k: number, q: number): void {
    const left = this.pFree[k]! - q;
    if (!(left >= 0)) fail('accounts: a sell reserves more shares than are free');
    this.pFree[k] = left;
    this.pReserved[k] = this.pReserved[k]! + q;
  }

  /** Takes q shares out of reserved_for_sale of entry k; `toFree` returns them to free (a cancel), else they are sold. */
  releaseShares(k: number, q: number, toFree: boolean): void {
    const left = this.pReserved[k]! - q;
    if (!(left >= 0)) fail('accounts: a release exceeds the shares reserved for sale');
    this.pReserved[k] = left;
    if (toFree) this.pFree[k] = this.pFree[k]! + q;
  }

  /** Open buy quantity of entry k changes by dq (+ on accept, - on fill, cancel or decrease). */
  addBuying(k: number, dq: number): void {
    const v = this.pBuying[k]! + dq;
    if (!(v >= 0)) fail('accounts: open buy quantity went negative');
    this.pBuying[k] = v;
  }

  /** A row for the new key id of account, at the end of its key list (evolve only). */
  addKey(id: number, account: number): number {
    assert(id === this.keyCount + 1, 'accounts: key ids are consecutive');
    let k = this.keyFree;
    if (k !== NIL) {
      this.keyFree = this.keyNext[k]!;
    } else {
      k = this.keyTop++;
      this.ensureKeys(k + 1);
    }
    this.keyId[k] = id;
    this.keyAccount[k] = account;
    this.keyRevoked[k] = 0;
    this.keyTier[k] = 0;
    this.keyFigures.fill(0, k * 4, k * 4 + 4);
    this.keyRevLink[k] = NIL;
    pushTail(this.keyHead, this.keyTail, this.keyPrev, this.keyNext, account, k);
    this.keyCount = id;
    this.keyRows++;
    this.keyIndex.set(id, k);
    return k;
  }

  /** The row of a known key (live or retained revoked), -1 when unknown or evicted. */
  keyRow(id: number): number {
    return id >= 1 && Number.isSafeInteger(id) ? this.keyIndex.get(id) : -1;
  }

  /**
   * Revokes the key in row k: it joins its account's revoked queue, and that
   * account's oldest revoked keys beyond `cap` are evicted (evolve only).
   */
  revokeKey(k: number, cap: number): void {
    const a = this.keyAccount[k]!;
    this.keyRevoked[k] = 1;
    pushTailSingly(this.kRevHead, this.kRevTail, this.keyRevLink, a, k);
    this.kRevCount[a] = this.kRevCount[a]! + 1;
    while (this.kRevCount[a]! > cap) {
      const old = popHeadSingly(this.kRevHead, this.kRevTail, this.keyRevLink, a);
      this.kRevCount[a] = this.kRevCount[a]! - 1;
      // Out of the account's key list, the index, and into the free rows.
      unlink(this.keyHead, this.keyTail, this.keyPrev, this.keyNext, a, old);
      this.keyIndex.delete(this.keyId[old]!);
      this.keyId[old] = 0;
      this.keySecret.fill(0, old * 32, old * 32 + 32);
      this.keyLabel[old] = '';
      this.keyNext[old] = this.keyFree;
      this.keyFree = old;
      this.keyRows--;
    }
  }

  ensureKeys(n: number): void {
    if (n < this.keyCapacity) return;
    const cap = nextCapacity(this.keyCapacity, n + 1);
    this.keyId = grown(this.keyId, cap);
    this.keyNext = grown(this.keyNext, cap, NIL);
    this.keyPrev = grown(this.keyPrev, cap, NIL);
    this.keyRevLink = grown(this.keyRevLink, cap, NIL);
    this.keyAccount = grown(this.keyAccount, cap);
    this.keyScopes = grown(this.keyScopes, cap);
    this.keyRevoked = grown(this.keyRevoked, cap);
    this.keySecret = grown(this.keySecret, cap * 32);
    this.keyTier = grown(this.keyTier, cap);
    this.keyFigures = grown(this.keyFigures, cap * 4);
    this.keyCapacity = cap;
  }

  /** A row for the new withdrawal wid of account (evolve only). */
  addWithdrawal(wid: number, account: number): number {
    assert(wid === this.withdrawalCount + 1, 'accounts: wids are consecutive');
    let w = this.wFree;
    if (w !== NIL) {
      this.wFree = this.wLink[w]!;
    } else {
      w = this.wTop++;
      this.ensureWithdrawals(w + 1);
    }
    this.wWid[w] = wid;
    this.wLink[w] = NIL;
    this.wAccount[w] = account;
    this.withdrawalCount = wid;
    this.withdrawalRows++;
    this.widIndex.set(wid, w);
    return w;
  }

  /** The row of a retained withdrawal, -1 when unknown or evicted. */
  withdrawalRow(wid: number): number {
    return wid >= 1 && Number.isSafeInteger(wid) ? this.widIndex.get(wid) : -1;
  }

  /**
   * The withdrawal in row w has finished (confirmed or failed): it joins its
   * account's finished queue, and that account's oldest finished ones beyond
   * `cap` are evicted (evolve only).
   */
  finishWithdrawal(w: number, cap: number): void {
    const a = this.wAccount[w]!;
    pushTailSingly(this.wFinHead, this.wFinTail, this.wLink, a, w);
    this.wFinCount[a] = this.wFinCount[a]! + 1;
    while (this.wFinCount[a]! > cap) {
      const old = popHeadSingly(this.wFinHead, this.wFinTail, this.wLink, a);
      this.wFinCount[a] = this.wFinCount[a]! - 1;
      this.widIndex.delete(this.wWid[old]!);
      // Only while the id still names this withdrawal: a journal written under a smaller withdrawal_cap (raised at a
      // restart) may hold a later withdrawal with the same id, which the replay indexed over this one.
      if (this.cwidIndex.get(a, this.wCwidHi[old]!, this.wCwidLo[old]!) === this.wWid[old]) {
        this.cwidIndex.delete(a, this.wCwidHi[old]!, this.wCwidLo[old]!);
      }
      this.wWid[old] = 0;
      this.wDestination[old] = '';
      this.wLink[old] = this.wFree;
      this.wFree = old;
      this.withdrawalRows--;
    }
  }

  ensureWithdrawals(n: number): void {
    if (n < this.wCapacity) return;
    const cap = nextCapacity(this.wCapacity, n + 1);
    this.wWid = grown(this.wWid, cap);
    this.wLink = grown(this.wLink, cap, NIL);
    this.wAccount = grown(this.wAccount, cap);
    this.wAmount = grown(this.wAmount, cap);
    this.wStatus = grown(this.wStatus, cap);
    this.wCwidHi = grown(this.wCwidHi, cap);
    this.wCwidLo = grown(this.wCwidLo, cap);
    this.wSeq = grown(this.wSeq, cap);
    this.wCapacity = cap;
  }

  /** The row of account's remembered deposit with this ref, -1 when none (an empty ref is never remembered). */
  depositRow(account: number, ref: string): number {
    return ref === '' ? -1 : this.depositRefIndex.get(depositRefKey(account, ref)) ?? -1;
  }

  /**
   * Remembers account's deposit of amount with this (non-empty, new) ref at
   * seq, forgetting the account's oldest ones past `cap` (evolve only).
   */
  rememberDeposit(account: number, ref: string, amount: number, seq: number, cap: number): void {
    const key = depositRefKey(account, ref);
    // A journal written under a smaller deposit_ref_cap (raised at a restart, or replayed with another configuration)
    // credits again a ref it had forgotten and this state still remembers: the new deposit replaces the old one.
    const prev = this.depositRefIndex.get(key);
    if (prev !== undefined) this.forgetDepositRow(account, prev);
    let d = this.dFree;
    if (d !== NIL) {
      this.dFree = this.dLink[d]!;
    } else {
      d = this.dTop++;
      this.ensureDepositRows(d + 1);
    }
    this.dAmount[d] = amount;
    this.dSeq[d] = seq;
    this.dKey[d] = key;
    this.depositRefIndex.set(key, d);
    pushTailSingly(this.dHead, this.dTail, this.dLink, account, d);
    this.dCount[account] = this.dCount[account]! + 1;
    this.forgetOldestDeposits(account, cap);
  }

  /** Forgets account's oldest remembered deposit refs past `cap`. */
  forgetOldestDeposits(account: number, cap: number): void {
    while (this.dCount[account]! > cap) {
      const old = popHeadSingly(this.dHead, this.dTail, this.dLink, account);
      this.dCount[account] = this.dCount[account]! - 1;
      this.freeDepositRow(old);
    }
  }

  /** Unlinks row d from account's queue (a walk: only a replay under another deposit_ref_cap needs it) and frees it. */
  private forgetDepositRow(account: number, d: number): void {
    let prev = NIL;
    let x = this.dHead[account]!;
    while (x !== d) {
      assert(x !== NIL, 'accounts: a remembered deposit is in its account\'s queue');
      prev = x;
      x = this.dLink[x]!;
    }
    const next = this.dLink[d]!;
    if (prev === NIL) this.dHead[account] = next;
    else this.dLink[prev] = next;
    if (this.dTail[account] === d) this.dTail[account] = prev;
    this.dCount[account] = this.dCount[account]! - 1;
    this.freeDepositRow(d);
  }

  private freeDepositRow(d: number): void {
    this.depositRefIndex.delete(this.dKey[d]!);
    this.dKey[d] = '';
    this.dLink[d] = this.dFree;
    this.dFree = d;
  }

  private ensureDepositRows(n: number): void {
    if (n < this.dCapacity) return;
    const cap = nextCapacity(this.dCapacity, n + 1);
    this.dLink = grown(this.dLink, cap, NIL);
    this.dAmount = grown(this.dAmount, cap);
    this.dSeq = grown(this.dSeq, cap);
    this.dCapacity = cap;
  }

  ensureFeeSchedules(n: number): void {
    if (n < this.feeTaker.length) return;
    const cap = nextCapacity(this.feeTaker.length, n + 1);
    this.feeTaker = grown(this.feeTaker, cap);
    this.feeMaker = grown(this.feeMaker, cap);
  }
}
