// assert: guards our own bugs. A failed assertion is a crash, never a client
// error; recovery is restart + replay. Runs on every thread.

export class AssertionError extends Error {
  override name = 'AssertionError';
}

export function assert(cond: unknown, message = 'assertion failed'): asserts cond {
  if (!cond) throw new AssertionError(message);
}
