// protocol: the JSON-RPC 2.0 and MCP constants of the agent lane, the
// classification of one incoming message, and the JSON-RPC message schemas
// (for the OpenAPI description of POST /v1/mcp). Protocol revision
// 2025-11-25; 2025-06-18 is accepted too because the tool surface used here
// (tools with outputSchema, structuredContent, annotations) is the same in
// both. Batches (JSON arrays) were removed from MCP in 2025-06-18 and are
// refused. Gateway threads and the stdio forwarder.

import { readFileSync } from 'node:fs';
import { Type } from '@sinclair/typebox';

export const PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [PROTOCOL_VERSION, '2025-06-18'];

export const SERVER_NAME = 'dx';
export const SERVER_VERSION: string = (JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

// JSON-RPC 2.0 error codes.
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** Implementation-defined server error (used by the stdio forwarder for transport failures). */
export const SERVER_ERROR = -32000;

export type RpcId = string | number;

export interface RpcError {
  code: number;
  message: string;
  data?: unknown;
}

export interface RpcResponse {
  jsonrpc: '2.0';
  id: RpcId | null;
  result?: unknown;
  error?: RpcError;
}

/** Thrown inside method handling; answered as a JSON-RPC error response. */
export class McpRpcError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message);
  }
}

export function rpcResult(id: RpcId, result: unknown): RpcResponse {
  return { jsonrpc: '2.0', id, result };
}

export function rpcError(id: RpcId | null, code: number, message: string, data?: unknown): RpcResponse {
  const error: RpcError = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: '2.0', id, error };
}

export type Classified =
  | { kind: 'request'; id: RpcId; method: string; params: Record<string, unknown> }
  | { kind: 'notification'; method: string }
  | { kind: 'response' }
  | { kind: 'invalid'; id: RpcId | null; code: number; message: string };

function isId(v: unknown): v is RpcId {
  return typeof v === 'string' || (typeof v === 'number' && Number.isSafeInteger(v));
}

/** What one parsed JSON-RPC message is (requests with their params checked to be an object). */
export function classify(msg: unknown): Classified {
  if (Array.isArray(msg)) {
    return { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per POST' };
  }
  if (msg === null || typeof msg !== 'object') return { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'a JSON-RPC message is a JSON object' };
  const m = msg as Record<string, unknown>;
  const id = isId(m.id) ? m.id : null;
  if (m.jsonrpc !== '2.0') return { kind: 'invalid', id, code: INVALID_REQUEST, message: 'jsonrpc must be "2.0"' };
  if (typeof m.method !== 'string') {
    if ('method' in m) return { kind: 'invalid', id, code: INVALID_REQUEST, message: 'method must be a string' };
    // A response to a request of ours (we send none) is accepted and ignored.
    if (isId(m.id) && ('result' in m || 'error' in m)) return { kind: 'response' };
    return { kind: 'invalid', id, code: INVALID_REQUEST, message: 'not a JSON-RPC request, notification or response' };
  }
  if (!('id' in m)) return { kind: 'notification', method: m.method };
  if (!isId(m.id)) return { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'id must be a string or an integer (MCP forbids null)' };
  if (m.params !== undefined && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))) {
    return { kind: 'invalid', id: m.id, code: INVALID_PARAMS, message: 'params must be an object' };
  }
  return { kind: 'request', id: m.id, method: m.method, params: (m.params ?? {}) as Record<string, unknown> };
}

// ---- schemas (OpenAPI) -----------------------------------------------------------

const Id = Type.Union([Type.String(), Type.Integer()], { description: 'request id; echoed in the response' });

export const JsonRpcMessage = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: Type.Optional(Id),
  method: Type.String({ description: 'initialize, notifications/initialized, ping, tools/list or tools/call' }),
  params: Type.Optional(Type.Object({}, { description: 'method parameters as the MCP specification defines them' })),
}, { description: 'One JSON-RPC 2.0 request (with id) or notification (without id).' });

export const JsonRpcResponse = Type.Object({
  jsonrpc: Type.Literal('2.0'),
  id: Type.Union([Type.String(), Type.Integer(), Type.Null()], { description: 'the request id; null when the request could not be read' }),
  result: Type.Optional(Type.Object({}, { description: 'the method result (for tools/call: content, structuredContent, isError)' })),
  error: Type.Optional(Type.Object({
    code: Type.Integer({ description: '-32700 parse error, -32600 invalid request, -32601 method not found, -32602 invalid params (unknown tool), -32603 internal' }),
    message: Type.String(),
    data: Type.Optional(Type.Unknown()),
  })),
}, { description: 'One JSON-RPC 2.0 response: exactly one of result or error.' });
