// time: where a producer of commands reads the wall clock it stamps on them
// (the ClockTick's ts and every command's header ts; the sequencer turns
// them into its monotone ts). Any thread. The exchange uses SYSTEM_TIME; a
// test injects its own source into the main thread (the clock and the
// control plane) to step the clock back and forward while trading. Request
// signatures are checked against Date.now() directly, never against this,
// so their +-5 s window stays tied to the real time.

export interface TimeSource {
  /** Unix milliseconds. */
  nowMs(): number;
}

export const SYSTEM_TIME: TimeSource = { nowMs: () => Date.now() };
