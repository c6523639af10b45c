// openapi: the OpenAPI 3.1 description of the REST surface (and of the MCP
// endpoint), generated from the same tables and TypeBox schemas the gateway
// validates with: the routes table (paths, methods, scopes, bodies, query
// parameters), operation_schemas (parameters, success status, error codes)
// and response_schemas (responses). Nothing here is written by hand per
// endpoint, so the document cannot drift from the server; the conformance
// test validates real answers against it. `npm run openapi` writes it to
// openapi.json; the control plane serves it at GET /admin/openapi.json.
// Build time; the control plane (main thread) builds it once on first request.

import type { TSchema } from '@sinclair/typebox';
import { CODES } from '../layout/records.js';
import { commonErrors, operationDoc, pathParamNames, pathParamSchema, queryParamSchema, scopeName } from '../gateway/operation_schemas.js';
import * as R from '../wire/responses.js';
import { BATCH_CAP, ROUTES, type Route } from '../gateway/routes.js';
import { BatchCancelBody, BatchPlaceBody, DeadmanBody, DecreaseBody, PlaceOrderBody, WithdrawalBody } from '../wire/requests.js';
import { SERVER_VERSION } from '../lib/version.js';
import { JsonRpcMessage, JsonRpcResponse, PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS } from '../wire/jsonrpc.js';
import { jsonSchema, type JsonSchema } from '../wire/json_schema.js';

export const SCHEMA_REF_PREFIX = '#/components/schemas/';

/** Request bodies, named by the closed schema objects the routes compile (matched by identity). */
const REQUEST_SCHEMAS: Readonly<Record<string, TSchema>> = {
  PlaceOrderRequest: PlaceOrderBody,
  BatchPlaceRequest: BatchPlaceBody,
  BatchCancelRequest: BatchCancelBody,
  DecreaseRequest: DecreaseBody,
  DeadmanRequest: DeadmanBody,
  WithdrawalRequest: WithdrawalBody,
  JsonRpcMessage,
  JsonRpcResponse,
};

const NAMED: Readonly<Record<string, TSchema>> = { ...R.NAMED_SCHEMAS, ...REQUEST_SCHEMAS };

const TAGS = [
  { name: 'exchange', description: 'Exchange status, schedule, retention caps and the calling key\'s limits.' },
  { name: 'markets', description: 'Markets, order books, public trades, the oracle price and rounds.' },
  { name: 'portfolio', description: 'The caller\'s balance, positions, fills and orders.' },
  { name: 'orders', description: 'Placing, cancelling and decreasing orders; queue position; the dead-man timer.' },
  { name: 'funding', description: 'Deposit address and withdrawals.' },
  { name: 'mcp', description: 'The agent lane: MCP (JSON-RPC 2.0) over Streamable HTTP, one tool per operation of this document.' },
];

const DESCRIPTION = `A binary (YES/NO) prediction-market exchange. The client contract is the exchange REST API
specification; this document is generated from the server's own route table and schemas.

Conventions: prices are integer ticks 1..99 (cents per share) in the order's own outcome space; a YES and a NO
share of one market pay exactly 100 cents together. Quantities are integer shares, money is integer cents.
u64-domain values (ids, seqs, cent amounts, timestamps in ns since the epoch) are decimal strings; smaller
integers are JSON numbers; floats never appear. Request bodies are closed schemas (an unknown field is 400
unknown_field); clients must ignore unknown response fields. Every read carrying as_of_seq is one consistent
instant. Order books send bids only, as [tick, qty] pairs: a NO bid at t is a YES ask at 100 - t.

Authentication (every operation): three headers. DX-ACCESS-KEY is the key id; DX-ACCESS-TIMESTAMP the request
time in Unix milliseconds (within 5000 ms of the server's clock); DX-ACCESS-SIGNATURE the standard base64
(padded) HMAC-SHA256, keyed with the key's 32 decoded secret bytes, of the string
"<timestamp>\\n<METHOD>\\n<path?query exactly as sent>\\n<body exactly as sent>". A mutation whose exact signature
was already used within the window is refused 401 (replay protection). Failures are 401 unauthorized; a key
lacking the operation's scope (read, trade or withdraw) is 403 missing_scope. Checks run in this order:
401, 429, 403, then 400/413.

Rate limits per key: by default reads 100/s (burst 200), writes 50/s (burst 100); the operator may give a key another
rate tier, and GET /v1/account/limits reports the key's tier and figures. A batch costs one write token per item.
429 rate_limited carries details.retry_after_ms (a decimal string). Errors are always the envelope
{error: {code, num, origin, message, details}}; core rejects carry a num (260 and up), gateway errors num null.
Execution outcomes (post_only_cross, fok_infeasible, ioc_remainder, self_trade_prevention, max_cost_infeasible)
are 201 placements with status canceled and a reason, never errors.

Do not pipeline requests on one connection.`;

function ref(name: string): JsonSchema {
  return { $ref: `${SCHEMA_REF_PREFIX}${name}` };
}

function makeRefOf(): (node: object) => string | undefined {
  const names = new Map<object, string>();
  for (const [n, s] of Object.entries(NAMED)) names.set(s, n);
  return (node) => {
    const n = names.get(node);
    return n === undefined ? undefined : `${SCHEMA_REF_PREFIX}${n}`;
  };
}

/** A schema as a $ref when it is a named one, else inline. */
function schemaOrRef(schema: TSchema, refOf: (node: object) => string | undefined): unknown {
  const target = refOf(schema);
  return target === undefined ? jsonSchema(schema, refOf) : { $ref: target };
}

/** The envelope of the errors of one HTTP status: `code` is one of that status's codes (native-layout/codes.json). */
function errorSchema(status: number): JsonSchema {
  const codes = CODES.filter((c) => c.http === status);
  const inner = jsonSchema(R.ErrorObject) as { properties: Record<string, JsonSchema> };
  inner.properties.code = { type: 'string', enum: codes.map((c) => c.code), description: codes.map((c) => `${c.code}: ` +
    `${c.doc}`).join(' ') };
  return { type: 'object', required: ['error'], properties: { error: inner }, description: `The error envelope of an HTTP ${status} ` +
    `answer.` };
}

/**
 * One operation's error responses: per HTTP status a reference to that
 * status's envelope, with the codes this operation can answer listed in the
 * description and in `x-dx-error-codes` (the conformance test checks real
 * answers against that list).
 */
function errorResponses(codes: string[], used: Set<number>): Record<string, unknown> {
  const byStatus = new Map<number, string[]>();
  for (const c of codes) {
    const info = CODES.find((x) => x.code === c);
    if (info === undefined) throw new Error(`openapi: unknown error code ${c}`);
    const list = byStatus.get(info.http) ?? [];
    if (!list.includes(c)) list.push(c);
    byStatus.set(info.http, list);
  }
  const out: Record<string, unknown> = {};
  for (const status of [...byStatus.keys()].sort((a, b) => a - b)) {
    const list = byStatus.get(status)!;
    used.add(status);
    out[String(status)] = {
      description: list.map((c) => `\`${c}\``).join(', '),
      'x-dx-error-codes': list,
      content: { 'application/json': { schema: ref(`Error${status}`) } },
    };
  }
  return out;
}

function operation(route: Route, refOf: (node: object) => string | undefined, used: Set<number>): Record<string, unknown> {
  const doc = operationDoc(route);
  const read = route.method === 'GET';
  const batch = route.name === 'place_batch' || route.name === 'cancel_batch';
  const parameters: Record<string, unknown>[] = [];
  for (const n of pathParamNames(route)) {
    const s = jsonSchema(pathParamSchema(n));
    const description = s.description;
    delete s.description;
    parameters.push({ name: n, in: 'path', required: true, description, schema: s });
  }
  for (const q of route.query) {
    const s = jsonSchema(queryParamSchema(q));
    const description = s.description;
    delete s.description;
    const p: Record<string, unknown> = { name: q.name, in: 'query', required: false, description, schema: s };
    if (q.kind === 'statuses') {
      p.style = 'form';
      p.explode = false;
    }
    parameters.push(p);
  }
  if (read) {
    parameters.push({
      name: 'min_seq', in: 'query', required: false,
      description: 'Read-your-writes across nodes: the seq of your own write. A node that has not applied it holds the read up to 200 ' +
        'ms, then answers 503 replica_lagging.',
      schema: { type: 'string', pattern: '^[0-9]{1,20}$' },
    });
  }
  const cost = batch ? `one write token per item (at most ${BATCH_CAP})` : `one ${read ? 'read' : 'write'} token`;
  const o: Record<string, unknown> = {
    operationId: route.name,
    summary: doc.title,
    description: [route.description, doc.hint ?? '', `Scope: ${scopeName(route.scope)}. Rate limit: ${cost}. MCP tool: ` +
      `${route.name}.`].filter((x) => x !== '').join('\n\n'),
    tags: [doc.tag],
    'x-dx-scope': scopeName(route.scope),
  };
  if (parameters.length > 0) o.parameters = parameters;
  if (route.body !== 'none' && route.body !== 'empty') {
    o.requestBody = { required: true, content: { 'application/json': { schema: schemaOrRef(route.body.schema, refOf) } } };
  }
  const responses: Record<string, unknown> = {
    [String(doc.status)]: {
      description: doc.status === 201 ? 'Created: the sequenced outcome.' : doc.status === 202 ? 'Accepted: sequenced.' : 'OK',
      content: { 'application/json': { schema: schemaOrRef(doc.response, refOf) } },
    },
    ...errorResponses([...commonErrors(route), ...doc.errors], used),
  };
  o.responses = responses;
  return o;
}

function mcpPath(): Record<string, unknown> {
  const envelope = ref('ErrorEnvelope');
  return {
    post: {
      operationId: 'mcp',
      summary: 'Send one MCP message',
      description:
        `JSON-RPC 2.0 over the MCP Streamable HTTP transport, protocol ${PROTOCOL_VERSION}, ` +
        `served stateless: one message per POST,
answered with application/json; a notification (or a response) is answered 202 with no body. Signed like every
operation here (the JSON-RPC body is the signed body); every POST is a mutation, so a signature is usable once.
Methods: initialize, notifications/initialized, ping, tools/list, tools/call. There is one tool per operation of
this document, named by its operationId, taking its path parameters, query parameters and body fields as one
closed arguments object, and returning its success body as structuredContent (and as JSON text). A tool's REST
error is a result with isError true whose text is the error envelope; an unknown tool or malformed params is
JSON-RPC error -32602. A tool call costs the rate-limit tokens of its operation; every other message costs one
read token. A JSON array (batch) is refused. GET and DELETE on this path answer 405 method_not_allowed with
Allow: POST (no SSE stream, no session to delete).`,
      tags: ['mcp'],
      parameters: [{
        name: 'MCP-Protocol-Version', in: 'header', required: false, description: 'the negotiated protocol version; an unsupported one ' +
          'is 400',
        schema: { type: 'string', enum: [...SUPPORTED_PROTOCOL_VERSIONS] },
      }],
      requestBody: { required: true, content: { 'application/json': { schema: ref('JsonRpcMessage') } } },
      responses: {
        200: { description: 'The JSON-RPC response to a request.', content: { 'application/json': { schema: ref('JsonRpcResponse') } } },
        202: { description: 'A notification or response was accepted; no body.' },
        400: {
          description: 'A message that cannot be read (parse error, batch, not JSON-RPC) or an unsupported MCP-Protocol-Version: a ' +
            'JSON-RPC error with id null; or a transport error envelope (duplicate Content-Length, a query string).',
          content: { 'application/json': { schema: { anyOf: [ref('JsonRpcResponse'), envelope] } } },
        },
        401: { description: 'unauthorized', content: { 'application/json': { schema: envelope } } },
        403: { description: 'An Origin header that does not name this host (DNS-rebinding ' +
          'protection).', content: { 'application/json': { schema: ref('JsonRpcResponse') } } },
        413: { description: 'body_too_large', content: { 'application/json': { schema: envelope } } },
        429: { description: 'rate_limited (a protocol message; a tool call reports it as an isError result ' +
          'instead)', content: { 'application/json': { schema: envelope } } },
        503: {
          description: 'shed: the exchange is shutting down; not_primary: a node that replication fenced (every message)',
          content: { 'application/json': { schema: envelope } },
        },
      },
    },
  };
}

export function buildOpenApi(): Record<string, unknown> {
  const refOf = makeRefOf();
  const used = new Set<number>();
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of ROUTES) {
    // The routes table already spells paths as OpenAPI templates (`{param}` segments).
    (paths[route.path] ??= {})[route.method.toLowerCase()] = operation(route, refOf, used);
  }
  paths['/v1/mcp'] = mcpPath();
  const schemas: Record<string, unknown> = {};
  for (const name of Object.keys(NAMED).sort()) schemas[name] = jsonSchema(NAMED[name]!, refOf);
  for (const status of [...used].sort((a, b) => a - b)) schemas[`Error${status}`] = errorSchema(status);
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'dx exchange API',
      version: SERVER_VERSION,
      description: DESCRIPTION,
      license: { name: 'Proprietary', identifier: 'LicenseRef-dx-proprietary' },
    },
    servers: [
      { url: 'http://127.0.0.1:8080', description: 'the default of `npm start` ({base_url}); the control plane is a separate listener' },
    ],
    security: [{ DxAccessKey: [], DxAccessTimestamp: [], DxAccessSignature: [] }],
    tags: TAGS,
    paths,
    components: {
      schemas,
      securitySchemes: {
        DxAccessKey: {
          type: 'apiKey',
          in: 'header',
          name: 'DX-ACCESS-KEY',
          description: 'The key id (`key_id`), a small integer; not a secret.',
        },
        DxAccessTimestamp: {
          type: 'apiKey', in: 'header', name: 'DX-ACCESS-TIMESTAMP',
          description: 'Request time in Unix milliseconds, decimal; must be within 5000 ms of the server clock.',
        },
        DxAccessSignature: {
          type: 'apiKey', in: 'header', name: 'DX-ACCESS-SIGNATURE',
          description: 'Standard base64 (padded) of HMAC-SHA256 keyed with the key\'s 32 decoded secret bytes over '
            + '"<DX-ACCESS-TIMESTAMP>\\n<METHOD>\\n<path?query as sent>\\n<body as sent>" (the body is "" when there is none). '
            + 'OpenAPI has no scheme type for request signatures: all three headers are required together on every request.',
        },
      },
    },
  };
}

let cached: Record<string, unknown> | null = null;

/** The document, built once (the control plane serves it). */
export function openApiDocument(): Record<string, unknown> {
  cached ??= buildOpenApi();
  return cached;
}

/** The document as the text `npm run openapi` writes. */
export function openApiText(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
