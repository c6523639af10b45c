// vite.config: builds one web page per mode into dist/web/<page>, and runs
// the development server for both pages against a running exchange.
//
//   vite build --config src/web/vite.config.ts --mode trader    -> dist/web/trader
//   vite build --config src/web/vite.config.ts --mode console   -> dist/web/console
//   vite --config src/web/vite.config.ts                        -> /trader/ and /console/
//
// Everything is bundled (no CDN); the exchange serves the build (src/gateway/
// static_site.ts). The dev server proxies /v1 (and the WebSocket lane) to
// DX_API_URL and /admin and /metrics to DX_ADMIN_URL, so the pages talk to
// the exchange as if it served them. A build prints one line per page: the
// gzip size of everything the page loads (gzipReport). Build time (node, its
// main thread), run from the repository root (npm scripts).

import { gzipSync } from 'node:zlib';
import { defineConfig, type Plugin } from 'vite';

const PAGES = ['trader', 'console'] as const;

/**
 * After the files are written: "web: <page> page <n> bytes gzip (<each file>)",
 * every file at gzip level 9, as the browser suite counts the trader page against
 * its 150 KB bound (the README quotes this line). Vite's own table is off: its
 * gzip differs from zlib's by about 1 KB, and one figure is enough.
 */
function gzipReport(page: string): Plugin {
  return {
    name: 'dx-gzip-report',
    writeBundle(_options, bundle) {
      const sizes = Object.values(bundle).map((f) => {
        const raw = f.type === 'chunk' ? f.code : f.source;
        return { name: f.fileName, bytes: gzipSync(typeof raw === 'string' ? Buffer.from(raw) : raw, { level: 9 }).length };
      });
      const total = sizes.reduce((a, f) => a + f.bytes, 0);
      const each = sizes.sort((x, y) => x.name.localeCompare(y.name)).map((f) => `${f.name} ${f.bytes.toLocaleString('en-US')}`);
      process.stdout.write(`web: ${page} page ${total.toLocaleString('en-US')} bytes gzip (${each.join(', ')})\n`);
    },
  };
}

export default defineConfig(({ command, mode }) => {
  const jsx = { oxc: { jsx: { runtime: 'automatic' as const, importSource: 'preact' } } };
  if (command === 'serve') {
    const api = process.env.DX_API_URL ?? 'http://127.0.0.1:8080';
    const admin = process.env.DX_ADMIN_URL ?? 'http://127.0.0.1:8082';
    return {
      ...jsx,
      root: 'src/web',
      server: {
        host: '127.0.0.1',
        proxy: {
          '/v1': { target: api, ws: true, changeOrigin: true },
          '/admin': { target: admin, changeOrigin: true },
          '/metrics': { target: admin, changeOrigin: true },
        },
      },
    };
  }
  const page = PAGES.find((p) => p === mode);
  if (page === undefined) throw new Error(`vite.config: build with --mode ${PAGES.join(' or --mode ')}, not "${mode}"`);
  return {
    ...jsx,
    root: `src/web/${page}`,
    base: '/',
    publicDir: false,
    logLevel: 'warn',
    build: {
      outDir: `../../../dist/web/${page}`,
      emptyOutDir: true,
      target: 'es2022',
      // Every file the page needs is its own request: no inlined data: URLs (the CSP allows them for images only).
      assetsInlineLimit: 0,
      modulePreload: { polyfill: false },
      reportCompressedSize: false,
    },
    plugins: [gzipReport(page)],
  };
});
