// CommandHeaders: the header of every command the engine benchmarks write
// (engine_match, engine_scale): the record zeroed, then its length, type, a
// producer id of its own, the next correlation id, the account, and a
// sequencer-clock stamp 1 µs after the previous one, from 2026-01-01T00:00Z.
// The benchmark's own thread.

import { Header } from '../../src/layout/records.js';
import type { Mem } from '../../src/lib/mem.js';

const TWO32 = 4294967296;
const T0_NS = 1_767_225_600n * 1_000_000_000n;
/** The producer id of benchmark commands (0 and 1 are the exchange's clock and control plane, 2.. its gateways). */
const PRODUCER = 100;

export class CommandHeaders {
  /** The last stamp, ns as (hi, lo). */
  tsHi = Number(T0_NS / BigInt(TWO32));
  tsLo = Number(T0_NS % BigInt(TWO32));
  private correlation = 0;

  /** Zeroes `size` bytes at `o` and writes the header of a command of `type` for `account`. */
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
