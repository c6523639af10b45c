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

/**
 * Busy and total jiffies of the whole machine (/proc/stat "cpu" line). Busy
 * leaves out time at a positive nice value: background jobs of the shared
 * machine (soak, crash and simulation runs) run at nice 19 and yield the CPU
 * to a benchmark (CFS weight 15 against 1024), so they are not counted as
 * foreign load that disturbs it.
 */
function machineJiffies(): { busy: number; total: number } {
  try {
    const line = readFileSync('/proc/stat', 'latin1').split('\n', 1)[0]!;
    const v = line.trim().split(/\s+/).slice(1).map(Number);
    // user nice system idle iowait irq softirq steal (guest fields are already in user).
    const total = v.slice(0, 8).reduce((a, b) => a + b, 0);
    const idle = v[3]! + v[4]!;
    return { busy: total - idle - v[1]!, total };
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
  /** Whole machine: busy % of one core (cores x 100 = everything busy), time at nice > 0 left out (see machineJiffies). */
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

/** The kernel function a thread sleeps in ("do_epoll_wait", "futex_do_wait", "0" when running). */
function wchan(pid: number, tid: number): string {
  try {
    return readFileSync(`/proc/${pid}/task/${tid}/wchan`, 'latin1').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw e;
  }
}

/**
 * The tids of the last `n` threads of an idle Node process that sleep in
 * epoll: a Node worker with its own event loop (a uWS gateway thread) waits
 * in epoll, while a worker parked in Atomics.wait (the engine) and V8's
 * platform threads wait on futexes. The main thread (tid = pid) and the
 * platform's delayed-task thread (the first epoll thread after it) come
 * first, so the last n epoll threads are the n most recently started
 * event-loop workers. Call it while the process is idle; returns fewer than
 * n when it cannot tell.
 */
export async function lastEventLoopThreads(pid: number, n: number): Promise<number[]> {
  // In start order: by start time (field 22, clock ticks), then tid (tids can wrap at pid_max).
  const started = new Map<number, number>();
  for (const t of threadCpuMs(pid).keys()) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'latin1');
      started.set(t, Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  const tids = [...started.keys()].filter((t) => t !== pid).sort((a, b) => started.get(a)! - started.get(b)! || a - b);
  // A thread that happens to be running shows wchan "0": sample a few times.
  const seen = new Set<number>();
  for (let i = 0; i < 20; i++) {
    for (const t of tids) if (wchan(pid, t).includes('epoll')) seen.add(t);
    await new Promise((r) => setTimeout(r, 25));
  }
  const epoll = tids.filter((t) => seen.has(t));
  return epoll.slice(Math.max(1, epoll.length - n));
}

export interface QuietResult {
  quiet: boolean;
  waited_ms: number;
  /** CPU of processes other than `own` in the last window, % of one core. */
  foreign_pct: number;
}

/**
 * Waits until processes other than `ownPids` used at most `maxForeignPct` of
 * one core for `windows` consecutive windows of `windowMs`, or until
 * `maxWaitMs` has passed (then quiet = false: the caller flags its result).
 * On a shared machine another job's CPU burst otherwise lands in the middle
 * of a throughput run.
 */
export async function waitQuiet(
  ownPids: number[],
  opts: { maxWaitMs: number; maxForeignPct?: number; windowMs?: number; windows?: number },
): Promise<QuietResult> {
  const limit = opts.maxForeignPct ?? 15;
  const windowMs = opts.windowMs ?? 1000;
  const need = opts.windows ?? 2;
  const t0 = performance.now();
  let ok = 0;
  let foreign = NaN;
  for (;;) {
    const pids: Record<string, number> = {};
    for (const p of ownPids) pids[String(p)] = p;
    const w = new CpuWindow(pids);
    await new Promise((r) => setTimeout(r, windowMs));
    const rep = w.stop();
    foreign = round1(rep.machine_pct - Object.values(rep.process_pct).reduce((a, b) => a + (Number.isFinite(b) ? b : 0), 0));
    ok = foreign <= limit ? ok + 1 : 0;
    const waited = performance.now() - t0;
    if (ok >= need) return { quiet: true, waited_ms: Math.round(waited), foreign_pct: foreign };
    if (waited >= opts.maxWaitMs) return { quiet: false, waited_ms: Math.round(waited), foreign_pct: foreign };
  }
}

/**
 * TCP segments sent so far by this network namespace (/proc/net/snmp Tcp
 * OutSegs); NaN where unreadable. Over loopback every segment is sent once
 * and received once, so the delta over a run, divided by the requests, says
 * how many segments one request/response exchange costs (about 2 when each
 * side writes its message in one send; more when a server writes a response
 * in pieces). Machine-wide for the namespace: read it on a quiet machine.
 */
export function tcpOutSegs(): number {
  try {
    const lines = readFileSync('/proc/net/snmp', 'latin1').split('\n').filter((l) => l.startsWith('Tcp:'));
    const names = lines[0]!.trim().split(/\s+/);
    const values = lines[1]!.trim().split(/\s+/);
    const i = names.indexOf('OutSegs');
    return i < 0 ? NaN : Number(values[i]);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return NaN;
    throw e;
  }
}

export interface ProcessMemory {
  /** Resident set (VmRSS), bytes. */
  rss: number;
  /** Peak resident set (VmHWM), bytes. */
  peak_rss: number;
  rss_anon: number;
  rss_file: number;
  rss_shmem: number;
}

/** Resident memory of a whole process from /proc/<pid>/status (kB lines); NaN fields where unreadable. */
export function processMemory(pid: number): ProcessMemory {
  const out: ProcessMemory = { rss: NaN, peak_rss: NaN, rss_anon: NaN, rss_file: NaN, rss_shmem: NaN };
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/status`, 'latin1');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT' || (e as NodeJS.ErrnoException).code === 'ESRCH') return out;
    throw e;
  }
  const field = (name: string): number => {
    const m = new RegExp(`^${name}:\\s+([0-9]+) kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : NaN;
  };
  out.rss = field('VmRSS');
  out.peak_rss = field('VmHWM');
  out.rss_anon = field('RssAnon');
  out.rss_file = field('RssFile');
  out.rss_shmem = field('RssShmem');
  return out;
}
