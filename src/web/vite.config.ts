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
// the exchange as if it served them. Build time (node, its main thread), run from the
// repository root (npm scripts).

import { defineConfig } from 'vite';

const PAGES = ['trader', 'console'] as const;

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
      reportCompressedSize: true,
    },
  };
});
