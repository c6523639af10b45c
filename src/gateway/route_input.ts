// route_input: an operation's inputs as one closed object (path parameters,
// query parameters and body fields merged; operation_schemas.ts inputSchema)
// taken apart again into exactly what the REST lane hands the handler: path
// segments as strings, the query rendered and parsed by the REST query
// parser, the body validated by the route's own checker. The lanes that are
// not HTTP requests (MCP tools, WebSocket order commands) call a route
// through this, so every lane shares one validation and one handler.
// Built once per route at start-up; gateway threads.

import type { TObject } from '@sinclair/typebox';
import { bodyProperties, inputSchema, pathParamNames } from './operation_schemas.js';
import type { QueryValues } from './query.js';
import { parseRouteQuery, validateBody, type Route } from './routes.js';
import { compile, validate, wellFormed, type Checker } from './schemas.js';

export interface RouteInputChecker {
  route: Route;
  input: Checker<TObject>;
  pathNames: string[];
  bodyNames: string[];
  /**
   * The route takes a JSON body and neither path nor query parameters: its
   * merged input schema is the body's own schema (the same closed
   * properties), so the arguments are the body and are checked once, by the
   * body's checker (a placement: one schema check instead of two, no copy).
   */
  bodyOnly: boolean;
}

export interface RouteInput {
  params: string[];
  query: QueryValues;
  body: unknown;
}

export function routeInputChecker(route: Route): RouteInputChecker {
  const pathNames = pathParamNames(route);
  const bodyOnly = pathNames.length === 0 && route.query.length === 0 && route.body !== 'none' && route.body !== 'empty';
  return { route, input: compile(inputSchema(route)), pathNames, bodyNames: Object.keys(bodyProperties(route)), bodyOnly };
}

const NO_PARAMS: string[] = Object.freeze([]) as unknown as string[];

/** A query argument as a REST client would send it; a string no URL can carry (a lone surrogate) is invalid_field. */
function queryText(name: string, v: unknown): string {
  return encodeURIComponent(wellFormed(String(v), name));
}

/**
 * Validates merged arguments against the operation's closed input schema
 * (400 unknown_field / invalid_field, as REST) and splits them into what the
 * REST lane would hand the handler: path segments, the parsed query, the body.
 */
export function routeInput(c: RouteInputChecker, args: unknown): RouteInput {
  const route = c.route;
  if (c.bodyOnly) return { params: NO_PARAMS, query: parseRouteQuery(route, ''), body: validateBody(route, args) };
  const a = validate(c.input, args) as Record<string, unknown>;
  const params = c.pathNames.map((n) => String(a[n]));
  // The query goes through the REST query parser (ranges, defaults, u64
  // halves), rendered the way a REST client sends it (lists comma-separated).
  let qs = '';
  for (const q of route.query) {
    const v = a[q.name];
    if (v === undefined) continue;
    const text = Array.isArray(v) ? v.map((x) => queryText(q.name, x)).join(',') : queryText(q.name, v);
    qs += `${qs === '' ? '' : '&'}${encodeURIComponent(q.name)}=${text}`;
  }
  const query = parseRouteQuery(route, qs);
  let body: unknown;
  if (route.body !== 'none' && route.body !== 'empty') {
    const b: Record<string, unknown> = {};
    for (const n of c.bodyNames) if (a[n] !== undefined) b[n] = a[n];
    body = validateBody(route, b);
  }
  return { params, query, body };
}
