// The one exchange launcher of tests, tools and benchmarks, in two modes with
// the same settings (the names of ExchangeConfig, src/main/config.ts), the
// same defaults (127.0.0.1, ports chosen by the exchange, a fresh data
// directory, ADMIN_TOKEN) and the same end (the data directory the launcher
// made is removed when the exchange is stopped):
//
// - in-process, startTestExchange(): the whole exchange (engine thread,
//   gateway threads, keys service, control plane) inside the test
//   process, for black-box tests that also look at its internals
//   (`tx.ex.pipeline`, `tx.ex.config`);
// - child process, spawnExchange() / new ExchangeProcess():
//   `node dist/src/main/exchange.js <flags>`, for what needs a process of its
//   own: SIGKILL and restarts on the same data directory (crash and restart
//   tests), benchmarks that must not share an event loop with the load
//   generator, profiling through --inspect. Its ports come from its `ready`
//   line; its structured log lines (recovery, snapshot, warnings, errors)
//   are kept for checks.
//
// Main thread of the test, tool or benchmark process.

import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { AdminClient } from '../../src/client/admin_client.js';
import { DxClient } from '../../src/client/client.js';
import { closeFetchConnections } from '../../src/client/transport.js';
import { defaults, type ExchangeConfig } from '../../src/main/config.js';
import type { RunningExchange, StartOptions } from '../../src/main/exchange.js';
import { NodeChild, type Exit } from './child.js';

export const ADMIN_TOKEN = 'gateway-tests-admin-token-0123456789';
const HOST = '127.0.0.1';

/**
 * The response budget of an in-process test exchange. The tests check what
 * the exchange answers, not how fast a shared machine is: with two test
 * files at once a command's durable outcome can take more than the 1 s
 * default (a CI run's 504 in `dx admin key tier`; which stage waited was not
 * recorded). A longer budget also turns an answer that waits for its deadline
 * into a client timeout, where the 1 s budget answered it late and passed:
 * that is how the doorbell's lost wake-up was found (src/ring/doorbell.ts).
 * A test about the budget sets its own.
 */
export const TEST_RESPONSE_BUDGET_MS = 10_000;

function freshDataDir(): string {
  return mkdtempSync(join(tmpdir(), 'dx-exchange-'));
}

// ------------------------------------------------------------------ in-process

export interface TestExchange {
  ex: RunningExchange;
  port: number;
  base: string;
  accountsBase: string;
  adminBase: string;
  admin: AdminClient;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * An exchange inside this process, one gateway thread unless `over` says
 * otherwise. With several gateways and port 0 the exchange picks the public
 * port itself (uWebSockets.js shares a port between threads only when it is
 * not 0). A `data_dir` given in `over` is the caller's and stays.
 */
export async function startTestExchange(over: Partial<ExchangeConfig> = {}, opts: StartOptions = {}): Promise<TestExchange> {
  // The structured log reads DX_LOG_LEVEL once, when src/main/log.ts loads:
  // only errors in tests (set DX_LOG_LEVEL to see more), so the exchange's
  // modules are loaded after this line.
  process.env.DX_LOG_LEVEL ??= 'error';
  const { startExchange } = await import('../../src/main/exchange.js');
  const dataDir = over.data_dir ?? freshDataDir();
  const cfg: ExchangeConfig = {
    ...defaults(), port: 0, accounts_port: 0, admin_port: 0, admin_token: ADMIN_TOKEN, gateways: 1,
    response_budget_ms: TEST_RESPONSE_BUDGET_MS, ...over, data_dir: dataDir,
  };
  const ex = await startExchange(cfg, opts);
  const adminBase = `http://${HOST}:${ex.admin_port}`;
  return {
    ex,
    port: ex.port,
    base: `http://${HOST}:${ex.port}`,
    accountsBase: `http://${HOST}:${ex.accounts_port}`,
    adminBase,
    admin: new AdminClient({ baseUrl: adminBase, token: ex.admin_token }),
    dataDir,
    stop: async () => {
      // ex.stop() waits for every client connection to go away (see
      // startup.test.ts), and global fetch keeps idle connections for 4 s:
      // close them first so that each file ends at once.
      await closeFetchConnections();
      await ex.stop();
      if (over.data_dir === undefined) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// ------------------------------------------------------------------ child process

const EXCHANGE_JS = fileURLToPath(new URL('../../src/main/exchange.js', import.meta.url));
const READY_RE = /^ready rest=[0-9.]+:([0-9]+) accounts=[0-9.]+:([0-9]+) admin=[0-9.]+:([0-9]+) gateways=([0-9]+)/;

/** Settings of a child exchange: each one given becomes its flag (`snapshot_every: 10` -> `--snapshot-every 10`). */
export type ProcessConfig = Partial<Omit<ExchangeConfig, 'ws'>>;

export interface ProcessOptions {
  /** DX_LOG_LEVEL of the child; `info` (default) is needed for the recovery line. */
  logLevel?: 'info' | 'warn' | 'error';
  /** Node flags before the script, e.g. ['--inspect=127.0.0.1:9229']. */
  nodeArgs?: string[];
  /** Append every stderr line (the structured log) to this file too, for a post-mortem. */
  logFile?: string;
  /** A program that execs node in its place, e.g. ['prlimit', '--fsize=65536'] (see NodeChild). */
  launcher?: string[];
  /** More environment variables of the child (e.g. DX_JOURNAL_FAULT). */
  env?: Record<string, string>;
  /** The exchange's entry point: default this build's src/main/exchange.js (bench/gateway_ab.ts runs another build's). */
  script?: string;
}

export interface RecoveryLine {
  seq: number;
  snapshot: string | null;
  snapshot_seq: number;
  replayed_commands: number;
  segments: number;
  ms: number;
}

function flagsOf(cfg: ProcessConfig): string[] {
  const out: string[] = [];
  for (const [key, v] of Object.entries(cfg)) {
    if (v === undefined || v === null) continue;
    out.push(`--${key.replace(/_/g, '-')}`, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  return out;
}

/**
 * The exchange as a child process. Spawned at construction; `ready()` waits
 * for its `ready` line. Keeps the structured log lines other than operator
 * actions (there are thousands of those) and a stderr tail.
 */
export class ExchangeProcess {
  readonly child: NodeChild;
  readonly dataDir: string;
  readonly token: string;
  readyAt = 0;
  port = 0;
  accountsPort = 0;
  adminPort = 0;
  gateways = 0;
  private readonly ownsDataDir: boolean;
  private readonly logLines: Record<string, unknown>[] = [];
  /** Its stdout up to the `ready` line (the start-up text an operator reads). */
  readonly startupLines: string[] = [];
  private stopped: Promise<Exit & { killed: boolean }> | null = null;

  constructor(cfg: ProcessConfig = {}, o: ProcessOptions = {}) {
    this.ownsDataDir = cfg.data_dir === undefined;
    this.dataDir = cfg.data_dir ?? freshDataDir();
    this.token = cfg.admin_token ?? ADMIN_TOKEN;
    const args = [
      ...(o.nodeArgs ?? []),
      o.script ?? EXCHANGE_JS,
      ...flagsOf({
        host: HOST,
        admin_host: HOST,
        port: 0,
        accounts_port: 0,
        admin_port: 0,
        ...cfg,
        data_dir: this.dataDir,
        admin_token: this.token,
      }),
    ];
    this.child = new NodeChild('exchange', args, { ...process.env, DX_LOG_LEVEL: o.logLevel ?? 'info', ...o.env }, {
      onStdoutLine: (line) => this.onStdoutLine(line),
      onStderrLine: (line) => {
        if (o.logFile !== undefined) appendFileSync(o.logFile, `${line}\n`);
        this.onStderrLine(line);
      },
    }, o.launcher);
  }

  get pid(): number {
    return this.child.pid;
  }

  get exited(): Promise<Exit> {
    return this.child.exited;
  }

  get running(): boolean {
    return this.child.running;
  }

  get base(): string {
    return `http://${HOST}:${this.port}`;
  }

  get accountsBase(): string {
    return `http://${HOST}:${this.accountsPort}`;
  }

  get adminBase(): string {
    return `http://${HOST}:${this.adminPort}`;
  }

  /** Milliseconds from spawn to the `ready` line (0 before it). */
  get spawnToReadyMs(): number {
    return this.readyAt === 0 ? 0 : this.readyAt - this.child.spawnedAt;
  }

  stderrTail(): string {
    return this.child.stderrTail();
  }

  private onStdoutLine(line: string): void {
    if (this.readyAt === 0) this.startupLines.push(line);
    const m = READY_RE.exec(line);
    if (m && this.readyAt === 0) {
      this.readyAt = performance.now();
      this.port = Number(m[1]);
      this.accountsPort = Number(m[2]);
      this.adminPort = Number(m[3]);
      this.gateways = Number(m[4]);
    }
  }

  private onStderrLine(line: string): void {
    if (!line.startsWith('{')) return;
    let rec: Record<string, unknown>;
    try {
      rec = JSON.parse(line) as Record<string, unknown>;
    } catch (e) {
      if (e instanceof SyntaxError) return; // a partial or foreign line: the tail keeps it
      throw e;
    }
    if (rec.event === 'operator') return; // thousands of them; nothing to check
    if (this.logLines.length < 5000) this.logLines.push(rec);
  }

  /** Resolves at the `ready` line; rejects when the process exits first or after timeoutMs. */
  async ready(timeoutMs = 60_000): Promise<this> {
    await this.child.waitForLine(READY_RE, timeoutMs);
    return this;
  }

  /** Structured log lines with this `event` (operator actions are not kept). */
  events(event: string): Record<string, unknown>[] {
    return this.logLines.filter((l) => l.event === event);
  }

  /** The start log's `recovery` line without a `fault` (null before it is printed). */
  recovery(): RecoveryLine | null {
    const r = this.logLines.find((l) => l.event === 'recovery' && l.fault === undefined);
    if (!r) return null;
    return {
      seq: Number(r.seq), snapshot: (r.snapshot as string | null) ?? null, snapshot_seq: Number(r.snapshot_seq),
      replayed_commands: Number(r.replayed_commands), segments: Number(r.segments), ms: Number(r.ms),
    };
  }

  /** Log lines at level error (not kept beyond the first 5000 lines). */
  errors(): Record<string, unknown>[] {
    return this.logLines.filter((l) => l.level === 'error');
  }

  /** Recovery warnings (torn tails, rejected snapshots, removed empty segments). */
  recoveryFaults(): Record<string, unknown>[] {
    return this.logLines.filter((l) => l.event === 'recovery' && l.fault !== undefined);
  }

  admin(timeoutMs = 10_000): AdminClient {
    return new AdminClient({ baseUrl: this.adminBase, token: this.token, timeoutMs });
  }

  client(keyId: number, secret: string, timeoutMs = 5000): DxClient {
    return new DxClient({ baseUrl: this.base, keyId, secret, timeoutMs });
  }

  /** SIGKILL and wait for the exit. */
  kill(): Promise<Exit> {
    return this.child.kill();
  }

  /** SIGTERM, wait up to graceMs, then SIGKILL. */
  terminate(graceMs = 20_000): Promise<Exit & { killed: boolean }> {
    return this.child.terminate(graceMs);
  }

  /** terminate(), then remove the data directory when the launcher made it. Safe to call twice. */
  stop(graceMs = 15_000): Promise<Exit & { killed: boolean }> {
    this.stopped ??= this.terminate(graceMs).finally(() => {
      if (this.ownsDataDir) rmSync(this.dataDir, { recursive: true, force: true });
    });
    return this.stopped;
  }
}

/**
 * A child exchange that has printed its `ready` line. A start that fails is
 * killed (its data directory removed when the launcher made it) and, with
 * `attempts` > 1, tried again.
 */
export async function spawnExchange(
  cfg: ProcessConfig = {},
  o: ProcessOptions & { readyTimeoutMs?: number; attempts?: number } = {},
): Promise<ExchangeProcess> {
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < (o.attempts ?? 1); attempt++) {
    const ex = new ExchangeProcess(cfg, o);
    try {
      return await ex.ready(o.readyTimeoutMs ?? 60_000);
    } catch (e) {
      lastError = e as Error;
      await ex.kill();
      await ex.stop();
    }
  }
  throw lastError!;
}
