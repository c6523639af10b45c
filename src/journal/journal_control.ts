// JournalControl: a small SharedArrayBuffer between the journal thread and
// the main thread: the stop word (Atomics), monitoring counters (plain
// Float64 stores; a reader may see them one group old) and the histogram of
// fdatasync durations (µs; GET /metrics dx_journal_fsync_seconds).

import { histogramWords, LogHistogram, type LogHistogramShape } from '../lib/log_histogram.js';

/** The shape of the fsync histogram (the metrics' latency shape: µs, 16 sub-buckets, up to 2^26 µs). */
export const FSYNC_SHAPE: LogHistogramShape = { subBits: 4, maxBits: 26 };
const HEADER_BYTES = 64;

export class JournalControl {
  static allocate(): SharedArrayBuffer {
    return new SharedArrayBuffer(HEADER_BYTES + histogramWords(FSYNC_SHAPE) * 8);
  }

  private readonly i32: Int32Array;
  private readonly f64: Float64Array;
  /** fdatasync durations, µs; written by the journal thread only. */
  readonly fsyncs: LogHistogram;

  constructor(readonly sab: SharedArrayBuffer) {
    this.i32 = new Int32Array(sab, 0, 2);
    this.f64 = new Float64Array(sab, 8, 4);
    this.fsyncs = new LogHistogram(FSYNC_SHAPE, new Float64Array(sab, HEADER_BYTES, histogramWords(FSYNC_SHAPE)));
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
