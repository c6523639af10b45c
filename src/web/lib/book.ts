// book: one market's two bid ladders as the trader page keeps them, from an
// orderbook_snapshot and then orderbook_delta messages (the lane checks their
// seq). A level's qty is the new total a delta carries; 0 removes it.
// Browser main thread.

import type { Orderbook } from '../../client/types.js';

export type Side = 'yes' | 'no';

/** An orderbook_snapshot message: every level of both ladders, as GET .../orderbook?depth=99. */
export type BookSnapshot = Orderbook;

export class BookState {
  readonly yes = new Map<number, number>();
  readonly no = new Map<number, number>();
  /** as_of_seq of the last snapshot or delta applied. */
  asOfSeq = '0';
  loaded = false;

  constructor(readonly marketId: number) {}

  snapshot(s: BookSnapshot): void {
    this.yes.clear();
    this.no.clear();
    for (const [t, q] of s.yes) this.yes.set(t, q);
    for (const [t, q] of s.no) this.no.set(t, q);
    this.asOfSeq = s.as_of_seq;
    this.loaded = true;
  }

  delta(d: { side: Side; tick: number; qty: number; as_of_seq: string }): void {
    const ladder = d.side === 'yes' ? this.yes : this.no;
    if (d.qty === 0) ladder.delete(d.tick);
    else ladder.set(d.tick, d.qty);
    this.asOfSeq = d.as_of_seq;
  }

  /** Levels best (highest tick) first, as GET .../orderbook answers them. */
  levels(side: Side): [number, number][] {
    return [...(side === 'yes' ? this.yes : this.no).entries()].sort((a, b) => b[0] - a[0]);
  }
}
