// command_stamp: the header of every command the engine benchmarks generate
// (bench/engine_match.ts, bench/engine_scale.ts): the record zeroed, then
// len, type, producer 100 (tests and tools), the next correlation, the
// account and a ts 1 µs after the previous command's, starting at
// 2026-01-01T00:00:00Z. Bench main thread (and the profiler's worker).

import { Header } from '../../src/layout/records.js';
import type { Mem } from '../../src/lib/mem.js';

const PRODUCER = 100;
const TWO32 = 4294967296;
const T0_NS = 1_767_225_600n * 1_000_000_000n;

export class CommandStamp {
  /** ts of the last stamped command (hi, lo). */
  tsHi = Number(T0_NS / BigInt(TWO32));
  tsLo = Number(T0_NS % BigInt(TWO32));
  private correlation = 0;

  /** Zeroes `size` bytes at o and writes the header of a command of `type` for `account`. */
  write(m: Mem, o: number, type: number, size: number, account: number): void {
    m.u32.fill(0, o >>> 2, (o + size) >>> 2);
    Header.set_len(m, o, size);
    Header.set_type(m, o, type);
    Header.set_producer(m, o, PRODUCER);
    Header.set_correlation(m, o, ++this.correlation);
    Header.set_account(m, o, account);
    this.tsLo += 1000;
    if (this.tsLo >= TWO32) {
      this.tsLo -= TWO32;
      this.tsHi++;
    }
    Header.set_ts(m, o, this.tsHi, this.tsLo);
  }
}
