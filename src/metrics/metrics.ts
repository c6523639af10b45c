// metrics: the exchange's operational counters in one SharedArrayBuffer, so
// that every thread counts locally and the control plane renders one merged
// Prometheus text exposition (GET /metrics, format 0.0.4) without messages.
//
// Layout: one slice of Float64 words per writer (slice 0 the control plane,
// 1 the accounts service, 2.. gateway threads), each written by exactly one
// thread with plain stores and read by the control plane when it renders.
// Aligned 8-byte stores and loads do not tear on the machines Node supports
// (x86-64, arm64), and a scrape that sees a value one update old is fine for
// monitoring; nothing here feeds a decision of the exchange.
//
// A slice holds: gauges (WebSocket connections, held requests, age of the
// oldest held request), responses by status and code, and one latency
// histogram per (lane, route). Route names come from a MetricsSpec built once
// on the main thread (spec.ts) and handed to workers as plain data, so this
// module imports no route table. Engine, ring and durability figures are read
// at render time from the buffers that already hold them (the engine control
// block, ring headers, the journal's durable_seq).
//
// Any thread may construct ThreadMetrics for its own slice; rendering is for
// the control-plane (main) thread.

import { CODES } from '../layout/records.js';

/** Slice 0 is the control plane, 1 the accounts service, 2 + i gateway thread i. */
export const SLICE_CONTROL = 0;
export const SLICE_ACCOUNTS = 1;
export const SLICE_GATEWAY0 = 2;

/** Latency histogram bucket upper bounds, seconds (+Inf is implied). */
export const LATENCY_BUCKETS_S: readonly number[] = [
  0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

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
/** Words per route histogram: one per finite bucket, +Inf, sum (seconds), count. */
const HIST_WORDS = LATENCY_BUCKETS_S.length + 3;

const UNMATCHED = '(unmatched)';
const OTHER_ROUTE = '(other)';

/** Route labels per lane; plain data (it crosses to worker threads in workerData). */
export interface MetricsSpec {
  lanes: { lane: string; routes: string[] }[];
}

interface Layout {
  /** Every (lane, route) label pair in histogram order. */
  labels: { lane: string; route: string }[];
  /** lane -> route -> histogram index. */
  index: Map<string, Map<string, number>>;
  sliceWords: number;
}

function layoutOf(spec: MetricsSpec): Layout {
  const labels: { lane: string; route: string }[] = [];
  const index = new Map<string, Map<string, number>>();
  for (const l of spec.lanes) {
    const m = new Map<string, number>();
    for (const r of [UNMATCHED, OTHER_ROUTE, ...l.routes]) {
      if (m.has(r)) continue;
      m.set(r, labels.length);
      labels.push({ lane: l.lane, route: r });
    }
    index.set(l.lane, m);
  }
  return { labels, index, sliceWords: HIST_AT + labels.length * HIST_WORDS };
}

/** The shared buffer: `slices` slices for the given spec. */
export function allocateMetrics(spec: MetricsSpec, slices: number): SharedArrayBuffer {
  return new SharedArrayBuffer(layoutOf(spec).sliceWords * 8 * slices);
}

export function responseIndex(status: number, code: string | null): number {
  if (code !== null) {
    const i = CODES.findIndex((c) => c.code === code);
    return i >= 0 ? SUCCESS_STATUSES.length + i : OTHER_STATUS;
  }
  const i = SUCCESS_STATUSES.indexOf(status);
  return i >= 0 ? i : OTHER_STATUS;
}

/**
 * The writer of one slice. It is an http.ts Observer (onResponse), and holds
 * the gauges its thread feeds (WebSocket connections, held requests).
 */
export class ThreadMetrics {
  private readonly f64: Float64Array;
  private readonly routes: Map<string, number>;
  private readonly codeIndex = new Map<string, number>();
  private watcher: ReturnType<typeof setInterval> | null = null;

  constructor(sab: SharedArrayBuffer, spec: MetricsSpec, slice: number, readonly lane: string) {
    const layout = layoutOf(spec);
    const routes = layout.index.get(lane);
    if (!routes) throw new Error(`metrics: no lane ${lane} in the spec`);
    this.routes = routes;
    if (sab.byteLength < (slice + 1) * layout.sliceWords * 8) throw new Error(`metrics: no slice ${slice} in the buffer`);
    this.f64 = new Float64Array(sab, slice * layout.sliceWords * 8, layout.sliceWords);
    for (const c of CODES) this.codeIndex.set(c.code, responseIndex(0, c.code));
  }

  /** Observer: one answered request of `route` (its name in the lane's table, '' before a route matched). */
  onResponse(route: string, status: number, code: string | null, micros: number): void {
    const f = this.f64;
    const r = code === null ? responseIndex(status, null) : this.codeIndex.get(code) ?? OTHER_STATUS;
    f[RESPONSES_AT + r] = f[RESPONSES_AT + r]! + 1;
    const h = HIST_AT + (this.routes.get(route === '' ? UNMATCHED : route) ?? this.routes.get(OTHER_ROUTE)!) * HIST_WORDS;
    const s = micros / 1e6;
    let b = 0;
    while (b < LATENCY_BUCKETS_S.length && s > LATENCY_BUCKETS_S[b]!) b++;
    f[h + b] = f[h + b]! + 1;
    f[h + LATENCY_BUCKETS_S.length + 1] = f[h + LATENCY_BUCKETS_S.length + 1]! + s;
    f[h + LATENCY_BUCKETS_S.length + 2] = f[h + LATENCY_BUCKETS_S.length + 2]! + 1;
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
   * age of the oldest is the engine lag DESIGN 1 sheds on.
   */
  watch(core: { pending: number; oldestHeldMs(nowMs: number): number }, everyMs = 100): void {
    this.unwatch();
    this.watcher = setInterval(() => this.held(core.pending, core.oldestHeldMs(Date.now())), everyMs);
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
  /** Slice names (control, accounts, gateway-0, ...), index = slice. */
  slices: string[];
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
  private readonly f64: Float64Array;
  private readonly slices: number;
  private rate = 0;
  private last: { t: number; commands: number } | null = null;
  private sampler: ReturnType<typeof setInterval> | null = null;
  private readonly started = Date.now() - process.uptime() * 1000;

  constructor(readonly sab: SharedArrayBuffer, readonly spec: MetricsSpec, private readonly sources: MetricsSources) {
    this.layout = layoutOf(spec);
    this.slices = Math.floor(sab.byteLength / (this.layout.sliceWords * 8));
    this.f64 = new Float64Array(sab);
  }

  /** A writer for one of the slices (threads other than main build their own from the buffer). */
  thread(slice: number, lane: string): ThreadMetrics {
    return new ThreadMetrics(this.sab, this.spec, slice, lane);
  }

  /** Samples the engine's command counter; the rate is over the time since the previous sample. */
  sample(nowMs = Date.now()): void {
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
    return this.f64[slice * this.layout.sliceWords + i]!;
  }

  render(): string {
    const x = new Exposition();
    const src = this.sources;
    const n = this.slices;

    const e = src.engine?.();
    if (e) {
      x.family('dx_engine_seq', 'gauge', 'Last sequenced seq.');
      x.sample('dx_engine_seq', null, e.seq);
      x.family('dx_engine_commands_total', 'counter', 'Commands the engine took from its rings (every ClockTick included, also those dropped with nothing due).');
      x.sample('dx_engine_commands_total', null, e.commands);
      x.family('dx_engine_commands_per_second', 'gauge', 'dx_engine_commands_total per second over the last sampling interval (about 1 s).');
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
    x.family('dx_engine_lag_seconds', 'gauge', 'Age of the oldest request held for its sequenced outcome, across threads (0 when none); placements are shed above half the response budget.');
    x.sample('dx_engine_lag_seconds', null, oldest / 1000);
    x.family('dx_held_requests', 'gauge', 'Requests held for their sequenced outcome, across threads.');
    x.sample('dx_held_requests', null, held);
    x.family('dx_ws_connections', 'gauge', 'Open WebSocket connections, across gateway threads.');
    x.sample('dx_ws_connections', null, ws);

    if (src.commandRings && src.commandRings.length > 0) {
      x.family('dx_command_ring_used_bytes', 'gauge', 'Bytes written to a producer\'s command ring and not yet released by the engine (released in batches).');
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
      x.family('dx_event_ring_lag_bytes', 'gauge', 'Bytes of events published but not yet released by a consumer (journal, read models); the engine waits when one reaches capacity.');
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
    x.family('dx_http_request_duration_seconds', 'histogram', 'Time from a request\'s headers to its answer, by lane and route.');
    const L = LATENCY_BUCKETS_S.length;
    for (let i = 0; i < this.layout.labels.length; i++) {
      const h = HIST_AT + i * HIST_WORDS;
      let count = 0;
      for (let s = 0; s < n; s++) count += this.word(s, h + L + 2);
      if (count === 0) continue;
      const { lane, route } = this.layout.labels[i]!;
      let cum = 0;
      for (let b = 0; b <= L; b++) {
        for (let s = 0; s < n; s++) cum += this.word(s, h + b);
        x.sample('dx_http_request_duration_seconds_bucket', { lane, route, le: b < L ? String(LATENCY_BUCKETS_S[b]) : '+Inf' }, cum);
      }
      let sum = 0;
      for (let s = 0; s < n; s++) sum += this.word(s, h + L + 1);
      x.sample('dx_http_request_duration_seconds_sum', { lane, route }, sum);
      x.sample('dx_http_request_duration_seconds_count', { lane, route }, count);
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
