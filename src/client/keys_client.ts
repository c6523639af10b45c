// KeysClient: the keys service on its own listener (docs/ARCHITECTURE.md
// section 8, default port 8081; the client contract's accounts service):
// create, list and revoke the caller's API keys. Signed with the same three
// headers as the REST surface. Runs in the caller's thread.

import type { KeyObject } from 'node:crypto';
import { createSecretKey } from 'node:crypto';
import { authHeaders, decodeSecret, nextMutationTs } from './sign.js';
import { HttpTransport } from './transport.js';
import type { DxClientOptions } from './client.js';
import type { CreatedKey, CreateKeyRequest, KeyList, KeyRevoked } from './types.js';

/** The same options as DxClient's; baseUrl is the keys service's listener (e.g. `http://127.0.0.1:8081`). */
export type KeysClientOptions = DxClientOptions;

export class KeysClient {
  readonly keyId: number;
  private readonly key: KeyObject;
  private readonly http: HttpTransport;
  private lastMutationTs = 0;

  constructor(opts: KeysClientOptions) {
    this.keyId = opts.keyId;
    this.key = createSecretKey(decodeSecret(opts.secret));
    const now = opts.now ?? Date.now;
    this.http = new HttpTransport(opts, (method, target, body) => {
      // Strictly increasing mutation timestamps: see DxClient (replay refusal).
      let ts = Math.floor(now());
      if (method !== 'GET') {
        ts = nextMutationTs(ts, this.lastMutationTs);
        this.lastMutationTs = ts;
      }
      return authHeaders(this.keyId, this.key, method, target, body, ts) as unknown as Record<string, string>;
    });
  }

  /**
   * A new key for the caller's account; the secret (base64 of 32 bytes) is
   * in this answer only. Scopes `read` and/or `trade`, default both; asking
   * for `withdraw` is 403 `missing_scope`.
   */
  createKey(req: CreateKeyRequest = {}): Promise<CreatedKey> {
    return this.http.call('POST', '/keys', req);
  }

  /** The account's keys, never their secrets. */
  listKeys(): Promise<KeyList> {
    return this.http.call('GET', '/keys');
  }

  /** Immediate, irreversible and idempotent; any key of the same account may revoke any other. */
  revokeKey(keyId: number): Promise<KeyRevoked> {
    if (!Number.isInteger(keyId) || keyId < 0) throw new RangeError(`not a key id: ${keyId}`);
    return this.http.call('DELETE', `/keys/${keyId}`);
  }

  /** Any call on the keys service's listener. */
  request<T = unknown>(method: string, pathWithQuery: string, body?: unknown): Promise<T> {
    return this.http.call<T>(method, pathWithQuery, body);
  }
}
