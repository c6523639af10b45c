// store: everything the trader page shows, kept current from REST reads and
// the WebSocket lane, with one change counter the components listen to.
//   - markets: GET /v1/markets every 2 s (best bid/ask, status, close time);
//   - the selected market: its book (orderbook_delta: snapshot + deltas),
//     trades tape, round and candles; the oracle price;
//   - the account (the private `user` channel): open orders, positions,
//     balance, fills (the last ones read once over REST, then live).
// REST reads and stream messages are lined up by seq: a REST answer at
// as_of_seq S already contains every stream message with seq <= S.
// Browser main thread.

import type {
  Fill, FillsPage, Market, MarketsPage, OraclePrice, OrderWithStatus, Position, Round, RoundWithSeq, Trade, TradesPage, WsDataMessage,
} from '../../client/types.js';
import { ApiError, errorText, type SignedApi } from '../lib/api.js';
import { BookState, type Side as Ladder } from '../lib/book.js';
import { Lane, type LaneStatus } from '../lib/lane.js';

/** A tape entry: the REST tape item or a `trade` message, in one shape. */
export type TapeItem = Pick<Trade, 'seq' | 'ts' | 'tick_yes' | 'qty' | 'taker_side' | 'taker_outcome'>;

/** An open order as the user channel shows it (its snapshot's orders and `order` messages carry more). */
export type OpenOrder = OrderWithStatus;

const TAPE_MAX = 50;
const FILLS_MAX = 50;
const MARKETS_EVERY_MS = 2000;

export class TraderStore {
  readonly lane: Lane;
  version = 0;
  connection: LaneStatus = 'connecting';
  notice = '';
  markets: Market[] = [];
  selected: number | null = null;
  book: BookState | null = null;
  tape: TapeItem[] = [];
  round: (Round & { seq?: string; as_of_seq?: string }) | null = null;
  oracle: OraclePrice = { price: '0', fresh_source_count: 0, seq: '0' };
  readonly orders = new Map<string, OpenOrder>();
  readonly positions = new Map<string, Position>();
  balance: { available: string; reserved: string } | null = null;
  fills: Fill[] = [];
  /** Trades of the selected market as they arrive (the chart folds them into its candles). */
  onTrade: ((t: TapeItem) => void) | null = null;
  private readonly listeners = new Set<() => void>();
  private marketSubs: (() => void)[] = [];
  private pollTimer: ReturnType<typeof setInterval> | null = null;
  private stopped = false;
  private pendingTrades: TapeItem[] | null = null;
  /** The tape reads started: only the last one's answer is shown. */
  private tapeReads = 0;
  /** user_snapshots taken: each after the first (a reconnect, a gap) reads the fills again (a snapshot carries none). */
  private userSnapshots = 0;
  private scheduled = false;
  /** Times the lane came back after a drop (the chart reloads its candles on each). */
  reconnects = 0;

  constructor(readonly api: SignedApi) {
    this.lane = new Lane(api);
    this.lane.onStatus = (s) => {
      // Back after a drop: the streams start again with snapshots, but trades
      // made meanwhile are read again (tape, and the chart's candles).
      // Rounds and the oracle have no snapshot on their streams either: they are read again too.
      if (s === 'live' && this.connection === 'reconnecting') {
        this.loadOracle();
        if (this.selected !== null) {
          this.reconnects++;
          this.pendingTrades = [];
          void this.loadTape(this.selected);
          this.loadRound(this.selected);
        }
      }
      this.connection = s;
      if (s === 'revoked') this.notice = 'This key was revoked: sign in with another key.';
      this.changed();
    };
    this.lane.onError = (text) => {
      this.notice = text;
      this.changed();
    };
  }

  listen(f: () => void): () => void {
    this.listeners.add(f);
    return () => this.listeners.delete(f);
  }

  /** Notes a change; listeners run once per animation frame however many messages arrived. */
  changed(): void {
    this.version++;
    if (this.scheduled) return;
    this.scheduled = true;
    requestAnimationFrame(() => {
      this.scheduled = false;
      for (const f of this.listeners) f();
    });
  }

  /** Starts the lane and the reads; resolves once the first markets page is in. */
  async start(): Promise<void> {
    this.lane.start();
    this.lane.subscribe('user', null, (m) => {
      if (m.type !== 'gap') this.onUser(m);
    });
    this.lane.subscribe('oracle', null, (m) => {
      if (m.type !== 'oracle') return;
      this.oracle = m.msg;
      this.changed();
    });
    this.loadOracle();
    this.loadFills();
    await this.loadMarkets();
    // Signed out (stop) while the first read was on its way: start nothing more with the key.
    if (this.stopped) return;
    this.pollTimer = setInterval(() => void this.loadMarkets().catch((e) => this.fail(e)), MARKETS_EVERY_MS);
    const first = this.markets.find((m) => m.status === 'trading') ?? this.markets[0];
    if (first !== undefined && this.selected === null) this.select(first.market_id);
  }

  stop(): void {
    this.stopped = true;
    if (this.pollTimer !== null) clearInterval(this.pollTimer);
    for (const u of this.marketSubs) u();
    this.lane.stop();
  }

  /** The oracle stream sends changes only (nothing on subscribe): read at start and after each reconnect. */
  private loadOracle(): void {
    this.api.get<OraclePrice>('/v1/oracle/price').then(
      (o) => {
        if (BigInt(o.seq) > BigInt(this.oracle.seq)) this.oracle = o;
        this.changed();
      },
      (e) => this.fail(e),
    );
  }

  private loadFills(): void {
    this.api.get<FillsPage>(`/v1/portfolio/fills?limit=${FILLS_MAX}`).then(
      (r) => this.mergeFills(r.fills),
      (e) => this.fail(e),
    );
  }

  fail(e: unknown): void {
    this.notice = errorText(e);
    this.changed();
  }

  private async loadMarkets(): Promise<void> {
    const r = await this.api.get<MarketsPage>('/v1/markets?limit=1000');
    this.markets = r.markets;
    this.changed();
  }

  // ---- the selected market ---------------------------------------------------------

  select(marketId: number): void {
    if (this.selected === marketId) return;
    for (const u of this.marketSubs) u();
    this.selected = marketId;
    const book = new BookState(marketId);
    this.book = book;
    this.tape = [];
    this.round = null;
    this.pendingTrades = [];
    this.marketSubs = [
      this.lane.subscribe('orderbook_delta', marketId, (m) => {
        if (m.type === 'orderbook_snapshot') book.snapshot(m.msg);
        else if (m.type === 'orderbook_delta') book.delta(m.msg);
        this.changed();
      }),
      this.lane.subscribe('trades', marketId, (m) => {
        if (m.type === 'gap') {
          // Trades from now until the read's answer are held, as on a reconnect, and lined up with it.
          this.pendingTrades ??= [];
          void this.loadTape(marketId);
          return;
        }
        if (m.type !== 'trade') return;
        const msg = m.msg;
        const t: TapeItem = {
          seq: msg.trade_seq,
          ts: msg.ts,
          tick_yes: msg.tick_yes,
          qty: msg.qty,
          taker_side: msg.taker_side,
          taker_outcome: msg.taker_outcome,
        };
        if (this.pendingTrades !== null) this.pendingTrades.push(t);
        else this.addTrade(t);
      }),
      this.lane.subscribe('rounds', marketId, (m) => {
        if (m.type === 'round') this.setRound(m.msg, m.msg.seq);
      }),
    ];
    void this.loadTape(marketId);
    this.loadRound(marketId);
    this.changed();
  }

  private loadRound(marketId: number): void {
    this.api.get<RoundWithSeq>(`/v1/rounds/${marketId}`).then(
      (r) => this.setRound(r, r.as_of_seq),
      (e) => {
        if (!(e instanceof ApiError && e.code === 'round_not_found')) this.fail(e);
      },
    );
  }

  private setRound(r: Round, seq: string): void {
    if (this.round !== null && this.round.market_id === r.market_id) {
      const mine = this.round.seq ?? this.round.as_of_seq ?? '0';
      if (BigInt(mine) > BigInt(seq)) return;
    }
    if (r.market_id !== this.selected) return;
    this.round = { ...r, seq };
    // The market list follows at once (it is polled too).
    const m = this.markets.find((x) => x.market_id === r.market_id);
    if (m !== undefined) {
      const status = r.status === 'trading' || r.status === 'frozen' || r.status === 'proposed' ? r.status : 'closed';
      this.markets = this.markets.map((x) => (x === m ? { ...m, status, close_ts: r.close_ts } : x));
    }
    this.changed();
  }

  private async loadTape(marketId: number): Promise<void> {
    const read = ++this.tapeReads;
    try {
      const r = await this.api.get<TradesPage>(`/v1/markets/${marketId}/trades?limit=${TAPE_MAX}`);
      if (this.selected !== marketId || read !== this.tapeReads) return;
      const after = BigInt(r.as_of_seq);
      const live = (this.pendingTrades ?? []).filter((t) => BigInt(t.seq) > after);
      this.pendingTrades = null;
      this.tape = r.trades;
      for (const t of live) this.addTrade(t);
      this.changed();
    } catch (e) {
      // No tape to line them up with: the trades held meanwhile, and those to come, go on the tape as they are.
      if (this.selected === marketId && read === this.tapeReads && this.pendingTrades !== null) {
        const held = this.pendingTrades;
        this.pendingTrades = null;
        for (const t of held) this.addTrade(t);
      }
      this.fail(e);
    }
  }

  private addTrade(t: TapeItem): void {
    this.tape = [t, ...this.tape].slice(0, TAPE_MAX);
    this.onTrade?.(t);
    this.changed();
  }

  /** Own resting quantity per tick of a ladder of the selected market (a sell of one outcome rests on the other ladder). */
  ownOnLadder(ladder: Ladder): Map<number, number> {
    const out = new Map<number, number>();
    for (const o of this.orders.values()) {
      if (o.market_id !== this.selected) continue;
      const onYes = (o.side === 'buy') === (o.outcome === 'yes');
      if ((ladder === 'yes') !== onYes) continue;
      const tick = o.side === 'buy' ? o.tick : 100 - o.tick;
      out.set(tick, (out.get(tick) ?? 0) + o.remaining_qty);
    }
    return out;
  }

  // ---- the account -------------------------------------------------------------------

  private onUser(m: WsDataMessage): void {
    switch (m.type) {
      case 'user_snapshot':
        this.orders.clear();
        for (const o of m.msg.orders) this.orders.set(o.order_id, o);
        this.positions.clear();
        for (const p of m.msg.positions) this.positions.set(`${p.market_id}:${p.outcome}`, p);
        this.balance = m.msg.balance;
        if (this.userSnapshots++ > 0) this.loadFills();
        break;
      case 'order': {
        const o = m.msg;
        if (o.status === 'resting' || o.status === 'partially_filled') this.orders.set(o.order_id, o);
        else this.orders.delete(o.order_id);
        break;
      }
      case 'fill':
        this.mergeFills([m.msg]);
        return;
      case 'balance':
        this.balance = { available: m.msg.available, reserved: m.msg.reserved };
        break;
      case 'position': {
        const p = m.msg;
        if (p.free === 0 && p.reserved_for_sale === 0) this.positions.delete(`${p.market_id}:${p.outcome}`);
        else this.positions.set(`${p.market_id}:${p.outcome}`, p);
        break;
      }
      default:
        return;
    }
    this.changed();
  }

  private mergeFills(list: Fill[]): void {
    const key = (f: Fill): string => `${f.fill_id}:${f.order_id}`;
    const seen = new Set(this.fills.map(key));
    const merged = [...this.fills, ...list.filter((f) => !seen.has(key(f)))];
    merged.sort((a, b) => (BigInt(b.seq) > BigInt(a.seq) ? 1 : BigInt(b.seq) < BigInt(a.seq) ? -1 : Number(b.fill_id) - Number(a.fill_id)));
    this.fills = merged.slice(0, FILLS_MAX);
    this.changed();
  }
}
