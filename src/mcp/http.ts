// http: POST /v1/mcp on a gateway thread's uWebSockets.js App, the MCP
// Streamable HTTP transport (protocol 2025-11-25) served stateless: one
// JSON-RPC message per POST answered with application/json (a notification
// or response with 202 and no body), no session id, no SSE stream (GET and
// DELETE answer 405 with Allow: POST, which the MCP transport provides for).
//
// Signed exactly like REST: the three DX-ACCESS headers over
// `ts\nPOST\n/v1/mcp\n<the JSON-RPC body>`, the REST lane's own
// authenticate() (401, replay protection included: every POST is a
// mutation, so each signature is usable once). Transport failures answer
// with the REST error envelope (401, 413, 429, 503); problems of the message
// itself are JSON-RPC errors (server.ts). Order: 405 -> 403 Origin -> 401 ->
// 413/400 transport -> 400 MCP-Protocol-Version -> the message.
//
// uWS rules as in gateway/http.ts: headers read synchronously, receive()
// attaches onAborted and copies the body, replies after an await go through
// deferReply (outside other sockets' callbacks, corked). Gateway threads.

import { ApiError } from '../gateway/envelope.js';
import {
  BODY_CAP_BYTES, authenticate, deferReply, fail, observe, receive, refuseDuplicateLength, send, startRequestSignature, type InFlight,
  type LaneOptions,
} from '../gateway/http.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from '../gateway/uws.js';
import { monoUs } from '../lib/mono_clock.js';
import { SUPPORTED_PROTOCOL_VERSIONS } from '../wire/jsonrpc.js';
import { INVALID_REQUEST, rpcError } from './protocol.js';
import { handleMcp, type McpOutcome } from './server.js';

export const MCP_PATH = '/v1/mcp';

interface McpHeaders {
  protocolVersion: string;
  origin: string;
  host: string;
}

/** Registers POST /v1/mcp (and its 405s). Mount it before the REST lane's /v1/* wildcard. */
export function mountMcp(app: TemplatedApp, opts: LaneOptions): void {
  app.any(MCP_PATH, (res: HttpResponse, req: HttpRequest) => {
    const h: McpHeaders = {
      protocolVersion: req.getHeader('mcp-protocol-version'),
      origin: req.getHeader('origin'),
      host: req.getHeader('host'),
    };
    receive(res, req, (f, raw) => onMessage(res, f, raw, opts, h), (f) => {
      if (f.method === 'POST') startRequestSignature(opts.core, f);
    });
  });
}

/** An Origin header (browsers send one) must name this very host: DNS-rebinding protection, as the transport requires. */
function originAllowed(origin: string, host: string): boolean {
  if (origin === '') return true;
  if (!URL.canParse(origin)) return false;
  return new URL(origin).host === host;
}

function write(res: HttpResponse, f: InFlight, o: McpOutcome, opts: LaneOptions): void {
  if (f.aborted || f.done) return;
  if (o.status === 202) {
    f.done = true;
    res.cork(() => {
      res.writeStatus('202 Accepted').end();
    });
  } else {
    send(res, f, o.status, o.body);
  }
  observe(opts.observer, f, o.status, o.code, o.route);
}

function onMessage(res: HttpResponse, f: InFlight, raw: Buffer, opts: LaneOptions, h: McpHeaders): void {
  f.routeName = 'mcp';
  try {
    if (opts.stopping?.()) {
      f.closeAfter = true;
      throw new ApiError('shed', 'the exchange is shutting down');
    }
    // A fenced node (replication) answers nothing more, reads included, and closes the connection, as the REST lane does.
    if (opts.core.fenced) {
      f.closeAfter = true;
      opts.core.assertWritable();
    }
    if (f.method !== 'POST') {
      send(
        res,
        f,
        405,
        new ApiError(
          'method_not_allowed',
          `${f.method} is not allowed on ${MCP_PATH}: this MCP endpoint is stateless and has no SSE stream; POST one JSON-RPC message`,
        ).body(),
        { allow: 'POST' },
      );
      observe(opts.observer, f, 405, 'method_not_allowed');
      return;
    }
    if (!originAllowed(h.origin, h.host)) {
      send(res, f, 403, rpcError(null, INVALID_REQUEST, `Origin ${h.origin} is not allowed`));
      observe(opts.observer, f, 403, null);
      return;
    }
    // Apply every published event first (a key created a moment ago authenticates).
    opts.core.drain();
    const now = Date.now();
    const caller = authenticate(opts, f, 'mcp', now);
    if (f.tooLarge) throw new ApiError('body_too_large', `body exceeds ${BODY_CAP_BYTES} bytes`);
    refuseDuplicateLength(f);
    if (f.query.length > 0)
      throw new ApiError('unknown_field', `${MCP_PATH} takes no query parameters`, { field: f.query.split('&')[0]!.split('=')[0] });
    if (h.protocolVersion !== '' && !SUPPORTED_PROTOCOL_VERSIONS.includes(h.protocolVersion)) {
      write(
        res,
        f,
        {
          status: 400,
          route: 'mcp',
          code: null,
          body: rpcError(
            null,
            INVALID_REQUEST,
            `unsupported MCP-Protocol-Version ${h.protocolVersion}; this server speaks ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')}`,
          ),
        },
        opts,
      );
      return;
    }
    f.tVerified = monoUs();
    const out = handleMcp(opts, caller, raw, now, f);
    if (out instanceof Promise) {
      out.then((o) => deferReply(() => write(res, f, o, opts)), (e) => deferReply(() => fail(res, f, e, opts)));
    } else {
      write(res, f, out, opts);
    }
  } catch (e) {
    fail(res, f, e, opts);
  }
}
