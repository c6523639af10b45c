// intrusive_list: FIFO lists threaded through typed arrays, the one
// implementation of push-tail / unlink / pop-head for every list of rows:
// doubly linked where a node leaves from the middle (a book level's queue, an
// account's live, terminal and rejected orders, an account's keys), singly
// linked where nodes only leave from the head (the bounded queues of revoked
// keys and finished withdrawals, a read model's position lists). A list is a
// (head, tail) pair of entries in two Int32Arrays, at index `list`; nodes
// link through `next` (and `prev`) at their own index; NIL (-1) ends a list.
// Any thread; no allocation. The arrays are passed on every call because
// their owners replace them when they grow.

export const NIL = -1;
// NIL as this module's functions read it: an exported binding is read from
// its module cell and checked for the temporal dead zone at every use in
// optimized code; a private const folds to a constant
// (docs/engine-performance.md, "Imported bindings").
const END = NIL;

/** Appends `node` at the tail of list `list`. */
export function pushTail(head: Int32Array, tail: Int32Array, prev: Int32Array, next: Int32Array, list: number, node: number): void {
  const t = tail[list]!;
  prev[node] = t;
  next[node] = END;
  if (t === END) head[list] = node;
  else next[t] = node;
  tail[list] = node;
}

/** Removes `node` from list `list` (it must be on it); its own links are left as they were. */
export function unlink(head: Int32Array, tail: Int32Array, prev: Int32Array, next: Int32Array, list: number, node: number): void {
  const p = prev[node]!;
  const n = next[node]!;
  if (p === END) head[list] = n;
  else next[p] = n;
  if (n === END) tail[list] = p;
  else prev[n] = p;
}

/** Removes and returns the head of list `list`, NIL when it is empty. */
export function popHead(head: Int32Array, tail: Int32Array, prev: Int32Array, next: Int32Array, list: number): number {
  const h = head[list]!;
  if (h === END) return END;
  const n = next[h]!;
  head[list] = n;
  if (n === END) tail[list] = END;
  else prev[n] = END;
  return h;
}

/** Appends `node` at the tail of the singly linked list `list`. */
export function pushTailSingly(head: Int32Array, tail: Int32Array, next: Int32Array, list: number, node: number): void {
  const t = tail[list]!;
  next[node] = END;
  if (t === END) head[list] = node;
  else next[t] = node;
  tail[list] = node;
}

/** Removes and returns the head of the singly linked list `list`, NIL when it is empty; its own link is left as it was. */
export function popHeadSingly(head: Int32Array, tail: Int32Array, next: Int32Array, list: number): number {
  const h = head[list]!;
  if (h === END) return END;
  const n = next[h]!;
  head[list] = n;
  if (n === END) tail[list] = END;
  return h;
}

// The same lists over packed rows (OrderSlab): node `x`'s links are
// `links[(x << shift) | prevAt]` and `links[(x << shift) | nextAt]` of one Int32Array
// (prevAt, nextAt < 2^shift; shifts, not multiplications: no overflow checks in optimized code).

/** pushTail over packed rows. */
export function pushTailPacked(
  head: Int32Array, tail: Int32Array, links: Int32Array, shift: number, prevAt: number, nextAt: number, list: number, node: number,
): void {
  const t = tail[list]!;
  const x = node << shift;
  links[x | prevAt] = t;
  links[x | nextAt] = END;
  if (t === END) head[list] = node;
  else links[(t << shift) | nextAt] = node;
  tail[list] = node;
}

/** unlink over packed rows. */
export function unlinkPacked(
  head: Int32Array, tail: Int32Array, links: Int32Array, shift: number, prevAt: number, nextAt: number, list: number, node: number,
): void {
  const x = node << shift;
  const p = links[x | prevAt]!;
  const n = links[x | nextAt]!;
  if (p === END) head[list] = n;
  else links[(p << shift) | nextAt] = n;
  if (n === END) tail[list] = p;
  else links[(n << shift) | prevAt] = p;
}

/** popHead over packed rows. */
export function popHeadPacked(
  head: Int32Array, tail: Int32Array, links: Int32Array, shift: number, prevAt: number, nextAt: number, list: number,
): number {
  const h = head[list]!;
  if (h === END) return END;
  const n = links[(h << shift) | nextAt]!;
  head[list] = n;
  if (n === END) tail[list] = END;
  else links[(n << shift) | prevAt] = END;
  return h;
}
