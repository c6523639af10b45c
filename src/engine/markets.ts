// Markets, rounds, series and the oracle: engine thread and gateway read
// models. A market trades in rounds, at most one non-terminal at a time;
// `round` is the index of its current (or last) round, -1 before the first.
// Round numbers are global and increasing: round index i has round_number
// i + 1. A series is a market whose rounds open by themselves
// (seriesPeriodS > 0); at most one active series per category.

import { grown, nextCapacity } from '../lib/grow.js';

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

  roundCount = 0;
  private roundCapacity = 0;
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
  /** Terminal rounds in the order they ended, for eviction beyond round_cap. */
  terminalRounds: number[] = [];
  terminalHead = 0;

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

  ensureRounds(n: number): void {
    if (n < this.roundCapacity) return;
    const cap = nextCapacity(this.roundCapacity, n + 1);
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
