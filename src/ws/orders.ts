// orders: JSON order entry on the WebSocket lane. Each command names one REST
// operation and runs the REST lane's own steps (http.ts admitRoute, then
// route_input.ts, then invokeRoute): the same bucket and cost, scope check,
// closed schema, handler, holding until the durable outcome, shedding and
// timeout. The answer {id, type: "order_result", status, msg} carries the
// REST body (msg) and the HTTP status REST would have answered; a failure's
// msg is the REST error envelope {error: {...}}. Gateway threads; never
// blocks (answers are queued when their completion is drained).

import { Type } from '@sinclair/typebox';
import { ApiError, codeInfo } from '../gateway/envelope.js';
import { admitRoute, asApiError, invokeRoute, type Caller, type LaneOptions } from '../gateway/http.js';
import type { StageTimes } from '../gateway/core.js';
import { monoUs } from '../lib/mono_clock.js';
import { pathParamSchema } from '../gateway/operation_schemas.js';
import { routeInput, routeInputChecker, type RouteInput, type RouteInputChecker } from '../gateway/route_input.js';
import { bodyJson, ROUTES, type Reply, type Route } from '../gateway/routes.js';
import { checkJsonHygiene, compile, validate } from '../gateway/schemas.js';
import type { BatchCancelResult } from '../wire/responses.js';
import type { OrderResultBody } from '../wire/ws.js';

/** The order commands, each with the REST operation it runs. */
export const ORDER_COMMANDS = {
  place_order: 'place_order',
  batch_place_orders: 'place_batch',
  cancel_order: 'cancel_batch',
  batch_cancel_orders: 'cancel_batch',
  decrease_order: 'decrease_order',
  cancel_all: 'cancel_all_orders',
} as const;
export type OrderCommand = keyof typeof ORDER_COMMANDS;

export function isOrderCommand(cmd: string): cmd is OrderCommand {
  return Object.hasOwn(ORDER_COMMANDS, cmd);
}

interface Entry {
  route: Route;
  checker: RouteInputChecker;
}

const ENTRIES = new Map<OrderCommand, Entry>(Object.entries(ORDER_COMMANDS).map(([cmd, name]) => {
  const route = ROUTES.find((r) => r.name === name);
  if (route === undefined) throw new Error(`ws orders: no route ${name}`);
  return [cmd as OrderCommand, { route, checker: routeInputChecker(route) }];
}));

/** cancel_order is one id of a batch cancel: {order_id} (a u64 string). */
const cancelOrderParams = compile(Type.Object({ order_id: pathParamSchema('order_id') }, { additionalProperties: false }));

/** What the lane needs of a connection to run its order commands. */
export interface OrderPeer {
  readonly keyId: number;
  /** The key's row: its index in the per-key tables (token buckets), as at the upgrade. */
  readonly keyRow: number;
  readonly account: number;
  readonly scopes: number;
  /** Commands (batch items) held for their outcome on this connection. */
  inFlight: number;
  readonly open: boolean;
}

/** The reply frame of an order command (its shape: `order_result` in src/wire/ws.ts). */
export function orderResult(id: number | null, status: number, msg: OrderResultBody): string {
  return `{"id":${id},"type":"order_result","status":${status},"msg":${bodyJson(msg)}}`;
}

function errorResult(id: number | null, e: ApiError): string {
  return orderResult(id, e.status, e.body());
}

/** The number of commands an order command holds (one per batch item); params already validated. */
function itemsOf(cmd: OrderCommand, input: RouteInput): number {
  if (cmd === 'batch_place_orders') return (input.body as { orders: unknown[] }).orders.length;
  if (cmd === 'batch_cancel_orders' || cmd === 'cancel_order') return (input.body as { order_ids: unknown[] }).order_ids.length;
  return 1;
}

/**
 * Runs one order command. `answer` is called exactly once with the reply
 * frame: at once for a refusal, or when the outcome is durable (or timed out).
 */
export function runOrderCommand(
  lane: LaneOptions, peer: OrderPeer, id: number | null, cmd: OrderCommand, params: unknown, maxInFlight: number, now: number,
  times: StageTimes | null, answer: (frame: string, status: number, code: string | null) => void,
): void {
  const { route, checker } = ENTRIES.get(cmd)!;
  const caller: Caller = { keyId: peer.keyId, keyRow: peer.keyRow, account: peer.account, scopes: peer.scopes };
  let held = 0;
  const settle = (r: Reply): void => {
    peer.inFlight -= held;
    // The routes of ORDER_COMMANDS answer the bodies of OrderResultBody (their handlers are typed so).
    if (cmd !== 'cancel_order') {
      answer(orderResult(id, r.status, r.body as OrderResultBody), r.status, null);
      return;
    }
    // The one item of the batch cancel: a cancel result, or {error} answered with that error's status.
    const item = (r.body as BatchCancelResult).results[0]!;
    if (!('error' in item)) answer(orderResult(id, r.status, item), r.status, null);
    else answer(orderResult(id, codeInfo(item.error.code).http, item), codeInfo(item.error.code).http, item.error.code);
  };
  const fail = (e: unknown): void => {
    peer.inFlight -= held;
    const api = asApiError(e);
    if (api !== null) {
      answer(errorResult(id, api), api.status, api.code);
      return;
    }
    lane.log?.({ event: 'handler_fault', route: `ws:${cmd}`, error: (e as Error)?.stack ?? String(e) });
    const internal = new ApiError('internal', 'a fault of the exchange (logged); the command may not have taken effect');
    answer(errorResult(id, internal), internal.status, internal.code);
  };
  try {
    if (lane.stopping?.()) throw new ApiError('shed', 'the exchange is shutting down');
    // REST's order after authentication: 429 (one token now), 403, 400, the rest of a batch's cost, the handler.
    admitRoute(lane, route, caller, now);
    // The body's transport hygiene, as REST checks it before its schema (depth cap, no prototype keys: invalid_json).
    checkJsonHygiene(params);
    const input = cmd === 'cancel_order'
      ? { params: [], query: {}, body: { order_ids: [validate(cancelOrderParams, params).order_id] } }
      : routeInput(checker, params);
    const n = itemsOf(cmd, input);
    if (peer.inFlight + n > maxInFlight) {
      throw new ApiError('shed', `more than ${maxInFlight} commands in flight on this connection; wait for answers`, {
        max_in_flight: maxInFlight,
      });
    }
    if (times !== null) times.tVerified = monoUs();
    const out = invokeRoute(lane, route, caller, input.params, input.query, input.body, now, times);
    if (out instanceof Promise) {
      held = n;
      peer.inFlight += n;
      lane.core.kick();
      out.then(settle, fail);
    } else {
      settle(out);
    }
  } catch (e) {
    fail(e);
  }
}
