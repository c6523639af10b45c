// The folder graph, read from the imports of every source file. One table
// says which folders each folder of src/ may import; the table itself is
// acyclic, so code that follows it has no cycle among src/ folders (checked
// on the real imports too). Beside the table, the fences:
//   - the engine side (src/engine, src/book, src/accounts) reaches, through
//     every import transitively, only itself, src/lib, src/layout and
//     src/layout_codec: no node:* module, no uWebSockets.js, no TypeBox,
//     nothing of the I/O side; src/ring imports no node:* module and no
//     package either (the engine and every I/O thread share it);
//   - only src/main touches threads (node:worker_threads, piscina);
//   - src/client is usable by outside programs: it imports only itself, the
//     generated layout and src/lib (pure code, for the binary order frames),
//     for types only src/wire (so nothing of the server loads with it), and
//     of packages only `ws` (its WebSocket client);
//   - src/web is browser code (built by Vite, its own tsconfig): it takes
//     the wire types from src/client (types only) and pure helpers from
//     src/lib, and nothing it loads reaches a node:* module (its Vite
//     configuration, run by Node at build time, aside);
//   - test/, tools/ and bench/ import test/support and src/, never each
//     other; test/support imports src/ only.
// Beside the imports, the run-time references: a file of another folder
// named by path and run as a process or loaded from another build
// (`new URL('../../tools/journal.js', import.meta.url)`,
// `resolve(dist, 'bench', 'engine_match.js')`), which no import shows. Each
// one between folders outside src/ is declared in RUNTIME with its reason.
// docs/ARCHITECTURE.md ("The folder graph") shows these tables as rendered
// by folderGraphMarkdown, and a test keeps it so.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// This file runs as dist/test/imports.test.js; the sources are at the repository root.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Per folder of src/, the folders of src/ it may import (besides itself). */
const SRC: Readonly<Record<string, readonly string[]>> = {
  'src/lib': [],
  'src/layout': ['src/lib'],
  'src/layout_codec': ['src/layout', 'src/lib'],
  'src/ring': ['src/lib'],
  'src/book': ['src/lib'],
  'src/accounts': ['src/book', 'src/lib'],
  'src/engine': ['src/accounts', 'src/book', 'src/layout', 'src/layout_codec', 'src/lib'],
  'src/wire': ['src/layout'],
  'src/views': ['src/book', 'src/engine', 'src/layout', 'src/lib', 'src/wire'],
  'src/journal': ['src/accounts', 'src/book', 'src/engine', 'src/layout', 'src/lib', 'src/ring', 'src/views'],
  'src/replication': ['src/engine', 'src/journal', 'src/layout', 'src/lib', 'src/ring', 'src/views'],
  'src/gateway': ['src/journal', 'src/layout', 'src/lib', 'src/replication', 'src/ring', 'src/views', 'src/wire'],
  'src/ws': ['src/gateway', 'src/layout', 'src/lib', 'src/views', 'src/wire'],
  'src/keys_service': ['src/gateway', 'src/layout', 'src/wire'],
  'src/openapi': ['src/gateway', 'src/layout', 'src/lib', 'src/wire'],
  'src/admin': ['src/gateway', 'src/journal', 'src/layout', 'src/lib', 'src/openapi', 'src/wire'],
  'src/metrics': ['src/admin', 'src/gateway', 'src/keys_service', 'src/layout', 'src/lib', 'src/wire', 'src/ws'],
  'src/client': ['src/layout', 'src/lib', 'src/wire'],
  'src/mcp': ['src/client', 'src/gateway', 'src/layout', 'src/lib', 'src/wire'],
  'src/oracle': ['src/client', 'src/lib'],
  'src/demo': ['src/client', 'src/lib', 'src/oracle'],
  'src/cli': ['src/client', 'src/lib', 'src/oracle'],
  'src/web': ['src/client', 'src/lib'],
  'src/main': [
    'src/admin', 'src/demo', 'src/engine', 'src/gateway', 'src/journal', 'src/keys_service', 'src/layout', 'src/lib', 'src/mcp',
    'src/metrics', 'src/replication', 'src/ring', 'src/views', 'src/ws',
  ],
};

/** Outside src/: the folders each may import ('src' = any folder of src/). */
const OUTSIDE: Readonly<Record<string, readonly string[]>> = {
  'test/support': ['src'],
  test: ['test/support', 'src'],
  tools: ['test/support', 'src'],
  bench: ['test/support', 'src'],
};

/**
 * Run-time references between the folders outside src/ (to src/ they are
 * allowed, as imports are): a process run or a build's file loaded by path.
 * They are not module edges (nothing is imported), so the acyclic graph
 * above is the imports'; every such reference must be declared here, and
 * every declaration must still be used.
 */
const RUNTIME: readonly { from: string; to: string; why: string }[] = [
  { from: 'test', to: 'tools', why: 'the tools\' tests run each tool as its user does, as a child process' },
  { from: 'test', to: 'bench', why: 'bench/gateway_ab is tested end to end, as a child process' },
  {
    from: 'test/support',
    to: 'tools',
    why: 'the crash, failover and soak drivers check the data directories with the operator\'s own tools/journal verify, in a process '
      + 'of its own',
  },
  { from: 'tools', to: 'bench', why: 'tools/engine_ab times each build\'s own bench/engine_match.js, loaded from that build\'s directory' },
  { from: 'bench', to: 'test/support', why: 'bench/ws_orders runs the WebSocket order load (test/support/loadgen) in worker threads' },
  { from: 'test', to: 'test/support', why: 'the WebSocket order load is tested as ws_orders runs it, in a worker thread' },
];

const ENGINE_SIDE = ['src/engine', 'src/book', 'src/accounts'];
const ENGINE_REACH = [...ENGINE_SIDE, 'src/lib', 'src/layout', 'src/layout_codec'];
const THREAD_MODULES = ['node:worker_threads', 'worker_threads', 'piscina'];
/** The web pages' Vite configuration: build-time code, run by Node. */
const VITE_CONFIG = 'src/web/vite.config.ts';

interface Import {
  spec: string;
  /** `import type` / `export type`: erased at compile time. */
  typeOnly: boolean;
}

export function importsOf(text: string): Import[] {
  const out: Import[] = [];
  // No quote or semicolon inside a statement's head, so a match never spans two statements.
  for (const m of text.matchAll(/(?:^|\n)\s*((?:import|export)\s[^'";]*?from\s+['"]([^'"]+)['"])/g)) {
    out.push({ spec: m[2]!, typeOnly: /^(?:import|export)\s+type\s/.test(m[1]!) });
  }
  for (const m of text.matchAll(/import\(\s*['"]([^'"]+)['"]\s*\)/g)) out.push({ spec: m[1]!, typeOnly: false });
  for (const m of text.matchAll(/(?:^|\n)\s*import\s+['"]([^'"]+)['"]/g)) out.push({ spec: m[1]!, typeOnly: false });
  return out;
}

/**
 * The run-time references of a source file: `new URL('<relative .js>',
 * import.meta.url)` as `{relative}` (resolved against the file: dist mirrors
 * the sources), and a run of string segments naming a top folder and ending
 * in a .js file (`resolve(dist, 'bench', 'engine_match.js')`) as `{root}`.
 */
export function runtimeRefsOf(text: string): ({ relative: string } | { root: string })[] {
  const out: ({ relative: string } | { root: string })[] = [];
  for (const m of text.matchAll(/new URL\(\s*['"](\.\.?\/[^'"]*\.js)['"]\s*,\s*import\.meta\.url\s*\)/g)) out.push({ relative: m[1]! });
  for (const m of text.matchAll(/['"](src|test|tools|bench)['"]((?:\s*,\s*['"][^'"]+['"])*?)\s*,\s*['"]([^'"]+\.js)['"]/g)) {
    const middle = [...m[2]!.matchAll(/['"]([^'"]+)['"]/g)].map((x) => x[1]!);
    out.push({ root: [m[1]!, ...middle, m[3]!].join('/') });
  }
  return out;
}

/** The folder a repository path belongs to in the tables above. */
function folderOf(rel: string): string {
  const parts = rel.split('/');
  if (parts[0] === 'src') return `src/${parts[1]}`;
  if (parts[0] === 'test' && parts[1] === 'support') return 'test/support';
  return parts[0]!;
}

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) sources(p, out);
    else if (/\.(ts|tsx|mjs)$/.test(name)) out.push(p);
  }
  return out;
}

interface Edge {
  from: string;
  to: string;
  file: string;
  spec: string;
  typeOnly: boolean;
}

/** Every import of a source file under the given top folders, resolved (node:* and packages have `to` = the spec). */
function allImports(tops: string[]): Edge[] {
  const out: Edge[] = [];
  for (const top of tops) {
    for (const file of sources(join(ROOT, top))) {
      const rel = relative(ROOT, file);
      for (const { spec, typeOnly } of importsOf(readFileSync(file, 'utf8'))) {
        const to = spec.startsWith('.') ? folderOf(relative(ROOT, resolve(dirname(file), spec))) : spec;
        out.push({ from: folderOf(rel), to, file: rel, spec, typeOnly });
      }
    }
  }
  return out;
}

/** A cycle of the directed graph (as a path), or null. */
function findCycle(edges: ReadonlyMap<string, readonly string[]>): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    if (state.get(n) === 'done') return null;
    if (state.get(n) === 'open') return [...stack.slice(stack.indexOf(n)), n];
    state.set(n, 'open');
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      const c = visit(m);
      if (c) return c;
    }
    stack.pop();
    state.set(n, 'done');
    return null;
  };
  for (const n of edges.keys()) {
    const c = visit(n);
    if (c) return c;
  }
  return null;
}

/**
 * Every source file reached from `start` through relative imports (type-only
 * ones too when `types`), and what `judge` says is wrong with each import it
 * sees (null: fine, and followed when it names a source file).
 */
function reach(
  start: string[], types: boolean, judge: (from: string, imp: Import, target: string | null) => string | null,
): { seen: Set<string>; bad: string[] } {
  const queue = [...start];
  const seen = new Set<string>();
  const bad: string[] = [];
  while (queue.length) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const imp of importsOf(readFileSync(file, 'utf8'))) {
      if (imp.typeOnly && !types) continue;
      // A relative `.js` import names a .ts (or, in src/web, .tsx) source.
      let target: string | null = null;
      if (imp.spec.startsWith('.') && imp.spec.endsWith('.js')) {
        const base = resolve(dirname(file), imp.spec.slice(0, -3));
        target = existsSync(`${base}.tsx`) ? `${base}.tsx` : `${base}.ts`;
      }
      const complaint = judge(relative(ROOT, file), imp, target);
      if (complaint !== null) bad.push(complaint);
      else if (target !== null) queue.push(target);
    }
  }
  return { seen, bad };
}

const src = allImports(['src']);
const local = src.filter((e) => e.to.startsWith('src/') && e.to !== e.from);

test('imports: the allowed-edges table of src/ is acyclic and names every folder of src/', () => {
  assert.equal(findCycle(new Map(Object.entries(SRC))), null, 'the table has a cycle');
  const folders = readdirSync(join(ROOT, 'src')).filter((f) => statSync(join(ROOT, 'src', f)).isDirectory()).map((f) => `src/${f}`);
  assert.deepEqual(folders.filter((f) => !(f in SRC)), [], 'a folder of src/ missing from the table');
  for (const [f, may] of Object.entries(SRC)) for (const t of may) assert.ok(t in SRC, `${f} may import ${t}, which is not in the table`);
});

test('imports: every import between folders of src/ is an allowed edge, and the real folder graph has no cycle', () => {
  assert.ok(src.length > 300, 'the scan found the sources');
  const bad = local.filter((e) => !(SRC[e.from] ?? []).includes(e.to)).map((e) => `${e.file} imports ${e.spec} (${e.from} -> ${e.to})`);
  assert.deepEqual(bad, []);
  const graph = new Map<string, string[]>();
  for (const e of local) {
    const l = graph.get(e.from) ?? [];
    if (!l.includes(e.to)) l.push(e.to);
    graph.set(e.from, l);
  }
  assert.equal(findCycle(graph), null);
  const escapes = src.filter((e) => e.spec.startsWith('.') && !e.to.startsWith('src/')).map((e) => `${e.file} imports ${e.spec}`);
  assert.deepEqual(escapes, [], 'src/ imports nothing outside src/');
});

test('imports: the engine side reaches only itself, src/lib, src/layout, src/layout_codec (transitively), no node:*, no package', () => {
  const start = ENGINE_SIDE.flatMap((d) => sources(join(ROOT, d)));
  const { seen, bad } = reach(start, true, (from, { spec }, target) => {
    if (target === null) return `${from} imports ${spec}`;
    return ENGINE_REACH.includes(folderOf(relative(ROOT, target))) ? null : `${from} imports ${relative(ROOT, target)}`;
  });
  assert.ok(seen.size > 10, 'the scan found the engine sources');
  assert.deepEqual(bad, []);
});

test('imports: src/ring imports no node:* module and no package (the engine and every I/O thread share it)', () => {
  const ring = src.filter((e) => e.from === 'src/ring');
  assert.ok(ring.length >= 5, 'the scan found the ring sources');
  assert.deepEqual(ring.filter((e) => !e.spec.startsWith('.')).map((e) => `${e.file} imports ${e.spec}`), []);
});

test('imports: only src/main touches threads (worker_threads, piscina)', () => {
  const all = allImports(['src', 'test', 'tools', 'bench']).filter((e) => e.file.startsWith('src/'));
  const bad = all.filter((e) => THREAD_MODULES.includes(e.spec) && e.from !== 'src/main').map((e) => `${e.file} imports ${e.spec}`);
  assert.deepEqual(bad, []);
});

test('imports: src/client imports src/wire for types only, src/layout and src/lib, and of packages only ws', () => {
  const client = src.filter((e) => e.from === 'src/client');
  assert.ok(client.length > 10, 'the scan found the client sources');
  const bad = client.filter((e) => {
    if (e.to === 'src/client' || e.to === 'src/layout' || e.to === 'src/lib') return false;
    if (e.to === 'src/wire') return !e.typeOnly;
    return !e.spec.startsWith('node:') && e.spec !== 'ws';
  }).map((e) => `${e.file} imports ${e.spec}${e.typeOnly ? ' (type)' : ''}`);
  assert.deepEqual(bad, []);
});

test('imports: src/web imports src/client for types only, and nothing it loads in the browser reaches a node:* module', () => {
  const web = src.filter((e) => e.from === 'src/web');
  assert.ok(web.filter((e) => e.file.endsWith('.tsx')).length > 10, 'the scan found the pages (.tsx)');
  assert.deepEqual(web.filter((e) => e.to === 'src/client' && !e.typeOnly).map((e) => `${e.file} imports ${e.spec}`), []);
  // Every run-time import from the pages' sources (type-only imports are erased by the build).
  const start = sources(join(ROOT, 'src/web')).filter((f) => relative(ROOT, f) !== VITE_CONFIG);
  const node = (spec: string): boolean => spec.startsWith('node:') || builtinModules.includes(spec);
  const { seen, bad } = reach(start, false, (from, { spec }) => (node(spec) ? `${from} imports ${spec}` : null));
  assert.ok([...seen].some((f) => relative(ROOT, f).startsWith('src/lib/')), 'the scan followed the pages into src/lib');
  assert.deepEqual(bad, []);
});

test('imports: test/, tools/ and bench/ import test/support and src/, never each other; test/support imports only src/', () => {
  const bad = allImports(['test', 'tools', 'bench']).filter((e) => e.spec.startsWith('.') && e.to !== e.from).filter((e) => {
    const may = OUTSIDE[e.from] ?? [];
    return !(may.includes(e.to) || (may.includes('src') && e.to.startsWith('src/')));
  }).map((e) => `${e.file} imports ${e.spec} (${e.from} -> ${e.to})`);
  assert.deepEqual(bad, []);
});

test('imports: every run-time reference between test/, test/support, tools/ and bench/ is declared, and every declaration is used', () => {
  const found = new Map<string, string[]>();
  for (const top of ['test', 'tools', 'bench']) {
    for (const file of sources(join(ROOT, top))) {
      const rel = relative(ROOT, file);
      for (const r of runtimeRefsOf(readFileSync(file, 'utf8'))) {
        const target = 'relative' in r ? relative(ROOT, resolve(dirname(file), r.relative)) : r.root;
        const from = folderOf(rel);
        const to = folderOf(target);
        if (to === from || to.startsWith('src/') || !(to in OUTSIDE)) continue;
        const key = `${from} -> ${to}`;
        const what = `${rel} runs ${target}`;
        if (!(found.get(key) ?? []).includes(what)) found.set(key, [...(found.get(key) ?? []), what]);
      }
    }
  }
  assert.ok(found.size > 0, 'the scan found the run-time references');
  const declared = new Set(RUNTIME.map((e) => `${e.from} -> ${e.to}`));
  assert.deepEqual([...found].filter(([k]) => !declared.has(k)).flatMap(([, v]) => v), [], 'undeclared run-time references');
  assert.deepEqual([...declared].filter((k) => !found.has(k)), [], 'declared run-time edges nothing uses any more');
});

test('imports: the scan reads import, export-from, dynamic and side-effect imports, and knows type-only ones', () => {
  const probe = "import { Worker } from 'node:worker_threads';\nexport { x } from './y.js';\nimport type { T } from '../wire/t.js';\n"
    + "export interface Q {\n  a?: number;\n}\nexport type { U } from '../wire/u.js';\n"
    + "const m = await import('./z.js');\nimport './side.js';\n";
  assert.deepEqual(importsOf(probe), [
    { spec: 'node:worker_threads', typeOnly: false }, { spec: './y.js', typeOnly: false }, { spec: '../wire/t.js', typeOnly: true },
    { spec: '../wire/u.js', typeOnly: true }, { spec: './z.js', typeOnly: false }, { spec: './side.js', typeOnly: false },
  ]);
  const run = "const t = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));\n"
    + "await import(pathToFileURL(resolve(dist, 'bench', 'engine_match.js')).href);\nconst d = new URL('../../', import.meta.url);\n";
  assert.deepEqual(runtimeRefsOf(run), [{ relative: '../../tools/journal.js' }, { root: 'bench/engine_match.js' }]);
  assert.ok(findCycle(new Map([['a', ['b']], ['b', ['c']], ['c', ['a']]])), 'a cycle is found');
  assert.equal(findCycle(new Map([['a', ['b', 'c']], ['b', ['c']]])), null);
});

/** The folder graph as docs/ARCHITECTURE.md shows it: the tables above, rendered (one source: this file). */
export function folderGraphMarkdown(): string {
  const list = (xs: readonly string[]): string => (xs.length === 0 ? '(none)' : xs.map((x) => `\`${x}\``).join(', '));
  const lines = ['| folder | imports |', '|---|---|'];
  for (const [f, may] of Object.entries(SRC)) lines.push(`| \`${f}\` | ${list(may)} |`);
  for (const [f, may] of Object.entries(OUTSIDE)) lines.push(`| \`${f}\` | ${list(may.map((m) => (m === 'src' ? 'src/*' : m)))} |`);
  lines.push('', '| folder | runs files of (no import) | why |', '|---|---|---|');
  for (const e of RUNTIME) lines.push(`| \`${e.from}\` | \`${e.to}\` | ${e.why} |`);
  return lines.join('\n');
}

test('imports: docs/ARCHITECTURE.md shows the folder graph of this file\'s tables, unchanged', () => {
  const doc = readFileSync(join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const begin = '<!-- folder graph: rendered from test/imports.test.ts (folderGraphMarkdown); the test checks it -->\n';
  const end = '\n<!-- end of folder graph -->';
  const i = doc.indexOf(begin);
  const j = doc.indexOf(end, i);
  assert.ok(i >= 0 && j > i, 'docs/ARCHITECTURE.md has the folder graph block');
  const shown = doc.slice(i + begin.length, j);
  const want = folderGraphMarkdown();
  assert.equal(shown, want, `docs/ARCHITECTURE.md shows another folder graph; the block should read:\n${want}`);
});
