// Fanout: the WebSocket lane's projection of the event stream into messages.
// One instance per gateway thread, fed by GatewayCore.onApplied with exactly
// the events the thread's read model applied (durable ones only, in seq
// order), right after each was applied. It renders messages and queues them;
// the lane (lane.ts) writes the queue to uWS outside every uWS callback.
//
// Public data flows in STREAMS: one per (channel, market) on this thread
// (orderbook_delta:<m>, trades:<m>, trades:*, rounds:<m>, rounds:*, oracle),
// each a uWS topic. A stream has a sid and a seq that grows by one per
// message, and each message is serialized once and published once to the
// topic, whatever the number of subscribers: a public subscription IS a
// stream, so "sid + per-subscription seq" and "one serialization per message
// per thread" hold together (docs/websocket.md explains the choice).
//
// The private user channel is per connection: messages of an account are
// rendered once (the `msg` body) and wrapped per subscription with its own
// sid and seq. Each account with a user subscription on this thread (or one
// that ended less than resume_window_ms ago) keeps a bounded log of its
// messages for resume_from_seq.
//
// The messages' shapes are declared in src/wire/ws.ts: the ones built from
// objects are checked against it at compile time (`satisfies`); the hot ones
// are template strings, which the WebSocket tests check against it as they
// receive them (test/ws/ws_client.ts).
//
// Invariants:
//   - Orderbook deltas are computed at each CommandCompleted by comparing the
//     book's level totals with a mirror of what was last published, for the
//     markets the command touched; so after the deltas of seq S a client's
//     book equals the REST book at as_of_seq S, whatever happened inside the
//     command.
//   - A command's order/balance/position messages are complete at its
//     CommandCompleted; an order that became terminal is rendered at once
//     (retention may evict it later in the same command).
//   - Snapshots are taken only between commands (`midCommand` false).
//   - Nothing here allocates for an event that no stream or log wants.

import {
  Filled, Header, KeyRevoked, OrderCanceled, OrderDecreased, OrderRejected, OrderRested, OUTCOME_NAMES, OrderAccepted,
  PositionSettled, RoundOpened, RoundTransitioned, Side, SIDE_NAMES, T_COMMAND_COMPLETED, T_DEPOSITED, T_FILLED, T_KEY_REVOKED,
  T_ORDER_ACCEPTED, T_ORDER_CANCELED, T_ORDER_DECREASED, T_ORDER_REJECTED, T_ORDER_RESTED, T_POSITION_SETTLED,
  T_ROUND_OPENED, T_ROUND_TRANSITIONED, T_WITHDRAWAL_CONFIRMED, T_WITHDRAWAL_FAILED, T_WITHDRAWAL_REQUESTED,
  WithdrawalConfirmed, WithdrawalFailed,
} from '../layout/records.js';
import type { Mem } from '../lib/mem.js';
import { hiLoToString } from '../lib/u64.js';
import { BOOK_ROW, type Views } from '../views/views.js';
import type { Orderbook, OrderWithStatus } from '../wire/responses.js';
import type {
  BalanceCause, FillMessage, OpenOrder, OrderMessage, RoundMessage, UserSnapshot, WsDataMessage,
} from '../wire/ws.js';
import type { BinaryBatch } from './binary.js';
import type { Channel, WsConfig } from './protocol.js';

/** A connection as the fan-out sees it: a queue of private messages. */
export interface Peer {
  /** Private messages (user channel, snapshots, order answers) waiting to be written, in order; binary answers as their batch. */
  readonly out: (string | BinaryBatch)[];
  /** True while the peer is in Fanout.peers (has queued output). */
  queued: boolean;
  /** False once closed: nothing more is queued for it. */
  open: boolean;
  /** True once its key's revocation was applied: it is closing, and nothing sequenced after that is queued for it. */
  revoked: boolean;
}

/** A public stream: one uWS topic, one sid, one seq. */
export class Stream {
  /** Messages published so far; the next one carries seq + 1. */
  seq = 0;
  /** Connections of this thread subscribed to it. */
  subscribers = 0;
  constructor(readonly topic: string, readonly sid: number, readonly channel: Channel, readonly market: number) {}
}

/** One user-channel subscription of a connection. */
export interface UserSub {
  readonly peer: Peer;
  readonly sid: number;
  readonly account: number;
  seq: number;
}

/** An account's retained user messages (a ring) and its live subscriptions on this thread. */
export class UserLog {
  /** The log holds every user message of the account with exchange seq > coveredFrom. */
  coveredFrom: number;
  private readonly exSeq: Float64Array;
  private readonly types: string[];
  private readonly bodies: string[];
  private head = 0;
  count = 0;
  readonly subs: UserSub[] = [];
  /** performance.now() when the last subscription ended (0 while it has some): a clock step neither ends nor stretches resumes. */
  idleSince = 0;
  // What was last reported, so that balance and position messages carry changes only.
  lastAvailable: number;
  lastReserved: number;
  readonly lastPosition = new Map<number, Float64Array>();
  /** Within the current command: the first event kind that moved this account ('' = none yet), and the markets it touched. */
  cause: BalanceCause | '' = '';
  /** In `touched`: the current command moved this account (its cause may still be empty, e.g. an accepted sell). */
  inCommand = false;
  readonly markets: number[] = [];

  constructor(readonly account: number, readonly cap: number, asOfSeq: number, available: number, reserved: number) {
    this.coveredFrom = asOfSeq;
    this.exSeq = new Float64Array(cap);
    this.types = new Array<string>(cap).fill('');
    this.bodies = new Array<string>(cap).fill('');
    this.lastAvailable = available;
    this.lastReserved = reserved;
  }

  append(seq: number, type: string, body: string): void {
    if (this.cap === 0) {
      this.coveredFrom = seq;
      return;
    }
    let i: number;
    if (this.count === this.cap) {
      i = this.head;
      // The oldest message leaves: resuming now needs everything up to its seq.
      this.coveredFrom = this.exSeq[i]!;
      this.head = (this.head + 1) % this.cap;
    } else {
      i = (this.head + this.count) % this.cap;
      this.count++;
    }
    this.exSeq[i] = seq;
    this.types[i] = type;
    this.bodies[i] = body;
  }

  /** Calls fn for every retained message with exchange seq > after, oldest first. */
  replay(after: number, fn: (type: string, body: string) => void): void {
    for (let k = 0; k < this.count; k++) {
      const i = (this.head + k) % this.cap;
      if (this.exSeq[i]! > after) fn(this.types[i]!, this.bodies[i]!);
    }
  }
}

/** Closes every connection of a revoked key (the lane implements it). */
export type RevokeListener = (keyId: number) => void;

/** A market's published book (the mirror) is laid out as Views.bookLevels writes it: index ladder * BOOK_ROW + tick. */
const LEVELS_PER_MARKET = 2 * BOOK_ROW;
const LADDER_NAMES = ['yes', 'no'];

export class Fanout {
  private nextSid = 1;
  private readonly streams = new Map<string, Stream>();
  /** Per market: the orderbook stream and the published level totals (index ladder * 100 + tick). */
  private readonly obStream: (Stream | undefined)[] = [];
  private readonly mirror: (Float64Array | undefined)[] = [];
  private readonly tradeStream: (Stream | undefined)[] = [];
  private readonly roundStream: (Stream | undefined)[] = [];
  private tradesAll: Stream | undefined;
  private roundsAll: Stream | undefined;
  private oracle: Stream | undefined;
  /** The oracle's price, fresh source count and seq as last published. */
  private readonly lastOracle = new Float64Array(3);
  private readonly oracleNow = new Float64Array(3);
  /** Scratch for two numbers asked of the read model (an order's owner or reservation, an account's cash). */
  private readonly pair = new Float64Array(2);
  /** Scratch for the levels a command changed and their previous totals (see Views.diffBookLevels). */
  private readonly changedLevels = new Int32Array(LEVELS_PER_MARKET);
  private readonly changedWas = new Float64Array(LEVELS_PER_MARKET);
  /** Scratch for one account's position in one market (see Views.positionNumbers). */
  private readonly positionNow = new Float64Array(4);
  /** Markets whose book the current command touched and that have an orderbook stream. */
  private readonly dirtyBooks: number[] = [];
  private readonly logs: (UserLog | undefined)[] = [];
  private logCount = 0;
  /** Accounts (with a log) the current command touched. */
  private readonly touched: UserLog[] = [];
  /** Live orders the current command touched, rendered at its completion: order_id -> log. */
  private readonly touchedOrders = new Map<number, UserLog>();

  /** True between an event of a command and its CommandCompleted. */
  midCommand = false;
  /** Public messages to publish, in order: topics[i] gets msgs[i]. */
  readonly topics: string[] = [];
  readonly msgs: string[] = [];
  /** Peers with queued private messages. */
  readonly peers: Peer[] = [];
  /** Called when something was queued (the lane schedules a flush). */
  onQueued: () => void = () => {};
  onRevoked: RevokeListener = () => {};

  constructor(readonly views: Views, readonly cfg: WsConfig) {}

  // ---- streams -----------------------------------------------------------------------

  static topic(channel: Channel, market: number): string {
    if (channel === 'oracle') return 'oracle';
    return `${channel}:${market === 0 ? '*' : market}`;
  }

  /** A new sid (streams and user subscriptions share the counter, so sids never collide on a connection). */
  allocateSid(): number {
    return this.nextSid++;
  }

  /** The stream of (channel, market) with one more subscriber; market 0 = all markets (or none, for oracle). Call between commands. */
  join(channel: Exclude<Channel, 'user'>, market: number): Stream {
    const topic = Fanout.topic(channel, market);
    let s = this.streams.get(topic);
    if (s === undefined) {
      s = new Stream(topic, this.allocateSid(), channel, market);
      this.streams.set(topic, s);
      this.bind(channel, market, s);
      if (channel === 'orderbook_delta') {
        const m = new Float64Array(LEVELS_PER_MARKET);
        this.views.bookLevels(market, m);
        this.mirror[market] = m;
      } else if (channel === 'oracle') {
        this.views.oracleNumbers(this.lastOracle);
      }
    }
    s.subscribers++;
    return s;
  }

  /** One subscriber fewer; the stream ends with its last one (a later subscription starts a new stream and sid). */
  leave(s: Stream): void {
    s.subscribers--;
    if (s.subscribers > 0) return;
    this.streams.delete(s.topic);
    this.bind(s.channel, s.market, undefined);
    if (s.channel === 'orderbook_delta') this.mirror[s.market] = undefined;
  }

  /** Sets (or, with undefined, clears) the stream of a channel and market (0: every market) that the fold writes to. */
  private bind(channel: Stream['channel'], market: number, s: Stream | undefined): void {
    switch (channel) {
      case 'orderbook_delta':
        this.obStream[market] = s;
        break;
      case 'trades':
        if (market === 0) this.tradesAll = s;
        else this.tradeStream[market] = s;
        break;
      case 'rounds':
        if (market === 0) this.roundsAll = s;
        else this.roundStream[market] = s;
        break;
      case 'oracle':
        this.oracle = s;
        break;
    }
  }

  get streamCount(): number {
    return this.streams.size;
  }

  /** The orderbook snapshot of a stream, as a whole data message (seq = the stream's last message). Between commands only. */
  orderbookSnapshot(s: Stream): string {
    const ob = this.views.orderbook(s.market, 99);
    const body: Orderbook = ob === null ? { market_id: s.market, yes: [], no: [], as_of_seq: String(this.views.asOfSeq) } : ob;
    return `{"type":"orderbook_snapshot","sid":${s.sid},"seq":${s.seq},"msg":${JSON.stringify(body)}}`;
  }

  private publish(s: Stream, type: WsDataMessage['type'], body: string): void {
    s.seq++;
    this.topics.push(s.topic);
    this.msgs.push(`{"type":"${type}","sid":${s.sid},"seq":${s.seq},"msg":${body}}`);
  }

  // ---- user channel ----------------------------------------------------------------

  /** The account's log, created (empty, covering from now) when missing. Between commands only. */
  userLog(account: number): UserLog {
    let log = this.logs[account];
    if (log === undefined) {
      const cash = this.pair;
      this.views.cashNumbers(account, cash);
      log = new UserLog(account, this.cfg.user_log_cap, this.views.asOfSeq, cash[0]!, cash[1]!);
      this.primePositions(log);
      this.logs[account] = log;
      this.logCount++;
    }
    return log;
  }

  existingLog(account: number): UserLog | undefined {
    return this.logs[account];
  }

  addUserSub(log: UserLog, sub: UserSub): void {
    log.subs.push(sub);
    log.idleSince = 0;
  }

  removeUserSub(sub: UserSub, nowMs: number): void {
    const log = this.logs[sub.account];
    if (log === undefined) return;
    const i = log.subs.indexOf(sub);
    if (i >= 0) log.subs.splice(i, 1);
    if (log.subs.length === 0) log.idleSince = nowMs;
  }

  /** Drops the logs of accounts without a subscription for longer than the resume window. */
  expireLogs(nowMs: number): void {
    if (this.logCount === 0) return;
    for (let a = 0; a < this.logs.length; a++) {
      const log = this.logs[a];
      if (log === undefined || log.subs.length > 0 || nowMs - log.idleSince < this.cfg.resume_window_ms) continue;
      this.logs[a] = undefined;
      this.logCount--;
    }
  }

  /** Queues a user data message for one subscription. */
  sendUser(sub: UserSub, type: string, body: string): void {
    sub.seq++;
    this.queue(sub.peer, `{"type":"${type}","sid":${sub.sid},"seq":${sub.seq},"msg":${body}}`);
  }

  /** The user snapshot body (open orders, balance, positions) as of now. Between commands only. */
  userSnapshotBody(account: number, resumed: boolean): string {
    const v = this.views;
    const big = { limit: Number.MAX_SAFE_INTEGER };
    // Open orders only: their status follows from what they filled.
    const orders = v.orders(account, { ...big, status: ['resting', 'partially_filled'] }).orders.map((o) => {
      const { order_id, ...rest } = o;
      return this.orderExtras({ order_id, status: o.filled_qty > 0 ? 'partially_filled' : 'resting', ...rest }, Number(order_id));
    });
    const bal = v.balance(account);
    const positions = v.positions(account, big).positions;
    return JSON.stringify({
      orders, balance: { available: bal.available, reserved: bal.reserved }, positions, as_of_seq: String(v.asOfSeq), resumed,
    } satisfies UserSnapshot);
  }

  queue(peer: Peer, msg: string): void {
    if (!peer.open || peer.revoked) return;
    peer.out.push(msg);
    if (!peer.queued) {
      peer.queued = true;
      this.peers.push(peer);
    }
  }

  private emitUser(log: UserLog, seq: number, type: WsDataMessage['type'], body: string): void {
    log.append(seq, type, body);
    const subs = log.subs;
    for (let i = 0; i < subs.length; i++) this.sendUser(subs[i]!, type, body);
  }

  // ---- the event listener ----------------------------------------------------------

  /** GatewayCore.onApplied: every applied event, in order, right after the read model applied it. */
  readonly onEvent = (m: Mem, o: number): void => {
    const type = Header.type(m, o);
    if (type === T_COMMAND_COMPLETED) {
      this.completeCommand(Header.seq(m, o));
      return;
    }
    this.midCommand = true;
    if (this.streams.size === 0 && this.logCount === 0) {
      // Nobody listens on this thread: only a revocation matters (it may close sockets without subscriptions).
      if (type === T_KEY_REVOKED) this.onRevoked(KeyRevoked.key_id(m, o));
      return;
    }
    switch (type) {
      case T_ORDER_ACCEPTED: {
        const log = this.logs[Header.account(m, o)];
        if (log !== undefined) {
          this.touch(log, OrderAccepted.side(m, o) === Side.buy ? 'order_accepted' : '', OrderAccepted.market_id(m, o));
          this.touchedOrders.set(OrderAccepted.order_id(m, o), log);
        }
        return;
      }
      case T_ORDER_REJECTED: {
        const log = this.logs[Header.account(m, o)];
        if (log !== undefined) this.emitOrder(log, OrderRejected.order_id(m, o), Header.seq(m, o));
        return;
      }
      case T_ORDER_RESTED: {
        const id = OrderRested.order_id(m, o);
        const owner = this.pair;
        if (!this.views.orderOwner(id, owner)) return;
        const market = owner[0]!;
        this.bookTouched(market);
        const log = this.logs[owner[1]!];
        if (log !== undefined) this.touchedOrders.set(id, log);
        return;
      }
      case T_FILLED: return this.onFilled(m, o);
      case T_ORDER_CANCELED: {
        const id = OrderCanceled.order_id(m, o);
        const owner = this.pair;
        if (!this.views.orderOwner(id, owner)) return;
        const market = owner[0]!;
        this.bookTouched(market);
        const log = this.logs[owner[1]!];
        if (log !== undefined) {
          this.touch(log, 'order_canceled', market);
          this.touchedOrders.delete(id);
          this.emitOrder(log, id, Header.seq(m, o));
        }
        return;
      }
      case T_ORDER_DECREASED: {
        const id = OrderDecreased.order_id(m, o);
        const owner = this.pair;
        if (!this.views.orderOwner(id, owner)) return;
        const market = owner[0]!;
        this.bookTouched(market);
        const log = this.logs[owner[1]!];
        if (log !== undefined) {
          this.touch(log, 'order_decreased', market);
          this.touchedOrders.set(id, log);
        }
        return;
      }
      case T_DEPOSITED: return this.touchAccount(Header.account(m, o), 'deposited');
      case T_WITHDRAWAL_REQUESTED: return this.touchAccount(Header.account(m, o), 'withdrawal_requested');
      case T_WITHDRAWAL_CONFIRMED:
        return this.touchAccount(this.views.withdrawalAccount(WithdrawalConfirmed.wid(m, o)), 'withdrawal_confirmed');
      case T_WITHDRAWAL_FAILED:
        return this.touchAccount(this.views.withdrawalAccount(WithdrawalFailed.wid(m, o)), 'withdrawal_failed');
      case T_POSITION_SETTLED: {
        const log = this.logs[Header.account(m, o)];
        if (log !== undefined) this.touch(log, 'position_settled', PositionSettled.market_id(m, o));
        return;
      }
      case T_ROUND_OPENED:
        return this.onRound(RoundOpened.market_id(m, o), RoundOpened.round_number(m, o), Header.seq(m, o));
      case T_ROUND_TRANSITIONED:
        return this.onRound(RoundTransitioned.market_id(m, o), RoundTransitioned.round_number(m, o), Header.seq(m, o));
      case T_KEY_REVOKED:
        this.onRevoked(KeyRevoked.key_id(m, o));
        return;
      default:
        // Other events (accounts, keys, markets, fee schedules, dead-man
        // state, oracle ticks) change nothing a stream shows per event; the
        // oracle is compared at the command's completion.
        return;
    }
  };

  private bookTouched(market: number): void {
    const mir = this.mirror[market];
    if (mir === undefined) return;
    // A command touches one market or a few: the list stays short.
    if (!this.dirtyBooks.includes(market)) this.dirtyBooks.push(market);
  }

  private touchAccount(account: number, cause: BalanceCause): void {
    const log = this.logs[account];
    if (log !== undefined) this.touch(log, cause, 0);
  }

  /**
   * Marks the account (and a market of its positions, 0 = none) as moved by the current command; `cause` '' moves no
   * money (an accepted sell reserves shares: the cause of its balance move is a later event, a fill).
   */
  private touch(log: UserLog, cause: BalanceCause | '', market: number): void {
    if (!log.inCommand) {
      log.inCommand = true;
      this.touched.push(log);
    }
    if (log.cause === '') log.cause = cause;
    if (market !== 0 && !log.markets.includes(market)) log.markets.push(market);
  }

  private onFilled(m: Mem, o: number): void {
    const market = Filled.market_id(m, o);
    const seq = Header.seq(m, o);
    this.bookTouched(market);
    if (this.tradesAll !== undefined || this.tradeStream[market] !== undefined) {
      const body = `{"market_id":${market},"tick_yes":${Filled.tick_yes(m, o)},"qty":${Filled.qty(m, o)}` +
        `,"taker_outcome":"${OUTCOME_NAMES[Filled.taker_outcome(m, o)]}","taker_side":"${SIDE_NAMES[Filled.taker_side(m, o)]}` +
        `","trade_seq":"${seq}","fill_id":"${Filled.fill_id(m, o)}","ts":"${hiLoToString(Header.ts_hi(m, o), Header.ts_lo(m, o))}"}`;
      const one = this.tradeStream[market];
      if (one !== undefined) this.publish(one, 'trade', body);
      if (this.tradesAll !== undefined) this.publish(this.tradesAll, 'trade', body);
    }
    const makerLog = this.logs[Filled.maker_account(m, o)];
    if (makerLog !== undefined) this.fillFor(makerLog, Filled.maker_order_id(m, o), Filled.maker_release(m, o), market, seq);
    const takerLog = this.logs[Filled.taker_account(m, o)];
    if (takerLog !== undefined) this.fillFor(takerLog, Filled.taker_order_id(m, o), Filled.taker_release(m, o), market, seq);
  }

  private fillFor(log: UserLog, orderId: number, release: number, market: number, seq: number): void {
    this.touch(log, 'filled', market);
    // The read model recorded this fill as the account's newest before applying it.
    const f = this.views.fills(log.account, { limit: 1 }).fills[0];
    if (f !== undefined) this.emitUser(log, seq, 'fill', JSON.stringify({ ...f, release: String(release) } satisfies FillMessage));
    if (this.views.orderFilled(orderId)) {
      this.touchedOrders.delete(orderId);
      this.emitOrder(log, orderId, seq);
    } else {
      this.touchedOrders.set(orderId, log);
    }
  }

  private orderExtras(item: OrderWithStatus, orderId: number): OpenOrder {
    const r = this.pair;
    this.views.orderReservation(orderId, r);
    return { ...item, reserved_cash: String(r[0]!), fee_per_share: r[1]! };
  }

  private emitOrder(log: UserLog, orderId: number, seq: number): void {
    const item = this.views.order(log.account, orderId);
    if (item === null) return; // evicted within its own command (terminal_cap 0): nothing left to render
    this.emitUser(log, seq, 'order', JSON.stringify({ ...this.orderExtras(item, orderId), seq: String(seq) } satisfies OrderMessage));
  }

  private onRound(market: number, roundNumber: number, seq: number): void {
    const one = this.roundStream[market];
    if (one === undefined && this.roundsAll === undefined) return;
    const r = this.views.roundRecord(roundNumber);
    if (r === null) return;
    const body = JSON.stringify({ ...r, seq: String(seq) } satisfies RoundMessage);
    if (one !== undefined) this.publish(one, 'round', body);
    if (this.roundsAll !== undefined) this.publish(this.roundsAll, 'round', body);
  }

  /** End of a command: orderbook deltas, deferred order messages, positions and balances, the oracle. */
  private completeCommand(seq: number): void {
    this.midCommand = false;
    const books = this.dirtyBooks;
    if (books.length > 0) {
      for (let i = 0; i < books.length; i++) this.publishDeltas(books[i]!, seq);
      books.length = 0;
    }
    if (this.touchedOrders.size > 0) {
      for (const [id, log] of this.touchedOrders) this.emitOrder(log, id, seq);
      this.touchedOrders.clear();
    }
    const touched = this.touched;
    if (touched.length > 0) {
      for (let i = 0; i < touched.length; i++) this.emitAccount(touched[i]!, seq);
      touched.length = 0;
    }
    if (this.oracle !== undefined) {
      const now = this.oracleNow;
      const last = this.lastOracle;
      this.views.oracleNumbers(now);
      if (now[0] !== last[0] || now[1] !== last[1] || now[2] !== last[2]) {
        last.set(now);
        this.publish(this.oracle, 'oracle', `{"price":"${now[0]}","fresh_source_count":${now[1]},"seq":"${now[2]}"}`);
      }
    }
    if (this.msgs.length > 0 || this.peers.length > 0) this.onQueued();
  }

  private publishDeltas(market: number, seq: number): void {
    const s = this.obStream[market];
    const mir = this.mirror[market];
    if (s === undefined || mir === undefined) return;
    const changed = this.changedLevels;
    const previous = this.changedWas;
    const n = this.views.diffBookLevels(market, mir, changed, previous);
    for (let k = 0; k < n; k++) {
      const i = changed[k]!;
      const now = mir[i]!;
      const was = previous[k]!;
      const ladder = i >= BOOK_ROW ? 1 : 0;
      const tick = i - ladder * BOOK_ROW;
      this.publish(
        s,
        'orderbook_delta',
        `{"market_id":${market},"side":"${LADDER_NAMES[ladder]}","tick":${tick},"qty":${now},"delta":${now - was},"as_of_seq":"${seq}"}`,
      );
    }
  }

  /** Balance and position changes of one account at the end of a command. */
  private emitAccount(log: UserLog, seq: number): void {
    const a = log.account;
    const v = this.views;
    const now = this.positionNow;
    for (let i = 0; i < log.markets.length; i++) {
      const market = log.markets[i]!;
      v.positionNumbers(a, market, now);
      let last = log.lastPosition.get(market);
      if (last === undefined) {
        last = new Float64Array(4);
        log.lastPosition.set(market, last);
      }
      for (let outcome = 0; outcome < 2; outcome++) {
        const free = now[2 * outcome]!;
        const res = now[2 * outcome + 1]!;
        if (free === last[2 * outcome] && res === last[2 * outcome + 1]) continue;
        last[2 * outcome] = free;
        last[2 * outcome + 1] = res;
        this.emitUser(
          log,
          seq,
          'position',
          `{"market_id":${market},"outcome":"${OUTCOME_NAMES[outcome]}","free":${free},"reserved_for_sale":${res},"seq":"${seq}"}`,
        );
      }
    }
    log.markets.length = 0;
    const cash = this.pair;
    v.cashNumbers(a, cash);
    const available = cash[0]!;
    const reserved = cash[1]!;
    if (available !== log.lastAvailable || reserved !== log.lastReserved) {
      log.lastAvailable = available;
      log.lastReserved = reserved;
      this.emitUser(log, seq, 'balance', `{"available":"${available}","reserved":"${reserved}","cause":"${log.cause}","seq":"${seq}"}`);
    }
    log.cause = '';
    log.inCommand = false;
  }

  /** A new log starts from the current balance and positions (a snapshot states them; later messages report changes). */
  private primePositions(log: UserLog): void {
    const a = log.account;
    for (const pos of this.views.positions(a, { limit: Number.MAX_SAFE_INTEGER }).positions) {
      let last = log.lastPosition.get(pos.market_id);
      if (last === undefined) {
        last = new Float64Array(4);
        log.lastPosition.set(pos.market_id, last);
      }
      const k = pos.outcome === 'yes' ? 0 : 2;
      last[k] = pos.free;
      last[k + 1] = pos.reserved_for_sale;
    }
  }
}
