// V8 tuning for the matching worker. Flags are process-wide, so importing
// this module anywhere sets them for every thread; the engine thread imports
// it first, and the engine benchmark and profiler import it too, so they
// measure the engine as it runs in the exchange.
//
// --max-inlined-bytecode-size-cumulative: TurboFan stops inlining into a
// function once the inlined bytecode adds up to this (default 920). The
// placement path (Engine.placeOrder: validation, the accepted/filled/rested/
// completed records written field by field through small accessors) runs out
// of that budget half-way, leaving dozens of one-line accessors as real
// calls. Measured with bench/engine_match's stream on one pinned core
// (2026-11-21, alternating processes): ~1.40 M -> ~1.59 M commands/s at 2000;
// 4000 was no better within the noise then. Since the engine was split into
// one module per command family (issue 14) its call tree is deeper, and 2000
// runs out again: tools/engine_ab on one pinned core (2026-11-25, 8 rounds
// of 5 runs) gave +12.6% commands per CPU second at 4000 (3000: +11%,
// 6000: +0%, 4000 with --max-inlined-bytecode-size=1000: +0%).

import { setFlagsFromString } from 'node:v8';

export const V8_FLAGS = ['--max-inlined-bytecode-size-cumulative=4000'] as const;

for (const f of V8_FLAGS) setFlagsFromString(f);
