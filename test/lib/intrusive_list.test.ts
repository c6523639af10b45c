// intrusive_list: the one push-tail / unlink / pop-head of the row lists,
// against plain arrays on a seeded random sequence of operations over
// several lists sharing one pair of link arrays.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NIL, popHead, popHeadSingly, pushTail, pushTailSingly, unlink } from '../../src/lib/intrusive_list.js';
import { mulberry32 } from '../../src/lib/rng.js';

function walk(head: Int32Array, next: Int32Array, prev: Int32Array, list: number): number[] {
  const out: number[] = [];
  let p = NIL;
  for (let x = head[list]!; x !== NIL; x = next[x]!) {
    assert.equal(prev[x], p, `list ${list}: node ${x} links back to ${prev[x]}, not ${p}`);
    out.push(x);
    p = x;
  }
  return out;
}

test('intrusive_list: push-tail, unlink and pop-head keep several lists in FIFO order, links both ways', () => {
  const LISTS = 4;
  const NODES = 64;
  const head = new Int32Array(LISTS).fill(NIL);
  const tail = new Int32Array(LISTS).fill(NIL);
  const prev = new Int32Array(NODES).fill(NIL);
  const next = new Int32Array(NODES).fill(NIL);
  const model: number[][] = Array.from({ length: LISTS }, () => []);
  const where = new Int32Array(NODES).fill(-1);
  const rng = mulberry32(14);
  for (let step = 0; step < 20_000; step++) {
    const node = Math.floor(rng() * NODES);
    const r = rng();
    if (where[node] === -1 && r < 0.5) {
      const list = Math.floor(rng() * LISTS);
      pushTail(head, tail, prev, next, list, node);
      model[list]!.push(node);
      where[node] = list;
    } else if (where[node] !== -1 && r < 0.8) {
      const list = where[node]!;
      unlink(head, tail, prev, next, list, node);
      model[list]!.splice(model[list]!.indexOf(node), 1);
      where[node] = -1;
    } else {
      const list = Math.floor(rng() * LISTS);
      const h = popHead(head, tail, prev, next, list);
      const expected = model[list]!.shift();
      assert.equal(h, expected ?? NIL);
      if (h !== NIL) where[h] = -1;
    }
    if (step % 97 === 0) {
      for (let l = 0; l < LISTS; l++) {
        assert.deepEqual(walk(head, next, prev, l), model[l]);
        assert.equal(tail[l], model[l]!.length > 0 ? model[l]!.at(-1) : NIL);
      }
    }
  }
});

test('intrusive_list: pop-head of an empty list is NIL and leaves it empty', () => {
  const head = new Int32Array(1).fill(NIL);
  const tail = new Int32Array(1).fill(NIL);
  const links = new Int32Array(2).fill(NIL);
  assert.equal(popHead(head, tail, links, links.slice(), 0), NIL);
  assert.equal(head[0], NIL);
  assert.equal(tail[0], NIL);
});

test('intrusive_list: the singly linked push-tail and pop-head keep several bounded queues in FIFO order', () => {
  const LISTS = 3;
  const NODES = 48;
  const CAP = 5;
  const head = new Int32Array(LISTS).fill(NIL);
  const tail = new Int32Array(LISTS).fill(NIL);
  const next = new Int32Array(NODES).fill(NIL);
  const model: number[][] = Array.from({ length: LISTS }, () => []);
  const free: number[] = Array.from({ length: NODES }, (_x, i) => i);
  const rng = mulberry32(18);
  for (let step = 0; step < 10_000; step++) {
    const list = Math.floor(rng() * LISTS);
    if (free.length > 0 && rng() < 0.7) {
      // As the accounts' revoked keys and finished withdrawals: append, then evict from the head beyond the cap.
      const node = free.pop()!;
      pushTailSingly(head, tail, next, list, node);
      model[list]!.push(node);
      while (model[list]!.length > CAP) {
        const h = popHeadSingly(head, tail, next, list);
        assert.equal(h, model[list]!.shift());
        free.push(h);
      }
    } else {
      const h = popHeadSingly(head, tail, next, list);
      assert.equal(h, model[list]!.shift() ?? NIL);
      if (h !== NIL) free.push(h);
    }
    for (let l = 0; l < LISTS; l++) {
      const got: number[] = [];
      for (let x = head[l]!; x !== NIL; x = next[x]!) got.push(x);
      assert.deepEqual(got, model[l]);
      assert.equal(tail[l], model[l]!.length > 0 ? model[l]!.at(-1) : NIL);
    }
  }
});
