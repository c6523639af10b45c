// disk_floor: what one group commit costs at least on this disk, for the
// benchmarks that compare a durable answer with it (durable_place,
// lone_place, ws_orders). Main thread of the bench runner.

import { closeSync, fdatasyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { percentiles } from './stats.js';

export interface DiskFloor {
  p50_us: number;
  p99_us: number;
  p999_us: number;
  max_us: number;
  samples: number;
}

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
  const dir = mkdtempSync(join(tmpdir(), 'dx-bench-disk-'));
  const gap = new Int32Array(new SharedArrayBuffer(4));
  try {
    const fd = openSync(join(dir, 'probe'), 'w');
    const block = Buffer.alloc(4096, 0x5a);
    const ns = new Float64Array(n);
    try {
      for (let i = 0; i < n; i++) {
        if (gapMs > 0) Atomics.wait(gap, 0, 0, gapMs);
        const t0 = process.hrtime.bigint();
        writeSync(fd, block);
        fdatasyncSync(fd);
        ns[i] = Number(process.hrtime.bigint() - t0);
      }
    } finally {
      closeSync(fd);
    }
    const p = percentiles(ns, [50, 99, 99.9, 100]);
    const us = (q: number): number => Math.round(p.get(q)! / 1000);
    return { p50_us: us(50), p99_us: us(99), p999_us: us(99.9), max_us: us(100), samples: n };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
