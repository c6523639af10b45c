// HttpTransport: one JSON-over-HTTP call to a dx listener, shared by the
// REST client, the accounts client and the admin client. Runs in the
// caller's thread.
//
// Invariants:
// - The request target (path?query) is built once from the URL the request is
//   sent to, and that same string is what the auth function signs, so the
//   signature always covers exactly the bytes on the wire (docs/rest.md).
// - The body is serialized once and the same string is signed and sent.
// - No pipelining. The server (uWebSockets.js) closes a connection that sends a
//   second request while the first is still held, with nothing answered.
//   Global fetch (undici) keeps connections alive and reuses an idle one, but
//   never writes a second request on a connection whose response has not
//   finished (its default `pipelining` is 1), so concurrent calls open more
//   connections instead. A custom `fetch` passed in must keep that property.

import { DxApiError, parseErrorBody } from './errors.js';

export type HeaderFn = (method: string, target: string, body: string) => Record<string, string>;

export interface TransportOptions {
  baseUrl: string;
  /** Per-request deadline; the call rejects with a TimeoutError after it. Default 10,000 ms. */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

export type Query = Record<string, string | number | boolean | readonly string[] | undefined>;

/**
 * `?a=1&b=x,y` from the defined entries, in insertion order ("" when none).
 * Array values are joined with raw commas (the comma-separated filters of
 * docs/rest.md); each element and every scalar is percent-encoded.
 */
export function buildQuery(q: Query | undefined): string {
  if (q === undefined) return '';
  let out = '';
  for (const name of Object.keys(q)) {
    const v = q[name];
    if (v === undefined) continue;
    const text = Array.isArray(v) ? v.map((s) => encodeURIComponent(s)).join(',') : encodeURIComponent(String(v));
    out += (out === '' ? '?' : '&') + encodeURIComponent(name) + '=' + text;
  }
  return out;
}

export class HttpTransport {
  private readonly origin: string;
  private readonly prefix: string;
  private readonly timeoutMs: number;
  private readonly fetchFn: typeof fetch;
  private readonly headerFn: HeaderFn;

  constructor(opts: TransportOptions, headerFn: HeaderFn) {
    const base = new URL(opts.baseUrl);
    this.origin = base.origin;
    // A base URL with a path (behind a proxy) prefixes every target, and the
    // prefix is part of what is signed because it is part of what is sent.
    this.prefix = base.pathname.replace(/\/+$/, '');
    this.timeoutMs = opts.timeoutMs ?? 10_000;
    this.fetchFn = opts.fetch ?? globalThis.fetch;
    this.headerFn = headerFn;
  }

  /**
   * Sends one request and returns the parsed JSON body (undefined for an
   * empty body). A non-2xx answer throws DxApiError. `body` is sent as is
   * when it is a string, JSON-encoded otherwise, and omitted when undefined.
   */
  async call<T>(method: string, pathWithQuery: string, body?: unknown): Promise<T> {
    const res = await this.send(method, pathWithQuery, body);
    if (res.status < 200 || res.status > 299) {
      throw new DxApiError(res.status, parseErrorBody(res.status, res.text), `${res.method} ${res.target}`);
    }
    return (res.text.length === 0 ? undefined : JSON.parse(res.text)) as T;
  }

  /** Sends one request and returns the status and raw text, whatever the status. */
  async callText(method: string, pathWithQuery: string, body?: unknown): Promise<string> {
    const res = await this.send(method, pathWithQuery, body);
    if (res.status < 200 || res.status > 299) {
      throw new DxApiError(res.status, parseErrorBody(res.status, res.text), `${res.method} ${res.target}`);
    }
    return res.text;
  }

  async send(
    method: string,
    pathWithQuery: string,
    body?: unknown,
  ): Promise<{ status: number; text: string; method: string; target: string }> {
    const m = method.toUpperCase();
    // '//host/...' would be a scheme-relative URL: the request, and its token or signature, would go to another host.
    if (!pathWithQuery.startsWith('/') || pathWithQuery.startsWith('//')) {
      throw new TypeError(`path must start with a single '/': ${pathWithQuery}`);
    }
    const url = new URL(this.prefix + pathWithQuery, this.origin);
    if (url.origin !== this.origin) throw new TypeError(`path leaves ${this.origin}: ${pathWithQuery}`);
    // pathname + search is exactly the request target fetch writes on the wire
    // (the URL parser has already normalized and percent-encoded it).
    const target = url.pathname + url.search;
    const bodyText = body === undefined ? '' : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string> = this.headerFn(m, target, bodyText);
    if (bodyText.length > 0) headers['content-type'] = 'application/json';
    const res = await this.fetchFn(url, {
      method: m,
      headers,
      body: bodyText.length > 0 ? bodyText : undefined,
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, text, method: m, target };
  }
}

/**
 * Closes the keep-alive connections of global fetch (undici's global
 * dispatcher, which HttpTransport uses by default) once their requests are
 * done, and installs a fresh dispatcher of the same kind for later calls. A
 * process that is both a client of the exchange and the exchange (the demo,
 * tests) calls this before a graceful stop, which waits for its clients'
 * connections to close (uWS v20.30 cannot close idle ones).
 */
export async function closeFetchConnections(): Promise<void> {
  const slot = Symbol.for('undici.globalDispatcher.1');
  const g = globalThis as unknown as Record<symbol, { close(): Promise<void> } | undefined>;
  const d = g[slot];
  if (d === undefined) return;
  g[slot] = new (d.constructor as new () => { close(): Promise<void> })();
  await d.close();
}
