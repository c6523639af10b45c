// disk_floor: what one group commit costs at least on this disk, for the
// benchmarks that compare a durable answer with it (durable_place,
// lone_place, ws_orders). Main thread of the bench runner.

import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { percentiles } from '../../test/support/bench/stats.js';

export interface DiskFloor {
  p50_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
  samples: number;
  /** Syncs over STALL_US. */
  stalls: number;
}

/** A sync slower than this counts as a stall of the device (DiskFloor.stalls). */
export const STALL_US = 10_000;

/**
 * Appends 4 KiB to a file in the temp directory the exchanges use and
 * fdatasyncs it, n times, each timed. With fsync on, no placement can be
 * answered faster than this, so its tail bounds the placement tail from below.
 * `gapMs` > 0 sleeps that long before each (the pace of lone placements): on
 * this VM a sync after an idle gap costs more than one of a back-to-back
 * series (p50 ~210 against ~150 µs here), and the journal of an idle exchange
 * syncs after gaps.
 */
export function diskFloor(n: number, gapMs = 0): DiskFloor {
  return probe(gapMs, (i) => i < n);
}

/**
 * The same probe for as long as an open loop runs (durationMs, a sync every
 * gapMs): on this virtual disk a single request now and then takes tens to
 * hundreds of ms (seen in block-layer tracepoints, docs/latency.md), a few
 * times a minute, which a probe of a second or two seldom meets but a 30 s
 * open loop always does.
 */
export function diskOverWindow(durationMs: number, gapMs: number): DiskFloor {
  const end = performance.now() + durationMs;
  return probe(gapMs, () => performance.now() < end);
}

function probe(gapMs: number, more: (i: number) => boolean): DiskFloor {
  const dir = mkdtempSync(join(tmpdir(), 'dx-bench-disk-'));
  const gap = new Int32Array(new SharedArrayBuffer(4));
  try {
    const fd = openSync(join(dir, 'probe'), 'w');
    const block = Buffer.alloc(4096, 0x5a);
    const ns: number[] = [];
    try {
      for (let i = 0; more(i); i++) {
        if (gapMs > 0) Atomics.wait(gap, 0, 0, gapMs);
        const t0 = process.hrtime.bigint();
        writeSync(fd, block);
        fdatasyncSync(fd);
        ns.push(Number(process.hrtime.bigint() - t0));
      }
    } finally {
      closeSync(fd);
    }
    const p = percentiles(Float64Array.from(ns), [50, 99, 99.9, 100]);
    const us = (q: number): number => Math.round(p.get(q)! / 1000);
    const stalls = ns.filter((v) => v > STALL_US * 1000).length;
    return { p50_us: us(50), p99_us: us(99), p999_us: us(99.9), max_us: us(100), samples: ns.length, stalls };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
