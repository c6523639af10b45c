// process_stats: CPU accounting of other processes (and of the machine) from
// /proc, for benchmarks that drive a server in a separate process. Main thread
// of the bench runner only. Linux only: elsewhere every reading is NaN, and
// the benchmark says so instead of reporting zeros.
//
// Units: /proc reports utime and stime in clock ticks; USER_HZ is 100 on
// Linux, so one tick is 10 ms and a window of a few seconds carries about 1%
// quantization error per core. Percentages are "% of one core" (200% = two
// cores busy), the figure `top` shows per process.

import { readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';

const TICK_MS = 10; // USER_HZ = 100

/** utime + stime of a /proc stat line, in ms; fields are counted after the ")" closing comm. */
function statCpuMs(stat: string): number {
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // After ")": field 3 (state) is f[0], so utime (14) is f[11] and stime (15) is f[12].
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

/** CPU ms used so far by a whole process (all its threads); NaN when it cannot be read. */
export function processCpuMs(pid: number): number {
  try {
    return statCpuMs(readFileSync(`/proc/${pid}/stat`, 'latin1'));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ESRCH') return NaN;
    throw e;
  }
}

export interface ThreadCpu {
  tid: number;
  /** Thread name (/proc/<pid>/task/<tid>/comm), e.g. "node", "libuv-worker". */
  comm: string;
  cpu_ms: number;
}

/** Per-thread CPU ms of a process, keyed by tid; empty when it cannot be read. */
export function threadCpuMs(pid: number): Map<number, ThreadCpu> {
  const out = new Map<number, ThreadCpu>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return out;
    throw e;
  }
  for (const t of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'latin1');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      out.set(Number(t), { tid: Number(t), comm, cpu_ms: statCpuMs(stat) });
    } catch (e) {
      // A thread that exited between readdir and read: not an error.
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT' && (e as NodeJS.ErrnoException).code !== 'ESRCH') throw e;
    }
  }
  return out;
}

/** Busy and total jiffies of the whole machine (/proc/stat "cpu" line). */
function machineJiffies(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest fields are already in user).
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = v[3]! + v[4]!;
    return { busy: total - idle, total };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { busy: NaN, total: NaN };
    throw e;
  }
}

export interface CpuReport {
  wall_ms: number;
  /** Per watched process: % of one core over the window. */
  process_pct: Record<string, number>;
  /** Per watched process: the busiest threads, % of one core, sorted descending. */
  threads: Record<string, { tid: number; comm: string; pct: number }[]>;
  /** Whole machine: busy % of one core (cores x 100 = everything busy). */
  machine_pct: number;
}

/**
 * A CPU window over named processes: `new CpuWindow({server: pid})`, run the
 * load, then `stop()`. The machine figure lets a reader see CPU used by
 * processes nobody watched (machine - server - generator): another job on
 * the box makes a result noisy, and this says by how much.
 */
export class CpuWindow {
  private readonly t0 = performance.now();
  private readonly proc0 = new Map<string, number>();
  private readonly threads0 = new Map<string, Map<number, ThreadCpu>>();
  private readonly machine0 = machineJiffies();

  constructor(private readonly pids: Record<string, number>) {
    for (const [name, pid] of Object.entries(pids)) {
      this.proc0.set(name, processCpuMs(pid));
      this.threads0.set(name, threadCpuMs(pid));
    }
  }

  stop(): CpuReport {
    const wall = performance.now() - this.t0;
    const m1 = machineJiffies();
    const process_pct: Record<string, number> = {};
    const threads: CpuReport['threads'] = {};
    for (const [name, pid] of Object.entries(this.pids)) {
      process_pct[name] = round1(((processCpuMs(pid) - this.proc0.get(name)!) / wall) * 100);
      const before = this.threads0.get(name)!;
      const rows: { tid: number; comm: string; pct: number }[] = [];
      for (const [tid, t] of threadCpuMs(pid)) {
        const d = t.cpu_ms - (before.get(tid)?.cpu_ms ?? 0);
        if (d > 0) rows.push({ tid, comm: t.comm, pct: round1((d / wall) * 100) });
      }
      rows.sort((a, b) => b.pct - a.pct);
      threads[name] = rows;
    }
    const dTotal = m1.total - this.machine0.total;
    const cores = dTotal / (wall / TICK_MS); // jiffies per wall tick = cores counted by /proc/stat
    const machine_pct = dTotal > 0 ? round1(((m1.busy - this.machine0.busy) / dTotal) * Math.round(cores) * 100) : NaN;
    return { wall_ms: Math.round(wall), process_pct, threads, machine_pct };
  }
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
