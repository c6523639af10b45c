// format: how the CLI shows things to people: aligned tables, nanosecond
// timestamps as UTC times and countdowns, and the order book as a price
// ladder (cents and oracle units: src/lib/units.ts, shared with the web
// pages). --json bypasses all of this and prints the server's JSON. CLI
// process, main thread.

import type { Orderbook } from '../client/types.js';

/** An aligned text table; numbers-looking columns are right-aligned. */
export function table(headers: string[], rows: (string | number)[][]): string {
  if (rows.length === 0) return '(none)\n';
  const cells = rows.map((r) => r.map((c) => String(c)));
  const widths = headers.map((h, i) => Math.max(h.length, ...cells.map((r) => (r[i] ?? '').length)));
  const right = headers.map((_h, i) => cells.every((r) => /^[-+$0-9.,:%]*$/.test(r[i] ?? '')));
  const line = (r: string[]): string => r.map((c, i) => (right[i] ? c.padStart(widths[i]!) : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return `${[line(headers), ...cells.map(line)].join('\n')}\n`;
}

/** Key/value lines. */
export function fields(pairs: [string, string | number | boolean][]): string {
  const w = Math.max(...pairs.map(([k]) => k.length));
  return `${pairs.map(([k, v]) => `${k.padEnd(w)}  ${String(v)}`).join('\n')}\n`;
}

/** A ns timestamp string as an ISO UTC time (seconds), or "-" for 0. */
export function time(ns: string): string {
  if (ns === '0' || ns === '') return '-';
  const ms = Number(BigInt(ns) / 1_000_000n);
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

/** Time from now to a ns timestamp: "2m13s", "-5s" once passed. */
export function countdown(ns: string, nowMs = Date.now()): string {
  if (ns === '0' || ns === '') return '-';
  const s = Math.round((Number(BigInt(ns) / 1_000_000n) - nowMs) / 1000);
  const a = Math.abs(s);
  const txt =
    a >= 3600
      ? `${Math.floor(a / 3600)}h${String(Math.floor((a % 3600) / 60)).padStart(2, '0')}m`
      : a >= 60
        ? `${Math.floor(a / 60)}m${String(a % 60).padStart(2, '0')}s`
        : `${a}s`;
  return s < 0 ? `-${txt}` : txt;
}

/**
 * The book as one YES-price ladder: asks (derived from NO bids, ask = 100 -
 * NO bid) above, bids below, the spread between them.
 */
export function ladder(b: Orderbook): string {
  const asks = b.no.map(([t, q]) => [100 - t, q, t] as const).sort((x, y) => y[0] - x[0]);
  const bids = b.yes;
  const lines: string[] = ['         YES price      qty'];
  for (const [p, q, t] of asks) lines.push(`  ask  ${String(p).padStart(9)}  ${String(q).padStart(7)}   (NO bid ${t})`);
  const bestAsk = asks.length > 0 ? asks[asks.length - 1]![0] : 0;
  const bestBid = bids.length > 0 ? bids[0]![0] : 0;
  if (asks.length === 0 && bids.length === 0) lines.push('  (empty book)');
  else if (bestAsk && bestBid) lines.push(`  ------- spread ${bestAsk - bestBid} -------`);
  else lines.push('  -----------------------');
  for (const [p, q] of bids) lines.push(`  bid  ${String(p).padStart(9)}  ${String(q).padStart(7)}`);
  return `${lines.join('\n')}\n`;
}
