// metrics: the exchange's operational counters in one SharedArrayBuffer, so
// that every thread counts locally and the control plane renders one merged
// Prometheus text exposition (GET /metrics, format 0.0.4) without messages.
//
// Layout: one slice of Float64 words per writer (slice 0 the control plane,
// 1 the keys service, 2.. gateway threads), each written by exactly one
// thread with plain stores and read by the control plane when it renders.
// Aligned 8-byte stores and loads do not tear on the machines Node supports
// (x86-64, arm64), and a scrape that sees a value one update old is fine for
// monitoring; nothing here feeds a decision of the exchange.
//
// A slice serves one lane (admin, accounts, rest) and holds: gauges
// (WebSocket connections, held requests, age of the oldest held request),
// responses by status and code, and per route of its lane one log-linear
// histogram (src/lib/log_histogram.ts, 16 sub-buckets per power of two:
// within 6.25%) per stage of a request (gateway/core.ts STAGES): the whole
// request, then head -> verified, -> published to the engine's ring, ->
// sequenced, -> durable, -> applied by this thread, -> reply written. Route
// names come from a MetricsSpec built once on the main thread (spec.ts) and
// handed to workers as plain data, so this module imports no route table.
// Engine, ring and durability figures are read at render time from the
// buffers that already hold them (the engine control block, ring headers,
// the journal's durable_seq and its fsync histogram).
//
// Any thread may construct ThreadMetrics for its own slice; rendering is for
// the control-plane (main) thread.

import { CODES } from '../layout/records.js';
import { histogramWords, LogHistogram, type LogHistogramShape } from '../lib/log_histogram.js';
import { STAGES, type StageTimes } from '../gateway/core.js';
import type { LatencyHistogram, LatencyReport } from '../wire/control_plane.js';

/** Slice 0 is the control plane, 1 the keys service, 2 + i gateway thread i. */
export const SLICE_CONTROL = 0;
export const SLICE_ACCOUNTS = 1;
export const SLICE_GATEWAY0 = 2;

/** Latency histograms: µs, 16 sub-buckets per power of two, up to 2^26 µs (67 s; longer ones are clamped and counted). */
export const LATENCY_SHAPE: LogHistogramShape = { subBits: 4, maxBits: 26 };
const HIST_WORDS = histogramWords(LATENCY_SHAPE);

/**
 * Bucket bounds of the exposition, µs: 16, 24, 32, 48, ... (two per power of
 * two) up to 2^25. Each is the exclusive upper edge of a bucket of the
 * histogram, so the count at or below it is exact (to the µs the values are
 * rounded to); +Inf is implied.
 */
export const EXPOSITION_BOUNDS_US: readonly number[] = (() => {
  const out: number[] = [];
  for (let p = 4; p <= 25; p++) {
    out.push(2 ** p);
    if (p < 25) out.push(3 * 2 ** (p - 1));
  }
  return out;
})();

/** Success statuses counted by status; errors are counted by code (each code has one status). */
const SUCCESS_STATUSES: readonly number[] = [200, 201, 202, 204];
const OTHER_STATUS = SUCCESS_STATUSES.length + CODES.length;
const RESPONSE_KINDS = OTHER_STATUS + 1;

// Gauge words at the start of a slice.
const G_WS_CONNECTIONS = 0;
const G_HELD = 1;
const G_OLDEST_HELD_MS = 2;
const GAUGES = 4;
const RESPONSES_AT = GAUGES;
const HIST_AT = RESPONSES_AT + RESPONSE_KINDS;
const ROUTE_WORDS = STAGES.length * HIST_WORDS;

const S_TOTAL = 0;
const S_VERIFY = 1;
const S_PUBLISH = 2;
const S_SEQUENCE = 3;
const S_DURABLE = 4;
const S_APPLY = 5;
const S_REPLY = 6;

const UNMATCHED = '(unmatched)';
const OTHER_ROUTE = '(other)';

/** Route labels per lane and the lane of each slice; plain data (it crosses to worker threads in workerData). */
export interface MetricsSpec {
  lanes: { lane: string; routes: string[] }[];
  /** Slice i: its name (control, accounts, gateway-0, ...) and the lane its thread answers. */
  slices: { name: string; lane: string }[];
}

interface Layout {
  /** lane -> its route labels in histogram order ((unmatched) and (other) first). */
  routes: Map<string, string[]>;
  /** Float64 word offset of each slice. */
  sliceAt: number[];
  words: number;
}

function layoutOf(spec: MetricsSpec): Layout {
  const routes = new Map<string, string[]>();
  for (const l of spec.lanes) routes.set(l.lane, [...new Set([UNMATCHED, OTHER_ROUTE, ...l.routes])]);
  const sliceAt: number[] = [];
  let at = 0;
  for (const sl of spec.slices) {
    const r = routes.get(sl.lane);
    if (!r) throw new Error(`metrics: slice ${sl.name} serves unknown lane ${sl.lane}`);
    sliceAt.push(at);
    at += HIST_AT + r.length * ROUTE_WORDS;
  }
  return { routes, sliceAt, words: at };
}

/** The index of the slice named `name` (a thread finds its second slice, e.g. `ws-0`). */
export function sliceNamed(spec: MetricsSpec, name: string): number {
  const i = spec.slices.findIndex((sl) => sl.name === name);
  if (i < 0) throw new Error(`metrics: no slice ${name} in the spec`);
  return i;
}

/** The shared buffer for the spec's slices. */
export function allocateMetrics(spec: MetricsSpec): SharedArrayBuffer {
  return new SharedArrayBuffer(layoutOf(spec).words * 8);
}

export function responseIndex(status: number, code: string | null): number {
  if (code !== null) {
    const i = CODES.findIndex((c) => c.code === code);
    return i >= 0 ? SUCCESS_STATUSES.length + i : OTHER_STATUS;
  }
  const i = SUCCESS_STATUSES.indexOf(status);
  return i >= 0 ? i : OTHER_STATUS;
}

/** The stage histograms of every route of a slice, over the shared buffer. */
function sliceHistograms(f64: Float64Array, at: number, routes: number): LogHistogram[][] {
  const out: LogHistogram[][] = [];
  for (let r = 0; r < routes; r++) {
    const stages: LogHistogram[] = [];
    for (let s = 0; s < STAGES.length; s++) {
      const o = at + HIST_AT + r * ROUTE_WORDS + s * HIST_WORDS;
      stages.push(new LogHistogram(LATENCY_SHAPE, f64.subarray(o, o + HIST_WORDS)));
    }
    out.push(stages);
  }
  return out;
}

/** Records b - a (µs) when both stamps were taken. */
function span(h: LogHistogram, a: number, b: number): void {
  if (a === a && b === b) h.record(b - a);
}

/**
 * The writer of one slice. It is an http.ts Observer (onResponse), and holds
 * the gauges its thread feeds (WebSocket connections, held requests).
 */
export class ThreadMetrics {
  readonly lane: string;
  private readonly f64: Float64Array;
  private readonly routes: Map<string, number>;
  private readonly hist: LogHistogram[][];
  private readonly codeIndex = new Map<string, number>();
  private watcher: ReturnType<typeof setInterval> | null = null;

  constructor(sab: SharedArrayBuffer, spec: MetricsSpec, slice: number) {
    const layout = layoutOf(spec);
    const sl = spec.slices[slice];
    if (!sl) throw new Error(`metrics: no slice ${slice} in the spec`);
    if (sab.byteLength < layout.words * 8) throw new Error('metrics: the buffer is smaller than the spec');
    this.lane = sl.lane;
    const names = layout.routes.get(sl.lane)!;
    this.routes = new Map(names.map((n, i) => [n, i]));
    const at = layout.sliceAt[slice]!;
    this.f64 = new Float64Array(sab, at * 8, HIST_AT + names.length * ROUTE_WORDS);
    this.hist = sliceHistograms(this.f64, 0, names.length);
    for (const c of CODES) this.codeIndex.set(c.code, responseIndex(0, c.code));
  }

  /**
   * Observer: one answered request of `route` (its name in the lane's table,
   * '' before a route matched) with its stage times: the whole request, and
   * each stage it passed.
   */
  onResponse(route: string, status: number, code: string | null, t: StageTimes): void {
    const f = this.f64;
    const r = code === null ? responseIndex(status, null) : this.codeIndex.get(code) ?? OTHER_STATUS;
    f[RESPONSES_AT + r] = f[RESPONSES_AT + r]! + 1;
    const h = this.hist[this.routes.get(route === '' ? UNMATCHED : route) ?? this.routes.get(OTHER_ROUTE)!]!;
    span(h[S_TOTAL]!, t.tHead, t.tReplied);
    if (t.tVerified !== t.tVerified) return;
    span(h[S_VERIFY]!, t.tHead, t.tVerified);
    if (t.tApplied !== t.tApplied) {
      // Not sequenced (a read, or refused before its command was written): the handler and the reply.
      span(h[S_REPLY]!, t.tVerified, t.tReplied);
      return;
    }
    span(h[S_PUBLISH]!, t.tVerified, t.tPublished);
    span(h[S_SEQUENCE]!, t.tPublished, t.tSequenced);
    span(h[S_DURABLE]!, t.tSequenced, t.tDurable);
    span(h[S_APPLY]!, t.tDurable === t.tDurable ? t.tDurable : t.tSequenced, t.tApplied);
    span(h[S_REPLY]!, t.tApplied, t.tReplied);
  }

  /** WebSocket lane: +1 on open, -1 on close. */
  wsConnections(delta: number): void {
    this.f64[G_WS_CONNECTIONS] = this.f64[G_WS_CONNECTIONS]! + delta;
  }

  /** Requests held for a sequenced outcome now, and how long the oldest has waited. */
  held(count: number, oldestMs: number): void {
    this.f64[G_HELD] = count;
    this.f64[G_OLDEST_HELD_MS] = oldestMs;
  }

  /**
   * Samples a producer's held requests every `everyMs` (unref'd timer): the
   * age of the oldest is the engine lag shedding looks at (docs/ARCHITECTURE.md section 8).
   */
  watch(core: { pending: number; oldestHeldMs(): number }, everyMs = 100): void {
    this.unwatch();
    this.watcher = setInterval(() => this.held(core.pending, core.oldestHeldMs()), everyMs);
    this.watcher.unref();
  }

  unwatch(): void {
    if (this.watcher !== null) clearInterval(this.watcher);
    this.watcher = null;
  }
}

// ---- rendering (control-plane thread) ------------------------------------------------

/** Where the figures that are not counted in slices come from. */
export interface MetricsSources {
  /** Engine control block: last seq, commands, batches, parks (src/main/engine_control.ts). */
  engine?: () => { seq: number; commands: number; batches: number; parks: number };
  /** Command ring buffers with their producer names (timer, control, gateway-0, ...). */
  commandRings?: { name: string; sab: SharedArrayBuffer }[];
  /** The event broadcast ring. */
  eventRing?: SharedArrayBuffer;
  /** The journal's durable_seq; without it no durability figures are shown. */
  durableSeq?: () => number;
  /** The journal thread's fdatasync durations, µs (JournalControl.fsyncHistogram). */
  journalFsync?: LogHistogram;
  /** Entries of the growing tables (the control plane's read model, the replay guard), by table name. */
  tables?: () => Record<string, number>;
}

// SpscRing header words (src/ring/spsc_ring.ts, "Buffer layout"): capacity
// at byte 12, write position at byte 64, read position at byte 128.
const SPSC_CAPACITY_IDX = 3;
const SPSC_WRITE_IDX = 16;
const SPSC_READ_IDX = 32;
// BroadcastRing header words (src/ring/broadcast_ring.ts, "Buffer layout"):
// capacity at byte 12, maxConsumers at byte 16, write position at byte 64,
// consumer i's cursor at byte 256 + 64 i and its state (session << 1 | active) next.
const BC_CAPACITY_IDX = 3;
const BC_MAX_CONSUMERS_IDX = 4;
const BC_WRITE_IDX = 16;

/** Bytes written but not yet released by the consumer (positions are u32 counters wrapping mod 2^32). */
export function spscUsedBytes(sab: SharedArrayBuffer): { used: number; capacity: number } {
  const h = new Uint32Array(sab, 0, 64);
  return { used: (Atomics.load(h, SPSC_WRITE_IDX) - Atomics.load(h, SPSC_READ_IDX)) >>> 0, capacity: h[SPSC_CAPACITY_IDX]! };
}

/** Per active consumer: bytes published but not yet released by it. */
export function broadcastLag(sab: SharedArrayBuffer): { capacity: number; consumers: { index: number; lag: number }[] } {
  const head = new Uint32Array(sab, 0, 16);
  const max = head[BC_MAX_CONSUMERS_IDX]!;
  const h = new Uint32Array(sab, 0, (256 + 64 * max) >>> 2);
  const w = Atomics.load(h, BC_WRITE_IDX);
  const consumers: { index: number; lag: number }[] = [];
  for (let i = 0; i < max; i++) {
    const at = (256 + 64 * i) >>> 2;
    if ((Atomics.load(h, at + 1) & 1) === 0) continue;
    consumers.push({ index: i, lag: (w - Atomics.load(h, at)) >>> 0 });
  }
  return { capacity: head[BC_CAPACITY_IDX]!, consumers };
}

function esc(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function num(v: number): string {
  if (v === Infinity) return '+Inf';
  return Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(12)));
}

/** Builds the text exposition one metric family at a time. */
class Exposition {
  private readonly lines: string[] = [];

  family(name: string, type: 'counter' | 'gauge' | 'histogram', help: string): void {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  }

  sample(name: string, labels: Record<string, string> | null, value: number): void {
    const l = labels === null ? '' : `{${Object.entries(labels).map(([k, v]) => `${k}="${esc(v)}"`).join(',')}}`;
    this.lines.push(`${name}${l} ${num(value)}`);
  }

  text(): string {
    return `${this.lines.join('\n')}\n`;
  }
}

/**
 * The control plane's view of every slice plus the live sources. `sample()`
 * (once a second, see start()) keeps the engine's command rate.
 */
export class MetricsRegistry {
  private readonly layout: Layout;
  /** Per slice, per route, per stage. */
  private readonly hist: LogHistogram[][][];
  private readonly f64: Float64Array;
  private rate = 0;
  private last: { t: number; commands: number } | null = null;
  private sampler: ReturnType<typeof setInterval> | null = null;
  private readonly started = Date.now() - process.uptime() * 1000;
  private readonly scratch = new LogHistogram(LATENCY_SHAPE);

  constructor(readonly sab: SharedArrayBuffer, readonly spec: MetricsSpec, private readonly sources: MetricsSources) {
    this.layout = layoutOf(spec);
    this.f64 = new Float64Array(sab);
    this.hist = spec.slices.map((sl, i) => sliceHistograms(this.f64, this.layout.sliceAt[i]!, this.layout.routes.get(sl.lane)!.length));
  }

  /** A writer for one of the slices (threads other than main build their own from the buffer). */
  thread(slice: number): ThreadMetrics {
    return new ThreadMetrics(this.sab, this.spec, slice);
  }

  /** Samples the engine's command counter; the rate is over the time since the previous sample (monotonic ms: a clock step is no time). */
  sample(nowMs = performance.now()): void {
    const e = this.sources.engine?.();
    if (!e) return;
    if (this.last !== null && nowMs > this.last.t) this.rate = ((e.commands - this.last.commands) * 1000) / (nowMs - this.last.t);
    this.last = { t: nowMs, commands: e.commands };
  }

  /** Starts the once-a-second sampler (unref'd). */
  start(): void {
    this.sample();
    this.sampler = setInterval(() => this.sample(), 1000);
    this.sampler.unref();
  }

  stop(): void {
    if (this.sampler !== null) clearInterval(this.sampler);
    this.sampler = null;
  }

  private word(slice: number, i: number): number {
    return this.f64[this.layout.sliceAt[slice]! + i]!;
  }

  /** Calls fn for every (lane, route, stage) with a non-empty histogram, merged over the lane's slices (reused scratch). */
  private eachHistogram(fn: (lane: string, route: string, stage: string, h: LogHistogram) => void): void {
    for (const [lane, routes] of this.layout.routes) {
      for (let r = 0; r < routes.length; r++) {
        for (let st = 0; st < STAGES.length; st++) {
          const h = this.scratch;
          h.clear();
          this.spec.slices.forEach((sl, i) => {
            if (sl.lane === lane) h.merge(this.hist[i]![r]![st]!);
          });
          if (h.total > 0) fn(lane, routes[r]!, STAGES[st]!, h);
        }
      }
    }
  }

  /** Every non-empty latency histogram with its buckets (GET /admin/latency), and the journal's fsync histogram. */
  latency(): LatencyReport {
    const histograms: LatencyHistogram[] = [];
    const json = (lane: string, route: string, stage: string, h: LogHistogram): LatencyHistogram => {
      // count from the very bucket words reported (the journal's histogram is read live): never below them while a thread records.
      const buckets = h.nonEmpty();
      const count = buckets.reduce((n, b) => n + b[1], 0);
      return { lane, route, stage, count, sum_us: h.sum, max_us: h.max, buckets };
    };
    this.eachHistogram((lane, route, stage, h) => histograms.push(json(lane, route, stage, h)));
    const j = this.sources.journalFsync;
    return { histograms, journal_fsync: j && j.total > 0 ? json('journal', '', 'fsync', j) : null };
  }

  render(): string {
    const x = new Exposition();
    const src = this.sources;
    const n = this.spec.slices.length;

    const e = src.engine?.();
    if (e) {
      x.family('dx_engine_seq', 'gauge', 'Last sequenced seq.');
      x.sample('dx_engine_seq', null, e.seq);
      x.family(
        'dx_engine_commands_total',
        'counter',
        'Commands the engine took from its rings (every ClockTick included, also those dropped with nothing due).',
      );
      x.sample('dx_engine_commands_total', null, e.commands);
      x.family(
        'dx_engine_commands_per_second',
        'gauge',
        'dx_engine_commands_total per second over the last sampling interval (about 1 s).',
      );
      x.sample('dx_engine_commands_per_second', null, Math.round(this.rate * 100) / 100);
      x.family('dx_engine_batches_total', 'counter', 'Engine loop rounds that executed at least one command.');
      x.sample('dx_engine_batches_total', null, e.batches);
      x.family('dx_engine_parks_total', 'counter', 'Times the engine thread parked on its doorbell (idle).');
      x.sample('dx_engine_parks_total', null, e.parks);
      if (src.durableSeq) {
        const d = src.durableSeq();
        x.family('dx_durable_seq', 'gauge', 'Last seq whose events are on disk (the journal\'s durable_seq).');
        x.sample('dx_durable_seq', null, d);
        x.family('dx_durable_lag_seqs', 'gauge', 'Sequenced but not yet durable commands (engine seq - durable_seq).');
        x.sample('dx_durable_lag_seqs', null, Math.max(0, e.seq - d));
      }
    }

    let oldest = 0;
    let held = 0;
    let ws = 0;
    for (let s = 0; s < n; s++) {
      oldest = Math.max(oldest, this.word(s, G_OLDEST_HELD_MS));
      held += this.word(s, G_HELD);
      ws += this.word(s, G_WS_CONNECTIONS);
    }
    x.family(
      'dx_engine_lag_seconds',
      'gauge',
      'Age of the oldest request held for its sequenced outcome, across threads (0 when none); placements are shed above half the ' +
        'response budget.',
    );
    x.sample('dx_engine_lag_seconds', null, oldest / 1000);
    x.family('dx_held_requests', 'gauge', 'Requests held for their sequenced outcome, across threads.');
    x.sample('dx_held_requests', null, held);
    x.family('dx_ws_connections', 'gauge', 'Open WebSocket connections, across gateway threads.');
    x.sample('dx_ws_connections', null, ws);

    if (src.commandRings && src.commandRings.length > 0) {
      x.family(
        'dx_command_ring_used_bytes',
        'gauge',
        "Bytes written to a producer's command ring and not yet released by the engine (released in batches).",
      );
      const caps: [string, number][] = [];
      for (const r of src.commandRings) {
        const u = spscUsedBytes(r.sab);
        x.sample('dx_command_ring_used_bytes', { producer: r.name }, u.used);
        caps.push([r.name, u.capacity]);
      }
      x.family('dx_command_ring_capacity_bytes', 'gauge', 'Data capacity of a producer\'s command ring.');
      for (const [name, cap] of caps) x.sample('dx_command_ring_capacity_bytes', { producer: name }, cap);
    }
    if (src.eventRing) {
      const b = broadcastLag(src.eventRing);
      x.family(
        'dx_event_ring_lag_bytes',
        'gauge',
        'Bytes of events published but not yet released by a consumer (journal, read models); the engine waits when one reaches capacity.',
      );
      for (const c of b.consumers) x.sample('dx_event_ring_lag_bytes', { consumer: String(c.index) }, c.lag);
      x.family('dx_event_ring_capacity_bytes', 'gauge', 'Data capacity of the event ring.');
      x.sample('dx_event_ring_capacity_bytes', null, b.capacity);
    }

    // Responses by status and code, merged over slices.
    const resp = new Float64Array(RESPONSE_KINDS);
    for (let s = 0; s < n; s++) for (let k = 0; k < RESPONSE_KINDS; k++) resp[k] = resp[k]! + this.word(s, RESPONSES_AT + k);
    x.family('dx_http_responses_total', 'counter', 'Answered requests by HTTP status and error code ("" for successes), all listeners.');
    for (let k = 0; k < RESPONSE_KINDS; k++) {
      if (resp[k] === 0) continue;
      if (k < SUCCESS_STATUSES.length) x.sample('dx_http_responses_total', { status: String(SUCCESS_STATUSES[k]), code: '' }, resp[k]!);
      else if (k < OTHER_STATUS) {
        const c = CODES[k - SUCCESS_STATUSES.length]!;
        x.sample('dx_http_responses_total', { status: String(c.http), code: c.code }, resp[k]!);
      } else x.sample('dx_http_responses_total', { status: 'other', code: '' }, resp[k]!);
    }
    x.family('dx_rate_limited_total', 'counter', 'Requests refused 429 rate_limited (per-key token buckets).');
    x.sample('dx_rate_limited_total', null, resp[responseIndex(429, 'rate_limited')]!);
    x.family('dx_shed_total', 'counter', 'Requests refused 503 shed (back-pressure).');
    x.sample('dx_shed_total', null, resp[responseIndex(503, 'shed')]!);

    // Latency histograms by (lane, route), merged over slices; routes never called are left out.
    const buckets = (name: string, labels: Record<string, string>, h: LogHistogram): void => {
      for (const us of EXPOSITION_BOUNDS_US) x.sample(`${name}_bucket`, { ...labels, le: num(us / 1e6) }, h.countAtOrBelow(us - 1));
      const total = h.countAtOrBelow(Infinity); // the bucket words, read last: never below a bucket while a thread records
      x.sample(`${name}_bucket`, { ...labels, le: '+Inf' }, total);
      x.sample(`${name}_sum`, labels, h.sum / 1e6);
      x.sample(`${name}_count`, labels, total);
    };
    x.family('dx_http_request_duration_seconds', 'histogram', 'Time from a request\'s headers to its reply written, by lane and route.');
    this.eachHistogram((lane, route, stage, h) => {
      if (stage === 'total') buckets('dx_http_request_duration_seconds', { lane, route }, h);
    });
    x.family(
      'dx_request_stage_seconds',
      'histogram',
      'Time a request spent in each stage, by lane, route and stage: verify (headers to body verified), publish (to the command ' +
        'published to the engine), sequence (to the end of the engine round that sequenced it), durable (to the end of the journal group ' +
        'commit that covered it), apply (to this thread applying its completion), reply (to the reply written; for reads, from ' +
        'verified).',
    );
    this.eachHistogram((lane, route, stage, h) => {
      if (stage !== 'total') buckets('dx_request_stage_seconds', { lane, route, stage }, h);
    });
    const j = src.journalFsync;
    if (j) {
      x.family(
        'dx_journal_fsync_seconds',
        'histogram',
        'Duration of each fdatasync of the journal (group commit); none with --durability none.',
      );
      buckets('dx_journal_fsync_seconds', {}, j);
    }

    if (src.tables) {
      x.family('dx_table_entries', 'gauge', 'Entries of each table that grows with use (orders kept, keys, withdrawals, rounds, '
        + 'indexes, the replay guard, ...), as of the control plane\'s read model.');
      for (const [table, n] of Object.entries(src.tables())) x.sample('dx_table_entries', { table }, n);
    }

    const mem = process.memoryUsage();
    const cpu = process.cpuUsage();
    x.family('process_resident_memory_bytes', 'gauge', 'Resident memory of the exchange process (all threads).');
    x.sample('process_resident_memory_bytes', null, mem.rss);
    x.family('process_cpu_seconds_total', 'counter', 'User and system CPU time of the process (all threads).');
    x.sample('process_cpu_seconds_total', null, (cpu.user + cpu.system) / 1e6);
    x.family('process_start_time_seconds', 'gauge', 'When the process started, Unix seconds.');
    x.sample('process_start_time_seconds', null, Math.floor(this.started / 1000));
    return x.text();
  }
}
