// context: what every CLI command needs: the parsed arguments, the output
// mode (tables or --json), and clients built lazily from the environment, so
// a command that needs no key never asks for one.
//
// Environment (flags win):
//   DX_API_URL (--url)            REST lane, default http://127.0.0.1:8080
//   DX_KEY_ID + DX_KEY_SECRET     the signing key, or
//   DX_KEY_FILE (--key-file)      JSON {"key_id", "secret", "url"?}
//   DX_ACCOUNTS_URL (--accounts-url) keys service, default http://127.0.0.1:8081
//   DX_ADMIN_URL (--admin-url)    control plane, default http://127.0.0.1:8082
//   DX_ADMIN_TOKEN                operator token, else the file
//                                 $DX_DATA_DIR/admin-token (default ./data/admin-token)
// The secret is never printed or logged. CLI process.
// CLI process, main thread.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KeysClient } from '../client/keys_client.js';
import { AdminClient } from '../client/admin_client.js';
import { DxClient } from '../client/client.js';
import { decodeSecret } from '../client/sign.js';
import { UsageError } from '../lib/command_line.js';
import { KeyFileError, readKeyFile, type KeyFile } from '../lib/key_file.js';
import { flag, int, type Parsed } from './args.js';

export const DEFAULT_API_URL = 'http://127.0.0.1:8080';
export const DEFAULT_ACCOUNTS_URL = 'http://127.0.0.1:8081';
export const DEFAULT_ADMIN_URL = 'http://127.0.0.1:8082';

export interface KeyMaterial {
  keyId: number;
  secret: string;
  /** Where the key came from, for messages (never the secret). */
  source: string;
  url?: string;
}

export class Ctx {
  readonly json: boolean;
  private readonly timeoutMs: number;
  private key: KeyMaterial | null = null;

  readonly env: NodeJS.ProcessEnv;

  constructor(
    readonly p: Parsed,
    env: NodeJS.ProcessEnv,
    private readonly write: (s: string) => void,
    /** stderr: what a command must tell even when it fails (e.g. what it did create). */
    readonly err: (s: string) => void = () => {},
  ) {
    // An empty variable counts as unset.
    this.env = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
    this.json = p.flags.get('json') === true;
    const t = flag(p, 'timeout-ms');
    this.timeoutMs = t === undefined ? 10_000 : int('--timeout-ms', t, 1, 600_000);
  }

  /** Prints `value` as JSON with --json, else the human rendering. */
  print(value: unknown, human: () => string): void {
    this.write(this.json ? `${JSON.stringify(value, null, 2)}\n` : human());
  }

  out(s: string): void {
    this.write(s);
  }

  keyMaterial(): KeyMaterial {
    if (this.key) return this.key;
    const file = flag(this.p, 'key-file') ?? this.env.DX_KEY_FILE;
    let k: KeyMaterial;
    if (this.env.DX_KEY_ID !== undefined && this.env.DX_KEY_SECRET !== undefined && flag(this.p, 'key-file') === undefined) {
      k = { keyId: int('DX_KEY_ID', this.env.DX_KEY_ID, 1, 0xffffffff), secret: this.env.DX_KEY_SECRET, source: 'DX_KEY_ID/DX_KEY_SECRET' };
    } else if (file !== undefined && file !== '') {
      let f: KeyFile;
      try {
        f = readKeyFile(file);
      } catch (e) {
        if (!(e instanceof KeyFileError)) throw e;
        throw new UsageError(e.message);
      }
      k = { keyId: f.keyId, secret: f.secret, source: file, url: f.url };
    } else {
      throw new UsageError(
        'this command needs a key: set DX_KEY_ID and DX_KEY_SECRET, or DX_KEY_FILE (or --key-file) to a JSON file ' +
          '{"key_id","secret","url"?}',
      );
    }
    try {
      decodeSecret(k.secret);
    } catch (e) {
      throw new UsageError(`the key secret from ${k.source} is not valid: ${(e as Error).message}`);
    }
    this.key = k;
    return k;
  }

  apiUrl(): string {
    return flag(this.p, 'url') ?? this.env.DX_API_URL ?? (this.key ?? this.tryKey())?.url ?? DEFAULT_API_URL;
  }

  private tryKey(): KeyMaterial | null {
    try {
      return this.keyMaterial();
    } catch (e) {
      if (e instanceof UsageError) return null;
      throw e;
    }
  }

  dx(): DxClient {
    const k = this.keyMaterial();
    return new DxClient({ baseUrl: checkUrl(this.apiUrl(), 'DX_API_URL'), keyId: k.keyId, secret: k.secret, timeoutMs: this.timeoutMs });
  }

  keys(): KeysClient {
    const k = this.keyMaterial();
    const url = flag(this.p, 'accounts-url') ?? this.env.DX_ACCOUNTS_URL ?? DEFAULT_ACCOUNTS_URL;
    return new KeysClient({ baseUrl: checkUrl(url, 'DX_ACCOUNTS_URL'), keyId: k.keyId, secret: k.secret, timeoutMs: this.timeoutMs });
  }

  adminUrl(): string {
    return checkUrl(flag(this.p, 'admin-url') ?? this.env.DX_ADMIN_URL ?? DEFAULT_ADMIN_URL, 'DX_ADMIN_URL');
  }

  admin(): AdminClient {
    let token = this.env.DX_ADMIN_TOKEN;
    if (token === undefined || token === '') {
      const file = join(this.env.DX_DATA_DIR ?? './data', 'admin-token');
      try {
        token = readFileSync(file, 'utf8').trim();
      } catch (e) {
        throw new UsageError(
          `operator commands need the token: set DX_ADMIN_TOKEN, or run where ${file} exists ` +
            `(${(e as NodeJS.ErrnoException).code ?? 'unreadable'})`,
        );
      }
    }
    return new AdminClient({ baseUrl: this.adminUrl(), token, timeoutMs: this.timeoutMs });
  }
}

function checkUrl(url: string, name: string): string {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch (e) {
    throw new UsageError(`${name} must be an http(s) URL, got ${JSON.stringify(url)} (${(e as Error).message})`);
  }
  return url;
}
