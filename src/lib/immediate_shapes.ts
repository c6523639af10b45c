// immediate_shapes: keeps one Immediate alive for the life of the thread, so
// that V8 keeps the hidden classes of Node's Immediate objects and the code
// optimized for them.
//
// Optimized code holds the maps (hidden classes) it was specialized for
// weakly, and a map reached by adding properties to an object is held by its
// parent's transition tree weakly too. An Immediate (setImmediate) gains its
// async ids after construction, so the map it ends in lives only while some
// Immediate does. A thread that uses setImmediate in bursts has none alive
// between them, and every major GC there frees those maps and deoptimizes
// each function that inlined setImmediate or ran immediates: `--trace-deopt`
// shows "marking dependent code ... reason: weak objects" for processImmediate,
// setImmediate, Immediate, and on a gateway its request path (handler, drain,
// submit, hold, the wait strategy's poll) at every major GC. The functions run
// unoptimized until V8 tiers them up again, and each round leaves new code
// objects behind (the soak's slow rise of every thread's code space, issue 19).
// One Immediate that has run and is kept has the same map, so none is freed.

let kept: NodeJS.Immediate | null = null;

/** Once per thread (later calls do nothing): before a thread's first burst of setImmediate. */
export function keepImmediateShapes(): void {
  if (kept !== null) return;
  kept = setImmediate(noop);
}

function noop(): void {}
