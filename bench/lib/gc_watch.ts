// gc_watch: GC pauses of the bench process, observed while a benchmark runs
// and counted afterwards inside the windows (performance.now() spans) that
// were timed. Main thread of a benchmark.

import { PerformanceObserver } from 'node:perf_hooks';

export class GcWatch {
  /** Every GC seen: its start (performance.now()) and duration, ms. */
  readonly entries: { start: number; duration: number }[] = [];
  private readonly obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) this.entries.push({ start: e.startTime, duration: e.duration });
  });

  constructor() {
    this.obs.observe({ entryTypes: ['gc'] });
  }

  /** Lets queued observer callbacks run, then stops observing. */
  async stop(): Promise<void> {
    await new Promise((r) => setTimeout(r, 50));
    this.obs.disconnect();
  }

  /** GCs that started inside any of the [start, end) windows, and their total pause. */
  within(windows: readonly (readonly [number, number])[]): { count: number; ms: number } {
    let count = 0;
    let ms = 0;
    for (const e of this.entries) {
      for (const [s, t] of windows) {
        if (e.start >= s && e.start < t) {
          count++;
          ms += e.duration;
          break;
        }
      }
    }
    return { count, ms };
  }
}
