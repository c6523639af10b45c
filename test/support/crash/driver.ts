// driver: the crash test's run. Starts the real exchange as a child process
// (`--durability fsync`, the launcher's ExchangeProcess) on its own data
// directory, creates markets, funding accounts and, per epoch, fresh trading
// accounts; runs the load lanes (lanes.ts) for a random time, SIGKILLs the
// exchange while requests are in flight (and now and then kills the next
// start during its recovery), restarts it on the same directory, checks the
// recovery line, resolves what the kill cut off (resolve.ts), checks
// everything against the ledger (checks.ts), retires the epoch's traders
// and goes on. At the end: a SIGTERM under load that must exit 0 and lose
// nothing, a last clean SIGTERM, and `tools/journal verify` on the whole
// directory. Main thread of the test or tool process; the exchange runs in
// a child process.

import { mkdirSync, mkdtempSync, rmSync, statSync, watch } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeFetchConnections } from '../../../src/client/transport.js';
import { FILE_HEADER_BYTES, JOURNAL_DIR, SNAPSHOT_DIR } from '../../../src/journal/format.js';
import { listSegments } from '../../../src/journal/recovery.js';
import { snapshotTemps } from '../../../src/journal/snapshot.js';
import { Rng } from '../../../src/lib/rng.js';
import { ExchangeProcess } from '../exchange.js';
import { retire, verify } from './checks.js';
import { fundingLane, readerLane, traderLane, type Lane, type LaneContext } from './lanes.js';
import { Ledger, type ExchangeLink, type Key, type OrderRec, type Trader } from './ledger.js';
import { attempt, type Outcome } from './outcome.js';
import { DxWebSocket } from '../../../src/client/websocket.js';
import { resolveCutOff } from './resolve.js';
import { journalVerify } from '../journal_verify.js';

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
  /**
   * Every `snapshotKillEvery`-th load kill is aimed at a snapshot write: the
   * driver asks for a snapshot (POST /admin/snapshot) and kills the moment
   * its temp file appears (fs.watch), i.e. while it is written (0: never).
   */
  snapshotKillEvery?: number;
  /** Every `rotationKillEvery`-th load kill lands the moment a new journal segment file appears (0: never). */
  rotationKillEvery?: number;
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

/**
 * Settings that make kills land in segment rotations and snapshot writes:
 * 8 KiB segments (a rotation every few dozen commands), a snapshot every 300
 * journal records, every third kill aimed at a snapshot write and every
 * third (another one) at a segment rotation.
 */
export const ROTATION_AND_SNAPSHOT_STRESS: Pick<CrashOptions, 'segmentBytes' | 'snapshotEvery' | 'snapshotKillEvery' | 'rotationKillEvery'>
= {
  segmentBytes: 8192, snapshotEvery: 300, snapshotKillEvery: 3, rotationKillEvery: 3,
};

/** Resolves true when a file whose name matches `re` appears in dir (fs.watch: inotify here), false after timeoutMs. */
function fileAppears(dir: string, re: RegExp, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const w = watch(dir, (_event, name) => {
      if (name !== null && re.test(name)) finish(true);
    });
    const timer = setTimeout(() => finish(false), timeoutMs);
    function finish(seen: boolean): void {
      clearTimeout(timer);
      w.close();
      resolve(seen);
    }
  });
}

/** How long an aimed kill waits for its moment (a snapshot's temp file, a new segment) before it goes ahead anyway. */
const AIM_WAIT_MS = 10_000;
const MARKETS_WANTED = 2;
const TRADER_DEPOSIT = 5_000_000;
const FUNDING_DEPOSIT = 50_000_000;

/** A start that cannot go on (the exchange did not come up): the violation is already recorded. */
export class Abort extends Error {}

export function runCrashTest(opts: CrashOptions): Promise<CrashReport> {
  if (!Number.isInteger(opts.kills) || opts.kills < 1) throw new RangeError('kills must be at least 1');
  return new CrashRun(opts).run();
}

/** The run (failover.ts extends it: the same ledger, lanes and checks against a replicated group). */
export class CrashRun {
  private readonly rng: Rng;
  protected readonly token: string;
  protected readonly dataDir: string;
  protected readonly ledger: Ledger;
  protected server!: ExchangeProcess;
  protected readonly recoveries: CrashReport['recoveries'] = [];
  protected kills = 0;
  private killsDuringStart = 0;
  protected restarts = 0;
  protected stopping = false;
  /** Lane requests sent and not yet answered (the kill waits for some, so that commands are cut off). */
  private inflight = 0;
  protected readonly link: ExchangeLink;
  protected readonly log: (line: string) => void;
  protected readonly o: Required<Omit<CrashOptions, 'dataDir' | 'log'>>;

  constructor(opts: CrashOptions) {
    this.o = {
      kills: opts.kills, seed: opts.seed >>> 0, gateways: opts.gateways ?? 1, traders: opts.traders ?? 4,
      loadMinMs: opts.loadMinMs ?? 400, loadMaxMs: opts.loadMaxMs ?? 2000, startKillEvery: opts.startKillEvery ?? 5,
      snapshotKillEvery: opts.snapshotKillEvery ?? 0, rotationKillEvery: opts.rotationKillEvery ?? 0,
      verify: opts.verify ?? false, snapshotEvery: opts.snapshotEvery ?? 2500, segmentBytes: opts.segmentBytes ?? 128 * 1024,
      keep: opts.keep ?? false, injectFaults: opts.injectFaults ?? false,
    };
    this.rng = new Rng(this.o.seed);
    this.token = `crash-test-${this.o.seed}-token-0123456789abcdef`;
    this.dataDir = opts.dataDir ?? mkdtempSync(join(tmpdir(), 'dx-crash-'));
    this.log = opts.log ?? ((l) => process.stderr.write(`${l}\n`));
    this.ledger = new Ledger(this.o.seed);
    this.link = {
      client: (k: Key, timeoutMs?: number) => this.server.client(k.keyId, k.secret, timeoutMs),
      ws: (k: Key) => new DxWebSocket({ url: this.server.base, keyId: k.keyId, secret: k.secret, reconnect: false }),
      admin: (timeoutMs?: number) => this.server.admin(timeoutMs),
      recoveredSeq: () => this.recoveredSeq(),
    };
  }

  /** The seq the serving exchange continued from after the last kill (its recovery line). */
  protected recoveredSeq(): number {
    return this.server.recovery()?.seq ?? 0;
  }

  // ---------------------------------------------------------------- server lifecycle

  private spawnServer(): ExchangeProcess {
    return new ExchangeProcess({
      data_dir: this.dataDir, admin_token: this.token, durability: 'fsync', demo: false, gateways: this.o.gateways,
      snapshot_every: this.o.snapshotEvery, segment_bytes: this.o.segmentBytes, verify: this.o.verify,
      // The smallest capture step: every snapshot is copied over many event-loop turns while the events are held, kills included.
      snapshot_step_bytes: 4096,
    });
  }

  /** Starts the exchange and checks its recovery line against what was seen before. */
  protected async start(): Promise<void> {
    const L = this.ledger;
    const s = this.spawnServer();
    this.server = s;
    try {
      await s.ready(120_000);
    } catch (e) {
      L.violate(`the exchange did not start on its own data directory: ${(e as Error).message}`);
      throw new Abort();
    }
    this.restarts++;
    const rec = s.recovery();
    const faults = s
      .recoveryFaults()
      .map((f) => `${String(f.fault)}${f.path ? ` ${String(f.path)}` : ''}${f.kind ? ` (${String(f.kind)})` : ''}`);
    for (const f of faults) L.count(`recovery_fault_${f.split(' ')[0]}`);
    if (rec === null) {
      L.violate('the start log has no recovery line');
    } else {
      this.recoveries.push({
        spawn_to_ready_ms: Math.round(s.spawnToReadyMs),
        seq: rec.seq,
        snapshot_seq: rec.snapshot_seq,
        ms: rec.ms,
        faults,
      });
      if (rec.seq < L.seqFloor)
        L.violate(
          `recovered seq ${rec.seq} is below seq ${L.seqFloor} that answers showed before the kill: acknowledged or shown state was lost`,
        );
      if (rec.snapshot_seq > rec.seq) L.violate(`recovery line: snapshot_seq ${rec.snapshot_seq} > seq ${rec.seq}`);
      if (rec.snapshot_seq > 0) L.count('recoveries_from_snapshot');
    }
    const h = await this.link.admin().health();
    if (h.durability !== 'fsync') L.violate(`health says durability ${String(h.durability)}`);
    if (Number(h.seq) < (rec?.seq ?? 0)) L.violate(`health seq ${h.seq} below the recovered seq ${rec?.seq}`);
    if (Number(h.durable_seq) > Number(h.seq)) L.violate(`health durable_seq ${h.durable_seq} above seq ${h.seq}`);
  }

  /** Error-level log lines (a failed snapshot, a failed journal, ...) of the current server are violations. */
  protected checkLog(): void {
    for (const l of this.server.errors()) this.ledger.violate(`the exchange logged an error: ${JSON.stringify(l).slice(0, 600)}`);
  }

  /** SIGKILL now; the lanes see their requests cut off. */
  protected async killServer(): Promise<void> {
    this.stopping = true;
    await this.server.kill();
    this.checkLog();
    this.kills++;
    this.noteKillPoint();
    this.ledger.raiseFloors();
  }

  /**
   * What the kill interrupted, as the data directory shows it before the
   * next start repairs it: a snapshot temp file (killed while a snapshot
   * was written), a last segment that holds no more than its header (killed
   * while rotating to a new segment).
   */
  private noteKillPoint(): void {
    if (snapshotTemps(this.dataDir).length > 0) this.ledger.count('kills_mid_snapshot_write');
    const segs = listSegments(this.dataDir);
    const last = segs[segs.length - 1];
    if (last !== undefined && segs.length > 1 && statSync(last.path).size <= FILE_HEADER_BYTES) this.ledger.count('kills_mid_rotation');
  }

  // ---------------------------------------------------------------- set-up

  private async setup(): Promise<void> {
    const L = this.ledger;
    const admin = this.link.admin();
    for (let i = 0; i < MARKETS_WANTED; i++) {
      const m = await admin.createMarket({ title: `crash test market ${i + 1}`, category: 0, position_limit: 0, fee_schedule_id: 0 });
      L.seen(m.seq);
      const close = String(BigInt(Date.now() + 6 * 3_600_000) * 1_000_000n);
      const ro = await admin.openRound(m.market_id, { strike: '100000000', close_ts: close });
      L.seen(ro.seq);
      L.markets.push(m.market_id);
    }
    for (let i = 0; i < 2; i++) {
      const id = await this.newAccount();
      const keys: Key[] = [];
      for (let k = 0; k < 3; k++) keys.push(await this.newKey(id, ['read', 'withdraw']));
      const d = await admin.deposit(id, { amount: String(FUNDING_DEPOSIT), ref: `crash-funding-${id}` });
      L.freshSeq(d.seq, 'deposit');
      L.funding.push({ id, keys, deposits: FUNDING_DEPOSIT, uncertainDeposits: [], withdrawals: [], byCwid: new Map() });
    }
    L.retention = await this.link.client(L.funding[0]!.keys[0]!).retention();
  }

  private async newAccount(): Promise<number> {
    const a = await this.link.admin().createAccount();
    if (a.seq !== undefined) this.ledger.freshSeq(a.seq, 'create account');
    this.ledger.freshAccount(a.account_id);
    return a.account_id;
  }

  private async newKey(account: number, scopes: ('read' | 'trade' | 'withdraw')[]): Promise<Key> {
    const k = await this.link.admin().createKey(account, scopes);
    if (k.seq !== undefined) this.ledger.freshSeq(k.seq, 'create key');
    return { keyId: k.key_id, secret: k.secret };
  }

  /** New trading accounts for this epoch (set-up is not killed: its answers are all definite). */
  private async epochTraders(): Promise<Trader[]> {
    const L = this.ledger;
    const out: Trader[] = [];
    for (let i = 0; i < this.o.traders; i++) {
      const id = await this.newAccount();
      const d = await this.link.admin().deposit(id, { amount: String(TRADER_DEPOSIT), ref: `crash-trader-${id}` });
      L.freshSeq(d.seq, 'deposit');
      const keys = [await this.newKey(id, ['read', 'trade']), await this.newKey(id, ['read', 'trade'])];
      const t: Trader = {
        id,
        epoch: L.epoch,
        deposit: TRADER_DEPOSIT,
        keys,
        orders: [],
        byCoid: new Map(),
        free: new Map(),
        massCancel: 'none',
        frozen: null,
      };
      L.traders.push(t);
      out.push(t);
    }
    return out;
  }

  // ---------------------------------------------------------------- load

  /** The clients of one load period: a lane per trading key, the funding lane and the reader lane, each with its own seeded Rng. */
  private lanesFor(active: Trader[]): Lane[] {
    const seed = this.o.seed;
    const epoch = this.ledger.epoch;
    const lanes: Lane[] = [];
    let laneNo = 0;
    // Each trader's first key places over REST, its second over the WebSocket lane (JSON order entry).
    for (const t of active) {
      t.keys.forEach((k, i) => lanes.push(traderLane(t, k, new Rng(seed ^ (epoch * 7919 + ++laneNo * 104729)), i === 0 ? 'rest' : 'ws')));
    }
    lanes.push(fundingLane(new Rng(seed ^ (epoch * 7919 + 999_331))));
    lanes.push(readerLane(new Rng(seed ^ (epoch * 7919 + 777_767))));
    return lanes;
  }

  private laneContext(): LaneContext {
    const run = this;
    return {
      ...this.link,
      ledger: this.ledger,
      get stopping() {
        return run.stopping;
      },
      attempt: (call) => this.laneAttempt(call),
    };
  }

  protected async load(active: Trader[], ms: number, how: 'SIGKILL' | 'SIGTERM' = 'SIGKILL'): Promise<void> {
    const L = this.ledger;
    this.stopping = false;
    const ctx = this.laneContext();
    const done = Promise.all(this.lanesFor(active).map((lane) => lane(ctx)));
    // A lane that fails outside the ledger's handling is a bug of this tool: surface it.
    let laneError: unknown = null;
    done.catch((e: unknown) => {
      laneError = e;
    });
    await sleep(ms);
    // Kill while at least two lane requests are outstanding (waiting at most 300 ms for that).
    for (let waited = 0; this.inflight < 2 && waited < 300; waited++) await sleep(1);
    if (how === 'SIGKILL') await this.aim(this.kills + 1);
    if (how === 'SIGKILL') {
      L.count('kills_with_requests_in_flight', this.inflight > 0 ? 1 : 0);
      await this.killServer();
    } else {
      // Graceful stop under load: held requests are answered, later ones get
      // 503 (refused: they must never show up) or find the listener closed.
      this.server.child.proc.kill('SIGTERM');
      await sleep(250);
      this.stopping = true;
    }
    // The handler above kept a lane's error in laneError, thrown next.
    await done.catch(() => undefined);
    if (laneError !== null) throw laneError;
    if (how === 'SIGTERM') {
      await closeFetchConnections();
      const x = await Promise.race([this.server.exited, sleep(30_000).then(() => null)]);
      if (x === null) {
        L.violate('SIGTERM under load: the exchange did not exit within 30 s');
        await this.server.kill();
      } else if (x.code !== 0 || x.signal !== null) {
        L.violate(
          `SIGTERM under load: the exchange ended with code ${x.code} signal ${x.signal}; stderr: ${this.server.stderrTail().slice(-1500)}`,
        );
      }
      this.checkLog();
      L.raiseFloors();
    }
  }

  /**
   * Holds the kill until the moment it is aimed at, when this kill is: a
   * snapshot's temp file appearing (the driver asks for the snapshot; its
   * answer is cut off like any other), or a new segment file appearing.
   * After AIM_WAIT_MS without it the kill goes ahead (counted as missed):
   * generous, because on a loaded machine the snapshot worker may take
   * seconds to fold up to the snapshot's seq before it writes its file.
   */
  private async aim(kill: number): Promise<void> {
    const L = this.ledger;
    if (this.o.snapshotKillEvery > 0 && kill % this.o.snapshotKillEvery === 0) {
      const dir = join(this.dataDir, SNAPSHOT_DIR);
      mkdirSync(dir, { recursive: true });
      const seen = fileAppears(dir, /\.dxs\.tmp-/, AIM_WAIT_MS);
      void attempt(() => this.link.admin().snapshot());
      L.count(await seen ? 'kills_aimed_at_snapshot' : 'kills_aimed_at_snapshot_missed');
    } else if (this.o.rotationKillEvery > 0 && kill % this.o.rotationKillEvery === 1 % this.o.rotationKillEvery) {
      const seen = await fileAppears(join(this.dataDir, JOURNAL_DIR), /^seg-[0-9]{20}\.dxj$/, AIM_WAIT_MS);
      L.count(seen ? 'kills_aimed_at_rotation' : 'kills_aimed_at_rotation_missed');
    }
  }

  /** attempt() for the load lanes, counting what is in flight. */
  private async laneAttempt<T>(call: () => Promise<T>): Promise<Outcome<T>> {
    this.inflight++;
    try {
      const out = await attempt(call);
      if (out.kind === 'uncertain' && /^5[0-9][0-9] /.test(out.why) && !out.why.startsWith('504 '))
        this.ledger.violate(`a running exchange answered ${out.why}`);
      return out;
    } finally {
      this.inflight--;
    }
  }

  // ---------------------------------------------------------------- the run

  async run(): Promise<CrashReport> {
    const L = this.ledger;
    const t0 = performance.now();
    this.log(`crash test: seed ${this.o.seed}, ${this.o.kills} kills, data dir ${this.dataDir}`);
    try {
      await this.start();
      await this.setup();
      let active = await this.epochTraders();
      while (this.kills < this.o.kills) {
        const ms = this.rng.int(this.o.loadMinMs, this.o.loadMaxMs);
        await this.load(active, ms);
        this.log(`kill ${this.kills}/${this.o.kills} after ${ms} ms of load (epoch ${L.epoch}, seq seen ${L.maxSeenSeq})`);
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
        this.log(
          `restart ${this.restarts}: ready in ${rec?.spawn_to_ready_ms} ms, recovered seq ${rec?.seq} (snapshot ${rec?.snapshot_seq}, ` +
            `${rec?.ms} ms)${rec && rec.faults.length > 0 ? `, ${rec.faults.join('; ')}` : ''}`,
        );
        await resolveCutOff(L, this.link);
        if (this.o.injectFaults && L.epoch === 0) this.inject(active[0]!);
        await verify(L, this.link, this.restarts % 5 === 0);
        if (L.violations.length > 0) break;
        await retire(L, this.link, active);
        L.epoch++;
        active = await this.epochTraders();
      }
      if (L.violations.length === 0) await this.finalStop(active);
    } catch (e) {
      if (!(e instanceof Abort)) L.violate(`the run stopped: ${(e as Error).stack ?? String(e)}`);
    } finally {
      if (this.server?.running) await this.server.kill();
      await closeFetchConnections();
    }
    const ok = L.violations.length === 0;
    if (ok && !this.o.keep) rmSync(this.dataDir, { recursive: true, force: true });
    return {
      ok, seed: this.o.seed, kills: this.kills, kills_during_start: this.killsDuringStart, restarts: this.restarts, epochs: L.epoch,
      seconds: Math.round((performance.now() - t0) / 100) / 10, data_dir: this.dataDir, violations: L.violations,
      counts: L.counts, recoveries: this.recoveries,
    };
  }

  /**
   * SIGTERM under load exits 0 and the start after it loses nothing (and
   * finds no torn tail: the journal was synced); then a last SIGTERM with
   * no load.
   */
  protected async finalStop(active: Trader[]): Promise<void> {
    const L = this.ledger;
    await this.load(active, this.rng.int(this.o.loadMinMs, this.o.loadMaxMs), 'SIGTERM');
    this.log(`SIGTERM under load (epoch ${L.epoch}, seq seen ${L.maxSeenSeq})`);
    await this.start();
    const torn = this.server.recoveryFaults().filter((f) => f.fault === 'torn_tail_truncated');
    if (torn.length > 0) L.violate(`the start after a clean SIGTERM truncated a torn tail: ${JSON.stringify(torn)}`);
    await resolveCutOff(L, this.link);
    await verify(L, this.link, true);
    this.checkLog();
    await closeFetchConnections();
    const y = await this.server.terminate(30_000);
    if (y.killed || y.code !== 0) L.violate(`last SIGTERM: code ${y.code} signal ${y.signal}`);
    this.journalVerify();
  }

  /**
   * An independent check of the whole data directory, when tools/journal.ts
   * is built: checksums and continuity of every segment, a full replay with
   * the invariant checks, and each snapshot's state hash against the replay
   * at its seq. After a clean stop anything but exit 0 is a violation.
   */
  protected journalVerify(): void {
    const v = journalVerify(this.dataDir, { ...process.env, DX_LOG_LEVEL: 'warn' }, 300_000);
    if (v === null) {
      this.log('tools/journal.js is not built: skipping journal verify');
      return;
    }
    this.ledger.count('journal_verify_runs');
    if (!v.ok) this.ledger.violate(`journal verify ${v.problem}`);
  }

  /** Checker self-test: an acknowledged order that never existed and a deposit that never happened. */
  private inject(t: Trader): void {
    const L = this.ledger;
    const coid = L.coid();
    const rec: OrderRec = {
      trader: t,
      coid,
      req: { market_id: L.markets[0]!, side: 'buy', outcome: 'yes', tick: 50, qty: 1, client_order_id: coid },
      via: 'rest',
      epoch: L.epoch,
      // Seq 1 created the first market: no account has an order with that id.
      state: 'acked',
      order_id: '1',
      created_seq: '1',
      cancelSent: false,
      cancelUncertain: false,
      decreaseSent: false,
      terminalSeen: false,
      ack: { order_id: '1', client_order_id: coid, status: 'resting', seq: '1', filled_qty: 0, resting_qty: 1, fills: [] },
    };
    t.orders.push(rec);
    t.byCoid.set(coid, rec);
    L.funding[0]!.deposits += 12_345;
  }
}
