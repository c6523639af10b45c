// NatsCluster: a throw-away NATS JetStream cluster of N nodes on 127.0.0.1,
// each a child process of /usr/sbin/nats-server with its own temporary store
// directory, for the replication tests, the failover test, the benchmark and
// tools. Nodes can be killed (SIGKILL), paused (SIGSTOP/SIGCONT) and
// restarted on the same store. close() kills every node and removes the
// stores; child.ts's exit hook kills what is left if the test process dies first.
// Main thread of a test or tool process.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePorts } from '../../src/lib/free_port.js';
import type { ReplicationConfig } from '../../src/replication/log_client.js';
import { killOnExit } from './child.js';

export const NATS_SERVER = process.env.DX_NATS_SERVER ?? '/usr/sbin/nats-server';

/** True when the nats-server binary is installed (the replication suites need it). */
export function natsServerInstalled(): boolean {
  return existsSync(NATS_SERVER);
}

/** The binary's version as it prints it ("nats-server: v2.9.10" -> "2.9.10"); throws when it cannot be read. */
export function natsServerVersion(): string {
  const r = spawnSync(NATS_SERVER, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const m = /v(\d+\.\d+\.\d+\S*)/.exec(`${r.stdout ?? ''}${r.stderr ?? ''}`);
  if (m === null) throw new Error(`${NATS_SERVER} --version printed no version: ${r.error?.message ?? r.stdout}`);
  return m[1]!;
}

interface Node {
  name: string;
  clientPort: number;
  clusterPort: number;
  monitorPort: number;
  storeDir: string;
  configPath: string;
  proc: ChildProcess | null;
  log: string;
}

export interface NatsClusterOptions {
  nodes?: number;
  /** Parent of the stores; a fresh temporary directory by default. */
  dir?: string;
}

export class NatsCluster {
  private constructor(readonly dir: string, private readonly nodes: Node[]) {}

  static async start(opts: NatsClusterOptions = {}): Promise<NatsCluster> {
    const n = opts.nodes ?? 3;
    const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'dx-nats-'));
    const nodes: Node[] = [];
    // Every port of the cluster distinct (a client port handed out again as a route port made a node fail to start).
    const ports = await freePorts(3 * n);
    for (let i = 0; i < n; i++) {
      const name = `n${i + 1}`;
      nodes.push({
        name, clientPort: ports[3 * i]!, clusterPort: ports[3 * i + 1]!, monitorPort: ports[3 * i + 2]!,
        storeDir: join(dir, name), configPath: join(dir, `${name}.conf`), proc: null, log: '',
      });
    }
    for (const node of nodes) {
      mkdirSync(node.storeDir, { recursive: true });
      const routes = nodes.filter((o) => o !== node).map((o) => `nats-route://127.0.0.1:${o.clusterPort}`);
      writeFileSync(node.configPath, [
        `server_name: ${node.name}`,
        `listen: 127.0.0.1:${node.clientPort}`,
        `http: 127.0.0.1:${node.monitorPort}`,
        `max_payload: 8MB`,
        `jetstream { store_dir: "${node.storeDir}", max_memory_store: 256MB, max_file_store: 4GB }`,
        ...(n > 1 ? [`cluster { name: dx-test, listen: 127.0.0.1:${node.clusterPort}, routes: [${routes.join(', ')}] }`] : []),
        '',
      ].join('\n'));
    }
    const c = new NatsCluster(dir, nodes);
    try {
      for (let i = 0; i < n; i++) c.spawnNode(i);
      await c.waitHealthy(30_000);
    } catch (e) {
      await c.close();
      throw e;
    }
    return c;
  }

  get size(): number {
    return this.nodes.length;
  }

  /** Client URLs of every node (a client given all of them reconnects to any live one). */
  get urls(): string[] {
    return this.nodes.map((n) => `nats://127.0.0.1:${n.clientPort}`);
  }

  /**
   * A log client's configuration for this cluster, on the stream and bucket
   * the exchange uses by default (DX, DX-snapshots), as `node`: for a test
   * that reads the log itself (its leader, a replay) beside the exchanges.
   */
  logConfig(node: string): ReplicationConfig {
    return {
      urls: this.urls, stream: 'DX', bucket: 'DX-snapshots', replicas: 3, lease_ms: 3000, heartbeat_ms: 500,
      node, url: '', max_batch_bytes: 0,
    };
  }

  url(i: number): string {
    return `nats://127.0.0.1:${this.nodes[i]!.clientPort}`;
  }

  name(i: number): string {
    return this.nodes[i]!.name;
  }

  indexOf(name: string): number {
    return this.nodes.findIndex((n) => n.name === name);
  }

  /** Process id of node i (0 when not running). */
  pid(i: number): number {
    return this.running(i) ? this.nodes[i]!.proc!.pid ?? 0 : 0;
  }

  running(i: number): boolean {
    const p = this.nodes[i]!.proc;
    return p !== null && p.exitCode === null && p.signalCode === null;
  }

  logTail(i: number): string {
    return this.nodes[i]!.log.slice(-4000);
  }

  private spawnNode(i: number): void {
    const node = this.nodes[i]!;
    const p = spawn(NATS_SERVER, ['-c', node.configPath], { stdio: ['ignore', 'ignore', 'pipe'] });
    node.proc = p;
    killOnExit(p);
    p.stderr!.setEncoding('utf8');
    p.stderr!.on('data', (s: string) => {
      node.log = (node.log + s).slice(-20_000);
    });
  }

  private async exited(p: ChildProcess): Promise<void> {
    if (p.exitCode !== null || p.signalCode !== null) return;
    await new Promise<void>((r) => p.once('exit', () => r()));
  }

  /** SIGKILL node i and wait for its exit. */
  async kill(i: number): Promise<void> {
    const p = this.nodes[i]!.proc;
    if (p === null) return;
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await this.exited(p);
  }

  /** Starts node i again on its store (after kill). */
  async restart(i: number, timeoutMs = 30_000): Promise<void> {
    if (this.running(i)) return;
    this.spawnNode(i);
    await this.waitNodeHealthy(i, timeoutMs);
  }

  /** Monitoring port of node i (/healthz, /jsz, /varz). */
  monitorPort(i: number): number {
    return this.nodes[i]!.monitorPort;
  }

  pause(i: number): void {
    this.nodes[i]!.proc?.kill('SIGSTOP');
  }

  resume(i: number): void {
    this.nodes[i]!.proc?.kill('SIGCONT');
  }

  private async healthz(i: number): Promise<boolean> {
    try {
      const r = await fetch(`http://127.0.0.1:${this.nodes[i]!.monitorPort}/healthz`, { signal: AbortSignal.timeout(1000) });
      await r.arrayBuffer();
      return r.status === 200;
    } catch (e) {
      if (e instanceof Error) return false; // not listening yet, or busy: try again
      throw e;
    }
  }

  async waitNodeHealthy(i: number, timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      if (!this.running(i)) throw new Error(`nats node ${this.nodes[i]!.name} exited: ${this.logTail(i)}`);
      if (await this.healthz(i)) return;
      if (Date.now() > until) throw new Error(`nats node ${this.nodes[i]!.name} not healthy within ${timeoutMs} ms: ${this.logTail(i)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Every running node answers its health check, and the JetStream meta
   * group has a leader and sees every running node as current (before that a
   * stream with 3 replicas may find "no suitable peers").
   */
  async waitHealthy(timeoutMs: number): Promise<void> {
    const until = Date.now() + timeoutMs;
    for (let i = 0; i < this.nodes.length; i++) if (this.running(i)) await this.waitNodeHealthy(i, timeoutMs);
    const live = this.nodes.filter((_n, i) => this.running(i)).length;
    for (;;) {
      // The meta leader's view: it sees every running peer as current.
      for (let i = 0; i < this.nodes.length; i++) {
        if (!this.running(i)) continue;
        try {
          const r = await fetch(`http://127.0.0.1:${this.nodes[i]!.monitorPort}/jsz`, { signal: AbortSignal.timeout(1000) });
          const j = (await r.json()) as { meta_cluster?: { leader?: string; replicas?: { current: boolean }[] } };
          const m = j.meta_cluster;
          if (m?.leader === this.nodes[i]!.name && (m.replicas ?? []).filter((x) => x.current).length + 1 >= live) return;
        } catch (e) {
          if (!(e instanceof Error)) throw e;
        }
      }
      if (Date.now() > until) throw new Error(`the JetStream meta group did not form within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Kills every node and removes the stores. */
  async close(): Promise<void> {
    await Promise.all(this.nodes.map((_n, i) => this.kill(i)));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
