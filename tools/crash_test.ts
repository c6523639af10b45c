// crash_test: the crash proof of issue 4. Starts the real exchange as a child
// process (`node dist/src/main/exchange.js ... --durability fsync`), drives
// placements, cancels, decreases, fills between accounts, deposits and
// withdrawals (request, operator confirm/fail) through the client library on
// several connections at once, SIGKILLs the process at random moments (and
// now and then while it is still recovering), restarts it on the same data
// directory and checks the client-side ledger against what the restarted
// exchange serves:
//
//   - every command answered 2xx is there with the same seq and effects
//     (orders by order_id and client_order_id, their fills, acknowledged
//     cancels and decreases; withdrawals by client_withdrawal_id, with their
//     wid, seq and status; deposits in the exact balance of the non-trading
//     funding accounts);
//   - nothing shown before the kill is gone: the recovered seq is at least
//     every seq or as_of_seq any answer carried, and every new seq, order id,
//     wid and account id is above everything seen before the kill;
//   - a command cut off by the kill (transport error, timeout, 504) is looked
//     up and retried: a placement retry must be refused 409
//     duplicate_client_order_id naming the same order when it had landed and
//     must land exactly once otherwise; a withdrawal retry must answer the
//     same wid when it had landed; deposits carry no idempotency key (the
//     control plane's DepositBody has none), so an interrupted deposit is
//     resolved by the exact balance of its account and never retried;
//   - a refusal that the gateway answers before sequencing (400/429/503) never
//     shows up as an order;
//   - per trading account, cash, reservations and positions equal what its
//     own fills and live orders imply (no fees: fee schedule 0, because the
//     API does not expose fees_collected); accounts retired in an earlier
//     epoch stay bit-for-bit the same; over all accounts, available +
//     reserved + 100 x open pairs == deposits - confirmed withdrawals;
//   - gtd orders whose expiry passed (possibly while the exchange was down)
//     are no longer live;
//   - a final SIGTERM exits 0 and the restart after it loses nothing either.
//
// Usage: node dist/tools/crash_test.js [--kills N] [--seed S] [--gateways G]
//        [--traders T] [--load-ms MIN..MAX] [--kills-per-part K] [--stress]
//        [--verify] [--keep] [--json]
// N defaults to 30 (what `npm run test:crash` runs). More than K kills
// (default 30) run as parts of at most K kills, one after the other, each on a fresh data directory with its own seed (S, S+1, ...);
// every second part (and every part with --stress) uses tiny segments,
// frequent snapshots and kills aimed at snapshot writes
// (ROTATION_AND_SNAPSHOT_STRESS), so that kills land in segment rotations
// and snapshot writes. Exit 0 when every check held, 1 on any violation (a
// report lists each), 2 on bad usage. This file is the command line; the run is
// test/support/crash/ (driver.ts: the run and its lanes; ledger.ts: what
// was sent and answered; resolve.ts and checks.ts: what the restarted
// exchange must serve), which test/durability/crash.test.ts runs too.
// Main thread of its own process; the exchange runs in a child process.

import { pathToFileURL } from 'node:url';
import { parseCommandLine, parseOrUsage, UsageError } from '../src/lib/command_line.js';
import { ROTATION_AND_SNAPSHOT_STRESS, runCrashTest, type CrashOptions, type CrashReport } from '../test/support/crash/driver.js';
import { crashRunOptions, CRASH_RUN_OPTIONS, intArg } from '../test/support/crash/options.js';

const USAGE = 'usage: node dist/tools/crash_test.js [--kills N (default 30)] [--seed S] [--gateways G] [--traders T] [--load-ms MIN..MAX]'
  + ' [--kills-per-part K] [--stress] [--verify] [--keep] [--json]';

const OPTIONS = {
  ...CRASH_RUN_OPTIONS,
  gateways: { type: 'string' },
  traders: { type: 'string' },
  'kills-per-part': { type: 'string' },
  stress: { type: 'boolean' },
  verify: { type: 'boolean' },
} as const;

const DEFAULT_KILLS = 30;
const DEFAULT_KILLS_PER_PART = 30;

interface Parsed {
  o: CrashOptions;
  json: boolean;
  stress: boolean;
  killsPerPart: number;
}

/** The run's options from the command line, and whether to print the report as JSON too. */
function parse(argv: string[]): Parsed {
  const v = parseCommandLine(argv, OPTIONS, { positionals: false }).values;
  const o = crashRunOptions(v, DEFAULT_KILLS);
  o.gateways = intArg('gateways', v.gateways);
  o.traders = intArg('traders', v.traders);
  if (v.verify) o.verify = true;
  const killsPerPart = intArg('kills-per-part', v['kills-per-part']) ?? DEFAULT_KILLS_PER_PART;
  if (killsPerPart < 1) throw new UsageError('--kills-per-part needs at least 1');
  return { o, json: v.json === true, stress: v.stress === true, killsPerPart };
}

/** Where the kills landed, as aimed and as the data directory showed afterwards. */
function killPoints(c: Record<string, number>): string {
  return `${c.kills_aimed_at_snapshot ?? 0} aimed at a snapshot write (${c.kills_aimed_at_snapshot_missed ?? 0} missed), `
    + `${c.kills_aimed_at_rotation ?? 0} at a segment rotation (${c.kills_aimed_at_rotation_missed ?? 0} missed); `
    + `found after the kill: ${c.kills_mid_snapshot_write ?? 0} snapshot temp files, `
    + `${c.kills_mid_rotation ?? 0} new segments holding only their header`;
}

/** What the WebSocket lanes did, and how many checks their acknowledged orders passed after restarts. */
function wsCounts(c: Record<string, number>): string {
  return `over the WebSocket lane (each trader's second key): ${c.ws_connect_ok ?? 0} connections; placements `
    + `${c.ws_place_ok ?? 0} acknowledged / ${c.ws_place_uncertain ?? 0} cut off, cancels ${c.ws_cancel_ok ?? 0} / `
    + `${c.ws_cancel_uncertain ?? 0}, decreases ${c.ws_decrease_ok ?? 0} / ${c.ws_decrease_uncertain ?? 0}; `
    + `${c.ws_orders_checked ?? 0} checks of its orders`;
}

/** The report's lines: the verdict, the counts, the recoveries, each violation. */
function describe(r: CrashReport, title: string): string {
  const c = r.counts;
  return [
    `${title} ${r.ok ? 'PASSED' : 'FAILED'}: seed ${r.seed}, ${r.kills} kills (${r.kills_during_start} during a start), `
      + `${r.restarts} starts, ${r.epochs} epochs, ${r.seconds} s`,
    `  placements: ${c.place_ok ?? 0} acknowledged, ${c.place_rejected ?? 0} core rejects, ${c.place_refused ?? 0} refused, ` +
      `${c.place_uncertain ?? 0} cut off (${c.place_uncertain_had_landed ?? 0} had landed, ${c.place_uncertain_had_not_landed ?? 0} had ` +
      `not); fills acknowledged ${c.fills_acked ?? 0}`,
    `  cancels ${c.cancel_ok ?? 0} ok / ${c.cancel_uncertain ?? 0} cut off; decreases ${c.decrease_ok ?? 0} / ` +
      `${c.decrease_uncertain ?? 0}; deposits ${c.deposit_ok ?? 0} / ${c.deposit_uncertain ?? 0}; withdrawals ${c.withdraw_ok ?? 0} / ` +
      `${c.withdraw_uncertain ?? 0}; confirms ${c.confirm_ok ?? 0} / ${c.confirm_uncertain ?? 0}; fails ${c.fail_ok ?? 0} / ` +
      `${c.fail_uncertain ?? 0}; snapshots ${c.snapshot_ok ?? 0}`,
    `  ${wsCounts(c)}`,
    `  refused before sequencing: ${
      Object.entries(c)
        .filter(([k]) => k.endsWith('_refused'))
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
    `  checked: ${c.orders_checked ?? 0} order checks, ${c.withdrawals_checked ?? 0} withdrawal checks, ${c.conservation_checks ?? 0} ` +
      `conservation checks; recoveries from a snapshot ${c.recoveries_from_snapshot ?? 0}; torn tails ` +
      `${c.recovery_fault_torn_tail_truncated ?? 0}; journal verify at the end: ${c.journal_verify_runs ? 'run' : 'not run'}`,
    `  kill points: ${killPoints(c)}; starts removed ${c.recovery_fault_empty_segment_removed ?? 0} empty segments `
      + `and ${c.recovery_fault_torn_tail_truncated ?? 0} torn tails`,
    `  recovery: ${r.recoveries.map((x) => `${x.spawn_to_ready_ms}ms@${x.seq}`).join(' ')}`,
    ...r.violations.map((v) => `  VIOLATION ${v}`),
    r.ok ? '' : `  data dir kept: ${r.data_dir}`,
  ].join('\n') + '\n';
}

/** Sums the counts of several parts. */
function total(reports: CrashReport[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of reports) for (const [k, v] of Object.entries(r.counts)) out[k] = (out[k] ?? 0) + v;
  return out;
}

async function main(argv: string[]): Promise<number> {
  const p = parseOrUsage(() => parse(argv), USAGE, 'crash_test');
  if (p === null) return 2;
  process.once('SIGINT', () => process.exit(130)); // the exit hook SIGKILLs the exchange
  const parts = Math.ceil(p.o.kills / p.killsPerPart);
  const t0 = Date.now();
  const reports: CrashReport[] = [];
  for (let i = 0; i < parts; i++) {
    const kills = Math.min(p.killsPerPart, p.o.kills - i * p.killsPerPart);
    const stressed = p.stress || i % 2 === 1;
    const o: CrashOptions = { ...p.o, kills, seed: p.o.seed + i, ...(stressed ? ROTATION_AND_SNAPSHOT_STRESS : {}) };
    const r = await runCrashTest(o);
    reports.push(r);
    const stress = stressed ? ' (rotation and snapshot stress)' : '';
    const title = parts > 1 ? `part ${i + 1}/${parts}${stress}` : `crash test${stress}`;
    process.stdout.write(describe(r, title));
    if (!r.ok) break;
  }
  if (p.json) process.stdout.write(`${JSON.stringify(parts > 1 ? reports : reports[0], null, 2)}\n`);
  const ok = reports.every((r) => r.ok) && reports.length === parts;
  if (parts > 1) {
    const c = total(reports);
    const kills = reports.reduce((n, r) => n + r.kills, 0);
    process.stdout.write([
      `crash test ${ok ? 'PASSED' : 'FAILED'}: ${kills} kills in ${reports.length} parts `
        + `(seeds ${p.o.seed}..${p.o.seed + reports.length - 1}), ${Math.round((Date.now() - t0) / 1000)} s`,
      `  ${reports.reduce((n, r) => n + r.kills_during_start, 0)} kills during a start, `
        + `${reports.reduce((n, r) => n + r.restarts, 0)} starts; `
        + `placements ${c.place_ok ?? 0} acknowledged, ${c.place_uncertain ?? 0} cut off (${c.place_uncertain_had_landed ?? 0} had landed, `
        + `${c.place_uncertain_had_not_landed ?? 0} had not); fills ${c.fills_acked ?? 0}; withdrawals ${c.withdraw_ok ?? 0}; `
        + `${c.orders_checked ?? 0} order checks, ${c.conservation_checks ?? 0} conservation checks`,
      `  ${wsCounts(c)}`,
      `  kill points: ${killPoints(c)}; ${c.recoveries_from_snapshot ?? 0} recoveries from a snapshot, `
        + `${c.recovery_fault_torn_tail_truncated ?? 0} torn tails, ${c.recovery_fault_empty_segment_removed ?? 0} empty segments removed; `
        + `journal verify ${c.journal_verify_runs ?? 0} times`,
    ].join('\n') + '\n');
  }
  return ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    process.stderr.write(`crash_test: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
