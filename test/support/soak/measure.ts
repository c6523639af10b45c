// soak measure: one sample of the exchange process, and the judgement of a
// series of them. A sample holds, per thread (through the inspector: a full
// GC first, then process.memoryUsage(), the young generation's resident
// size and the count of active handles), the heap figures; for the process,
// resident memory and open file descriptors (/proc); from /metrics the held
// requests, ring occupancy and the entries of every growing table; and the
// journal's and snapshots' size on disk. The judgement is the issue's: after
// the warm-up, no thread's heap and no process RSS trend above 1 MiB per 10
// minutes (least-squares slope), and no table that keeps setting new highs.
//
// The resident memory is judged less the threads' young generations. V8
// sizes each thread's young generation (two semi-spaces, up to 16 MiB each)
// by its own heuristics: after a full GC at a low allocation rate it shrinks
// it, and it grows it back as objects survive. The gateway's moved by 25 MiB
// within a minute, back and forth every few minutes, which alone gave slopes
// of 6-13 MiB per 10 minutes over windows in which nothing else grew. A
// young generation holds only objects younger than a GC or two, so a leak
// cannot stay there: it shows in the heap after the full GC (judged per
// thread) or in native memory (the rest of the RSS). The raw RSS slope is
// printed beside it. Main thread of the soak.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { AdminClient } from '../../../src/client/admin_client.js';
import type { InspectorClient, WorkerTarget } from '../inspector.js';

export interface ThreadSample {
  heapUsed: number;
  heapTotal: number;
  /** Resident bytes of the young generation (new space and new large objects). */
  young: number;
  external: number;
  arrayBuffers: number;
  /** process.getActiveResourcesInfo().length in that thread: its timers, sockets, handles. */
  activeResources: number;
}

export interface Sample {
  /** ms since the load started. */
  t: number;
  rss: number;
  fds: number;
  threads: Record<string, ThreadSample>;
  /** Threads that did not answer in time (a thread spinning in a tight loop answers through an interrupt; a missing one is reported). */
  unanswered: string[];
  held: number;
  commandRingUsed: Record<string, number>;
  eventRingLag: Record<string, number>;
  tables: Record<string, number>;
  journalBytes: number;
  snapshotBytes: number;
  engineSeq: number;
  wsConnections: number;
}

/** A full GC, then the thread's memory and active handles, as JSON (gc needs --expose-gc on the exchange). */
const SAMPLE_EXPRESSION = `(() => {
  if (typeof gc === 'function') { gc(); gc(); }
  const m = process.memoryUsage();
  let young = 0;
  for (const s of process.getBuiltinModule('v8').getHeapSpaceStatistics()) {
    if (s.space_name === 'new_space' || s.space_name === 'new_large_object_space') young += s.physical_space_size;
  }
  return JSON.stringify({ heapUsed: m.heapUsed, heapTotal: m.heapTotal, young, external: m.external, arrayBuffers: m.arrayBuffers,
    activeResources: process.getActiveResourcesInfo().length });
})()`;

function threadName(w: WorkerTarget | null, used: Set<string>): string {
  let base = w === null ? 'main' : w.name !== '' ? w.name : w.url.includes('piscina') ? 'piscina' : 'worker';
  base = base.replace(/[^a-z0-9-]+/gi, '_').toLowerCase();
  let name = base;
  for (let i = 2; used.has(name); i++) name = `${base}_${i}`;
  used.add(name);
  return name;
}

/** Parses the Prometheus text: family -> label string -> value. */
export function parseMetrics(text: string): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) continue;
    let fam = out.get(m[1]!);
    if (!fam) out.set(m[1]!, (fam = new Map()));
    fam.set(m[2] ?? '', Number(m[3]));
  }
  return out;
}

function byLabel(fam: Map<string, number> | undefined, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  if (!fam) return out;
  for (const [labels, v] of fam) {
    const m = new RegExp(`${label}="([^"]*)"`).exec(labels);
    if (m) out[m[1]!] = v;
  }
  return out;
}

function dirBytes(dir: string): number {
  let n = 0;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
  for (const f of names) {
    try {
      n += statSync(join(dir, f)).size;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e; // pruned meanwhile
    }
  }
  return n;
}

export async function takeSample(t: number, pid: number, dataDir: string, insp: InspectorClient, admin: AdminClient): Promise<Sample> {
  const threads: Record<string, ThreadSample> = {};
  const unanswered: string[] = [];
  const used = new Set<string>();
  // Every thread, the snapshot worker (piscina) too: the exchange keeps one for its whole life (src/main/journal_jobs.ts).
  for (const w of [null, ...insp.workers]) {
    const name = threadName(w, used);
    try {
      threads[name] = await insp.evaluateJson<ThreadSample>(w, SAMPLE_EXPRESSION, 10_000);
    } catch (e) {
      unanswered.push(`${name}: ${(e as Error).message}`);
    }
  }
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const rss = Number(/VmRSS:\s+([0-9]+) kB/.exec(status)?.[1] ?? 0) * 1024;
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  const metrics = parseMetrics(await admin.metrics());
  const one = (name: string): number => [...(metrics.get(name)?.values() ?? [])][0] ?? 0;
  return {
    t, rss, fds, threads, unanswered,
    held: one('dx_held_requests'),
    commandRingUsed: byLabel(metrics.get('dx_command_ring_used_bytes'), 'producer'),
    eventRingLag: byLabel(metrics.get('dx_event_ring_lag_bytes'), 'consumer'),
    tables: byLabel(metrics.get('dx_table_entries'), 'table'),
    journalBytes: dirBytes(join(dataDir, 'journal')),
    snapshotBytes: dirBytes(join(dataDir, 'snapshots')),
    engineSeq: one('dx_engine_seq'),
    wsConnections: one('dx_ws_connections'),
  };
}

/** The process's resident memory less every thread's young generation (see the header). */
export function rssLessYoung(s: Sample): number {
  let young = 0;
  for (const t of Object.values(s.threads)) young += t.young;
  return s.rss - young;
}

const SNAPSHOT_BYTES = 'snapshots on disk (bytes)';

/**
 * A series that keeps growing: from sample `from` on (taken at fromMs), the
 * second half sets a new high above the first half's by more than 5% and 10.
 */
function newHighs(ys: number[], from: number, fromMs: number): { bad: boolean; why: string; unjudged?: true } {
  const settled = ys.slice(from);
  const fullAt = `${(fromMs / 60_000).toFixed(1)} min`;
  if (settled.length < 4) return { bad: false, why: `the capped tables filled until ${fullAt}`, unjudged: true };
  const since = from === 0 ? '' : ` (from ${fullAt}, when the capped tables were full)`;
  const half = Math.floor(settled.length / 2);
  const early = Math.max(...settled.slice(0, half));
  const late = Math.max(...settled.slice(half));
  return { bad: late > early * 1.05 + 10, why: `max ${early} in the first half of the window${since}, ${late} in the second` };
}

/** The first sample from which every named table stays at its highest value of the series (0 when none is named). */
function filledAt(samples: Sample[], names: string[]): number {
  let at = 0;
  for (const n of names) {
    const ys = samples.map((s) => s.tables[n] ?? 0);
    const max = Math.max(0, ...ys);
    let i = ys.length;
    while (i > 0 && ys[i - 1] === max) i--;
    at = Math.max(at, i);
  }
  return Math.min(at, Math.max(0, samples.length - 1));
}

/** Least-squares slope of y over x. */
export function slope(xs: number[], ys: number[]): number {
  const n = xs.length;
  if (n < 2) return 0;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i]! - mx) * (ys[i]! - my);
    den += (xs[i]! - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}

const TEN_MIN_MS = 600_000;
const MIB = 1 << 20;

export interface Trend {
  what: string;
  /** Least-squares slope over the judged samples, per 10 minutes (bytes, or entries for tables). */
  per10min: number;
  first: number;
  last: number;
  max: number;
  verdict: 'ok' | 'FAIL' | 'not judged';
  why: string;
}

export interface Judgement {
  warmupMs: number;
  /** Samples after the warm-up that were judged. */
  judged: number;
  windowMs: number;
  memory: Trend[];
  tables: Trend[];
  ok: boolean;
}

export interface JudgeOptions {
  warmupMs: number;
  /** Tables with a known bound (from the caps): one that stays within it is not growing without bound, even while it still fills up. */
  bounds?: Record<string, number>;
  /** Trends are judged only over a window at least this long after the warm-up (shorter: reported, not judged). */
  minWindowMs: number;
  /** Allowed memory slope, bytes per 10 minutes (the issue: 1 MiB). */
  maxBytesPer10Min?: number;
}

/**
 * The memory trends (every thread's heapUsed after a full GC, the process
 * RSS less the young generations) and the table trends after the warm-up.
 * A table grows without bound when the second half of the judged window
 * sets a new high above the first half's by more than 5% and 10 entries: a
 * table held by a cap or by the load reaches its level and stays there. A
 * table with a known bound (its caps) must stay within it; the snapshots on
 * disk are judged from the sample where every such table is full.
 */
export function judge(samples: Sample[], o: JudgeOptions): Judgement {
  const maxSlope = o.maxBytesPer10Min ?? MIB;
  const after = samples.filter((s) => s.t >= o.warmupMs);
  const windowMs = after.length > 1 ? after[after.length - 1]!.t - after[0]!.t : 0;
  const judging = after.length >= 3 && windowMs >= o.minWindowMs;
  const xs = after.map((s) => s.t);
  const trend = (what: string, ys: number[], test: () => { bad: boolean; why: string; unjudged?: true }): Trend => {
    const per10min = slope(xs, ys) * TEN_MIN_MS;
    const short = `window ${Math.round(windowMs / 1000)} s after the warm-up, under ${Math.round(o.minWindowMs / 60_000)} min`;
    const r = judging ? test() : { bad: false, why: short, unjudged: true };
    return {
      what, per10min, first: ys[0] ?? 0, last: ys[ys.length - 1] ?? 0, max: Math.max(0, ...ys),
      verdict: r.unjudged ? 'not judged' : r.bad ? 'FAIL' : 'ok', why: r.why,
    };
  };
  const memory: Trend[] = [];
  const names = new Set<string>();
  for (const s of after) for (const n of Object.keys(s.threads)) names.add(n);
  const memTrend = (what: string, ys: number[]): Trend => trend(what, ys, () => {
    const per = slope(xs, ys) * TEN_MIN_MS;
    return { bad: per > maxSlope, why: `${(per / MIB).toFixed(3)} MiB per 10 min (limit ${(maxSlope / MIB).toFixed(1)})` };
  });
  for (const n of [...names].sort()) {
    const ys = after.map((s) => s.threads[n]?.heapUsed ?? NaN);
    if (ys.some((y) => Number.isNaN(y))) {
      const verdict = judging ? 'FAIL' : 'not judged';
      memory.push({ what: `heap ${n}`, per10min: 0, first: 0, last: 0, max: 0, verdict, why: 'the thread did not answer every sample' });
      continue;
    }
    memory.push(memTrend(`heap ${n}`, ys));
  }
  memory.push(memTrend('rss less young gens', after.map(rssLessYoung)));
  const raw = memTrend('rss process (raw)', after.map((s) => s.rss));
  if (raw.verdict !== 'not judged') raw.why = `${raw.why}; printed, not judged: young generations included`;
  memory.push({ ...raw, verdict: 'not judged' });
  const tables: Trend[] = [];
  const tableNames = new Set<string>();
  for (const s of after) for (const n of Object.keys(s.tables)) tableNames.add(n);
  const series: [string, (s: Sample) => number][] = [
    ...[...tableNames].sort().map((n): [string, (s: Sample) => number] => [`table ${n}`, (s) => s.tables[n] ?? 0]),
    ['held requests', (s) => s.held],
    ['open file descriptors', (s) => s.fds],
    ['journal segments on disk (bytes)', (s) => s.journalBytes],
    [SNAPSHOT_BYTES, (s) => s.snapshotBytes],
    ...[...names].sort().map((n): [string, (s: Sample) => number] => [`active handles ${n}`, (s) => s.threads[n]?.activeResources ?? 0]),
  ];
  // A snapshot holds the capped tables: while one still fills toward its
  // cap (the fill records took 10-15 minutes in the soak), the snapshot grows
  // with it, by as much as the cap allows. Its new highs count from the
  // sample where every capped table has reached its level.
  const filled = filledAt(after, Object.keys(o.bounds ?? {}));
  for (const [what, get] of series) {
    const ys = after.map(get);
    const bound = what.startsWith('table ') ? o.bounds?.[what.slice(6)] : undefined;
    const from = what === SNAPSHOT_BYTES ? filled : 0;
    tables.push(trend(what, ys, () => {
      if (bound !== undefined) {
        const max = Math.max(...ys);
        return { bad: max > bound, why: `max ${max}, bound ${bound} (its caps)` };
      }
      return newHighs(ys, from, after[from]!.t);
    }));
  }
  const ok = [...memory, ...tables].every((t) => t.verdict !== 'FAIL');
  return { warmupMs: o.warmupMs, judged: after.length, windowMs, memory, tables, ok };
}
