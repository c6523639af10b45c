// `node dist/src/mcp/stdio.js` (the documented way to run the MCP stdio
// server without the CLI, docs/mcp.md) reads DX_KEY_FILE itself. A key file
// that is not JSON (here the secret was pasted unquoted) must be refused
// without quoting a piece of the secret: V8's JSON.parse message quotes the
// text around the mistake, and the message goes to stderr, which the MCP
// host logs. dx's own key-file reader (src/cli/context.ts) was fixed for
// this; the stdio server has its own reader. Test process only.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { stdioConfigFromEnv } from '../../src/mcp/stdio.js';

test('stdio: a key file that is not JSON is refused without quoting a piece of its secret', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-mcp-keyfile-'));
  try {
    const secret = 'c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0c2VjcmV0MTI=';
    const file = join(dir, 'key.json');
    writeFileSync(file, `{"key_id": 7, "secret": ${secret}}\n`, { mode: 0o600 });
    let message = '';
    assert.throws(() => stdioConfigFromEnv({ DX_KEY_FILE: file }), (e: Error) => {
      message = e.message;
      return true;
    });
    assert.match(message, /key file/);
    assert.ok(!message.includes(secret.slice(0, 8)), `the error quotes a piece of the secret: ${message}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
