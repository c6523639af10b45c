// crash_test: the crash proof of issue 4. Starts the real exchange as a child
// process (`node dist/src/main/exchange.js ... --durability fsync`), drives
// placements, cancels, decreases, fills between accounts, deposits and
// withdrawals (request, operator confirm/fail) through the client library on
// several connections at once, SIGKILLs the process at random moments (and
// now and then while it is still recovering), restarts it on the same data
// directory and checks the client-side ledger against what the restarted
// exchange serves:
//
//   - every command answered 2xx is there with the same seq and effects
//     (orders by order_id and client_order_id, their fills, acknowledged
//     cancels and decreases; withdrawals by client_withdrawal_id, with their
//     wid, seq and status; deposits in the exact balance of the non-trading
//     funding accounts);
//   - nothing shown before the kill is gone: the recovered seq is at least
//     every seq or as_of_seq any answer carried, and every new seq, order id,
//     wid and account id is above everything seen before the kill;
//   - a command cut off by the kill (transport error, timeout, 504) is looked
//     up and retried: a placement retry must be refused 409
//     duplicate_client_order_id naming the same order when it had landed and
//     must land exactly once otherwise; a withdrawal retry must answer the
//     same wid when it had landed; deposits carry no idempotency key (the
//     control plane's DepositBody has none), so an interrupted deposit is
//     resolved by the exact balance of its account and never retried;
//   - a refusal that the gateway answers before sequencing (400/429/503) never
//     shows up as an order;
//   - per trading account, cash, reservations and positions equal what its
//     own fills and live orders imply (no fees: fee schedule 0, because the
//     API does not expose fees_collected); accounts retired in an earlier
//     epoch stay bit-for-bit the same; over all accounts, available +
//     reserved + 100 x open pairs == deposits - confirmed withdrawals;
//   - gtd orders whose expiry passed (possibly while the exchange was down)
//     are no longer live;
//   - a final SIGTERM exits 0 and the restart after it loses nothing either.
//
// Usage: node dist/tools/crash_test.js --kills N [--seed S] [--gateways G]
//        [--traders T] [--load-ms MIN..MAX] [--verify] [--keep] [--json]
// Exit 0 when every check held, 1 on any violation (a report lists each),
// 2 on bad usage. Exports runCrashTest (test/durability/crash.test.ts) and
// ExchangeServer (also used by restart.test.ts and bench/durable_place.ts).
// Main thread of its own process; the exchange runs in a child process.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeFetchConnections } from '../src/client/transport.js';
export { closeFetchConnections };
import { appendFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { AdminClient } from '../src/client/admin_client.js';
import { DxClient } from '../src/client/client.js';
import { DxApiError } from '../src/client/errors.js';
import type { AdminAccount, Fill, Order, OrderRequest, Placement, PlacementFill, Position, Side } from '../src/client/types.js';

const EXCHANGE_JS = fileURLToPath(new URL('../src/main/exchange.js', import.meta.url));
const JOURNAL_TOOL_JS = fileURLToPath(new URL('./journal.js', import.meta.url));
const HOST = '127.0.0.1';

// ------------------------------------------------------------------ seeded choices

/** mulberry32: small, seedable, good enough to pick operations reproducibly. */
export class Rng {
  private s: number;

  constructor(seed: number) {
    this.s = seed >>> 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    let t = (this.s = (this.s + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Uniform integer in [lo, hi]. */
  int(lo: number, hi: number): number {
    return lo + Math.floor(this.next() * (hi - lo + 1));
  }

  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)]!;
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

// ------------------------------------------------------------------ the exchange process

export interface ServerOptions {
  dataDir: string;
  token: string;
  durability?: 'fsync' | 'none';
  gateways?: number;
  snapshotEvery?: number;
  segmentBytes?: number;
  /** --verify 1: the engine's O(n) invariant checker after every command. */
  verify?: boolean;
  /** DX_LOG_LEVEL of the child; `info` (default) is needed for the recovery line. */
  logLevel?: 'info' | 'warn' | 'error';
  /** Node flags before the script. */
  nodeArgs?: string[];
  /** More exchange flags after the ones above (e.g. replication's). */
  extraArgs?: string[];
  /** Append the child's stderr (its log) to this file too. */
  logFile?: string;
}

export interface RecoveryLine {
  seq: number;
  snapshot: string | null;
  snapshot_seq: number;
  replayed_commands: number;
  segments: number;
  ms: number;
}

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // 'exit' handlers cannot wait: SIGKILL whatever is still running, so a
  // failed run never leaves an exchange behind.
  process.on('exit', () => {
    for (const c of liveChildren) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  });
}

const READY_RE = /^ready rest=[0-9.]+:([0-9]+) accounts=[0-9.]+:([0-9]+) admin=[0-9.]+:([0-9]+) gateways=([0-9]+)/;

/**
 * The exchange as a child process on port 0 (it picks free ports and prints
 * them on its `ready` line). Keeps the structured log lines other than
 * operator actions (recovery, snapshot, warnings, errors) and a stderr tail.
 */
export class ExchangeServer {
  readonly proc: ChildProcess;
  readonly pid: number;
  readonly spawnedAt = performance.now();
  readonly exited: Promise<Exit>;
  readyAt = 0;
  port = 0;
  accountsPort = 0;
  adminPort = 0;
  gateways = 0;
  private stdoutPartial = '';
  private stderrPartial = '';
  private tail = '';
  private readonly logLines: Record<string, unknown>[] = [];
  private readonly readyWaiters: (() => void)[] = [];

  constructor(readonly opts: ServerOptions) {
    installExitHook();
    const args = [
      ...(opts.nodeArgs ?? []), EXCHANGE_JS,
      '--host', HOST, '--admin-host', HOST, '--port', '0', '--accounts-port', '0', '--admin-port', '0',
      '--data-dir', opts.dataDir, '--admin-token', opts.token, '--durability', opts.durability ?? 'fsync',
      '--demo', '0',
    ];
    if (opts.gateways !== undefined) args.push('--gateways', String(opts.gateways));
    if (opts.snapshotEvery !== undefined) args.push('--snapshot-every', String(opts.snapshotEvery));
    if (opts.segmentBytes !== undefined) args.push('--segment-bytes', String(opts.segmentBytes));
    if (opts.verify) args.push('--verify', '1');
    if (opts.extraArgs) args.push(...opts.extraArgs);
    this.proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DX_LOG_LEVEL: opts.logLevel ?? 'info' } });
    if (this.proc.pid === undefined) throw new Error('exchange: spawn failed');
    this.pid = this.proc.pid;
    liveChildren.add(this.proc);
    this.exited = new Promise((resolve) => {
      this.proc.once('exit', (code, signal) => {
        liveChildren.delete(this.proc);
        resolve({ code, signal });
      });
    });
    this.proc.stdout!.setEncoding('utf8');
    this.proc.stdout!.on('data', (s: string) => this.onStdout(s));
    this.proc.stderr!.setEncoding('utf8');
    this.proc.stderr!.on('data', (s: string) => this.onStderr(s));
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  get base(): string {
    return `http://${HOST}:${this.port}`;
  }

  get adminBase(): string {
    return `http://${HOST}:${this.adminPort}`;
  }

  /** Milliseconds from spawn to the `ready` line (0 before it). */
  get spawnToReadyMs(): number {
    return this.readyAt === 0 ? 0 : this.readyAt - this.spawnedAt;
  }

  stderrTail(): string {
    return this.tail;
  }

  private onStdout(s: string): void {
    const parts = (this.stdoutPartial + s).split('\n');
    this.stdoutPartial = parts.pop()!;
    for (const line of parts) {
      const m = READY_RE.exec(line);
      if (m && this.readyAt === 0) {
        this.readyAt = performance.now();
        this.port = Number(m[1]);
        this.accountsPort = Number(m[2]);
        this.adminPort = Number(m[3]);
        this.gateways = Number(m[4]);
        for (const w of this.readyWaiters.splice(0)) w();
      }
    }
  }

  private onStderr(s: string): void {
    if (this.opts.logFile !== undefined) appendFileSync(this.opts.logFile, s);
    this.tail = (this.tail + s).slice(-6000);
    const parts = (this.stderrPartial + s).split('\n');
    this.stderrPartial = parts.pop()!;
    for (const line of parts) {
      if (!line.startsWith('{')) continue;
      let rec: Record<string, unknown>;
      try {
        rec = JSON.parse(line) as Record<string, unknown>;
      } catch (e) {
        if (e instanceof SyntaxError) continue; // a partial or foreign line: the tail keeps it
        throw e;
      }
      if (rec.event === 'operator') continue; // thousands of them; nothing to check
      if (this.logLines.length < 5000) this.logLines.push(rec);
    }
  }

  /** Resolves at the `ready` line; rejects when the process exits first or after timeoutMs. */
  async ready(timeoutMs = 60_000): Promise<this> {
    if (this.readyAt !== 0) return this;
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        new Promise<void>((r) => this.readyWaiters.push(r)),
        this.exited.then((x) => {
          throw new Error(`exchange exited (code ${x.code}, signal ${x.signal}) before its ready line; stderr: ${this.tail.slice(-3000)}`);
        }),
        new Promise<never>((_r, reject) => {
          timer = setTimeout(() => reject(new Error(`exchange: no ready line within ${timeoutMs} ms; stderr: ${this.tail.slice(-3000)}`)), timeoutMs);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
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
    return new AdminClient({ baseUrl: this.adminBase, token: this.opts.token, timeoutMs });
  }

  client(keyId: number, secret: string, timeoutMs = 5000): DxClient {
    return new DxClient({ baseUrl: this.base, keyId, secret, timeoutMs });
  }

  /** SIGKILL and wait for the exit. */
  async kill(): Promise<Exit> {
    if (this.running) this.proc.kill('SIGKILL');
    return this.exited;
  }

  /** SIGTERM, wait up to graceMs, then SIGKILL. */
  async terminate(graceMs = 20_000): Promise<Exit & { killed: boolean }> {
    if (!this.running) return { ...(await this.exited), killed: false };
    this.proc.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), graceMs)));
    const first = await Promise.race([this.exited, late]);
    clearTimeout(timer);
    if (first !== 'late') return { ...first, killed: false };
    this.proc.kill('SIGKILL');
    return { ...(await this.exited), killed: true };
  }
}


// ------------------------------------------------------------------ outcomes

/**
 * What an answer says about a command:
 * - ok: 2xx, acknowledged (durable by contract);
 * - rejected: a core reject (origin `core`): sequenced, with no effect
 *   beyond a retained rejected order;
 * - refused: a gateway error (400/401/403/404/429/503): never sequenced;
 * - uncertain: no answer (transport error, client timeout), 504
 *   sequencing_timeout or a 5xx without our envelope: it may have landed.
 */
export type Outcome<T> =
  | { kind: 'ok'; body: T }
  | { kind: 'rejected'; status: number; code: string; details: Record<string, unknown> | null }
  | { kind: 'refused'; status: number; code: string }
  | { kind: 'uncertain'; why: string };

export async function attempt<T>(call: () => Promise<T>): Promise<Outcome<T>> {
  try {
    return { kind: 'ok', body: await call() };
  } catch (e) {
    if (e instanceof DxApiError) {
      if (e.origin === 'core') return { kind: 'rejected', status: e.status, code: e.code, details: e.details };
      if (e.origin === 'gateway' && e.status !== 504 && e.status !== 500) return { kind: 'refused', status: e.status, code: e.code };
      return { kind: 'uncertain', why: `${e.status} ${e.code}` };
    }
    const err = e as Error & { cause?: { code?: string; message?: string } };
    return { kind: 'uncertain', why: `${err.name}: ${err.cause?.code ?? err.cause?.message ?? err.message}` };
  }
}

// ------------------------------------------------------------------ the ledger

type OrderState = 'sent' | 'acked' | 'landed' | 'rejected' | 'refused' | 'uncertain' | 'absent';

interface OrderRec {
  trader: Trader;
  coid: string;
  req: OrderRequest;
  epoch: number;
  state: OrderState;
  /** The 2xx placement answer (the original one, or the retry's after a kill). */
  ack?: Placement;
  rejectCode?: string;
  order_id?: string;
  created_seq?: string;
  /** A cancel by id was sent (acked, refused, rejected or cut off). */
  cancelSent: boolean;
  cancelAck?: { seq: string; canceled_qty: number };
  cancelUncertain: boolean;
  /** Smallest acknowledged decrease target, and whether any decrease was sent. */
  decreaseSent: boolean;
  decreaseAck?: { new_qty: number; seq: string };
  decreaseUncertain?: number;
  /** Known terminal (a cancel answered unknown_order). */
  terminalSeen: boolean;
}

interface Key {
  keyId: number;
  secret: string;
}

export interface Trader {
  id: number;
  epoch: number;
  deposit: number;
  keys: Key[];
  orders: OrderRec[];
  byCoid: Map<string, OrderRec>;
  /** Free shares per `${market}:${outcome}` as last read (a hint for sells). */
  free: Map<string, number>;
  massCancel: 'none' | 'acked';
  frozen: string | null;
}

type WStatus = 'pending' | 'confirmed' | 'failed';

interface WithdrawalRec {
  funding: Funding;
  cwid: string;
  amount: number;
  destination: string;
  epoch: number;
  state: 'acked' | 'landed' | 'rejected' | 'refused' | 'uncertain' | 'absent';
  wid?: string;
  seq?: string;
  action?: 'confirm' | 'fail';
  actionState?: 'acked' | 'rejected' | 'refused' | 'uncertain' | 'landed' | 'absent';
  /** Set once an uncertain action or request is resolved and every checked status comes from the ledger. */
}

interface Funding {
  id: number;
  keys: Key[];
  /** Deposits known to have landed (acknowledged, or resolved from the balance after a kill). */
  deposits: number;
  uncertainDeposits: { amount: number; why: string }[];
  withdrawals: WithdrawalRec[];
  byCwid: Map<string, WithdrawalRec>;
}

export interface CrashOptions {
  kills: number;
  seed: number;
  gateways?: number;
  /** Trading accounts created per epoch (each with two keys, one lane per key). */
  traders?: number;
  /** Load before each kill, a random duration in [min, max] ms. */
  loadMinMs?: number;
  loadMaxMs?: number;
  /** Every `startKillEvery`-th kill (from the third on) hits a start in progress instead (0: never). */
  startKillEvery?: number;
  verify?: boolean;
  snapshotEvery?: number;
  segmentBytes?: number;
  dataDir?: string;
  /** Keep the data directory even when every check held. */
  keep?: boolean;
  /** Self-test of the checker: add a fabricated acknowledged order and deposit after the first restart. */
  injectFaults?: boolean;
  log?: (line: string) => void;
}

export interface CrashReport {
  ok: boolean;
  seed: number;
  kills: number;
  kills_during_start: number;
  restarts: number;
  epochs: number;
  seconds: number;
  data_dir: string;
  violations: string[];
  counts: Record<string, number>;
  recoveries: { spawn_to_ready_ms: number; seq: number; snapshot_seq: number; ms: number; faults: string[] }[];
}

const MARKETS_WANTED = 2;
const TRADER_DEPOSIT = 5_000_000;
const FUNDING_DEPOSIT = 50_000_000;
const LANE_INTERVAL_MS = 25; // <= 40 writes/s per key: under the 50/s bucket
const FUNDING_INTERVAL_MS = 40;
const READ_INTERVAL_MS = 30;
const VIOLATIONS_MAX = 200;
/** A gtd order must be gone this long after its expiry_ts (clock ticks every 5 ms; generous for a loaded machine). */
const GTD_MARGIN_MS = 2000;

/** The crash test's run: the ledger, the load lanes and the checks (tools/failover_test.ts extends it). */
export class CrashRun {
  private readonly rng: Rng;
  protected readonly token: string;
  protected readonly dataDir: string;
  protected server!: ExchangeServer;
  protected readonly violations: string[] = [];
  private readonly counts: Record<string, number> = {};
  protected readonly recoveries: CrashReport['recoveries'] = [];
  private markets: number[] = [];
  private readonly traders: Trader[] = [];
  private readonly funding: Funding[] = [];
  private epoch = 0;
  protected kills = 0;
  private killsDuringStart = 0;
  protected restarts = 0;
  protected stopping = false;
  /** Lane requests sent and not yet answered (the kill waits for some, so that commands are cut off). */
  private inflight = 0;
  private nextCoid: bigint;
  private nextCwid: bigint;
  private depositRef = 0;
  /** Highest seq (or as_of_seq, order_id) any answer carried so far. */
  protected maxSeenSeq = 0;
  protected maxSeenWid = 0;
  protected maxSeenAccount = 0;
  /** Everything seen before the last kill: new seqs must be above it. */
  protected seqFloor = 0;
  protected widFloor = 0;
  protected accountFloor = 0;
  private retention = { terminal_cap: 1000, reject_cap: 100, fill_cap: 1000 };
  protected readonly log: (line: string) => void;
  protected readonly o: Required<Omit<CrashOptions, 'dataDir' | 'log'>>;

  constructor(opts: CrashOptions) {
    this.o = {
      kills: opts.kills, seed: opts.seed >>> 0, gateways: opts.gateways ?? 1, traders: opts.traders ?? 4,
      loadMinMs: opts.loadMinMs ?? 400, loadMaxMs: opts.loadMaxMs ?? 2000, startKillEvery: opts.startKillEvery ?? 5,
      verify: opts.verify ?? false, snapshotEvery: opts.snapshotEvery ?? 2500, segmentBytes: opts.segmentBytes ?? 128 * 1024,
      keep: opts.keep ?? false, injectFaults: opts.injectFaults ?? false,
    };
    this.rng = new Rng(this.o.seed);
    this.token = `crash-test-${this.o.seed}-token-0123456789abcdef`;
    this.dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'dx-crash-'));
    this.log = opts.log ?? ((l) => process.stderr.write(`${l}\n`));
    // Client ids: distinct per run (the seed) and never reused within it.
    this.nextCoid = (BigInt(this.o.seed) << 24n) + 1n;
    this.nextCwid = (BigInt(this.o.seed) << 24n) + 1n;
  }

  protected count(name: string, n = 1): void {
    this.counts[name] = (this.counts[name] ?? 0) + n;
  }

  protected violate(msg: string): void {
    this.count('violations');
    if (this.violations.length < VIOLATIONS_MAX) this.violations.push(`[epoch ${this.epoch}] ${msg}`);
  }

  private coid(): string {
    return String(this.nextCoid++);
  }

  private cwid(): string {
    return String(this.nextCwid++);
  }

  private client(k: Key): DxClient {
    return this.server.client(k.keyId, k.secret);
  }

  protected admin(): AdminClient {
    return this.server.admin();
  }

  /** Records a seq an answer carried. */
  protected seen(seq: string | number | undefined): void {
    if (seq === undefined) return;
    const n = Number(seq);
    if (n > this.maxSeenSeq) this.maxSeenSeq = n;
  }

  /** A seq acknowledged for a command sequenced after the last restart: must be above everything seen before the kill. */
  private freshSeq(seq: string, what: string): void {
    this.seen(seq);
    if (Number(seq) <= this.seqFloor) this.violate(`${what}: acknowledged seq ${seq} is not above seq ${this.seqFloor} seen before the last kill`);
  }

  // ---------------------------------------------------------------- server lifecycle

  private spawnServer(): ExchangeServer {
    return new ExchangeServer({
      dataDir: this.dataDir, token: this.token, durability: 'fsync', gateways: this.o.gateways,
      snapshotEvery: this.o.snapshotEvery, segmentBytes: this.o.segmentBytes, verify: this.o.verify,
    });
  }

  /** Starts the exchange and checks its recovery line against what was seen before. */
  protected async start(): Promise<void> {
    const s = this.spawnServer();
    this.server = s;
    try {
      await s.ready(120_000);
    } catch (e) {
      this.violate(`the exchange did not start on its own data directory: ${(e as Error).message}`);
      throw new Abort();
    }
    this.restarts++;
    const rec = s.recovery();
    const faults = s.recoveryFaults().map((f) => `${String(f.fault)}${f.path ? ` ${String(f.path)}` : ''}${f.kind ? ` (${String(f.kind)})` : ''}`);
    for (const f of faults) this.count(`recovery_fault_${f.split(' ')[0]}`);
    if (rec === null) {
      this.violate('the start log has no recovery line');
    } else {
      this.recoveries.push({ spawn_to_ready_ms: Math.round(s.spawnToReadyMs), seq: rec.seq, snapshot_seq: rec.snapshot_seq, ms: rec.ms, faults });
      if (rec.seq < this.seqFloor) this.violate(`recovered seq ${rec.seq} is below seq ${this.seqFloor} that answers showed before the kill: acknowledged or shown state was lost`);
      if (rec.snapshot_seq > rec.seq) this.violate(`recovery line: snapshot_seq ${rec.snapshot_seq} > seq ${rec.seq}`);
      if (rec.snapshot_seq > 0) this.count('recoveries_from_snapshot');
    }
    const h = await this.admin().health();
    if (h.durability !== 'fsync') this.violate(`health says durability ${String(h.durability)}`);
    if (Number(h.seq) < (rec?.seq ?? 0)) this.violate(`health seq ${h.seq} below the recovered seq ${rec?.seq}`);
    if (Number(h.durable_seq) > Number(h.seq)) this.violate(`health durable_seq ${h.durable_seq} above seq ${h.seq}`);
  }

  /** The seq the serving exchange continued from after the last kill (its recovery line). */
  protected recoveredSeq(): number {
    return this.server.recovery()?.seq ?? 0;
  }

  /** Error-level log lines (a failed snapshot, a failed journal, ...) of the current server are violations. */
  protected checkLog(): void {
    for (const l of this.server.errors()) this.violate(`the exchange logged an error: ${JSON.stringify(l).slice(0, 600)}`);
  }

  /** SIGKILL now; the lanes see their requests cut off. */
  protected async killServer(): Promise<void> {
    this.stopping = true;
    await this.server.kill();
    this.checkLog();
    this.kills++;
    this.seqFloor = this.maxSeenSeq;
    this.widFloor = this.maxSeenWid;
    this.accountFloor = this.maxSeenAccount;
  }

  // ---------------------------------------------------------------- set-up

  private async setup(): Promise<void> {
    const admin = this.admin();
    for (let i = 0; i < MARKETS_WANTED; i++) {
      const m = await admin.createMarket({ title: `crash test market ${i + 1}`, category: 0, position_limit: 0, fee_schedule_id: 0 });
      this.seen(m.seq);
      const close = String(BigInt(Date.now() + 6 * 3_600_000) * 1_000_000n);
      const ro = await admin.openRound(m.market_id, { strike: '100000000', close_ts: close });
      this.seen(ro.seq);
      this.markets.push(m.market_id);
    }
    for (let i = 0; i < 2; i++) {
      const id = await this.newAccount();
      const keys: Key[] = [];
      for (let k = 0; k < 3; k++) keys.push(await this.newKey(id, ['read', 'withdraw']));
      const d = await admin.deposit(id, { amount: String(FUNDING_DEPOSIT), ref: `crash-funding-${id}` });
      this.freshSeq(d.seq, 'deposit');
      this.funding.push({ id, keys, deposits: FUNDING_DEPOSIT, uncertainDeposits: [], withdrawals: [], byCwid: new Map() });
    }
    this.retention = await this.client(this.funding[0]!.keys[0]!).retention();
  }

  private async newAccount(): Promise<number> {
    const a = await this.admin().createAccount();
    if (a.seq !== undefined) this.freshSeq(a.seq, 'create account');
    if (a.account_id <= this.accountFloor) this.violate(`new account id ${a.account_id} is not above ${this.accountFloor} seen before the last kill`);
    if (a.account_id > this.maxSeenAccount) this.maxSeenAccount = a.account_id;
    return a.account_id;
  }

  private async newKey(account: number, scopes: ('read' | 'trade' | 'withdraw')[]): Promise<Key> {
    const k = await this.admin().createKey(account, scopes);
    if (k.seq !== undefined) this.freshSeq(k.seq, 'create key');
    return { keyId: k.key_id, secret: k.secret };
  }

  /** New trading accounts for this epoch (set-up is not killed: its answers are all definite). */
  private async epochTraders(): Promise<Trader[]> {
    const out: Trader[] = [];
    for (let i = 0; i < this.o.traders; i++) {
      const id = await this.newAccount();
      const d = await this.admin().deposit(id, { amount: String(TRADER_DEPOSIT), ref: `crash-trader-${id}` });
      this.freshSeq(d.seq, 'deposit');
      const keys = [await this.newKey(id, ['read', 'trade']), await this.newKey(id, ['read', 'trade'])];
      const t: Trader = { id, epoch: this.epoch, deposit: TRADER_DEPOSIT, keys, orders: [], byCoid: new Map(), free: new Map(), massCancel: 'none', frozen: null };
      this.traders.push(t);
      out.push(t);
    }
    return out;
  }

  // ---------------------------------------------------------------- load

  protected async load(active: Trader[], ms: number, how: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    this.stopping = false;
    const lanes: Promise<void>[] = [];
    let laneNo = 0;
    for (const t of active) for (const k of t.keys) lanes.push(this.traderLane(t, k, new Rng(this.o.seed ^ (this.epoch * 7919 + ++laneNo * 104729))));
    lanes.push(this.fundingLane(new Rng(this.o.seed ^ (this.epoch * 7919 + 999_331))));
    lanes.push(this.readerLane(new Rng(this.o.seed ^ (this.epoch * 7919 + 777_767))));
    const done = Promise.all(lanes);
    // A lane that fails outside the ledger's handling is a bug of this tool: surface it.
    let laneError: unknown = null;
    done.catch((e: unknown) => {
      laneError = e;
    });
    await sleep(ms);
    // Kill while at least two lane requests are outstanding (waiting at most 300 ms for that).
    for (let waited = 0; this.inflight < 2 && waited < 300; waited++) await sleep(1);
    if (how === 'SIGKILL') {
      this.count('kills_with_requests_in_flight', this.inflight > 0 ? 1 : 0);
      await this.killServer();
    } else {
      // Graceful stop under load: held requests are answered, later ones get
      // 503 (refused: they must never show up) or find the listener closed.
      this.server.proc.kill('SIGTERM');
      await sleep(250);
      this.stopping = true;
    }
    await done.catch(() => undefined);
    if (laneError !== null) throw laneError;
    if (how === 'SIGTERM') {
      await closeFetchConnections();
      const x = await Promise.race([this.server.exited, sleep(30_000).then(() => null)]);
      if (x === null) {
        this.violate('SIGTERM under load: the exchange did not exit within 30 s');
        await this.server.kill();
      } else if (x.code !== 0 || x.signal !== null) {
        this.violate(`SIGTERM under load: the exchange ended with code ${x.code} signal ${x.signal}; stderr: ${this.server.stderrTail().slice(-1500)}`);
      }
      this.checkLog();
      this.seqFloor = this.maxSeenSeq;
      this.widFloor = this.maxSeenWid;
      this.accountFloor = this.maxSeenAccount;
    }
  }

  /** attempt() for the load lanes, counting what is in flight. */
  private async laneAttempt<T>(call: () => Promise<T>): Promise<Outcome<T>> {
    this.inflight++;
    try {
      const out = await attempt(call);
      if (out.kind === 'uncertain' && /^5[0-9][0-9] /.test(out.why) && !out.why.startsWith('504 ')) this.violate(`a running exchange answered ${out.why}`);
      return out;
    } finally {
      this.inflight--;
    }
  }

  private async paced(started: number, interval: number): Promise<void> {
    const left = interval - (performance.now() - started);
    if (left > 0) await sleep(left);
  }

  private async traderLane(t: Trader, k: Key, rng: Rng): Promise<void> {
    const c = this.client(k);
    let ops = 0;
    while (!this.stopping) {
      const t0 = performance.now();
      if (ops++ % 15 === 0) await this.refreshPositions(t, c);
      else {
        const r = rng.next();
        const live = t.orders.filter((o) => (o.state === 'acked' && (o.ack!.status === 'resting' || o.ack!.status === 'partially_filled')) && !o.cancelSent && !o.terminalSeen);
        if (r < 0.18 && live.length > 0) await this.cancelOne(c, rng.pick(live));
        else if (r < 0.23 && live.length > 0) await this.decreaseOne(c, rng.pick(live), rng);
        else await this.placeOne(t, c, rng);
      }
      await this.paced(t0, LANE_INTERVAL_MS);
    }
  }

  private async refreshPositions(t: Trader, c: DxClient): Promise<void> {
    const out = await this.laneAttempt(() => c.positions({ limit: 1000 }));
    if (out.kind !== 'ok') return;
    this.seen(out.body.as_of_seq);
    t.free.clear();
    for (const p of out.body.positions) t.free.set(`${p.market_id}:${p.outcome}`, p.free);
  }

  private orderRequest(t: Trader, rng: Rng): OrderRequest {
    const market_id = rng.pick(this.markets);
    const outcome = rng.next() < 0.5 ? 'yes' : 'no';
    const freeKey = `${market_id}:${outcome}`;
    const free = t.free.get(freeKey) ?? 0;
    const side: Side = free > 0 && rng.next() < 0.4 ? 'sell' : 'buy';
    const qty = side === 'sell' ? rng.int(1, Math.min(free, 12)) : rng.int(1, 12);
    if (side === 'sell') t.free.set(freeKey, free - qty);
    const req: OrderRequest = { market_id, side, outcome, tick: rng.int(42, 58), qty, client_order_id: this.coid() };
    const r = rng.next();
    if (r < 0.1) {
      req.tif = 'gtd';
      req.expiry_ts = String(BigInt(Date.now() + rng.int(300, 3000)) * 1_000_000n);
    } else if (r < 0.18) req.tif = 'ioc';
    else if (r < 0.22) req.tif = 'fok';
    else if (r < 0.27) req.post_only = true;
    return req;
  }

  private async placeOne(t: Trader, c: DxClient, rng: Rng): Promise<void> {
    const req = this.orderRequest(t, rng);
    const rec: OrderRec = {
      trader: t, coid: req.client_order_id!, req, epoch: this.epoch, state: 'sent', cancelSent: false, cancelUncertain: false,
      decreaseSent: false, terminalSeen: false,
    };
    t.orders.push(rec);
    t.byCoid.set(rec.coid, rec);
    const out = await this.laneAttempt(() => c.placeOrder(req));
    this.count(`place_${out.kind}`);
    this.onPlacement(rec, out);
  }

  /** Applies a placement outcome to its ledger entry (also for retries after a kill). */
  private onPlacement(rec: OrderRec, out: Outcome<Placement>): void {
    switch (out.kind) {
      case 'ok': {
        const p = out.body;
        rec.state = 'acked';
        rec.ack = p;
        rec.order_id = p.order_id;
        rec.created_seq = p.seq;
        this.freshSeq(p.seq, `placement ${rec.coid}`);
        if (p.order_id !== p.seq) this.violate(`placement ${rec.coid}: order_id ${p.order_id} differs from its seq ${p.seq}`);
        if (p.client_order_id !== rec.coid) this.violate(`placement ${rec.coid}: answer names client_order_id ${p.client_order_id}`);
        if (p.filled_qty + p.resting_qty > rec.req.qty) this.violate(`placement ${rec.coid}: filled ${p.filled_qty} + resting ${p.resting_qty} > qty ${rec.req.qty}`);
        if (p.fills.length > 0) this.count('fills_acked', p.fills.length);
        if (rec.req.side === 'buy' && p.filled_qty > 0) {
          const key = `${rec.req.market_id}:${rec.req.outcome}`;
          rec.trader.free.set(key, (rec.trader.free.get(key) ?? 0) + p.filled_qty);
        }
        return;
      }
      case 'rejected':
        rec.state = 'rejected';
        rec.rejectCode = out.code;
        if (out.code === 'duplicate_client_order_id') this.violate(`placement ${rec.coid}: refused as a duplicate on its first send`);
        return;
      case 'refused':
        rec.state = 'refused';
        return;
      case 'uncertain':
        rec.state = 'uncertain';
        return;
    }
  }

  private async cancelOne(c: DxClient, rec: OrderRec): Promise<void> {
    rec.cancelSent = true;
    const out = await this.laneAttempt(() => c.cancelBatch([rec.order_id!]));
    this.count(`cancel_${out.kind}`);
    this.onCancel(rec, out);
  }

  private onCancel(rec: OrderRec, out: Outcome<{ results: unknown[] }>): void {
    if (out.kind === 'uncertain') {
      rec.cancelUncertain = true;
      return;
    }
    if (out.kind !== 'ok') return;
    rec.cancelUncertain = false;
    const item = out.body.results[0] as { status?: string; canceled_qty?: number; seq?: string; error?: { code: string } };
    if (item.error !== undefined) {
      if (item.error.code === 'unknown_order') rec.terminalSeen = true;
      else if (item.error.code === 'sequencing_timeout') rec.cancelUncertain = true; // the item may still be sequenced
      else this.violate(`cancel of ${rec.order_id}: unexpected item error ${item.error.code}`);
      return;
    }
    rec.cancelAck = { seq: item.seq!, canceled_qty: item.canceled_qty! };
    this.freshSeq(item.seq!, `cancel of ${rec.order_id}`);
  }

  private async decreaseOne(c: DxClient, rec: OrderRec, rng: Rng): Promise<void> {
    const resting = rec.ack!.resting_qty;
    if (resting < 2) return this.cancelOne(c, rec);
    const target = rng.int(1, resting - 1);
    rec.decreaseSent = true;
    const out = await this.laneAttempt(() => c.decrease(rec.order_id!, target));
    this.count(`decrease_${out.kind}`);
    this.onDecrease(rec, target, out);
  }

  private onDecrease(rec: OrderRec, target: number, out: Outcome<{ new_qty: number; seq: string }>): void {
    if (out.kind === 'uncertain') {
      rec.decreaseUncertain = target;
      return;
    }
    if (out.kind === 'rejected') {
      if (out.code === 'unknown_order') rec.terminalSeen = true;
      else this.violate(`decrease of ${rec.order_id}: unexpected reject ${out.code}`);
      return;
    }
    if (out.kind !== 'ok') return;
    rec.decreaseUncertain = undefined;
    this.freshSeq(out.body.seq, `decrease of ${rec.order_id}`);
    if (out.body.new_qty > target) this.violate(`decrease of ${rec.order_id} to ${target} answered new_qty ${out.body.new_qty}`);
    if (rec.decreaseAck === undefined || out.body.new_qty < rec.decreaseAck.new_qty) rec.decreaseAck = { new_qty: out.body.new_qty, seq: out.body.seq };
  }

  /** Deposits, withdrawal requests, operator confirm/fail and now and then a snapshot: one at a time. */
  private async fundingLane(rng: Rng): Promise<void> {
    const admin = this.admin();
    while (!this.stopping) {
      const t0 = performance.now();
      const f = rng.pick(this.funding);
      const r = rng.next();
      const pending = this.funding.flatMap((x) => x.withdrawals).filter((w) => (w.state === 'acked' || w.state === 'landed') && w.action === undefined);
      if (r < 0.3) await this.depositOne(admin, f, rng);
      else if (r < 0.65) await this.withdrawOne(f, rng);
      else if (r < 0.95 && pending.length > 0) await this.settleOne(admin, rng.pick(pending), rng.next() < 0.6 ? 'confirm' : 'fail');
      else if (r >= 0.95) {
        const out = await this.laneAttempt(() => admin.snapshot());
        this.count(`snapshot_${out.kind}`);
        if (out.kind === 'ok') this.seen(out.body.seq);
      }
      await this.paced(t0, FUNDING_INTERVAL_MS);
    }
  }

  private async depositOne(admin: AdminClient, f: Funding, rng: Rng): Promise<void> {
    const amount = rng.int(1, 2_000_000);
    const out = await this.laneAttempt(() => admin.deposit(f.id, { amount: String(amount), ref: `crash-${++this.depositRef}` }));
    this.count(`deposit_${out.kind}`);
    if (out.kind === 'ok') {
      f.deposits += amount;
      this.freshSeq(out.body.seq, 'deposit');
    } else if (out.kind === 'uncertain') {
      f.uncertainDeposits.push({ amount, why: out.why });
    } else {
      this.violate(`deposit to ${f.id} answered ${out.status} ${out.code}`);
    }
  }

  /** What a funding account can surely withdraw: landed deposits minus every request that may hold money. */
  private availableLowerBound(f: Funding): number {
    let held = 0;
    for (const w of f.withdrawals) {
      if (w.state === 'rejected' || w.state === 'refused' || w.state === 'absent') continue;
      if (w.action === 'fail' && (w.actionState === 'acked' || w.actionState === 'landed')) continue;
      held += w.amount;
    }
    return f.deposits - held;
  }

  private async withdrawOne(f: Funding, rng: Rng): Promise<void> {
    const room = this.availableLowerBound(f);
    if (room < 1) return;
    const w: WithdrawalRec = {
      funding: f, cwid: this.cwid(), amount: rng.int(1, Math.min(room, 500_000)), destination: `crash-dest-${rng.int(1, 1_000_000)}`,
      epoch: this.epoch, state: 'uncertain',
    };
    f.withdrawals.push(w);
    f.byCwid.set(w.cwid, w);
    const c = this.client(rng.pick(f.keys));
    const out = await this.laneAttempt(() => c.withdraw({ client_withdrawal_id: w.cwid, amount: String(w.amount), destination: w.destination }));
    this.count(`withdraw_${out.kind}`);
    this.onWithdrawal(w, out, false);
  }

  private onWithdrawal(w: WithdrawalRec, out: Outcome<{ wid: string; seq: string; status: string; client_withdrawal_id: string }>, retryOfLanded: boolean): void {
    switch (out.kind) {
      case 'ok': {
        const b = out.body;
        if (b.client_withdrawal_id !== w.cwid) this.violate(`withdrawal ${w.cwid}: answer names ${b.client_withdrawal_id}`);
        if (!retryOfLanded) {
          if (b.status !== 'pending') this.violate(`withdrawal ${w.cwid}: new request answered status ${b.status}`);
          this.freshSeq(b.seq, `withdrawal ${w.cwid}`);
          if (Number(b.wid) <= this.widFloor) this.violate(`withdrawal ${w.cwid}: wid ${b.wid} is not above wid ${this.widFloor} seen before the last kill`);
          w.state = 'acked';
          w.wid = b.wid;
          w.seq = b.seq;
        }
        if (Number(b.wid) > this.maxSeenWid) this.maxSeenWid = Number(b.wid);
        return;
      }
      case 'rejected':
        w.state = 'rejected';
        this.violate(`withdrawal ${w.cwid} of ${w.amount}: rejected ${out.code} (the lane only asks for what is surely available)`);
        return;
      case 'refused':
        w.state = 'refused';
        return;
      case 'uncertain':
        w.state = 'uncertain';
        return;
    }
  }

  private async settleOne(admin: AdminClient, w: WithdrawalRec, action: 'confirm' | 'fail'): Promise<void> {
    w.action = action;
    const out = await this.laneAttempt(() => (action === 'confirm' ? admin.confirmWithdrawal(w.wid!) : admin.failWithdrawal(w.wid!)));
    this.count(`${action}_${out.kind}`);
    this.onSettle(w, out);
  }

  private onSettle(w: WithdrawalRec, out: Outcome<{ status: string; seq: string }>): void {
    switch (out.kind) {
      case 'ok':
        w.actionState = 'acked';
        this.freshSeq(out.body.seq, `${w.action} of withdrawal ${w.wid}`);
        if (out.body.status !== (w.action === 'confirm' ? 'confirmed' : 'failed')) this.violate(`${w.action} of withdrawal ${w.wid} answered status ${out.body.status}`);
        return;
      case 'rejected':
        w.actionState = 'rejected';
        this.violate(`${w.action} of pending withdrawal ${w.wid}: rejected ${out.code}`);
        return;
      case 'refused':
        w.actionState = 'refused';
        w.action = undefined;
        return;
      case 'uncertain':
        w.actionState = 'uncertain';
        return;
    }
  }

  /** Reads on another key: every as_of_seq is something shown, so it must survive the kill. */
  private async readerLane(rng: Rng): Promise<void> {
    const c = this.client(this.funding[0]!.keys[2]!);
    let last = 0;
    while (!this.stopping) {
      const t0 = performance.now();
      const m = rng.pick(this.markets);
      const r = rng.next();
      const out = await this.laneAttempt<{ as_of_seq: string }>(() => (r < 0.4 ? c.orderbook(m, 5) : r < 0.8 ? c.market(m) : c.balance()));
      this.count(`read_${out.kind}`);
      if (out.kind === 'ok') {
        const s = Number(out.body.as_of_seq);
        if (s < last) this.violate(`reads went back in time on one connection: as_of_seq ${s} after ${last}`);
        last = s;
        this.seen(s);
      }
      await this.paced(t0, READ_INTERVAL_MS);
    }
  }

  // ---------------------------------------------------------------- after a restart: resolve what was cut off

  /** Retries a call while the gateway refuses it for rate or shedding; anything else is returned. */
  private async definite<T>(what: string, call: () => Promise<T>): Promise<Outcome<T>> {
    for (let i = 0; ; i++) {
      const out = await attempt(call);
      if (out.kind === 'refused' && (out.status === 429 || out.status === 503) && i < 20) {
        await sleep(200);
        continue;
      }
      if (out.kind === 'uncertain') throw new Error(`${what}: no definite answer from a running exchange (${out.why})`);
      return out;
    }
  }

  protected async resolve(): Promise<void> {
    for (const t of this.traders) {
      const c = this.client(t.keys[0]!);
      for (const rec of t.orders) {
        if (rec.state === 'uncertain' || rec.state === 'sent') await this.resolvePlacement(c, rec);
        if (rec.cancelUncertain) {
          const out = await this.definite(`cancel retry ${rec.order_id}`, () => c.cancelBatch([rec.order_id!]));
          this.count('cancel_retried');
          this.onCancel(rec, out);
        }
        if (rec.decreaseUncertain !== undefined) {
          const target = rec.decreaseUncertain;
          const out = await this.definite(`decrease retry ${rec.order_id}`, () => c.decrease(rec.order_id!, target));
          this.count('decrease_retried');
          this.onDecrease(rec, target, out);
          rec.decreaseUncertain = undefined;
        }
      }
    }
    for (const f of this.funding) {
      for (const w of f.withdrawals) {
        if (w.state === 'uncertain') await this.resolveWithdrawal(f, w);
        if (w.actionState === 'uncertain') await this.resolveSettle(w);
      }
    }
    await this.resolveDeposits();
  }

  private async lookup(c: DxClient, coid: string): Promise<Order[]> {
    const out = await this.definite(`lookup ${coid}`, () => c.orders({ client_order_id: coid }));
    if (out.kind !== 'ok') throw new Error(`lookup of client_order_id ${coid}: ${out.kind} ${'code' in out ? out.code : ''}`);
    this.seen(out.body.as_of_seq);
    return out.body.orders;
  }

  private async resolvePlacement(c: DxClient, rec: OrderRec): Promise<void> {
    this.count('place_uncertain_resolved');
    const before = await this.lookup(c, rec.coid);
    if (before.length > 1) this.violate(`client_order_id ${rec.coid}: ${before.length} orders hold it`);
    const found = before[0];
    const retry = await this.definite(`placement retry ${rec.coid}`, () => c.placeOrder(rec.req));
    if (found !== undefined) {
      this.count('place_uncertain_had_landed');
      rec.state = 'landed';
      rec.order_id = found.order_id;
      rec.created_seq = found.created_seq;
      if (Number(found.created_seq) > this.seqFloor && this.seqFloor > 0) {
        // Sequenced before the kill, so it cannot be above what the recovery reached.
        const rs = this.recoveredSeq();
        if (Number(found.created_seq) > rs) this.violate(`client_order_id ${rec.coid}: landed at seq ${found.created_seq}, above the recovered seq ${rs}`);
      }
      if (retry.kind !== 'rejected' || retry.code !== 'duplicate_client_order_id') {
        this.violate(`client_order_id ${rec.coid} had landed as order ${found.order_id} but its retry answered ${retry.kind}${retry.kind === 'ok' ? ` order ${retry.body.order_id}` : ` ${'code' in retry ? retry.code : ''}`} instead of 409 duplicate_client_order_id`);
      } else if (String(retry.details?.order_id) !== found.order_id) {
        this.violate(`client_order_id ${rec.coid}: duplicate refusal names order ${String(retry.details?.order_id)}, the lookup found ${found.order_id}`);
      }
    } else {
      this.count('place_uncertain_had_not_landed');
      if (retry.kind === 'rejected' && retry.code === 'duplicate_client_order_id') {
        this.violate(`client_order_id ${rec.coid}: the lookup found no order but the retry was refused as a duplicate of ${String(retry.details?.order_id)}`);
      }
      this.onPlacement(rec, retry);
      if (rec.state === 'refused') throw new Error(`placement retry ${rec.coid} refused: ${retry.kind === 'refused' ? `${retry.status} ${retry.code}` : ''}`);
    }
    const after = await this.lookup(c, rec.coid);
    const expect = rec.state === 'acked' || rec.state === 'landed' || rec.state === 'rejected' ? 1 : 0;
    if (after.length !== expect) this.violate(`client_order_id ${rec.coid}: ${after.length} orders after the retry, expected ${expect} (applied ${after.length > 1 ? 'more than once' : 'not at all'})`);
    else if (expect === 1 && rec.order_id !== undefined && after[0]!.order_id !== rec.order_id) {
      this.violate(`client_order_id ${rec.coid}: order ${after[0]!.order_id} after the retry, expected ${rec.order_id}`);
    }
  }

  private async resolveWithdrawal(f: Funding, w: WithdrawalRec): Promise<void> {
    this.count('withdraw_uncertain_resolved');
    const c = this.client(f.keys[0]!);
    const look = await this.definite(`withdrawal lookup ${w.cwid}`, () => c.withdrawal(w.cwid));
    const body = { client_withdrawal_id: w.cwid, amount: String(w.amount), destination: w.destination };
    if (look.kind === 'ok') {
      this.count('withdraw_uncertain_had_landed');
      const l = look.body;
      if (l.amount !== String(w.amount) || l.destination !== w.destination) this.violate(`withdrawal ${w.cwid}: landed with amount ${l.amount} to ${l.destination}, sent ${w.amount} to ${w.destination}`);
      if (l.status !== 'pending') this.violate(`withdrawal ${w.cwid}: nobody confirmed or failed it, yet it is ${l.status}`);
      w.state = 'landed';
      w.wid = l.wid;
      w.seq = l.seq;
      const retry = await this.definite(`withdrawal retry ${w.cwid}`, () => c.withdraw(body));
      if (retry.kind !== 'ok' || retry.body.wid !== l.wid || retry.body.seq !== l.seq) {
        this.violate(`withdrawal ${w.cwid} had landed as wid ${l.wid} (seq ${l.seq}) but its retry answered ${retry.kind === 'ok' ? `wid ${retry.body.wid} seq ${retry.body.seq}` : `${retry.kind} ${'code' in retry ? retry.code : ''}`}`);
      }
      if (retry.kind === 'ok') this.onWithdrawal(w, retry, true);
    } else if (look.kind === 'refused' && look.status === 404) {
      this.count('withdraw_uncertain_had_not_landed');
      const retry = await this.definite(`withdrawal retry ${w.cwid}`, () => c.withdraw(body));
      this.onWithdrawal(w, retry, false);
    } else {
      throw new Error(`withdrawal lookup ${w.cwid}: ${look.kind} ${'code' in look ? look.code : ''}`);
    }
  }

  private async resolveSettle(w: WithdrawalRec): Promise<void> {
    this.count(`${w.action}_uncertain_resolved`);
    const c = this.client(w.funding.keys[0]!);
    const look = await this.definite(`withdrawal lookup ${w.cwid}`, () => c.withdrawal(w.cwid));
    if (look.kind !== 'ok') throw new Error(`withdrawal ${w.cwid} (wid ${w.wid}) not found while resolving its ${w.action}`);
    const admin = this.admin();
    const again = () => (w.action === 'confirm' ? admin.confirmWithdrawal(w.wid!) : admin.failWithdrawal(w.wid!));
    const want = w.action === 'confirm' ? 'confirmed' : 'failed';
    if (look.body.status === 'pending') {
      this.count(`${w.action}_uncertain_had_not_landed`);
      const out = await this.definite(`${w.action} retry ${w.wid}`, again);
      this.onSettle(w, out);
    } else {
      this.count(`${w.action}_uncertain_had_landed`);
      if (look.body.status !== want) this.violate(`withdrawal ${w.wid}: ${w.action} was sent, it is ${look.body.status}`);
      w.actionState = 'landed';
      const out = await this.definite(`${w.action} retry ${w.wid}`, again);
      if (out.kind !== 'rejected' || out.code !== 'unknown_withdrawal') this.violate(`withdrawal ${w.wid}: a second ${w.action} answered ${out.kind} ${'code' in out ? out.code : ''}, not unknown_withdrawal`);
    }
  }

  /** The status a withdrawal must have, from the ledger alone. */
  private expectedStatus(w: WithdrawalRec): WStatus | null {
    if (w.state !== 'acked' && w.state !== 'landed') return null;
    if (w.action !== undefined && (w.actionState === 'acked' || w.actionState === 'landed')) return w.action === 'confirm' ? 'confirmed' : 'failed';
    return 'pending';
  }

  /** Funding accounts never trade: their cash is exactly deposits minus what withdrawals hold or took. */
  private expectedFunding(f: Funding): { available: number; reserved: number } {
    let pending = 0;
    let confirmed = 0;
    for (const w of f.withdrawals) {
      const s = this.expectedStatus(w);
      if (s === 'pending') pending += w.amount;
      else if (s === 'confirmed') confirmed += w.amount;
    }
    return { available: f.deposits - pending - confirmed, reserved: pending };
  }

  private async resolveDeposits(): Promise<void> {
    for (const f of this.funding) {
      if (f.uncertainDeposits.length === 0) continue;
      const a = await this.admin().account(f.id);
      const exp = this.expectedFunding(f);
      const diff = Number(a.available) - exp.available;
      // Which subset of the interrupted deposits explains the difference (one lane: at most one per kill).
      const u = f.uncertainDeposits;
      let match = -1;
      for (let mask = 0; mask < 1 << u.length; mask++) {
        let sum = 0;
        for (let i = 0; i < u.length; i++) if (mask & (1 << i)) sum += u[i]!.amount;
        if (sum === diff) {
          match = mask;
          break;
        }
      }
      if (match < 0) {
        this.violate(`funding account ${f.id}: available ${a.available} differs from the ledger's ${exp.available} by ${diff}, which no subset of the interrupted deposits (${u.map((x) => x.amount).join(', ')}) explains`);
      } else {
        for (let i = 0; i < u.length; i++) {
          if (match & (1 << i)) {
            f.deposits += u[i]!.amount;
            this.count('deposit_uncertain_had_landed');
          } else this.count('deposit_uncertain_had_not_landed');
        }
      }
      f.uncertainDeposits = [];
    }
  }

  // ---------------------------------------------------------------- verification

  private async allOrders(c: DxClient): Promise<{ orders: Order[]; as_of: string[] }> {
    const orders: Order[] = [];
    const as_of: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const out = await this.definite('orders page', () => c.orders({ limit: 1000, cursor }));
      if (out.kind !== 'ok') throw new Error(`orders listing: ${out.kind}`);
      orders.push(...out.body.orders);
      as_of.push(out.body.as_of_seq);
      if (out.body.cursor === '') return { orders, as_of };
      cursor = out.body.cursor;
    }
  }

  private async allFills(c: DxClient): Promise<{ fills: Fill[]; as_of: string[] }> {
    const fills: Fill[] = [];
    const as_of: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const out = await this.definite('fills page', () => c.fills({ limit: 1000, cursor }));
      if (out.kind !== 'ok') throw new Error(`fills listing: ${out.kind}`);
      fills.push(...out.body.fills);
      as_of.push(out.body.as_of_seq);
      if (out.body.cursor === '') return { fills, as_of };
      cursor = out.body.cursor;
    }
  }

  /**
   * One consistent read of a trading account: orders, fills, positions and
   * balance at the same as_of_seq (clock-driven expiries may move it between
   * reads; then read again).
   */
  private async traderView(t: Trader): Promise<{ orders: Order[]; fills: Fill[]; positions: Position[]; available: number; reserved: number; at: number }> {
    const c = this.client(t.keys[1]!);
    for (let i = 0; ; i++) {
      const at = Date.now();
      const o = await this.allOrders(c);
      const f = await this.allFills(c);
      const p = await this.definite('positions', () => c.positions({ limit: 1000 }));
      const b = await this.definite('balance', () => c.balance());
      if (p.kind !== 'ok' || b.kind !== 'ok') throw new Error(`account ${t.id}: positions/balance not readable`);
      const seqs = new Set([...o.as_of, ...f.as_of, p.body.as_of_seq, b.body.as_of_seq]);
      for (const s of seqs) this.seen(s);
      if (seqs.size === 1 || i >= 10) {
        if (seqs.size !== 1) this.count('inconsistent_views_skipped');
        return { orders: o.orders, fills: f.fills, positions: p.body.positions, available: Number(b.body.available), reserved: Number(b.body.reserved), at: seqs.size === 1 ? at : -1 };
      }
      await sleep(150);
    }
  }

  private checkOrder(rec: OrderRec, o: Order, now: number): void {
    const id = `order ${rec.order_id} (client_order_id ${rec.coid}, account ${rec.trader.id})`;
    const r = rec.req;
    if (o.created_seq !== rec.created_seq) this.violate(`${id}: created_seq ${o.created_seq}, acknowledged seq ${rec.created_seq}`);
    if (o.client_order_id !== rec.coid) this.violate(`${id}: client_order_id ${o.client_order_id}`);
    if (o.market_id !== r.market_id || o.side !== r.side || o.outcome !== r.outcome || o.tick !== r.tick || o.qty !== r.qty || o.tif !== (r.tif ?? 'gtc')) {
      this.violate(`${id}: fields changed: ${JSON.stringify({ market_id: o.market_id, side: o.side, outcome: o.outcome, tick: o.tick, qty: o.qty, tif: o.tif })} vs sent ${JSON.stringify(r)}`);
    }
    if (o.filled_qty + o.remaining_qty > o.qty) this.violate(`${id}: filled ${o.filled_qty} + remaining ${o.remaining_qty} > qty ${o.qty}`);
    const a = rec.ack;
    if (a !== undefined) {
      if (o.filled_qty < a.filled_qty) this.violate(`${id}: filled_qty ${o.filled_qty} below the acknowledged ${a.filled_qty}`);
      if (a.status === 'filled' || a.status === 'canceled') {
        if (o.filled_qty !== a.filled_qty || o.remaining_qty !== 0 || o.reason !== (a.reason ?? '') || o.last_update_seq !== a.seq) {
          this.violate(`${id}: acknowledged terminal (${a.status} ${a.reason ?? ''}, filled ${a.filled_qty}, seq ${a.seq}) but now reason "${o.reason}" filled ${o.filled_qty} remaining ${o.remaining_qty} last_update_seq ${o.last_update_seq}`);
        }
        return;
      }
      if (a.status === 'rejected') return;
    }
    if (rec.cancelAck !== undefined) {
      if (o.remaining_qty !== 0 || o.reason !== 'user_canceled' || o.last_update_seq !== rec.cancelAck.seq) {
        this.violate(`${id}: cancel acknowledged at seq ${rec.cancelAck.seq} but now reason "${o.reason}" remaining ${o.remaining_qty} last_update_seq ${o.last_update_seq}`);
      }
      return;
    }
    if (rec.decreaseAck !== undefined && o.remaining_qty > rec.decreaseAck.new_qty) {
      this.violate(`${id}: decrease to ${rec.decreaseAck.new_qty} acknowledged at seq ${rec.decreaseAck.seq} but remaining ${o.remaining_qty}`);
    }
    if (o.remaining_qty === 0) {
      const allowed = new Set<string>(['']);
      if (rec.cancelSent) allowed.add('user_canceled');
      if (rec.trader.massCancel !== 'none') allowed.add('mass_canceled');
      if (r.tif === 'gtd') allowed.add('expired');
      if (rec.state === 'landed' || rec.state === 'acked') {
        // A landed-after-kill order was never seen answered: its execution outcome is whatever the engine decided.
        if (rec.ack === undefined) for (const x of ['post_only_cross', 'fok_infeasible', 'ioc_remainder', 'self_trade_prevention']) allowed.add(x);
      }
      if (!allowed.has(o.reason)) this.violate(`${id}: terminal with reason "${o.reason}", which nothing sent explains`);
      if (o.reason === '' && o.filled_qty === 0) this.violate(`${id}: terminal without a reason and without fills`);
    } else if (r.tif === 'gtd' && now > 0 && Number(BigInt(r.expiry_ts!) / 1_000_000n) < now - GTD_MARGIN_MS) {
      this.violate(`${id}: gtd expiry ${r.expiry_ts} passed ${now - Number(BigInt(r.expiry_ts!) / 1_000_000n)} ms ago but it is still live`);
    }
  }

  private async verifyTrader(t: Trader): Promise<void> {
    const v = await this.traderView(t);
    const byId = new Map<string, Order>();
    for (const o of v.orders) {
      byId.set(o.order_id, o);
      const rec = t.byCoid.get(o.client_order_id);
      if (rec === undefined) this.violate(`account ${t.id}: order ${o.order_id} with client_order_id ${o.client_order_id} was never sent`);
      else if (rec.state === 'refused') this.violate(`account ${t.id}: order ${o.order_id} (client_order_id ${o.client_order_id}) exists, but its placement was refused before sequencing`);
      else if (rec.state === 'absent' || rec.state === 'uncertain' || rec.state === 'sent') this.violate(`account ${t.id}: order ${o.order_id} (client_order_id ${o.client_order_id}) is in state ${rec.state} in the ledger`);
      else if (rec.order_id !== undefined && rec.order_id !== o.order_id) this.violate(`account ${t.id}: client_order_id ${o.client_order_id} is order ${o.order_id}, acknowledged as ${rec.order_id}`);
    }
    let terminalListed = 0;
    for (const o of v.orders) if (o.remaining_qty === 0 && !isRejectReason(o.reason)) terminalListed++;
    for (const rec of t.orders) {
      if (rec.state !== 'acked' && rec.state !== 'landed') continue;
      this.count('orders_checked');
      const o = byId.get(rec.order_id!);
      if (o === undefined) {
        // Only retention may drop an order: a terminal one, once terminal_cap newer terminal orders exist.
        if (terminalListed < this.retention.terminal_cap) this.violate(`account ${t.id}: acknowledged order ${rec.order_id} (client_order_id ${rec.coid}, seq ${rec.created_seq}) is missing after restart`);
        continue;
      }
      this.checkOrder(rec, o, v.at);
    }
    // Fills: the taker fills of each acknowledged placement, and every order's filled_qty.
    if (v.fills.length >= this.retention.fill_cap) {
      this.count('fill_checks_skipped_at_cap');
      return;
    }
    const fillsByOrder = new Map<string, Fill[]>();
    for (const f of v.fills) {
      const xs = fillsByOrder.get(f.order_id) ?? [];
      xs.push(f);
      fillsByOrder.set(f.order_id, xs);
    }
    for (const o of v.orders) {
      const sum = (fillsByOrder.get(o.order_id) ?? []).reduce((s, f) => s + f.qty, 0);
      if (sum !== o.filled_qty) this.violate(`account ${t.id}: order ${o.order_id} has filled_qty ${o.filled_qty} but its fills add up to ${sum}`);
    }
    for (const rec of t.orders) {
      if (rec.ack === undefined || rec.ack.fills.length === 0) continue;
      const taker = (fillsByOrder.get(rec.order_id!) ?? []).filter((f) => f.role === 'taker' && f.seq === rec.ack!.seq);
      if (!sameFills(rec.ack.fills, taker)) {
        this.violate(`account ${t.id}: order ${rec.order_id} was acknowledged with fills ${JSON.stringify(rec.ack.fills)} at seq ${rec.ack.seq}; its taker fills now are ${JSON.stringify(taker.map((f) => ({ tick_yes: f.tick_yes, qty: f.qty, path: f.path, seq: f.seq })))}`);
      }
    }
    if (v.at < 0) return; // no consistent instant: the money check needs one
    // Money (fee schedule 0): cash moves only by fills at the party's own-outcome price.
    let cash = t.deposit;
    const pos = new Map<string, number>();
    for (const f of v.fills) {
      if (f.fee !== '0') this.violate(`account ${t.id}: fill ${f.fill_id} charged fee ${f.fee} on a fee-free market`);
      const k = `${f.market_id}:${f.outcome}`;
      if (f.side === 'buy') {
        cash -= f.qty * f.tick;
        pos.set(k, (pos.get(k) ?? 0) + f.qty);
      } else {
        cash += f.qty * f.tick;
        pos.set(k, (pos.get(k) ?? 0) - f.qty);
      }
    }
    let reservedCash = 0;
    const reservedShares = new Map<string, number>();
    for (const o of v.orders) {
      if (o.remaining_qty === 0) continue;
      if (o.side === 'buy') reservedCash += o.remaining_qty * o.tick;
      else reservedShares.set(`${o.market_id}:${o.outcome}`, (reservedShares.get(`${o.market_id}:${o.outcome}`) ?? 0) + o.remaining_qty);
    }
    if (v.available + v.reserved !== cash) this.violate(`account ${t.id}: available ${v.available} + reserved ${v.reserved} = ${v.available + v.reserved}, its deposit and fills give ${cash}`);
    if (v.reserved !== reservedCash) this.violate(`account ${t.id}: reserved ${v.reserved}, its live buy orders hold ${reservedCash}`);
    const held = new Map<string, { free: number; rfs: number }>();
    for (const p of v.positions) held.set(`${p.market_id}:${p.outcome}`, { free: p.free, rfs: p.reserved_for_sale });
    for (const k of new Set([...held.keys(), ...pos.keys(), ...reservedShares.keys()])) {
      const h = held.get(k) ?? { free: 0, rfs: 0 };
      if (h.free + h.rfs !== (pos.get(k) ?? 0)) this.violate(`account ${t.id}: position ${k} holds ${h.free} free + ${h.rfs} reserved, its fills give ${pos.get(k) ?? 0}`);
      if (h.rfs !== (reservedShares.get(k) ?? 0)) this.violate(`account ${t.id}: position ${k} reserves ${h.rfs} shares for sale, its live sells hold ${reservedShares.get(k) ?? 0}`);
    }
  }

  private async verifyFunding(f: Funding, everyWithdrawal: boolean): Promise<void> {
    const a = await this.admin().account(f.id);
    this.seen(a.as_of_seq);
    const exp = this.expectedFunding(f);
    if (Number(a.available) !== exp.available || Number(a.reserved) !== exp.reserved) {
      this.violate(`funding account ${f.id}: available ${a.available} reserved ${a.reserved}; deposits and withdrawals in the ledger give ${exp.available} and ${exp.reserved}`);
    }
    let k = 0;
    for (const w of f.withdrawals) {
      const want = this.expectedStatus(w);
      if (!everyWithdrawal && w.epoch < this.epoch - 1 && want !== 'pending') continue;
      const c = this.client(f.keys[k++ % f.keys.length]!);
      const look = await this.definite(`withdrawal ${w.cwid}`, () => c.withdrawal(w.cwid));
      this.count('withdrawals_checked');
      if (want === null) {
        if (look.kind === 'ok') this.violate(`withdrawal ${w.cwid}: exists as wid ${look.body.wid} though its request ended ${w.state}`);
        continue;
      }
      if (look.kind !== 'ok') {
        this.violate(`acknowledged withdrawal ${w.cwid} (wid ${w.wid}, seq ${w.seq}) is missing after restart: ${look.kind} ${'code' in look ? look.code : ''}`);
        continue;
      }
      const l = look.body;
      if (l.wid !== w.wid || l.seq !== w.seq || l.amount !== String(w.amount) || l.destination !== w.destination || l.status !== want) {
        this.violate(`withdrawal ${w.cwid}: now ${JSON.stringify({ wid: l.wid, seq: l.seq, amount: l.amount, destination: l.destination, status: l.status })}, ledger ${JSON.stringify({ wid: w.wid, seq: w.seq, amount: String(w.amount), destination: w.destination, status: want })}`);
      }
    }
  }

  /** Sum over every account (ids 1.. until unknown_account) and every market's open pairs. */
  private async verifyConservation(): Promise<void> {
    const admin = this.admin();
    let cash = 0;
    let accounts = 0;
    for (let id = 1; ; id++) {
      const out = await attempt(() => admin.account(id));
      if (out.kind === 'rejected' && out.code === 'unknown_account') break;
      if (out.kind === 'refused' && out.status === 404) break;
      if (out.kind !== 'ok') throw new Error(`account ${id}: ${out.kind}`);
      cash += Number(out.body.available) + Number(out.body.reserved);
      accounts++;
    }
    const c = this.client(this.funding[0]!.keys[0]!);
    let pairs = 0;
    for (const m of this.markets) {
      const out = await this.definite(`market ${m}`, () => c.market(m));
      if (out.kind !== 'ok') throw new Error(`market ${m}: ${out.kind}`);
      pairs += Number(out.body.open_interest);
    }
    let deposits = 0;
    let confirmed = 0;
    for (const t of this.traders) deposits += t.deposit;
    for (const f of this.funding) {
      deposits += f.deposits;
      for (const w of f.withdrawals) if (this.expectedStatus(w) === 'confirmed') confirmed += w.amount;
    }
    this.count('conservation_checks');
    if (cash + 100 * pairs !== deposits - confirmed) {
      this.violate(`money: available + reserved over ${accounts} accounts (${cash}) + 100 x ${pairs} open pairs = ${cash + 100 * pairs}, but deposits ${deposits} - confirmed withdrawals ${confirmed} = ${deposits - confirmed}`);
    }
    if (accounts !== this.traders.length + this.funding.length) this.violate(`${accounts} accounts exist, the ledger created ${this.traders.length + this.funding.length}`);
  }

  private frozenView(a: AdminAccount): string {
    const pos = (a.positions ?? []).map((p) => `${p.market_id}:${p.outcome}:${p.free}:${p.reserved_for_sale}`).sort();
    return JSON.stringify({ available: a.available, reserved: a.reserved, deleted: a.deleted, positions: pos });
  }

  protected async verify(full: boolean): Promise<void> {
    const admin = this.admin();
    const h = await admin.health();
    if (Number(h.durable_seq) > Number(h.seq)) this.violate(`health: durable_seq ${h.durable_seq} > seq ${h.seq}`);
    for (const t of this.traders) {
      if (t.frozen !== null) {
        const a = await admin.account(t.id);
        if (this.frozenView(a) !== t.frozen) this.violate(`retired account ${t.id} changed: ${this.frozenView(a)}, was ${t.frozen}`);
        if (!full) continue;
      }
      await this.verifyTrader(t);
    }
    for (const f of this.funding) await this.verifyFunding(f, full);
    await this.verifyConservation();
  }

  /** Cancels every order of this epoch's traders and records their final state: it must never change again. */
  private async retire(ts: Trader[]): Promise<void> {
    for (const t of ts) {
      const c = this.client(t.keys[0]!);
      const out = await this.definite(`cancel all ${t.id}`, () => c.cancelAll({}));
      if (out.kind !== 'ok') throw new Error(`cancel all of ${t.id}: ${out.kind}`);
      this.freshSeq(out.body.seq, `cancel all of ${t.id}`);
      t.massCancel = 'acked';
      const at = Number(out.body.seq);
      let a: AdminAccount;
      for (let i = 0; ; i++) {
        a = await this.admin().account(t.id);
        if (Number(a.as_of_seq) >= at) break;
        if (i > 50) throw new Error(`account ${t.id}: the control plane never reached seq ${at}`);
        await sleep(20);
      }
      if (a.reserved !== '0') this.violate(`account ${t.id}: reserved ${a.reserved} after cancel-all`);
      for (const p of a.positions ?? []) if (p.reserved_for_sale !== 0) this.violate(`account ${t.id}: ${p.reserved_for_sale} shares reserved for sale after cancel-all`);
      t.frozen = this.frozenView(a);
    }
  }

  // ---------------------------------------------------------------- the run

  async run(): Promise<CrashReport> {
    const t0 = performance.now();
    this.log(`crash test: seed ${this.o.seed}, ${this.o.kills} kills, data dir ${this.dataDir}`);
    try {
      await this.start();
      await this.setup();
      let active = await this.epochTraders();
      while (this.kills < this.o.kills) {
        const ms = this.rng.int(this.o.loadMinMs, this.o.loadMaxMs);
        await this.load(active, ms);
        this.log(`kill ${this.kills}/${this.o.kills} after ${ms} ms of load (epoch ${this.epoch}, seq seen ${this.maxSeenSeq})`);
        // Now and then the next start is killed too, at a random moment of its recovery.
        while (this.kills < this.o.kills && this.o.startKillEvery > 0 && this.kills % this.o.startKillEvery === 2) {
          const s = this.spawnServer();
          this.server = s;
          const wait = this.rng.int(30, 1200);
          await Promise.race([sleep(wait), s.exited]);
          const phase = s.readyAt > 0 ? 'after ready' : 'during start';
          await s.kill();
          this.kills++;
          this.killsDuringStart++;
          this.log(`kill ${this.kills}/${this.o.kills}: ${wait} ms after spawn (${phase})`);
        }
        await this.start();
        const rec = this.recoveries[this.recoveries.length - 1];
        this.log(`restart ${this.restarts}: ready in ${rec?.spawn_to_ready_ms} ms, recovered seq ${rec?.seq} (snapshot ${rec?.snapshot_seq}, ${rec?.ms} ms)${rec && rec.faults.length > 0 ? `, ${rec.faults.join('; ')}` : ''}`);
        await this.resolve();
        if (this.o.injectFaults && this.epoch === 0) this.inject(active[0]!);
        await this.verify(this.restarts % 5 === 0);
        if (this.violations.length > 0) break;
        await this.retire(active);
        this.epoch++;
        active = await this.epochTraders();
      }
      if (this.violations.length === 0) await this.finalStop(active);
    } catch (e) {
      if (!(e instanceof Abort)) this.violate(`the run stopped: ${(e as Error).stack ?? String(e)}`);
    } finally {
      if (this.server?.running) await this.server.kill();
      await closeFetchConnections();
    }
    const ok = this.violations.length === 0;
    if ((ok && !this.o.keep)) rmSync(this.dataDir, { recursive: true, force: true });
    return {
      ok, seed: this.o.seed, kills: this.kills, kills_during_start: this.killsDuringStart, restarts: this.restarts, epochs: this.epoch,
      seconds: Math.round((performance.now() - t0) / 100) / 10, data_dir: this.dataDir, violations: this.violations,
      counts: this.counts, recoveries: this.recoveries,
    };
  }

  /**
   * SIGTERM under load exits 0 and the start after it loses nothing (and
   * finds no torn tail: the journal was synced); then a last SIGTERM with
   * no load.
   */
  protected async finalStop(active: Trader[]): Promise<void> {
    await this.load(active, this.rng.int(this.o.loadMinMs, this.o.loadMaxMs), 'SIGTERM');
    this.log(`SIGTERM under load (epoch ${this.epoch}, seq seen ${this.maxSeenSeq})`);
    await this.start();
    const torn = this.server.recoveryFaults().filter((f) => f.fault === 'torn_tail_truncated');
    if (torn.length > 0) this.violate(`the start after a clean SIGTERM truncated a torn tail: ${JSON.stringify(torn)}`);
    await this.resolve();
    await this.verify(true);
    this.checkLog();
    await closeFetchConnections();
    const y = await this.server.terminate(30_000);
    if (y.killed || y.code !== 0) this.violate(`last SIGTERM: code ${y.code} signal ${y.signal}`);
    this.journalVerify();
  }

  /**
   * An independent check of the whole data directory, when tools/journal.ts
   * is built: checksums and continuity of every segment, a full replay with
   * the invariant checks, and each snapshot's state hash against the replay
   * at its seq. After a clean stop anything but exit 0 is a violation.
   */
  protected journalVerify(): void {
    if (!existsSync(JOURNAL_TOOL_JS)) {
      this.log('tools/journal.js is not built: skipping journal verify');
      return;
    }
    const r = spawnSync(process.execPath, [JOURNAL_TOOL_JS, 'verify', '--data-dir', this.dataDir], { encoding: 'utf8', timeout: 300_000, env: { ...process.env, DX_LOG_LEVEL: 'warn' } });
    this.count('journal_verify_runs');
    if (r.status !== 0) this.violate(`journal verify exited ${r.status ?? r.signal}: ${`${r.stdout}\n${r.stderr}`.trim().slice(-1500)}`);
  }

  /** Checker self-test: an acknowledged order that never existed and a deposit that never happened. */
  private inject(t: Trader): void {
    const coid = this.coid();
    const rec: OrderRec = {
      trader: t, coid, req: { market_id: this.markets[0]!, side: 'buy', outcome: 'yes', tick: 50, qty: 1, client_order_id: coid }, epoch: this.epoch,
      // Seq 1 created the first market: no account has an order with that id.
      state: 'acked', order_id: '1', created_seq: '1', cancelSent: false, cancelUncertain: false,
      decreaseSent: false, terminalSeen: false,
      ack: { order_id: '1', client_order_id: coid, status: 'resting', seq: '1', filled_qty: 0, resting_qty: 1, fills: [] },
    };
    t.orders.push(rec);
    t.byCoid.set(coid, rec);
    this.funding[0]!.deposits += 12_345;
  }
}

/** Thrown to end a run whose violation is already recorded. */
export class Abort extends Error {}

function isRejectReason(reason: string): boolean {
  return reason !== '' && !['user_canceled', 'mass_canceled', 'deadman', 'expired', 'decreased_to_zero', 'round_frozen', 'round_settled', 'round_void',
    'post_only_cross', 'fok_infeasible', 'ioc_remainder', 'self_trade_prevention', 'max_cost_infeasible'].includes(reason);
}

function sameFills(acked: PlacementFill[], now: Fill[]): boolean {
  if (acked.length !== now.length) return false;
  const key = (f: { tick_yes: number; qty: number; path: string }): string => `${f.tick_yes}:${f.qty}:${f.path}`;
  const a = acked.map(key).sort();
  const b = now.map(key).sort();
  return a.every((x, i) => x === b[i]);
}

export function runCrashTest(opts: CrashOptions): Promise<CrashReport> {
  if (!Number.isInteger(opts.kills) || opts.kills < 1) throw new RangeError('kills must be at least 1');
  return new CrashRun(opts).run();
}

// ------------------------------------------------------------------ CLI

function usage(msg: string): never {
  process.stderr.write(`crash_test: ${msg}\nusage: node dist/tools/crash_test.js --kills N [--seed S] [--gateways G] [--traders T] [--load-ms MIN..MAX] [--verify] [--keep] [--json]\n`);
  process.exit(2);
}

function intArg(name: string, v: string | undefined): number {
  if (v === undefined || !/^[0-9]+$/.test(v)) usage(`${name} needs a non-negative integer`);
  return Number(v);
}

async function main(argv: string[]): Promise<number> {
  const o: CrashOptions = { kills: 0, seed: Date.now() % 1_000_000 };
  let json = false;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case '--kills': o.kills = intArg(a, argv[++i]); break;
      case '--seed': o.seed = intArg(a, argv[++i]); break;
      case '--gateways': o.gateways = intArg(a, argv[++i]); break;
      case '--traders': o.traders = intArg(a, argv[++i]); break;
      case '--load-ms': {
        const m = /^([0-9]+)\.\.([0-9]+)$/.exec(argv[++i] ?? '');
        if (!m || Number(m[1]) > Number(m[2])) usage('--load-ms needs MIN..MAX');
        o.loadMinMs = Number(m[1]);
        o.loadMaxMs = Number(m[2]);
        break;
      }
      case '--verify': o.verify = true; break;
      case '--keep': o.keep = true; break;
      case '--json': json = true; break;
      default: usage(`unknown argument ${a}`);
    }
  }
  if (o.kills < 1) usage('--kills N (N >= 1) is required');
  process.once('SIGINT', () => process.exit(130)); // the exit hook SIGKILLs the exchange
  const r = await runCrashTest(o);
  if (json) process.stdout.write(`${JSON.stringify(r, null, 2)}\n`);
  const c = r.counts;
  process.stdout.write([
    `crash test ${r.ok ? 'PASSED' : 'FAILED'}: seed ${r.seed}, ${r.kills} kills (${r.kills_during_start} during a start), ${r.restarts} starts, ${r.epochs} epochs, ${r.seconds} s`,
    `  placements: ${c.place_ok ?? 0} acknowledged, ${c.place_rejected ?? 0} core rejects, ${c.place_refused ?? 0} refused, ${c.place_uncertain ?? 0} cut off (${c.place_uncertain_had_landed ?? 0} had landed, ${c.place_uncertain_had_not_landed ?? 0} had not); fills acknowledged ${c.fills_acked ?? 0}`,
    `  cancels ${c.cancel_ok ?? 0} ok / ${c.cancel_uncertain ?? 0} cut off; decreases ${c.decrease_ok ?? 0} / ${c.decrease_uncertain ?? 0}; deposits ${c.deposit_ok ?? 0} / ${c.deposit_uncertain ?? 0}; withdrawals ${c.withdraw_ok ?? 0} / ${c.withdraw_uncertain ?? 0}; confirms ${c.confirm_ok ?? 0} / ${c.confirm_uncertain ?? 0}; fails ${c.fail_ok ?? 0} / ${c.fail_uncertain ?? 0}; snapshots ${c.snapshot_ok ?? 0}`,
    `  refused before sequencing: ${Object.entries(c).filter(([k]) => k.endsWith('_refused')).map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}`,
    `  checked: ${c.orders_checked ?? 0} order checks, ${c.withdrawals_checked ?? 0} withdrawal checks, ${c.conservation_checks ?? 0} conservation checks; recoveries from a snapshot ${c.recoveries_from_snapshot ?? 0}; torn tails ${c.recovery_fault_torn_tail_truncated ?? 0}; journal verify at the end: ${c.journal_verify_runs ? 'run' : 'not run'}`,
    `  recovery: ${r.recoveries.map((x) => `${x.spawn_to_ready_ms}ms@${x.seq}`).join(' ')}`,
    ...r.violations.map((v) => `  VIOLATION ${v}`),
    r.ok ? '' : `  data dir kept: ${r.data_dir}`,
  ].join('\n') + '\n');
  return r.ok ? 0 : 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
    process.stderr.write(`crash_test: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
