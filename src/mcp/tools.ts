// tools: one MCP tool per REST operation, built from the routes table
// (src/gateway/routes.ts) and its descriptions (operation_schemas.ts), so a
// route added there is a tool here without further code. A tool's input is
// the operation's path parameters, query parameters and body fields merged
// into one closed object; its arguments are taken apart again into exactly
// what the REST lane hands the handler (path segments as strings, the query
// rendered and parsed by the REST query parser, the body validated by the
// route's own checker), so both lanes share one validation and one handler.
// Built once at module load; gateway threads.

import type { TObject } from '@sinclair/typebox';
import { Scope } from '../layout/records.js';
import { bodyProperties, inputSchema, operationDoc, pathParamNames, scopeName } from '../gateway/operation_schemas.js';
import type { QueryValues } from '../gateway/query.js';
import { ROUTES, parseRouteQuery, validateBody, type Route } from '../gateway/routes.js';
import { compile, validate, type Checker } from '../gateway/schemas.js';
import { jsonSchema, type JsonSchema } from '../wire/json_schema.js';

export interface ToolAnnotations {
  title: string;
  readOnlyHint: boolean;
  destructiveHint: boolean;
  idempotentHint: boolean;
  openWorldHint: boolean;
}

/** The wire form of a tool in tools/list. */
export interface ToolDefinition {
  name: string;
  title: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema: JsonSchema;
  annotations: ToolAnnotations;
}

export interface McpTool {
  route: Route;
  definition: ToolDefinition;
  input: Checker<TObject>;
  pathNames: string[];
  bodyNames: string[];
}

// Writes that may remove or hand away something that cannot be put back:
// placing (spends cash, may trade at once), cancelling (loses queue
// priority), decreasing (0 cancels) and withdrawing.
const DESTRUCTIVE = new Set(['place_order', 'place_batch', 'cancel_all_orders', 'cancel_batch', 'decrease_order', 'request_withdrawal']);
// Writes whose repetition with the same arguments changes nothing more:
// decrease (an absolute target), disarm, cancel by id (a second cancel is
// unknown_order and changes nothing).
const IDEMPOTENT = new Set(['decrease_order', 'disarm_deadman', 'cancel_batch']);
// Tools that reach outside the exchange: a withdrawal sends money to an external destination.
const OPEN_WORLD = new Set(['request_withdrawal']);

function isRead(route: Route): boolean {
  return route.method === 'GET' && route.scope === Scope.read;
}

function describe(route: Route): string {
  const doc = operationDoc(route);
  const read = isRead(route);
  const batch = route.name === 'place_batch' || route.name === 'cancel_batch';
  const cost = `${batch ? 'one' : '1'} ${read ? 'read' : 'write'} token${batch ? ' per item' : ''}`;
  const parts = [route.description];
  if (doc.hint) parts.push(doc.hint);
  parts.push(`Needs scope ${scopeName(route.scope)}; costs ${cost} (same as its REST twin ${route.method} ${route.path}).`);
  parts.push('Errors come back as a result with isError true and the error envelope {error: {code, num, origin, message, details}}.');
  return parts.join(' ');
}

function build(route: Route): McpTool {
  const doc = operationDoc(route);
  const read = isRead(route);
  const input = inputSchema(route);
  return {
    route,
    input: compile(input),
    pathNames: pathParamNames(route),
    bodyNames: Object.keys(bodyProperties(route)),
    definition: {
      name: route.name,
      title: doc.title,
      description: describe(route),
      inputSchema: jsonSchema(input),
      outputSchema: jsonSchema(doc.response),
      annotations: {
        title: doc.title,
        readOnlyHint: read,
        destructiveHint: !read && DESTRUCTIVE.has(route.name),
        idempotentHint: read || IDEMPOTENT.has(route.name),
        openWorldHint: OPEN_WORLD.has(route.name),
      },
    },
  };
}

export const TOOLS: readonly McpTool[] = ROUTES.map(build);
export const TOOLS_BY_NAME: ReadonlyMap<string, McpTool> = new Map(TOOLS.map((t) => [t.definition.name, t]));
export const TOOL_DEFINITIONS: readonly ToolDefinition[] = TOOLS.map((t) => t.definition);

export interface RouteInput {
  params: string[];
  query: QueryValues;
  body: unknown;
}

/**
 * Validates a tool's arguments against its closed input schema (400
 * unknown_field / invalid_field, as REST) and splits them into what the REST
 * lane would hand the handler: path segments, the parsed query, the body.
 */
export function routeInput(tool: McpTool, args: unknown): RouteInput {
  const a = validate(tool.input, args) as Record<string, unknown>;
  const route = tool.route;
  const params = tool.pathNames.map((n) => String(a[n]));
  // The query goes through the REST query parser (ranges, defaults, u64
  // halves), rendered the way a REST client sends it (lists comma-separated).
  let qs = '';
  for (const q of route.query) {
    const v = a[q.name];
    if (v === undefined) continue;
    const text = Array.isArray(v) ? v.map((x) => encodeURIComponent(String(x))).join(',') : encodeURIComponent(String(v));
    qs += `${qs === '' ? '' : '&'}${encodeURIComponent(q.name)}=${text}`;
  }
  const query = parseRouteQuery(route, qs);
  let body: unknown;
  if (route.body !== 'none' && route.body !== 'empty') {
    const b: Record<string, unknown> = {};
    for (const n of tool.bodyNames) if (a[n] !== undefined) b[n] = a[n];
    body = validateBody(route, b);
  }
  return { params, query, body };
}
