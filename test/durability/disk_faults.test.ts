// Disk faults under load, on the real exchange process: the journal's write
// fails (RLIMIT_FSIZE through prlimit: EFBIG from the kernel; a full tmpfs:
// ENOSPC, where this machine lets the test mount one), its fdatasync fails
// (EIO, through the test-only switch DX_JOURNAL_FAULT), a snapshot write
// fails, and the disk is full at start-up. In each case the exchange answers
// nothing that was not durable, stops with one clear error line and a
// non-zero exit (fail-stop; a snapshot failure alone is not fatal), and a
// start on a healthy disk recovers every acknowledged write, and no more
// than was synced (the synced marker, src/journal/cut.ts). Test process,
// main thread.

import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import type { DxClient } from '../../src/client/client.js';
import { closeFetchConnections } from '../../src/client/transport.js';
import type { Order } from '../../src/client/types.js';
import { EXIT_STORAGE } from '../../src/journal/faults.js';
import { attempt } from '../support/crash/outcome.js';
import { ExchangeProcess, type ProcessConfig, type ProcessOptions } from '../support/exchange.js';
import { sleep } from '../support/harness.js';

const TOKEN = 'disk-faults-test-token-0123456789abcdef';
const JOURNAL_JS = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));
const EXCHANGE_JS = fileURLToPath(new URL('../../src/main/exchange.js', import.meta.url));
const TRADERS = 8;

interface Trader {
  account: number;
  keyId: number;
  secret: string;
}

interface Acked {
  trader: number;
  coid: string;
  order_id: string;
}

function exchange(dir: string, cfg: ProcessConfig = {}, o: ProcessOptions = {}): ExchangeProcess {
  return new ExchangeProcess({ data_dir: dir, admin_token: TOKEN, durability: 'fsync', demo: false, gateways: 1, ...cfg }, o);
}

/** A market with an hour-long round and TRADERS funded accounts with one key each. */
async function setUp(s: ExchangeProcess): Promise<{ market: number; traders: Trader[] }> {
  const admin = s.admin();
  const { market_id } = await admin.createMarket({ title: 'disk faults', category: 0, position_limit: 0, fee_schedule_id: 0 });
  await admin.openRound(market_id, { strike: '100000000', close_ts: String(BigInt(Date.now() + 3_600_000) * 1_000_000n) });
  const traders: Trader[] = [];
  for (let i = 0; i < TRADERS; i++) {
    const { account_id } = await admin.createAccount();
    await admin.deposit(account_id, { amount: '100000000', ref: 'disk-faults' });
    const k = await admin.createKey(account_id, ['read', 'trade']);
    traders.push({ account: account_id, keyId: k.key_id, secret: k.secret });
  }
  return { market: market_id, traders };
}

/**
 * One lane per trader places resting buys (1 share at ticks 1..45, never
 * crossing) with fresh client_order_ids as fast as its write bucket allows,
 * until `until` says stop or the exchange stops answering. `onAcked` sees
 * the running count. Returns every acknowledged placement.
 */
async function trade(
  s: ExchangeProcess, market: number, traders: Trader[], tag: string, until: () => boolean, onAcked: (n: number) => void = () => undefined,
): Promise<Acked[]> {
  const acked: Acked[] = [];
  await Promise.all(traders.map(async (t, i) => {
    const c = s.client(t.keyId, t.secret, 3000);
    for (let n = 1; !until(); n++) {
      const coid = `${tag}${i + 1}${String(n).padStart(6, '0')}`;
      const outcome = n % 2 === 0 ? 'yes' : 'no';
      const req = { market_id: market, side: 'buy', outcome, tick: 1 + (n % 45), qty: 1, client_order_id: coid } as const;
      const out = await attempt(() => c.placeOrder(req));
      if (out.kind === 'ok') {
        acked.push({ trader: i, coid, order_id: out.body.order_id });
        onAcked(acked.length);
      } else if (out.kind === 'uncertain' && !s.running) {
        return;
      } else {
        await sleep(50); // 429 (the write bucket) or the fault in progress
      }
    }
  }));
  return acked;
}

/** Every order of the account (all are live resting buys here), by client_order_id. */
async function allOrders(c: DxClient): Promise<Map<string, Order>> {
  const out = new Map<string, Order>();
  let cursor: string | undefined;
  for (;;) {
    const page = await c.orders({ limit: 1000, ...(cursor ? { cursor } : {}) });
    for (const o of page.orders) {
      assert.ok(!out.has(o.client_order_id), `client_order_id ${o.client_order_id} listed twice`);
      out.set(o.client_order_id, o);
    }
    if (page.cursor === '') return out;
    cursor = page.cursor;
  }
}

/** Starts a healthy exchange on dir and checks that every acknowledged placement is there, once, with its order_id. */
async function recoversEverything(
  dir: string, traders: Trader[], acked: Acked[], minSeq: number, cfg: ProcessConfig = {},
): Promise<ExchangeProcess> {
  const s = await exchange(dir, cfg).ready();
  const rec = s.recovery();
  assert.ok(rec !== null && rec.seq >= minSeq, `recovered seq ${rec?.seq} is below the last durable seq ${minSeq}`);
  for (let i = 0; i < traders.length; i++) {
    const t = traders[i]!;
    const orders = await allOrders(s.client(t.keyId, t.secret));
    for (const a of acked.filter((x) => x.trader === i)) {
      const o = orders.get(a.coid);
      assert.ok(o !== undefined, `acknowledged order ${a.order_id} (client_order_id ${a.coid}) was lost`);
      assert.equal(o.order_id, a.order_id, `client_order_id ${a.coid}`);
    }
  }
  return s;
}

/** tools/journal.js verify on dir: its exit status and output. */
function verifyJournal(dir: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, [JOURNAL_JS, 'verify', '--data-dir', dir], { encoding: 'utf8' });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

/**
 * The journal-failure scenario: trade on a faulty exchange until it stops by
 * itself, then check how it stopped and recover on a healthy one.
 */
async function journalFailure(
  tag: string, cfg: ProcessConfig, o: ProcessOptions, code: string, hooks: { onAcked?: (n: number) => void; between?: () => void } = {},
): Promise<void> {
  const dir = cfg.data_dir ?? mkdtempSync(join(tmpdir(), `dx-disk-${tag}-`));
  let s = await exchange(dir, cfg, o).ready();
  try {
    const { market, traders } = await setUp(s);
    const deadline = Date.now() + 60_000;
    const acked = await trade(s, market, traders, tag === 'eio' ? '2' : '3', () => !s.running || Date.now() > deadline, hooks.onAcked);
    const exit = await Promise.race([s.exited, sleep(30_000).then(() => null)]);
    assert.ok(exit !== null, `the exchange did not stop on the ${code} fault within 60 s of trading (${acked.length} acknowledged)`);
    assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: EXIT_STORAGE, signal: null }, s.stderrTail());
    const failed = s.events('journal_failed');
    assert.equal(failed.length, 1, s.stderrTail());
    assert.equal(failed[0]!.code, code);
    assert.match(String(failed[0]!.message), new RegExp(`\\(${code}\\); stopping: nothing after seq [0-9]+ was acknowledged`));
    const durableSeq = Number(failed[0]!.durable_seq);
    // The synced marker (src/journal/cut.ts): written, or why not (a full disk may refuse it too).
    const marker = failed[0]!.synced_marker;
    assert.equal(typeof marker, 'string', s.stderrTail());
    if (code !== 'ENOSPC') assert.equal(marker, 'written');
    assert.ok(acked.length > 100, `only ${acked.length} placements were acknowledged before the fault`);
    // Nothing acknowledged lies past what was on disk when the journal failed.
    for (const a of acked) {
      assert.ok(Number(a.order_id) <= durableSeq, `order ${a.order_id} acknowledged, but the journal failed at durable seq ${durableSeq}`);
    }
    await closeFetchConnections();
    hooks.between?.();
    const { data_dir: _same, ...healthy } = cfg;
    s = await recoversEverything(dir, traders, acked, durableSeq, healthy);
    // With the marker, the start keeps exactly what was synced: whatever the failed run wrote after it is cut.
    const cuts = s.events('recovery').filter((l) => l.fault === 'unsynced_tail_cut');
    if (marker === 'written') {
      assert.equal(cuts.length, 1, s.stderrTail());
      assert.equal(cuts[0]!.synced_seq, durableSeq);
      assert.equal(s.recovery()!.seq, durableSeq);
    } else {
      assert.equal(cuts.length, 0, s.stderrTail());
    }
    // The recovered exchange takes writes again, and a clean stop leaves a sound journal.
    const t = traders[0]!;
    const p = await s.client(t.keyId, t.secret).placeOrder({ market_id: market, side: 'buy', outcome: 'yes', tick: 2, qty: 1 });
    assert.equal(p.status, 'resting');
    await closeFetchConnections();
    const x = await s.terminate(30_000);
    assert.equal(x.code, 0, s.stderrTail());
    const v = verifyJournal(dir);
    assert.equal(v.status, 0, v.out);
  } finally {
    await s.kill();
    await closeFetchConnections();
    if (cfg.data_dir === undefined) rmSync(dir, { recursive: true, force: true });
  }
}

test('disk faults: a journal write refused by the kernel (RLIMIT_FSIZE, EFBIG) stops the exchange; '
  + 'a healthy start recovers every acknowledged write', async () => {
  // Segments may grow to 4 MiB, files to 150 kB: the write that crosses it fails (a short write first, then EFBIG).
  await journalFailure('efbig', { segment_bytes: 4 << 20 }, { launcher: ['prlimit', '--fsize=150000'] }, 'EFBIG');
});

test('disk faults: a failed fdatasync (EIO) stops the exchange at once and is never retried; '
  + 'every acknowledged write survives', async () => {
  await journalFailure('eio', {}, { env: { DX_JOURNAL_FAULT: 'fdatasync@150' } }, 'EIO');
});

/** Mounts a tmpfs of `bytes` at a fresh directory; null when this machine does not allow it (not root, no CAP_SYS_ADMIN). */
function mountTmpfs(bytes: number): string | null {
  const dir = mkdtempSync(join(tmpdir(), 'dx-disk-tmpfs-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'dx-test', dir], { stdio: 'pipe' });
    return dir;
  } catch (e) {
    if ((e as { status?: number }).status === undefined) throw e;
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'pipe' });
  rmSync(dir, { recursive: true, force: true });
}

/** Writes zeros into `file` until the file system is full (ENOSPC). */
function fillUp(file: string): void {
  const chunk = Buffer.alloc(64 << 10);
  try {
    for (;;) writeFileSync(file, chunk, { flag: 'a' });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  }
}

test('disk faults: a full disk (tmpfs, ENOSPC) stops the exchange; a start on the full disk refuses with one clear line, '
  + 'twice, without touching the data; once space is freed every acknowledged write is back', async (t) => {
  const mnt = mountTmpfs(8 << 20);
  if (mnt === null) {
    t.skip('mounting a tmpfs is not allowed here (needs root); the RLIMIT_FSIZE case covers write failures');
    return;
  }
  try {
    const dir = join(mnt, 'data');
    mkdirSync(dir);
    const filler = join(mnt, 'filler');
    const cfg = { data_dir: dir, segment_bytes: 256 << 10 };
    // The disk fills up once 200 placements were acknowledged.
    let filled = false;
    const onAcked = (n: number): void => {
      if (n < 200 || filled) return;
      filled = true;
      fillUp(filler);
    };
    await journalFailure('enospc', cfg, {}, 'ENOSPC', {
      onAcked,
      between: () => {
        // Still full: the start refuses before it touches anything, the same way each time.
        const before = listing(dir);
        for (let i = 0; i < 2; i++) {
          const args = [
            EXCHANGE_JS, '--data-dir', dir, '--admin-token', TOKEN, '--demo', '0',
            '--port', '0', '--accounts-port', '0', '--admin-port', '0', '--segment-bytes', String(256 << 10),
          ];
          const r = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 30_000 });
          assert.equal(r.status, EXIT_STORAGE, r.stderr);
          assert.match(r.stderr, /^dx: cannot start: ENOSPC: the file system of .* has [0-9]+ bytes free; the journal needs at least one/m);
          assert.doesNotMatch(r.stderr, /    at /, 'a clear line, not a stack trace');
        }
        assert.deepEqual(listing(dir), before, 'a refused start changes nothing in the data directory');
        rmSync(filler);
      },
    });
  } finally {
    unmount(mnt);
  }
});

/** Every file under dir with its size. */
function listing(dir: string): string[] {
  const out: string[] = [];
  for (const sub of readdirSync(dir, { withFileTypes: true })) {
    if (!sub.isDirectory()) out.push(`${sub.name} ${readFileSync(join(dir, sub.name)).length}`);
    else for (const f of readdirSync(join(dir, sub.name))) out.push(`${sub.name}/${f} ${readFileSync(join(dir, sub.name, f)).length}`);
  }
  return out.sort();
}

test('disk faults: a file-size limit at start-up (no room for a segment header) is one clear line and the storage exit status, '
  + 'every time, and the data directory stays usable', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-disk-start-'));
  try {
    for (let i = 0; i < 2; i++) {
      const s = exchange(dir, {}, { launcher: ['prlimit', '--fsize=0'] });
      const exit = await Promise.race([s.exited, sleep(30_000).then(() => null)]);
      assert.ok(exit !== null, 'the refused start did not exit');
      assert.deepEqual({ code: exit.code, signal: exit.signal }, { code: EXIT_STORAGE, signal: null }, s.stderrTail());
      assert.match(s.stderrTail(), /dx: cannot start: EFBIG: file too large, write/);
    }
    const s = await exchange(dir).ready();
    await s.admin().createAccount();
    await closeFetchConnections();
    assert.equal((await s.terminate(30_000)).code, 0, s.stderrTail());
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('disk faults: a snapshot write that fails (EFBIG) is reported, leaves the previous snapshot, the journal and no temp file '
  + 'behind, and the exchange keeps trading', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-disk-snap-'));
  // Files may reach 64 KiB; segments rotate at 16 KiB, so only a snapshot can
  // pass the limit (about 100 bytes per resting order: a few hundred do).
  let s = await exchange(dir, { segment_bytes: 16 << 10 }, { launcher: ['prlimit', `--fsize=${64 << 10}`] }).ready();
  try {
    const { market, traders } = await setUp(s);
    let good = (await s.admin().snapshot()).path;
    let goodBytes = readFileSync(good);
    // Grow the state past the limit, taking snapshots on the way until one fails.
    let stop = false;
    const acked: Acked[] = [];
    const lanes = trade(s, market, traders, '4', () => stop).then((a) => acked.push(...a));
    const t0 = Date.now();
    let failure: unknown = null;
    while (failure === null && Date.now() - t0 < 60_000) {
      await sleep(300);
      const out = await attempt(() => s.admin(30_000).snapshot());
      // A request that timed out on a loaded machine says nothing: the next one joins the snapshot still being written.
      if (out.kind === 'uncertain' && /^(TimeoutError|AbortError)/.test(out.why)) continue;
      if (out.kind !== 'ok') failure = out;
      else [good, goodBytes] = [out.body.path, readFileSync(out.body.path)];
    }
    stop = true;
    await lanes;
    assert.ok(failure !== null, 'no snapshot failed within 60 s of trading');
    assert.ok(s.running, 'a failed snapshot must not stop the exchange');
    const logged = s.errors().filter((l) => l.event === 'snapshot_failed');
    assert.ok(logged.length >= 1 && /EFBIG/.test(String(logged[0]!.error)), `${JSON.stringify(failure)} ${JSON.stringify(s.errors())}`);
    const snaps = readdirSync(join(dir, 'snapshots')).sort();
    assert.ok(!snaps.some((n) => n.includes('.tmp-')), `temp files left: ${snaps.join(', ')}`);
    assert.equal(join(dir, 'snapshots', snaps.at(-1)!), good, 'the newest snapshot is still the last good one');
    assert.ok(readFileSync(good).equals(goodBytes), 'the last good snapshot is unchanged');
    // The exchange still answers and takes writes. The trading lanes drove
    // every key to the end of its write bucket (50/s): the write waits for a
    // token on 429, as a client does.
    const t = traders[0]!;
    const c = s.client(t.keyId, t.secret);
    const place = () => attempt(() => c.placeOrder({ market_id: market, side: 'buy', outcome: 'no', tick: 3, qty: 1 }));
    let p = await place();
    for (let i = 0; i < 10 && p.kind === 'refused' && p.code === 'rate_limited'; i++) {
      await sleep(100);
      p = await place();
    }
    assert.ok(p.kind === 'ok' && p.body.status === 'resting', JSON.stringify(p));
    await closeFetchConnections();
    assert.equal((await s.terminate(30_000)).code, 0, s.stderrTail());
    const v = verifyJournal(dir);
    assert.equal(v.status, 0, v.out);
    // A healthy start recovers from the newest good snapshot plus the journal after it, with every acknowledged order.
    s = await recoversEverything(dir, traders, acked, 0);
    assert.equal(s.recovery()!.snapshot, good);
    await closeFetchConnections();
  } finally {
    await s.kill();
    await closeFetchConnections();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('disk faults: DX_JOURNAL_FAULT accepts only fdatasync@N', async () => {
  const { journalIoFromEnv, FS_IO } = await import('../../src/journal/faults.js');
  assert.equal(journalIoFromEnv(undefined), FS_IO);
  assert.equal(journalIoFromEnv(''), FS_IO);
  assert.throws(() => journalIoFromEnv('fdatasync@0'), /expected fdatasync@N/);
  assert.throws(() => journalIoFromEnv('write@3'), /expected fdatasync@N/);
  const io = journalIoFromEnv('fdatasync@2');
  const fd = 2_000_000_000; // not open: the real fdatasync fails with EBADF
  assert.throws(() => io.fdatasync(fd), (e: NodeJS.ErrnoException) => e.code === 'EBADF');
  assert.throws(() => io.fdatasync(fd), (e: NodeJS.ErrnoException) => e.code === 'EIO' && e.syscall === 'fdatasync');
});
