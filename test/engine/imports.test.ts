// The engine side (src/engine, src/book, src/accounts) imports no node:*
// module, no uWebSockets.js, no TypeBox and nothing from the I/O side: it may
// reach only itself, src/lib and the generated src/layout. This test follows
// the imports of every engine-side source file transitively.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const ENGINE_DIRS = ['src/engine', 'src/book', 'src/accounts'];
const ALLOWED = ['src/engine/', 'src/book/', 'src/accounts/', 'src/lib/', 'src/layout/'];

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)) out.push(m[1]!);
  for (const m of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push(m[1]!);
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) out.push(m[1]!);
  return out;
}

test('engine, book and accounts import only themselves, src/lib and src/layout (transitively)', () => {
  const queue: string[] = [];
  for (const d of ENGINE_DIRS) {
    for (const f of readdirSync(join(root, d))) if (f.endsWith('.ts')) queue.push(join(root, d, f));
  }
  const seen = new Set<string>();
  const bad: string[] = [];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const spec of importsOf(file)) {
      const from = relative(root, file);
      if (!spec.startsWith('.')) {
        bad.push(`${from} imports ${spec}`);
        continue;
      }
      const target = resolve(dirname(file), spec.replace(/\.js$/, '.ts'));
      const rel = relative(root, target);
      if (!ALLOWED.some((p) => rel.startsWith(p))) bad.push(`${from} imports ${rel}`);
      else queue.push(target);
    }
  }
  assert.ok(seen.size > 10, 'the scan found the engine sources');
  assert.deepEqual(bad, []);
});

test('the import scan catches a forbidden import', () => {
  const probe = "import { Worker } from 'node:worker_threads';\nexport { x } from './y.js';\n";
  const found: string[] = [];
  for (const m of probe.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/g)) found.push(m[1]!);
  assert.deepEqual(found, ['node:worker_threads', './y.js']);
});
