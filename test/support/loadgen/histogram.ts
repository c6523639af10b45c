// Histogram of the load generator: the log-linear histogram of src/lib
// (HdrHistogram-style) with 128 sub-buckets per power of two, so every
// reported value is within 0.79% of the true one, over values up to 2^32 - 1
// (71 minutes in µs). Each load worker records into its own; the main thread
// merges what the workers send back (HistogramData, structured-clone plain).

import { LogHistogram, type LogHistogramShape } from '../../../src/lib/log_histogram.js';

export const LOADGEN_SHAPE: LogHistogramShape = { subBits: 7, maxBits: 32 };

/** The plain-data form a worker sends back to the main thread. */
export interface HistogramData {
  words: Float64Array;
}

export class Histogram extends LogHistogram {
  constructor(words?: Float64Array) {
    super(LOADGEN_SHAPE, words);
  }

  toData(): HistogramData {
    return { words: this.words };
  }

  static fromData(d: HistogramData): Histogram {
    const h = new Histogram();
    h.merge(d);
    return h;
  }
}
