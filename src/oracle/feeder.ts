// Oracle feeders: push price ticks {source_id, price} to the exchange, which
// sequences each one as a SubmitOracleTick command (so ticks are journaled and
// a round's proposal can be replayed). A feeder owns its timing; a TickSink
// says where ticks go: the control plane over HTTP (adminSink, any process
// holding the operator token) or the control plane's own ring (coreSink, in
// the exchange process). Prices are in oracle units (price x 1e8) as safe
// integers.
//
// SimulatedFeeder is a seeded geometric random walk with a little independent
// noise per source, used by the demo and the tests. It can take sources
// offline (an outage) to show rounds waiting for a fresh quorum. Main thread
// (or any thread with an event loop); never blocks.

import type { AdminClient } from '../client/admin_client.js';
import { mulberry32 as rng } from '../lib/rng.js';
import { DxApiError } from '../client/errors.js';

/** Oracle units per 1.0 of price. */
export const ORACLE_SCALE = 100_000_000;

export interface OracleTick {
  source_id: number;
  /** Price x 1e8, a safe integer >= 1. */
  price: number;
}

/** Delivers one tick; resolves once the exchange sequenced it (rejects with the refusal otherwise). */
export type TickSink = (tick: OracleTick) => Promise<void>;

export interface OracleFeeder {
  start(): void;
  /** Stops the timer and waits for ticks in flight. */
  stop(): Promise<void>;
}

/** Ticks through POST /admin/oracle/ticks. */
export function adminSink(admin: AdminClient): TickSink {
  return async (t) => {
    await admin.oracleTick({ source_id: t.source_id, price: String(t.price) });
  };
}


export interface SimulatedFeederOptions {
  sink: TickSink;
  /** Source ids, 0..63. Default [0, 1, 2]. */
  sources?: number[];
  /** Time between rounds of ticks (one per online source). Default 1000 ms. */
  interval_ms?: number;
  /** Starting mid price (plain units, e.g. 65000 for 65,000.00). Default 65000. */
  start_price?: number;
  /** Volatility of the mid per square-root second (0.0005 = 0.05 %/sqrt(s)). Default 0.0005. */
  sigma_per_sqrt_s?: number;
  /** Independent noise of each source around the mid, basis points (1 sigma). Default 1. */
  noise_bps?: number;
  seed?: number;
  /** Called when a tick is refused or cannot be delivered (the feeder goes on). */
  onError?: (e: unknown, tick: OracleTick) => void;
}

export class SimulatedFeeder implements OracleFeeder {
  readonly sources: number[];
  readonly intervalMs: number;
  readonly sigma: number;
  private mid: number;
  private readonly noise: number;
  private readonly random: () => number;
  private readonly sink: TickSink;
  private readonly onError: (e: unknown, tick: OracleTick) => void;
  private readonly offline = new Set<number>();
  private timer: ReturnType<typeof setInterval> | null = null;
  private inFlight: Promise<void> | null = null;
  private lastStep = 0;
  /** Ticks delivered, and the last price each source sent (oracle units). */
  delivered = 0;
  readonly last = new Map<number, number>();

  constructor(o: SimulatedFeederOptions) {
    this.sink = o.sink;
    this.sources = o.sources ?? [0, 1, 2];
    for (const s of this.sources)
      if (!Number.isInteger(s) || s < 0 || s > 63) throw new RangeError(`oracle source ids are 0..63, got ${s}`);
    this.intervalMs = o.interval_ms ?? 1000;
    this.mid = (o.start_price ?? 65_000) * ORACLE_SCALE;
    this.sigma = o.sigma_per_sqrt_s ?? 0.0005;
    this.noise = (o.noise_bps ?? 1) / 10_000;
    this.random = rng(o.seed ?? 1);
    this.onError = o.onError ?? (() => undefined);
  }

  /** The current mid price, oracle units. */
  get midPrice(): number {
    return Math.round(this.mid);
  }

  /** A standard normal draw (Box-Muller). */
  private normal(): number {
    const u = Math.max(this.random(), 1e-12);
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * this.random());
  }

  /** Moves the mid by the time elapsed since the last step (geometric Brownian motion, no drift). */
  private step(nowMs: number): void {
    const dt = this.lastStep === 0 ? this.intervalMs / 1000 : Math.max(0, (nowMs - this.lastStep) / 1000);
    this.lastStep = nowMs;
    this.mid *= Math.exp(this.sigma * Math.sqrt(dt) * this.normal() - (this.sigma * this.sigma * dt) / 2);
  }

  /** One round of ticks now: every online source sends the mid plus its own noise. Resolves when all are delivered. */
  async tickOnce(nowMs = Date.now()): Promise<void> {
    this.step(nowMs);
    const ticks: OracleTick[] = [];
    for (const s of this.sources) {
      if (this.offline.has(s)) continue;
      const price = Math.max(1, Math.round(this.mid * (1 + this.noise * this.normal())));
      ticks.push({ source_id: s, price });
    }
    await Promise.all(ticks.map(async (t) => {
      try {
        await this.sink(t);
        this.delivered++;
        this.last.set(t.source_id, t.price);
      } catch (e) {
        if (e instanceof DxApiError || e instanceof Error) this.onError(e, t);
        else throw e;
      }
    }));
  }

  /** Takes sources offline (all when none given): they stop ticking until resume(). */
  pause(sources: number[] = this.sources): void {
    for (const s of sources) this.offline.add(s);
  }

  resume(sources: number[] = this.sources): void {
    for (const s of sources) this.offline.delete(s);
  }

  start(): void {
    if (this.timer !== null) return;
    const run = (): void => {
      if (this.inFlight !== null) return; // the exchange is slow: skip a beat rather than pile up
      this.inFlight = this.tickOnce().finally(() => {
        this.inFlight = null;
      });
    };
    run();
    this.timer = setInterval(run, this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
  }
}

/** The standard normal CDF (Abramowitz and Stegun 7.1.26, |error| < 1.5e-7). */
export function normalCdf(x: number): number {
  const z = Math.abs(x) / Math.SQRT2;
  const t = 1 / (1 + 0.3275911 * z);
  const y = 1 - ((((1.061405429 * t - 1.453152027) * t + 1.421413741) * t - 0.284496736) * t + 0.254829592) * t * Math.exp(-z * z);
  return x >= 0 ? (1 + y) / 2 : (1 - y) / 2;
}

/**
 * Probability that a driftless geometric random walk now at `price` ends at
 * or above `strike` after `seconds`, with volatility `sigma` per sqrt(s): the
 * fair value of a YES share in a "price >= strike at close" round.
 */
export function probabilityAbove(price: number, strike: number, sigma: number, seconds: number): number {
  if (strike <= 0) return 1;
  if (price <= 0) return 0;
  if (seconds <= 0 || sigma <= 0) return price >= strike ? 1 : 0;
  const s = sigma * Math.sqrt(seconds);
  return normalCdf((Math.log(price / strike) - (s * s) / 2) / s);
}
