// stdio: the local signing MCP server (`dx mcp`). Agent hosts start it as a
// subprocess and speak MCP over its stdin/stdout (newline-delimited JSON-RPC,
// the MCP stdio transport); it holds the key and forwards every message,
// byte for byte, as one signed POST to the exchange's /v1/mcp, writing the
// answer back. The exchange does all the MCP work (initialize, tools/list,
// tools/call), so the tools a host sees are exactly the remote ones.
//
// - stdout carries protocol messages only; logs go to stderr.
// - A transport failure (exchange unreachable, 401, 429 and the other REST
//   envelopes on /v1/mcp) becomes a JSON-RPC error (-32000) for the request
//   it belongs to, with the HTTP status and the envelope in `data`, so the
//   host sees why instead of waiting.
// - The negotiated protocol version (from the initialize result) is sent as
//   MCP-Protocol-Version on every later POST, as the transport requires.
// - Messages are forwarded concurrently (one connection each when needed:
//   never pipelined); it returns once the input ended and every answer is
//   written.
//
// Run on its own: `node dist/src/mcp/stdio.js` with DX_API_URL (default
// http://127.0.0.1:8080) and DX_KEY_ID + DX_KEY_SECRET, or DX_KEY_FILE (JSON
// {"key_id", "secret", "url"?}). Main thread of its own process.

import { pathToFileURL } from 'node:url';
import { fetchFailure } from '../lib/fetch_failure.js';
import { readKeyFile } from '../lib/key_file.js';
import { PROTOCOL_VERSION, type RpcId, type RpcResponse } from '../wire/jsonrpc.js';
import { decodedWhole } from '../gateway/schemas.js';
import { PARSE_ERROR, SERVER_ERROR, rpcError } from './protocol.js';
import { parseKeyId, signingFetch } from './sign_fetch.js';

export interface McpStdioOptions {
  /** The exchange's REST base URL, e.g. http://127.0.0.1:8080 (a path part is kept as a prefix). */
  baseUrl: string;
  /** The key id (decimal text; a number is accepted too). */
  keyId: string | number;
  /** base64 of the key's 32 secret bytes. */
  secret: string;
  input?: NodeJS.ReadableStream;
  output?: NodeJS.WritableStream;
  /** Where diagnostics go (default stderr). */
  log?: (line: string) => void;
}

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';

/** The endpoint of a base URL: its path part, if any, prefixes /v1/mcp. */
export function mcpEndpoint(baseUrl: string): URL {
  const base = new URL(baseUrl);
  return new URL(`${base.pathname.replace(/\/+$/, '')}/v1/mcp`, base.origin);
}

interface Peek {
  id: RpcId | null;
  method: string | null;
  /** A JSON-RPC notification (an object with a method and no id member): it gets no answer. */
  notification: boolean;
}

/** The id and method of a line, as far as it can be read (the exchange judges the rest). */
function peek(line: string): Peek {
  let v: unknown;
  try {
    v = JSON.parse(line);
  } catch (e) {
    if (e instanceof SyntaxError) return { id: null, method: null, notification: false };
    throw e;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return { id: null, method: null, notification: false };
  const m = v as Record<string, unknown>;
  // An id the parse changed (a fraction, or an integer past 2^53 rounded to another) is not echoed: null, as the exchange does.
  const id = typeof m.id === 'string' || Number.isSafeInteger(m.id) ? (m.id as RpcId) : null;
  const method = typeof m.method === 'string' ? m.method : null;
  // An id of null is still a request (JSON-RPC 2.0): only a message without the member is a notification.
  return { id, method, notification: method !== null && !('id' in m) };
}

/** A POST that got no answer, as the -32000 error's message and whether it may have reached the exchange. */
function transportFailure(endpoint: URL, e: unknown): { message: string; sent: boolean } {
  const f = fetchFailure(e) ?? { cause: String((e as Error)?.message ?? e), code: '', sent: true };
  if (!f.sent) return { message: `cannot reach the exchange at ${endpoint.href}: ${f.cause}`, sent: false };
  // Written and not answered: an order or a withdrawal may have been taken (src/lib/fetch_failure.ts).
  const message = `no answer from the exchange at ${endpoint.href}: ${f.cause}; the request was sent, so what it asked for ` +
    '(an order, a cancel, a withdrawal) may or may not have been done: look (list_orders with its client_order_id, ' +
    'get_withdrawal) before repeating it';
  return { message, sent: true };
}

export async function runMcpStdio(opts: McpStdioOptions): Promise<void> {
  const input = opts.input ?? process.stdin;
  const output = opts.output ?? process.stdout;
  const log = opts.log ?? ((line: string) => void process.stderr.write(`dx mcp: ${line}\n`));
  const endpoint = mcpEndpoint(opts.baseUrl);
  const send = signingFetch({ keyId: parseKeyId(opts.keyId), secret: opts.secret });
  let protocolVersion: string | null = null;

  // JSON.stringify never emits a raw newline: one message per line.
  const emit = (msg: unknown): void => void output.write(`${JSON.stringify(msg)}\n`);
  const failed = (p: Peek, message: string, data?: unknown): void => {
    log(message);
    if (p.id !== null) emit(rpcError(p.id, SERVER_ERROR, message, data));
  };

  const forward = async (line: string, utf8: boolean): Promise<void> => {
    const p = peek(line);
    // JSON is UTF-8: a line that is not is answered as the exchange answers such a body (-32700), never sent with U+FFFD.
    if (!utf8 && !p.notification) emit(rpcError(p.id, PARSE_ERROR, 'invalid JSON: the body is not valid UTF-8'));
    if (!utf8) return;
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    if (protocolVersion !== null && p.method !== 'initialize') headers['mcp-protocol-version'] = protocolVersion;
    let status = 0;
    let text = '';
    try {
      const res = await send(endpoint, { method: 'POST', headers, body: line });
      status = res.status;
      text = await res.text();
    } catch (e) {
      const f = transportFailure(endpoint, e);
      failed(p, f.message, { sent: f.sent });
      return;
    }
    if (status === 202) return;
    let body: unknown;
    try {
      body = text.length === 0 ? undefined : JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      failed(p, `the exchange answered ${status} with a body that is not JSON`, { http_status: status });
      return;
    }
    const rpc = body as RpcResponse | undefined;
    if (rpc !== undefined && rpc !== null && typeof rpc === 'object' && rpc.jsonrpc === '2.0') {
      if (status === 200 && p.method === 'initialize' && rpc.result !== undefined) {
        const v = (rpc.result as { protocolVersion?: unknown }).protocolVersion;
        protocolVersion = typeof v === 'string' ? v : PROTOCOL_VERSION;
      }
      // A transport-level JSON-RPC error (400) has no id; give it the request's, so the host can match it.
      if (rpc.id === null && p.id !== null) rpc.id = p.id;
      // A notification gets no answer; a request (its id null included) and a line that could not be read get one.
      if (rpc.id !== null || !p.notification) emit(rpc);
      if (status !== 200) log(`the exchange refused a message (${status}): ${rpc.error?.message ?? ''}`);
      return;
    }
    // A REST error envelope: 401 (key or clock), 413, 429, 503 ...
    const env = (body as { error?: { code?: string; message?: string } } | undefined)?.error;
    const why = env ? `${env.code}: ${env.message}` : `HTTP ${status}`;
    const hint = status === 401 ? ' (check DX_KEY_ID, DX_KEY_SECRET and the clock: the timestamp must be within 5 s)' : '';
    failed(p, `the exchange answered ${status} ${why}${hint}`, { http_status: status, ...(body as object | undefined) });
  };

  const inFlight = new Set<Promise<void>>();
  log(`forwarding MCP on stdio to ${endpoint.href} as key ${opts.keyId}`);
  for await (const { line, utf8 } of messageLines(input)) {
    if (line.length === 0) continue;
    const job: Promise<void> = forward(line, utf8)
      .catch((e: unknown) => log(`forwarding failed: ${(e as Error)?.stack ?? String(e)}`))
      .finally(() => inFlight.delete(job));
    inFlight.add(job);
  }
  await Promise.all([...inFlight]);
}

/**
 * The messages of the stdio transport: one per line, split at \n only, as MCP frames them (a bare \r is JSON
 * whitespace inside a message, not its end; readline would cut the message there). A \r before the \n goes with the trim.
 */
async function* messageLines(input: NodeJS.ReadableStream): AsyncGenerator<{ line: string; utf8: boolean }> {
  let buf = Buffer.alloc(0);
  const message = (bytes: Buffer): { line: string; utf8: boolean } => {
    const text = bytes.toString('utf8');
    return { line: text.trim(), utf8: decodedWhole(bytes, text) };
  };
  for await (const chunk of input) {
    buf = Buffer.concat([buf, typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : (chunk as Buffer)]);
    for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10)) {
      yield message(buf.subarray(0, nl));
      buf = buf.subarray(nl + 1);
    }
  }
  if (buf.length > 0) yield message(buf);
}

export interface StdioConfig {
  baseUrl: string;
  keyId: string;
  secret: string;
}

/**
 * The key and URL from the environment: DX_KEY_ID and DX_KEY_SECRET, or
 * DX_KEY_FILE (JSON {"key_id", "secret", "url"?}); DX_API_URL, else the key
 * file's url, else http://127.0.0.1:8080. Throws with a message a user can act on.
 */
export function stdioConfigFromEnv(env: NodeJS.ProcessEnv = process.env): StdioConfig {
  let keyId = env.DX_KEY_ID;
  let secret = env.DX_KEY_SECRET;
  let fileUrl: string | undefined;
  if ((keyId === undefined || secret === undefined) && env.DX_KEY_FILE) {
    const k = readKeyFile(env.DX_KEY_FILE);
    keyId = String(k.keyId);
    secret = k.secret;
    fileUrl = k.url;
  }
  if (keyId === undefined || secret === undefined) {
    throw new Error('no key: set DX_KEY_ID and DX_KEY_SECRET, or DX_KEY_FILE (a JSON file {"key_id", "secret", "url"?})');
  }
  parseKeyId(keyId);
  const baseUrl = env.DX_API_URL || fileUrl || DEFAULT_API_URL;
  if (!URL.canParse(baseUrl)) throw new Error(`not a URL: ${baseUrl}`);
  return { baseUrl, keyId, secret };
}

async function main(): Promise<void> {
  let cfg: StdioConfig;
  try {
    cfg = stdioConfigFromEnv();
    await runMcpStdio({ ...cfg, input: process.stdin, output: process.stdout });
    // A write to a pipe is asynchronous: wait until every answer has left the process (process.exit drops the rest).
    await new Promise<void>((resolve) => process.stdout.write('', () => resolve()));
  } catch (e) {
    process.stderr.write(`dx mcp: ${(e as Error).message}\n`);
    process.exit(2);
  }
  // Input ended and every answer is written; idle keep-alive connections must not hold the process.
  process.exit(0);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.once('SIGTERM', () => process.exit(0));
  void main();
}
