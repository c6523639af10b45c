// CommandProducer: one producer's end of a command ring to the engine: claim,
// write the command in place, publish, ring the engine's doorbell. Whoever
// owns the producer id runs it (a gateway thread, the control plane, the
// main thread's clock); one thread per ring (SpscRing's rule).

import type { Mem } from '../lib/mem.js';
import type { Doorbell } from './doorbell.js';
import { SpscRing } from './spsc_ring.js';

export class CommandProducer {
  readonly ring: SpscRing;
  readonly mem: Mem;

  /** Attaches to a command ring allocated with the same layout fingerprint. */
  constructor(sab: SharedArrayBuffer, private readonly doorbell: Doorbell, fingerprint: number) {
    this.ring = new SpscRing(sab, fingerprint);
    this.mem = this.ring.mem;
  }

  /** Offset to write a command of len bytes at, or -1 when the ring is full. */
  tryClaim(len: number): number {
    return this.ring.tryClaim(len);
  }

  /** Publishes everything claimed and wakes the engine if it parked. */
  publish(): void {
    this.ring.publish();
    this.doorbell.wake();
  }

  freeBytes(): number {
    return this.ring.freeBytes();
  }
}
