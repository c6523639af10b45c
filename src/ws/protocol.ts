// protocol: the WebSocket lane's wire vocabulary (channels, reply and data
// message types, error codes, close codes), its tunables, and the parsing and
// validation of client commands. Pure functions over JSON values; gateway
// threads only. docs/websocket.md documents every item here.
//
// Commands are closed schemas like REST bodies: an unknown field is refused
// (code 3 bad_params, or 1 invalid_message at the envelope level). u64-domain
// values travel as decimal strings (resume_from_seq), small integers as
// numbers (id, sid, market ids). Order commands (orders.ts) are parsed here
// only as far as their name: their params are the REST operation's, checked
// by the REST lane's own code after the bucket and the scope, as REST does.

import {
  CHANNELS, WsError, type Channel, type OkBody, type Subscribed, type WsErrorBody, type WsErrorName,
} from '../wire/ws.js';
import { isOrderCommand, ORDER_COMMANDS, type OrderCommand } from './orders.js';

// The channel names and error codes are declared with the messages (src/wire/ws.ts).
export { CHANNELS, WsError, type Channel, type WsErrorName };

export const WS_PATH = '/v1/ws';

/** Channels whose streams are scoped by market. */
export const MARKET_CHANNELS: ReadonlySet<Channel> = new Set<Channel>(['orderbook_delta', 'trades', 'rounds']);

/** Close codes the server sends (RFC 6455 4000-4999 is the application range). */
export const WsClose = {
  /** The gateway is shutting down. */
  going_away: 1001,
  /** A binary frame could not be read as command records (after a malformed_frame error message). */
  malformed_frame: 4002,
  /** The key the connection authenticated with was revoked (or its account deleted). */
  key_revoked: 4003,
  /** The client did not read: unsent data passed slow_consumer_bytes. */
  slow_consumer: 4008,
} as const;

export interface WsConfig {
  /** Open WebSocket connections per key, over all gateway threads. */
  max_connections_per_key: number;
  /** Live subscriptions (one per channel and market, see README) per key, over all its connections. */
  max_subscriptions_per_key: number;
  /** Unsent bytes queued for one connection above which it is closed with 4008. */
  slow_consumer_bytes: number;
  /**
   * uWS idleTimeout in seconds (a multiple of 4, at least 8; 0 disables): the server pings an idle connection and closes one that stays
   * silent.
   */
  idle_timeout_s: number;
  /** User-channel messages retained per account for resume_from_seq. */
  user_log_cap: number;
  /** How long an account's retained log outlives its last user subscription on this thread. */
  resume_window_ms: number;
  /** Largest accepted command frame. */
  max_command_bytes: number;
  /** Market ids in one command. */
  max_market_ids: number;
  /** Order commands (batch items, binary records) held for their outcome on one connection; more are answered shed. */
  max_in_flight: number;
  /** Command records in one binary frame. */
  max_records_per_frame: number;
}

export const DEFAULT_WS_CONFIG: Readonly<WsConfig> = Object.freeze({
  max_connections_per_key: 16,
  max_subscriptions_per_key: 1024,
  slow_consumer_bytes: 1 << 20,
  idle_timeout_s: 32,
  user_log_cap: 4096,
  resume_window_ms: 300_000,
  max_command_bytes: 16 * 1024,
  max_market_ids: 256,
  max_in_flight: 1000,
  max_records_per_frame: 128,
});

export function wsConfig(partial: Partial<WsConfig> = {}): WsConfig {
  const c = { ...DEFAULT_WS_CONFIG, ...partial };
  for (const [k, v] of Object.entries(c)) {
    if (!Number.isSafeInteger(v) || v < 0) throw new Error(`ws config: ${k} must be a non-negative integer, got ${v}`);
  }
  if (c.idle_timeout_s !== 0 && (c.idle_timeout_s < 8 || c.idle_timeout_s % 4 !== 0)) {
    throw new Error(`ws config: idle_timeout_s must be 0 or a multiple of 4 of at least 8, got ${c.idle_timeout_s}`);
  }
  return c;
}

// ---- commands ----------------------------------------------------------------------

/** The fields an error reply's msg may carry beside code, name and msg. */
export type WsErrorExtra = Partial<Pick<WsErrorBody, 'retry_after_ms' | 'layout_fingerprint'>>;

/** A client mistake in a command: answered with an error reply, never thrown further. */
export class WsCommandError extends Error {
  /** `extra`: fields added to the error's msg beside code, name and msg. */
  constructor(readonly code: WsErrorName, message: string, readonly extra?: WsErrorExtra) {
    super(message);
  }
}

export interface SubscribeCmd {
  cmd: 'subscribe';
  channels: Channel[];
  /** Deduplicated, in the order given; null when absent. */
  market_ids: number[] | null;
  /** Exchange seq the client has seen everything up to (user channel); null when absent. */
  resume_from_seq: number | null;
}
export interface UnsubscribeCmd {
  cmd: 'unsubscribe';
  sids: number[];
}
export interface UpdateCmd {
  cmd: 'update_subscription';
  sid: number;
  action: 'get_snapshot' | 'add_markets' | 'delete_markets';
  market_ids: number[] | null;
}
/** An order command (orders.ts): its params are validated by the REST operation's own schema later. */
export interface OrderCmd {
  cmd: 'order';
  name: OrderCommand;
  params: unknown;
}
/** Agree on the native layout for binary order entry. */
export interface StartBinaryCmd {
  cmd: 'start_binary';
  layout_fingerprint: string;
}
export type Command = SubscribeCmd | UnsubscribeCmd | UpdateCmd | OrderCmd | StartBinaryCmd;

/** The parsed envelope; `id` is null when it was missing or unusable (the error reply then carries id null). */
export interface Envelope {
  id: number | null;
  command: Command;
}

const ENVELOPE_FIELDS = new Set(['id', 'cmd', 'params']);
const U64_RE = /^[0-9]{1,20}$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Reads `id` even from an otherwise bad command, so that the error reply can echo it. */
export function commandId(v: unknown): number | null {
  if (!isObject(v)) return null;
  const id = v.id;
  return Number.isSafeInteger(id) && (id as number) >= 0 ? (id as number) : null;
}

/** A text frame's UTF-8 (uWS has checked it), kept as sent: a BOM stays, as Buffer's toString keeps it; no Buffer per frame. */
const UTF8 = new TextDecoder('utf-8', { ignoreBOM: true });

/** The text of a text frame as uWS hands it over (an ArrayBuffer valid during the callback). */
export function frameText(message: ArrayBuffer): string {
  return UTF8.decode(message);
}

/**
 * Parses one command frame. Throws WsCommandError for every client mistake;
 * channel names are checked here (code 4), market existence and caps by the
 * caller (they need the read model and the connection).
 */
export function parseCommand(text: string, cfg: WsConfig): Envelope {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
    throw new WsCommandError('invalid_message', 'the message is not valid JSON');
  }
  if (!isObject(v)) throw new WsCommandError('invalid_message', 'a command is a JSON object {id, cmd, params}');
  for (const k of Object.keys(v)) {
    if (!ENVELOPE_FIELDS.has(k))
      throw new WsCommandError('invalid_message', `unknown field ${JSON.stringify(k)}; a command is {id, cmd, params}`);
  }
  const id = commandId(v);
  if (id === null) throw new WsCommandError('invalid_message', 'id must be a non-negative integer');
  if (typeof v.cmd !== 'string') throw new WsCommandError('invalid_message', 'cmd must be a string');
  // An order command's params go to the REST operation's checks as they are (a non-object is its invalid_field).
  if (isOrderCommand(v.cmd)) return { id, command: { cmd: 'order', name: v.cmd, params: v.params === undefined ? {} : v.params } };
  // An unknown cmd is unknown_command whatever its params.
  const parse = Object.hasOwn(PARSERS, v.cmd) ? PARSERS[v.cmd as keyof typeof PARSERS] : undefined;
  if (parse === undefined) {
    const named = JSON.stringify(v.cmd).slice(0, 64);
    throw new WsCommandError('unknown_command', `unknown command ${named}; one of ${COMMAND_NAMES.join(', ')}`);
  }
  const params = v.params === undefined ? {} : v.params;
  if (!isObject(params)) throw new WsCommandError('bad_params', 'params must be an object');
  return { id, command: parse(params, cfg) };
}

/** The parsers of the commands that are not order commands. */
const PARSERS = {
  subscribe: parseSubscribe,
  unsubscribe: parseUnsubscribe,
  update_subscription: parseUpdate,
  start_binary: parseStartBinary,
} satisfies Record<string, (p: Record<string, unknown>, cfg: WsConfig) => Envelope['command']>;

const COMMAND_NAMES = ['subscribe', 'unsubscribe', 'update_subscription', ...Object.keys(ORDER_COMMANDS), 'start_binary'];

function parseStartBinary(p: Record<string, unknown>): StartBinaryCmd {
  closed(p, ['layout_fingerprint'], 'start_binary');
  const f = p.layout_fingerprint;
  if (typeof f !== 'string' || !/^0x[0-9a-fA-F]{8}$/.test(f)) {
    throw new WsCommandError(
      'bad_params',
      'start_binary: layout_fingerprint must be "0x" and 8 hex digits (the fingerprint at the top of native-layout/LAYOUT.md)',
    );
  }
  return { cmd: 'start_binary', layout_fingerprint: f.toLowerCase() };
}

function closed(params: Record<string, unknown>, allowed: readonly string[], cmd: string): void {
  for (const k of Object.keys(params)) {
    if (!allowed.includes(k))
      throw new WsCommandError('bad_params', `${cmd}: unknown param ${JSON.stringify(k).slice(0, 64)}; allowed: ${allowed.join(', ')}`);
  }
}

function marketIds(v: unknown, cfg: WsConfig, cmd: string): number[] | null {
  if (v === undefined) return null;
  if (!Array.isArray(v) || v.length === 0)
    throw new WsCommandError('bad_params', `${cmd}: market_ids must be a non-empty array of integers`);
  if (v.length > cfg.max_market_ids) throw new WsCommandError('bad_params', `${cmd}: at most ${cfg.max_market_ids} market_ids per command`);
  const out: number[] = [];
  const seen = new Set<number>();
  for (const x of v) {
    if (!Number.isInteger(x) || (x as number) < 1 || (x as number) > 0xffffffff) {
      throw new WsCommandError('bad_params', `${cmd}: market_ids must be integers 1..4294967295, got ${JSON.stringify(x).slice(0, 32)}`);
    }
    if (!seen.has(x as number)) {
      seen.add(x as number);
      out.push(x as number);
    }
  }
  return out;
}

function sid(v: unknown, what: string): number {
  if (!Number.isSafeInteger(v) || (v as number) < 1) throw new WsCommandError('bad_params', `${what} must be a positive integer`);
  return v as number;
}

function parseSubscribe(p: Record<string, unknown>, cfg: WsConfig): SubscribeCmd {
  closed(p, ['channels', 'market_ids', 'resume_from_seq'], 'subscribe');
  const ch = p.channels;
  if (!Array.isArray(ch) || ch.length === 0)
    throw new WsCommandError('bad_params', 'subscribe: channels must be a non-empty array of channel names');
  const channels: Channel[] = [];
  for (const c of ch) {
    if (typeof c !== 'string') throw new WsCommandError('bad_params', 'subscribe: channel names are strings');
    if (!(CHANNELS as readonly string[]).includes(c)) {
      throw new WsCommandError(
        'unknown_channel',
        `unknown or unimplemented channel ${JSON.stringify(c).slice(0, 64)}; channels: ${CHANNELS.join(', ')}`,
      );
    }
    if (!channels.includes(c as Channel)) channels.push(c as Channel);
  }
  const market_ids = marketIds(p.market_ids, cfg, 'subscribe');
  if (channels.includes('orderbook_delta') && market_ids === null) {
    throw new WsCommandError('bad_params', 'subscribe: orderbook_delta needs market_ids');
  }
  let resume: number | null = null;
  if (p.resume_from_seq !== undefined) {
    if (!channels.includes('user')) throw new WsCommandError('bad_params', 'subscribe: resume_from_seq applies to the user channel only');
    const r = p.resume_from_seq;
    if (typeof r !== 'string' || !U64_RE.test(r) || !Number.isSafeInteger(Number(r))) {
      throw new WsCommandError('bad_params', 'subscribe: resume_from_seq must be a u64 decimal string (an exchange seq)');
    }
    resume = Number(r);
  }
  return { cmd: 'subscribe', channels, market_ids, resume_from_seq: resume };
}

function parseUnsubscribe(p: Record<string, unknown>): UnsubscribeCmd {
  closed(p, ['sids'], 'unsubscribe');
  if (!Array.isArray(p.sids) || p.sids.length === 0)
    throw new WsCommandError('bad_params', 'unsubscribe: sids must be a non-empty array of sids');
  const sids: number[] = [];
  for (const s of p.sids) {
    const n = sid(s, 'unsubscribe: each sid');
    if (!sids.includes(n)) sids.push(n);
  }
  return { cmd: 'unsubscribe', sids };
}

const ACTIONS = ['get_snapshot', 'add_markets', 'delete_markets'] as const;

function parseUpdate(p: Record<string, unknown>, cfg: WsConfig): UpdateCmd {
  closed(p, ['sid', 'action', 'market_ids'], 'update_subscription');
  const s = sid(p.sid, 'update_subscription: sid');
  const action = p.action;
  if (typeof action !== 'string' || !(ACTIONS as readonly string[]).includes(action)) {
    throw new WsCommandError('bad_params', `update_subscription: action must be one of ${ACTIONS.join(', ')}`);
  }
  const market_ids = marketIds(p.market_ids, cfg, 'update_subscription');
  if (action === 'get_snapshot' && market_ids !== null)
    throw new WsCommandError('bad_params', 'update_subscription: get_snapshot takes no market_ids');
  if (action !== 'get_snapshot' && market_ids === null)
    throw new WsCommandError('bad_params', `update_subscription: ${action} needs market_ids`);
  return { cmd: 'update_subscription', sid: s, action: action as UpdateCmd['action'], market_ids };
}

// ---- replies (their shapes: src/wire/ws.ts) --------------------------------------------

/** `{id, type: "error", msg: {code, name, msg}}`. */
export function errorReply(id: number | null, name: WsErrorName, message: string, extra?: WsErrorExtra): string {
  return JSON.stringify({ id, type: 'error', msg: { code: WsError[name], name, msg: message, ...extra } satisfies WsErrorBody });
}

/** The reply to a subscription command (subscribed), or its `ok` (unsubscribe, update_subscription, start_binary). */
export function reply(id: number | null, type: 'subscribed', msg: Subscribed): string;
export function reply(id: number | null, type: 'ok', msg: OkBody): string;
export function reply(id: number | null, type: 'subscribed' | 'ok', msg: Subscribed | OkBody): string {
  return JSON.stringify({ id, type, msg });
}
