// tidy: the size and shape of the source, checked as TigerBeetle's tidy.zig
// checks its own. Every source file of src/, test/, tools/ and bench/ (the
// generated accessors of src/layout/ aside, and what is built into dist/):
//   - no line longer than 140 characters;
//   - the function-length ratchet: a function over 70 lines must stand in
//     test/tidy_long_functions.txt, no longer than it is listed; an entry
//     whose function is gone or now short must go, so the list only shrinks
//     (TIDY_RATCHET=write rewrites it: see writeRatchet);
//   - no catch that swallows every error: a catch binds the error and uses
//     it (to look at what it is, to rethrow it, to report it); `catch {}`
//     and a catch that never reads its error take an EACCES for "no files";
//     the same for a promise's `.catch(() => ...)`: its handler reads the
//     error, or a comment at the catch (inside the handler, on the line of
//     `.catch(`, or in the comment lines just above it) says why any failure
//     there is harmless and what the caller sees instead;
//   - one seeded generator, src/lib/rng.ts: no other mulberry32, xorshift,
//     xoshiro, sfc32 or splitmix;
//   - every file of src/ opens with a header comment that says which thread
//     runs it (a line with the word "thread").
// The checks read the files as text and as TypeScript syntax trees (the
// compiler's parser, no type checking). Runs in the main test process.

import assert from 'node:assert/strict';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

// This file runs as dist/test/tidy.test.js; the sources are at the repository root.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const FOLDERS = ['src', 'test', 'tools', 'bench'];
/** Generated code keeps the generator's line shapes. */
const GENERATED = ['src/layout/'];
const SOURCE = /\.(ts|tsx|mts|mjs|js)$/;
const MAX_LINE = 140;
const MAX_FUNCTION_LINES = 70;
const RATCHET_FILE = 'test/tidy_long_functions.txt';
const RNG_FILE = 'src/lib/rng.ts';

interface Source {
  /** Relative to the repository root, with forward slashes. */
  path: string;
  text: string;
}

function walk(rel: string, out: string[]): string[] {
  for (const e of readdirSync(join(ROOT, rel), { withFileTypes: true })) {
    const p = `${rel}/${e.name}`;
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'dist') walk(p, out);
    } else if (SOURCE.test(e.name) && !GENERATED.some((g) => p.startsWith(g))) {
      out.push(p);
    }
  }
  return out;
}

const sources: Source[] = FOLDERS.flatMap((f) => walk(f, [])).sort().map((path) => ({
  path,
  text: readFileSync(join(ROOT, path), 'utf8'),
}));

const trees = new Map<string, ts.SourceFile>();
function tree(s: Source): ts.SourceFile {
  let sf = trees.get(s.path);
  if (!sf) {
    const kind = s.path.endsWith('.tsx') ? ts.ScriptKind.TSX : /\.m?js$/.test(s.path) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
    sf = ts.createSourceFile(s.path, s.text, ts.ScriptTarget.Latest, true, kind);
    trees.set(s.path, sf);
  }
  return sf;
}

function lineOf(sf: ts.SourceFile, pos: number): number {
  return sf.getLineAndCharacterOfPosition(pos).line + 1;
}

function visitAll(node: ts.Node, f: (n: ts.Node) => void): void {
  f(node);
  ts.forEachChild(node, (c) => visitAll(c, f));
}

test('tidy: sources found', () => {
  assert.ok(sources.length > 100, `only ${sources.length} source files under ${FOLDERS.join(', ')}`);
  assert.ok(sources.some((s) => s.path === RNG_FILE));
});

test(`tidy: no line longer than ${MAX_LINE} characters`, () => {
  const long: string[] = [];
  for (const s of sources) {
    s.text.split('\n').forEach((line, i) => {
      if (line.length > MAX_LINE) long.push(`${s.path}:${i + 1}: ${line.length} characters`);
    });
  }
  assert.deepEqual(long, [], `lines over ${MAX_LINE} characters:\n${long.join('\n')}`);
});

type FunctionNode =
  | ts.FunctionDeclaration | ts.MethodDeclaration | ts.ArrowFunction | ts.FunctionExpression
  | ts.ConstructorDeclaration | ts.GetAccessorDeclaration | ts.SetAccessorDeclaration;

function isFunction(n: ts.Node): n is FunctionNode {
  return ts.isFunctionDeclaration(n) || ts.isMethodDeclaration(n) || ts.isArrowFunction(n) || ts.isFunctionExpression(n)
    || ts.isConstructorDeclaration(n) || ts.isGetAccessor(n) || ts.isSetAccessor(n);
}

/** The text of a string literal, or of literals joined with +; null for anything else. */
function literalText(n: ts.Node): string | null {
  if (ts.isStringLiteralLike(n)) return n.text;
  if (ts.isBinaryExpression(n) && n.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const l = literalText(n.left);
    const r = l === null ? null : literalText(n.right);
    return l === null || r === null ? null : l + r;
  }
  return null;
}

/** A name for a function that survives edits elsewhere in its file (no line numbers). */
function nameOf(n: ts.Node): string {
  const parts: string[] = [];
  for (let child: ts.Node = n, p: ts.Node | undefined = n; p && !ts.isSourceFile(p); child = p, p = p.parent) {
    if (ts.isConstructorDeclaration(p)) parts.push('constructor');
    else if ((isFunction(p) || ts.isClassLike(p)) && p.name) parts.push(p.name.getText());
    else if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && p.name) {
      parts.push(p.name.getText());
    } else if (ts.isCallExpression(p) && isFunction(child) && p.arguments.some((a) => a === child)) {
      // A callback: named by its callee and, for test('title', ...) and the like, the first string argument.
      const text = p.arguments[0] && literalText(p.arguments[0]);
      const title = text ? `(${JSON.stringify(text)})` : '';
      parts.push(`${p.expression.getText().replace(/\s+/g, '')}${title}`);
    }
  }
  return parts.reverse().join('.') || '(anonymous)';
}

/** Every function over the limit, keyed `path name` (a repeated name in one file gets #2, #3...). */
function longFunctions(): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of sources) {
    const sf = tree(s);
    const seen = new Map<string, number>();
    visitAll(sf, (n) => {
      if (!isFunction(n) || !n.body) return;
      const lines = lineOf(sf, n.end) - lineOf(sf, n.getStart(sf)) + 1;
      const base = `${s.path} ${nameOf(n)}`;
      const k = (seen.get(base) ?? 0) + 1;
      seen.set(base, k);
      if (lines > MAX_FUNCTION_LINES) out.set(k === 1 ? base : `${base}#${k}`, lines);
    });
  }
  return out;
}

/** The committed ratchet: lines `<lines> <path> <name>`, # comments. */
function ratchet(): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of readFileSync(join(ROOT, RATCHET_FILE), 'utf8').split('\n')) {
    if (line.trim() === '' || line.startsWith('#')) continue;
    const m = /^(\d+) (\S+ .+)$/.exec(line);
    assert.ok(m, `${RATCHET_FILE}: unreadable line ${JSON.stringify(line)}`);
    out.set(m[2]!, Number(m[1]));
  }
  return out;
}

/**
 * `TIDY_RATCHET=write node --test dist/test/tidy.test.js` rewrites the list
 * from today's functions: for the commit that shortens or removes one (the
 * diff of the list then shows only deletions and smaller numbers).
 */
function writeRatchet(now: Map<string, number>): void {
  const lines = [...now].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `${n} ${k}`);
  const head = [
    `# The function-length ratchet of test/tidy.test.ts: every function over ${MAX_FUNCTION_LINES} lines, as "<lines> <path> <name>".`,
    '# No new entries and no larger numbers: split a long function instead. Entries only go.',
  ];
  writeFileSync(join(ROOT, RATCHET_FILE), `${[...head, ...lines].join('\n')}\n`);
}

test(`tidy: function-length ratchet (over ${MAX_FUNCTION_LINES} lines only as listed in ${RATCHET_FILE})`, () => {
  const now = longFunctions();
  if (process.env.TIDY_RATCHET === 'write') writeRatchet(now);
  const listed = ratchet();
  const problems: string[] = [];
  for (const [key, lines] of now) {
    const allowed = listed.get(key);
    if (allowed === undefined) problems.push(`new long function (${lines} lines; split it): ${key}`);
    else if (lines > allowed) problems.push(`longer than listed (${lines} > ${allowed} lines; shorten it): ${key}`);
  }
  for (const [key, lines] of listed) {
    if (!now.has(key)) problems.push(`gone or now at most ${MAX_FUNCTION_LINES} lines (remove the entry): ${lines} ${key}`);
  }
  const today = [...now].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([k, n]) => `${n} ${k}`).join('\n');
  assert.deepEqual(problems, [], `${problems.join('\n')}\n\ntoday's long functions:\n${today}`);
});

test('tidy: no catch swallows every error (a catch binds its error and reads it)', () => {
  const bad: string[] = [];
  for (const s of sources) {
    const sf = tree(s);
    visitAll(sf, (n) => {
      if (!ts.isCatchClause(n)) return;
      const at = `${s.path}:${lineOf(sf, n.getStart(sf))}`;
      const v = n.variableDeclaration;
      if (!v) {
        bad.push(`${at}: catch without a binding takes every error alike`);
        return;
      }
      let read = false;
      visitAll(n.block, (c) => {
        if (ts.isIdentifier(c) && c.text === v.name.getText(sf)) read = true;
      });
      if (!read) bad.push(`${at}: catch (${v.name.getText(sf)}) never reads what it caught`);
    });
  }
  assert.deepEqual(bad, [], `name what the catch expects, or rethrow:\n${bad.join('\n')}`);
});

/** True when a comment of `sf` lies inside the handler, on the line of `.catch(` or in the comment lines right above it. */
function catchExplained(sf: ts.SourceFile, call: ts.CallExpression, handler: ts.Node): boolean {
  const text = sf.text;
  if (/\/\/|\/\*/.test(text.slice(handler.getStart(sf), handler.getEnd()))) return true;
  const lines = text.split('\n');
  const at = lineOf(sf, call.expression.getEnd()) - 1;
  if (/\/\/|\/\*/.test(lines[at]!)) return true;
  const above = lines[at - 1]?.trim() ?? '';
  return above.startsWith('//') || above.endsWith('*/');
}

test('tidy: no promise catch discards its error without saying why (.catch(() => ...))', () => {
  const bad: string[] = [];
  for (const s of sources) {
    const sf = tree(s);
    visitAll(sf, (n) => {
      if (!ts.isCallExpression(n) || !ts.isPropertyAccessExpression(n.expression) || n.expression.name.text !== 'catch') return;
      const handler = n.arguments[0];
      if (handler === undefined || !(ts.isArrowFunction(handler) || ts.isFunctionExpression(handler))) return;
      const p = handler.parameters[0];
      let read = false;
      if (p !== undefined && ts.isIdentifier(p.name)) {
        const name = p.name.text;
        visitAll(handler.body, (c) => {
          if (ts.isIdentifier(c) && c.text === name) read = true;
        });
      }
      if (read || catchExplained(sf, n, handler)) return;
      bad.push(`${s.path}:${lineOf(sf, n.expression.name.getStart(sf))}: ${n.getText(sf).split('\n')[0]!.trim().slice(0, 100)}`);
    });
  }
  const how = 'name what the catch expects (and log or rethrow the rest), or say in a comment why any failure there is harmless';
  assert.deepEqual(bad, [], `${how}:\n${bad.join('\n')}`);
});

/**
 * The marks of a generator written out: its name declared, mulberry32's
 * constant, a xorshift step (`x ^= x << n`; a hash's finalizer mixes with
 * right shifts only, as src/lib/u32x3_map.ts does, and is not a generator).
 */
const PRNG_MARKS: readonly RegExp[] = [
  /\b(function|class|const|let)\s+(mulberry32|xorshift\w*|xoshiro\w*|sfc32|splitmix\w*)\b/i,
  /0x6d2b79f5/i,
  /(\w+)\s*\^=\s*\1\s*<<\s*\d+/,
];

test(`tidy: one seeded generator (${RNG_FILE})`, () => {
  const copies: string[] = [];
  for (const s of sources) {
    if (s.path === RNG_FILE || s.path === 'test/tidy.test.ts') continue;
    s.text.split('\n').forEach((line, i) => {
      if (PRNG_MARKS.some((r) => r.test(line))) copies.push(`${s.path}:${i + 1}: ${line.trim()}`);
    });
  }
  assert.deepEqual(copies, [], `use ${RNG_FILE} (Rng, mulberry32) instead of a copy:\n${copies.join('\n')}`);
});

test('tidy: every src/ file opens with a header that says which thread runs it', () => {
  const missing: string[] = [];
  for (const s of sources) {
    if (!s.path.startsWith('src/')) continue;
    // The leading comments of the file (after a #! line).
    const header = (ts.getLeadingCommentRanges(s.text, s.text.startsWith('#!') ? s.text.indexOf('\n') + 1 : 0) ?? [])
      .map((r) => s.text.slice(r.pos, r.end))
      .join('\n');
    if (header === '') missing.push(`${s.path}: no header comment`);
    else if (!/\bthreads?\b/i.test(header)) missing.push(`${s.path}: the header names no thread`);
  }
  assert.deepEqual(missing, [], missing.join('\n'));
});
