// Keys service routes (docs/ARCHITECTURE.md section 8; the client contract
// calls it the accounts service, hence its port setting DX_ACCOUNTS_PORT): a
// key manages its own account's keys on a listener of its own, signed with
// the same three headers as REST. Shapes: src/wire/keys.ts.
//   POST /keys {label?, scopes?}  -> 201 {key_id, secret, scopes, label}   (secret shown once)
//   GET /keys                     -> 200 {keys: [...]}                      (never secrets)
//   DELETE /keys/{key_id}         -> 200 {key_id, revoked: true, seq}       (idempotent)
// A user-created key gets read and trade by default, never withdraw, and never
// more than the creating key holds; an account creates at most
// KEY_CREATE_BURST keys at once, then one every KEY_CREATE_EVERY_MS.
// Control-plane thread.

import { randomBytes } from 'node:crypto';
import { CompletionStatus, CreateKey, RevokeKey, Scope, T_CREATE_KEY, T_REVOKE_KEY } from '../layout/records.js';
import type { Completion, GatewayCore } from '../gateway/core.js';
import { KEY_CREATION_TIMEOUT, revokeLateKey } from '../gateway/key_creation.js';
import { ApiError, codeByNum } from '../gateway/envelope.js';
import { pathId } from '../gateway/query.js';
import type { Route } from '../gateway/routes.js';
import { compile, storedText } from '../gateway/schemas.js';
import { scopeBits, scopeNames, type CreatedKey, type KeyList, type KeyRevoked } from '../wire/keys.js';
import { CreateKeyBody, type CreateKeyRequest } from '../wire/requests.js';

const createKey = compile(CreateKeyBody);

/**
 * Keys one account may create at once, then one more every KEY_CREATE_EVERY_MS. Each key has a bucket of its own, so
 * without an account-wide limit new keys could create keys in turn (about 65,000 in five seconds) and fill the per-key
 * tables every gateway thread shares (TokenBuckets, 65,536 rows), after which every new key of any account would be
 * throttled for good. At this rate one account needs days for that. The number of keys is not capped (the contract).
 */
export const KEY_CREATE_BURST = 20;
export const KEY_CREATE_EVERY_MS = 6000;
/** Per account: the creations left and when that was (the keys service runs on the control-plane thread only). */
const creations = new Map<number, { left: number; at: number }>();

/** A creation taken for a key that was not created (refused by the engine, or no outcome in time). */
function giveBack(account: number): void {
  const b = creations.get(account);
  if (b !== undefined) b.left = Math.min(KEY_CREATE_BURST, b.left + 1);
}

/** 0 when the account may create a key now (one is taken), else the milliseconds until it may. */
function takeCreation(account: number, now: number): number {
  const b = creations.get(account) ?? { left: KEY_CREATE_BURST, at: now };
  // The wall clock stepped back: refill from now on, not only once it passes the time it stepped back from.
  if (now < b.at) b.at = now;
  const refill = Math.floor((now - b.at) / KEY_CREATE_EVERY_MS);
  if (refill > 0) {
    b.left = Math.min(KEY_CREATE_BURST, b.left + refill);
    b.at = b.left === KEY_CREATE_BURST ? now : b.at + refill * KEY_CREATE_EVERY_MS;
  }
  creations.set(account, b);
  if (b.left === 0) return Math.max(1, b.at + KEY_CREATE_EVERY_MS - now);
  b.left--;
  return 0;
}

function route(r: Omit<Route, 'segments'>): Route {
  return { ...r, segments: r.path.split('/').filter((s) => s.length > 0) };
}

async function sequenced(
  g: GatewayCore, type: number, size: number, account: number, write: Parameters<GatewayCore['submit']>[4],
  late?: (c: Completion) => void,
) {
  const r = await g.submit(type, size, account, false, write, late);
  if (r === null) throw new ApiError('sequencing_timeout', late === undefined ? undefined : KEY_CREATION_TIMEOUT);
  if (r.status === CompletionStatus.rejected) throw new ApiError(codeByNum(r.code_num).code);
  return r;
}

export const KEY_ROUTES: Route[] = [
  route({
    name: 'create_key', method: 'POST', path: '/keys', scope: Scope.read | Scope.trade, body: createKey, query: [], writeCost: () => 1,
    description: 'Create a key for the caller\'s account; the secret (base64 of 32 bytes) is returned once.',
    handler: async (c, g) => {
      const b = c.body as CreateKeyRequest;
      const wanted = b.scopes ?? ['read', 'trade'];
      if (wanted.includes('withdraw')) throw new ApiError('missing_scope', 'keys created by users never get the withdraw scope');
      const bits = scopeBits(wanted);
      if ((bits & ~c.scopes) !== 0) throw new ApiError('missing_scope', 'a key cannot grant scopes it does not hold');
      const label = storedText(b.label ?? '', 'label', 64);
      // The account's allowance last, once the request is valid; given back if the key is not created.
      const wait = takeCreation(c.account, Date.now());
      if (wait > 0) {
        throw new ApiError('rate_limited', `an account creates at most ${KEY_CREATE_BURST} keys at once, then one every ` +
          `${KEY_CREATE_EVERY_MS / 1000} s`, { retry_after_ms: String(wait) });
      }
      const secret = randomBytes(32);
      const r = await sequenced(g, T_CREATE_KEY, CreateKey.SIZE, c.account, (m, o) => {
        CreateKey.set_scopes(m, o, bits);
        CreateKey.set_secret(m, o, secret);
        CreateKey.set_label(m, o, label);
      }, (late) => revokeLateKey(g, late, c.account)).catch((e: unknown) => {
        // A creation answered 504 may still land: it keeps its place in the allowance, or 504s would lift the cap.
        if (!(e instanceof ApiError && e.code === 'sequencing_timeout')) giveBack(c.account);
        throw e;
      });
      const body = {
        key_id: r.result, secret: secret.toString('base64'), scopes: scopeNames(bits), label, seq: String(r.seq),
      } satisfies CreatedKey;
      return { status: 201, body };
    },
  }),
  route({
    name: 'list_keys', method: 'GET', path: '/keys', scope: Scope.read, body: 'none', query: [], writeCost: () => 0,
    description: 'The caller\'s account\'s keys (never secrets).',
    handler: (c, g) => ({ status: 200, body: { keys: g.views.keys(c.account), as_of_seq: String(g.views.asOfSeq) } satisfies KeyList }),
  }),
  route({
    name: 'revoke_key',
    method: 'DELETE',
    path: '/keys/{key_id}',
    scope: Scope.read | Scope.trade,
    body: 'none',
    query: [],
    writeCost: () => 1,
    description: 'Revoke a key of the caller\'s account: immediate, irreversible and idempotent.',
    handler: async (c, g) => {
      const keyId = pathId('key_id', c.params[0]!);
      const r = await sequenced(g, T_REVOKE_KEY, RevokeKey.SIZE, c.account, (m, o) => RevokeKey.set_key_id(m, o, keyId));
      return { status: 200, body: { key_id: keyId, revoked: true, seq: String(r.seq) } satisfies KeyRevoked };
    },
  }),
];
