// failover_test: the crash test's ledger against a replicated exchange
// (issue 15): a 3-node NATS cluster, a primary and a standby, primary
// SIGKILLs and NATS-leader kills under load, then convergence at rest. The
// run is test/support/crash/failover.ts (its header says what is checked);
// this file is the command line. `npm run test:failover` runs 20 primary
// kills and 5 NATS-leader kills.
//
// Usage: node dist/tools/failover_test.js --kills N [--nats-kills M] [--seed S]
//        [--lease-ms L] [--heartbeat-ms H] [--load-ms MIN..MAX] [--keep] [--json]
// Exit 0 when every check held, 1 on a violation, 2 on bad usage.

import { pathToFileURL } from 'node:url';
import { parseCommandLine, parseOrUsage } from '../src/lib/command_line.js';
import { nearestRank } from '../src/lib/log_histogram.js';
import { runFailoverTest, type FailoverOptions } from '../test/support/crash/failover.js';
import { crashRunOptions, CRASH_RUN_OPTIONS, intArg } from '../test/support/crash/options.js';

const USAGE =
  'usage: node dist/tools/failover_test.js --kills N [--nats-kills M] [--seed S] [--lease-ms L] [--heartbeat-ms H] [--load-ms MIN..MAX] ' +
    '[--keep] [--json]';

const OPTIONS = {
  ...CRASH_RUN_OPTIONS,
  'nats-kills': { type: 'string' },
  'lease-ms': { type: 'string' },
  'heartbeat-ms': { type: 'string' },
} as const;

function parse(argv: string[]): { o: FailoverOptions; json: boolean } {
  const v = parseCommandLine(argv, OPTIONS, { positionals: false }).values;
  const o: FailoverOptions = crashRunOptions(v);
  o.natsKills = intArg('nats-kills', v['nats-kills']);
  o.leaseMs = intArg('lease-ms', v['lease-ms']);
  o.heartbeatMs = intArg('heartbeat-ms', v['heartbeat-ms']);
  return { o, json: v.json === true };
}

function pct(xs: number[], p: number): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length, nearestRank(p, s.length)) - 1]!;
}

async function main(argv: string[]): Promise<number> {
  const parsed = parseOrUsage(() => parse(argv), USAGE, 'failover_test');
  if (parsed === null) return 2;
  const { o, json } = parsed;
  process.once('SIGINT', () => process.exit(130));
  const r = await runFailoverTest(o);
  if (json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  const c = r.counts;
  const fo = r.failovers.map((f) => f.kill_to_ack_ms);
  process.stdout.write(
    [
      `failover test ${r.ok ? 'PASSED' : 'FAILED'}: seed ${r.seed}, ${r.primary_kills} primary kills, ${r.nats_kills} NATS leader kills, ` +
        `${r.epochs} epochs, ${r.seconds} s`,
      `  placements: ${c.place_ok ?? 0} acknowledged, ${c.place_rejected ?? 0} core rejects, ${c.place_refused ?? 0} refused, ` +
        `${c.place_uncertain ?? 0} cut off (${c.place_uncertain_had_landed ?? 0} had landed, ${c.place_uncertain_had_not_landed ?? 0} ` +
        `had not); fills acknowledged ${c.fills_acked ?? 0}`,
      `  cancels ${c.cancel_ok ?? 0} / ${c.cancel_uncertain ?? 0} cut off; deposits ${c.deposit_ok ?? 0} / ${c.deposit_uncertain ?? 0}; ` +
        `withdrawals ${c.withdraw_ok ?? 0} / ${c.withdraw_uncertain ?? 0}; snapshots ${c.snapshot_ok ?? 0}`,
      `  checked: ${c.orders_checked ?? 0} order checks, ${c.withdrawals_checked ?? 0} withdrawal checks, ${c.conservation_checks ?? 0} ` +
        `conservation checks, ${c.convergence_checks ?? 0} convergence checks, ${c.journal_verify_runs ?? 0} journal verifies; rejoins ` +
        `that cut a tail ${c.rejoin_tail_truncated ?? 0}`,
      `  failover (kill to first acknowledged write): ` +
        `${fo.map((x) => `${x}ms`).join(' ')}${fo.length > 0 ? ` (median ${pct(fo, 50)} ms, max ${Math.max(...fo)} ms)` : ''}`,
      `  NATS leader kills: ` +
        `${r.nats_faults.map((x) => `${x.leader}${x.primary_stepped_down ? ' (primary stepped down)' : ''} outage ${x.outage_ms}ms`)
          .join(', ') || 'none'}`,
      r.convergence ? `  at rest: ${JSON.stringify(r.convergence)}` : '',
      ...r.violations.map((v) => `  VIOLATION ${v}`),
      r.ok ? '' : `  data dir kept: ${r.data_dir}`,
    ].join('\n') + '\n',
  );
  return r.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    process.stderr.write(`failover_test: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
