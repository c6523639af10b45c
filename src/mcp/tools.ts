// tools: one MCP tool per REST operation, built from the routes table
// (src/gateway/routes.ts) and its descriptions (operation_schemas.ts), so a
// route added there is a tool here without further code. A tool's input is
// the operation's path parameters, query parameters and body fields merged
// into one closed object; its arguments are taken apart again into exactly
// what the REST lane hands the handler (src/gateway/route_input.ts), so the
// lanes share one validation and one handler.
// Built once at module load; gateway threads.

import { Scope } from '../layout/records.js';
import { inputSchema, operationDoc, scopeName } from '../gateway/operation_schemas.js';
import { routeInputChecker, type RouteInputChecker } from '../gateway/route_input.js';
import { ROUTES, type Route } from '../gateway/routes.js';
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

export interface McpTool extends RouteInputChecker {
  definition: ToolDefinition;
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
  return {
    ...routeInputChecker(route),
    definition: {
      name: route.name,
      title: doc.title,
      description: describe(route),
      inputSchema: jsonSchema(inputSchema(route)),
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
