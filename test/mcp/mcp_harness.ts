// Helpers of the MCP lane tests: an official SDK client connected to a test
// exchange's POST /v1/mcp through StreamableHTTPClientTransport with a fetch
// that signs every request, and a few result accessors. Test process.

import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { signingFetch } from '../../src/mcp/sign_fetch.js';
import { ErrorEnvelope } from '../../src/wire/responses.js';
import type { TestExchange } from '../support/exchange.js';
import { assertWireShape } from '../support/wire_shapes.js';

export interface McpSession {
  client: Client;
  transport: StreamableHTTPClientTransport;
  close(): Promise<void>;
}

export async function connectMcp(tx: TestExchange, key: { keyId: number; secret: string }): Promise<McpSession> {
  const client = new Client({ name: 'dx-mcp-test', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(`${tx.base}/v1/mcp`), {
    fetch: signingFetch({ keyId: key.keyId, secret: key.secret }),
  });
  await client.connect(transport);
  return { client, transport, close: () => client.close() };
}

export interface ToolResult {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

/** Calls a tool that must succeed; returns its structuredContent after checking the text content carries the same JSON. */
export async function callOk(s: McpSession, name: string, args: Record<string, unknown> = {}): Promise<any> {
  const r = (await s.client.callTool({ name, arguments: args })) as ToolResult;
  assert.notEqual(r.isError, true, `${name} failed: ${r.content[0]?.text}`);
  assert.ok(r.structuredContent, `${name} has structuredContent`);
  assert.equal(r.content.length, 1);
  assert.equal(r.content[0]!.type, 'text');
  assert.deepEqual(JSON.parse(r.content[0]!.text!), r.structuredContent, `${name}: the text content is the same JSON as structuredContent`);
  return r.structuredContent;
}

/** Calls a tool that must fail with isError; returns the error envelope's inner object. */
export async function callError(s: McpSession, name: string, args: Record<string, unknown>, code: string): Promise<any> {
  const r = (await s.client.callTool({ name, arguments: args })) as ToolResult;
  assert.equal(r.isError, true, `${name} was expected to fail with ${code}: ${r.content[0]?.text}`);
  assert.equal(r.structuredContent, undefined, 'an error result carries the envelope as text only');
  const env = assertWireShape(ErrorEnvelope, JSON.parse(r.content[0]!.text!), `${name}'s error`);
  assert.equal(env.error.code, code, `${name}: ${JSON.stringify(env)}`);
  return env.error;
}

/** Drops the fields that move with every sequenced event (the clock ticks), to compare two reads of one state. */
export function stable(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(stable);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (k !== 'as_of_seq') out[k] = stable(x);
  return out;
}

/** The lines a stream receives (newline-delimited, as the stdio transport writes them), filled in as each completes. */
export function linesOf(stream: NodeJS.ReadableStream): string[] {
  const out: string[] = [];
  let buf = '';
  stream.on('data', (d: Buffer) => {
    buf += d.toString('utf8');
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      out.push(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  return out;
}
