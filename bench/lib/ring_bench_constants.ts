// Constants shared by bench/ring_handoff.ts and its worker script (kept apart
// so the main thread never evaluates the worker module).

/** The layout fingerprint the rings are stamped with (any u32 works for the bench). */
export const BENCH_FP = 0x0f1a3b05;
