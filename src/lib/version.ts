// version: the package version (package.json), which the MCP initialize answer
// and the OpenAPI document report. Read once at module load; I/O threads and
// tools, never the engine.

import { readFileSync } from 'node:fs';

const PACKAGE = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };

export const SERVER_VERSION: string = PACKAGE.version;
