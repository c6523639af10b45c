// jsonrpc: the wire contract of the MCP endpoint (POST /v1/mcp): the MCP
// protocol revisions it speaks and the JSON-RPC 2.0 message shapes, as
// TypeBox schemas. The agent lane (src/mcp) types its answers with the
// `Static` types; the OpenAPI document (src/openapi) describes the endpoint
// with the schemas. Revision 2025-11-25; 2025-06-18 is accepted too because
// the tool surface used (tools with outputSchema, structuredContent,
// annotations) is the same in both. No runtime state; any thread.

import { Type, type Static } from '@sinclair/typebox';

export const PROTOCOL_VERSION = '2025-11-25';
export const SUPPORTED_PROTOCOL_VERSIONS: readonly string[] = [PROTOCOL_VERSION, '2025-06-18'];

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
  // Unsafe only types it: any JSON value as far as TypeScript is concerned; the JSON Schema stays an object.
  result: Type.Optional(Type.Unsafe<unknown>(
    Type.Object({}, { description: 'the method result (for tools/call: content, structuredContent, isError)' }),
  )),
  error: Type.Optional(Type.Object({
    code: Type.Integer({
      description: '-32700 parse error, -32600 invalid request, -32601 method not found, '
        + '-32602 invalid params (unknown tool), -32603 internal',
    }),
    message: Type.String(),
    data: Type.Optional(Type.Unknown()),
  })),
}, { description: 'One JSON-RPC 2.0 response: exactly one of result or error.' });

/** A request id: MCP forbids null in requests (a response to an unreadable one carries null). */
export type RpcId = string | number;
export type RpcResponse = Static<typeof JsonRpcResponse>;
export type RpcError = NonNullable<RpcResponse['error']>;
