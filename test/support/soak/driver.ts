// soak driver: the soak test of issue 19. Starts the real exchange as a
// child process (`--durability fsync`, small retention caps so that every
// table reaches its steady state within minutes, periodic snapshots, the
// inspector on a loopback port and --expose-gc, the malloc setting of
// `npm start`), runs the steady mixed load
// (load.ts) for the given minutes, samples the process every interval
// (measure.ts), then stops the load, checks the exchange's own state (health:
// everything sequenced is durable; no error line in its log), stops it with
// SIGTERM (exit 0) and runs `tools/journal verify` on its data directory
// (every segment, every snapshot, a full replay with the invariant checks).
// The report has every sample, the least-squares slopes after the warm-up and
// the verdicts. Main thread of the test or tool process.

import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { closeFetchConnections } from '../../../src/client/transport.js';
import { freePort } from '../../../src/lib/free_port.js';
import { DEFAULT_VIEWS_CONFIG } from '../../../src/views/views.js';
import { Rng } from '../../../src/lib/rng.js';
import { spawnExchange, type ExchangeProcess, type ProcessConfig } from '../exchange.js';
import { InspectorClient } from '../inspector.js';
import { LoadStats, runLoad, setUpWorld } from './load.js';
import { judge, rssLessYoung, takeSample, type Judgement, type Sample } from './measure.js';
import { journalVerify } from '../journal_verify.js';

export interface SoakOptions {
  minutes: number;
  /** Sampling interval (the issue: every minute). */
  sampleMs?: number;
  /** Samples before this are not judged (the issue: 5 minutes). */
  warmupMs?: number;
  /** Trends are judged over at least this window after the warm-up (shorter runs report them only). */
  minWindowMs?: number;
  seed?: number;
  traders?: number;
  subscribers?: number;
  keep?: boolean;
  log?: (line: string) => void;
}

export interface SoakReport {
  ok: boolean;
  seed: number;
  minutes: number;
  seconds: number;
  dataDir: string;
  /** The exchange's log (stderr lines), removed with the data directory when the soak passed. */
  logFile: string;
  /** The exchange's settings (flags) during the soak. */
  settings: ProcessConfig;
  /** The exchange's GLIBC_TUNABLES (the malloc setting it is deployed with). */
  glibcTunables: string;
  samples: Sample[];
  judgement: Judgement;
  load: Record<string, number>;
  /** Everything that failed besides the trends: load problems, error lines, health, exit, journal verify. */
  problems: string[];
  journalVerify: string;
}

/**
 * Small caps so that every retention reaches its bound within a few minutes
 * of load (about 6 terminal orders a second per trader, a round every ~7 s),
 * a snapshot every 10,000 journal records (4,500 seqs, every 80 s or so
 * here; segments before the older kept snapshot are pruned), short rounds.
 * The fill records (1,000 per account, not configurable) took 10-15
 * minutes at the steady pace, and each read model's fill lists doubled to
 * their cap inside the judged window; every lane now goes about 4x faster
 * for the first 4 minutes (LoadContext.fastUntil), so that they fill up in
 * the warm-up too (the judgement of the snapshots' size still allows for a
 * later fill), and so that V8 has optimized the rarer paths by then. The
 * first snapshot comes within the 5-minute warm-up: it allocates the
 * snapshot worker's read model, which later snapshots continue (a one-time
 * step of the resident memory, like the other tables filling up to their
 * caps).
 */
export const SOAK_SETTINGS: ProcessConfig = {
  durability: 'fsync', demo: false, gateways: 1, terminal_cap: 200, reject_cap: 50, round_cap: 20, withdrawal_cap: 20, revoked_key_cap: 10,
  deposit_ref_cap: 5,
  dispute_window_ms: 2000, snapshot_every: 10_000, segment_bytes: 1 << 20,
  // Small capture steps: every snapshot holds the control plane's events for a few turns, as a large model's does.
  snapshot_step_bytes: 65_536,
};

/** glibc's malloc setting of `npm start` (package.json): large blocks always get their own mapping, returned when freed. */
const DEPLOYED_GLIBC_TUNABLES = 'glibc.malloc.mmap_threshold=131072';

/** The DX_* variables of the settings' engine configuration, for tools/journal (which reads them when no snapshot says). */
function engineEnv(cfg: ProcessConfig): Record<string, string> {
  const out: Record<string, string> = {};
  const caps = ['terminal_cap', 'reject_cap', 'round_cap', 'withdrawal_cap', 'revoked_key_cap', 'deposit_ref_cap'] as const;
  for (const k of [...caps, 'dispute_window_ms'] as const) {
    if (cfg[k] !== undefined) out[`DX_${k.toUpperCase()}`] = String(cfg[k]);
  }
  return out;
}

/** One sample as the soak's progress line: memory per thread, seq, held requests, fds, rings, table sizes, journal bytes. */
function sampleLine(s: Sample): string {
  const heaps = Object.entries(s.threads).map(([n, x]) => `${n} ${(x.heapUsed / 1048576).toFixed(1)}`).join(', ');
  const tb = s.tables;
  const mib = (b: number): string => (b / 1048576).toFixed(1);
  return `  ${(s.t / 60_000).toFixed(1)} min: rss ${mib(s.rss)} MiB (less young gens ${mib(rssLessYoung(s))}), heap MiB ${heaps}; `
    + `seq ${s.engineSeq}, held ${s.held}, fds ${s.fds}, rings: commands ${Math.max(0, ...Object.values(s.commandRingUsed))} B, `
    + `events ${Math.max(0, ...Object.values(s.eventRingLag))} B behind; orders kept ${tb.order_slots ?? '?'}, keys ${tb.keys ?? '?'}, `
    + `withdrawals ${tb.withdrawals ?? '?'}, rounds ${tb.rounds ?? '?'}, replay guard ${tb.replay_guard ?? '?'}, `
    + `journal ${((s.journalBytes + s.snapshotBytes) / 1048576).toFixed(1)} MiB`
    + `${s.unanswered.length > 0 ? `; no answer: ${s.unanswered.join('; ')}` : ''}`;
}

/**
 * The exchange under soak: the inspector on a loopback port and gc exposed
 * (the samples), and run as deployed: `npm start` sets this malloc setting
 * (README, "Configuration"); a GLIBC_TUNABLES of the soak's own wins.
 */
async function startSoakExchange(
  settings: ProcessConfig, inspectPort: number, logFile: string,
): Promise<{ server: ExchangeProcess; glibcTunables: string }> {
  const glibcTunables = process.env.GLIBC_TUNABLES ?? DEPLOYED_GLIBC_TUNABLES;
  const nodeArgs = [`--inspect=127.0.0.1:${inspectPort}`, '--expose-gc'];
  const server = await spawnExchange(settings, { nodeArgs, logLevel: 'info', logFile, env: { GLIBC_TUNABLES: glibcTunables } });
  return { server, glibcTunables };
}

export async function runSoak(o: SoakOptions): Promise<SoakReport> {
  const log = o.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const seed = (o.seed ?? Date.now() % 1_000_000) >>> 0;
  const sampleMs = o.sampleMs ?? 60_000;
  const durationMs = o.minutes * 60_000;
  const problems: string[] = [];
  const inspectPort = await freePort();
  const settings = SOAK_SETTINGS;
  // The exchange's structured log, kept with the data directory when the soak fails (a post-mortem).
  const logFile = join(tmpdir(), `dx-soak-${seed}-${process.pid}.log`);
  const { server, glibcTunables } = await startSoakExchange(settings, inspectPort, logFile);
  const insp = await InspectorClient.connect(inspectPort);
  const stats = new LoadStats();
  const samples: Sample[] = [];
  const t0 = performance.now();
  let verifySummary = '';
  log(`soak: seed ${seed}, ${o.minutes} min, a sample every ${sampleMs / 1000} s, GLIBC_TUNABLES=${glibcTunables}, `
    + `data dir ${server.dataDir}, log ${logFile}`);
  try {
    await insp.attachWorkers();
    const world = await setUpWorld(server, o.traders ?? 6);
    let stop = false;
    const load = runLoad({ server, world, stats, rng: new Rng(seed), stopped: () => stop }, o);
    const loadStart = performance.now();
    for (let next = 0; next <= durationMs; next += sampleMs) {
      const wait = loadStart + next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const s = await takeSample(Math.round(performance.now() - loadStart), server.pid, server.dataDir, insp, server.admin());
      samples.push(s);
      log(sampleLine(s));
    }
    stop = true;
    await load;
    for (const p of stats.problems) problems.push(`load: ${p}`);
    // Everything sequenced is durable once the load stopped; the log has no error line.
    // (The series keeps ticking, so seq may move between the two reads: a few tries.)
    let h = await server.admin().health();
    for (let i = 0; i < 20 && h.seq !== h.durable_seq; i++) {
      await new Promise((r) => setTimeout(r, 100));
      h = await server.admin().health();
    }
    if (h.seq !== h.durable_seq) problems.push(`health after the load: seq ${h.seq}, durable_seq ${h.durable_seq}`);
    for (const l of server.errors()) problems.push(`the exchange logged an error: ${JSON.stringify(l).slice(0, 400)}`);
    insp.close();
    await closeFetchConnections();
    const x = await server.terminate(30_000);
    if (x.code !== 0 || x.killed) problems.push(`SIGTERM: exit code ${x.code} signal ${x.signal}${x.killed ? ' (killed after 30 s)' : ''}`);
    // The invariants at the end: tools/journal verify replays everything with
    // the checks (the server's caps from the snapshot or the environment).
    const v = journalVerify(server.dataDir, { ...process.env, ...engineEnv(settings) }, 600_000);
    if (v === null) problems.push('journal verify: tools/journal.js is not built');
    else {
      verifySummary = v.summary;
      if (!v.ok) problems.push(`journal verify ${v.problem}`);
    }
  } catch (e) {
    problems.push(`the soak stopped: ${(e as Error).stack ?? String(e)}`);
  } finally {
    insp.close();
    if (server.running) await server.kill();
    await closeFetchConnections();
  }
  const judgement = judge(samples, {
    warmupMs: o.warmupMs ?? 5 * 60_000,
    minWindowMs: o.minWindowMs ?? 10 * 60_000,
    bounds: bounds(samples),
  });
  const ok = problems.length === 0 && judgement.ok;
  if (ok && !o.keep) {
    rmSync(server.dataDir, { recursive: true, force: true });
    rmSync(logFile, { force: true });
  }
  return {
    ok, seed, minutes: o.minutes, seconds: Math.round((performance.now() - t0) / 1000), dataDir: server.dataDir, logFile, settings,
    glibcTunables, samples, judgement, load: stats.counts, problems, journalVerify: verifySummary,
  };
}

/**
 * The bounds the caps put on the tables that fill up slowly: every account's
 * fill list (fill_cap) and every market's trade tape (tape_cap).
 */
function bounds(samples: Sample[]): Record<string, number> {
  const last = samples[samples.length - 1];
  if (last === undefined) return {};
  return {
    fill_records: (last.tables.accounts ?? 0) * DEFAULT_VIEWS_CONFIG.fill_cap,
    tape_records: (last.tables.markets ?? 0) * DEFAULT_VIEWS_CONFIG.tape_cap,
  };
}

/** The report as text: the verdict, the trends, the load, the problems. */
export function describeSoak(r: SoakReport): string {
  const j = r.judgement;
  const mib = (b: number): string => (b / 1048576).toFixed(3);
  const lines = [
    `soak ${r.ok ? 'PASSED' : 'FAILED'}: seed ${r.seed}, ${r.minutes} min of load, ${r.samples.length} samples, ${r.seconds} s in all; `
      + `judged ${j.judged} samples over ${(j.windowMs / 60_000).toFixed(1)} min after a ${(j.warmupMs / 60_000).toFixed(1)} min warm-up`,
    '  memory (least-squares slope after the warm-up; heap after a full GC):',
    ...j.memory.map((t) => `    ${t.verdict.padEnd(10)} ${t.what.padEnd(22)} ${mib(t.per10min).padStart(8)} MiB/10 min   `
      + `${mib(t.first)} -> ${mib(t.last)} MiB   ${t.why}`),
    '  tables and handles:',
    ...j.tables.map((t) => `    ${t.verdict.padEnd(10)} ${t.what.padEnd(44)} ${t.first} -> ${t.last} `
      + `(max ${t.max}, ${t.per10min.toFixed(1)}/10 min)   ${t.why}`),
    `  load: ${Object.entries(r.load).sort().map(([k, v]) => `${k} ${v}`).join(', ')}`,
    `  journal verify: ${r.journalVerify.replace(/\n/g, ' | ')}`,
    ...r.problems.map((p) => `  PROBLEM ${p}`),
    r.ok ? '' : `  data dir kept: ${r.dataDir}, the exchange's log: ${r.logFile}`,
  ];
  return `${lines.join('\n')}\n`;
}
