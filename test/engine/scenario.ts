// scenario: runs engine scenarios written as readable tables, one command per
// line with its expected outcome after `->`. After every command the O(n)
// invariant checker (src/engine/verify.ts) must find nothing.
//
//   account a1 10000                      create an account and deposit cents
//   market fees=700/0 limit=100           fee schedule (taker/maker bps), market and a trading round
//   a1 buy yes 60 x10 ioc post stp=cancel_maker coid=7 max=500 group=3 gtd=+5000 m=1
//      -> resting | partially_filled | filled | canceled <reason> | rejected <code>
//         [filled=N] [resting=N] [fills=<tick_yes>x<qty>/<path>,...]
//   a1 cancel #2 -> ok canceled=6          (#n = the n-th order placed in the scenario)
//   a1 decrease #2 3 -> ok new_qty=3
//   a1 cancel-all m=1 group=3 -> ok
//   a1 deadman 1000 / a1 disarm -> ok
//   a1 deposit <amount> [ref=R] -> ok | rejected <code>
//   a1 withdraw <cwid> <amount> [dest] -> ok wid=N | rejected <code>
//   confirm <wid> / fail <wid> -> ok
//   tick +1500 -> ok | dropped            (advances the clock by ms and sends a ClockTick)
//   wait +1500                            (advances the clock by ms, no ClockTick: the next command finds it due)
//   open strike=100 close=+60000 / freeze / unfreeze / propose yes|no|oracle / dispute / settle / void   [m=N]
//   oracle <source> <price>
//   series category=5 period=10 [limit=N] [fees=700/0] -> ok | rejected <code>   (CreateSeries; m becomes its market)
//   stop-series 5 -> ok
//   check oracle price=120 fresh=2
//   check a1 available=X reserved=Y yes=free/res no=free/res
//   check #3 canceled deadman | check #3 resting remaining=5 filled=2
//   check book 1 yes=60:10,59:3 no=
//   check market 1 status=trading volume=5 oi=5 last=60
//   check fees 12

import assert from 'node:assert/strict';
import { Engine } from '../../src/engine/engine.js';
import type { EngineConfig } from '../../src/engine/config.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { verify } from '../../src/engine/verify.js';
import { Book } from '../../src/book/book.js';
import { NIL } from '../../src/book/orders.js';
import {
  CANCEL_REASON_NAMES, CODES, MARKET_STATUS_NAMES, ORDER_STATUS_NAMES, PATH_NAMES, Outcome, ProposeSource, Side, Stp, Tif,
} from '../../src/layout/records.js';
import { encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { B_REASON, B_STATUS, LB, LW, W_ANEXT, W_FILLED, W_REMAINING } from '../../src/book/orders.js';

const T0 = 1_750_000_000_000_000_000n;
const NS_PER_MS = 1_000_000n;

function show(v: unknown): string {
  return JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));
}

function codeName(num: number): string {
  return CODES.find((c) => c.num === num)?.code ?? `num ${num}`;
}

export class ScenarioRunner {
  readonly out = new BufferEventOut(1 << 22);
  readonly engine: Engine;
  now = T0;
  private corr = 0;
  private readonly accounts = new Map<string, number>();
  private readonly orders: number[] = [];
  private market = 0;
  lastEvents: RecordObject[] = [];

  constructor(config: Partial<EngineConfig> = {}) {
    this.engine = new Engine(config, this.out);
  }

  /** Sends one command object; returns its events (empty when dropped). */
  send(cmd: RecordObject): RecordObject[] {
    const full = { producer: 100, correlation: ++this.corr, ts: this.now, ...cmd };
    const { mem } = encodeToMem(full);
    const seq = this.engine.execute(mem, 0);
    // A ClockTick the command found due is sequenced before it: its events are checked through the state, not as the command's.
    const events = this.out.take().filter((e) => Number(e.seq) === seq);
    if (seq === 0) assert.equal(events.length, 0);
    const bad = verify(this.engine.state);
    assert.deepEqual(bad, [], `invariants broken after ${show(cmd)}`);
    this.lastEvents = events;
    return events;
  }

  private acct(name: string): number {
    const id = this.accounts.get(name);
    assert.ok(id !== undefined, `unknown account ${name}`);
    return id;
  }

  /** Advances the clock by `+ms`; with `tick`, then sends a ClockTick (its outcome checked against rhs when given). */
  private advance(tick: boolean, ms: string, rhs: string | undefined): void {
    this.now += BigInt(Number(ms.replace('+', ''))) * NS_PER_MS;
    if (!tick) return;
    const ev = this.send({ type: 'ClockTick' });
    if (rhs !== undefined) this.expectGeneric(ev, rhs);
  }

  private completion(events: RecordObject[]): RecordObject {
    const c = events[events.length - 1];
    assert.ok(c && c.type === 'CommandCompleted', 'last event is CommandCompleted');
    return c;
  }

  /** Runs a whole scenario table. */
  run(table: string): void {
    const lines = table.split('\n');
    for (let i = 0; i < lines.length; i++) {
      const raw = lines[i]!.replace(/#(?!\d).*$/, '').trim();
      if (!raw) continue;
      try {
        this.line(raw);
      } catch (e) {
        (e as Error).message = `line ${i + 1}: ${raw}\n${(e as Error).message}`;
        throw e;
      }
    }
  }

  private line(raw: string): void {
    const [lhs, rhs] = raw.split('->').map((s) => s.trim()) as [string, string | undefined];
    const w = lhs.split(/\s+/);
    const opts = new Map<string, string>();
    const plain: string[] = [];
    for (const t of w) {
      const eq = t.indexOf('=');
      if (eq > 0) opts.set(t.slice(0, eq), t.slice(eq + 1));
      else plain.push(t);
    }
    const m = Number(opts.get('m') ?? this.market);
    const head = plain[0]!;
    if (head === 'account') {
      const ev = this.send({ type: 'CreateAccount' });
      const id = this.completion(ev).result as number;
      this.accounts.set(plain[1]!, id);
      if (plain[2]) this.expectOk(this.send({ type: 'Deposit', account: id, amount: Number(plain[2]) }));
      return;
    }
    if (head === 'market') {
      let fs = 0;
      if (opts.has('fees')) {
        const [t, mk] = opts.get('fees')!.split('/').map(Number);
        fs = this.completion(this.send({ type: 'CreateFeeSchedule', taker_bps: t, maker_bps: mk })).result as number;
      }
      const ev = this.send({
        type: 'CreateMarket',
        category: 1,
        position_limit: Number(opts.get('limit') ?? 0),
        fee_schedule_id: fs,
        title: 'scenario market',
      });
      this.market = this.completion(ev).result as number;
      if (opts.get('round') !== 'none') {
        this.expectOk(
          this.send({
            type: 'OpenRound',
            market_id: this.market,
            strike: Number(opts.get('strike') ?? 100),
            close_ts: this.now + BigInt(opts.get('close') ?? 3_600_000) * NS_PER_MS,
          }),
        );
      }
      return;
    }
    if (head === 'tick' || head === 'wait') return this.advance(head === 'tick', plain[1]!, rhs);
    if (head === 'series') {
      let fs = 0;
      if (opts.has('fees')) {
        const [t, mk] = opts.get('fees')!.split('/').map(Number);
        fs = this.completion(this.send({ type: 'CreateFeeSchedule', taker_bps: t, maker_bps: mk })).result as number;
      }
      const ev = this.send({
        type: 'CreateSeries',
        category: Number(opts.get('category') ?? 1),
        position_limit: Number(opts.get('limit') ?? 0),
        fee_schedule_id: fs,
        period_s: Number(opts.get('period') ?? 60),
        title: 'scenario series',
      });
      const c = this.completion(ev);
      if (c.status === 0) this.market = c.result as number;
      this.expectGeneric(ev, rhs ?? 'ok');
      return;
    }
    if (head === 'stop-series') {
      this.expectGeneric(this.send({ type: 'StopSeries', category: Number(plain[1]) }), rhs ?? 'ok');
      return;
    }
    if (head === 'oracle') {
      this.expectGeneric(this.send({ type: 'SubmitOracleTick', source_id: Number(plain[1]), price: Number(plain[2]) }), rhs ?? 'ok');
      return;
    }
    if (head === 'open') {
      const ev = this.send({
        type: 'OpenRound',
        market_id: m,
        strike: Number(opts.get('strike') ?? 100),
        close_ts: this.now + BigInt(Number((opts.get('close') ?? '+3600000').replace('+', ''))) * NS_PER_MS,
      });
      this.expectGeneric(ev, rhs ?? 'ok');
      return;
    }
    const roundCmds: Record<string, string> = {
      freeze: 'FreezeRound',
      unfreeze: 'UnfreezeRound',
      dispute: 'DisputeRound',
      settle: 'SettleRound',
      void: 'VoidRound',
      propose: 'ProposeRound',
    };
    if (head in roundCmds) {
      const cmd: RecordObject = { type: roundCmds[head]!, market_id: m };
      if (head === 'propose') cmd.source = ProposeSource[plain[1] as keyof typeof ProposeSource];
      this.expectGeneric(this.send(cmd), rhs ?? 'ok');
      return;
    }
    if (head === 'confirm' || head === 'fail') {
      this.expectGeneric(
        this.send({ type: head === 'confirm' ? 'ConfirmWithdrawal' : 'FailWithdrawal', wid: Number(plain[1]) }),
        rhs ?? 'ok',
      );
      return;
    }
    if (head === 'check') return this.check(plain, opts);

    // Account commands.
    const account = this.acct(head);
    const verb = plain[1]!;
    if (verb === 'buy' || verb === 'sell') {
      const cmd: RecordObject = {
        type: 'PlaceOrder', account, market_id: m, side: verb === 'buy' ? Side.buy : Side.sell,
        outcome: plain[2] === 'yes' ? Outcome.yes : Outcome.no, tick: Number(plain[3]), qty: Number(plain[4]!.replace('x', '')),
        tif: Tif.gtc, stp: Stp.cancel_taker, post_only: plain.includes('post') ? 1 : 0, group_id: Number(opts.get('group') ?? 0),
      };
      for (const t of ['ioc', 'fok', 'gtc'] as const) if (plain.includes(t)) cmd.tif = Tif[t];
      if (opts.has('gtd')) {
        cmd.tif = Tif.gtd;
        cmd.expiry_ts = this.now + BigInt(Number(opts.get('gtd')!.replace('+', ''))) * NS_PER_MS;
      }
      if (opts.has('stp')) cmd.stp = Stp[opts.get('stp') as keyof typeof Stp];
      if (opts.has('coid')) {
        cmd.has_client_order_id = 1;
        cmd.client_order_id = BigInt(opts.get('coid')!);
      }
      if (opts.has('max')) {
        cmd.has_max_cost = 1;
        cmd.max_cost = Number(opts.get('max'));
      }
      const ev = this.send(cmd);
      const c = this.completion(ev);
      this.orders.push(c.order_id as number);
      if (rhs !== undefined) this.expectPlacement(ev, rhs);
      return;
    }
    const orderRef = (t: string): number => {
      if (t.startsWith('#')) {
        const id = this.orders[Number(t.slice(1)) - 1];
        assert.ok(id !== undefined, `no order ${t}`);
        return id;
      }
      return Number(t);
    };
    let ev: RecordObject[];
    switch (verb) {
      case 'cancel':
        ev = this.send({ type: 'CancelOrder', account, order_id: orderRef(plain[2]!) });
        break;
      case 'decrease':
        ev = this.send({ type: 'DecreaseOrder', account, order_id: orderRef(plain[2]!), new_qty: Number(plain[3]) });
        break;
      case 'cancel-all':
        ev = this.send({ type: 'CancelAll', account, market_id: Number(opts.get('m') ?? 0), group_id: Number(opts.get('group') ?? 0) });
        break;
      case 'deadman':
        ev = this.send({ type: 'ArmDeadman', account, timeout_ms: Number(plain[2]) });
        break;
      case 'disarm':
        ev = this.send({ type: 'DisarmDeadman', account });
        break;
      case 'deposit':
        ev = this.send({ type: 'Deposit', account, amount: Number(plain[2]), ref: opts.get('ref') ?? '' });
        break;
      case 'withdraw':
        ev = this.send({
          type: 'RequestWithdrawal',
          account,
          client_withdrawal_id: BigInt(plain[2]!),
          amount: Number(plain[3]),
          destination: plain[4] ?? 'addr',
        });
        break;
      default:
        throw new Error(`unknown verb ${verb}`);
    }
    this.expectGeneric(ev, rhs ?? 'ok');
  }

  private expectOk(ev: RecordObject[]): void {
    this.expectGeneric(ev, 'ok');
  }

  /** `ok [key=value...]`, `rejected <code>` or `dropped`. */
  private expectGeneric(ev: RecordObject[], rhs: string): void {
    const w = rhs.split(/\s+/);
    if (w[0] === 'dropped') {
      assert.equal(ev.length, 0, 'the command was dropped');
      return;
    }
    const c = this.completion(ev);
    if (w[0] === 'rejected') {
      assert.equal(c.status, 1, `expected a reject, got ${show(c)}`);
      assert.equal(codeName(c.code_num as number), w[1]);
      return;
    }
    assert.equal(c.status, 0, `expected ok, got reject ${codeName(c.code_num as number)}`);
    for (const kv of w.slice(1)) {
      const [k, v] = kv.split('=') as [string, string];
      const field = { canceled: 'result', new_qty: 'result', wid: 'result', round: 'result' }[k] ?? k;
      assert.equal(String(c[field]), v, `completion ${k}`);
    }
  }

  private expectPlacement(ev: RecordObject[], rhs: string): void {
    const c = this.completion(ev);
    const w = rhs.split(/\s+/);
    if (w[0] === 'rejected') {
      assert.equal(c.status, 1, `expected a reject, got status ${ORDER_STATUS_NAMES[c.order_status as number]}`);
      assert.equal(codeName(c.code_num as number), w[1]);
      return;
    }
    assert.equal(c.status, 0, `expected ${rhs}, got reject ${codeName(c.code_num as number)}`);
    assert.equal(ORDER_STATUS_NAMES[c.order_status as number], w[0], 'order status');
    let rest = w.slice(1);
    if (w[0] === 'canceled') {
      assert.equal(CANCEL_REASON_NAMES[c.reason as number], w[1], 'cancel reason');
      rest = w.slice(2);
    }
    for (const kv of rest) {
      const [k, v] = kv.split('=') as [string, string];
      if (k === 'fills') {
        const fills = ev.filter((e) => e.type === 'Filled').map((e) => `${e.tick_yes}x${e.qty}/${PATH_NAMES[e.path as number]}`);
        assert.equal(fills.join(','), v, 'fills');
      } else if (k === 'filled') {
        assert.equal(c.filled_qty, Number(v), 'filled_qty');
      } else if (k === 'resting') {
        assert.equal(c.resting_qty, Number(v), 'resting_qty');
      } else {
        throw new Error(`unknown expectation ${k}`);
      }
    }
  }

  private check(plain: string[], opts: Map<string, string>): void {
    const s = this.engine.state;
    const what = plain[1]!;
    if (what === 'fees') {
      assert.equal(s.accounts.feesCollected, Number(plain[2]), 'fees collected');
      return;
    }
    if (what === 'book') {
      const market = Number(plain[2]);
      for (const [ladder, name] of [[0, 'yes'], [1, 'no']] as const) {
        if (!opts.has(name)) continue;
        const levels: string[] = [];
        for (let t = 99; t >= 1; t--) {
          const lv = Book.level(market, ladder, t);
          if (s.book.levelCount[lv]! > 0) levels.push(`${t}:${s.book.levelQty[lv]}`);
        }
        assert.equal(levels.join(','), opts.get(name), `${name} ladder`);
      }
      return;
    }
    if (what === 'oracle') {
      const mk = s.markets;
      const want: Record<string, string> = { price: String(mk.oraclePrice), fresh: String(mk.oracleFresh) };
      for (const [k, v] of opts) assert.equal(want[k], v, `oracle ${k}`);
      return;
    }
    if (what === 'market') {
      const market = Number(plain[2]);
      const mk = s.markets;
      const r = mk.round[market]!;
      const st = r < 0 ? 0 : mk.rStatus[r]!;
      const want: Record<string, string> = {
        round: String(r + 1),
        strike: r < 0 ? '0' : String(mk.rStrike[r]),
        settle_price: r < 0 ? '0' : String(mk.rSettlePrice[r]),
        closes_in: r < 0 ? '0' : String(((BigInt(mk.rCloseHi[r]!) << 32n) | BigInt(mk.rCloseLo[r]!)) / NS_PER_MS - this.now / NS_PER_MS),
        status: st <= 3 ? MARKET_STATUS_NAMES[st]! : 'closed',
        volume: String(mk.volume[market]),
        oi: String(mk.openInterest[market]),
        last: String(mk.lastTickYes[market]),
        round_status: r < 0 ? 'none' : ['none', 'trading', 'frozen', 'proposed', 'settled', 'void'][mk.rStatus[r]!]!,
        outcome: r < 0 ? 'none' : ['none', 'yes', 'no'][mk.rOutcome[r]!]!,
      };
      for (const [k, v] of opts) assert.equal(want[k], v, `market ${k}`);
      return;
    }
    if (what.startsWith('#')) {
      const id = this.orders[Number(what.slice(1)) - 1]!;
      const slot = s.slotOf(id);
      assert.ok(slot >= 0, `order ${what} is retained`);
      assert.equal(ORDER_STATUS_NAMES[s.orders.u8[(slot << LB) | B_STATUS]!], plain[2], `order ${what} status`);
      if (plain[3]) assert.equal(CANCEL_REASON_NAMES[s.orders.u8[(slot << LB) | B_REASON]!], plain[3], `order ${what} reason`);
      if (opts.has('remaining')) assert.equal(s.orders.u32[(slot << LW) | W_REMAINING], Number(opts.get('remaining')), 'remaining');
      if (opts.has('filled')) assert.equal(s.orders.u32[(slot << LW) | W_FILLED], Number(opts.get('filled')), 'filled');
      return;
    }
    const a = this.acct(what);
    const acc = s.accounts;
    if (opts.has('available')) assert.equal(acc.available[a], Number(opts.get('available')), `${what} available`);
    if (opts.has('reserved')) assert.equal(acc.reserved[a], Number(opts.get('reserved')), `${what} reserved`);
    for (const [outcome, name] of [[0, 'yes'], [1, 'no']] as const) {
      if (!opts.has(name)) continue;
      const p = acc.findPosition(a, Number(opts.get('m') ?? this.market));
      const got = p < 0 ? '0/0' : `${acc.pFree[2 * p + outcome]}/${acc.pReserved[2 * p + outcome]}`;
      assert.equal(got, opts.get(name), `${what} ${name} position free/reserved_for_sale`);
    }
    if (opts.has('live')) {
      let n = 0;
      for (let slot = acc.liveHead[a]!; slot !== NIL; slot = s.orders.i32[(slot << LW) | W_ANEXT]!) n++;
      assert.equal(n, Number(opts.get('live')), `${what} live orders`);
    }
  }
}

export function scenario(table: string, config: Partial<EngineConfig> = {}): ScenarioRunner {
  const r = new ScenarioRunner(config);
  r.run(table);
  return r;
}
