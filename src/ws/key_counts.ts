// KeyCounts: per-key WebSocket connection and subscription counts shared by
// every gateway thread through one SharedArrayBuffer (a key may connect to
// any thread), so the caps of the lane hold per key, not per thread. Two Int32
// words per key; Atomics.add makes each reservation one atomic step, and a
// reservation that overshoots the cap is undone at once (a racing second
// reservation may then fail too; both retry, neither over-admits).

export const KEY_CONNECTIONS = 0;
export const KEY_SUBSCRIPTIONS = 1;

export class KeyCounts {
  /** Same key range as TokenBuckets.allocate(): ids at or above maxKeys never get a token either. */
  static allocate(maxKeys = 1 << 16): SharedArrayBuffer {
    return new SharedArrayBuffer(maxKeys * 8);
  }

  private readonly words: Int32Array;
  readonly maxKeys: number;

  constructor(readonly sab: SharedArrayBuffer) {
    this.words = new Int32Array(sab);
    this.maxKeys = this.words.length >>> 1;
  }

  /** Adds n to the key's count unless that would pass cap; true when added. */
  tryAdd(keyId: number, which: number, n: number, cap: number): boolean {
    if (keyId < 0 || keyId >= this.maxKeys) return false;
    const i = keyId * 2 + which;
    // SC read-modify-write: concurrent reservations on other threads are ordered.
    if (Atomics.add(this.words, i, n) + n <= cap) return true;
    Atomics.sub(this.words, i, n);
    return false;
  }

  remove(keyId: number, which: number, n: number): void {
    if (keyId < 0 || keyId >= this.maxKeys || n === 0) return;
    Atomics.sub(this.words, keyId * 2 + which, n);
  }

  get(keyId: number, which: number): number {
    return keyId < 0 || keyId >= this.maxKeys ? 0 : Atomics.load(this.words, keyId * 2 + which);
  }
}
