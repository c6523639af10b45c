// replication: the operator's view of a replicated exchange's log. Read-only:
// it never publishes to the stream (it listens to heartbeats and reads).
//
//   node dist/tools/replication.js status [--listen-ms 1500] [--json]
//     the stream (leader, replicas, messages, bytes, first and last seq), the
//     epoch (the newest claim: which node, at which seq), the snapshot
//     objects, and every node heard on the heartbeat subject during
//     --listen-ms: role, epoch, seq, durable_seq, stream seq, address, age.
//   node dist/tools/replication.js hash [--json]
//     a fresh replay of the newest snapshot object plus the log after it
//     (every entry checked as a follower checks it) into a read model, and
//     its state hash: at rest it equals GET /admin/state_hash of every node.
//
// Options of both: --nats-urls URL[,URL...] (default $DX_NATS_URLS, else
// nats://127.0.0.1:4222), --nats-stream NAME (default $DX_NATS_STREAM, else
// DX), --nats-bucket NAME (default $DX_NATS_BUCKET, else <stream>-snapshots).
// The replay uses the snapshot's engine configuration, else the server's from
// the DX_* environment (as tools/journal.js does).
//
// Exit codes: 0 done, 1 a fault (the log does not replay, NATS unreachable), 2 usage.

import { pathToFileURL } from 'node:url';
import { parseCommandLine, UsageError, type OptionValues } from '../src/lib/command_line.js';
import { LogClient, type ReplicationConfig } from '../src/replication/log_client.js';
import { parseHeartbeat, type Heartbeat } from '../src/replication/protocol.js';
import { replayHash } from '../src/replication/replay.js';
import { listSnapshotObjects } from '../src/replication/snapshots.js';
import { serverEngineConfig } from './journal.js';

const USAGE = `usage: node dist/tools/replication.js status [--listen-ms MS] [--json] | hash [--json]
options: --nats-urls URL[,URL...]  --nats-stream NAME  --nats-bucket NAME`;

function config(values: OptionValues<typeof OPTIONS>, env: NodeJS.ProcessEnv): ReplicationConfig {
  const stream = String(values['nats-stream'] ?? env.DX_NATS_STREAM ?? 'DX');
  const urls = String(values['nats-urls'] ?? env.DX_NATS_URLS ?? 'nats://127.0.0.1:4222')
    .split(',')
    .map((u) => u.trim())
    .filter((u) => u !== '');
  const bucket = String(values['nats-bucket'] ?? (env.DX_NATS_BUCKET || `${stream}-snapshots`));
  return { urls, stream, bucket, replicas: 3, lease_ms: 3000, heartbeat_ms: 500, node: `tool-${process.pid}`, url: '', max_batch_bytes: 0 };
}

export interface StatusReport {
  stream: Awaited<ReturnType<LogClient['info']>> & { name: string };
  epoch: { epoch: number; node: string; url: string; seq: number; stream_seq: number } | null;
  last: { kind: string; epoch: number; seq: number; stream_seq: number } | null;
  snapshots: { name: string; seq: number; size: number }[];
  nodes: (Heartbeat & { age_ms: number })[];
}

export async function status(cfg: ReplicationConfig, listenMs: number): Promise<StatusReport> {
  const log = await LogClient.open(cfg, 'dx replication tool');
  try {
    const heard = new Map<string, Heartbeat & { at: number }>();
    const sub = log.nc.subscribe(log.subjects.heartbeat, { callback: (err, m) => {
      if (err !== null) return;
      const hb = parseHeartbeat(m.string());
      if (hb !== null) heard.set(hb.node, { ...hb, at: Date.now() });
    } });
    const info = await log.info();
    const claim = await log.latestClaim();
    const last = info.messages > 0 ? (await log.entry(info.last_seq))?.entry ?? null : null;
    const snaps = await listSnapshotObjects(log);
    await new Promise((r) => setTimeout(r, listenMs));
    sub.unsubscribe();
    const now = Date.now();
    return {
      stream: { name: cfg.stream, ...info },
      // The claim may have been purged with the log's prefix: the last entry still carries the epoch.
      epoch: claim !== null && claim.epoch >= (last?.epoch ?? 0)
        ? { epoch: claim.epoch, node: claim.node, url: claim.url, seq: claim.lastSeq, stream_seq: claim.streamSeq }
        : last === null ? null : { epoch: last.epoch, node: '(claim purged)', url: '', seq: 0, stream_seq: 0 },
      last: last === null ? null : { kind: last.kind, epoch: last.epoch, seq: last.lastSeq, stream_seq: last.streamSeq },
      snapshots: snaps,
      nodes: [...heard.values()].sort((a, b) => a.node.localeCompare(b.node)).map(({ at, ...h }) => ({ ...h, age_ms: now - at })),
    };
  } finally {
    await log.close();
  }
}

function table(r: StatusReport): string {
  const s = r.stream;
  const lines = [
    `stream ${s.name}: leader ${s.leader || '(none)'}, replicas ` +
      `${s.replicas.map((x) => `${x.name}${x.current ? '' : ' (behind)'}`).join(', ') || '(none)'}`,
    `  ${s.messages} messages, ${s.bytes} bytes, stream seq ${s.first_seq}..${s.last_seq}`,
    r.epoch === null
      ? '  epoch: none (an empty stream)'
      : r.epoch.stream_seq === 0
        ? `  epoch ${r.epoch.epoch} (its claim was purged with the log's prefix)`
        : `  epoch ${r.epoch.epoch}: claimed by ${r.epoch.node} (${r.epoch.url}) after seq ${r.epoch.seq}, at stream seq ` +
          `${r.epoch.stream_seq}`,
    r.last === null
      ? '  last entry: none'
      : `  last entry: ${r.last.kind} of epoch ${r.last.epoch}, seq ${r.last.seq}, stream seq ${r.last.stream_seq}`,
    `  snapshots: ${r.snapshots.map((x) => `${x.name} (${x.size} bytes)`).join(', ') || 'none'}`,
    '',
    'node                 role      epoch          seq    durable_seq   stream_seq  age_ms  url',
    ...r.nodes.map(
      (n) =>
        `${n.node.padEnd(20)} ${n.role.padEnd(8)} ${String(n.epoch).padStart(6)} ${String(n.seq).padStart(12)} ` +
          `${String(n.durable_seq).padStart(14)} ${String(n.stream_seq).padStart(12)} ${String(n.age_ms).padStart(7)}  ${n.url}`,
    ),
  ];
  if (r.nodes.length === 0) lines.push('(no heartbeat heard)');
  return `${lines.join('\n')}\n`;
}

const OPTIONS = {
  'nats-urls': { type: 'string' }, 'nats-stream': { type: 'string' }, 'nats-bucket': { type: 'string' },
  'listen-ms': { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean' },
} as const;

export async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  let values: OptionValues<typeof OPTIONS>;
  let command: string;
  try {
    const cl = parseCommandLine(argv, OPTIONS);
    values = cl.values;
    if (values.help) {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    if (cl.positionals.length !== 1 || !['status', 'hash'].includes(cl.positionals[0]!))
      throw new UsageError('a command is needed: status or hash');
    command = cl.positionals[0]!;
    if (values['listen-ms'] !== undefined && !/^[0-9]{1,6}$/.test(values['listen-ms']))
      throw new UsageError('--listen-ms needs a number of milliseconds');
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`replication: ${e.message}\n${USAGE}\n`);
    return 2;
  }
  const cfg = config(values, env);
  try {
    if (command === 'status') {
      const r = await status(cfg, Number(values['listen-ms'] ?? 1500));
      process.stdout.write(values.json ? `${JSON.stringify(r, null, 2)}\n` : table(r));
    } else {
      const r = await replayHash(cfg, serverEngineConfig(env));
      process.stdout.write(
        values.json
          ? `${JSON.stringify(r)}\n`
          : `state hash at seq ${r.seq}: ${r.state_hash} (snapshot ${r.snapshot ?? 'none'} at seq ${r.snapshot_seq}, then ${r.entries} ` +
            `log entries to stream seq ${r.stream_seq})\n`,
      );
    }
    return 0;
  } catch (e) {
    process.stderr.write(`replication: ${(e as Error).message}\n`);
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  main(process.argv.slice(2), process.env).then((code) => process.exit(code), (e) => {
    process.stderr.write(`replication: ${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  });
}
