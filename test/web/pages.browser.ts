// The web pages in a real browser (Debian's Chromium through playwright-core)
// against a real exchange running the demo (a series with short rounds, a
// simulated oracle, a market maker) on fresh 127.0.0.1 ports. One exchange,
// one browser, the steps in order: the trader page (cold load, a bad key, a
// keyboard sign-in, the ladders, an order placed, decreased and canceled, a
// fill and the balance, a round closing and settling, the ladder against
// GET .../orderbook after 60 s of trading), then the operator console (load,
// a bad token, the charts, freeze/propose/settle with the trader page
// following; a series created, its round frozen, unfrozen, proposed,
// disputed and voided; an account created and funded, a key created with
// chosen scopes and revoked, pending withdrawals confirmed and failed; each
// action confirmed first and checked against /admin, a client or the trader
// page). No console error is allowed on either page. Figures (load times,
// bundle size) go to the test's diagnostics and to
// test-results/web-figures.json; screenshots to test-results/ (and
// docs/images/ with UPDATE_SCREENSHOTS=1). `npm run test:web`.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, test, type TestContext } from 'node:test';
import type { Locator, Page } from 'playwright-core';
import { DxClient } from '../../src/client/client.js';
import { DxApiError } from '../../src/client/errors.js';
import type { Orderbook } from '../../src/client/types.js';
import type { RunningDemo } from '../../src/demo/demo.js';
import { startDemoFor } from '../../src/demo/start.js';
import { startTestExchange, type TestExchange } from '../support/exchange.js';
import { eventually, sleep } from '../support/harness.js';
import {
  RESULTS_DIR, launch, loadTiming, screenshot, watchedPage, type Browser, type LoadTiming, type Watched,
} from '../support/browser.js';

// What the callbacks given to page.evaluate / waitForFunction touch: they run
// in the page, while this project compiles with Node's types only.
interface PageElement {
  dataset: Record<string, string | undefined>;
  innerText: string;
  disabled: boolean;
  id: string;
}
declare const document: {
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): ArrayLike<PageElement> & Iterable<PageElement>;
  activeElement: PageElement | null;
};

const PERIOD_S = 40;
/** Long enough for the console to dispute a proposal by hand (two clicks and a 1 s poll) on a loaded machine. */
const DISPUTE_MS = 10_000;
/**
 * The target is interactive within 1 s on 127.0.0.1. A timed test on a
 * shared machine cannot hold a target (docs/testing.md records the measured
 * figures); this bound only catches a page that hangs.
 */
const LOAD_BOUND_MS = 5000;

let tx: TestExchange;
let demo: RunningDemo;
let browser: Browser;
let trader: Watched;
let operator: Watched;
let client: DxClient;
let market: number;
let t0: number;
const figures: Record<string, unknown> = {};

before(async () => {
  tx = await startTestExchange({ dispute_window_ms: DISPUTE_MS });
  // The exchange's log, loaded after the launcher set the log level (it reads it once, when it loads).
  const { log } = await import('../../src/main/log.js');
  const c = tx.ex.config;
  const d = await startDemoFor({
    host: c.host, port: tx.ex.port, admin_host: c.admin_host, admin_port: tx.ex.admin_port, admin_token: tx.ex.admin_token,
    data_dir: c.data_dir, period_s: PERIOD_S, log,
  });
  assert.ok(d, 'the demo started');
  demo = d;
  market = demo.market_id;
  t0 = Date.now();
  client = new DxClient({ baseUrl: tx.base, keyId: demo.trader.key_id, secret: demo.trader.secret });
  browser = await launch();
  trader = await watchedPage(browser);
  operator = await watchedPage(browser);
});

after(async () => {
  mkdirSync(RESULTS_DIR, { recursive: true });
  writeFileSync(join(RESULTS_DIR, 'web-figures.json'), `${JSON.stringify(figures, null, 2)}\n`);
  await browser?.close();
  await demo?.stop();
  await tx?.stop();
});

// ---- page readers ---------------------------------------------------------------------------

function text(page: Page, testid: string): Promise<string> {
  return page.locator(`[data-testid=${testid}]`).first().innerText();
}

/** Both ladders and the seq they are as of, read in one task (one rendered state). */
function pageBook(page: Page): Promise<{ yes: [number, number][]; no: [number, number][]; seq: string }> {
  return page.evaluate(() => {
    const rows = (side: string): [number, number][] => [...document.querySelectorAll(`[data-testid=ladder-${side}] tbody tr[data-tick]`)]
      .map((r) => [Number(r.dataset.tick), Number(r.dataset.qty)] as [number, number]);
    const seq = document.querySelector('[data-testid=book-seq]')?.dataset.seq ?? '0';
    return { yes: rows('yes'), no: rows('no'), seq };
  });
}

function dollarsToCents(s: string): bigint {
  return BigInt(s.replace(/[$,.]/g, ''));
}

async function until(what: string, cond: () => Promise<boolean>, ms = 10_000): Promise<void> {
  assert.ok(await eventually(cond, ms, 100), `timed out waiting for ${what}`);
}

/**
 * Clicks a console action's button inside `scope`, checks the confirmation
 * it asks (the question, read by a screen reader as the group's name) and
 * confirms it.
 */
async function confirmAction(scope: Locator, label: string, question: string): Promise<void> {
  await scope.getByRole('button', { name: label, exact: true }).click();
  const ask = scope.getByRole('group', { name: question, exact: true });
  await ask.waitFor();
  await ask.getByRole('button', { name: 'Confirm' }).click();
}

/**
 * Records a cold load's Performance API figures (the test's diagnostics and
 * web-figures.json) and fails only on a page that hangs.
 */
function coldLoad(t: TestContext, page: 'trader' | 'console', timing: LoadTiming): void {
  figures[`${page}_cold_load`] = timing;
  const { interactive_ms, dom_content_loaded_ms } = timing;
  t.diagnostic(`${page} interactive after ${interactive_ms} ms (DOMContentLoaded ${dom_content_loaded_ms} ms; target 1000 ms)`);
  assert.ok(timing.interactive_ms < LOAD_BOUND_MS, `${page} interactive after ${timing.interactive_ms} ms`);
}

/** A market's current round as GET /admin/markets lists it. */
async function adminRound(marketId: number): Promise<{ round_number: string; status: string; outcome: string }> {
  const m = (await tx.admin.markets()).markets.find((x) => x.market_id === marketId);
  assert.ok(m?.round, `market ${marketId} has a round in /admin/markets`);
  return m.round;
}

/** Places an order with the ticket; returns the result line. */
interface TicketOrder {
  side?: 'Buy' | 'Sell';
  outcome?: 'YES' | 'NO';
  tick: number;
  qty: number;
  tif?: string;
  postOnly?: boolean;
}

async function ticket(page: Page, o: TicketOrder): Promise<string> {
  const form = page.getByRole('region', { name: 'order ticket' });
  await form.getByRole('radio', { name: o.side ?? 'Buy', exact: true }).check();
  await form.getByRole('radio', { name: o.outcome ?? 'YES', exact: true }).check();
  await form.getByLabel(/^Price/).fill(String(o.tick));
  await form.getByLabel('Shares').fill(String(o.qty));
  await form.getByLabel('Time in force').selectOption(o.tif ?? 'gtc');
  await form.getByLabel(/^Post-only/).setChecked(o.postOnly === true);
  const before = await page.locator('[data-testid=ticket-result]').innerText();
  await form.getByRole('button', { name: /^(Buy|Sell) (YES|NO)$/ }).click();
  // A new answer replaces the old one (the same text twice would be a placement with the same outcome and a new id).
  await page.waitForFunction((old) => {
    const el = document.querySelector('[data-testid=ticket-result]')!;
    return el.innerText !== '' && el.innerText !== old && !document.querySelector('.ticket button[type=submit]')!.disabled;
  }, before);
  return page.locator('[data-testid=ticket-result]').innerText();
}

/**
 * Places a post-only YES buy a few ticks under the market maker's quotes
 * with the ticket; retries between rounds (409) and when the quotes moved
 * onto it (post_only_cross). Returns the order id and its tick.
 */
async function restingOrder(page: Page, qty: number): Promise<{ id: string; tick: number }> {
  for (let attempt = 0; attempt < 30; attempt++) {
    const m = await client.market(market);
    const tick = Math.max(1, Math.min(m.best_yes_bid || 50, m.best_yes_ask || 99) - 3);
    const r = await trader.expecting(/status of 409/, () => ticket(page, { tick, qty, postOnly: true }));
    const placed = new RegExp(`^order (\\d+) resting: filled 0, resting ${qty}$`).exec(r);
    if (placed) return { id: placed[1]!, tick };
    if (!/409 market_not_trading|post_only_cross/.test(r)) assert.fail(`unexpected placement answer: ${r}`);
    await sleep(500);
  }
  assert.fail('no resting order after 30 attempts');
}

// ---- trader page ------------------------------------------------------------------------------

test('web: the trader bundle is at most 150 KB gzip', () => {
  const dir = join(tx.ex.config.web_dir, 'trader');
  const files = [join(dir, 'index.html'), ...readdirSync(join(dir, 'assets')).map((f) => join(dir, 'assets', f))];
  const sizes = Object.fromEntries(files.map((f) => [f.slice(dir.length + 1), gzipSync(readFileSync(f), { level: 9 }).length]));
  const total = Object.values(sizes).reduce((a, b) => a + b, 0);
  figures.trader_bundle_gzip_bytes = total;
  figures.trader_bundle_files = sizes;
  assert.ok(total <= 150 * 1024, `trader page is ${total} bytes gzip`);
});

test(`trader page: a cold load's time to interactive is measured (Performance API) and under ${LOAD_BOUND_MS} ms; ` +
  'a bad key shows the 401 message', async (t) => {
  const page = trader.page;
  await page.goto(`${tx.base}/`);
  coldLoad(t, 'trader', await loadTiming(page));
  await screenshot(page, 'trader-signin');
  // The key id field has the focus: the page is usable by keyboard from the start.
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'key-id');

  await page.getByLabel('Key id').fill(String(demo.trader.key_id));
  await page.getByLabel('Secret (base64)').fill(randomBytes(32).toString('base64'));
  await trader.expecting(/status of 401/, async () => {
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
  });
  const alert = await page.getByRole('alert').innerText();
  assert.match(alert, /^401 unauthorized: missing or invalid credentials\. Check the key id and the secret/);
  await page.getByLabel('Secret (base64)').fill('too-short');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await until('the secret format message', async () => /base64 text/.test(await page.getByRole('alert').innerText()));
});

test('trader page: signs in by keyboard; the ladders fill from the demo market maker', async () => {
  const page = trader.page;
  await page.getByLabel('Key id').fill('');
  await page.getByLabel('Secret (base64)').fill('');
  await page.getByLabel('Key id').focus();
  await page.keyboard.type(String(demo.trader.key_id));
  await page.keyboard.press('Tab');
  await page.keyboard.type(demo.trader.secret);
  await page.keyboard.press('Tab'); // "remember for this tab"
  await page.keyboard.press('Tab'); // Sign in
  await page.keyboard.press('Enter');
  await page.locator('[data-testid=ladder-yes] tbody tr[data-tick]').first().waitFor({ timeout: 15_000 });
  await until('both ladders quoted', async () => {
    const b = await pageBook(page);
    return b.yes.length >= 3 && b.no.length >= 3;
  }, 15_000);
  assert.match(await page.getByRole('status', { name: /live data/ }).innerText(), /live/);
  const b = await pageBook(page);
  assert.ok(b.yes[0]![0] + b.no[0]![0] < 100, 'the best bids do not cross');
  assert.equal(await text(page, 'balance-available'), '$1,000.00');
});

test('trader page: an order placed with the ticket rests on the ladder and in open orders; decrease and cancel act on it', async () => {
  const page = trader.page;
  const placed = await restingOrder(page, 7);
  const id = placed.id;
  const row = page.locator(`[data-testid=open-orders] tr[data-order-id="${id}"]`);
  await row.waitFor();
  assert.equal(await row.getAttribute('data-remaining'), '7');
  const level = page.locator(`[data-testid=ladder-yes] tr[data-tick="${placed.tick}"]`);
  await until('the own order marked on the YES ladder', async () => /● 7/.test(await level.innerText()));
  assert.match(String(await level.getAttribute('class')), /own/);
  const rest = await client.orders({ status: ['resting'] });
  assert.ok(rest.orders.some((o) => o.order_id === id && o.remaining_qty === 7));

  await page.getByLabel(`New quantity for order ${id}`).fill('3');
  await page.getByRole('button', { name: `Decrease order ${id}` }).click();
  await until('remaining 3', async () => (await row.getAttribute('data-remaining')) === '3');
  await until('the ladder shows 3 of ours', async () => /● 3/.test(await level.innerText()));
  assert.equal((await client.orders({ status: ['resting'] })).orders.find((o) => o.order_id === id)?.remaining_qty, 3);

  // A double click sends one cancel (a second would be refused unknown_order and replace the answer).
  const deletes: string[] = [];
  const onRequest = (r: { method(): string; url(): string }): void => {
    if (r.method() === 'DELETE') deletes.push(new URL(r.url()).pathname);
  };
  page.on('request', onRequest);
  await page.getByRole('button', { name: `Cancel order ${id}` }).dblclick();
  await until('the order leaves open orders', async () => (await row.count()) === 0);
  await sleep(300);
  page.off('request', onRequest);
  assert.deepEqual(deletes, ['/v1/portfolio/orders/batch'], 'one double click on Cancel sends one DELETE');
  await until('the ladder no longer marks it', async () => (await page.locator('[data-testid=ladder-yes] tr.own').count()) === 0);
  assert.equal((await client.orders({ status: ['resting'] })).orders.some((o) => o.order_id === id), false);
});

test('trader page: an order whose answer was lost (504) is made once; a retry refused at the door (429) leaves it unknown; ' +
  'placing it again names the order the first try made', async () => {
    const page = trader.page;
    let posts = 0;
    const fail = (status: number, code: string): { status: number; contentType: string; body: string } => {
      const error = { code, num: null, origin: 'gateway', message: code, details: null };
      return { status, contentType: 'application/json', body: JSON.stringify({ error }) };
    };
    await page.route('**/v1/portfolio/orders', async (route) => {
      if (route.request().method() !== 'POST') return route.continue();
      const n = posts++;
      if (n === 0) await route.fetch(); // the exchange takes it; its answer is lost on the way
      if (n <= 1) return route.fulfill(n === 0 ? fail(504, 'sequencing_timeout') : fail(429, 'rate_limited'));
      return route.continue();
    });
    try {
      // The browser logs each refused request as a console error: these are the test's own.
      const first = await trader.expecting(/status of 504/, () => ticket(page, { tick: 2, qty: 4, postOnly: true }));
      const coid = /same client_order_id (\d+)\.$/.exec(first)?.[1];
      assert.ok(coid !== undefined, first);
      const second = await trader.expecting(/status of 429/, () => ticket(page, { tick: 2, qty: 4, postOnly: true }));
      assert.match(second, new RegExp(`same client_order_id ${coid}\\.$`), 'a retry refused at the door says nothing of the first try');
      const third = await trader.expecting(/status of 409/, () => ticket(page, { tick: 2, qty: 4, postOnly: true }));
      const made = (await client.orders({ client_order_id: coid })).orders;
      assert.equal(made.length, 1, `orders with client_order_id ${coid}`);
      assert.match(third, new RegExp(`^the first try made order ${made[0]!.order_id} \\((resting|rejected)\\)$`));
      await client.cancelBatch([made[0]!.order_id]); // per item: unknown_order when it was not resting
    } finally {
      await page.unroute('**/v1/portfolio/orders');
    }
  });

test('trader page: a crossing order fills; the fill, the position and the balance change show; a reject shows its code', async () => {
  const page = trader.page;
  const before = (await client.balance()).available;
  let id = '';
  for (let attempt = 0; attempt < 40 && id === ''; attempt++) {
    const r = await trader.expecting(/status of 409/, () => ticket(page, { tick: 99, qty: 3, tif: 'ioc' }));
    const filled = /^order (\d+) filled: filled 3, resting 0; fills (.+)$/.exec(r);
    if (filled) id = filled[1]!;
    else if (/409 market_not_trading/.test(r)) await sleep(500);
    else assert.fail(`unexpected placement answer: ${r}`);
  }
  assert.notEqual(id, '', 'the IOC buy filled');
  await page.locator(`[data-testid=fills] tr[data-order-id="${id}"]`).first().waitFor();
  const after = (await client.balance()).available;
  assert.ok(BigInt(after) < BigInt(before), 'the fill cost money');
  await until('the page shows the new balance', async () => dollarsToCents(await text(page, 'balance-available')) === BigInt(after));
  await until('the position', async () => /1\s+YES\s+3\s+0/.test(await text(page, 'positions')));
  // A reject: more than the balance can pay, shown with its code and message.
  const r = await trader.expecting(/status of (422|409)/, () => ticket(page, { tick: 99, qty: 1_000_000, tif: 'ioc' }));
  assert.match(r, /^(422 insufficient_balance|409 market_not_trading): /);
  await screenshot(page, 'trader-after-fill');
});

test('trader page: the round closes, is proposed and settles; the page follows it into the next round', async () => {
  const page = trader.page;
  const first = Number(await text(page, 'round-number'));
  const seen = new Set<string>();
  const deadline = Date.now() + (PERIOD_S + 30) * 1000;
  let next = first;
  while (Date.now() < deadline && next === first) {
    seen.add(await text(page, 'round-status'));
    next = Number(await text(page, 'round-number'));
    await sleep(100);
  }
  assert.ok(next > first, `a new round opened (saw ${[...seen].join(', ')})`);
  assert.ok(seen.has('proposed'), `the page showed the proposal during the ${DISPUTE_MS} ms dispute window (saw ${[...seen].join(', ')})`);
  const rounds = await client.rounds({ category: 1 });
  const old = rounds.rounds.find((x) => x.round_number === String(first))!;
  assert.equal(old.status, 'settled');
  assert.match(old.outcome, /^(yes|no)$/);
  assert.equal(await text(page, 'round-status'), 'trading');
  // Settlement paid the position out: the page agrees with the REST reads.
  await until('positions and balance as REST has them', async () => {
    const [pos, bal] = await Promise.all([client.positions(), client.balance()]);
    const shown = (await text(page, 'positions')).trim();
    const noPositions = pos.positions.length === 0 ? !/YES|NO/.test(shown.split('\n').slice(1).join(' ')) : true;
    return noPositions && dollarsToCents(await text(page, 'balance-available')) === BigInt(bal.available);
  });
});

test('trader page: after 60 s of demo trading the ladders equal GET /v1/markets/{id}/orderbook at the same as_of_seq', async () => {
  const page = trader.page;
  // Trade now and then meanwhile (one share, alternately taking the YES and
  // the NO side), so that the tape moves and the chart folds live trades.
  let lastTrade = 0;
  for (let i = 0; Date.now() - t0 < 60_000; i++) {
    const p = await client.placeOrder({ market_id: market, side: 'buy', outcome: i % 2 ? 'no' : 'yes', tick: 99, qty: 1, tif: 'ioc' })
      .catch((e: unknown) => (/market_not_trading/.test(String(e)) ? null : Promise.reject(e)));
    if (p !== null && p.fills.length > 0) lastTrade = p.fills[p.fills.length - 1]!.tick_yes;
    await sleep(3000);
  }
  assert.ok(lastTrade > 0, 'trades happened');
  const tape = (await client.trades(market, { limit: 1 })).trades[0]!;
  const chart = page.locator('[data-testid=chart]');
  const closes = async (): Promise<boolean> => (await chart.getAttribute('data-close')) === String(tape.tick_yes);
  await until('the chart\'s last candle closing at the last trade', closes);
  assert.ok(Number(await chart.getAttribute('data-bars')) >= 1);
  // The page shows the book as of its last delta, seq P. REST answers at S.
  // If P <= S once every delta up to S has arrived, no book change happened
  // in (P, S], so the book at P is the book at S: they must match. A delta
  // may still be on its way (a loaded machine), so the page has up to 3 s to
  // catch up; if it moves past S meanwhile, the comparison starts again.
  let compared = 0;
  let mismatch = '';
  for (let attempt = 0; attempt < 60 && compared === 0; attempt++) {
    const rest: Orderbook = await client.orderbook(market, 99);
    const wanted = JSON.stringify([rest.yes, rest.no]);
    let shown = await pageBook(page);
    for (const deadline = Date.now() + 3000; BigInt(shown.seq) <= BigInt(rest.as_of_seq) && Date.now() < deadline;) {
      if (JSON.stringify([shown.yes, shown.no]) === wanted) break;
      await sleep(100);
      shown = await pageBook(page);
    }
    if (BigInt(shown.seq) > BigInt(rest.as_of_seq)) continue; // the book moved after S: try again
    compared++;
    if (JSON.stringify([shown.yes, shown.no]) !== wanted) {
      mismatch = `page at ${shown.seq}: ${JSON.stringify(shown)}; REST at ${rest.as_of_seq}: ${JSON.stringify(rest)}`;
    }
    figures.ladder_check = {
      page_seq: shown.seq, rest_as_of_seq: rest.as_of_seq, levels: shown.yes.length + shown.no.length, attempts: attempt + 1,
    };
  }
  assert.equal(compared, 1, 'the book held still long enough to compare');
  assert.equal(mismatch, '');

  // The picture for the README and docs/operations.md: a resting order of ours on the ladder and in open orders.
  const { id } = await restingOrder(page, 12);
  await page.locator(`[data-testid=open-orders] tr[data-order-id="${id}"]`).waitFor();
  await until('the own order on the ladder', async () => (await page.locator('[data-testid=ladder-yes] tr.own').count()) === 1);
  await screenshot(page, 'trader', { fullPage: true, readme: true });
  await page.getByRole('button', { name: `Cancel order ${id}` }).click();
  await until('the order leaves open orders', async () => (await page.locator('[data-testid=open-orders] tbody tr').count()) === 0);
});

// ---- operator console ---------------------------------------------------------------------------

test(`console: a cold load's time to interactive is measured (Performance API) and under ${LOAD_BOUND_MS} ms; a bad token is 401; ` +
  'signed in, the charts and tables fill', async (t) => {
  const page = operator.page;
  await page.goto(`${tx.adminBase}/`);
  coldLoad(t, 'console', await loadTiming(page));
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'admin-token');
  await page.getByLabel('Operator token').fill('not-the-token');
  await operator.expecting(/status of 401/, async () => {
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').waitFor();
  });
  assert.match(await page.getByRole('alert').innerText(), /^401 unauthorized: missing or invalid bearer token/);
  await page.getByLabel('Operator token').fill(tx.ex.admin_token);
  await page.getByLabel('Operator token').press('Enter');
  await page.locator('[data-testid=engine-seq]').waitFor();
  const marketRow = page.locator(`[data-testid=rounds] tr[data-market-id="${market}"]`);
  await until('the rounds table lists the demo market', async () => (await marketRow.count()) === 1);
  await until('three fresh oracle sources', async () => ((await text(page, 'oracle-sources')).match(/fresh/g) ?? []).length === 3);
  const caption = page.locator('[data-testid=chart-throughput] figcaption');
  await until('the throughput chart has a value', async () => /engine commands\/s \d/.test(await caption.innerText()));
  await sleep(5000);
  assert.ok(Number(await text(page, 'engine-seq')) > 0);
  await until('the trader page\'s REST routes in the latency table', async () => /rest\/list_markets/.test(await text(page, 'routes')));
  await screenshot(page, 'console', { fullPage: true, readme: true });
});

test('console: the operator freezes, proposes and settles a round; the trader page follows', async () => {
  const page = operator.page;
  // A trading round with time to spare before it closes by itself.
  await until('a trading round with 15 s left', async () => {
    const r = await client.round(market);
    return r.status === 'trading' && Number(BigInt(r.close_ts) / 1_000_000n) - Date.now() > 15_000;
  }, (PERIOD_S + 20) * 1000);
  const round = await client.round(market);
  const row = page.locator(`[data-testid=rounds] tr[data-market-id="${market}"]`);
  await until('the console shows that round', async () => (await row.innerText()).includes(round.round_number));
  const of = `round ${round.round_number} of market ${market}?`;
  const act = async (label: string, question: string, status: string): Promise<void> => {
    await confirmAction(row, label, question);
    await until(`the console shows ${status}`, async () => (await row.locator('[data-testid=round-status]').innerText()) === status);
  };
  await act('Freeze', `Freeze ${of}`, 'frozen');
  await until('the trader page shows frozen', async () => (await text(trader.page, 'round-status')) === 'frozen');
  const refused = await trader.expecting(/status of 409/, () => ticket(trader.page, { tick: 50, qty: 1 }));
  assert.match(refused, /^409 market_not_trading: /);
  await act('Propose from oracle', `Propose from the oracle price, ${of}`, 'proposed');
  await until('the trader page shows proposed', async () => (await text(trader.page, 'round-status')) === 'proposed');
  const outcome = (await adminRound(market)).outcome.toUpperCase();
  await confirmAction(row, 'Settle', `Settle (pay out ${outcome}) ${of}`);
  const after = Number(round.round_number);
  await until('the trader page moves to the next round', async () => Number(await text(trader.page, 'round-number')) > after);
  const settled = (await client.rounds({ category: 1 })).rounds.find((r) => r.round_number === round.round_number)!;
  assert.equal(settled.status, 'settled');
  await until('the console shows the next round', async () => Number(await row.locator('[data-testid=round-number]').innerText()) > after);
});

/**
 * Fills the console's Create series form and double-clicks its button: one
 * request is sent (a second would be refused 409 and replace the answer).
 * Returns the market and first round the answer names.
 */
async function createSeriesByDoubleClick(page: Page, category: number): Promise<{ id: number; rn: string }> {
  await page.getByText('Create a series', { exact: true }).click();
  await page.getByLabel(/^Category/).fill(String(category));
  await page.getByLabel('Title', { exact: true }).fill('Console series');
  await page.getByLabel('Round length (s)').fill('900');
  const posts: string[] = [];
  const onRequest = (r: { method(): string; url(): string }): void => {
    if (r.method() === 'POST' && new URL(r.url()).pathname === '/admin/series') posts.push(r.url());
  };
  page.on('request', onRequest);
  await page.getByRole('button', { name: 'Create series' }).dblclick();
  const made = page.getByRole('status').filter({ hasText: /^series created: / });
  await made.waitFor();
  await sleep(500);
  page.off('request', onRequest);
  assert.equal(posts.length, 1, `one double click sent ${posts.length} POST /admin/series`);
  await made.waitFor();
  const created = /^series created: market (\d+), round (\d+)$/.exec(await made.innerText());
  assert.ok(created, `the answer names the market and its first round: ${await made.innerText()}`);
  return { id: Number(created[1]), rn: created[2]! };
}

test('console: creates a series; freezes and unfreezes its round, then freezes, proposes YES, disputes and voids it, each confirmed ' +
  'first; /admin and the trader page follow', async () => {
  const page = operator.page;
  const category = 7;
  const { id, rn } = await createSeriesByDoubleClick(page, category);
  const series = (await tx.admin.listSeries()).series.find((x) => x.category === category);
  assert.deepEqual(
    [series?.market_id, series?.title, series?.period_s, series?.active, series?.round?.round_number],
    [id, 'Console series', 900, true, rn],
  );

  // The trader page lists the new market (its markets list polls every 2 s); pick it and rest an order on it.
  const tp = trader.page;
  await tp.locator(`[data-testid=market-${id}] button`).waitFor();
  await tp.locator(`[data-testid=market-${id}] button`).click();
  await until('the trader page shows the new round', async () => (await text(tp, 'round-number')) === rn);
  const placed = /^order (\d+) resting: filled 0, resting 2$/.exec(await ticket(tp, { tick: 30, qty: 2, postOnly: true }));
  assert.ok(placed, 'a buy rests on the new market');
  const orderRow = tp.locator(`[data-testid=open-orders] tr[data-order-id="${placed[1]}"]`);
  await orderRow.waitFor();

  const row = page.locator(`[data-testid=rounds] tr[data-market-id="${id}"]`);
  await until('the console lists the new market', async () => (await row.count()) === 1);
  const of = `round ${rn} of market ${id}?`;
  const step = async (label: string, question: string, status: string): Promise<void> => {
    await confirmAction(row, label, question);
    await until(`the console shows ${status}`, async () => (await row.locator('[data-testid=round-status]').innerText()) === status);
    assert.equal((await adminRound(id)).status, status, '/admin/markets');
    await until(`the trader page shows ${status}`, async () => (await text(tp, 'round-status')) === status);
  };
  // Cancel asks nothing of the exchange.
  await row.getByRole('button', { name: 'Freeze', exact: true }).click();
  await row.getByRole('group', { name: `Freeze ${of}` }).getByRole('button', { name: 'Cancel' }).click();
  await sleep(1500);
  assert.equal((await adminRound(id)).status, 'trading', 'a canceled confirmation froze the round');

  await step('Freeze', `Freeze ${of}`, 'frozen');
  await until('the freeze canceled the resting order', async () => (await orderRow.count()) === 0);
  const gone = (await client.orders({ limit: 1000 })).orders.find((o) => o.order_id === placed[1]);
  assert.equal(gone?.reason, 'round_frozen');
  await step('Unfreeze', `Unfreeze ${of}`, 'trading');
  await step('Freeze', `Freeze ${of}`, 'frozen');
  await step('Propose YES', `Propose YES for ${of}`, 'proposed');
  assert.equal(await row.locator('td').nth(6).innerText(), 'YES');
  assert.equal((await adminRound(id)).outcome, 'yes');
  await step('Dispute', `Dispute ${of}`, 'frozen');
  assert.equal((await adminRound(id)).outcome, '', 'the dispute withdrew the proposal');
  await confirmAction(row, 'Void', `Void (pay 50¢ per share) ${of}`);
  // The series opens its next round at once (the demo's oracle is fresh): the voided one is in the round history.
  const shownRound = async (): Promise<number> => Number(await row.locator('[data-testid=round-number]').innerText());
  await until('the console shows the next round', async () => (await shownRound()) > Number(rn));
  const voided = (await client.rounds({ category })).rounds.find((r) => r.round_number === rn);
  assert.deepEqual([voided?.status, voided?.outcome], ['void', '']);
  await until('the trader page follows into the next round', async () => Number(await text(tp, 'round-number')) > Number(rn));
  await tp.locator(`[data-testid=market-${market}] button`).click();
  const title = tp.locator('#market-title');
  await until('the trader page is back on the demo market', async () => (await title.innerText()).includes(`market ${market}`));
});

test('console: creates an account and deposits; creates a key with the read and withdraw scopes; confirms one pending ' +
  'withdrawal and fails another; revokes the key; /admin and the key\'s own reads follow', async () => {
  const page = operator.page;
  const panel = page.locator('section[aria-labelledby=accounts-title]');
  await confirmAction(panel, 'Create account', 'Create a new account?');
  const made = panel.getByRole('status').filter({ hasText: /^account \d+ created$/ });
  await made.waitFor();
  const account = Number(/\d+/.exec(await made.innerText())![0]);
  const view = panel.locator('[data-testid=account]');
  await until('the console shows the new account', async () => new RegExp(`Account\\s+${account}\\b`).test(await view.innerText()));
  assert.equal((await tx.admin.account(account)).available, '0');

  await panel.getByLabel('Deposit (¢)').fill('50000');
  await confirmAction(panel, 'Deposit', `Credit 50000¢ to account ${account}?`);
  await panel.getByRole('status').filter({ hasText: /^deposited \(seq \d+\)$/ }).waitFor();
  await until('the console shows $500.00 available', async () => (await view.innerText()).includes('$500.00'));
  assert.equal((await tx.admin.account(account)).available, '50000');

  // Grant read and withdraw, not trade.
  await panel.getByRole('checkbox', { name: 'trade' }).uncheck();
  await panel.getByRole('checkbox', { name: 'withdraw' }).check();
  await confirmAction(panel, 'Create key', `Create a key with read, withdraw for account ${account}?`);
  const secret = await panel.locator('[data-testid=new-secret]').innerText();
  const keyMade = await panel.getByRole('status').filter({ hasText: /^key \d+ created$/ }).innerText();
  const keyId = Number(/\d+/.exec(keyMade)![0]);
  const keyRow = panel.locator(`[data-testid=keys] tr[data-key-id="${keyId}"]`);
  await until('the keys table lists the key as live', async () => /read, withdraw\s+live/.test(await keyRow.innerText()));
  const keys = (await tx.admin.account(account)).keys;
  assert.deepEqual(keys.map((k) => [k.key_id, k.scopes, k.revoked]), [[keyId, ['read', 'withdraw'], false]]);
  const holder = new DxClient({ baseUrl: tx.base, keyId, secret });
  assert.equal((await holder.balance()).available, '50000');
  await assert.rejects(
    holder.placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 1, qty: 1 }),
    (e: unknown) => e instanceof DxApiError && e.status === 403 && e.code === 'missing_scope',
  );

  const a = await holder.withdraw({ client_withdrawal_id: '1', amount: '100', destination: 'bank:console-a' });
  const b = await holder.withdraw({ client_withdrawal_id: '2', amount: '200', destination: 'bank:console-b' });
  const wpanel = page.locator('section[aria-labelledby=withdrawals-title]');
  const rowA = wpanel.locator(`tr[data-wid="${a.wid}"]`);
  const rowB = wpanel.locator(`tr[data-wid="${b.wid}"]`);
  await rowA.waitFor();
  await rowB.waitFor();
  await confirmAction(rowA, 'Confirm', 'Send $1.00 to bank:console-a?');
  await until('the confirmed withdrawal leaves the list', async () => (await rowA.count()) === 0);
  await confirmAction(rowB, 'Fail', `Fail withdrawal ${b.wid} (the money returns)?`);
  await until('the failed withdrawal leaves the list', async () => (await rowB.count()) === 0);
  const pending = (await tx.admin.pendingWithdrawals()).withdrawals.filter((w) => w.account_id === account);
  assert.deepEqual(pending, []);
  assert.equal((await holder.withdrawal('1')).status, 'confirmed');
  assert.equal((await holder.withdrawal('2')).status, 'failed');
  const bal = await holder.balance();
  assert.deepEqual([bal.available, bal.reserved], ['49900', '0'], 'the confirmed 100 left, the failed 200 came back');

  await confirmAction(keyRow, 'Revoke', `Revoke key ${keyId} (its sessions close at once)?`);
  await until('the keys table shows the key revoked', async () => /\brevoked\b/.test(await keyRow.innerText()));
  assert.deepEqual((await tx.admin.account(account)).keys.map((k) => [k.key_id, k.revoked]), [[keyId, true]]);
  await assert.rejects(holder.balance(), (e: unknown) => e instanceof DxApiError && e.status === 401);
});

test('console: the money panel shows the ledger (what was withdrawn, whether it adds up); the fee schedules panel every schedule',
  async () => {
    const page = operator.page;
    const money = page.locator('[data-testid=ledger]');
    const field = (name: string): Promise<string> => money.locator(`[data-field=${name}]`).innerText();
    const cents = (text: string): bigint => BigInt(text.replace(/[$,.]/g, ''));
    const ledger = await tx.admin.ledger();
    assert.ok(BigInt(ledger.withdrawn) > 0n, 'the test before confirmed a withdrawal');
    await until('the money panel shows what was withdrawn', async () => cents(await field('withdrawn')) === BigInt(ledger.withdrawn));
    assert.equal(await field('balanced'), 'yes');
    assert.match(await field('collateral'), /^\$[\d,]+\.\d\d \(\d+ open pairs\)$/);
    const schedules = (await tx.admin.feeSchedules()).fee_schedules;
    assert.ok(schedules.length > 0, 'the demo made a fee schedule');
    for (const f of schedules) {
      const row = page.locator(`[data-testid=fee-schedules] tr[data-fee-schedule-id="${f.fee_schedule_id}"]`);
      await row.waitFor();
      assert.deepEqual((await row.locator('td').allInnerTexts()).map((t) => t.trim()),
        [String(f.fee_schedule_id), `${f.taker_bps} bps`, `${f.maker_bps} bps`]);
    }
  });

test('console: each deposit credits (deposits are idempotent by ref); one whose answer was lost (504) and is deposited again ' +
  'lands once', async () => {
  const page = operator.page;
  const { account_id } = await tx.admin.createAccount();
  const panel = page.locator('section[aria-labelledby=accounts-title]');
  await panel.getByLabel('Account id').fill(String(account_id));
  await panel.getByRole('button', { name: 'Show', exact: true }).click();
  await panel.locator('[data-testid=account]').waitFor();
  const available = async (): Promise<string> => (await tx.admin.account(account_id)).available;
  const deposited = panel.getByRole('status').filter({ hasText: /^deposited \(seq \d+\)$/ });
  for (const total of ['50000', '100000']) {
    await panel.getByLabel('Deposit (¢)').fill('50000');
    await confirmAction(panel, 'Deposit', `Credit 50000¢ to account ${account_id}?`);
    await deposited.waitFor();
    await until(`${total} available`, async () => (await available()) === total);
  }
  // The exchange takes the next one, and its answer is lost on the way: the same deposit again reuses its ref.
  let posts = 0;
  await page.route('**/admin/accounts/*/deposits', async (route) => {
    if (posts++ > 0) return route.continue();
    await route.fetch();
    const error = { code: 'sequencing_timeout', num: null, origin: 'gateway', message: 'sequencing_timeout', details: null };
    return route.fulfill({ status: 504, contentType: 'application/json', body: JSON.stringify({ error }) });
  });
  await panel.getByLabel('Deposit (¢)').fill('25000');
  await operator.expecting(/status of 504/, async () => {
    await confirmAction(panel, 'Deposit', `Credit 25000¢ to account ${account_id}?`);
    await panel.getByRole('alert').filter({ hasText: /^504 sequencing_timeout/ }).waitFor();
  });
  await confirmAction(panel, 'Deposit', `Credit 25000¢ to account ${account_id}?`);
  await deposited.waitFor();
  await page.unroute('**/admin/accounts/*/deposits');
  assert.equal(posts, 2);
  assert.equal(await available(), '125000', 'the deposit whose answer was lost landed once');
});

test('trader page: signing out while the first markets read is on its way stops every request signed with the key', async () => {
  const a = await tx.admin.createAccount();
  const k = await tx.admin.createKey(a.account_id, ['read', 'trade']);
  const late = await watchedPage(browser);
  const page = late.page;
  let delayed = false;
  await page.route('**/v1/markets?limit=1000', async (r) => {
    if (!delayed) {
      delayed = true;
      await sleep(1500); // a slow network: the sign-out comes first
    }
    await r.continue();
  });
  const signedAfter: string[] = [];
  let signedOut = false;
  page.on('request', (req) => {
    if (signedOut && req.headers()['dx-access-key'] === String(k.key_id)) signedAfter.push(req.url());
  });
  await page.goto(`${tx.base}/`);
  await page.getByLabel('Key id').fill(String(k.key_id));
  await page.getByLabel('Secret (base64)').fill(k.secret);
  await page.getByRole('button', { name: 'Sign in' }).click();
  const signOut = page.getByRole('button', { name: 'Sign out' });
  await signOut.waitFor();
  await signOut.click();
  signedOut = true;
  await page.getByRole('button', { name: 'Sign in' }).waitFor();
  await sleep(6000); // three periods of the markets poll
  assert.deepEqual(signedAfter, [], 'requests signed with the key after sign-out');
  assert.deepEqual(late.errors, []);
  await page.close();
});

test('web: no console errors on either page', () => {
  assert.deepEqual(trader.errors, [], 'trader page');
  assert.deepEqual(operator.errors, [], 'operator console');
});
