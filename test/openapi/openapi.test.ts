// The OpenAPI document as a document: OpenAPI 3.1 with one operation per
// route at its path and method, every schema compiling under a strict JSON
// Schema 2020-12 validator (and the MCP tools' schemas too), tuples as
// prefixItems, the committed openapi.json up to date, and @redocly/cli lint
// (recommended-strict, offline) finding nothing. No exchange is started.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { CODES } from '../../src/layout/records.js';
import { pathParamNames } from '../../src/gateway/operation_schemas.js';
import { ROUTES } from '../../src/gateway/routes.js';
import { TOOL_DEFINITIONS } from '../../src/mcp/tools.js';
import { buildOpenApi, openApiText } from '../../src/openapi/openapi.js';
import { documentAjv, operationSchemas } from '../support/wire_shapes.js';

const doc = buildOpenApi() as any;
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

test('openapi: an OpenAPI 3.1 document with one operation per route, named by operationId, at its path and method', () => {
  assert.equal(doc.openapi, '3.1.0');
  assert.equal(doc.jsonSchemaDialect, 'https://json-schema.org/draft/2020-12/schema');
  const ids = new Set<string>();
  for (const r of ROUTES) {
    const op = doc.paths[r.path]?.[r.method.toLowerCase()];
    assert.ok(op, `${r.method} ${r.path} is described`);
    assert.equal(op.operationId, r.name);
    ids.add(op.operationId);
    const path = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name);
    assert.deepEqual(path, pathParamNames(r), `${r.name}: path parameters`);
    const query = (op.parameters ?? []).filter((p: any) => p.in === 'query').map((p: any) => p.name);
    // Every read also takes min_seq (read-your-writes across replicated nodes, src/gateway/http.ts).
    assert.deepEqual(query, [...r.query.map((q) => q.name), ...(r.method === 'GET' ? ['min_seq'] : [])], `${r.name}: query parameters`);
    assert.equal(
      'requestBody' in op,
      r.body !== 'none' && r.body !== 'empty',
      `${r.name}: a request body exactly when the route takes one`,
    );
    const ok = Object.keys(op.responses).filter((s) => s.startsWith('2'));
    assert.equal(ok.length, 1, `${r.name}: one success status`);
    for (const s of ['400', '401', '403', '429']) assert.ok(op.responses[s], `${r.name}: documents ${s}`);
    for (const [status, resp] of Object.entries(op.responses as Record<string, any>)) {
      if (Number(status) < 400) continue;
      for (const code of resp['x-dx-error-codes'])
        assert.equal(CODES.find((c) => c.code === code)?.http, Number(status), `${r.name}: ${code} answers ${status}`);
    }
  }
  assert.equal(ids.size, ROUTES.length, 'operationIds are unique');
  assert.ok(doc.paths['/v1/mcp'].post, 'the MCP endpoint is described');
  const statusParam = doc.paths['/v1/portfolio/orders'].get.parameters.find((p: any) => p.name === 'status');
  assert.deepEqual(
    { style: statusParam.style, explode: statusParam.explode, type: statusParam.schema.type },
    { style: 'form', explode: false, type: 'array' },
  );
});

test('openapi: the security scheme is described in words: three headers, required together on every operation', () => {
  const s = doc.components.securitySchemes;
  assert.deepEqual(Object.values(s).map((x: any) => x.name).sort(), ['DX-ACCESS-KEY', 'DX-ACCESS-SIGNATURE', 'DX-ACCESS-TIMESTAMP']);
  assert.match(s.DxAccessSignature.description, /HMAC-SHA256/);
  assert.match(s.DxAccessSignature.description, /path\?query/);
  assert.deepEqual(doc.security, [{ DxAccessKey: [], DxAccessTimestamp: [], DxAccessSignature: [] }]);
  assert.match(doc.info.description, /5000 ms/);
});

test('openapi: every schema (components, parameters, bodies, responses) and every MCP tool schema compiles with Ajv 2020 strict', () => {
  const ajv = documentAjv(doc, { closed: false });
  for (const name of ajv.names) ajv.compile({ $ref: `#/components/schemas/${name}` });
  const inline = operationSchemas(doc);
  assert.ok(inline.length > 100);
  for (const { where, schema } of inline) {
    assert.doesNotThrow(() => ajv.compile(schema), where);
  }
  const closed = documentAjv(doc, { closed: true });
  for (const { where, schema } of inline) assert.doesNotThrow(() => closed.compile(schema), `${where} (closed)`);
  for (const t of TOOL_DEFINITIONS) {
    assert.doesNotThrow(() => ajv.compile(t.inputSchema), `${t.name} inputSchema`);
    assert.doesNotThrow(() => ajv.compile(t.outputSchema), `${t.name} outputSchema`);
  }
});

test('openapi: tuples such as [tick, qty] are prefixItems, never draft-07 items arrays', () => {
  const level = doc.components.schemas.Level;
  assert.equal(level.type, 'array');
  assert.equal(level.prefixItems.length, 2);
  assert.equal(level.minItems, 2);
  assert.equal(level.maxItems, 2);
  assert.equal(doc.components.schemas.Orderbook.properties.yes.items.$ref, '#/components/schemas/Level');
  const walk = (v: unknown, path: string): void => {
    if (Array.isArray(v)) return v.forEach((x, i) => walk(x, `${path}[${i}]`));
    if (v === null || typeof v !== 'object') return;
    const o = v as Record<string, unknown>;
    assert.ok(!Array.isArray(o.items), `${path}: items is an array (draft-07 tuple)`);
    assert.ok(!('additionalItems' in o), `${path}: additionalItems`);
    for (const [k, x] of Object.entries(o)) walk(x, `${path}.${k}`);
  };
  walk(doc, '$');
  walk(TOOL_DEFINITIONS, 'tools');
});

test('openapi: the closed request schemas accept what the exchange accepts and refuse an unknown field', () => {
  const ajv = documentAjv(doc, { closed: false });
  const place = ajv.compile({ $ref: '#/components/schemas/PlaceOrderRequest' });
  assert.equal(place({ market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 1, client_order_id: '5' }), true);
  assert.equal(place({ market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 1, colour: 'red' }), false);
  assert.equal(place({ market_id: 1, side: 'buy', outcome: 'maybe', tick: 40, qty: 1 }), false);
  // What the exchange refuses beyond a plain u64 string, the document refuses too: 0 means none and is not sent.
  for (const field of ['client_order_id', 'expiry_ts']) {
    const gtd = { market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 1, tif: 'gtd', expiry_ts: '9' };
    assert.equal(place({ ...gtd, [field]: '0' }), false, field);
  }
  const withdrawal = ajv.compile({ $ref: '#/components/schemas/WithdrawalRequest' });
  assert.equal(withdrawal({ client_withdrawal_id: '1', amount: '250', destination: 'x' }), true);
  assert.equal(withdrawal({ client_withdrawal_id: '1', amount: '0', destination: 'x' }), false);
  assert.equal(withdrawal({ client_withdrawal_id: '1', amount: '90071992547409910', destination: 'x' }), false, 'above 2^53-1');
  assert.equal(withdrawal({ client_withdrawal_id: '1', amount: `${'0'.repeat(20)}1`, destination: 'x' }), false, 'over 20 digits');
  const batch = ajv.compile({ $ref: '#/components/schemas/BatchPlaceRequest' });
  assert.equal(
    batch({ orders: Array.from({ length: 21 }, () => ({ market_id: 1, side: 'buy', outcome: 'yes', tick: 40, qty: 1 })) }),
    false,
  );
});

test('openapi: openapi.json at the repository root is what `npm run openapi` writes now', () => {
  const committed = readFileSync(join(ROOT, 'openapi.json'), 'utf8');
  assert.ok(committed === openApiText(), 'openapi.json is stale: run npm run openapi');
});

test('openapi: @redocly/cli lint (recommended-strict) finds no problem, offline', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-openapi-'));
  try {
    const file = join(dir, 'openapi.json');
    writeFileSync(file, openApiText());
    const cli = createRequire(import.meta.url).resolve('@redocly/cli/bin/cli.js');
    const r = spawnSync(process.execPath, [cli, 'lint', file, '--extends=recommended-strict', '--format=json'], {
      encoding: 'utf8',
      // No telemetry and no update check: the lint must not need the network.
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
      timeout: 60_000,
    });
    assert.equal(r.error, undefined, String(r.error));
    const report = JSON.parse(r.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; message: string }[];
    };
    assert.deepEqual(
      report.totals,
      { errors: 0, warnings: 0, ignored: 0 },
      report.problems.map((p) => `${p.ruleId}: ${p.message}`).join('\n'),
    );
    assert.equal(r.status, 0, r.stderr);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
