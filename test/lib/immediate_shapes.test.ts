// keepImmediateShapes: with one Immediate kept, a major GC between bursts of
// setImmediate deoptimizes nothing; without it, the same program has its
// immediate code marked for deoptimization ("weak objects"), which is what the
// keep is for. Each case is a child process with --trace-deopt.
// Test process, main thread.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

const MODULE = new URL('../../src/lib/immediate_shapes.js', import.meta.url).href;

/** Bursts of setImmediate from an optimized function, each followed by a full GC with no Immediate alive. */
function program(keep: boolean): string {
  return `
    import { keepImmediateShapes } from ${JSON.stringify(MODULE)};
    if (${keep}) keepImmediateShapes();
    let ran = 0;
    function noop() { ran++; }
    function schedule() { setImmediate(noop); }
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 20000; i++) {
        schedule();
        if (i % 100 === 99) await new Promise((r) => setImmediate(r));
      }
      await new Promise((r) => setTimeout(r, 5));
      gc();
    }
    console.log('ran', ran);`;
}

/** The functions --trace-deopt marked for deoptimization because an object their code held weakly died. */
function weakObjectDeopts(keep: boolean): string[] {
  const r = spawnSync(process.execPath, ['--expose-gc', '--trace-deopt', '--input-type=module', '-e', program(keep)], {
    encoding: 'utf8', timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /ran 100000/);
  const out: string[] = [];
  for (const m of r.stdout.matchAll(/marking dependent code .*?<SharedFunctionInfo ([^>]*)>.*reason: weak objects/g)) out.push(m[1]!);
  return out;
}

test('immediate_shapes: without the kept Immediate a GC deoptimizes the immediate path; with it, nothing', () => {
  const without = weakObjectDeopts(false);
  const expected = without.includes('schedule') && without.includes('processImmediate');
  assert.ok(expected, `expected deopts without the keep: ${without.join(', ')}`);
  assert.deepEqual(weakObjectDeopts(true), []);
});
