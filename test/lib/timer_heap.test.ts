// TimerHeap.keyed (src/lib/timer_heap.ts): every id keyed exactly the
// smallest key, however many share it (past the scratch arrays' first 64
// entries, which then grow) and wherever they sit in the heap; none with
// another key. Pure, test process.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { TimerHeap } from '../../src/lib/timer_heap.js';
import { mulberry32 } from '../../src/lib/rng.js';

test('timer heap: keyed finds every id of the smallest key, past the scratch arrays\' first size too', () => {
  for (const ties of [1, 2, 63, 64, 65, 300]) {
    const h = new TimerHeap(16);
    const rnd = mulberry32(ties);
    const want: number[] = [];
    // Ids in a shuffled order, half of them later than the smallest key (some with its hi, a larger lo).
    const ids = Array.from({ length: ties * 3 }, (_x, i) => i).sort(() => rnd() - 0.5);
    ids.forEach((id, k) => {
      if (k < ties) {
        h.set(id, 7, 100);
        want.push(id);
      } else {
        h.set(id, k % 2 === 0 ? 7 : 8, 100 + 1 + (id % 5));
      }
    });
    const first = h.peek();
    const n = h.dueIds(h.hiOf(first), h.loOf(first));
    assert.deepEqual([...TimerHeap.found.subarray(0, n)].sort((a, b) => a - b), want.sort((a, b) => a - b), `${ties} ties`);
  }
});
