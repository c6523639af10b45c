// client_commands: the signed commands of `dx` (REST lane and accounts
// service), each a thin layer over one or a few API calls: it checks its
// arguments, calls, and prints a table (or the server's JSON with --json).
// CLI process, main thread.

import { readFileSync } from 'node:fs';
import { UsageError } from '../lib/command_line.js';
import { dollars, oracle } from '../lib/units.js';
import { allowFlags, durationS, flag, int, oneOf, positionals, requestPath, u64 } from './args.js';
import type { Ctx } from './context.js';
import { countdown, fields, ladder, table, time } from './format.js';
import type {
  CreateKeyRequest, DeadmanArmed, DeadmanDisarmed, DeadmanState, Market, OrderRequest, Placement, Round,
} from '../client/types.js';

export interface Command {
  usage: string;
  summary: string;
  /** Resolves with the exit code when it is not 0 (a partial refusal), else nothing. */
  run: (ctx: Ctx, from: number) => Promise<number | void>;
}

function optInt(ctx: Ctx, name: string, min: number, max: number): number | undefined {
  const v = flag(ctx.p, name);
  return v === undefined ? undefined : int(`--${name}`, v, min, max);
}

/** A comma-separated status filter as the client sends it (the server checks the names). */
function statuses(raw: string | undefined): string[] | undefined {
  return raw === undefined ? undefined : raw.split(',');
}

/** A JSON body from an argument, or from stdin when the argument is "-". */
function bodyArg(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const text = raw === '-' ? readFileSync(0, 'utf8') : raw;
  try {
    JSON.parse(text);
  } catch (e) {
    throw new UsageError(`the body is not JSON: ${(e as Error).message}`);
  }
  return text;
}

const EXAMPLES: Record<string, string> = {
  GET: 'dx get /v1/markets?status=trading',
  POST: `dx post /v1/portfolio/orders '{"market_id":1,"side":"buy","outcome":"yes","tick":40,"qty":5}'`,
  DELETE: 'dx delete /v1/portfolio/orders?market_id=1',
};

function rawCall(method: string): Command {
  const usage = `dx ${method.toLowerCase()} <path> ${method === 'GET' ? '' : '[json-body | -]'}`.trim();
  return {
    usage,
    summary: `any signed REST ${method}, e.g. ${EXAMPLES[method]}; prints the JSON answer`,
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], usage);
      const [path, body] = positionals(ctx.p, from, 1, method === 'GET' ? 1 : 2, usage);
      const r = await ctx.dx().request(method, requestPath(path!, '/v1/markets', usage), bodyArg(body));
      ctx.out(`${JSON.stringify(r ?? null, null, 2)}\n`);
    },
  };
}

function marketRow(m: Market): (string | number)[] {
  return [
    m.market_id,
    m.title,
    m.status,
    m.best_yes_bid || '-',
    m.best_yes_ask || '-',
    m.last_tick_yes || '-',
    m.volume,
    m.open_interest,
    m.round_number ?? '-',
    m.status === 'trading' ? countdown(m.close_ts) : '-',
  ];
}

function roundRow(r: Round): (string | number)[] {
  return [
    r.round_number,
    r.market_id,
    r.category,
    r.status,
    oracle(r.strike),
    time(r.open_ts),
    time(r.close_ts),
    r.outcome || '-',
    r.settle_price === '0' ? '-' : oracle(r.settle_price),
  ];
}

const ROUND_HEADERS = ['round', 'market', 'category', 'status', 'strike', 'opened', 'closes', 'outcome', 'settle_price'];

function placementText(r: Placement): string {
  const head = `order ${r.order_id} ${r.status}${r.reason ? ` (${r.reason})` : ''}: filled ${r.filled_qty}, resting ${r.resting_qty}  ` +
    `[seq ${r.seq}]\n`;
  const fills = r.fills.map((f) => `  fill ${f.qty} @ ${f.tick_yes} (YES price) ${f.path}`).join('\n');
  return head + (fills ? `${fills}\n` : '');
}

export const CLIENT_COMMANDS: Record<string, Command> = {
  get: rawCall('GET'),
  post: rawCall('POST'),
  delete: rawCall('DELETE'),

  status: {
    usage: 'dx status',
    summary: 'exchange status (checks the key and the connection)',
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx status');
      positionals(ctx.p, from, 0, 0, 'dx status');
      const r = await ctx.dx().exchangeStatus();
      ctx.print(r, () => fields([['exchange_active', r.exchange_active], ['as_of_seq', r.as_of_seq]]));
    },
  },

  limits: {
    usage: 'dx limits',
    summary: "the key's scopes, rate tier and limits, response budget",
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx limits');
      positionals(ctx.p, from, 0, 0, 'dx limits');
      const r = await ctx.dx().limits();
      ctx.print(r, () =>
        fields([
          ['scopes', r.scopes.join(',')],
          ['tier', r.tier],
          ['read', `${r.read.sustained_rate_per_s}/s burst ${r.read.burst}`],
          ['write', `${r.write.sustained_rate_per_s}/s burst ${r.write.burst}`],
          ['batch_cap', r.batch_cap],
          ['response_budget_ms', r.response_budget_ms],
        ]),
      );
    },
  },

  markets: {
    usage: 'dx markets [--status trading,proposed] [--limit n]',
    summary: 'markets with best bid/ask, last trade, volume, open interest',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.markets!.usage;
      allowFlags(ctx.p, ['status', 'limit'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const r = await ctx.dx().markets({ status: statuses(flag(ctx.p, 'status')), limit: optInt(ctx, 'limit', 1, 1000) });
      ctx.print(r, () =>
        table(['id', 'title', 'status', 'bid', 'ask', 'last', 'volume', 'oi', 'round', 'closes_in'], r.markets.map(marketRow)),
      );
    },
  },

  book: {
    usage: 'dx book <market_id> [--depth n]',
    summary: 'the order book as a YES-price ladder (asks = 100 - NO bids)',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.book!.usage;
      allowFlags(ctx.p, ['depth'], usage);
      const [m] = positionals(ctx.p, from, 1, 1, usage);
      const market = int('market_id', m, 1, 0xffffffff);
      const c = ctx.dx();
      const book = await c.orderbook(market, optInt(ctx, 'depth', 1, 99));
      if (ctx.json) {
        ctx.print(book, () => '');
        return;
      }
      const mk = await c.market(market);
      const head = `market ${mk.market_id}  ${mk.title}  ` +
        `${mk.status}${mk.status === 'trading' ? `, closes in ${countdown(mk.close_ts)}` : ''}  (round ${mk.round_number ?? '-'}, ` +
        `as_of_seq ${book.as_of_seq})\n`;
      ctx.out(head + ladder(book));
    },
  },

  trades: {
    usage: 'dx trades <market_id> [--limit n]',
    summary: 'the public trade tape, newest first',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.trades!.usage;
      allowFlags(ctx.p, ['limit'], usage);
      const [m] = positionals(ctx.p, from, 1, 1, usage);
      const r = await ctx.dx().trades(int('market_id', m, 1, 0xffffffff), { limit: optInt(ctx, 'limit', 1, 1000) ?? 20 });
      ctx.print(r, () =>
        table(
          ['seq', 'time', 'tick_yes', 'qty', 'taker'],
          r.trades.map((t) => [t.seq, time(t.ts), t.tick_yes, t.qty, `${t.taker_side ?? ''} ${t.taker_outcome ?? ''}`.trim()]),
        ),
      );
    },
  },

  candles: {
    usage: 'dx candles <market_id> [--period 1m|5m|1h|1d] [--since 2h | --start-ts ns] [--end-ts ns]',
    summary: 'price candles (OHLC of the YES price, volume, trades) from the retained trade tape, oldest first',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.candles!.usage;
      allowFlags(ctx.p, ['period', 'since', 'start-ts', 'end-ts'], usage);
      const [m] = positionals(ctx.p, from, 1, 1, usage);
      const since = flag(ctx.p, 'since');
      const startTs = flag(ctx.p, 'start-ts');
      if (since !== undefined && startTs !== undefined) throw new UsageError('give --since or --start-ts, not both', usage);
      const period = flag(ctx.p, 'period');
      const endTs = flag(ctx.p, 'end-ts');
      const sinceMs = since === undefined ? 0 : Date.now() - durationS('--since', since) * 1000;
      if (sinceMs < 0) throw new UsageError(`--since ${since} reaches before 1970`, usage);
      const r = await ctx.dx().candles(int('market_id', m, 1, 0xffffffff), {
        period: period === undefined ? undefined : oneOf('--period', period, ['1m', '5m', '1h', '1d'] as const),
        start_ts: since !== undefined ? String(BigInt(sinceMs) * 1_000_000n)
          : startTs === undefined ? undefined : u64('--start-ts', startTs),
        end_ts: endTs === undefined ? undefined : u64('--end-ts', endTs),
      });
      ctx.print(r, () => {
        const rows = table(['start', 'open', 'high', 'low', 'close', 'volume', 'trades'],
          r.candles.map((c) => [time(c.start_ts), c.open, c.high, c.low, c.close, c.volume, c.trade_count]));
        const note = r.truncated ? `(older trades were evicted from the tape: history starts at ${time(r.retained_from_ts)})\n` : '';
        return `market ${r.market_id}  ${r.period} candles of the YES price  (as_of_seq ${r.as_of_seq})\n${rows}${note}`;
      });
    },
  },

  oracle: {
    usage: 'dx oracle',
    summary: 'the oracle reference price and fresh source count',
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx oracle');
      positionals(ctx.p, from, 0, 0, 'dx oracle');
      const r = await ctx.dx().oraclePrice();
      ctx.print(r, () =>
        fields([
          ['price', r.price === '0' ? '- (no fresh source)' : oracle(r.price)],
          ['fresh_source_count', r.fresh_source_count],
          ['seq', r.seq],
        ]),
      );
    },
  },

  rounds: {
    usage: 'dx rounds [--category n] [--limit n]',
    summary: 'rounds, newest first',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.rounds!.usage;
      allowFlags(ctx.p, ['category', 'limit'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const r = await ctx.dx().rounds({ category: optInt(ctx, 'category', 0, 65535), limit: optInt(ctx, 'limit', 1, 1000) ?? 20 });
      ctx.print(r, () => table(ROUND_HEADERS, r.rounds.map(roundRow)));
    },
  },

  round: {
    usage: 'dx round <market_id>',
    summary: "a market's current round",
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx round <market_id>');
      const [m] = positionals(ctx.p, from, 1, 1, 'dx round <market_id>');
      const r = await ctx.dx().round(int('market_id', m, 1, 0xffffffff));
      ctx.print(r, () => `${table(ROUND_HEADERS, [roundRow(r)])}closes in ${countdown(r.close_ts)}\n`);
    },
  },

  balance: {
    usage: 'dx balance',
    summary: 'available and reserved cash',
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx balance');
      positionals(ctx.p, from, 0, 0, 'dx balance');
      const r = await ctx.dx().balance();
      ctx.print(r, () => fields([['available', dollars(r.available)], ['reserved', dollars(r.reserved)], ['as_of_seq', r.as_of_seq]]));
    },
  },

  positions: {
    usage: 'dx positions [--market n]',
    summary: 'shares held per market and outcome',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.positions!.usage;
      allowFlags(ctx.p, ['market'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const r = await ctx.dx().positions({ market_id: optInt(ctx, 'market', 1, 0xffffffff), limit: 1000 });
      ctx.print(r, () =>
        table(
          ['market', 'outcome', 'free', 'reserved_for_sale'],
          r.positions.map((p) => [p.market_id, p.outcome, p.free, p.reserved_for_sale]),
        ),
      );
    },
  },

  orders: {
    usage: 'dx orders [--status resting,partially_filled] [--market n] [--limit n]',
    summary: 'your orders, newest first (default: the live ones)',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.orders!.usage;
      allowFlags(ctx.p, ['status', 'market', 'limit'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const r = await ctx.dx().orders({
        market_id: optInt(ctx, 'market', 1, 0xffffffff),
        status: statuses(flag(ctx.p, 'status') ?? 'resting,partially_filled'),
        limit: optInt(ctx, 'limit', 1, 1000) ?? 50,
      });
      ctx.print(r, () =>
        table(
          ['order_id', 'market', 'side', 'outcome', 'tick', 'qty', 'filled', 'remaining', 'tif', 'reason'],
          r.orders.map((o) => [
            o.order_id,
            o.market_id,
            o.side,
            o.outcome,
            o.tick,
            o.qty,
            o.filled_qty,
            o.remaining_qty,
            o.tif,
            o.reason || '-',
          ]),
        ),
      );
    },
  },

  fills: {
    usage: 'dx fills [--market n] [--limit n]',
    summary: 'your fills, newest first',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.fills!.usage;
      allowFlags(ctx.p, ['market', 'limit'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const r = await ctx.dx().fills({ market_id: optInt(ctx, 'market', 1, 0xffffffff), limit: optInt(ctx, 'limit', 1, 1000) ?? 50 });
      ctx.print(r, () =>
        table(
          ['fill_id', 'time', 'order_id', 'market', 'side', 'outcome', 'role', 'tick', 'qty', 'fee', 'path'],
          r.fills.map((f) => [
            f.fill_id,
            time(f.ts),
            f.order_id,
            f.market_id,
            f.side,
            f.outcome,
            f.role,
            f.tick,
            f.qty,
            dollars(f.fee),
            f.path,
          ]),
        ),
      );
    },
  },

  order: {
    usage: 'dx order <buy|sell> <yes|no> <market_id> <tick 1..99> <qty> [--tif gtc|gtd|ioc|fok] [--post-only] [--client-order-id id] ' +
      '[--max-cost cents] [--expiry-ts ns] [--group n] [--stp cancel_taker|cancel_maker|cancel_both]',
    summary: 'place an order; prints its sequenced outcome and fills',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.order!.usage;
      allowFlags(ctx.p, ['tif', 'post-only', 'client-order-id', 'max-cost', 'expiry-ts', 'group', 'stp'], usage);
      const [side, outcome, m, tick, qty] = positionals(ctx.p, from, 5, 5, usage);
      const body: OrderRequest = {
        market_id: int('market_id', m, 1, 0xffffffff), side: oneOf('side', side, ['buy', 'sell'] as const),
        outcome: oneOf('outcome', outcome, ['yes', 'no'] as const), tick: int('tick', tick, 1, 99), qty: int('qty', qty, 1, 1_000_000),
      };
      const tif = flag(ctx.p, 'tif');
      if (tif !== undefined) body.tif = oneOf('--tif', tif, ['gtc', 'gtd', 'ioc', 'fok'] as const);
      if (ctx.p.flags.get('post-only') === true) body.post_only = true;
      const coid = flag(ctx.p, 'client-order-id');
      if (coid !== undefined) body.client_order_id = u64('--client-order-id', coid, 1n);
      const maxCost = flag(ctx.p, 'max-cost');
      if (maxCost !== undefined) body.max_cost = u64('--max-cost', maxCost);
      const exp = flag(ctx.p, 'expiry-ts');
      if (exp !== undefined) body.expiry_ts = u64('--expiry-ts', exp, 1n);
      const group = flag(ctx.p, 'group');
      if (group !== undefined) body.group_id = int('--group', group, 0, 0xffffffff);
      const stp = flag(ctx.p, 'stp');
      if (stp !== undefined) body.stp = oneOf('--stp', stp, ['cancel_taker', 'cancel_maker', 'cancel_both'] as const);
      const r = await ctx.dx().placeOrder(body);
      ctx.print(r, () => placementText(r));
    },
  },

  cancel: {
    usage: 'dx cancel <order_id> [order_id ...]  (up to 20)',
    summary: 'cancel orders by id',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.cancel!.usage;
      allowFlags(ctx.p, [], usage);
      const ids = positionals(ctx.p, from, 1, 20, usage).map((x) => u64('order_id', x, 1n));
      const r = await ctx.dx().cancelBatch(ids);
      ctx.print(r, () =>
        table(
          ['order_id', 'result'],
          r.results.map((x, i) => [
            ids[i]!, 'error' in x ? `${x.error.code}: ${x.error.message}` : `canceled ${x.canceled_qty} (seq ${x.seq})`,
          ]),
        ),
      );
      if (r.results.some((x) => 'error' in x)) return 1;
    },
  },

  'cancel-all': {
    usage: 'dx cancel-all [--market n] [--group n]',
    summary: 'cancel all your resting orders (optionally of one market or group)',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS['cancel-all']!.usage;
      allowFlags(ctx.p, ['market', 'group'], usage);
      positionals(ctx.p, from, 0, 0, usage);
      const r = await ctx.dx().cancelAll({
        market_id: optInt(ctx, 'market', 1, 0xffffffff), group_id: optInt(ctx, 'group', 1, 0xffffffff),
      });
      ctx.print(r, () => `canceled (seq ${r.seq})\n`);
    },
  },

  decrease: {
    usage: 'dx decrease <order_id> <new_qty>',
    summary: "reduce an order's remaining quantity in place (0 cancels)",
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.decrease!.usage;
      allowFlags(ctx.p, [], usage);
      const [id, n] = positionals(ctx.p, from, 2, 2, usage);
      const r = await ctx.dx().decrease(u64('order_id', id, 1n), int('new_qty', n, 0, 0xffffffff));
      ctx.print(r, () => `decreased to ${r.new_qty} (seq ${r.seq})\n`);
    },
  },

  deadman: {
    usage: 'dx deadman arm <timeout_ms> | dx deadman disarm | dx deadman status',
    summary: 'the dead-man timer (cancels all your orders unless refreshed)',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.deadman!.usage;
      allowFlags(ctx.p, [], usage);
      const [verb, ms] = positionals(ctx.p, from, 1, 2, usage);
      const c = ctx.dx();
      let r: DeadmanArmed | DeadmanDisarmed | DeadmanState;
      if (verb === 'arm') r = await c.armDeadman(int('timeout_ms', ms, 1000, 60000));
      else if (verb === 'disarm' && ms === undefined) r = await c.disarmDeadman();
      else if (verb === 'status' && ms === undefined) r = await c.deadman();
      else throw new UsageError(`unknown deadman action ${JSON.stringify(verb)}`, usage);
      ctx.print(r, () =>
        r.armed ? `armed: ${r.timeout_ms} ms, fires at ${time(r.fires_at_ts)} (in ${countdown(r.fires_at_ts)})\n` : 'disarmed\n',
      );
    },
  },

  'deposit-address': {
    usage: 'dx deposit-address',
    summary: "your account's deposit address (deposits are credited by the operator)",
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx deposit-address');
      positionals(ctx.p, from, 0, 0, 'dx deposit-address');
      const r = await ctx.dx().depositAddress();
      ctx.print(r, () => `${r.address}\n`);
    },
  },

  withdraw: {
    usage: 'dx withdraw <client_withdrawal_id> <amount_cents> <destination>',
    summary: 'request a withdrawal (needs a key with the withdraw scope; idempotent by id)',
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.withdraw!.usage;
      allowFlags(ctx.p, [], usage);
      const [id, amount, dest] = positionals(ctx.p, from, 3, 3, usage);
      const r = await ctx.dx().withdraw({
        client_withdrawal_id: u64('client_withdrawal_id', id),
        amount: u64('amount', amount, 1n),
        destination: dest!,
      });
      ctx.print(r, () => `withdrawal ${r.wid} ${r.status}: ${dollars(r.amount ?? amount!)} to ${r.destination ?? dest} (seq ${r.seq})\n`);
    },
  },

  withdrawal: {
    usage: 'dx withdrawal <client_withdrawal_id>',
    summary: 'a withdrawal and its status',
    run: async (ctx, from) => {
      allowFlags(ctx.p, [], 'dx withdrawal <client_withdrawal_id>');
      const [id] = positionals(ctx.p, from, 1, 1, 'dx withdrawal <client_withdrawal_id>');
      const r = await ctx.dx().withdrawal(u64('client_withdrawal_id', id));
      ctx.print(r, () =>
        fields([
          ['wid', r.wid],
          ['client_withdrawal_id', r.client_withdrawal_id],
          ['status', r.status],
          ['amount', dollars(r.amount)],
          ['destination', r.destination],
          ['seq', r.seq],
        ]),
      );
    },
  },

  keys: {
    usage: 'dx keys list | dx keys create [--label text] [--scopes read,trade] | dx keys revoke <key_id>',
    summary: "your account's keys (keys service); a new key's secret is shown once",
    run: async (ctx, from) => {
      const usage = CLIENT_COMMANDS.keys!.usage;
      allowFlags(ctx.p, ['label', 'scopes'], usage);
      const [verb, id] = positionals(ctx.p, from, 1, 2, usage);
      const a = ctx.keys();
      if (verb === 'list' && id === undefined) {
        const r = await a.listKeys();
        ctx.print(r, () =>
          table(['key_id', 'scopes', 'revoked'], r.keys.map((k) => [k.key_id, k.scopes.join(','), k.revoked ? 'yes' : 'no'])),
        );
      } else if (verb === 'create' && id === undefined) {
        const body: CreateKeyRequest = {};
        const label = flag(ctx.p, 'label');
        if (label !== undefined) body.label = label;
        const scopes = flag(ctx.p, 'scopes');
        if (scopes !== undefined) body.scopes = scopes.split(',').map((s) => oneOf('--scopes', s, ['read', 'trade', 'withdraw'] as const));
        const r = await a.createKey(body);
        ctx.print(r, () =>
          fields([
            ['key_id', r.key_id],
            ['secret', `${r.secret}  (shown once: keep it)`],
            ['scopes', r.scopes.join(',')],
          ]),
        );
      } else if (verb === 'revoke' && id !== undefined) {
        const r = await a.revokeKey(int('key_id', id, 1, 0xffffffff));
        ctx.print(r, () => `key ${r.key_id} revoked (seq ${r.seq})\n`);
      } else {
        throw new UsageError(`unknown keys action ${JSON.stringify(verb)}`, usage);
      }
    },
  },
};
