// Review repro: the proposal must come from the oracle as it was at the
// round's close (DESIGN §2; src/engine/README.md "ClockTick": "no oracle tick
// stamped after a close reaches the round's proposal, whether or not the
// clock's timer has fired yet"). When the first tick after close_ts comes
// after a source that was fresh at close went stale, the round waits and a
// post-close tick decides the outcome: the money goes to the wrong side.
import { test } from 'node:test';
import { scenario } from './scenario.js';

test('close price: a source fresh at close_ts decides the round even when the first tick after the close finds it stale', () => {
  scenario(`
    market close=5000 strike=100
    account a1 10000
    account a2 10000
    oracle 1 150                         # fresh until +10000; the round closes at +5000 with the reference at 150 >= strike
    a1 buy yes 60 x10 -> resting
    a2 buy no 40 x10 -> filled fills=60x10/mint
    wait +12000                          # the clock's timer has not fired yet (the README's own case)
    oracle 1 50 -> ok                    # stamped 7 s after the close: time first freezes the round before it
    tick +1
    check market 1 round_status=proposed outcome=yes
    tick +60000
    check a1 available=10400
    check a2 available=9600
  `, { oracle_quorum: 1, oracle_staleness_ms: 10_000, dispute_window_ms: 60_000 });
});
