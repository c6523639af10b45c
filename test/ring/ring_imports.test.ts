// The engine imports src/ring, and the engine imports no node:* modules and
// nothing from the I/O side: so src/ring may import only src/lib and itself.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// This file runs as dist/test/ring/ring_imports.test.js; the sources are at the repo root.
const RING_DIR = fileURLToPath(new URL('../../../src/ring/', import.meta.url));

test('ring: src/ring imports only src/lib and its own files, never node:* or the I/O side', () => {
  const files = readdirSync(RING_DIR).filter((f) => f.endsWith('.ts'));
  assert.ok(files.length >= 4);
  for (const f of files) {
    const text = readFileSync(RING_DIR + f, 'utf8');
    for (const m of text.matchAll(/^\s*(?:import|export)\b[^'"]*?from\s+['"]([^'"]+)['"]/gm)) {
      const spec = m[1]!;
      assert.ok(spec.startsWith('./') || spec.startsWith('../lib/'), `${f} imports ${spec}`);
    }
    assert.doesNotMatch(text, /\brequire\(|\bimport\(/, `${f} has no dynamic imports`);
  }
});
