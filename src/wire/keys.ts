// keys: the response bodies of the keys service (POST /keys, GET /keys,
// DELETE /keys/{key_id}, src/keys_service) as TypeBox schemas, and the key
// list item the control plane shares. The one declaration of these shapes:
// the handlers' answers, the read models' key list and the client's types are
// checked against it at compile time, the tests check real answers against
// it. Not part of the OpenAPI document (which describes the REST lane). Also
// the name <-> bit mapping of scopes. No runtime state; any thread (the
// client imports the types only).

import { Type, type Static } from '@sinclair/typebox';
import { SCOPE_BITS } from '../layout/records.js';
import { asOfSeq, oneOf, u64, U32_MAX } from './responses.js';

export const SCOPE_NAMES = SCOPE_BITS.map(([name]) => name);

/** The scope names of Scope bits, in enum order (the wire spelling of a key's scopes). */
export function scopeNames(bits: number): Scope[] {
  const out: Scope[] = [];
  for (const [name, bit] of SCOPE_BITS) if (bits & bit) out.push(name);
  return out;
}

/** The Scope bits of scope names (unknown names add nothing: the request schemas allow only the three). */
export function scopeBits(names: readonly string[]): number {
  let bits = 0;
  for (const [name, bit] of SCOPE_BITS) if (names.includes(name)) bits |= bit;
  return bits;
}

export const ScopeName = oneOf(SCOPE_NAMES, 'a scope: read, trade or withdraw');
const keyId = Type.Integer({ minimum: 1, maximum: U32_MAX, description: 'key id (DX-ACCESS-KEY)' });

export const KeyItem = Type.Object({
  key_id: keyId,
  scopes: Type.Array(ScopeName),
  revoked: Type.Boolean({ description: 'revoked keys stay listed; deleting an account revokes its keys' }),
}, { description: 'A key as listed: never its secret.' });

export const KeyList = Type.Object({ keys: Type.Array(KeyItem, { description: 'ascending key_id' }), as_of_seq: asOfSeq });

export const CreatedKey = Type.Object({
  key_id: keyId,
  secret: Type.String({ description: 'base64 of the 32 secret bytes; shown in this answer only' }),
  scopes: Type.Array(ScopeName),
  label: Type.String({ description: 'the label asked for; "" when none' }),
  seq: u64('sequence number of the creation'),
});

export const KeyRevoked = Type.Object({
  key_id: keyId,
  revoked: Type.Literal(true),
  seq: u64('sequence number of the revocation'),
});

export type Scope = Static<typeof ScopeName>;
export type KeyItem = Static<typeof KeyItem>;
export type KeyList = Static<typeof KeyList>;
export type CreatedKey = Static<typeof CreatedKey>;
export type KeyRevoked = Static<typeof KeyRevoked>;
