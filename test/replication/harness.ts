// Harness of the replication suites (`npm run test:replication`): a 3-node
// NATS cluster of its own (test/support/nats_cluster.ts) and exchange
// processes with --replicate on|replica, started as children on fresh ports
// and temporary data directories (the crash test's ExchangeServer). Every
// group stops its processes and removes its directories in close(), also
// after a failed assertion (call it in a finally). Test process, main thread.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AdminClient } from '../../src/client/admin_client.js';
import type { DxClient } from '../../src/client/client.js';
import type { StateHash } from '../../src/client/types.js';
import { closeFetchConnections } from '../../src/client/transport.js';
import type { ReplicationConfig } from '../../src/replication/log_client.js';
import { ExchangeProcess } from '../support/exchange.js';
import { NatsCluster } from '../support/nats_cluster.js';

export const TOKEN = 'replication-tests-admin-token-0123456789';
export const LEASE_MS = 1500;
export const HEARTBEAT_MS = 250;

export interface GroupNode {
  name: string;
  mode: 'on' | 'replica';
  dataDir: string;
  server: ExchangeProcess;
}

export interface Health {
  role: string;
  epoch: number;
  as_of_seq: string;
  durable_seq: string;
  primary_url: string;
  primary_seq: string;
  lag_seqs: number;
  lag_ms: number;
}

export class Group {
  readonly nodes: GroupNode[] = [];

  private constructor(readonly nats: NatsCluster, readonly dir: string) {}

  static async start(): Promise<Group> {
    const nats = await NatsCluster.start();
    return new Group(nats, mkdtempSync(join(tmpdir(), 'dx-repl-test-')));
  }

  /** Starts a node (a new data directory unless `dataDir` is given) and waits for its ready line. */
  async node(name: string, mode: 'on' | 'replica' = 'on', dataDir?: string): Promise<GroupNode> {
    const dir = dataDir ?? mkdtempSync(join(this.dir, `${name}-`));
    const server = new ExchangeProcess(
      {
        data_dir: dir,
        admin_token: TOKEN,
        durability: 'fsync',
        demo: false,
        gateways: 1,
        replicate: mode,
        nats_urls: this.nats.urls.join(','),
        node_name: name,
        lease_ms: LEASE_MS,
        heartbeat_ms: HEARTBEAT_MS,
      },
      { logFile: join(this.dir, `${name}.log`) },
    );
    const n: GroupNode = { name, mode, dataDir: dir, server };
    const old = this.nodes.findIndex((x) => x.name === name);
    if (old >= 0) this.nodes.splice(old, 1);
    this.nodes.push(n);
    await server.ready(120_000);
    return n;
  }

  /** A node started as the group's first: it claims epoch 1 after a lease of silence. */
  async primary(name = 'a'): Promise<GroupNode> {
    const n = await this.node(name);
    await waitRole(n, 'primary', 30_000);
    return n;
  }

  /** How most tests begin: primary `a`, standby `b`, a trader with money and a market (fixture), and its client on `a`. */
  async primaryAndStandby(): Promise<{ a: GroupNode; b: GroupNode; fx: Fixture; ca: DxClient }> {
    const a = await this.primary('a');
    const b = await this.node('b');
    const fx = await fixture(this, a);
    return { a, b, fx, ca: this.client(a, fx.key) };
  }

  /** The group's log and bucket as a LogClient (the tools' and the tests' own view of the stream) opens them, named `node`. */
  logConfig(node: string): ReplicationConfig {
    return { ...this.nats.logConfig(node), lease_ms: LEASE_MS, heartbeat_ms: HEARTBEAT_MS };
  }

  admin(n: GroupNode): AdminClient {
    return n.server.admin(10_000);
  }

  client(n: GroupNode, key: { key_id: number; secret: string }): DxClient {
    return n.server.client(key.key_id, key.secret, 5000);
  }

  async close(): Promise<void> {
    await closeFetchConnections();
    for (const n of this.nodes) if (n.server.running) await n.server.kill();
    await this.nats.close();
    // DX_KEEP_TEST_DIRS=1 keeps the data directories and each node's log (<dir>/<name>.log) for a post-mortem.
    if (process.env.DX_KEEP_TEST_DIRS === '1') process.stderr.write(`replication test: kept ${this.dir}\n`);
    else rmSync(this.dir, { recursive: true, force: true });
  }
}

export async function health(n: GroupNode): Promise<Health | null> {
  if (!n.server.running) return null;
  try {
    const r = await fetch(`${n.server.base}/health`, { signal: AbortSignal.timeout(2000) });
    return (await r.json()) as Health;
  } catch (e) {
    if (e instanceof Error) return null;
    throw e;
  }
}

export async function waitRole(n: GroupNode, role: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const h = await health(n);
    if (h?.role === role) return;
    if (Date.now() > until) throw new Error(`${n.name} did not become ${role} within ${timeoutMs} ms (it is ${h?.role ?? 'down'})`);
    await sleep(25);
  }
}

/** Waits until every node's control plane shows the same as_of_seq; returns their state hashes. */
export async function atRest(
  g: Group,
  nodes: GroupNode[],
  timeoutMs = 30_000,
): Promise<({ name: string } & StateHash)[]> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const hs = await Promise.all(nodes.map(async (n) => ({ name: n.name, ...(await g.admin(n).stateHash()) })));
    if (new Set(hs.map((h) => h.as_of_seq)).size === 1) return hs;
    if (Date.now() > until) return hs;
    await sleep(100);
  }
}

/**
 * Waits until the group of 'on' nodes is whole again after a fault: one
 * primary, every other node a standby, all at the same seq and state hash.
 * A node that stepped down (then, or later: on a loaded machine a lease can
 * run out again while the group settles) refuses every request and exits
 * 75; it is started again on its data directory. Any other exit fails.
 */
export async function converge(g: Group, timeoutMs: number): Promise<({ name: string } & StateHash)[]> {
  const until = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    for (const n of [...g.nodes]) {
      if (n.server.running) continue;
      const x = await n.server.exited;
      if (x.code !== 75) throw new Error(`${n.name} exited ${JSON.stringify(x)}: ${n.server.stderrTail().slice(-3000)}`);
      await g.node(n.name, n.mode, n.dataDir);
    }
    const roles = await Promise.all(g.nodes.map(async (n) => `${n.name}:${(await health(n))?.role ?? 'down'}`));
    last = roles.join(' ');
    if (roles.filter((r) => r.endsWith(':primary')).length === 1 && roles.every((r) => /:(primary|standby)$/.test(r))) {
      const hs = await Promise.all(g.nodes.map((n) => g.admin(n).stateHash().then((h) => ({ name: n.name, ...h }), (e: Error) => e)));
      const ok = hs.filter((h): h is { name: string } & StateHash => !(h instanceof Error));
      last += ` ${JSON.stringify(hs.map((h) => (h instanceof Error ? h.message : `${h.name}@${h.as_of_seq}:${h.state_hash}`)))}`;
      if (ok.length === hs.length && new Set(ok.map((h) => `${h.as_of_seq}:${h.state_hash}`)).size === 1) return ok;
    }
    if (Date.now() > until) throw new Error(`the group did not converge within ${timeoutMs} ms: ${last}`);
    await sleep(100);
  }
}

/** What fixture() sets up. */
export interface Fixture {
  account: number;
  key: { key_id: number; secret: string };
  market: number;
}

/** An account with money, a read+trade key and one open market. */
export async function fixture(g: Group, primary: GroupNode): Promise<Fixture> {
  const admin = g.admin(primary);
  const a = await admin.createAccount();
  await admin.deposit(a.account_id, { amount: '10000000', ref: 'replication-test' });
  const k = await admin.createKey(a.account_id, ['read', 'trade']);
  const m = await admin.createMarket({ title: 'replication test market', category: 0, position_limit: 0, fee_schedule_id: 0 });
  await admin.openRound(m.market_id, { strike: '100000000', close_ts: String(BigInt(Date.now() + 6 * 3_600_000) * 1_000_000n) });
  return { account: a.account_id, key: { key_id: k.key_id, secret: k.secret }, market: m.market_id };
}
