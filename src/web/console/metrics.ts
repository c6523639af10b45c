// metrics: the console's reading of GET /metrics (Prometheus text 0.0.4, the
// figures the exchange already keeps, src/metrics) into time series over the
// last minutes: engine throughput and lag, durable lag, ring occupancy, held
// requests, request rate and HTTP latency by route (from histogram bucket
// deltas between two scrapes). Browser main thread.

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = LINE.exec(line);
    if (m === null) continue;
    const labels: Record<string, string> = {};
    if (m[2] !== undefined)
      for (const l of m[2].matchAll(LABEL)) labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_x, c: string) => (c === 'n' ? '\n' : c));
    const value = m[3] === '+Inf' ? Infinity : Number(m[3]);
    out.push({ name: m[1]!, labels, value });
  }
  return out;
}

function one(samples: Sample[], name: string): number {
  return samples.find((s) => s.name === name)?.value ?? 0;
}

/** A latency histogram of one (lane, route): cumulative counts per upper bound (s), sum, count. */
interface Histogram {
  buckets: [number, number][];
  sum: number;
  count: number;
}

function histograms(samples: Sample[]): Map<string, Histogram> {
  const out = new Map<string, Histogram>();
  const get = (s: Sample): Histogram => {
    const key = `${s.labels.lane}/${s.labels.route}`;
    let h = out.get(key);
    if (h === undefined) out.set(key, (h = { buckets: [], sum: 0, count: 0 }));
    return h;
  };
  for (const s of samples) {
    if (s.name === 'dx_http_request_duration_seconds_bucket')
      get(s).buckets.push([s.labels.le === '+Inf' ? Infinity : Number(s.labels.le), s.value]);
    else if (s.name === 'dx_http_request_duration_seconds_sum') get(s).sum = s.value;
    else if (s.name === 'dx_http_request_duration_seconds_count') get(s).count = s.value;
  }
  for (const h of out.values()) h.buckets.sort((a, b) => a[0] - b[0]);
  return out;
}

/** The q-quantile (upper bucket bound, s) of the requests between two scrapes; null without requests. */
function quantile(now: Histogram, then: Histogram | undefined, q: number): number | null {
  const n = now.count - (then?.count ?? 0);
  if (n <= 0) return null;
  const rank = q * n;
  for (let i = 0; i < now.buckets.length; i++) {
    const [le, c] = now.buckets[i]!;
    const before = then?.buckets[i]?.[1] ?? 0;
    if (c - before >= rank) return Number.isFinite(le) ? le : (now.buckets[i - 1]?.[0] ?? le);
  }
  return null;
}

export interface RouteLatency {
  route: string;
  per_s: number;
  mean_ms: number;
  p50_ms: number | null;
  p99_ms: number | null;
}

export interface Point {
  t: number;
  commands_per_s: number;
  requests_per_s: number;
  engine_lag_ms: number;
  durable_lag_seqs: number;
  held: number;
  command_ring_pct: number;
  event_ring_pct: number;
  ws_connections: number;
  engine_seq: number;
  durable_seq: number;
  /** p99 (ms) per lane/route over the last scrape interval. */
  p99: Record<string, number>;
}

/** Keeps the last `keep` scrapes and derives one point per scrape. */
export class MetricsHistory {
  readonly points: Point[] = [];
  private prev: { t: number; hist: Map<string, Histogram>; responses: number; start: number } | null = null;
  /** Per-route figures over the last minute (or since the console opened). */
  routes: RouteLatency[] = [];
  private readonly window: { t: number; hist: Map<string, Histogram> }[] = [];

  constructor(private readonly keep = 300) {}

  add(text: string, t: number): Point {
    const s = parseProm(text);
    const hist = histograms(s);
    const responses = s.filter((x) => x.name === 'dx_http_responses_total').reduce((a, x) => a + x.value, 0);
    const ratio = (used: string, cap: string, by: string): number => {
      let best = 0;
      for (const u of s.filter((x) => x.name === used)) {
        const c = s.find((x) => x.name === cap && (x.labels[by] === undefined || x.labels[by] === u.labels[by]))?.value ?? 0;
        if (c > 0) best = Math.max(best, (100 * u.value) / c);
      }
      return best;
    };
    // A restarted exchange (a new process_start_time_seconds, or fewer answers than before) counts from zero again:
    // the figures since the last scrape, and the route table's minute, start over from an empty baseline.
    const start = one(s, 'process_start_time_seconds');
    if (this.prev !== null && (start !== this.prev.start || responses < this.prev.responses)) {
      this.prev = { t: this.prev.t, hist: new Map(), responses: 0, start };
      this.window.length = 0;
      this.window.push({ t: this.prev.t, hist: new Map() });
    }
    const p99: Record<string, number> = {};
    if (this.prev !== null) {
      for (const [k, h] of hist) {
        const v = quantile(h, this.prev.hist.get(k), 0.99);
        if (v !== null) p99[k] = v * 1000;
      }
    }
    const dt = this.prev === null ? 1 : Math.max(0.001, (t - this.prev.t) / 1000);
    const point: Point = {
      t: t / 1000,
      commands_per_s: one(s, 'dx_engine_commands_per_second'),
      requests_per_s: this.prev === null ? 0 : (responses - this.prev.responses) / dt,
      engine_lag_ms: one(s, 'dx_engine_lag_seconds') * 1000,
      durable_lag_seqs: one(s, 'dx_durable_lag_seqs'),
      held: one(s, 'dx_held_requests'),
      command_ring_pct: ratio('dx_command_ring_used_bytes', 'dx_command_ring_capacity_bytes', 'producer'),
      event_ring_pct: ratio('dx_event_ring_lag_bytes', 'dx_event_ring_capacity_bytes', 'consumer'),
      ws_connections: one(s, 'dx_ws_connections'),
      engine_seq: one(s, 'dx_engine_seq'),
      durable_seq: one(s, 'dx_durable_seq'),
      p99,
    };
    this.prev = { t, hist, responses, start };
    this.points.push(point);
    if (this.points.length > this.keep) this.points.shift();
    this.window.push({ t, hist });
    while (this.window.length > 1 && t - this.window[0]!.t > 60_000) this.window.shift();
    this.routes = this.routeTable(hist, t);
    return point;
  }

  private routeTable(now: Map<string, Histogram>, t: number): RouteLatency[] {
    const first = this.window[0]!;
    const span = Math.max(1, (t - first.t) / 1000);
    const out: RouteLatency[] = [];
    for (const [k, h] of now) {
      const then = first.hist.get(k);
      const n = h.count - (then?.count ?? 0);
      if (n <= 0) continue;
      const q50 = quantile(h, then, 0.5);
      const q99 = quantile(h, then, 0.99);
      out.push({
        route: k,
        per_s: n / span,
        mean_ms: ((h.sum - (then?.sum ?? 0)) / n) * 1000,
        p50_ms: q50 === null ? null : q50 * 1000,
        p99_ms: q99 === null ? null : q99 * 1000,
      });
    }
    return out.sort((a, b) => b.per_s - a.per_s);
  }
}
