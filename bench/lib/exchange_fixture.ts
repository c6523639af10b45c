// exchange_fixture: child processes for benchmarks that load a server over
// loopback. Starts the exchange (dist/src/main/exchange.js) and the uWS
// hello-world peer (dist/tools/loadgen/hello_server.js) as SEPARATE processes
// on fresh ports, waits for their ready lines, and stops them with SIGTERM
// (SIGKILL after a deadline). Also builds the trading population a load run
// needs through AdminClient / DxClient. Main thread of the bench runner only.
//
// Invariants:
// - Every child is registered until it has exited; a process 'exit' hook
//   SIGKILLs whatever is left, so a benchmark that throws never leaves a
//   server behind (callers still stop children in finally blocks).
// - Ports are chosen by binding port 0 with node:net first (which fails on a
//   port any other socket holds, SO_REUSEPORT or not: uWS listeners share
//   ports by default, so a stale server would otherwise silently take a share
//   of the connections), then handed to the child; a start that fails to
//   listen is retried on new ports.
// - Everything binds to 127.0.0.1.

import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../src/client/admin_client.js';
import { DxClient } from '../../src/client/client.js';
import type { Placement } from '../../src/client/types.js';

const HOST = '127.0.0.1';
const EXCHANGE_JS = fileURLToPath(new URL('../../src/main/exchange.js', import.meta.url));
const HELLO_JS = fileURLToPath(new URL('../../tools/loadgen/hello_server.js', import.meta.url));
const FASTIFY_JS = fileURLToPath(new URL('../peers/fastify_place.js', import.meta.url));

// ------------------------------------------------------------------ ports

/** A port that nothing on 127.0.0.1 holds right now (the kernel's pick for port 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.unref();
    s.once('error', reject);
    s.listen(0, HOST, () => {
      const a = s.address();
      const port = typeof a === 'object' && a !== null ? a.port : 0;
      s.close(() => (port > 0 ? resolve(port) : reject(new Error('no port from listen(0)'))));
    });
  });
}

// ------------------------------------------------------------------ children

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Synchronous last resort: 'exit' handlers cannot wait, so SIGKILL.
  process.on('exit', () => {
    for (const c of live) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
}

/** A spawned node process with line-buffered stdout and a bounded stderr tail. */
export class Child {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private readonly lines: string[] = [];
  private partial = '';
  private stderrTail = '';
  private readonly waiters: { re: RegExp; resolve: (m: RegExpExecArray) => void }[] = [];

  constructor(readonly label: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
    installExitHook();
    this.proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    if (this.proc.pid === undefined) throw new Error(`${label}: spawn failed`);
    this.pid = this.proc.pid;
    live.add(this.proc);
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => {
        live.delete(this.proc);
        resolve({ code, signal });
      });
    });
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stdout!.on('data', (s: string) => this.onStdout(s));
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (s: string) => {
      this.stderrTail = (this.stderrTail + s).slice(-4000);
    });
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** The last few KB of stderr (the exchange logs JSON lines there). */
  stderr(): string {
    return this.stderrTail;
  }

  private onStdout(s: string): void {
    const parts = (this.partial + s).split('\n');
    this.partial = parts.pop()!;
    for (const line of parts) {
      this.lines.push(line);
      for (let i = this.waiters.length - 1; i >= 0; i--) {
        const m = this.waiters[i]!.re.exec(line);
        if (m) {
          this.waiters[i]!.resolve(m);
          this.waiters.splice(i, 1);
        }
      }
    }
  }

  /** Resolves with the first stdout line matching `re`; rejects on exit or after timeoutMs. */
  async waitForLine(re: RegExp, timeoutMs: number): Promise<RegExpExecArray> {
    for (const line of this.lines) {
      const m = re.exec(line);
      if (m) return m;
    }
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        new Promise<RegExpExecArray>((resolve) => this.waiters.push({ re, resolve })),
        this.exited.then(({ code, signal }) => {
          throw new Error(`${this.label} exited (code ${code}, signal ${signal}) before printing ${re}; stderr: ${this.stderrTail.slice(-1500)}`);
        }),
        new Promise<never>((_r, reject) => {
          timer = setTimeout(() => reject(new Error(`${this.label}: no ${re} on stdout within ${timeoutMs} ms; stderr: ${this.stderrTail.slice(-1500)}`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** SIGTERM, wait up to graceMs for the exit, then SIGKILL. Resolves with how it ended. */
  async stop(graceMs = 10_000): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> {
    if (!this.running) return { ...(await this.exited), killed: false };
    this.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), graceMs)));
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== 'late') return { ...first, killed: false };
    this.proc.kill('SIGKILL');
    return { ...(await this.exited), killed: true };
  }
}

// ------------------------------------------------------------------ hello-world peer

export interface HelloServer {
  child: Child;
  port: number;
  url: string;
}

/** The uWS hello-world peer (tools/loadgen/hello_server.ts) on a fresh port. */
export async function startHello(): Promise<HelloServer> {
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = new Child('hello_server', [HELLO_JS, '--kind', 'uws', '--port', String(port)]);
    try {
      const m = await child.waitForLine(/^([0-9]+)$/, 10_000);
      if (Number(m[1]) !== port) throw new Error(`hello_server listens on ${m[1]}, asked for ${port}`);
      return { child, port, url: `http://${HOST}:${port}` };
    } catch (e) {
      lastError = e as Error;
      await child.stop(2000);
    }
  }
  throw lastError!;
}

// ------------------------------------------------------------------ Fastify peer

export interface FastifyPeer {
  child: Child;
  port: number;
  url: string;
  market_id: number;
  /** In-process set-up time of the peer (accounts, keys, deposits, seeded shares). */
  setup_ms: number;
  keys: { key_id: number; account_id: number; secret: string }[];
}

/**
 * The placement logic on Fastify / node:http (bench/peers/fastify_place.ts)
 * on a fresh port, with `keys` funded accounts holding `seed_shares` YES and
 * NO shares each (created by the peer itself, in-process).
 */
export async function startFastifyPeer(opts: { keys: number; seed_shares: number; deposit_cents?: number; nodeArgs?: string[] }): Promise<FastifyPeer> {
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const child = new Child('fastify_place', [
      ...(opts.nodeArgs ?? []), FASTIFY_JS, '--port', String(port), '--keys', String(opts.keys), '--seed-shares', String(opts.seed_shares),
      '--deposit', String(opts.deposit_cents ?? 100_000_000),
    ]);
    try {
      const m = await child.waitForLine(/^ready (\{.*\})$/, 60_000);
      const r = JSON.parse(m[1]!) as { port: number; market_id: number; setup_ms: number; keys: FastifyPeer['keys'] };
      if (r.port !== port) throw new Error(`fastify_place listens on ${r.port}, asked for ${port}`);
      return { child, port, url: `http://${HOST}:${port}`, market_id: r.market_id, setup_ms: r.setup_ms, keys: r.keys };
    } catch (e) {
      lastError = e as Error;
      await child.stop(2000);
    }
  }
  throw lastError!;
}

// ------------------------------------------------------------------ exchange

export interface ExchangeOptions {
  /** --gateways; default: the exchange's own default (cores - 1, at least 1). */
  gateways?: number;
  /** Extra node flags before the script, e.g. ['--cpu-prof', '--cpu-prof-dir=/tmp/p']. */
  nodeArgs?: string[];
  /** Default 'none' (the journal is not implemented yet). */
  durability?: 'none' | 'fsync';
}

export interface ExchangeProcess {
  child: Child;
  port: number;
  accounts_port: number;
  admin_port: number;
  gateways: number;
  token: string;
  data_dir: string;
  url: string;
  admin: AdminClient;
  /** SIGTERM and wait; removes the data dir. Safe to call twice. */
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }>;
}

export async function startExchange(opts: ExchangeOptions = {}): Promise<ExchangeProcess> {
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const [port, accountsPort, adminPort] = [await freePort(), await freePort(), await freePort()];
    if (new Set([port, accountsPort, adminPort]).size !== 3) continue;
    const dataDir = mkdtempSync(join(tmpdir(), 'dx-bench-'));
    const token = randomBytes(24).toString('base64url');
    const args = [
      ...(opts.nodeArgs ?? []), EXCHANGE_JS,
      '--host', HOST, '--admin-host', HOST,
      '--port', String(port), '--accounts-port', String(accountsPort), '--admin-port', String(adminPort),
      '--data-dir', dataDir, '--admin-token', token, '--durability', opts.durability ?? 'none',
    ];
    if (opts.gateways !== undefined) args.push('--gateways', String(opts.gateways));
    // The exchange logs every operator action at info; the setup makes
    // thousands of them, so only warnings and worse are worth the pipe.
    const child = new Child('exchange', args, { ...process.env, DX_LOG_LEVEL: 'warn' });
    try {
      const m = await child.waitForLine(/^ready rest=([0-9.]+):([0-9]+) accounts=[0-9.]+:([0-9]+) admin=[0-9.]+:([0-9]+) gateways=([0-9]+)/, 30_000);
      const got = [Number(m[2]), Number(m[3]), Number(m[4])];
      if (got[0] !== port || got[1] !== accountsPort || got[2] !== adminPort) {
        throw new Error(`exchange listens on ${got.join('/')}, asked for ${port}/${accountsPort}/${adminPort}`);
      }
      let stopped: Promise<{ code: number | null; signal: NodeJS.Signals | null; killed: boolean }> | null = null;
      return {
        child, port, accounts_port: accountsPort, admin_port: adminPort, gateways: Number(m[5]), token, data_dir: dataDir,
        url: `http://${HOST}:${port}`,
        admin: new AdminClient({ baseUrl: `http://${HOST}:${adminPort}`, token, timeoutMs: 30_000 }),
        stop() {
          stopped ??= child.stop(15_000).finally(() => rmSync(dataDir, { recursive: true, force: true }));
          return stopped;
        },
      };
    } catch (e) {
      lastError = e as Error;
      await child.stop(5000);
      rmSync(dataDir, { recursive: true, force: true });
    }
  }
  throw lastError!;
}

// ------------------------------------------------------------------ population

/** Runs `fn` over 0..n-1 with at most `concurrency` calls in flight; rejects on the first failure. */
export async function pool<T>(n: number, concurrency: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(n);
  let next = 0;
  const lanes: Promise<void>[] = [];
  for (let l = 0; l < Math.min(concurrency, n); l++) {
    lanes.push((async () => {
      for (let i = next++; i < n; i = next++) out[i] = await fn(i);
    })());
  }
  await Promise.all(lanes);
  return out;
}

/** One market with a round in `trading`, closing `closeInMs` from now. No fees, no position limit. */
export async function openMarket(admin: AdminClient, closeInMs = 3_600_000): Promise<number> {
  const { market_id } = await admin.createMarket({ title: 'bench: gateway placements', category: 0, position_limit: 0, fee_schedule_id: 0 });
  const closeNs = BigInt(Date.now() + closeInMs) * 1_000_000n;
  await admin.openRound(market_id, { strike: '100000000', close_ts: closeNs.toString() });
  return market_id;
}

export interface Trader {
  account_id: number;
  key_id: number;
  /** base64 of the 32 secret bytes. */
  secret: string;
}

export interface TraderOptions {
  /** Cents deposited on each account. */
  deposit_cents: number;
  /**
   * YES and NO shares each account holds before the run, so that sells are
   * real placements rather than insufficient_position rejects. 0: none.
   */
  seed_shares: number;
  /** Market the seed shares are minted in. */
  market_id: number;
  /** Requests in flight during the setup. */
  concurrency?: number;
}

export interface TraderSetup {
  traders: Trader[];
  setup_ms: number;
  /** Shares minted per outcome over all accounts (checks the seeding filled). */
  minted_per_outcome: number;
}

/**
 * n accounts, each with one read+trade key and a deposit, created
 * concurrently through the control plane; then, when seed_shares > 0, every
 * account buys seed_shares YES and seed_shares NO at tick 50 against another
 * account's opposite buy (a mint), in four waves so every wave crosses the
 * one before it exactly (same price, equal totals) and the book is empty
 * afterwards. n is rounded up to an even number for that pairing.
 */
export async function createTraders(ex: ExchangeProcess, n: number, opts: TraderOptions): Promise<TraderSetup> {
  const t0 = performance.now();
  const count = opts.seed_shares > 0 ? n + (n % 2) : n;
  const conc = opts.concurrency ?? 32;
  const admin = ex.admin;
  const traders = await pool(count, conc, async (): Promise<Trader> => {
    const { account_id } = await admin.createAccount();
    await admin.deposit(account_id, { amount: String(opts.deposit_cents), ref: 'bench' });
    const k = await admin.createKey(account_id, ['read', 'trade']);
    return { account_id, key_id: k.key_id, secret: k.secret };
  });
  let minted = 0;
  if (opts.seed_shares > 0) {
    const clients = traders.map((t) => new DxClient({ baseUrl: ex.url, keyId: t.key_id, secret: t.secret, timeoutMs: 30_000 }));
    const q = opts.seed_shares;
    const wave = async (parity: number, outcome: 'yes' | 'no', expectFilled: boolean): Promise<number> => {
      const idx = clients.map((_c, i) => i).filter((i) => i % 2 === parity);
      const placed = await pool(idx.length, conc, (j) =>
        clients[idx[j]!]!.placeOrder({ market_id: opts.market_id, side: 'buy', outcome, tick: 50, qty: q }));
      let filled = 0;
      for (const p of placed as Placement[]) {
        if (expectFilled && p.status !== 'filled') throw new Error(`seeding: a crossing buy ended ${p.status} (filled ${p.filled_qty}/${q})`);
        filled += p.filled_qty;
      }
      return filled;
    };
    await wave(0, 'yes', false); // even accounts bid YES 50: rests
    minted += await wave(1, 'no', true); // odd accounts bid NO 50: mints against them
    await wave(1, 'yes', false);
    minted += await wave(0, 'no', true);
    // Waves 2 and 4 each fill count/2 * q: every account now holds q YES and q NO.
    if (minted !== count * q) throw new Error(`seeding: minted ${minted} shares per outcome, expected ${count * q}`);
  }
  return { traders, setup_ms: Math.round(performance.now() - t0), minted_per_outcome: minted };
}
