// openapi: writes the OpenAPI 3.1 document of the exchange (src/openapi) to
// openapi.json at the repository root (`npm run openapi`); with --check it
// writes nothing and exits 1 when the file is missing or stale; a usage
// error exits 2.

import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseCommandLine, parseOrUsage } from '../src/lib/command_line.js';
import { openApiText } from '../src/openapi/openapi.js';

// dist/tools/openapi.js -> the repository root.
const target = fileURLToPath(new URL('../../openapi.json', import.meta.url));
const text = openApiText();
const USAGE = 'usage: node dist/tools/openapi.js [--check]';
const OPTIONS = { check: { type: 'boolean' } } as const;
const args = parseOrUsage(() => parseCommandLine(process.argv.slice(2), OPTIONS, { positionals: false }), USAGE, 'openapi');

if (args === null) {
  process.exitCode = 2;
} else if (args.values.check) {
  if (!existsSync(target) || readFileSync(target, 'utf8') !== text) {
    process.stderr.write(`${target} is stale: run npm run openapi\n`);
    process.exit(1);
  }
  process.stdout.write(`${target} is up to date\n`);
} else {
  writeFileSync(target, text);
  process.stdout.write(`wrote ${target}\n`);
}
