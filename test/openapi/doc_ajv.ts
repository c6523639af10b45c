// Compiles the schemas of the generated OpenAPI document with Ajv in JSON
// Schema 2020-12 mode, strict (unknown keywords, loose types and loose tuples
// are errors). Component schemas are registered under an id of their own and
// `#/components/schemas/X` references rewritten to it. With `closed`, every
// object schema that lists properties also gets additionalProperties: false,
// so a response field the document does not describe fails validation (the
// published document stays open: clients ignore unknown fields). Test process.

import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { SCHEMA_REF_PREFIX } from '../../src/openapi/openapi.js';

const ID = 'https://dx.invalid/openapi/components/schemas/';

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

export interface DocAjv {
  compile(schema: unknown): ValidateFunction;
  /** The component schema names registered. */
  names: string[];
}

export function documentAjv(doc: any, o: { closed: boolean }): DocAjv {
  const ajv = new Ajv2020({ strict: true, allErrors: true });
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
