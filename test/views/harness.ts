// Harness for the read-model tests: drives a real Engine with encoded
// commands and feeds every event it emits to a Views, as a gateway thread
// would from the broadcast ring. Helpers name the usual set-up steps.

import assert from 'node:assert/strict';
import type { EngineConfig } from '../../src/engine/config.js';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { Outcome, Side, Stp, Tif } from '../../src/layout/records.js';
import { encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { applyRange } from '../../src/views/apply_stream.js';
import { Views, type ViewsConfig } from '../../src/views/views.js';

export const T0 = 1_750_000_000_000_000_000n;
export const NS_PER_MS = 1_000_000n;

export interface OrderSpec {
  market?: number;
  side?: 'buy' | 'sell';
  outcome?: 'yes' | 'no';
  tick: number;
  qty: number;
  tif?: 'gtc' | 'gtd' | 'ioc' | 'fok';
  post_only?: boolean;
  stp?: 'cancel_taker' | 'cancel_maker' | 'cancel_both';
  coid?: bigint;
  max_cost?: number;
  group?: number;
  expiry_ms?: number;
}

export class Harness {
  readonly out = new BufferEventOut(1 << 22);
  readonly engine: Engine;
  readonly views: Views;
  now = T0;
  private corr = 0;
  /** Events of the last command, decoded. */
  last: RecordObject[] = [];

  constructor(engine: Partial<EngineConfig> = {}, views: Partial<ViewsConfig> = {}) {
    this.engine = new Engine(engine, this.out);
    this.views = new Views(engine, views);
  }

  /** Sends one command; applies its events to the views; returns its completion (null when dropped). */
  send(cmd: RecordObject): RecordObject | null {
    const { mem } = encodeToMem({ producer: 100, correlation: ++this.corr, ts: this.now, ...cmd });
    const seq = this.engine.execute(mem, 0);
    const n = applyRange(this.views, this.out.mem, 0, this.out.length);
    this.last = this.out.take();
    assert.equal(n, this.last.length);
    if (seq === 0) return null;
    const c = this.last[this.last.length - 1]!;
    assert.equal(c.type, 'CommandCompleted');
    assert.equal(this.views.asOfSeq, seq);
    return c;
  }

  /** Sends a command that must succeed; returns its completion's result. */
  ok(cmd: RecordObject): number {
    const c = this.send(cmd)!;
    assert.equal(c.status, 0, `${cmd.type} rejected with num ${String(c.code_num)}`);
    return c.result as number;
  }

  account(deposit = 1_000_000): number {
    const a = this.ok({ type: 'CreateAccount' });
    if (deposit > 0) this.ok({ type: 'Deposit', account: a, amount: deposit });
    return a;
  }

  feeSchedule(taker_bps: number, maker_bps: number): number {
    return this.ok({ type: 'CreateFeeSchedule', taker_bps, maker_bps });
  }

  /** A market with a trading round (unless round is false). */
  market(
    o: { category?: number; fees?: number; limit?: number; title?: string; round?: boolean; strike?: number; close_ms?: number } = {},
  ): number {
    const id = this.ok({
      type: 'CreateMarket',
      category: o.category ?? 1,
      position_limit: o.limit ?? 0,
      fee_schedule_id: o.fees ?? 0,
      title: o.title ?? 'test market',
    });
    if (o.round !== false) this.openRound(id, o.strike ?? 100, o.close_ms ?? 3_600_000);
    return id;
  }

  openRound(market: number, strike = 100, closeMs = 3_600_000): number {
    return this.ok({ type: 'OpenRound', market_id: market, strike, close_ts: this.now + BigInt(closeMs) * NS_PER_MS });
  }

  place(account: number, o: OrderSpec): RecordObject {
    const cmd: RecordObject = {
      type: 'PlaceOrder', account, market_id: o.market ?? 1, side: Side[o.side ?? 'buy'], outcome: Outcome[o.outcome ?? 'yes'],
      tick: o.tick, qty: o.qty, tif: Tif[o.tif ?? 'gtc'], stp: Stp[o.stp ?? 'cancel_taker'], post_only: o.post_only ? 1 : 0,
      group_id: o.group ?? 0,
    };
    if (o.coid !== undefined) {
      cmd.has_client_order_id = 1;
      cmd.client_order_id = o.coid;
    }
    if (o.max_cost !== undefined) {
      cmd.has_max_cost = 1;
      cmd.max_cost = o.max_cost;
    }
    if (o.tif === 'gtd') cmd.expiry_ts = this.now + BigInt(o.expiry_ms ?? 60_000) * NS_PER_MS;
    return this.send(cmd)!;
  }

  /** Places an order that must be accepted; returns its order_id. */
  order(account: number, o: OrderSpec): number {
    const c = this.place(account, o);
    assert.equal(c.status, 0, `placement rejected with num ${String(c.code_num)}`);
    return c.order_id as number;
  }

  /** Advances the clock by ms and sends a ClockTick; returns its completion or null when dropped. */
  tick(ms: number): RecordObject | null {
    this.now += BigInt(ms) * NS_PER_MS;
    return this.send({ type: 'ClockTick' });
  }

  /** The sequencer ts of the last command, as a decimal string. */
  lastTs(): string {
    return String(this.last[this.last.length - 1]!.ts);
  }
}
