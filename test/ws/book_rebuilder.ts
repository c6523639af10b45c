// BookRebuilder: what a client does with one orderbook_delta subscription:
// starts from the orderbook_snapshot, applies each delta, and checks the
// stream while doing it (seq +1 per message, a delta's `qty - delta` equals
// the level it replaces, as_of_seq never goes back). It remembers the book
// after each as_of_seq, so a test can compare it with a REST read at the
// same seq. Test process only.

import assert from 'node:assert/strict';
import type { Msg } from './ws_client.js';

export interface Levels {
  yes: [number, number][];
  no: [number, number][];
}

export class BookRebuilder {
  private readonly yes = new Map<number, number>();
  private readonly no = new Map<number, number>();
  private nextSeq = -1;
  asOf = -1;
  /** as_of_seq -> the book once every message of that seq was applied. */
  private readonly history = new Map<number, string>();
  private readonly order: number[] = [];
  messages = 0;

  constructor(readonly sid: number, readonly market: number) {}

  apply(m: Msg): void {
    assert.equal(m.sid, this.sid);
    this.messages++;
    if (m.type === 'orderbook_snapshot') {
      assert.equal(m.msg.market_id, this.market);
      this.yes.clear();
      this.no.clear();
      for (const [t, q] of m.msg.yes as [number, number][]) this.yes.set(t, q);
      for (const [t, q] of m.msg.no as [number, number][]) this.no.set(t, q);
      // A snapshot states the stream as of its seq; the next delta is seq + 1.
      this.nextSeq = m.seq + 1;
      this.record(Number(m.msg.as_of_seq));
      return;
    }
    assert.equal(m.type, 'orderbook_delta', JSON.stringify(m));
    assert.ok(this.nextSeq > 0, 'a delta before the snapshot');
    assert.equal(m.seq, this.nextSeq, `seq gap: expected ${this.nextSeq}, got ${JSON.stringify(m)}`);
    this.nextSeq++;
    const d = m.msg;
    assert.equal(d.market_id, this.market);
    assert.ok(d.side === 'yes' || d.side === 'no');
    assert.ok(Number.isInteger(d.tick) && d.tick >= 1 && d.tick <= 99);
    assert.ok(Number.isInteger(d.qty) && d.qty >= 0 && Number.isInteger(d.delta) && d.delta !== 0, JSON.stringify(d));
    const side = d.side === 'yes' ? this.yes : this.no;
    assert.equal((side.get(d.tick) ?? 0) + d.delta, d.qty, `delta does not lead from the level it replaces: ${JSON.stringify(d)}`);
    if (d.qty === 0) side.delete(d.tick);
    else side.set(d.tick, d.qty);
    const asOf = Number(d.as_of_seq);
    assert.ok(asOf >= this.asOf, 'as_of_seq went back');
    this.record(asOf);
  }

  private record(asOf: number): void {
    this.asOf = asOf;
    if (!this.history.has(asOf)) this.order.push(asOf);
    this.history.set(asOf, JSON.stringify(this.levels()));
  }

  levels(): Levels {
    const sorted = (m: Map<number, number>): [number, number][] => [...m.entries()].sort((a, b) => b[0] - a[0]);
    return { yes: sorted(this.yes), no: sorted(this.no) };
  }

  /** The rebuilt book as of exchange seq `seq` (after every delta with as_of_seq <= seq); null when older than the snapshot. */
  at(seq: number): Levels | null {
    let best = -1;
    for (const s of this.order) if (s <= seq && s > best) best = s;
    return best < 0 ? null : (JSON.parse(this.history.get(best)!) as Levels);
  }
}
