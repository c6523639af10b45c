// key_file: reads a key file, the JSON {"key_id", "secret", "url"?} that
// `dx keys create --save` and the demo write, for `dx` and `dx mcp`. Its
// errors never quote the file's text: it holds the secret. Main thread of
// dx and dx mcp.

import { readFileSync } from 'node:fs';

export interface KeyFile {
  keyId: number;
  secret: string;
  /** The REST URL the key belongs to, when the file names one. */
  url: string | undefined;
}

/** A key file that cannot be read or does not hold a key; the message names the file and the fault. */
export class KeyFileError extends Error {}

export function readKeyFile(path: string): KeyFile {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (e) {
    throw new KeyFileError(`cannot read the key file ${path}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`);
  }
  let j: unknown;
  try {
    j = JSON.parse(raw);
  } catch (e) {
    // Not e.message: V8 quotes the text around the mistake, which may be the secret.
    if (!(e instanceof SyntaxError)) throw e;
    throw new KeyFileError(`the key file ${path} is not JSON`);
  }
  const k = (typeof j === 'object' && j !== null ? j : {}) as { key_id?: unknown; secret?: unknown; url?: unknown };
  if (typeof k.key_id !== 'number' || !Number.isInteger(k.key_id) || typeof k.secret !== 'string') {
    throw new KeyFileError(`the key file ${path} must hold {"key_id": <integer>, "secret": "<base64>", "url"?: "<rest url>"}`);
  }
  return { keyId: k.key_id, secret: k.secret, url: typeof k.url === 'string' ? k.url : undefined };
}
