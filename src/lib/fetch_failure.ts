// fetch_failure: what a failed fetch (Node's undici) says about its request.
// A failure before the request was written (refused, no such host, no route,
// a connect timeout) means nothing reached the server; any other (a timeout
// while waiting for the answer, a connection lost after the request was
// written) leaves the request's outcome unknown: a placement may be held and
// sequenced later. Used by the clients that tell people and agents which it
// was (dx, dx mcp). Any thread.

/** undici's cause codes for a request that was never written. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

export interface FetchFailure {
  /** Why, in a few words: the cause's message or code, or `timeout` for an AbortSignal.timeout that fired. */
  cause: string;
  /** The cause's code ('' when none). */
  code: string;
  /** True when the request may have reached the server (its outcome is unknown); false when it was never written. */
  sent: boolean;
}

/** A network failure of fetch, or null for any other error. */
export function fetchFailure(e: unknown): FetchFailure | null {
  if (!(e instanceof Error)) return null;
  if (e.name === 'TimeoutError') return { cause: 'timeout', code: '', sent: true };
  if (!(e instanceof TypeError && e.message === 'fetch failed')) return null;
  const c = (e as { cause?: { code?: string; message?: string } }).cause;
  const code = c?.code ?? '';
  // undici refuses a port of the fetch standard's block list (6000, 6665..6669, ...) before it connects: nothing was sent.
  const blocked = code === '' && c?.message === 'bad port';
  return { cause: c?.message ?? (code || 'fetch failed'), code, sent: !blocked && !NOT_SENT.has(code) };
}
