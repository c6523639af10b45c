// fetch_failure: what a failed fetch (Node's undici) says about its request.
// A failure before the request was written (refused, no such host, no route,
// a connect timeout, a TLS handshake that failed) means nothing reached the
// server; any other (a timeout while waiting for the answer, a connection lost
// after the request was written) leaves the request's outcome unknown: a placement may be held and
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

/** The peer does not speak TLS (an https:// URL for a plain-HTTP port): the handshake failed, so nothing was written. */
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);
/** The server's certificate was refused: checked in the handshake, before the request is written. */
const CERT_REFUSED =
  /^(ERR_TLS_CERT_ALTNAME_INVALID|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_[A-Z_]+|CERT_[A-Z_]+)$/;

/** Node's words (_tls_wrap.js) when the server closes the connection in the handshake, as uWS does on a plain port. */
const CLOSED_IN_HANDSHAKE = 'Client network socket disconnected before secure TLS connection was established';

/** A TLS handshake that failed, as a sentence (null for any other cause). */
function handshakeFailure(code: string, message: string | undefined): string | null {
  if (NOT_TLS.has(code) || (code === 'ECONNRESET' && message === CLOSED_IN_HANDSHAKE)) {
    return 'the TLS handshake failed: the port does not speak TLS (an https:// URL for a plain-HTTP port?)';
  }
  if (CERT_REFUSED.test(code)) return `the TLS handshake failed: the server's certificate was refused (${code})`;
  return null;
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
  const tls = handshakeFailure(code, c?.message);
  if (tls !== null) return { cause: tls, code, sent: false };
  return { cause: c?.message ?? (code || 'fetch failed'), code, sent: !blocked && !NOT_SENT.has(code) };
}
