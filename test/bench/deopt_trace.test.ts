// The deopt check's reading of `node --trace-deopt` output, on canned lines:
// sections split at the pass markers, bailouts counted whatever the function,
// code marked for deoptimization counted only for engine functions, and
// rows grouped by kind, function and reason.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDeoptTrace, tallyDeopts } from '../support/bench/deopt_trace.js';

const ENGINE = new Set(['placeOrder', 'execute', 'get length']);
const isEngine = (fn: string): boolean => ENGINE.has(fn);

const TRACE = [
  '[bailout (kind: deopt-eager, reason: Insufficient type feedback for call): begin. deoptimizing 0x24c9d35e0f19 <JSFunction (sfi = ' +
    '0x244117e6b161)>, 0x24c9d35e1b89 <Code TURBOFAN>, opt id 1, bytecode offset 95, deopt exit 4, FP to SP delta 120, caller SP ' +
    '0x7ffdd8f530a0, pc 0x7fb834007b52]',
  '[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x2b0ef00035c1 <JSFunction placeOrder (sfi = 0x244117e6b2c9)>, ' +
    '0x24c9d35e17b1 <Code TURBOFAN>, opt id 0, bytecode offset 0, deopt exit 1, FP to SP delta 32, caller SP 0x7ffdd8f53020, pc ' +
    '0x7fb83400792a]',
  '[marking dependent code 0x1f135f9e5df9 <Code TURBOFAN> (0x0aa0cf825791 <SharedFunctionInfo place>) (opt id 20) for deoptimization, ' +
    'reason: weak objects]',
  '[deoptimize marked code in all contexts]',
  'some output of the program',
  '',
  '=== steady pass 1',
  '[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x2b0ef00035c1 <JSFunction placeOrder (sfi = 0x244117e6b2c9)>, ' +
    '0x24c9d35e17b1 <Code TURBOFAN>, opt id 3, bytecode offset 0, deopt exit 1, FP to SP delta 32, caller SP 0x7ffdd8f53020, pc ' +
    '0x7fb83400792a]',
  '[bailout (kind: deopt-lazy, reason: (unknown)): begin. deoptimizing 0x2b0ef00035c1 <JSFunction oursSpan (sfi = 0x244117e6b2d9)>, ' +
    '0x24c9d35e17b1 <Code TURBOFAN>, opt id 4, bytecode offset 12, deopt exit 2, FP to SP delta 32, caller SP 0x7ffdd8f53020, pc ' +
    '0x7fb83400792a]',
  '',
  '=== steady pass 2',
  '[marking dependent code 0x3983cf5a6351 <Code TURBOFAN> (0x0aa0cf825881 <SharedFunctionInfo placeOnLadder>) (opt id 72) for ' +
    'deoptimization, reason: weak objects]',
  '[marking dependent code 0x3983cf5a6351 <Code TURBOFAN> (0x0aa0cf825881 <SharedFunctionInfo execute>) (opt id 73) for deoptimization, ' +
    'reason: code dependencies]',
  '[bailout (kind: deopt-soft, reason: Insufficient type feedback for generic named access): begin. deoptimizing 0x2b0ef00035c1 ' +
    '<JSFunction get length (sfi = 0x244117e6b2e9)>, 0x24c9d35e17b1 <Code TURBOFAN>, opt id 5, bytecode offset 3, deopt exit 0, FP to SP ' +
    'delta 32, caller SP 0x7ffdd8f53020, pc 0x7fb83400792a]',
  '[bailout (kind: deopt-eager, reason: wrong map): begin. deoptimizing 0x2b0ef00035c1 <JSFunction placeOrder (sfi = 0x244117e6b2c9)>, ' +
    '0x24c9d35e17b1 <Code TURBOFAN>, opt id 6, bytecode offset 0, deopt exit 1, FP to SP delta 32, caller SP 0x7ffdd8f53020, pc ' +
    '0x7fb83400792a]',
].join('\n');

test('deopt trace: split at the pass markers; bailouts of any function count, marked code only for engine functions', () => {
  const sections = parseDeoptTrace(TRACE, isEngine);
  assert.deepEqual(sections.map((s) => s.marker), ['', '=== steady pass 1', '=== steady pass 2']);
  const [warm, pass1, pass2] = sections;
  assert.deepEqual(warm!.events, [
    { kind: 'deopt-eager', fn: '(anonymous)', reason: 'Insufficient type feedback for call', engine: false, counted: true },
    { kind: 'deopt-eager', fn: 'placeOrder', reason: 'wrong map', engine: true, counted: true },
    { kind: 'marked', fn: 'place', reason: 'weak objects', engine: false, counted: false },
  ]);
  assert.deepEqual(pass1!.events.map((e) => [e.kind, e.fn, e.reason, e.engine, e.counted]), [
    ['deopt-eager', 'placeOrder', 'wrong map', true, true],
    ['deopt-lazy', 'oursSpan', '(unknown)', false, true],
  ]);
  assert.deepEqual(pass2!.events.map((e) => [e.kind, e.fn, e.engine, e.counted]), [
    ['marked', 'placeOnLadder', false, false],
    ['marked', 'execute', true, true],
    ['deopt-soft', 'get length', true, true],
    ['deopt-eager', 'placeOrder', true, true],
  ]);
});

test('deopt trace: rows grouped by kind, function and reason, most frequent first', () => {
  const steady = parseDeoptTrace(TRACE, isEngine).slice(1).flatMap((s) => s.events);
  const rows = tallyDeopts(steady.filter((e) => e.counted));
  assert.deepEqual(rows[0], { kind: 'deopt-eager', fn: 'placeOrder', reason: 'wrong map', engine: true, count: 2 });
  assert.equal(rows.length, 4);
  assert.equal(rows.reduce((n, r) => n + r.count, 0), 5);
  assert.deepEqual(tallyDeopts(steady.filter((e) => !e.counted)).map((r) => [r.fn, r.count]), [['placeOnLadder', 1]]);
});
