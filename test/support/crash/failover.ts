// failover: the crash test's run against a replicated exchange (issue 15),
// for tools/failover_test.ts (`npm run test:failover`, 20 primary kills and 5
// NATS-leader kills) and test/replication/failover.nats.test.ts (a short
// run). It extends driver.ts's CrashRun: the same ledger, load lanes,
// resolution of cut-off commands and checks, with a different target. A
// 3-node NATS JetStream cluster on 127.0.0.1 (nats_cluster.ts,
// /usr/sbin/nats-server, temporary stores) and two HA nodes (--replicate on:
// one claims the first epoch, the other follows as its standby); then, round
// after round under load, either
//   - a SIGKILL of the primary: the standby must claim the next epoch; the
//     time from the kill to the first acknowledged write on the new primary
//     is recorded; the killed node is started again and must rejoin as a
//     standby (cutting its unacknowledged tail); or
//   - a SIGKILL of the NATS node that leads the stream, started again after
//     (the primary rides it out, or steps down, exits 75, and the standby
//     claims; a node that stepped down is started again);
// and everything the crash test checks, against the new primary: every
// acknowledged answer is there with the same seq and effects, nothing shown is
// above the seq the standby took over at, retries by client_order_id and
// client_withdrawal_id behave, the money adds up. At the end: SIGTERM of the
// primary under load (a clean handover), a read replica started late, and at
// rest the state hashes of both HA nodes, the replica and a fresh replay of the
// newest snapshot object plus the log (src/replication/replay.ts) must be
// equal; `tools/journal verify` must pass on both HA data directories.
// Main thread of the test or tool process.

import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { closeFetchConnections } from '../../../src/client/transport.js';
import { defaults, engineConfigOf } from '../../../src/main/config.js';
import { LogClient } from '../../../src/replication/log_client.js';
import { replayHash, type HashReport } from '../../../src/replication/replay.js';
import { ExchangeProcess } from '../exchange.js';
import { NatsCluster } from '../nats_cluster.js';
import { verify } from './checks.js';
import { Abort, CrashRun, type CrashOptions, type CrashReport } from './driver.js';
import type { Trader } from './ledger.js';
import { resolveCutOff } from './resolve.js';
import { journalVerify } from '../journal_verify.js';

export interface FailoverOptions extends CrashOptions {
  /** SIGKILLs of the stream's NATS leader, spread among the primary kills. */
  natsKills?: number;
  leaseMs?: number;
  heartbeatMs?: number;
}

export interface FailoverReport extends CrashReport {
  primary_kills: number;
  nats_kills: number;
  /** Per primary kill: SIGKILL to the first acknowledged write on the new primary, and the seq it took over at. */
  failovers: { kill_to_ack_ms: number; takeover_seq: number; seen_before_kill: number }[];
  /** Per NATS leader kill: whether the primary stepped down, and the longest write outage seen by the probe. */
  nats_faults: { leader: string; primary_stepped_down: boolean; outage_ms: number }[];
  convergence: Record<string, unknown> | null;
}

interface Node {
  name: string;
  dataDir: string;
  server: ExchangeProcess | null;
}

type Fault = 'primary' | 'nats' | 'term';

class FailoverRun extends CrashRun {
  private cluster: NatsCluster | null = null;
  private readonly nodes: Node[];
  private readonly schedule: Fault[] = [];
  private readonly fo: Required<Pick<FailoverOptions, 'leaseMs' | 'heartbeatMs' | 'natsKills'>>;
  private primaryKills = 0;
  private natsKillsDone = 0;
  private lastFault: { kind: Fault; at: number; node: Node | null; natsIndex: number; leader: string } | null = null;
  readonly failovers: FailoverReport['failovers'] = [];
  readonly natsFaults: FailoverReport['nats_faults'] = [];
  convergence: Record<string, unknown> | null = null;
  private replicaServer: ExchangeProcess | null = null;

  constructor(opts: FailoverOptions) {
    const natsKills = opts.natsKills ?? 0;
    super({
      ...opts,
      kills: opts.kills + natsKills,
      startKillEvery: 0,
      dataDir: opts.dataDir ?? mkdtempSync(join(tmpdir(), 'dx-failover-')),
    });
    this.fo = { leaseMs: opts.leaseMs ?? 1500, heartbeatMs: opts.heartbeatMs ?? 250, natsKills };
    this.nodes = ['ha-a', 'ha-b'].map((name) => ({ name, dataDir: join(this.dataDir, name), server: null }));
    for (const n of this.nodes) mkdirSync(n.dataDir, { recursive: true });
    // NATS leader kills spread evenly among the primary kills.
    const total = opts.kills + natsKills;
    for (let i = 0; i < total; i++) this.schedule.push('primary');
    for (let k = 0; k < natsKills; k++) this.schedule[Math.floor(((k + 1) * total) / (natsKills + 1)) - 1] = 'nats';
  }

  private spawn(node: Node, mode: 'on' | 'replica' = 'on'): ExchangeProcess {
    const c = this.cluster!;
    return new ExchangeProcess(
      {
        data_dir: node.dataDir,
        admin_token: this.token,
        durability: 'fsync',
        demo: false,
        gateways: this.o.gateways,
        snapshot_every: this.o.snapshotEvery,
        segment_bytes: this.o.segmentBytes,
        verify: this.o.verify,
        replicate: mode,
        nats_urls: c.urls.join(','),
        node_name: node.name,
        lease_ms: this.fo.leaseMs,
        heartbeat_ms: this.fo.heartbeatMs,
      },
      { logFile: join(this.dataDir, `${node.name}.log`) },
    );
  }

  private async role(s: ExchangeProcess): Promise<string> {
    if (!s.running || s.port === 0) return 'down';
    try {
      const r = await fetch(`${s.base}/health`, { signal: AbortSignal.timeout(1000) });
      return ((await r.json()) as { role: string }).role;
    } catch (e) {
      if (e instanceof Error) return 'down';
      throw e;
    }
  }

  /** Waits until some running node is primary (starting nodes that exited meanwhile); returns it. */
  private async awaitPrimary(timeoutMs: number): Promise<Node> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      for (const n of this.nodes) {
        if (n.server !== null && !n.server.running) {
          const x = await n.server.exited;
          this.ledger.count(`node_exit_${x.code ?? x.signal}`);
          n.server = null;
        }
        if (n.server === null) {
          n.server = this.spawn(n);
          await n.server.ready(120_000);
        }
        if (await this.role(n.server) === 'primary') return n;
      }
      if (performance.now() > until) throw new Error(`no primary within ${timeoutMs} ms`);
      await sleep(25);
    }
  }

  /** The first write the new primary acknowledges (an oracle tick: no ledger effect); ms since `since`. */
  private async probeWrite(s: ExchangeProcess, since: number, timeoutMs: number): Promise<number> {
    const admin = s.admin(2000);
    const until = performance.now() + timeoutMs;
    for (;;) {
      try {
        await admin.oracleTick({ source_id: 63, price: '100000000' });
        return performance.now() - since;
      } catch (e) {
        if (!(e instanceof Error)) throw e;
        if (performance.now() > until) throw new Error(`no write acknowledged by ${s.base} within ${timeoutMs} ms: ${e.message}`);
        await sleep(5);
      }
    }
  }

  protected override async start(): Promise<void> {
    if (this.cluster === null) {
      this.cluster = await NatsCluster.start();
      const a = this.nodes[0]!;
      a.server = this.spawn(a);
      await a.server.ready(120_000);
      const p = await this.awaitPrimaryAmong([a], 30_000);
      this.server = p.server!;
      const b = this.nodes[1]!;
      b.server = this.spawn(b);
      await b.server.ready(120_000);
      this.restarts++;
      return;
    }
    const f = this.lastFault!;
    if (f.kind !== 'nats') {
      // The standby must claim: find the new primary, time its first acknowledged write.
      const p = await this.awaitPrimaryAmong(this.nodes.filter((n) => n !== f.node), 10 * this.fo.leaseMs + 30_000);
      const ms = await this.probeWrite(p.server!, f.at, 30_000);
      const claim = p.server!.events('replication_claimed').at(-1);
      const takeover = Number(claim?.seq ?? -1);
      this.takeoverSeq = takeover;
      if (f.kind === 'primary')
        this.failovers.push({ kill_to_ack_ms: Math.round(ms), takeover_seq: takeover, seen_before_kill: this.ledger.seqFloor });
      this.recoveries.push({ spawn_to_ready_ms: Math.round(ms), seq: takeover, snapshot_seq: 0, ms: Math.round(ms), faults: [] });
      if (takeover < this.ledger.seqFloor)
        this.ledger.violate(
          `the standby took over at seq ${takeover}, below seq ${this.ledger.seqFloor} that answers showed before the kill: acknowledged ` +
            `or shown state was lost`,
        );
      this.server = p.server!;
      // The killed node rejoins as a standby.
      const old = f.node!;
      old.server = this.spawn(old);
      try {
        await old.server.ready(120_000);
      } catch (e) {
        this.ledger.violate(`the killed primary ${old.name} did not rejoin: ${(e as Error).message}`);
        throw new Abort();
      }
      const cut = old.server.events('replication_tail_truncated');
      if (cut.length > 0) this.ledger.count('rejoin_tail_truncated');
      if ((await this.role(old.server)) !== 'standby')
        this.ledger.violate(`${old.name} rejoined as ${await this.role(old.server)}, not standby`);
    } else {
      const c = this.cluster;
      await c.restart(f.natsIndex, 60_000);
      const before = this.server;
      const p = await this.awaitPrimary(10 * this.fo.leaseMs + 60_000);
      const ms = await this.probeWrite(p.server!, f.at, 60_000);
      const steppedDown = p.server !== before;
      this.natsFaults.push({ leader: f.leader, primary_stepped_down: steppedDown, outage_ms: Math.round(ms) });
      this.takeoverSeq = Number.MAX_SAFE_INTEGER;
      if (steppedDown) {
        const claim = p.server!.events('replication_claimed').at(-1);
        const takeover = Number(claim?.seq ?? -1);
        this.takeoverSeq = takeover;
        if (takeover < this.ledger.seqFloor)
          this.ledger.violate(
            `after the NATS leader kill the new primary took over at seq ${takeover}, below seq ${this.ledger.seqFloor} shown before`,
          );
      }
      this.server = p.server!;
      // Every other node a standby again (a primary that stepped down stops and exits 75: start it again).
      for (const n of this.nodes) if (n !== p) await this.ensureStandby(n);
    }
    this.restarts++;
    const h = await this.link.admin().health();
    if (h.durability !== 'fsync') this.ledger.violate(`health says durability ${String(h.durability)}`);
    if (Number(h.durable_seq) > Number(h.seq)) this.ledger.violate(`health durable_seq ${h.durable_seq} above seq ${h.seq}`);
  }

  /** The seq the new primary took over at (a NATS fault without a failover: the primary went on, nothing to compare). */
  protected override recoveredSeq(): number {
    return this.takeoverSeq;
  }

  private takeoverSeq = Number.MAX_SAFE_INTEGER;

  /** Waits for a node that is stepping down (or gone) to exit, starts it again, and waits until it follows as a standby. */
  private async ensureStandby(n: Node): Promise<void> {
    if (n.server !== null && n.server.running && await this.role(n.server) === 'standby') return;
    if (n.server !== null) {
      const x = await Promise.race([n.server.exited, sleep(45_000).then(() => null)]);
      if (x === null) {
        this.ledger.violate(`${n.name} neither follows nor exits (role ${await this.role(n.server)})`);
        await n.server.kill();
      } else {
        this.ledger.count(`node_exit_${x.code ?? x.signal}`);
      }
    }
    n.server = this.spawn(n);
    await n.server.ready(120_000);
    if (n.server.events('replication_tail_truncated').length > 0) this.ledger.count('rejoin_tail_truncated');
    const until = performance.now() + 30_000;
    while (await this.role(n.server) !== 'standby') {
      if (performance.now() > until) {
        this.ledger.violate(`${n.name} restarted as ${await this.role(n.server)}, not standby`);
        throw new Abort();
      }
      await sleep(25);
    }
  }

  private async awaitPrimaryAmong(nodes: Node[], timeoutMs: number): Promise<Node> {
    const until = performance.now() + timeoutMs;
    for (;;) {
      for (const n of nodes) if (n.server !== null && await this.role(n.server) === 'primary') return n;
      if (performance.now() > until) throw new Error(`no standby took over within ${timeoutMs} ms`);
      await sleep(10);
    }
  }

  protected override async killServer(): Promise<void> {
    this.stopping = true;
    const fault = this.schedule[this.kills] ?? 'primary';
    const primary = this.nodes.find((n) => n.server === this.server)!;
    if (fault === 'primary') {
      const at = performance.now();
      await this.server.kill();
      this.lastFault = { kind: 'primary', at, node: primary, natsIndex: -1, leader: '' };
      this.primaryKills++;
    } else {
      const log = await LogClient.open(this.cluster!.logConfig('failover-test'), 'failover test');
      const leader = (await log.info()).leader;
      await log.close();
      const i = this.cluster!.indexOf(leader);
      const at = performance.now();
      await this.cluster!.kill(i);
      this.lastFault = { kind: 'nats', at, node: null, natsIndex: i, leader };
      this.natsKillsDone++;
    }
    for (const n of this.nodes)
      if (n.server !== null && n.server !== this.server)
        for (const l of n.server.errors())
          if (l.event !== 'replication_step_down' && l.event !== 'replication_stopped_answering')
            this.ledger.violate(`${n.name} logged an error: ${JSON.stringify(l).slice(0, 600)}`);
    this.checkLog();
    this.kills++;
    this.ledger.raiseFloors();
  }

  /** SIGTERM of the primary under load, the checks after the handover, then convergence at rest. */
  protected override async finalStop(active: Trader[]): Promise<void> {
    const primary = this.nodes.find((n) => n.server === this.server)!;
    await this.load(active, 1500, 'SIGTERM');
    this.lastFault = { kind: 'term', at: performance.now(), node: primary, natsIndex: -1, leader: '' };
    await this.start();
    await resolveCutOff(this.ledger, this.link);
    await verify(this.ledger, this.link, true);
    await closeFetchConnections();
    await this.converge();
  }

  private async converge(): Promise<void> {
    // A read replica started late (after snapshots and purges): it boots from the newest snapshot object.
    const r: Node = { name: 'replica-1', dataDir: join(this.dataDir, 'replica-1'), server: null };
    mkdirSync(r.dataDir, { recursive: true });
    this.replicaServer = this.spawn(r, 'replica');
    await this.replicaServer.ready(120_000);
    const servers = [...this.nodes.map((n) => ({ name: n.name, s: n.server! })), { name: r.name, s: this.replicaServer }];
    const admins = servers.map((x) => ({ name: x.name, a: x.s.admin(30_000) }));
    // At rest: every node at the same seq with the same hash, equal to a fresh replay of the bucket and the log.
    const cfg = this.cluster!.logConfig('failover-test');
    let hashes: { name: string; as_of_seq: string; state_hash: string }[] = [];
    let tool: HashReport | null = null;
    let same = false;
    let replayError = '';
    for (const until = performance.now() + 60_000; !same && performance.now() < until;) {
      hashes = await Promise.all(admins.map(async (x) => ({ name: x.name, ...(await x.a.stateHash()) })));
      // A replay that stalls (a NATS replica that is not current, src/replication/replay.ts) fails; the next round tries again.
      tool = await replayHash(cfg, engineConfigOf(defaults())).catch((e: unknown) => {
        replayError = (e as Error).message;
        return null;
      });
      same = tool !== null && hashes.every((h) => h.as_of_seq === String(tool!.seq) && h.state_hash === tool!.state_hash);
      if (!same) await sleep(500);
    }
    this.convergence = {
      nodes: hashes,
      replay: tool,
      replica_snapshot: this.replicaServer.events('replication_snapshot_loaded').at(-1) ?? null,
    };
    if (!same) {
      const replay = tool === null ? `replay failed: ${replayError}` : `replay@${tool.seq}:${tool.state_hash}`;
      const all = [...hashes.map((h) => `${h.name}@${h.as_of_seq}:${h.state_hash}`), replay];
      this.ledger.violate(`state hashes differ at rest: ${all.join(', ')}`);
    }
    this.ledger.count('convergence_checks');
    for (const x of servers) {
      const y = await x.s.terminate(30_000);
      if (y.killed || y.code !== 0) this.ledger.violate(`SIGTERM of ${x.name}: code ${y.code} signal ${y.signal}`);
    }
    for (const n of this.nodes) {
      const v = journalVerify(n.dataDir, { ...process.env, DX_LOG_LEVEL: 'warn' }, 300_000);
      if (v === null) break; // tools/ not built
      this.ledger.count('journal_verify_runs');
      if (!v.ok) this.ledger.violate(`journal verify of ${n.name} ${v.problem}`);
    }
  }

  override async run(): Promise<CrashReport> {
    try {
      return await super.run();
    } finally {
      for (const n of this.nodes) if (n.server?.running) await n.server.kill();
      if (this.replicaServer?.running) await this.replicaServer.kill();
      await this.cluster?.close();
    }
  }

  report(r: CrashReport): FailoverReport {
    return {
      ...r,
      primary_kills: this.primaryKills,
      nats_kills: this.natsKillsDone,
      failovers: this.failovers,
      nats_faults: this.natsFaults,
      convergence: this.convergence,
    };
  }
}

export async function runFailoverTest(opts: FailoverOptions): Promise<FailoverReport> {
  if (!Number.isInteger(opts.kills) || opts.kills < 1) throw new RangeError('kills must be at least 1');
  const run = new FailoverRun(opts);
  return run.report(await run.run());
}

