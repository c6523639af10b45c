// format: how both pages show the exchange's numbers. Money is integer cents
// (u64 strings), prices are ticks (cents of a 100-cent share), oracle prices
// are x 1e8, timestamps ns since the epoch. Never a float on the wire; only
// here, for display. Money and oracle prices are shown as the CLI shows
// them (src/lib/units.ts, plain functions). Browser main thread.

import { oracle } from '../../lib/units.js';

export { dollars } from '../../lib/units.js';

/** "65,000.25" from an oracle price x 1e8 ("-" for 0, the never-ticked sentinel). */
export function oraclePrice(raw: string): string {
  return raw === '0' ? '-' : oracle(raw);
}

export function nsToMs(ns: string): number {
  return Number(BigInt(ns) / 1_000_000n);
}

/** "14:03:27" (local time) of a ns timestamp. */
export function clock(ns: string): string {
  if (ns === '0') return '-';
  return new Date(nsToMs(ns)).toLocaleTimeString([], { hour12: false });
}

/** "2m05s" until a ns timestamp; "closed" once passed. */
export function countdown(ns: string, nowMs: number): string {
  if (ns === '0') return '-';
  const s = Math.ceil((nsToMs(ns) - nowMs) / 1000);
  if (s <= 0) return 'closed';
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** The price of an outcome in the other outcome's space (a NO bid at t is a YES ask at 100 - t). */
export function other(tick: number): number {
  return 100 - tick;
}
