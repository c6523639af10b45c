// api: the signed REST client of the trader page (same origin), and the
// bearer-token client of the operator console. Every non-2xx answer becomes
// an ApiError carrying the exchange's error envelope, so the pages show
// `code` and `message` exactly as the API returns them. Browser main thread.

import type { ErrorBody } from '../../client/types.js';
import { Clock, decodeSecret, importSecret, signRequest, wsSignInQuery, type HmacKey } from './sign.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly envelope: ErrorBody,
  ) {
    super(`${status} ${envelope.code}: ${envelope.message}`);
  }

  get code(): string {
    return this.envelope.code;
  }
}

/** The envelope of a failed answer, or one describing what came back instead (a proxy's HTML page, nothing). */
async function failure(res: Response): Promise<ApiError> {
  const text = await res.text();
  try {
    const body = JSON.parse(text) as { error?: ErrorBody };
    if (body.error && typeof body.error.code === 'string') return new ApiError(res.status, body.error);
  } catch (e) {
    if (!(e instanceof SyntaxError)) throw e;
  }
  return new ApiError(res.status, {
    code: `http_${res.status}`,
    num: null,
    origin: 'client',
    message: text.slice(0, 200) || res.statusText,
    details: null,
  });
}

async function send(target: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(target, init);
  } catch (e) {
    throw new ApiError(0, {
      code: 'network',
      num: null,
      origin: 'client',
      message: `the exchange could not be reached (${(e as Error).message})`,
      details: null,
    });
  }
}

/** A signed session of one key; the secret stays in the WebCrypto key (not extractable). */
export class SignedApi {
  private readonly clock = new Clock();

  private constructor(
    readonly keyId: number,
    private readonly key: HmacKey,
  ) {}

  /** Checks the inputs' form (not the key itself: the first call does that). */
  static async create(keyIdText: string, secretText: string): Promise<SignedApi> {
    const keyId = Number(keyIdText.trim());
    if (!/^[0-9]{1,10}$/.test(keyIdText.trim()) || keyId < 1 || keyId > 0xffffffff)
      throw new RangeError('the key id is a positive integer');
    return new SignedApi(keyId, await importSecret(decodeSecret(secretText)));
  }

  async call<T>(method: 'GET' | 'POST' | 'DELETE', target: string, body?: unknown): Promise<T> {
    const text = body === undefined ? '' : JSON.stringify(body);
    const ts = this.clock.next();
    const headers: Record<string, string> = {
      'DX-ACCESS-KEY': String(this.keyId),
      'DX-ACCESS-TIMESTAMP': ts,
      'DX-ACCESS-SIGNATURE': await signRequest(this.key, ts, method, target, text),
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await send(target, { method, headers, body: body === undefined ? undefined : text });
    if (!res.ok) throw await failure(res);
    return (await res.json()) as T;
  }

  get<T>(target: string): Promise<T> {
    return this.call<T>('GET', target);
  }

  /** A freshly signed WebSocket URL (each one opens one connection). */
  async wsUrl(): Promise<string> {
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    return `${scheme}://${location.host}/v1/ws?${await wsSignInQuery(this.keyId, this.key, this.clock.next())}`;
  }
}

/** The operator's client: `Authorization: Bearer <token>` on the control plane (same origin). */
export class AdminApi {
  constructor(private readonly token: string) {}

  async call<T>(method: 'GET' | 'POST' | 'DELETE', target: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const res = await send(target, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    if (!res.ok) throw await failure(res);
    return (target === '/metrics' ? await res.text() : await res.json()) as T;
  }

  get<T>(target: string): Promise<T> {
    return this.call<T>('GET', target);
  }
}

/** One line for an error of any kind (shown in role=alert regions). */
export function errorText(e: unknown): string {
  if (e instanceof ApiError) return e.message;
  if (e instanceof Error) return e.message;
  return String(e);
}

/** A fresh client_order_id (1..2^64-1, random): a placement retried with it is answered with its order, never made twice. */
export function newClientOrderId(): string {
  const w = crypto.getRandomValues(new Uint32Array(2));
  const id = (BigInt(w[0]!) << 32n) | BigInt(w[1]!);
  return String(id === 0n ? 1n : id);
}

/**
 * Whether a mutation's outcome is unknown: it may have been sequenced (504
 * sequencing_timeout) or its answer was lost on the way (the network). Any
 * other answer says what happened, except to a retry of one whose outcome was
 * unknown (`retry`): refused before the engine looked at its id (429, 503
 * shed, ...: any answer not of origin core), it says nothing of the first try.
 */
export function outcomeUnknown(e: unknown, retry = false): boolean {
  if (e instanceof ApiError && (e.code === 'sequencing_timeout' || e.code === 'network')) return true;
  return retry && !(e instanceof ApiError && e.envelope.origin === 'core');
}
