// static_site: the built web pages of one listener (the trader page on the
// public port, the operator console on the control plane), read once at
// start by the main thread and served from memory by the thread that owns
// the listener (gateway threads, control plane).
//
// - Only GET and HEAD, only the files of the build (`/` is index.html);
//   nothing here is signed or secret, and no /v1 or /admin route is affected.
// - Hashed assets (Vite's `assets/<name>-<hash>.<ext>`) are immutable for a
//   year; index.html is revalidated every time (no-cache + ETag), so a new
//   build is picked up at once. If-None-Match answers 304. A gzip copy is
//   made at load and sent to clients that accept it.
// - Pages get a strict Content-Security-Policy: scripts, styles and
//   connections to this origin only (no CDN, no inline script).
// - When the build is missing (a test build without the web step), `/`
//   answers 404 in the error envelope saying how to build it.

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { ApiError } from './envelope.js';
import { endHead, endOrWait, send, statusLine } from './http.js';
import type { HttpRequest, HttpResponse, TemplatedApp } from './uws.js';

export interface StaticFile {
  body: Uint8Array;
  /** gzip of body; null when it would not be smaller. */
  gzip: Uint8Array | null;
  type: string;
  etag: string;
  immutable: boolean;
}

/** URL path -> file, `/` included; plain data so it can be handed to a worker thread. */
export interface StaticSite {
  dir: string;
  files: Record<string, StaticFile>;
}

const TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.txt': 'text/plain; charset=utf-8',
  '.woff2': 'font/woff2',
};

// connect-src 'self' covers ws:// and wss:// of this host (CSP Level 3).
const CSP = [
  "default-src 'self'", "script-src 'self'", "style-src 'self'", "img-src 'self' data:", "connect-src 'self'", "object-src 'none'",
  "base-uri 'none'", "form-action 'none'", "frame-ancestors 'none'",
].join('; ');

function walk(dir: string, out: string[]): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) walk(p, out);
    else out.push(p);
  }
  return out;
}

/** Reads a built page directory (index.html and what it references); null when it has no index.html. */
export function loadSite(dir: string): StaticSite | null {
  if (!existsSync(join(dir, 'index.html'))) return null;
  const files: Record<string, StaticFile> = {};
  for (const path of walk(dir, [])) {
    const rel = relative(dir, path).split(sep).join('/');
    const body = readFileSync(path);
    const gz = gzipSync(body, { level: 9 });
    const file: StaticFile = {
      body,
      gzip: gz.length < body.length ? gz : null,
      type: TYPES[extname(path).toLowerCase()] ?? 'application/octet-stream',
      etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
      immutable: rel.startsWith('assets/'),
    };
    files[`/${rel}`] = file;
    if (rel === 'index.html') files['/'] = file;
  }
  return { dir, files };
}

/** Total bytes of a site (and gzipped), for the start-up log. */
export function siteBytes(site: StaticSite): { files: number; bytes: number; gzip_bytes: number } {
  let bytes = 0;
  let gz = 0;
  const seen = new Set<StaticFile>();
  for (const f of Object.values(site.files)) {
    if (seen.has(f)) continue;
    seen.add(f);
    bytes += f.body.length;
    gz += (f.gzip ?? f.body).length;
  }
  return { files: seen.size, bytes, gzip_bytes: gz };
}

function serve(res: HttpResponse, req: HttpRequest, file: StaticFile): void {
  const method = req.getCaseSensitiveMethod().toUpperCase();
  const flight = { aborted: false, done: false, method };
  // endWithoutBody (HEAD, 304) does not count as a response for uWS's
  // "returned without responding" check; an abort handler satisfies it.
  res.onAborted(() => {
    flight.aborted = true;
  });
  if (method !== 'GET' && method !== 'HEAD') {
    send(res, flight, 405, new ApiError('method_not_allowed', `${method} is not allowed on a page`).body(), { allow: 'GET, HEAD' });
    return;
  }
  const match = req.getHeader('if-none-match');
  const gzip = file.gzip !== null && /\bgzip\b/.test(req.getHeader('accept-encoding'));
  res.cork(() => {
    res.writeStatus(statusLine(match === file.etag ? 304 : 200));
    res.writeHeader('etag', file.etag);
    res.writeHeader('cache-control', file.immutable ? 'public, max-age=31536000, immutable' : 'no-cache');
    res.writeHeader('x-content-type-options', 'nosniff');
    res.writeHeader('vary', 'accept-encoding');
    if (file.type.startsWith('text/html')) {
      res.writeHeader('content-security-policy', CSP);
      res.writeHeader('referrer-policy', 'no-referrer');
      res.writeHeader('x-frame-options', 'DENY');
    }
    if (match === file.etag) {
      res.endWithoutBody(0);
      return;
    }
    res.writeHeader('content-type', file.type);
    const body = gzip ? file.gzip! : file.body;
    if (gzip) res.writeHeader('content-encoding', 'gzip');
    if (method === 'HEAD') endHead(res, body.length);
    else endOrWait(res, flight, body);
  });
}

/**
 * Registers the site's files (exact paths, before any catch-all) on the
 * App; without a build, `/` answers 404 naming the missing directory.
 */
export function mountSite(app: TemplatedApp, site: StaticSite | null, what: string, dir: string): void {
  if (site === null) {
    app.any('/', (res, req) => {
      const flight = { aborted: false, done: false, method: req.getCaseSensitiveMethod().toUpperCase() };
      res.onAborted(() => {
        flight.aborted = true;
      });
      send(res, flight, 404, new ApiError('not_found', `the ${what} is not built: ${dir} has no index.html (run npm run build)`).body());
    });
    return;
  }
  for (const [path, file] of Object.entries(site.files)) app.any(path, (res, req) => serve(res, req, file));
}
