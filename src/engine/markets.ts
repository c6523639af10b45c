// Markets, rounds, series and the oracle: engine thread and gateway read
// models. A market trades in rounds, at most one non-terminal at a time.
// Round numbers are global and increasing (the next is roundCount + 1).
// A series is a market whose rounds open by themselves (seriesPeriodS > 0);
// at most one active series per category.
//
// Rounds live in rows (the r* columns) that are reused, so the table stays
// bounded however many rounds run: a row holds a retained round (each
// market's non-terminal round, and the newest round_cap terminal ones, in
// the order they ended: the terminal queue) or, once evicted from that
// queue, the market's last round while no newer one has opened (rEvicted:
// its number and status still describe the market, but it is no longer
// listed). So rows in use <= round_cap + 2 x markets. `round[market]` is
// the row of the market's current (or last) round, -1 before its first;
// `roundIndex` maps a retained round's number to its row. Only evolve
// changes rows (openRound, endRound), in event order, so every fold of the
// same events reuses the same rows.

import { NIL } from '../book/orders.js';
import { assert } from '../lib/assert.js';
import { grown, nextCapacity } from '../lib/grow.js';
import { IdIndex } from '../lib/id_index.js';

/** Oracle source ids are 0..ORACLE_SOURCES-1. */
export const ORACLE_SOURCES = 64;

export class Markets {
  count = 0;
  private capacity = 0;
  category = new Uint16Array(0);
  positionLimit = new Uint32Array(0);
  feeSchedule = new Uint32Array(0);
  title: string[] = [''];
  round = new Int32Array(0);
  volume = new Float64Array(0);
  openInterest = new Float64Array(0);
  lastTickYes = new Uint8Array(0);
  /** Round length in seconds of a series market; 0 for a market whose rounds the operator opens. */
  seriesPeriodS = new Uint32Array(0);
  /** 1 while the market's series opens rounds (SeriesStopped clears it). */
  seriesActive = new Uint8Array(0);

  /** Round numbers issued (the last round's number). */
  roundCount = 0;
  private roundCapacity = 0;
  /** Rows ever used: rows 0..roundTop-1 exist. */
  roundTop = 0;
  /** Rows holding a round (retained or a market's evicted last round). */
  roundRows = 0;
  /** Round number per row; 0 = a free row. */
  rNumber = new Float64Array(0);
  /** Next row in the free list or in the terminal queue (each row is in at most one), NIL at the end. */
  rLink = new Int32Array(0);
  freeRow = NIL;
  /** Terminal rounds in the order they ended (oldest at the head), evicted beyond round_cap. */
  terminalHead = NIL;
  terminalTail = NIL;
  terminalCount = 0;
  /** round number -> row, for retained rounds. */
  readonly roundIndex = new IdIndex(64);
  rMarket = new Uint32Array(0);
  rStatus = new Uint8Array(0);
  rOutcome = new Uint8Array(0);
  rDisputed = new Uint8Array(0);
  rEvicted = new Uint8Array(0);
  rStrike = new Float64Array(0);
  rSettlePrice = new Float64Array(0);
  rOpenHi = new Uint32Array(0);
  rOpenLo = new Uint32Array(0);
  rCloseHi = new Uint32Array(0);
  rCloseLo = new Uint32Array(0);
  rProposedHi = new Uint32Array(0);
  rProposedLo = new Uint32Array(0);
  rSettledHi = new Uint32Array(0);
  rSettledLo = new Uint32Array(0);
  // Oracle sources and the last published reference.
  srcSeen = new Uint8Array(ORACLE_SOURCES);
  srcPrice = new Float64Array(ORACLE_SOURCES);
  srcTsHi = new Uint32Array(ORACLE_SOURCES);
  srcTsLo = new Uint32Array(ORACLE_SOURCES);
  oraclePrice = 0;
  oracleFresh = 0;
  oracleSeq = 0;

  constructor(marketCapacity: number) {
    this.ensureMarkets(marketCapacity);
    this.ensureRounds(marketCapacity);
  }

  exists(market: number): boolean {
    return market >= 1 && market <= this.count;
  }

  /** The market of the category's active series, 0 when none (a scan: operator commands only). */
  activeSeries(category: number): number {
    for (let m = 1; m <= this.count; m++) if (this.seriesActive[m] === 1 && this.category[m] === category) return m;
    return 0;
  }

  /** Status of the market's current round (RoundStatus), 0 when none. */
  roundStatus(market: number): number {
    const r = this.round[market]!;
    return r < 0 ? 0 : this.rStatus[r]!;
  }

  ensureMarkets(n: number): void {
    if (n < this.capacity) return;
    const cap = nextCapacity(this.capacity, n + 1);
    this.category = grown(this.category, cap);
    this.positionLimit = grown(this.positionLimit, cap);
    this.feeSchedule = grown(this.feeSchedule, cap);
    this.round = grown(this.round, cap, -1);
    this.volume = grown(this.volume, cap);
    this.openInterest = grown(this.openInterest, cap);
    this.lastTickYes = grown(this.lastTickYes, cap);
    this.seriesPeriodS = grown(this.seriesPeriodS, cap);
    this.seriesActive = grown(this.seriesActive, cap);
    this.capacity = cap;
  }

  /** A row for round `number`, opened in `market` (evolve only): the market's evicted last round's row is freed first. */
  openRound(market: number, number: number): number {
    assert(number === this.roundCount + 1, 'markets: round numbers are consecutive');
    const prev = this.round[market]!;
    if (prev >= 0 && this.rEvicted[prev] === 1) this.freeRoundRow(prev);
    let r = this.freeRow;
    if (r !== NIL) {
      this.freeRow = this.rLink[r]!;
    } else {
      r = this.roundTop++;
      this.ensureRounds(r + 1);
    }
    this.rNumber[r] = number;
    this.rLink[r] = NIL;
    this.rEvicted[r] = 0;
    this.roundRows++;
    this.roundCount = number;
    this.roundIndex.set(number, r);
    this.round[market] = r;
    return r;
  }

  /**
   * The round in row r has ended (settled or void): it joins the terminal
   * queue, and the oldest terminal rounds beyond `cap` are evicted (evolve only).
   */
  endRound(r: number, cap: number): void {
    // Written out rather than lib/intrusive_list's pushTailSingly/popHeadSingly: this queue's ends are
    // scalar fields of the snapshotted state, the helper's are arrays (moving them changes the snapshot format).
    this.rLink[r] = NIL;
    if (this.terminalTail === NIL) this.terminalHead = r;
    else this.rLink[this.terminalTail] = r;
    this.terminalTail = r;
    this.terminalCount++;
    while (this.terminalCount > cap) {
      const old = this.terminalHead;
      this.terminalHead = this.rLink[old]!;
      if (this.terminalHead === NIL) this.terminalTail = NIL;
      this.terminalCount--;
      this.roundIndex.delete(this.rNumber[old]!);
      // Still its market's last round: kept (unlisted) until the market opens another.
      if (this.round[this.rMarket[old]!] === old) this.rEvicted[old] = 1;
      else this.freeRoundRow(old);
    }
  }

  private freeRoundRow(r: number): void {
    assert(this.rNumber[r]! > 0, 'markets: freeing a free round row');
    this.rNumber[r] = 0;
    this.rEvicted[r] = 0;
    this.rLink[r] = this.freeRow;
    this.freeRow = r;
    this.roundRows--;
  }

  /** The row of a retained round, -1 when unknown or evicted. */
  roundRow(number: number): number {
    return this.roundIndex.get(number);
  }

  ensureRounds(n: number): void {
    if (n < this.roundCapacity) return;
    const cap = nextCapacity(this.roundCapacity, n + 1);
    this.rNumber = grown(this.rNumber, cap);
    this.rLink = grown(this.rLink, cap, NIL);
    this.rMarket = grown(this.rMarket, cap);
    this.rStatus = grown(this.rStatus, cap);
    this.rOutcome = grown(this.rOutcome, cap);
    this.rDisputed = grown(this.rDisputed, cap);
    this.rEvicted = grown(this.rEvicted, cap);
    this.rStrike = grown(this.rStrike, cap);
    this.rSettlePrice = grown(this.rSettlePrice, cap);
    this.rOpenHi = grown(this.rOpenHi, cap);
    this.rOpenLo = grown(this.rOpenLo, cap);
    this.rCloseHi = grown(this.rCloseHi, cap);
    this.rCloseLo = grown(this.rCloseLo, cap);
    this.rProposedHi = grown(this.rProposedHi, cap);
    this.rProposedLo = grown(this.rProposedLo, cap);
    this.rSettledHi = grown(this.rSettledHi, cap);
    this.rSettledLo = grown(this.rSettledLo, cap);
    this.roundCapacity = cap;
  }
}
