// envelope: the one error body of every lane, rendered from the code registry
// (native-layout/codes.json): {error: {code, num, origin, message, details}}
// (the shape is declared in src/wire/responses.ts). Any thread.

import { CODES, type CodeInfo } from '../layout/records.js';
import type { ErrorEnvelope, ErrorObject } from '../wire/responses.js';

export type { ErrorObject } from '../wire/responses.js';

const byCode = new Map<string, CodeInfo>(CODES.map((c) => [c.code, c]));
const byNum = new Map<number, CodeInfo>(CODES.filter((c) => c.num !== null).map((c) => [c.num!, c]));

export function codeInfo(code: string): CodeInfo {
  const c = byCode.get(code);
  if (!c) throw new Error(`envelope: unknown code ${code}`);
  return c;
}

export function codeByNum(num: number): CodeInfo {
  const c = byNum.get(num);
  if (!c) throw new Error(`envelope: unknown code num ${num}`);
  return c;
}

/** The inner error object (batch items carry it as {error: ...}). */
export function errorObject(code: string, message?: string, details: Record<string, unknown> | null = null): ErrorObject {
  const c = codeInfo(code);
  return { code: c.code, num: c.num, origin: c.origin, message: message ?? c.doc, details };
}

export function httpStatusOf(code: string): number {
  return codeInfo(code).http;
}

/** Thrown by request handling for a client mistake; rendered as the envelope. */
export class ApiError extends Error {
  constructor(readonly code: string, message?: string, readonly details: Record<string, unknown> | null = null) {
    super(message ?? codeInfo(code).doc);
  }

  get status(): number {
    return httpStatusOf(this.code);
  }

  body(): ErrorEnvelope {
    return { error: errorObject(this.code, this.message, this.details) };
  }
}
