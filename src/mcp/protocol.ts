// protocol: the JSON-RPC 2.0 and MCP constants of the agent lane and the
// classification of one incoming message. The message shapes and the
// protocol revisions spoken are declared in src/wire/jsonrpc.ts (the OpenAPI
// document describes POST /v1/mcp from the same schemas). Batches (JSON
// arrays) were removed from MCP in 2025-06-18 and are refused. Gateway
// threads and the stdio forwarder.

import type { RpcError, RpcId, RpcResponse } from '../wire/jsonrpc.js';

export const SERVER_NAME = 'dx';

// JSON-RPC 2.0 error codes.
export const PARSE_ERROR = -32700;
export const INVALID_REQUEST = -32600;
export const METHOD_NOT_FOUND = -32601;
export const INVALID_PARAMS = -32602;
export const INTERNAL_ERROR = -32603;
/** Implementation-defined server error (used by the stdio forwarder for transport failures). */
export const SERVER_ERROR = -32000;

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
    return {
      kind: 'invalid',
      id: null,
      code: INVALID_REQUEST,
      message: 'JSON-RPC batches are not supported (MCP removed them in 2025-06-18): send one message per POST',
    };
  }
  if (msg === null || typeof msg !== 'object')
    return { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'a JSON-RPC message is a JSON object' };
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
  if (!isId(m.id))
    return { kind: 'invalid', id: null, code: INVALID_REQUEST, message: 'id must be a string or an integer (MCP forbids null)' };
  if (m.params !== undefined && (m.params === null || typeof m.params !== 'object' || Array.isArray(m.params))) {
    return { kind: 'invalid', id: m.id, code: INVALID_PARAMS, message: 'params must be an object' };
  }
  return { kind: 'request', id: m.id, method: m.method, params: (m.params ?? {}) as Record<string, unknown> };
}
