// JournalControl: a small SharedArrayBuffer between the journal thread and
// the main thread: the stop word (Atomics) and monitoring counters (plain
// Float64 stores; a reader may see them one group old).

export class JournalControl {
  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(64);
  }

  private readonly i32: Int32Array;
  private readonly f64: Float64Array;

  constructor(readonly sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab, 0, 2);
    this.f64 = new Float64Array(sab, 8, 4);
  }

  requestStop(): void {
    Atomics.store(this.i32, 0, 1);
  }

  get stopRequested(): boolean {
    return Atomics.load(this.i32, 0) === 1;
  }

  /** Journal side: counters after each group (monitoring only). */
  report(syncs: number, records: number, bytes: number, segments: number): void {
    this.f64[0] = syncs;
    this.f64[1] = records;
    this.f64[2] = bytes;
    this.f64[3] = segments;
  }

  get counters(): { syncs: number; records: number; bytes: number; segments: number } {
    return { syncs: this.f64[0]!, records: this.f64[1]!, bytes: this.f64[2]!, segments: this.f64[3]! };
  }
}

