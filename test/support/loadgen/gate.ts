// gate: the start line of a load run. Every worker adds itself to word 0
// when it is ready (connections warm, requests signed ahead) and waits for
// word 1; the main thread waits for word 0 to reach the worker count, opens
// its CPU windows and sets word 1. Any thread (Atomics.waitAsync: never
// blocks an event loop).

/** Atomics.waitAsync is in Node 20 but not in TypeScript's ES2022 lib. */
type WaitAsync = (a: Int32Array, index: number, value: number) => { async: false; value: string } | { async: true; value: Promise<string> };
const waitAsync = (Atomics as unknown as { waitAsync: WaitAsync }).waitAsync;

export const GATE_BYTES = 8;

/** Resolves once g[index] no longer holds `value`. */
async function changed(g: Int32Array, index: number, value: number): Promise<void> {
  while (Atomics.load(g, index) === value) {
    const w = waitAsync(g, index, value);
    if (w.async) await w.value;
  }
}

/** Worker: ready, then wait for go. */
export async function arriveAndWait(gate: SharedArrayBuffer): Promise<void> {
  const g = new Int32Array(gate);
  Atomics.add(g, 0, 1);
  Atomics.notify(g, 0);
  await changed(g, 1, 0);
}

/** Main thread: resolves when `workers` have arrived. */
export async function allArrived(gate: SharedArrayBuffer, workers: number): Promise<void> {
  const g = new Int32Array(gate);
  for (let n = Atomics.load(g, 0); n < workers; n = Atomics.load(g, 0)) await changed(g, 0, n);
}

/** Main thread: let every worker go. */
export function go(gate: SharedArrayBuffer): void {
  const g = new Int32Array(gate);
  Atomics.store(g, 1, 1);
  Atomics.notify(g, 1);
}
