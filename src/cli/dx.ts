#!/usr/bin/env node
// dx: the command-line client of the exchange (package.json "bin").
//   dx <command> [args] [--json]        signed REST calls with a key from the environment
//   dx admin <command> [args] [--json]  operator commands over the control plane
//   dx mcp                              a local stdio MCP server holding the key
// Tables for people, --json for scripts (the server's JSON on stdout, errors
// too). Exit codes: 0 done, 1 the server refused (its error is printed),
// 2 usage or configuration, 3 the server could not be reached (nothing was
// sent), 4 the request was sent and no answer came (what it asked for may or
// may not have been done). See
// context.ts for the environment variables. CLI process, main thread.

import { readFileSync, realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { fetchFailure } from '../lib/fetch_failure.js';
import { DxApiError } from '../client/errors.js';
import { ADMIN_COMMAND } from './admin_commands.js';
import { UsageError } from '../lib/command_line.js';
import { parseArgs, type Parsed } from './args.js';
import { CLIENT_COMMANDS, type Command } from './client_commands.js';
import { Ctx } from './context.js';

export const EXIT_OK = 0;
export const EXIT_API = 1;
export const EXIT_USAGE = 2;
export const EXIT_NETWORK = 3;
export const EXIT_NO_ANSWER = 4;

const MCP_COMMAND: Command = {
  usage: 'dx mcp',
  summary: 'a local stdio MCP server that holds the key and forwards signed calls to /v1/mcp (one line of agent configuration)',
  run: async (ctx, from) => {
    if (ctx.p.positionals.length > from) throw new UsageError('dx mcp takes no arguments', 'dx mcp');
    const k = ctx.keyMaterial();
    // Loaded on demand: the MCP lane is a module of its own, and every other command works without it.
    const spec = '../mcp/stdio.js';
    let mod: { runMcpStdio?: (o: { baseUrl: string; keyId: number; secret: string }) => Promise<void> };
    try {
      mod = (await import(spec)) as typeof mod;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND')
        throw new UsageError('this build has no MCP stdio server (dist/src/mcp/stdio.js is missing)');
      throw e;
    }
    if (typeof mod.runMcpStdio !== 'function') throw new UsageError('dist/src/mcp/stdio.js does not export runMcpStdio');
    await mod.runMcpStdio({ baseUrl: ctx.apiUrl(), keyId: k.keyId, secret: k.secret });
  },
};

const COMMANDS: Record<string, Command> = { ...CLIENT_COMMANDS, admin: ADMIN_COMMAND, mcp: MCP_COMMAND };

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function helpText(): string {
  const w = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    'dx: the dx exchange from the command line',
    '',
    'usage: dx <command> [arguments] [--json]',
    '',
    ...Object.entries(COMMANDS).map(([k, c]) => `  ${k.padEnd(w)}  ${c.summary}`),
    '',
    'examples:',
    '  dx markets',
    '  dx book 1',
    '  dx order buy yes 1 45 10',
    '  dx get /v1/rounds?category=1',
    '  dx admin series list',
    '',
    'environment: DX_API_URL (default http://127.0.0.1:8080), DX_KEY_ID + DX_KEY_SECRET or DX_KEY_FILE',
    '  (JSON {"key_id","secret","url"?}), DX_ACCOUNTS_URL (8081), DX_ADMIN_URL (default http://127.0.0.1:8082),',
    '  DX_ADMIN_TOKEN or ./data/admin-token. Options: --json, --url, --key-file, --admin-url, --timeout-ms.',
    '  `dx <command> --help` shows one command. Exit codes: 0 ok, 1 refused by the server, 2 usage, 3 unreachable (nothing',
    '  sent), 4 no answer, 504 or 500 (sent: a change it asked for may or may not have been made).',
    '',
  ].join('\n');
}

/** A network failure of fetch, as a sentence, and whether the request may have reached the exchange (src/lib/fetch_failure.ts). */
function networkFailure(e: unknown): { message: string; sent: boolean } | null {
  const f = fetchFailure(e);
  if (f === null) return null;
  if (f.cause === 'timeout') return { message: 'no answer within the timeout (--timeout-ms)', sent: true };
  if (f.code === 'ECONNREFUSED') return { message: 'connection refused (is the exchange running? check the URL)', sent: false };
  return { message: f.cause, sent: f.sent };
}

export async function run(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  write: (s: string) => void,
  writeErr: (s: string) => void,
): Promise<number> {
  let p: Parsed;
  try {
    p = parseArgs(argv);
  } catch (e) {
    writeErr(`dx: ${(e as Error).message}\n`);
    return EXIT_USAGE;
  }
  const name = p.positionals[0];
  if (p.flags.get('version') === true) {
    write(`${version()}\n`);
    return EXIT_OK;
  }
  if (name === undefined || name === 'help') {
    const c = name === 'help' && p.positionals[1] && Object.hasOwn(COMMANDS, p.positionals[1]) ? COMMANDS[p.positionals[1]] : undefined;
    write(c ? `usage: ${c.usage}\n  ${c.summary}\n` : helpText());
    return name === undefined && p.flags.get('help') !== true ? EXIT_USAGE : EXIT_OK;
  }
  const cmd = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!cmd) {
    writeErr(`dx: unknown command ${JSON.stringify(name)}; \`dx help\` lists them\n`);
    return EXIT_USAGE;
  }
  if (p.flags.get('help') === true) {
    write(`usage: ${cmd.usage}\n  ${cmd.summary}\n`);
    return EXIT_OK;
  }
  let ctx: Ctx | null = null;
  try {
    ctx = new Ctx(p, env, write, writeErr);
    return (await cmd.run(ctx, 1)) ?? EXIT_OK;
  } catch (e) {
    if (e instanceof UsageError) {
      writeErr(`dx: ${e.message}\n${e.usage ? `usage: ${e.usage}\n` : ''}`);
      return EXIT_USAGE;
    }
    if (e instanceof DxApiError) {
      if (ctx?.json) write(`${JSON.stringify({ status: e.status, error: e.body }, null, 2)}\n`);
      else {
        const num = e.num === null ? '' : ` (num ${e.num})`;
        const details = e.details ? ` ${JSON.stringify(e.details)}` : '';
        writeErr(`dx: ${e.status} ${e.code}${num}: ${e.body.message}${details}\n`);
      }
      return e.refused ? EXIT_API : EXIT_NO_ANSWER;
    }
    // A token that no HTTP header can carry (fetch refuses characters above U+00FF).
    if (e instanceof TypeError && /ByteString/.test(e.message)) {
      writeErr(`dx: a header value is not Latin-1 (check DX_ADMIN_TOKEN): ${e.message}\n`);
      return EXIT_USAGE;
    }
    const net = networkFailure(e);
    if (net !== null && !net.sent) {
      writeErr(`dx: cannot reach the exchange: ${net.message}\n`);
      return EXIT_NETWORK;
    }
    if (net !== null) {
      writeErr(`dx: no answer from the exchange: ${net.message}. The request was sent: a change it asked for (an order, a ` +
        'cancel, a withdrawal, a key) may or may not have been made; look (dx orders, dx withdrawal <id>, dx keys list) ' +
        'before repeating it\n');
      return EXIT_NO_ANSWER;
    }
    throw e;
  }
}

// Run when executed (also through the npm bin symlink), not when imported.
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href) {
  run(process.argv.slice(2), process.env, (s) => process.stdout.write(s), (s) => process.stderr.write(s)).then((code) => {
    process.exitCode = code;
  }, (e: unknown) => {
    process.stderr.write(`dx: internal error: ${(e as Error).stack ?? String(e)}\n`);
    process.exitCode = 70;
  });
}
