// wire_shapes: the one wire-shape checker of the tests, driven by the
// declarations in src/wire (and by the OpenAPI document rendered from them).
// Every check compiles JSON Schema 2020-12 with Ajv in strict mode (unknown
// keywords, loose types and loose tuples are errors) after closing it: every
// object schema that lists properties gets additionalProperties: false, so a
// field the declaration does not name fails (the published schemas stay
// open, since clients ignore unknown fields). The declarations carry the wire
// conventions themselves: u64-domain values are strings matching ^[0-9]+$,
// small values are integers (a float fails), enums list their names.
//
//   assertWireShape(R.Market, answer)      a TypeBox declaration (src/wire)
//   wsMessageProblem(message)              a WebSocket message, by its type (src/wire/ws.ts)
//   documentAjv(doc, { closed: true })     the OpenAPI document's schemas
//
// Test processes only.

import assert from 'node:assert/strict';
import type { Static, TSchema } from '@sinclair/typebox';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { SCHEMA_REF_PREFIX } from '../../src/openapi/openapi.js';
import { jsonSchema } from '../../src/wire/json_schema.js';
import { WS_MESSAGES } from '../../src/wire/ws.js';

const ID = 'https://dx.invalid/openapi/components/schemas/';

/**
 * A copy of a JSON Schema with `#/components/schemas/X` references pointed at
 * the registered component ids and, when closed, every object schema that
 * lists properties closed with additionalProperties: false.
 */
function transform(node: unknown, closed: boolean): unknown {
  if (Array.isArray(node)) return node.map((x) => transform(x, closed));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node as Record<string, unknown>)) {
    if (k === '$ref' && typeof v === 'string' && v.startsWith(SCHEMA_REF_PREFIX)) out[k] = ID + v.slice(SCHEMA_REF_PREFIX.length);
    else if (k === 'properties' || k === '$defs') {
      const props: Record<string, unknown> = {};
      for (const [p, s] of Object.entries(v as Record<string, unknown>)) props[p] = transform(s, closed);
      out[k] = props;
    } else out[k] = transform(v, closed);
  }
  const props = out.properties as Record<string, unknown> | undefined;
  if (closed && out.type === 'object' && props !== undefined && Object.keys(props).length > 0 && !('additionalProperties' in out)) {
    out.additionalProperties = false;
  }
  return out;
}

function newAjv(): Ajv2020 {
  return new Ajv2020({ strict: true, allErrors: true });
}

// ---- TypeBox declarations ------------------------------------------------------------

const shapeAjv = newAjv();
const compiled = new Map<TSchema, ValidateFunction>();

/** The closed validator of a declaration (compiled once per schema object). */
export function wireValidator(schema: TSchema): ValidateFunction {
  let v = compiled.get(schema);
  if (v === undefined) {
    v = shapeAjv.compile(transform(jsonSchema(schema), true) as object);
    compiled.set(schema, v);
  }
  return v;
}

/**
 * Asserts that a real answer (or a read model's) has exactly the declared
 * shape: every required field, no undeclared one, each of its declared type,
 * format and value set. Returns the value, typed.
 */
export function assertWireShape<S extends TSchema>(schema: S, value: unknown, what = 'answer'): Static<S> {
  const v = wireValidator(schema);
  assert.ok(v(value), `${what} does not match its declaration: ${JSON.stringify(v.errors)} in ${JSON.stringify(value)?.slice(0, 600)}`);
  return value as Static<S>;
}

/**
 * What is wrong with a text message the WebSocket lane sent, checked against
 * the declaration of its `type` (src/wire/ws.ts), closed; null when nothing.
 */
export function wsMessageProblem(m: unknown): string | null {
  const type = typeof m === 'object' && m !== null ? (m as { type?: unknown }).type : undefined;
  const schema = typeof type === 'string' && Object.hasOwn(WS_MESSAGES, type) ? WS_MESSAGES[type]! : undefined;
  if (schema === undefined) return `a WebSocket message of no declared type: ${JSON.stringify(m)?.slice(0, 300)}`;
  const v = wireValidator(schema);
  if (v(m)) return null;
  return `a ${type} message does not match its declaration: ${JSON.stringify(v.errors)} in ${JSON.stringify(m).slice(0, 600)}`;
}

// ---- the OpenAPI document ----------------------------------------------------------------

export interface DocAjv {
  compile(schema: unknown): ValidateFunction;
  /** The component schema names registered. */
  names: string[];
}

/**
 * An Ajv with the document's component schemas registered under an id of
 * their own (`#/components/schemas/X` references are rewritten to it);
 * closed as above when asked.
 */
export function documentAjv(doc: any, o: { closed: boolean }): DocAjv {
  const ajv = newAjv();
  const schemas = doc.components.schemas as Record<string, unknown>;
  for (const [name, s] of Object.entries(schemas)) ajv.addSchema({ ...(transform(s, o.closed) as object), $id: ID + name });
  return {
    names: Object.keys(schemas),
    compile: (schema) => ajv.compile(transform(schema, o.closed) as object),
  };
}

/** Every schema object in the document outside components: parameters, request bodies, responses (with where it is). */
export function operationSchemas(doc: any): { where: string; schema: unknown }[] {
  const out: { where: string; schema: unknown }[] = [];
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, any>>)) {
    for (const [method, op] of Object.entries(item)) {
      for (const p of op.parameters ?? []) out.push({ where: `${method} ${path} parameter ${p.name}`, schema: p.schema });
      const body = op.requestBody?.content?.['application/json']?.schema;
      if (body) out.push({ where: `${method} ${path} requestBody`, schema: body });
      for (const [status, r] of Object.entries(op.responses as Record<string, any>)) {
        const s = r.content?.['application/json']?.schema;
        if (s) out.push({ where: `${method} ${path} ${status}`, schema: s });
      }
    }
  }
  return out;
}
