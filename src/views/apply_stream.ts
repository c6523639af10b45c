// applyRange: feeds a contiguous run of event records to a Views, in order.
// Used by whoever drains events into a read model (a gateway thread's ring
// consumer, recovery, tests). Runs on that thread. Records are framed by their
// header `len` (a multiple of 8; at least the 32-byte header except for type 0,
// the ring's padding record, which is skipped).

import { Header, HEADER_SIZE } from '../layout/records.js';
import { assert } from '../lib/assert.js';
import type { Mem } from '../lib/mem.js';
import type { Views } from './views.js';

/** Applies every record in [from, to) of m; returns the number of events applied. */
export function applyRange(views: Views, m: Mem, from: number, to: number): number {
  let n = 0;
  for (let o = from; o < to; ) {
    const len = Header.len(m, o);
    const type = Header.type(m, o);
    assert(len >= (type === 0 ? 8 : HEADER_SIZE) && len % 8 === 0 && o + len <= to, 'views: corrupt record framing');
    if (type !== 0) {
      views.apply(m, o);
      n++;
    }
    o += len;
  }
  return n;
}
