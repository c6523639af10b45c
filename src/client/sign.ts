// Request signing for every signed lane (REST, keys service, WebSocket
// handshake, MCP). Runs in whichever thread sends the request: the client
// library's caller, or a load generator worker.
//
// Canonical string (spec, Authentication): `${ts}\n${METHOD}\n${path?query}\n${body}`
// where ts is Unix milliseconds in decimal, the path is the raw request target
// exactly as it goes on the wire (docs/rest.md), and body is the exact body text
// sent ("" when there is none). The HMAC key is the 32 decoded secret bytes;
// the signature is standard base64 with padding.

import { createHmac, type KeyObject } from 'node:crypto';

export const SECRET_BYTES = 32;

export const HEADER_KEY = 'DX-ACCESS-KEY';
export const HEADER_TIMESTAMP = 'DX-ACCESS-TIMESTAMP';
export const HEADER_SIGNATURE = 'DX-ACCESS-SIGNATURE';

/** The three authentication headers of a signed request. */
export interface AuthHeaders {
  'DX-ACCESS-KEY': string;
  'DX-ACCESS-TIMESTAMP': string;
  'DX-ACCESS-SIGNATURE': string;
}

/**
 * Accepts the secret as raw bytes or as the base64 text the keys service
 * and the control plane hand out, and returns the 32 bytes. A secret of any
 * other length is a caller bug (a truncated copy-paste), so it throws rather
 * than producing signatures the server will refuse as 401.
 */
export function decodeSecret(secret: Uint8Array | string): Uint8Array {
  const bytes = typeof secret === 'string' ? Buffer.from(secret, 'base64') : secret;
  if (bytes.length !== SECRET_BYTES) {
    throw new RangeError(`a key secret is ${SECRET_BYTES} bytes (base64 of 32 bytes); got ${bytes.length}`);
  }
  return bytes;
}

/** The canonical string that is signed. The method is upper-cased, as it is sent. */
export function canonicalString(tsMs: string, method: string, pathWithQuery: string, body: string): string {
  return `${tsMs}\n${method.toUpperCase()}\n${pathWithQuery}\n${body}`;
}

/**
 * base64 (standard, padded) of HMAC-SHA256 keyed with the secret bytes over
 * the canonical string. `secret` may also be a KeyObject made once from the
 * bytes (the load generator does this to skip re-importing the key).
 */
export function signRequest(
  secret: Uint8Array | KeyObject,
  tsMs: string,
  method: string,
  pathWithQuery: string,
  body: string,
): string {
  return createHmac('sha256', secret).update(canonicalString(tsMs, method, pathWithQuery, body), 'utf8').digest('base64');
}

/**
 * How far ahead of the clock a mutation's timestamp may be pushed to keep a
 * client's mutation timestamps strictly increasing: well inside the server's
 * +5 s window. Behind by more than this the clock stepped back (NTP, an
 * operator): the stamp follows the clock again, or every mutation would be
 * refused 401 (timestamp outside the window) for as long as the step.
 */
export const MUTATION_TS_LEAD_MS = 1000;

/**
 * The timestamp of a client's next mutation at nowMs after one stamped
 * lastMs: strictly increasing (two identical mutations in one millisecond
 * must not sign identically, or the second is refused as a replay), unless
 * the clock stepped back by more than MUTATION_TS_LEAD_MS.
 */
export function nextMutationTs(nowMs: number, lastMs: number): number {
  const ts = Math.floor(nowMs);
  return ts <= lastMs && lastMs - ts < MUTATION_TS_LEAD_MS ? lastMs + 1 : ts;
}

/** The three headers for one request; `nowMs` is the request time in Unix milliseconds. */
export function authHeaders(
  keyId: number,
  secret: Uint8Array | KeyObject,
  method: string,
  pathWithQuery: string,
  body: string,
  nowMs: number = Date.now(),
): AuthHeaders {
  const ts = String(Math.floor(nowMs));
  return {
    [HEADER_KEY]: String(keyId),
    [HEADER_TIMESTAMP]: ts,
    [HEADER_SIGNATURE]: signRequest(secret, ts, method, pathWithQuery, body),
  } as AuthHeaders;
}
