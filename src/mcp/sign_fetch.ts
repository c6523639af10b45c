// sign_fetch: a `fetch` that signs every request it sends with a dx key, for
// MCP clients of POST /v1/mcp (the official SDK's StreamableHTTPClientTransport
// takes it as its `fetch` option) and for the stdio forwarder. The signature
// covers the exact request target and body sent (src/client/sign.ts).
// Mutation timestamps are strictly increasing per signer: every POST to
// /v1/mcp is a mutation, and the exchange refuses a signature it has
// already seen, so two identical messages in one millisecond (two pings with
// the same id, say) must not sign alike. Runs in the caller's thread.

import { createSecretKey } from 'node:crypto';
import { authHeaders, decodeSecret, nextMutationTs } from '../client/sign.js';

export interface SigningFetchOptions {
  /** The key id (a small integer, as a number or its decimal text). */
  keyId: number | string;
  /** base64 of the 32 secret bytes (as handed out), or the bytes. */
  secret: string | Uint8Array;
  /** The fetch that sends; default global fetch. */
  fetch?: typeof fetch;
  /** Clock for DX-ACCESS-TIMESTAMP (Unix ms). */
  now?: () => number;
}

export function parseKeyId(keyId: number | string): number {
  const text = String(keyId);
  if (!/^[0-9]{1,10}$/.test(text) || Number(text) < 1) throw new RangeError(`a key id is a positive integer; got ${JSON.stringify(keyId)}`);
  return Number(text);
}

export function signingFetch(o: SigningFetchOptions): typeof fetch {
  const keyId = parseKeyId(o.keyId);
  const key = createSecretKey(decodeSecret(o.secret));
  const base = o.fetch ?? globalThis.fetch;
  const now = o.now ?? Date.now;
  let lastMutationTs = 0;
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    if (input instanceof Request)
      throw new TypeError('signingFetch: pass a URL and an init, not a Request (its body cannot be signed before it is sent)');
    const url = new URL(input);
    const method = (init?.method ?? 'GET').toUpperCase();
    const body = init?.body;
    if (body !== undefined && body !== null && typeof body !== 'string')
      throw new TypeError('signingFetch: only string bodies can be signed');
    let ts = Math.floor(now());
    if (method !== 'GET') {
      ts = nextMutationTs(ts, lastMutationTs);
      lastMutationTs = ts;
    }
    const headers = new Headers(init?.headers);
    const auth = authHeaders(keyId, key, method, url.pathname + url.search, body ?? '', ts);
    for (const [k, v] of Object.entries(auth)) headers.set(k, v);
    return base(url, { ...init, method, headers });
  };
}
