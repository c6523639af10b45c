// monoUs(): microseconds on the process-wide monotonic clock (CLOCK_MONOTONIC,
// the clock of process.hrtime), comparable across the threads of one process.
// The stage stamps of a command (src/gateway, the engine and journal threads)
// are taken on different threads and subtracted, so they need one time base.
//
// performance.now() reads that same clock minus an origin of its own thread
// (each worker's starts when the worker starts); performance.timeOrigin is
// that origin as wall-clock time, read once per thread, so two threads'
// timeOrigin + now() differ by however far the wall clock was slewed between
// their starts. Instead, each thread measures its own origin against
// process.hrtime() once, at load: the tightest of a few hundred
// (now, hrtime, now) triples, about 0.2 µs wide here, and then
// monoUs() = (performance.now() + origin) * 1000 costs one performance.now()
// and allocates nothing. Checked on Node 20: the origin so measured stays
// within 0.01 µs over seconds, i.e. both read the same clock.
//
// For measurement only (stage histograms, benchmarks); never a decision of
// the exchange. Any thread.

function originMs(): number {
  let best = Infinity;
  let origin = 0;
  for (let i = 0; i < 400 && best > 0.0005; i++) {
    const a = performance.now();
    const h = process.hrtime();
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      origin = h[0] * 1e3 + h[1] / 1e6 - (a + b) / 2;
    }
  }
  return origin;
}

const ORIGIN_MS = originMs();

/** Microseconds on the process-wide monotonic clock (fractional). */
export function monoUs(): number {
  return (performance.now() + ORIGIN_MS) * 1000;
}
