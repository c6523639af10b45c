// sign: request signatures in the browser with WebCrypto, exactly as
// src/client/sign.ts makes them with node:crypto: base64 (standard, padded)
// of HMAC-SHA256 keyed with the 32 secret bytes over
// `${ts}\n${METHOD}\n${path?query}\n${body}`, ts in Unix milliseconds. The
// WebSocket sign-in signs `${ts}\nGET\n/v1/ws\n` and sends the three values
// in the query. Browser main thread (and Node 20, whose globals have the same
// WebCrypto, atob and btoa: a test checks both signers agree). The secret
// never leaves the page: only signatures do.

export const SECRET_BYTES = 32;

/** A WebCrypto HMAC key (typed without the DOM lib so Node's types accept it too). */
export type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;

/** The 32 bytes of a base64 secret; throws a RangeError naming the problem. */
export function decodeSecret(base64: string): Uint8Array<ArrayBuffer> {
  const text = base64.trim();
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text)) throw new RangeError('the secret is base64 text (A-Z, a-z, 0-9, +, /, =)');
  let bin: string;
  try {
    bin = atob(text);
  } catch (e) {
    throw new RangeError(`the secret is not valid base64 (${(e as Error).message})`);
  }
  if (bin.length !== SECRET_BYTES)
    throw new RangeError(`a secret is ${SECRET_BYTES} bytes (44 base64 characters); this one is ${bin.length}`);
  const out = new Uint8Array(SECRET_BYTES);
  for (let i = 0; i < SECRET_BYTES; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Imports the secret as a non-extractable HMAC-SHA256 signing key. */
export function importSecret(secret: Uint8Array<ArrayBuffer>): Promise<HmacKey> {
  return crypto.subtle.importKey('raw', secret, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
}

export function canonicalString(tsMs: string, method: string, target: string, body: string): string {
  return `${tsMs}\n${method.toUpperCase()}\n${target}\n${body}`;
}

export async function signRequest(key: HmacKey, tsMs: string, method: string, target: string, body: string): Promise<string> {
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, new TextEncoder().encode(canonicalString(tsMs, method, target, body))));
  let bin = '';
  for (let i = 0; i < mac.length; i++) bin += String.fromCharCode(mac[i]!);
  return btoa(bin);
}

/**
 * Request timestamps that never repeat: the exchange refuses a mutation (and
 * a query sign-in) whose exact signature it has seen, and two identical
 * requests signed in one millisecond would sign identically.
 */
export class Clock {
  private last = 0;
  constructor(private readonly now: () => number = Date.now) {}
  next(): string {
    const t = Math.max(Math.floor(this.now()), this.last + 1);
    this.last = t;
    return String(t);
  }
}

/** The query of a browser WebSocket sign-in: `key=&ts=&sig=` over `${ts}\nGET\n/v1/ws\n`. */
export async function wsSignInQuery(keyId: number, key: HmacKey, ts: string): Promise<string> {
  const sig = await signRequest(key, ts, 'GET', '/v1/ws', '');
  return `key=${keyId}&ts=${ts}&sig=${encodeURIComponent(sig)}`;
}
