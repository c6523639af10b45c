// Cursors of the list endpoints and the error a malformed one raises. Runs on
// whichever thread serves reads (gateway threads, the control plane).
//
// A cursor is opaque to clients: base64url (no padding) of
// `<kind><scope><key>`, where kind is one letter naming the listing, scope 8
// hex digits naming its owner and filters (cursorScope), and key is the sort
// key (a safe non-negative integer) of the last item returned. The next page continues
// strictly past that key, so items that arrive or are evicted between pages
// never cause an item to repeat. Decoding is strict: the text must re-encode to
// exactly the same cursor, so garbage, padding or another listing's cursor
// (another kind, owner or filters) is refused with `invalid_field` (field
// `cursor`), which the gateway renders as 400.

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

const CURSOR_RE = /^[A-Za-z0-9_-]{2,48}$/;
const SCOPE_RE = /^[0-9a-f]{8}$/;
const KEY_RE = /^[0-9]{1,16}$/;

/**
 * The listing a cursor belongs to, beyond its kind: its owner (the account, or the market of a trade tape; 0 for none)
 * and its filters (every query field but cursor and limit), as 8 hex digits of FNV-1a. A cursor used with another
 * owner or other filters would continue past its key in another list and silently skip items: it is refused instead.
 */
export function cursorScope(owner: number, q: object): string {
  let text = String(owner);
  const fields = q as Record<string, unknown>;
  for (const k of Object.keys(fields).sort()) {
    if (k !== 'cursor' && k !== 'limit' && fields[k] !== undefined) text += `|${k}=${String(fields[k])}`;
  }
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16).padStart(8, '0');
}

export function encodeCursor(kind: CursorKindName, key: number, scope: string): string {
  return Buffer.from(kind + scope + String(key), 'latin1').toString('base64url');
}

/**
 * The sort key a cursor carries, or -1 for the first page (cursor absent or
 * empty). Throws ViewError('invalid_field', 'cursor', ...) when malformed, or
 * when it belongs to another listing, owner or filters (cursorScope).
 */
export function decodeCursor(kind: CursorKindName, cursor: string | undefined, scope: string): number {
  if (cursor === undefined || cursor === '') return -1;
  if (!CURSOR_RE.test(cursor)) throw new ViewError('invalid_field', 'cursor', 'malformed cursor');
  const text = Buffer.from(cursor, 'base64url').toString('latin1');
  const key = text.slice(9);
  if (text[0] !== kind || !SCOPE_RE.test(text.slice(1, 9)) || !KEY_RE.test(key)) {
    throw new ViewError('invalid_field', 'cursor', 'not a cursor of this listing');
  }
  if (text.slice(1, 9) !== scope) {
    throw new ViewError('invalid_field', 'cursor', 'a cursor of another account, market or filters: start again without one');
  }
  const n = Number(key);
  if (!Number.isSafeInteger(n) || encodeCursor(kind, n, scope) !== cursor) {
    throw new ViewError('invalid_field', 'cursor', 'malformed cursor');
  }
  return n;
}
