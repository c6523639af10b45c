// server: answers one MCP message of an authenticated caller (the HTTP glue
// in http.ts has already checked the signature). Stateless: nothing is kept
// between messages, so initialize only negotiates the version and any
// gateway thread can serve any message.
//
// Costs: tools/call costs exactly the rate-limit tokens of the tool's REST
// twin (admitRoute/invokeRoute, the REST lane's own functions); every other
// message (initialize, ping, tools/list, notifications, and messages that
// cannot be read) costs one read token, so a flood of protocol chatter is
// limited like reads. A rate limit on a protocol message is the HTTP 429
// envelope; on a tool call it is that tool's isError result.
//
// Errors: a REST error of a tool (validation, scope, rate limit, core
// reject) is a result with isError true whose text is the error envelope;
// an unknown tool or malformed tools/call params is JSON-RPC -32602; a bug
// is -32603 (and logged). Gateway threads.

import { BUCKET_READ } from '../gateway/buckets.js';
import { ApiError } from '../gateway/envelope.js';
import { admitRoute, asApiError, invokeRoute, type Caller, type LaneOptions } from '../gateway/http.js';
import type { StageTimes } from '../gateway/core.js';
import type { Reply } from '../gateway/routes.js';
import { checkJsonHygiene, decodedWhole } from '../gateway/schemas.js';
import { SERVER_VERSION } from '../lib/version.js';
import { PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, type RpcId, type RpcResponse } from '../wire/jsonrpc.js';
import {
  INTERNAL_ERROR, INVALID_PARAMS, McpRpcError, METHOD_NOT_FOUND, PARSE_ERROR, SERVER_NAME, classify, rpcError, rpcResult,
} from './protocol.js';
import { routeInput } from '../gateway/route_input.js';
import { TOOL_DEFINITIONS, TOOLS_BY_NAME } from './tools.js';

export const INSTRUCTIONS = [
  'dx is an exchange for binary (YES/NO) prediction markets. A market trades in rounds; a round resolves yes or no from an oracle',
  'reference price at its close (yes iff price >= strike).',
  'Prices are integer ticks 1..99, in cents per share. One YES share plus one NO share of a market always pay exactly 100 cents together',
  '(a settled round pays 100 to each winning share and 0 to each losing one; a void round pays 50 to every share), so buying YES at 40',
  'is the same price as selling NO at 60. Money is integer cents. Ids, seqs, cent amounts and timestamps (ns since the epoch) are decimal',
  'strings; small integers (market_id, tick, qty) are numbers.',
  'Each market has two bid ladders: YES bids at YES-space ticks and NO bids at NO-space ticks. A NO bid at t is a YES ask at 100 - t;',
  'get_orderbook returns both ladders as [tick, qty] pairs, best first. A YES bid at y and a NO bid at n trade when y + n >= 100.',
  'Orders: side buy or sell (sell only shares you hold), outcome yes or no, tick in that outcome\'s own space, qty in shares.',
  'Execution outcomes (post_only_cross, fok_infeasible, ioc_remainder, self_trade_prevention, max_cost_infeasible) are successful',
  'placements with status canceled and a reason, not errors. Errors are tool results with isError true carrying the exchange error',
  'envelope {error: {code, num, origin, message, details}}.',
  'Always give place_order a fresh client_order_id: a retry with the same id is refused duplicate_client_order_id and names the',
  'original order, so an order is never doubled; after sequencing_timeout, ask list_orders with that client_order_id.',
  'Each tool costs the rate-limit tokens of its REST twin (reads 100/s burst 200, writes 50/s burst 100, batches one token per item);',
  'after rate_limited wait details.retry_after_ms. Start with get_account_limits, list_markets with status ["trading"], and get_balance.',
  'The dead-man timer (arm_deadman) cancels all your orders unless refreshed; refresh at a third of timeout_ms.',
].join(' ');

/** What to answer on HTTP: 200 with a response, 202 with nothing, or 400 with an error that has no id. */
export interface McpOutcome {
  status: 200 | 202 | 400;
  body?: RpcResponse;
  /** For metrics: the route name (`mcp`, one entry of the REST lane's metrics table), and the error code of an isError result. */
  route: string;
  code: string | null;
}

function chargeProtocol(opts: LaneOptions, caller: Caller, now: number): void {
  const wait = opts.buckets.take(caller, BUCKET_READ, 1, now);
  if (wait > 0) throw new ApiError('rate_limited', 'rate limit exceeded', { retry_after_ms: String(wait) });
}

function toolSuccess(id: RpcId, route: string, reply: Reply): McpOutcome {
  return {
    status: 200, route, code: null,
    body: rpcResult(id, { content: [{ type: 'text', text: JSON.stringify(reply.body) }], structuredContent: reply.body, isError: false }),
  };
}

// The envelope travels as JSON text only: structuredContent must conform to
// the tool's outputSchema (the SDK client checks it even on errors), and the
// envelope is not the success shape.
function toolError(id: RpcId, route: string, e: ApiError): McpOutcome {
  return {
    status: 200,
    route,
    code: e.code,
    body: rpcResult(id, { content: [{ type: 'text', text: JSON.stringify(e.body()) }], isError: true }),
  };
}

/**
 * Answers one POSTed body (raw bytes) of an authenticated caller. Throws
 * ApiError only for the HTTP-level 429 of a protocol message.
 */
export function handleMcp(
  opts: LaneOptions,
  caller: Caller,
  raw: Buffer,
  now: number,
  times: StageTimes | null = null,
): McpOutcome | Promise<McpOutcome> {
  let msg: unknown;
  const text = raw.toString('utf8');
  // JSON is UTF-8: bytes that are not are a parse error, never text with U+FFFD the client did not send.
  let unparsed = decodedWhole(raw, text) ? null : 'the body is not valid UTF-8';
  if (unparsed === null) {
    try {
      // JSON.parse alone: -32700 is for text that is not JSON. The body's hygiene rules (depth, prototype keys) apply to a
      // tool's arguments as to a REST body, inside the tool's result (callTool).
      msg = JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      unparsed = e.message;
    }
  }
  if (unparsed !== null) {
    chargeProtocol(opts, caller, now);
    return { status: 400, route: 'mcp', code: null, body: rpcError(null, PARSE_ERROR, `invalid JSON: ${unparsed}`) };
  }
  const c = classify(msg);
  if (c.kind === 'request' && c.method === 'tools/call') return callTool(opts, caller, c.id, c.params, now, times);
  chargeProtocol(opts, caller, now);
  switch (c.kind) {
    case 'invalid': return { status: c.id === null ? 400 : 200, route: 'mcp', code: null, body: rpcError(c.id, c.code, c.message) };
    case 'notification':
    case 'response':
      // notifications/initialized, notifications/cancelled and the like need no action from a stateless server.
      return { status: 202, route: 'mcp', code: null };
    case 'request':
      try {
        return { status: 200, route: 'mcp', code: null, body: rpcResult(c.id, protocolMethod(c.method, c.params)) };
      } catch (e) {
        if (!(e instanceof McpRpcError)) throw e;
        return { status: 200, route: 'mcp', code: null, body: rpcError(c.id, e.code, e.message, e.data) };
      }
  }
}

function protocolMethod(method: string, params: Record<string, unknown>): unknown {
  switch (method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      if (typeof asked !== 'string') throw new McpRpcError(INVALID_PARAMS, 'initialize needs params.protocolVersion (a string)');
      // Version negotiation: the client's version when we speak it, else ours (the client decides whether to go on).
      return {
        protocolVersion: SUPPORTED_PROTOCOL_VERSIONS.includes(asked) ? asked : PROTOCOL_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: { name: SERVER_NAME, title: 'dx prediction-market exchange', version: SERVER_VERSION },
        instructions: INSTRUCTIONS,
      };
    }
    case 'ping':
      return {};
    case 'tools/list':
      if (params.cursor !== undefined) throw new McpRpcError(INVALID_PARAMS, 'tools/list has a single page: send it without a cursor');
      return { tools: TOOL_DEFINITIONS };
    default:
      throw new McpRpcError(METHOD_NOT_FOUND, `method ${method} is not served here (initialize, ping, tools/list, tools/call)`);
  }
}

function callTool(
  opts: LaneOptions, caller: Caller, id: RpcId, params: Record<string, unknown>, now: number, times: StageTimes | null,
): McpOutcome | Promise<McpOutcome> {
  const name = params.name;
  const tool = typeof name === 'string' ? TOOLS_BY_NAME.get(name) : undefined;
  const args = params.arguments ?? {};
  if (tool === undefined || args === null || typeof args !== 'object' || Array.isArray(args)) {
    chargeProtocol(opts, caller, now);
    const message = typeof name !== 'string' ? 'tools/call needs params.name (a tool name from tools/list)'
      : tool === undefined ? `unknown tool ${name}; tools/list names every tool` : 'params.arguments must be an object';
    return { status: 200, route: 'mcp', code: null, body: rpcError(id, INVALID_PARAMS, message) };
  }
  const route = 'mcp';
  const settle = (e: unknown): McpOutcome => {
    const api = asApiError(e);
    if (api !== null) return toolError(id, route, api);
    opts.log?.({ event: 'handler_fault', route: `mcp:${tool.route.name}`, error: (e as Error)?.stack ?? String(e) });
    return {
      status: 200,
      route,
      code: 'internal',
      body: rpcError(id, INTERNAL_ERROR, 'internal error of the exchange (logged); the call may not have taken effect'),
    };
  };
  try {
    // The REST lane's order after authentication: 429, 403, 400, then the handler.
    admitRoute(opts, tool.route, caller, now);
    checkJsonHygiene(args);
    const input = routeInput(tool, args);
    const out = invokeRoute(opts, tool.route, caller, input.params, input.query, input.body, now, times);
    if (out instanceof Promise) {
      opts.core.kick();
      return out.then((r) => toolSuccess(id, route, r), settle);
    }
    return toolSuccess(id, route, out);
  } catch (e) {
    return settle(e);
  }
}
