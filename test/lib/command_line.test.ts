// The one command-line parser (src/lib/command_line.ts) on hand-made
// argument lists: value forms, values that start with a dash, undeclared
// short options as arguments, repeatable options, the `--` terminator, and
// every mistake as an ArgumentError naming the argument.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ArgumentError, parseCommandLine, UsageError } from '../../src/lib/command_line.js';

const OPTIONS = {
  url: { type: 'string' }, key: { type: 'string', multiple: true }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

function problem(f: () => unknown): { problem: string; arg: string; option: string; message: string } {
  try {
    f();
  } catch (e) {
    assert.ok(e instanceof ArgumentError && e instanceof UsageError, String(e));
    return { problem: e.problem, arg: e.arg, option: e.option, message: e.message };
  }
  assert.fail('no ArgumentError');
}

test('command line: --name value, --name=value and booleans mix with positionals in any order; the last value counts', () => {
  const r = parseCommandLine(['a', '--url', 'u1', '--json', 'b', '--url=u2', '-h'], OPTIONS);
  assert.deepEqual(r.values, { url: 'u2', json: true, help: true });
  assert.deepEqual(r.positionals, ['a', 'b']);
  assert.equal(r.unknown.size, 0);
});

test('command line: a value may start with a dash, and an undeclared -x is an argument', () => {
  assert.deepEqual(parseCommandLine(['--url', '--json'], OPTIONS).values, { url: '--json' });
  assert.deepEqual(parseCommandLine(['--url', '-5'], OPTIONS).values, { url: '-5' });
  assert.deepEqual(parseCommandLine(['-5', 'x', '-abc', '-'], OPTIONS).positionals, ['-5', 'x', '-abc', '-']);
  assert.deepEqual(parseCommandLine(['--url='], OPTIONS).values, { url: '' });
});

test('command line: repeatable options keep every value in order; -- ends the options', () => {
  const r = parseCommandLine(['--key', '1:a', '--key=2:b', '--', '--json', '-h'], OPTIONS);
  assert.deepEqual(r.values, { key: ['1:a', '2:b'] });
  assert.deepEqual(r.positionals, ['--json', '-h']);
});

test('command line: unknown options, missing and unexpected values, and unwanted arguments are ArgumentErrors', () => {
  assert.deepEqual(
    problem(() => parseCommandLine(['--bogus', '1'], OPTIONS)),
    { problem: 'unknown_option', arg: '--bogus', option: '--bogus', message: 'unknown option --bogus' },
  );
  assert.deepEqual(
    problem(() => parseCommandLine(['--bogus=1'], OPTIONS)),
    { problem: 'unknown_option', arg: '--bogus=1', option: '--bogus', message: 'unknown option --bogus' },
  );
  assert.deepEqual(
    problem(() => parseCommandLine(['x', '--url'], OPTIONS)),
    { problem: 'missing_value', arg: '--url', option: '--url', message: '--url needs a value' },
  );
  assert.deepEqual(
    problem(() => parseCommandLine(['--json=1'], OPTIONS)),
    { problem: 'unexpected_value', arg: '--json=1', option: '--json', message: '--json takes no value' },
  );
  assert.deepEqual(
    problem(() => parseCommandLine(['--json', 'x'], OPTIONS, { positionals: false })),
    { problem: 'unexpected_argument', arg: 'x', option: 'x', message: 'unexpected argument "x"' },
  );
});

test('command line: with unknown: keep, an undeclared --name is kept with its inline value or true', () => {
  const r = parseCommandLine(['--frob', '1', '--zap=2', '--json'], OPTIONS, { unknown: 'keep' });
  assert.deepEqual(r.values, { json: true });
  assert.deepEqual([...r.unknown], [['frob', true], ['zap', '2']]);
  assert.deepEqual(r.positionals, ['1']);
});

const DASH_OPTIONS = {
  url: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' },
} as const;

test('command line: an undeclared -x argument holding another dash stays one argument and ends nothing', () => {
  let r = parseCommandLine(['-1e-5', '--json'], DASH_OPTIONS);
  assert.deepEqual(r.positionals, ['-1e-5']);
  assert.deepEqual(r.values, { json: true });
  r = parseCommandLine(['withdraw', '1', '100', '-my-wallet', '--url', 'u'], DASH_OPTIONS);
  assert.deepEqual(r.positionals, ['withdraw', '1', '100', '-my-wallet']);
  assert.deepEqual(r.values, { url: 'u' });
  // Its first letter declares no option: the letters after it are not options either.
  r = parseCommandLine(['-5h'], DASH_OPTIONS);
  assert.deepEqual(r.positionals, ['-5h']);
  assert.deepEqual(r.values, {});
  // Nor does a declared letter first make it that option: only exactly `-h` is.
  r = parseCommandLine(['-hsbc-1', 'x', '-h'], DASH_OPTIONS);
  assert.deepEqual(r.positionals, ['-hsbc-1', 'x']);
  assert.deepEqual(r.values, { help: true });
  // As a value it is unchanged.
  assert.deepEqual(parseCommandLine(['--url', '-1e-5'], DASH_OPTIONS).values, { url: '-1e-5' });
});
