// grow: doubling of preallocated typed arrays. Growth allocates, so it happens
// only when a table is full (amortized, never in steady state); size the
// tables from the configuration so that production never grows them.
// Pure: any thread.

type Typed = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;

export function grown<T extends Typed>(a: T, n: number, fill = 0): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a as never);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}

export function nextCapacity(current: number, need: number): number {
  let c = Math.max(current, 16);
  while (c < need) c *= 2;
  return c;
}
