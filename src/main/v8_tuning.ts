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
// --max-inlined-bytecode-size-absolute (default 4600) is a second cap on
// the same total, which is why 6000 above gained nothing: with both raised
// (cumulative 6000, absolute 10000) tools/engine_ab on one pinned core
// (2026-11-27, 5 rounds of 7 runs, beside a soak using the other core) gave
// +4-7% commands per CPU second over 4000 alone in five invocations (+0-1.5%
// in two of 3 rounds; an A/A run moves by 2-4%); 8000/10000 and 12000/20000
// gave +4-6%, --stress-inline 10x slower, --min-inlining-frequency=0.01 +1%.

import { setFlagsFromString } from 'node:v8';

export const V8_FLAGS = ['--max-inlined-bytecode-size-cumulative=6000', '--max-inlined-bytecode-size-absolute=10000'] as const;

for (const f of V8_FLAGS) setFlagsFromString(f);
