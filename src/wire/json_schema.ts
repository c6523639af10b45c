// json_schema: renders a TypeBox schema as plain JSON Schema 2020-12, the
// dialect of OpenAPI 3.1 and of MCP tool schemas. TypeBox builds draft-07
// style tuples (`items: [...]`, `additionalItems: false`); 2020-12 spells them
// `prefixItems` with `minItems`/`maxItems`, so `[tick, qty]` is emitted that
// way. A union of string literals becomes one `enum` (shorter, and what
// agents and doc renderers read best). TypeBox's symbol-keyed metadata is
// dropped. `ref` lets the OpenAPI generator replace a named schema by a
// `$ref` (matched by object identity). Build time only; any thread.

import type { TSchema } from '@sinclair/typebox';

export type JsonSchema = Record<string, unknown>;

/** Returns the `$ref` target for a named schema, or undefined to inline it. */
export type RefOf = (schema: object) => string | undefined;

function isStringConst(s: unknown): s is { const: string; type: 'string' } {
  if (s === null || typeof s !== 'object') return false;
  const o = s as Record<string, unknown>;
  return typeof o.const === 'string' && o.type === 'string' && Object.keys(o).every((k) => k === 'const' || k === 'type');
}

function convert(node: unknown, ref: RefOf | undefined, top: boolean): unknown {
  if (Array.isArray(node)) return node.map((x) => convert(x, ref, false));
  if (node === null || typeof node !== 'object') return node;
  if (!top && ref !== undefined) {
    const target = ref(node);
    if (target !== undefined) return { $ref: target };
  }
  const src = node as Record<string, unknown>;
  const out: JsonSchema = {};
  // Object.keys skips TypeBox's symbol keys ([Kind], [OptionalKind]).
  for (const k of Object.keys(src)) {
    const v = src[k];
    if (k === 'properties' || k === '$defs' || k === 'patternProperties') {
      const props: Record<string, unknown> = {};
      for (const p of Object.keys(v as object)) props[p] = convert((v as Record<string, unknown>)[p], ref, false);
      out[k] = props;
    } else if (k === 'items' && Array.isArray(v)) {
      out.prefixItems = v.map((x) => convert(x, ref, false));
    } else if (k === 'additionalItems') {
      continue; // a TypeBox tuple's closing flag; minItems/maxItems close the 2020-12 tuple
    } else if (k === 'format' && v === 'u64') {
      continue; // the server's own range check (requests.ts): no standard format, and strict validators refuse unknown ones
    } else if (k === 'anyOf' && Array.isArray(v) && v.length > 0 && v.every(isStringConst)) {
      out.type = 'string';
      out.enum = v.map((x) => (x as { const: string }).const);
    } else {
      out[k] = convert(v, ref, false);
    }
  }
  return out;
}

/** The JSON Schema 2020-12 form of a TypeBox schema. */
export function jsonSchema(schema: TSchema | object, ref?: RefOf): JsonSchema {
  return convert(schema, ref, true) as JsonSchema;
}
