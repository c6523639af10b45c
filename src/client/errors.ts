// DxApiError: a non-2xx answer from any dx listener (REST, keys service,
// control plane), carrying the HTTP status and the error envelope's inner
// object. Client library only; runs in the caller's thread.

import type { ErrorBody } from './types.js';

export class DxApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly num: number | null;
  readonly origin: string;
  readonly details: Record<string, unknown> | null;
  /** `METHOD path?query` of the failed request, for logs. */
  readonly request: string;
  /** The envelope's inner object as the server sent it (or as rebuilt when the body was not an envelope). */
  readonly body: ErrorBody;

  constructor(status: number, body: ErrorBody, request: string) {
    super(`${request} -> ${status} ${body.code}: ${body.message}`);
    this.name = 'DxApiError';
    this.status = status;
    this.code = body.code;
    this.num = body.num;
    this.origin = body.origin;
    this.details = body.details;
    this.request = request;
    this.body = body;
  }

  /**
   * The exchange answered that the request did not take effect. False for 504
   * `sequencing_timeout` and 500 `internal`: the command was sent and may still
   * have taken effect (look it up, or repeat it with its idempotency key).
   */
  get refused(): boolean {
    return this.code !== 'sequencing_timeout' && this.status !== 500;
  }

  /** For 429 `rate_limited`: `details.retry_after_ms` (a decimal string on the wire) as a number. */
  get retryAfterMs(): number | undefined {
    const v = this.details?.['retry_after_ms'];
    if (typeof v === 'string' && /^[0-9]+$/.test(v)) return Number(v);
    if (typeof v === 'number') return v;
    return undefined;
  }
}

/**
 * Reads an error envelope out of a response body. A body that is not an
 * envelope (a proxy's HTML page, an empty 502) becomes code `http_<status>`
 * with origin `client`, so callers always get one shape.
 */
export function parseErrorBody(status: number, text: string): ErrorBody {
  let parsed: unknown = undefined;
  if (text.length > 0 && (text[0] === '{' || text[0] === ' ')) {
    try {
      parsed = JSON.parse(text);
    } catch (e) {
      if (!(e instanceof SyntaxError)) throw e;
      parsed = undefined; // not JSON: fall through to the synthesized envelope
    }
  }
  const inner = (parsed as { error?: Partial<ErrorBody> } | undefined)?.error;
  if (inner && typeof inner === 'object' && typeof inner.code === 'string') {
    return {
      code: inner.code,
      num: typeof inner.num === 'number' ? inner.num : null,
      origin: typeof inner.origin === 'string' ? inner.origin : '',
      message: typeof inner.message === 'string' ? inner.message : '',
      details: inner.details && typeof inner.details === 'object' ? (inner.details as Record<string, unknown>) : null,
    };
  }
  return { code: `http_${status}`, num: null, origin: 'client', message: text.slice(0, 200), details: null };
}

/** Type guard for a batch item: true when the item is `{error: {...}}`. */
export function isItemError(item: unknown): item is { error: ErrorBody } {
  return typeof item === 'object' && item !== null && 'error' in item;
}
