// admin_commands: `dx admin ...`, the operator's commands over the control
// plane (bearer token): accounts, keys, deposits, fee schedules, markets,
// rounds, series, oracle ticks and the simulated feeder, withdrawals,
// snapshot, health and metrics. CLI process, main thread.

import { closeSync, existsSync, openSync, readFileSync, rmSync } from 'node:fs';
import { writeSecretFd } from '../lib/secret_file.js';
import { adminSink, ORACLE_SCALE, SimulatedFeeder } from '../oracle/feeder.js';
import { UsageError } from '../lib/command_line.js';
import { DxApiError } from '../client/errors.js';
import { dollars, oracle } from '../lib/units.js';
import { allowFlags, durationS, flag, int, oneOf, oraclePrice, positionals, requestPath, u64 } from './args.js';
import type { Command } from './client_commands.js';
import { DEFAULT_API_URL, type Ctx } from './context.js';
import { countdown, fields, table, time } from './format.js';
import type { RoundAction } from '../client/admin_client.js';
import type { SeriesItem } from '../client/types.js';

function optInt(ctx: Ctx, name: string, min: number, max: number, dflt: number): number {
  const v = flag(ctx.p, name);
  return v === undefined ? dflt : int(`--${name}`, v, min, max);
}

/** `dx admin <noun> <verb> ...`: the verb is the positional at `from`. */
type Run = (ctx: Ctx, from: number) => Promise<number | void>;

function verbs(usage: string, table_: Record<string, Run>): Run {
  return async (ctx, from) => {
    const verb = ctx.p.positionals[from];
    const run = verb === undefined || !Object.hasOwn(table_, verb) ? undefined : table_[verb];
    if (!run) throw new UsageError(verb === undefined ? 'missing action' : `unknown action ${JSON.stringify(verb)}`, usage);
    return run(ctx, from + 1);
  };
}

function seriesRow(s: SeriesItem): (string | number)[] {
  const r = s.round;
  return [
    s.category,
    s.market_id,
    s.title,
    `${s.period_s}s`,
    s.active ? 'yes' : 'stopped',
    r ? r.round_number : '-',
    r ? r.status : '-',
    r ? oracle(r.strike) : '-',
    r && r.status === 'trading' ? countdown(r.close_ts) : '-',
  ];
}

const ROUND_ACTIONS: readonly RoundAction[] = ['freeze', 'unfreeze', 'settle', 'void', 'dispute'];

export const ADMIN_USAGE = `dx admin <command>
  health | metrics | snapshot
  account create [--deposit cents] | account show <id> | account delete <id>
  key create <account_id> [--scopes read,trade,withdraw] [--save file.json]
  key tier <key_id> default|market_maker|institutional | key tier <key_id> custom --read rate/burst --write rate/burst
  deposit <account_id> <amount_cents> [--ref text]
  fee-schedule create <taker_bps> <maker_bps> | fee-schedule list
  ledger                                      (where the money is, and whether it adds up)
  market create <title> --category n [--position-limit n] [--fee-schedule n]
  round open <market_id> --strike <price> (--close-in 5m | --close-ts ns)
  round freeze|unfreeze|settle|void|dispute <market_id>
  round propose <market_id> [yes|no]          (no outcome: from the oracle)
  series create <title> --category n --period 5m [--position-limit n] [--fee-schedule n]
  series list | series stop <category>
  oracle tick <source_id> <price>             (price as a decimal, e.g. 65000.25)
  oracle feed [--sources 0,1,2] [--interval-ms 1000] [--start-price 65000] [--sigma 0.0005] [--seed n] [--rounds n]
  withdrawal confirm|fail <wid>
  get|post|delete <path> [json-body | -]      (any control-plane call)`;

/**
 * A key's --save file, opened before the key exists: a path that cannot be
 * written must not cost a key whose secret is then shown nowhere. Append mode
 * leaves a file that was there as it is until the key is written into it;
 * a file this opening created goes again when no key is made.
 */
function keyFile(path: string, usage: string): { write(text: string): void; abandon(): void } {
  const existed = existsSync(path);
  let fd: number;
  try {
    fd = openSync(path, 'a', 0o600);
  } catch (e) {
    throw new UsageError(`cannot write --save ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`, usage);
  }
  return {
    write(text: string): void {
      writeSecretFd(fd, text);
      closeSync(fd);
    },
    abandon(): void {
      closeSync(fd);
      if (!existed) rmSync(path, { force: true });
    },
  };
}

const ADMIN: Record<string, Run> = {
  health: async (ctx, from) => {
    allowFlags(ctx.p, [], 'dx admin health');
    positionals(ctx.p, from, 0, 0, 'dx admin health');
    const r = await ctx.admin().health();
    ctx.print(r, () => fields(Object.entries(r).map(([k, v]) => [k, typeof v === 'object' ? JSON.stringify(v) : String(v)])));
  },
  metrics: async (ctx, from) => {
    allowFlags(ctx.p, [], 'dx admin metrics');
    positionals(ctx.p, from, 0, 0, 'dx admin metrics');
    ctx.out(await ctx.admin().metrics());
  },
  snapshot: async (ctx, from) => {
    allowFlags(ctx.p, [], 'dx admin snapshot');
    positionals(ctx.p, from, 0, 0, 'dx admin snapshot');
    const r = await ctx.admin().snapshot();
    ctx.print(r, () => `snapshot at seq ${r.seq}: ${r.path}\n`);
  },

  account: verbs('dx admin account create [--deposit cents] | show <id> | delete <id>', {
    create: async (ctx, from) => {
      allowFlags(ctx.p, ['deposit'], 'dx admin account create [--deposit cents]');
      positionals(ctx.p, from, 0, 0, 'dx admin account create [--deposit cents]');
      const dep = flag(ctx.p, 'deposit');
      // The server credits at most 2^53 - 1 cents: a larger deposit is refused here, before the account exists.
      const amount = dep === undefined ? undefined : u64('--deposit', dep, 1n, BigInt(Number.MAX_SAFE_INTEGER));
      const a = ctx.admin();
      const r = await a.createAccount();
      let deposit: unknown = null;
      if (amount !== undefined) {
        const ref = 'dx admin account create';
        try {
          deposit = await a.deposit(r.account_id, { amount, ref });
        } catch (e) {
          // Only a refusal by the exchange says the deposit was not made; a 504, a 500 or no answer leaves it unknown.
          const refused = e instanceof DxApiError && e.refused;
          ctx.err(refused
            ? `dx: account ${r.account_id} was created (seq ${r.seq}), but its deposit was not made:\n`
            : `dx: account ${r.account_id} was created (seq ${r.seq}); its deposit may or may not have been made (no outcome seen). ` +
              `Repeat it with its ref, which credits it at most once: ` +
              `\`dx admin deposit ${r.account_id} ${amount} --ref '${ref}'\`:\n`);
          throw e;
        }
      }
      ctx.print({ ...r, deposit }, () => `account ${r.account_id}${amount ? ` funded with ${dollars(amount)}` : ''}\n`);
    },
    show: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx admin account show <id>');
      const [id] = positionals(ctx.p, from, 1, 1, 'dx admin account show <id>');
      const r = await ctx.admin().account(int('account_id', id, 1, 0xffffffff));
      ctx.print(r, () =>
        fields([
          ['account_id', r.account_id],
          ['deleted', r.deleted],
          ['available', dollars(r.available)],
          ['reserved', dollars(r.reserved)],
          ['positions', r.positions.map((p) => `${p.market_id}/${p.outcome} ${p.free}+${p.reserved_for_sale}`).join('  ') || '-'],
          [
            'keys',
            r.keys.map((k) => `${k.key_id}[${k.scopes.join(',')}]${k.revoked ? ' revoked' : ''}`).join('  ') || '-',
          ],
        ]),
      );
    },
    delete: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx admin account delete <id>');
      const [id] = positionals(ctx.p, from, 1, 1, 'dx admin account delete <id>');
      const r = await ctx.admin().deleteAccount(int('account_id', id, 1, 0xffffffff));
      ctx.print(r, () => `account deleted, its keys revoked (seq ${r.seq})\n`);
    },
  }),

  key: verbs('dx admin key create|tier ...', {
    create: async (ctx, from) => {
      const usage = 'dx admin key create <account_id> [--scopes read,trade,withdraw] [--save file.json]';
      allowFlags(ctx.p, ['scopes', 'save'], usage);
      const [id] = positionals(ctx.p, from, 1, 1, usage);
      const scopes = (flag(ctx.p, 'scopes') ?? 'read,trade')
        .split(',')
        .map((s) => oneOf('--scopes', s, ['read', 'trade', 'withdraw'] as const));
      const save = flag(ctx.p, 'save');
      const file = save === undefined ? null : keyFile(save, usage);
      let r;
      try {
        r = await ctx.admin().createKey(int('account_id', id, 1, 0xffffffff), scopes);
      } catch (e) {
        file?.abandon();
        throw e;
      }
      const url = flag(ctx.p, 'url') ?? ctx.env.DX_API_URL ?? DEFAULT_API_URL;
      file?.write(`${JSON.stringify({ key_id: r.key_id, secret: r.secret, url })}\n`);
      ctx.print(r, () =>
        fields([
          ['key_id', r.key_id],
          ['secret', save !== undefined ? `(saved in ${save})` : `${r.secret}  (shown once: keep it)`],
          ['scopes', r.scopes.join(',')],
        ]),
      );
    },
    tier: async (ctx, from) => {
      const usage = 'dx admin key tier <key_id> default|market_maker|institutional|custom [--read rate/burst --write rate/burst]';
      allowFlags(ctx.p, ['read', 'write'], usage);
      const [id, name] = positionals(ctx.p, from, 2, 2, usage);
      const tier = oneOf('tier', name!, ['default', 'market_maker', 'institutional', 'custom'] as const);
      const figures = (f: 'read' | 'write'): { sustained_rate_per_s: number; burst: number } | undefined => {
        const v = flag(ctx.p, f);
        if (v === undefined) {
          if (tier === 'custom') throw new UsageError(`tier custom needs --${f} rate/burst`, usage);
          return undefined;
        }
        if (tier !== 'custom') throw new UsageError(`--${f} goes with tier custom only`, usage);
        const m = /^([0-9]+)\/([0-9]+)$/.exec(v);
        if (!m) throw new UsageError(`--${f} must be rate/burst, e.g. 1000/2000`, usage);
        return { sustained_rate_per_s: int(`--${f} rate`, m[1]!, 1, 10_000_000), burst: int(`--${f} burst`, m[2]!, 1, 10_000_000) };
      };
      const read = figures('read');
      const write = figures('write');
      const r = await ctx
        .admin()
        .setKeyTier(int('key_id', id!, 1, 0xffffffff), { tier, ...(read ? { read } : {}), ...(write ? { write } : {}) });
      ctx.print(r, () => fields([
        ['key_id', r.key_id], ['tier', r.tier], ['read', `${r.read.sustained_rate_per_s}/s burst ${r.read.burst}`],
        ['write', `${r.write.sustained_rate_per_s}/s burst ${r.write.burst}`], ['seq', r.seq],
      ]));
    },
  }),

  deposit: async (ctx, from) => {
    const usage = 'dx admin deposit <account_id> <amount_cents> [--ref text]';
    allowFlags(ctx.p, ['ref'], usage);
    const [id, amount] = positionals(ctx.p, from, 2, 2, usage);
    const cents = u64('amount', amount, 1n);
    const r = await ctx.admin().deposit(int('account_id', id, 1, 0xffffffff), { amount: cents, ref: flag(ctx.p, 'ref') ?? '' });
    ctx.print(r, () => `deposited ${dollars(cents)} (seq ${r.seq})\n`);
  },

  'fee-schedule': verbs('dx admin fee-schedule create <taker_bps> <maker_bps> | fee-schedule list', {
    create: async (ctx, from) => {
      const usage = 'dx admin fee-schedule create <taker_bps> <maker_bps>';
      allowFlags(ctx.p, [], usage);
      const [t, m] = positionals(ctx.p, from, 2, 2, usage);
      const r = await ctx.admin().createFeeSchedule({ taker_bps: int('taker_bps', t, 0, 10000), maker_bps: int('maker_bps', m, 0, 10000) });
      ctx.print(r, () => `fee schedule ${r.fee_schedule_id}\n`);
    },
    list: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx admin fee-schedule list');
      positionals(ctx.p, from, 0, 0, 'dx admin fee-schedule list');
      const r = await ctx.admin().feeSchedules();
      const rows = r.fee_schedules.map((f) => [f.fee_schedule_id, f.taker_bps, f.maker_bps]);
      ctx.print(r, () => table(['fee_schedule', 'taker_bps', 'maker_bps'], rows));
    },
  }),

  ledger: async (ctx, from) => {
    allowFlags(ctx.p, [], 'dx admin ledger');
    positionals(ctx.p, from, 0, 0, 'dx admin ledger');
    const r = await ctx.admin().ledger();
    ctx.print(r, () => fields([
      ['deposits', dollars(r.deposits)], ['withdrawn', dollars(r.withdrawn)], ['available', dollars(r.available)],
      ['reserved', dollars(r.reserved)], ['withdrawals_pending', dollars(r.withdrawals_pending)], ['open_pairs', r.open_pairs],
      ['collateral', dollars(r.collateral)], ['fees_collected', dollars(r.fees_collected)], ['balanced', r.balanced ? 'yes' : 'NO'],
      ['as_of_seq', r.as_of_seq],
    ]));
  },

  market: verbs('dx admin market create <title> --category n [--position-limit n] [--fee-schedule n]', {
    create: async (ctx, from) => {
      const usage = 'dx admin market create <title> --category n [--position-limit n] [--fee-schedule n]';
      allowFlags(ctx.p, ['category', 'position-limit', 'fee-schedule'], usage);
      const [title] = positionals(ctx.p, from, 1, 1, usage);
      const category = flag(ctx.p, 'category');
      if (category === undefined) throw new UsageError('--category is required', usage);
      const r = await ctx.admin().createMarket({
        title: title!, category: int('--category', category, 0, 65535), position_limit: optInt(ctx, 'position-limit', 0, 0xffffffff, 0),
        fee_schedule_id: optInt(ctx, 'fee-schedule', 0, 0xffffffff, 0),
      });
      ctx.print(r, () => `market ${r.market_id} (closed until a round opens)\n`);
    },
  }),

  round: async (ctx, from) => {
    const usage =
      'dx admin round open <market_id> --strike <price> (--close-in 5m | --close-ts ns) | round freeze|unfreeze|settle|void|dispute ' +
        '<market_id> | round propose <market_id> [yes|no]';
    const verb = ctx.p.positionals[from];
    const a = ctx.admin();
    if (verb === 'open') {
      allowFlags(ctx.p, ['strike', 'close-in', 'close-ts'], usage);
      const [m] = positionals(ctx.p, from + 1, 1, 1, usage);
      const closeIn = flag(ctx.p, 'close-in');
      const closeTs = flag(ctx.p, 'close-ts');
      if ((closeIn === undefined) === (closeTs === undefined)) throw new UsageError('give exactly one of --close-in and --close-ts', usage);
      const close =
        closeTs !== undefined
          ? u64('--close-ts', closeTs, 1n)
          : String(BigInt(Date.now() + durationS('--close-in', closeIn) * 1000) * 1_000_000n);
      const r = await a.openRound(int('market_id', m, 1, 0xffffffff), {
        strike: oraclePrice('--strike', flag(ctx.p, 'strike')),
        close_ts: close,
      });
      ctx.print(r, () => `round ${r.round_number} trading until ${time(close)} (seq ${r.seq})\n`);
      return;
    }
    if (verb === 'propose') {
      allowFlags(ctx.p, [], usage);
      const [m, outcome] = positionals(ctx.p, from + 1, 1, 2, usage);
      const r = await a.proposeRound(
        int('market_id', m, 1, 0xffffffff),
        outcome === undefined ? undefined : oneOf('outcome', outcome, ['yes', 'no'] as const),
      );
      ctx.print(r, () => `round ${r.round_number} ${r.status} (seq ${r.seq})\n`);
      return;
    }
    if (verb !== undefined && (ROUND_ACTIONS as readonly string[]).includes(verb)) {
      allowFlags(ctx.p, [], usage);
      const [m] = positionals(ctx.p, from + 1, 1, 1, usage);
      const r = await a.roundAction(int('market_id', m, 1, 0xffffffff), verb as RoundAction);
      ctx.print(r, () => `round ${r.round_number} ${r.status} (seq ${r.seq})\n`);
      return;
    }
    throw new UsageError(verb === undefined ? 'missing action' : `unknown round action ${JSON.stringify(verb)}`, usage);
  },

  series: verbs('dx admin series create <title> --category n --period 5m [--position-limit n] [--fee-schedule n] | series list | series ' +
    'stop <category>', {
    create: async (ctx, from) => {
      const usage = 'dx admin series create <title> --category n --period 5m [--position-limit n] [--fee-schedule n]';
      allowFlags(ctx.p, ['category', 'period', 'position-limit', 'fee-schedule'], usage);
      const [title] = positionals(ctx.p, from, 1, 1, usage);
      const category = flag(ctx.p, 'category');
      if (category === undefined) throw new UsageError('--category is required', usage);
      const period = flag(ctx.p, 'period');
      if (period === undefined) throw new UsageError('--period is required', usage);
      const r = await ctx.admin().createSeries({
        category: int('--category', category, 0, 65535), title: title!, period_s: durationS('--period', period),
        position_limit: optInt(ctx, 'position-limit', 0, 0xffffffff, 0), fee_schedule_id: optInt(ctx, 'fee-schedule', 0, 0xffffffff, 0),
      });
      ctx.print(
        r,
        () =>
          `series ${r.category}: market ${r.market_id}, ${r.period_s}s rounds; ` +
            `${r.round_number === '0' ? 'the first round opens when the oracle quorum is fresh' : `round ${r.round_number} trading`}\n`,
      );
    },
    list: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx admin series list');
      positionals(ctx.p, from, 0, 0, 'dx admin series list');
      const r = await ctx.admin().listSeries();
      ctx.print(r, () =>
        table(
          ['category', 'market', 'title', 'period', 'active', 'round', 'status', 'strike', 'closes_in'],
          r.series.map(seriesRow),
        ),
      );
    },
    stop: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx admin series stop <category>');
      const [c] = positionals(ctx.p, from, 1, 1, 'dx admin series stop <category>');
      const r = await ctx.admin().stopSeries(int('category', c, 0, 65535));
      ctx.print(r, () => `series ${r.category} stopped: market ${r.market_id} opens no more rounds (seq ${r.seq})\n`);
    },
  }),

  oracle: verbs('dx admin oracle tick <source_id> <price> | oracle feed [--sources 0,1,2] [--interval-ms 1000] [--start-price 65000] ' +
    '[--sigma 0.0005] [--seed n] [--rounds n]', {
    tick: async (ctx, from) => {
      const usage = 'dx admin oracle tick <source_id> <price>';
      allowFlags(ctx.p, [], usage);
      const [s, price] = positionals(ctx.p, from, 2, 2, usage);
      const units = oraclePrice('price', price);
      const r = await ctx.admin().oracleTick({ source_id: int('source_id', s, 0, 63), price: units });
      ctx.print(r, () => `tick ${oracle(units)} from source ${s} (seq ${r.seq})\n`);
    },
    feed: async (ctx, from) => {
      const usage =
        'dx admin oracle feed [--sources 0,1,2] [--interval-ms 1000] [--start-price 65000] [--sigma 0.0005] [--seed n] [--rounds n]';
      allowFlags(ctx.p, ['sources', 'interval-ms', 'start-price', 'sigma', 'seed', 'rounds'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const sources = (flag(ctx.p, 'sources') ?? '0,1,2').split(',').map((x) => int('--sources', x, 0, 63));
      const start = Number(oraclePrice('--start-price', flag(ctx.p, 'start-price') ?? '65000')) / ORACLE_SCALE;
      const sigmaRaw = flag(ctx.p, 'sigma') ?? '0.0005';
      if (!/^[0-9]*\.?[0-9]+$/.test(sigmaRaw) || Number(sigmaRaw) > 0.1)
        throw new UsageError('--sigma must be a number 0..0.1 (volatility per sqrt second)', usage);
      const rounds = optInt(ctx, 'rounds', 1, 1_000_000_000, 0);
      const intervalMs = optInt(ctx, 'interval-ms', 10, 3_600_000, 1000);
      let failures = 0;
      // A tick the exchange did not refuse (unreachable, no answer, a 504 or 500) ends the run as dx maps it (3 or 4), not 1.
      let unanswered: unknown = null;
      const feeder = new SimulatedFeeder({
        sink: adminSink(ctx.admin()), sources, interval_ms: intervalMs, start_price: start, sigma_per_sqrt_s: Number(sigmaRaw),
        seed: optInt(ctx, 'seed', 0, 0xffffffff, Date.now() >>> 0),
        onError: (e, t) => {
          failures++;
          const refused = e instanceof DxApiError && e.refused;
          if (!refused) unanswered ??= e;
          const what = refused ? 'refused' : 'not delivered';
          process.stderr.write(`dx: tick from source ${t.source_id} ${what}: ${(e as Error).message}\n`);
        },
      });
      // Bounded runs tick back to back on the interval; unbounded ones run until Ctrl-C.
      for (let n = 0; rounds === 0 || n < rounds; n++) {
        await feeder.tickOnce();
        if (!ctx.json)
          ctx.out(
            `${new Date().toISOString()} mid ${oracle(feeder.midPrice)}  ` +
              `${sources.map((s) => `${s}:${oracle(feeder.last.get(s) ?? 0)}`).join('  ')}\n`,
          );
        if (rounds !== 0 && n === rounds - 1) break;
        await new Promise((r) => setTimeout(r, intervalMs));
      }
      // With --json, a DxApiError thrown below is dx's one JSON document on stdout (its envelope), not a second one.
      if (ctx.json && !(unanswered instanceof DxApiError)) {
        ctx.print({ delivered: feeder.delivered, failures, mid: String(feeder.midPrice) }, () => '');
      }
      if (unanswered !== null) throw unanswered;
      return failures > 0 ? 1 : undefined;
    },
  }),

  withdrawal: async (ctx, from) => {
    const usage = 'dx admin withdrawal confirm|fail <wid>';
    allowFlags(ctx.p, [], usage);
    const [verb, wid] = positionals(ctx.p, from, 2, 2, usage);
    const action = oneOf('action', verb, ['confirm', 'fail'] as const);
    const a = ctx.admin();
    const id = u64('wid', wid, 1n);
    const r = action === 'confirm' ? await a.confirmWithdrawal(id) : await a.failWithdrawal(id);
    ctx.print(r, () => `withdrawal ${id} ${r.status} (seq ${r.seq})\n`);
  },
};

for (const method of ['get', 'post', 'delete'] as const) {
  ADMIN[method] = async (ctx, from) => {
    const usage = `dx admin ${method} <path> [json-body | -]`;
    allowFlags(ctx.p, [], usage);
    const [raw, body] = positionals(ctx.p, from, 1, method === 'get' ? 1 : 2, usage);
    const path = requestPath(raw!, '/admin/health', usage);
    if (path === '/metrics') {
      ctx.out(await ctx.admin().metrics());
      return;
    }
    let parsed: unknown;
    if (body !== undefined) {
      try {
        parsed = JSON.parse(body === '-' ? readFileSync(0, 'utf8') : body);
      } catch (e) {
        throw new UsageError(`the body is not JSON: ${(e as Error).message}`, usage);
      }
    }
    const r = await ctx.admin().request(method.toUpperCase(), path!, parsed ?? (method === 'post' ? {} : undefined));
    ctx.out(`${JSON.stringify(r ?? null, null, 2)}\n`);
  };
}

export const ADMIN_COMMAND: Command = {
  usage: ADMIN_USAGE,
  summary: 'operator commands over the control plane (token: DX_ADMIN_TOKEN or ./data/admin-token)',
  run: async (ctx, from) => {
    const noun = ctx.p.positionals[from];
    const run = noun === undefined || !Object.hasOwn(ADMIN, noun) ? undefined : ADMIN[noun];
    if (!run)
      throw new UsageError(noun === undefined ? 'missing admin command' : `unknown admin command ${JSON.stringify(noun)}`, ADMIN_USAGE);
    return run(ctx, from + 1);
  },
};
