// Cursors of the list endpoints and the error a malformed one raises. Runs on
// whichever thread serves reads (gateway threads, the control plane).
//
// A cursor is opaque to clients: base64url (no padding) of `<kind><key>`,
// where kind is one letter naming the listing and key is the sort key (a safe
// non-negative integer) of the last item returned. The next page continues
// strictly past that key, so items that arrive or are evicted between pages
// never cause an item to repeat. Decoding is strict: the text must re-encode to
// exactly the same cursor, so garbage, padding or another listing's cursor is
// refused with `invalid_field` (field `cursor`), which the gateway renders as 400.

import { Buffer } from 'node:buffer';

/** A client mistake found while answering a read; the gateway renders it as 400 `code` with details.field and details.reason. */
export class ViewError extends Error {
  override name = 'ViewError';
  constructor(readonly code: string, readonly field: string, readonly reason: string) {
    super(`${code}: ${field}: ${reason}`);
  }
}

/** Cursor kinds, one per listing. */
export const CursorKind = {
  markets: 'm',
  trades: 't',
  rounds: 'r',
  positions: 'p',
  fills: 'f',
  orders: 'o',
} as const;
export type CursorKindName = (typeof CursorKind)[keyof typeof CursorKind];

const CURSOR_RE = /^[A-Za-z0-9_-]{2,32}$/;
const KEY_RE = /^[0-9]{1,16}$/;

export function encodeCursor(kind: CursorKindName, key: number): string {
  return Buffer.from(kind + String(key), 'latin1').toString('base64url');
}

/**
 * The sort key a cursor carries, or -1 for the first page (cursor absent or
 * empty). Throws ViewError('invalid_field', 'cursor', ...) when malformed.
 */
export function decodeCursor(kind: CursorKindName, cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return -1;
  if (!CURSOR_RE.test(cursor)) throw new ViewError('invalid_field', 'cursor', 'malformed cursor');
  const text = Buffer.from(cursor, 'base64url').toString('latin1');
  const key = text.slice(1);
  if (text[0] !== kind || !KEY_RE.test(key)) throw new ViewError('invalid_field', 'cursor', 'not a cursor of this listing');
  const n = Number(key);
  if (!Number.isSafeInteger(n) || encodeCursor(kind, n) !== cursor) throw new ViewError('invalid_field', 'cursor', 'malformed cursor');
  return n;
}
