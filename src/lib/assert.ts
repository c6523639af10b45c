// assert: guards our own bugs. A failed assertion is a crash, never a client
// error; recovery is restart + replay. Runs on every thread. Cheap
// assertions are always on; costly ones (walks and recomputations) run only
// while `checks.costly` is set: the verify switch (DX_VERIFY) of the engine
// thread, and the differential test.

export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(cond: unknown, message = 'assertion failed'): asserts cond {
  if (!cond) throw new AssertionError(message);
}

/**
 * The failing half of an assertion, for the hot paths: `if (!cond) fail(...)`
 * keeps the check inline and the throw out of line (an untaken branch costs
 * TurboFan no inlining budget; a call to assert() does).
 */
export function fail(message: string): never {
  throw new AssertionError(message);
}

/** Switches for the costly self-checks (per thread). */
export const checks = { costly: false };
