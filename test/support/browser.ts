// browser: Debian's Chromium (/usr/bin/chromium, `apt-get install chromium`)
// driven by playwright-core, headless, with a fresh profile per run, and the
// page helpers the browser suite shares: console errors collected per page,
// screenshots to test-results/ (the README's to docs/images/ too with
// UPDATE_SCREENSHOTS=1), and the Performance API figures of a load. Test
// process.

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM = process.env.DX_CHROMIUM ?? '/usr/bin/chromium';
const ROOT = fileURLToPath(new URL('../../../', import.meta.url)); // dist/test/support -> the repository
export const RESULTS_DIR = join(ROOT, 'test-results');
export const IMAGES_DIR = join(ROOT, 'docs', 'images');

export interface Browser {
  context: BrowserContext;
  close(): Promise<void>;
}

export async function launch(): Promise<Browser> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} not found: the browser suite needs Debian's chromium package (apt-get install chromium)`);
  }
  const profile = mkdtempSync(join(tmpdir(), 'dx-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync',
    ],
    viewport: { width: 1440, height: 1000 },
    timeout: 30_000,
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export interface Watched {
  page: Page;
  /** Console errors and uncaught exceptions, except the ones a step declared expected. */
  errors: string[];
  /** Runs `f` while console errors matching `re` are expected (e.g. the 401 a bad key gets). */
  expecting<T>(re: RegExp, f: () => Promise<T>): Promise<T>;
}

/** A new tab that records every console error and uncaught exception. */
export async function watchedPage(b: Browser): Promise<Watched> {
  const page = await b.context.newPage();
  const errors: string[] = [];
  let expected: RegExp | null = null;
  page.on('console', (m) => {
    if (m.type() !== 'error') return;
    const text = `${m.text()} (${m.location().url})`;
    if (expected !== null && expected.test(text)) return;
    errors.push(text);
  });
  page.on('pageerror', (e) => errors.push(`uncaught: ${e.stack ?? e.message}`));
  return {
    page,
    errors,
    expecting: async (re, f) => {
      expected = re;
      try {
        return await f();
      } finally {
        expected = null;
      }
    },
  };
}

/**
 * Saves test-results/<name>.png; a picture the README and docs/operations.md show (`readme`) is
 * also copied to docs/images/<name>.png when UPDATE_SCREENSHOTS=1.
 */
export async function screenshot(page: Page, name: string, o: { fullPage?: boolean; readme?: boolean } = {}): Promise<string> {
  mkdirSync(RESULTS_DIR, { recursive: true });
  const path = join(RESULTS_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage: o.fullPage === true });
  if (o.readme === true && process.env.UPDATE_SCREENSHOTS === '1') {
    mkdirSync(IMAGES_DIR, { recursive: true });
    copyFileSync(path, join(IMAGES_DIR, `${name}.png`));
  }
  return path;
}

export interface LoadTiming {
  /** Navigation start to DOMContentLoaded end, ms. */
  dom_content_loaded_ms: number;
  /** Navigation start to the load event end, ms. */
  load_ms: number;
  /** Navigation start to the page's own `dx-interactive` mark (its first form rendered, focused and usable), ms. */
  interactive_ms: number;
  /** Bytes transferred for the page and its assets. */
  transfer_bytes: number;
}

/** The Performance API's view of the current page's load (waits for the page's mark). */
export async function loadTiming(page: Page, mark = 'dx-interactive'): Promise<LoadTiming> {
  await page.waitForFunction((name) => performance.getEntriesByName(name, 'mark').length > 0, mark, { timeout: 10_000 });
  // Runs in the page (DOM types; this project's tsconfig has Node's, hence the structural casts).
  type Nav = { domContentLoadedEventEnd: number; loadEventEnd: number; transferSize: number };
  return page.evaluate((name) => {
    const nav = performance.getEntriesByType('navigation' as never)[0] as unknown as Nav;
    const res = performance.getEntriesByType('resource' as never) as unknown as Nav[];
    return {
      dom_content_loaded_ms: Math.round(nav.domContentLoadedEventEnd),
      load_ms: Math.round(nav.loadEventEnd),
      interactive_ms: Math.round(performance.getEntriesByName(name, 'mark')[0]!.startTime),
      transfer_bytes: nav.transferSize + res.reduce((a, r) => a + r.transferSize, 0),
    };
  }, mark);
}
