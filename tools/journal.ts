// journal: the operator's tools for a data directory's journal and
// snapshots. Read-only: it never writes, truncates or removes anything
// (recovery plans are made with repair: false). One process, main thread.
//
// node dist/tools/journal.js dump   [--data-dir DIR] [--from SEQ] [--to SEQ] [--account N] [--market N] [--type NAME[,NAME...]] [--secrets]
//   node dist/tools/journal.js verify [--data-dir DIR] [--check-every N] [--engine JSON]
//   node dist/tools/journal.js hash   [--data-dir DIR] [--at SEQ] [--ignore-snapshots] [--engine JSON]
//
// The data directory is --data-dir, else DX_DATA_DIR, else ./data.
//
// Exit codes: 0 sound (or done); 1 a fault (something recovery would refuse
// or that does not replay to the same state, named by file and byte offset);
// 2 a usage error; 3 (verify) damage that the next start repairs by itself
// (a torn tail to truncate, a damaged snapshot to fall back past, a journal
// failure's synced marker to cut after).
//
// The state hash (src/journal/state_codec.ts) covers the state's table sizes,
// which come from the engine configuration, and retention caps change what
// evolve keeps: a replay is only meaningful with the configuration the journal
// was written with. That is the configuration stored in the newest valid
// snapshot; without a snapshot it is the server's (from the same DX_*
// environment variables `npm start` reads); --engine '{"terminal_cap":8,...}'
// overrides both.

import { existsSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DEFAULT_ENGINE_CONFIG, type EngineConfig } from '../src/engine/config.js';
import { verify as verifyState } from '../src/engine/verify.js';
import { checkSyncedMarker, readSyncedMarker, SYNCED_MARKER } from '../src/journal/cut.js';
import { FILE_HEADER_BYTES, FRAME_HEADER_BYTES, JOURNAL_DIR } from '../src/journal/format.js';
import {
  isTornCreation,
  listSegments,
  loadBase,
  missingBefore,
  planRecovery,
  replay,
  type PlannedSegment,
  type RecoveryPlan,
  type SegmentFile,
} from '../src/journal/recovery.js';
import { forEachRecord, JournalFault, listDir, readWhole, scanSegment, type SegmentScan } from '../src/journal/segment.js';
import { listSnapshots, readSnapshot, snapshotTemps } from '../src/journal/snapshot.js';
import { decodeViews, stateHash } from '../src/journal/state_codec.js';
import { Header, HEADER_FIELDS, RECORDS, T_COMMAND_COMPLETED } from '../src/layout/records.js';
import type { Mem } from '../src/lib/mem.js';
import { memOf } from '../src/lib/mem.js';
import { decodeRecord, recordInfo } from '../src/layout_codec/record_codec.js';
import { ArgumentError, parseCommandLine, UsageError, type OptionSpec, type OptionSpecs } from '../src/lib/command_line.js';
import { engineConfigOf, loadConfig } from '../src/main/config.js';
import { Views } from '../src/views/views.js';

export const EXIT_OK = 0;
export const EXIT_FAULT = 1;
export const EXIT_USAGE = 2;
export const EXIT_REPAIRABLE = 3;

const USAGE = `usage: node dist/tools/journal.js <command> [options]

commands:
  dump     every journal record as one JSON line (u64 values as strings, with its file and byte offset)
             --from SEQ --to SEQ     seq range, inclusive
             --account N             records that concern account N (header account, account_id, maker/taker account)
             --market N              records whose market_id is N
             --type NAME[,NAME...]   record types (e.g. Filled,OrderCanceled)
             --secrets               show key secrets (redacted by default)
  verify   checks every segment and snapshot, replays the whole journal through the read model,
           checks the invariants, that ts increases from command to command and that snapshots
           replay to the same state hash
             --check-every N         also check the invariants every N records (at a command boundary)
             --engine JSON           engine configuration of the replay (default: the newest snapshot's, else the server's)
  hash     the state hash at a seq (default: the end of the journal)
             --at SEQ                the state after command SEQ
             --ignore-snapshots      replay from seq 1 (the journal alone)
             --engine JSON           as for verify

options of every command:
  --data-dir DIR   the data directory (default: $DX_DATA_DIR, else ./data)

exit codes: 0 ok, 1 fault, 2 usage error, 3 (verify) damage the next start repairs (torn tail, rejected snapshot, synced marker)`;

// ---- arguments ---------------------------------------------------------------

interface Args {
  command: string;
  dataDir: string;
  values: Map<string, string>;
  flags: Set<string>;
}

const VALUE: OptionSpec = { type: 'string', multiple: true };
const FLAG: OptionSpec = { type: 'boolean' };
const COMMAND_OPTIONS: Record<string, OptionSpecs> = {
  dump: { 'data-dir': VALUE, from: VALUE, to: VALUE, account: VALUE, market: VALUE, type: VALUE, secrets: FLAG },
  verify: { 'data-dir': VALUE, 'check-every': VALUE, engine: VALUE },
  hash: { 'data-dir': VALUE, at: VALUE, engine: VALUE, 'ignore-snapshots': FLAG },
};

export function parseArgs(argv: readonly string[], env: NodeJS.ProcessEnv): Args {
  const command = argv[0];
  if (command === undefined) throw new UsageError('a command is needed: dump, verify or hash');
  if (!Object.hasOwn(COMMAND_OPTIONS, command)) throw new UsageError(`unknown command ${JSON.stringify(command)}: dump, verify or hash`);
  let parsed: Record<string, unknown>;
  try {
    parsed = parseCommandLine(argv.slice(1), COMMAND_OPTIONS[command]!, { positionals: false }).values;
  } catch (e) {
    if (e instanceof ArgumentError && (e.problem === 'unknown_option' || e.problem === 'unexpected_argument')) {
      throw new UsageError(`${command}: unknown option ${JSON.stringify(e.arg)}`);
    }
    throw e;
  }
  const values = new Map<string, string>();
  const flags = new Set<string>();
  for (const [name, v] of Object.entries(parsed)) {
    if (v === true) flags.add(`--${name}`);
    else if (Array.isArray(v)) {
      if (v.length > 1) throw new UsageError(`--${name} given twice`);
      values.set(`--${name}`, v[0] as string);
    }
  }
  const dataDir = values.get('--data-dir') ?? (env.DX_DATA_DIR !== undefined && env.DX_DATA_DIR !== '' ? env.DX_DATA_DIR : './data');
  return { command, dataDir, values, flags };
}

function intOption(args: Args, name: string): number | undefined {
  const raw = args.values.get(name);
  if (raw === undefined) return undefined;
  if (!/^[0-9]+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new UsageError(`${name}: expected a non-negative integer, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** The engine configuration given with --engine, checked key by key; undefined when not given. */
function engineOption(args: Args): Partial<EngineConfig> | undefined {
  const raw = args.values.get('--engine');
  if (raw === undefined) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    throw new UsageError(`--engine: not JSON (${(e as Error).message})`);
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new UsageError('--engine: expected a JSON object of engine settings');
  for (const [k, x] of Object.entries(v)) {
    if (!(k in DEFAULT_ENGINE_CONFIG))
      throw new UsageError(`--engine: unknown setting ${k}; settings: ${Object.keys(DEFAULT_ENGINE_CONFIG).join(', ')}`);
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || x < 0) throw new UsageError(`--engine: ${k} must be a non-negative integer`);
  }
  return v as Partial<EngineConfig>;
}

/**
 * The server's engine configuration from the same environment (table sizes
 * and the DX_* engine settings): engineConfigOf, as src/main/exchange.ts
 * builds it; the table sizes enter the state hash.
 */
export function serverEngineConfig(env: NodeJS.ProcessEnv): Partial<EngineConfig> {
  let cfg;
  try {
    cfg = loadConfig([], env);
  } catch (e) {
    throw new UsageError(`the server configuration in the environment: ${(e as Error).message}`);
  }
  return engineConfigOf(cfg);
}

function checkDataDir(dataDir: string): void {
  if (!existsSync(dataDir)) throw new UsageError(`no such data directory: ${dataDir}`);
  if (!statSync(dataDir).isDirectory()) throw new UsageError(`not a directory: ${dataDir}`);
}

// ---- output ------------------------------------------------------------------

/** Buffered stdout: a dump is hundreds of thousands of lines. */
class Out {
  private chunks: string[] = [];
  private size = 0;

  constructor(private readonly write: (s: string) => void) {}

  line(s: string): void {
    this.chunks.push(s, '\n');
    this.size += s.length + 1;
    if (this.size >= 1 << 16) this.flush();
  }

  flush(): void {
    if (this.chunks.length === 0) return;
    this.write(this.chunks.join(''));
    this.chunks = [];
    this.size = 0;
  }
}

export interface Io {
  out: (s: string) => void;
  err: (s: string) => void;
  env: NodeJS.ProcessEnv;
}

// ---- dump --------------------------------------------------------------------

const EVENT_NAMES = RECORDS.filter((r) => r.kind === 'event').map((r) => r.name);
const ACCOUNT_FIELDS = ['account_id', 'maker_account', 'taker_account'];

/** One record as a JSON object: u64 values as decimal strings, secrets redacted unless asked for. */
export function recordJson(m: Mem, o: number, file: string, frameOffset: number, secrets: boolean): Record<string, unknown> {
  const r = decodeRecord(m, o);
  const info = recordInfo(r.type);
  const out: Record<string, unknown> = { file, offset: frameOffset };
  for (const [k, v] of Object.entries(r)) out[k] = typeof v === 'bigint' ? v.toString() : v;
  for (const f of HEADER_FIELDS) if (f.type === 'u64' && f.name in out) out[f.name] = String(out[f.name]);
  for (const f of info.fields) {
    if (f.type === 'u64' && f.name in out) out[f.name] = String(out[f.name]);
    if (f.name === 'secret' && !secrets) out[f.name] = 'redacted';
  }
  return out;
}

function dump(args: Args, io: Io): number {
  const from = intOption(args, '--from') ?? 0;
  const to = intOption(args, '--to') ?? Number.MAX_SAFE_INTEGER;
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  const account = intOption(args, '--account');
  const market = intOption(args, '--market');
  let types: Set<number> | null = null;
  const typeArg = args.values.get('--type');
  if (typeArg !== undefined) {
    types = new Set();
    for (const name of typeArg.split(',')) {
      if (!EVENT_NAMES.includes(name))
        throw new UsageError(`--type: unknown event ${JSON.stringify(name)}; events: ${EVENT_NAMES.join(', ')}`);
      types.add(recordInfo(name).type);
    }
  }
  const secrets = args.flags.has('--secrets');
  checkDataDir(args.dataDir);
  const segs = listSegments(args.dataDir);
  const out = new Out(io.out);
  let faults = 0;
  let expect: number | null = null;
  for (let i = 0; i < segs.length; i++) {
    const f = segs[i]!;
    // Segments wholly outside [from, to] are not read (segment i ends before segment i + 1 starts).
    const next = segs[i + 1];
    if (f.firstSeq > to) break;
    if (next !== undefined && next.firstSeq - 1 < from) {
      expect = null;
      continue;
    }
    const bytes = readWhole(f.path);
    let end: number;
    const notes: string[] = [];
    try {
      const scan = scanSegment(f.path, bytes, null);
      end = scan.goodEnd;
      if (expect !== null && scan.firstSeq !== expect)
        notes.push(`${f.path}: starts at seq ${scan.firstSeq}, the previous segment ended at ${expect - 1}`);
      if (scan.tail !== null) notes.push(`${f.path}: not dumped past byte ${scan.tail.offset}: ${scan.tail.kind} (${scan.tail.detail})`);
      expect = scan.lastSeq + 1;
    } catch (e) {
      if (!(e instanceof JournalFault)) throw e;
      faults += dumpFault(io, e, f.path, bytes, next === undefined);
      expect = null;
      // The frames before a damaged one passed their checks; a bad header or layout leaves nothing readable.
      if (e.offset < FILE_HEADER_BYTES) continue;
      end = e.offset;
    }
    const m = memOf(bytes.buffer, bytes.byteOffset, (bytes.byteLength + 7) & ~7);
    const file = basename(f.path);
    for (let at = FILE_HEADER_BYTES; at < end;) {
      const rec = at + FRAME_HEADER_BYTES;
      const len = m.u32[at >>> 2]!;
      const seq = Header.seq(m, rec);
      if (seq > to) break;
      if (seq >= from && (types === null || types.has(Header.type(m, rec)))) {
        const j = recordJson(m, rec, file, at, secrets);
        const concerns = account === undefined || j.account === account || ACCOUNT_FIELDS.some((k) => j[k] === account);
        if (concerns && (market === undefined || j.market_id === market)) out.line(JSON.stringify(j));
      }
      at = rec + len;
    }
    out.flush();
    for (const n of notes) io.err(`note: ${n}\n`);
  }
  out.flush();
  return faults > 0 ? EXIT_FAULT : EXIT_OK;
}

/** A segment dump cannot read: a fault (1), or a last segment created but never written, which the next start removes (0). */
function dumpFault(io: Io, e: JournalFault, path: string, bytes: Uint8Array, isLast: boolean): number {
  if (!isTornCreation(bytes, isLast)) {
    io.err(`FAULT ${e.message}\n`);
    return 1;
  }
  io.err(`note: ${path}: a segment created but never written (${bytes.length} bytes); the next start removes it\n`);
  return 0;
}

// ---- engine configuration of a replay ----------------------------------------------

interface ConfigChoice {
  engine: Partial<EngineConfig>;
  source: string;
}

/** --engine, else the newest snapshot that decodes, else the server's. */
function chooseEngineConfig(args: Args, dataDir: string, env: NodeJS.ProcessEnv): ConfigChoice {
  const given = engineOption(args);
  if (given !== undefined) return { engine: given, source: '--engine' };
  for (const s of listSnapshots(dataDir)) {
    try {
      const v = decodeViews(readSnapshot(s.path).body);
      return { engine: { ...v.state.config }, source: `the snapshot ${s.path}` };
    } catch (e) {
      if (!(e instanceof Error)) throw e;
      // A damaged snapshot is reported by verify; look at the next older one.
    }
  }
  return { engine: serverEngineConfig(env), source: 'the server\'s (DX_* environment)' };
}

// ---- hash --------------------------------------------------------------------

/** A plan from seq 1, without snapshots: every segment from the first, checked in order, up to uptoSeq. */
function planFromScratch(dataDir: string, uptoSeq: number | undefined): RecoveryPlan {
  const upto = uptoSeq ?? Number.MAX_SAFE_INTEGER;
  const files = listSegments(dataDir);
  if (files.length > 0 && files[0]!.firstSeq !== 1) {
    throw new JournalFault(
      files[0]!.path,
      0,
      `the journal starts at seq ${files[0]!.firstSeq}, not 1 (older segments were pruned or lost): it cannot be replayed without a ` +
        `snapshot`,
    );
  }
  const segments: PlannedSegment[] = [];
  const tails: RecoveryPlan['tails'] = [];
  let expect: number | null = null;
  let lastSeq = 0;
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    const bytes = readWhole(f.path);
    if (isTornCreation(bytes, i === files.length - 1)) {
      // As recovery: nothing in it (the start removes it), unless its name skips past the segment before it.
      if (expect !== null && f.firstSeq !== expect) throw new JournalFault(f.path, 0, missingBefore(f.firstSeq, expect));
      break;
    }
    const scan = scanSegment(f.path, bytes, expect);
    if (scan.tail !== null && scan.lastSeq < upto) {
      if (i < files.length - 1)
        throw new JournalFault(f.path, scan.tail.offset, `damaged end of a segment that is not the last (${scan.tail.detail})`);
      tails.push({ ...scan.tail, path: f.path, bytes: bytes.length - scan.goodEnd });
    }
    segments.push({ path: f.path, firstSeq: scan.firstSeq, lastSeq: scan.lastSeq, goodEnd: scan.goodEnd });
    lastSeq = scan.lastSeq;
    expect = scan.lastSeq + 1;
    if (scan.lastSeq >= upto) break;
  }
  if (uptoSeq !== undefined && lastSeq < uptoSeq) throw new Error(`the journal ends at seq ${lastSeq}; seq ${uptoSeq} was asked for`);
  return { dataDir, snapshot: null, rejectedSnapshots: [], segments, lastSeq: Math.min(lastSeq, upto), tails, removed: [] };
}

function hash(args: Args, io: Io): number {
  const at = intOption(args, '--at');
  const scratch = args.flags.has('--ignore-snapshots');
  engineOption(args);
  checkDataDir(args.dataDir);
  const plan = scratch ? planFromScratch(args.dataDir, at) : planRecovery(args.dataDir, { repair: false, uptoSeq: at });
  for (const r of plan.rejectedSnapshots) io.err(`note: snapshot rejected (${r.reason})\n`);
  for (const t of plan.tails)
    io.err(`note: ${t.path}: ${t.kind} at byte ${t.offset} (${t.detail}); the state is that of the last complete command\n`);
  const cfg = plan.snapshot === null ? chooseEngineConfig(args, args.dataDir, io.env) : null;
  if (cfg === null && args.values.has('--engine'))
    io.err(`note: --engine is not used: the state starts from ${plan.snapshot!.path}, which carries its configuration\n`);
  const views = loadBase(plan, cfg?.engine ?? {}, {});
  const base = views.asOfSeq;
  const records = replay(plan, base, (m, o) => views.apply(m, o));
  if (views.asOfSeq !== plan.lastSeq) throw new Error(`replay reached seq ${views.asOfSeq}, not ${plan.lastSeq}`);
  io.out(`${JSON.stringify({
    seq: String(views.asOfSeq), state_hash: stateHash(views.state), snapshot: plan.snapshot?.path ?? null, snapshot_seq: String(base),
    replayed_records: records, engine_config: cfg === null ? 'the snapshot\'s' : cfg.source,
  })}\n`);
  return EXIT_OK;
}

// ---- verify ------------------------------------------------------------------

interface ValidSnapshot {
  path: string;
  seq: number;
  hash: string;
}

class Report {
  faults = 0;
  repairable = 0;

  constructor(private readonly io: Io) {}

  line(s: string): void {
    this.io.out(`${s}\n`);
  }

  fault(file: string, offset: number, why: string): void {
    this.faults++;
    this.line(`FAULT ${file} at byte ${offset}: ${why}`);
  }

  repair(file: string, offset: number, why: string): void {
    this.repairable++;
    this.line(`REPAIRABLE ${file} at byte ${offset}: ${why}`);
  }
}

function faultOf(r: Report, e: unknown, path: string): void {
  if (e instanceof JournalFault) r.fault(e.file, e.offset, e.message.replace(/^journal fault in .* at byte \d+: /, ''));
  else r.fault(path, 0, (e as Error).message);
}

function firstLines(bad: string[]): string {
  return bad.slice(0, 5).join('; ') + (bad.length > 5 ? `; and ${bad.length - 5} more` : '');
}

/**
 * The journal directory's files that are not segments: a journal failure's synced marker (src/journal/cut.ts: the next
 * start cuts every record after its seq) or a note.
 */
function noteStrays(r: Report, dataDir: string, files: { path: string }[]): void {
  const strays = listDir(join(dataDir, JOURNAL_DIR)).filter((n) => !files.some((f) => basename(f.path) === n));
  for (const n of strays) {
    const path = join(dataDir, JOURNAL_DIR, n);
    if (n !== SYNCED_MARKER) {
      r.line(`note: ${path} is not a segment name; recovery ignores it`);
      continue;
    }
    try {
      const seq = readSyncedMarker(dataDir)!;
      checkSyncedMarker(dataDir, seq);
      r.repair(path, 0, `a journal failure left the synced marker at seq ${seq}: the next start cuts every record after it ` +
        '(never acknowledged)');
    } catch (e) {
      faultOf(r, e, path);
    }
  }
}

/** A torn creation (a last segment shorter than its header): repairable, unless its name skips past the segment before it. */
function tornCreation(r: Report, f: SegmentFile, expect: number | null, size: number): void {
  if (expect !== null && f.firstSeq !== expect) r.fault(f.path, 0, missingBefore(f.firstSeq, expect));
  else
    r.repair(f.path, 0, `a segment created but never written (${size} bytes, shorter than its header): the process died right after ` +
      'creating it; the next start removes it');
}

/** A file listed by the tool was removed before it was read: a live server pruned it (src/journal/tasks.ts prune). */
class Vanished extends Error {}

function vanished(e: unknown): boolean {
  return (e as NodeJS.ErrnoException).code === 'ENOENT';
}

/** verify beside a live server: a run that finds a listed file gone (the snapshot task pruned it) starts again, listing afresh. */
function verifyLive(args: Args, io: Io): number {
  for (let attempt = 1; ; attempt++) {
    try {
      return verifyJournal(args, io);
    } catch (e) {
      if (!(e instanceof Vanished || vanished(e)) || attempt === 5) throw e;
      const path = e instanceof Vanished ? e.message : (e as NodeJS.ErrnoException).path;
      io.out(`note: ${path} was removed while it was read (a live server pruned it): verifying again\n`);
    }
  }
}

function verifyJournal(args: Args, io: Io): number {
  const checkEvery = intOption(args, '--check-every') ?? 0;
  const engineGiven = engineOption(args);
  const dataDir = args.dataDir;
  checkDataDir(dataDir);
  const r = new Report(io);
  const t0 = performance.now();
  r.line(`data dir ${dataDir}`);

  // The snapshots are listed before the segments are read: each is of a seq the journal had synced, so a snapshot a live
  // server writes while the segments are read (past the journal as read) is not taken for one whose segment was lost.
  const snapshots = listSnapshots(dataDir);
  // 1. Segments, from the first: checksums, lengths, seq continuity inside and across segments, fingerprints.
  const files = listSegments(dataDir);
  noteStrays(r, dataDir, files);
  const planned: PlannedSegment[] = [];
  let clean = true; // every segment so far is sound and continues the previous one
  let expect: number | null = null;
  let end = 0; // last complete seq of the sound prefix
  for (let i = 0; i < files.length; i++) {
    const f = files[i]!;
    const isLast = i === files.length - 1;
    let scan: SegmentScan;
    let size = 0;
    try {
      const bytes = readWhole(f.path);
      size = bytes.length;
      if (isTornCreation(bytes, isLast)) {
        tornCreation(r, f, expect, size);
        if (i === 0) end = f.firstSeq - 1; // the only segment: the journal ends before its name (the start plans it so)
        continue;
      }
      scan = scanSegment(f.path, bytes, expect);
    } catch (e) {
      if (vanished(e)) throw new Vanished(f.path);
      faultOf(r, e, f.path);
      clean = false;
      expect = null;
      continue;
    }
    const span =
      scan.lastSeq >= scan.firstSeq ? `seqs ${scan.firstSeq}..${scan.lastSeq}` : `no complete command (first seq ${scan.firstSeq})`;
    r.line(`segment ${f.path}: ${span}, ${scan.records} records, ${size} bytes`);
    if (scan.firstSeq !== f.firstSeq) {
      r.fault(f.path, 16, `header first seq ${scan.firstSeq} differs from the file name's ${f.firstSeq}`);
      clean = false;
    }
    if (scan.tail !== null) {
      const what = `${scan.tail.kind}: ${scan.tail.detail}; ${size - scan.goodEnd} bytes past the last complete command`;
      if (isLast) r.repair(f.path, scan.tail.offset, `torn tail (${what}); the next start truncates it (never synced, never acknowledged)`);
      else r.fault(f.path, scan.tail.offset, `damaged end of a segment that is not the last (${what})`);
    }
    if (clean) {
      planned.push({ path: f.path, firstSeq: scan.firstSeq, lastSeq: scan.lastSeq, goodEnd: scan.goodEnd });
      end = scan.lastSeq;
    }
    if (scan.tail !== null && !isLast) clean = false;
    expect = scan.lastSeq + 1;
  }
  if (files.length === 0) r.line('no journal segments');
  const start = files.length > 0 ? files[0]!.firstSeq : 1;

  // 2. Snapshots: header, fingerprint, body checksum, decoding, invariants.
  const valid: ValidSnapshot[] = [];
  let newestConfig: Partial<EngineConfig> | null = null;
  for (const t of snapshotTemps(dataDir)) r.line(`note: ${t} is the temp file of an interrupted snapshot write; the next start removes it`);
  for (const s of snapshots) {
    let views: Views;
    try {
      const got = readSnapshot(s.path);
      if (got.seq !== s.seq) throw new Error(`header seq ${got.seq} differs from the file name's ${s.seq}`);
      views = decodeViewsNamed(s.path, got.body);
    } catch (e) {
      if (vanished(e)) throw new Vanished(s.path);
      // Recovery skips a snapshot that fails its checks (it falls back to an older one, or to the journal).
      const reason = (e as Error).message.replace(`snapshot ${s.path}: `, '');
      if ((e as Error).message.startsWith('decode: '))
        r.fault(s.path, FILE_HEADER_BYTES, `its checksums pass but it does not decode (recovery would fail on it): ${reason}`);
      else r.repair(s.path, 0, `rejected, recovery falls back past it: ${reason}`);
      continue;
    }
    const bad = verifyState(views.state);
    if (bad.length > 0) r.fault(s.path, FILE_HEADER_BYTES, `the snapshot's state breaks the invariants: ${firstLines(bad)}`);
    const h = stateHash(views.state);
    newestConfig ??= { ...views.state.config };
    valid.push({ path: s.path, seq: s.seq, hash: h });
    r.line(`snapshot ${s.path}: seq ${s.seq}, valid, state hash ${h}`);
  }
  if (valid.length === 0 && snapshots.length === 0) r.line('no snapshots');

  // 3. The full replay: from seq 1, or from the oldest valid snapshot the journal continues.
  let engine: Partial<EngineConfig>;
  let source: string;
  if (engineGiven !== undefined) {
    engine = engineGiven;
    source = '--engine';
  } else if (newestConfig !== null) {
    engine = newestConfig;
    source = `the newest valid snapshot (${valid[0]!.path})`;
  } else {
    engine = serverEngineConfig(io.env);
    source = 'the server\'s (DX_* environment)';
  }
  if (files.length === 0) return finish(r, t0, null);

  let base: ValidSnapshot | null = null;
  if (start !== 1) {
    const oldest = [...valid].reverse().find((s) => s.seq >= start - 1 && s.seq <= end);
    if (oldest === undefined) {
      r.fault(
        files[0]!.path,
        0,
        `the journal starts at seq ${start} and no valid snapshot holds seq ${start - 1} or later within the journal: records ` +
          `1..${start - 1} are missing`,
      );
      return finish(r, t0, null);
    }
    base = oldest;
  }
  // A replay from a snapshot continues with the configuration the snapshot carries.
  if (base === null) r.line(`engine configuration: ${source}: ${JSON.stringify(engine)}`);
  else r.line(`engine configuration: that of the base snapshot ${base.path}${engineGiven !== undefined ? ' (--engine is not used)' : ''}`);
  for (const s of valid) {
    if (clean && s.seq > end)
      r.fault(
        s.path,
        16,
        `the snapshot is at seq ${s.seq} but the journal ends at ${end}: records ${end + 1}..${s.seq} exist only in the snapshot (a lost ` +
          `segment?)`,
      );
    else if (s.seq < start - 1) r.line(`note: ${s.path} (seq ${s.seq}) is older than the journal's first record; not cross-checked`);
  }
  if (planned.length === 0) return finish(r, t0, null);

  const full = replayChecked(r, planned, base, engine, end, checkEvery, valid.filter((s) => s !== base));
  if (full === null) return finish(r, t0, null);
  const fromWhere = base === null ? 'the journal start' : `the snapshot ${base.path}`;
  const checked =
    checkEvery > 0
      ? `every ${checkEvery} records (${full.checks - 1} times) and at the end`
      : 'at the end (--check-every N checks on the way too)';
  r.line(`replay: seqs ${(base?.seq ?? 0) + 1}..${end} from ${fromWhere}: ${full.records} records; invariants checked ${checked}`);
  if (!clean) r.line(`note: the replay stopped at the first faulty segment (seq ${end}); later segments were checked, not replayed`);

  // 4. The newest valid snapshot within the replay, replayed to the end, must give the same state.
  const newest = valid.find((s) => s.seq <= end && s.seq >= start - 1);
  if (newest !== undefined && newest !== base) {
    const views = decodeViews(readSnapshot(newest.path).body);
    const n = replay(
      { dataDir, snapshot: newest, rejectedSnapshots: [], segments: planned, lastSeq: end, tails: [], removed: [] },
      views.asOfSeq,
      (m, o) => views.apply(m, o),
    );
    const h = stateHash(views.state);
    if (h !== full.hash)
      r.fault(
        newest.path,
        FILE_HEADER_BYTES,
        `the newest snapshot (seq ${newest.seq}) plus the journal after it (${n} records) gives state hash ${h}, the full replay ` +
          `${full.hash}`,
      );
    else
      r.line(
        `replay from the newest valid snapshot ${newest.path} (seq ${newest.seq}, ${n} records after it): same state hash as the full ` +
          `replay`,
      );
  } else if (newest === base && base !== null) {
    r.line('the newest valid snapshot is the replay\'s base: nothing more to cross-check');
  }
  r.line(`state hash at seq ${end}: ${full.hash}`);
  return finish(r, t0, end);
}

/** decodeViews with its errors marked as decoding ones (a snapshot whose checksums pass). */
function decodeViewsNamed(path: string, body: Uint8Array): Views {
  try {
    return decodeViews(body);
  } catch (e) {
    throw new Error(`decode: snapshot ${path}: ${(e as Error).message}`);
  }
}

/**
 * Replays the planned segments after `base` (or from seq 1) through a read
 * model up to seq `end`, checking the invariants every `checkEvery` records
 * and at the end, and the state hash at every snapshot's seq passed on the
 * way. Faults name the file and the byte offset of the frame. Returns the
 * final hash, or null when the replay itself failed.
 */
function tsString(hi: number, lo: number): string {
  return String((BigInt(hi) << 32n) | BigInt(lo));
}

function replayChecked(
  r: Report,
  planned: PlannedSegment[],
  base: ValidSnapshot | null,
  engine: Partial<EngineConfig>,
  end: number,
  checkEvery: number,
  snapshots: ValidSnapshot[],
): { hash: string; records: number; checks: number } | null {
  const views = base === null ? new Views(engine, {}) : decodeViews(readSnapshot(base.path).body);
  const hashAt = new Map<number, ValidSnapshot>();
  for (const s of snapshots) if (s.seq > views.asOfSeq && s.seq <= end) hashAt.set(s.seq, s);
  const after = views.asOfSeq;
  let records = 0;
  let since = 0;
  let checks = 0;
  let invariantFaults = 0;
  // ts strictly increases from command to command (the sequencer stamps max(clock, previous ts + 1)), across restarts and failovers.
  let prevHi = views.state.tsHi;
  let prevLo = views.state.tsLo;
  let tsFaults = 0;
  for (const s of planned) {
    if (s.lastSeq <= after) continue;
    const bytes = readWhole(s.path);
    let at = 0;
    try {
      forEachRecord(bytes, s.goodEnd, after, end, (m, o) => {
        at = o - FRAME_HEADER_BYTES;
        views.apply(m, o);
        records++;
        since++;
        if (Header.type(m, o) !== T_COMMAND_COMPLETED) return;
        const seq = views.asOfSeq;
        const hi = Header.ts_hi(m, o);
        const lo = Header.ts_lo(m, o);
        if ((hi < prevHi || (hi === prevHi && lo <= prevLo)) && tsFaults++ < 3) {
          r.fault(s.path, at, `seq ${seq}: ts ${tsString(hi, lo)} is not after the previous command's ${tsString(prevHi, prevLo)}`);
        }
        prevHi = hi;
        prevLo = lo;
        const snap = hashAt.get(seq);
        if (snap !== undefined) {
          const h = stateHash(views.state);
          if (h !== snap.hash)
            r.fault(
              snap.path,
              FILE_HEADER_BYTES,
              `state hash ${snap.hash} differs from the replay's ${h} at seq ${seq} (${s.path} byte ${at})`,
            );
          else r.line(`snapshot ${snap.path}: same state hash as the replay at seq ${seq}`);
        }
        if (checkEvery > 0 && since >= checkEvery) {
          since = 0;
          checks++;
          const bad = verifyState(views.state);
          if (bad.length > 0 && invariantFaults++ < 3) r.fault(s.path, at, `invariants broken after seq ${seq}: ${firstLines(bad)}`);
        }
      });
    } catch (e) {
      r.fault(s.path, at, `replay failed at this record: ${(e as Error).message}`);
      return null;
    }
  }
  if (views.asOfSeq !== end) {
    r.fault(planned[planned.length - 1]!.path, 0, `the replay reached seq ${views.asOfSeq}, not ${end}`);
    return null;
  }
  checks++;
  const bad = verifyState(views.state);
  if (bad.length > 0)
    r.fault(
      planned[planned.length - 1]!.path,
      planned[planned.length - 1]!.goodEnd,
      `invariants broken at the end (seq ${end}): ${firstLines(bad)}`,
    );
  return { hash: stateHash(views.state), records, checks };
}

function finish(r: Report, t0: number, end: number | null): number {
  const s = ((performance.now() - t0) / 1000).toFixed(2);
  const at = end === null ? '' : ` through seq ${end}`;
  if (r.faults > 0) r.line(`result: ${r.faults} fault(s), ${r.repairable} repairable${at} (${s} s)`);
  else if (r.repairable > 0) r.line(`result: ${r.repairable} repairable, no fault${at}: the next start repairs it (${s} s)`);
  else r.line(`result: sound${at} (${s} s)`);
  return r.faults > 0 ? EXIT_FAULT : r.repairable > 0 ? EXIT_REPAIRABLE : EXIT_OK;
}

// ---- entry -------------------------------------------------------------------

/** Runs one command; returns the exit code (errors are printed, never thrown). */
export function main(argv: readonly string[], io: Io): number {
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help' || argv.includes('--help')) {
    io[argv.length === 0 ? 'err' : 'out'](`${USAGE}\n`);
    return argv.length === 0 ? EXIT_USAGE : EXIT_OK;
  }
  try {
    const args = parseArgs(argv, io.env);
    switch (args.command) {
      case 'dump': return dump(args, io);
      case 'verify': return verifyLive(args, io);
      case 'hash': return hash(args, io);
    }
    throw new UsageError(`unknown command ${args.command}`);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`journal: ${e.message}\n(node dist/tools/journal.js --help lists the commands and options)\n`);
      return EXIT_USAGE;
    }
    if (e instanceof JournalFault) {
      io.err(`FAULT ${e.message}\n`);
      return EXIT_FAULT;
    }
    io.err(`journal: ${(e as Error).message}\n`);
    return EXIT_FAULT;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  // A reader that stops early (| head) closes the pipe: not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(EXIT_OK);
    throw e;
  });
  const code = main(process.argv.slice(2), {
    out: (s) => process.stdout.write(s),
    err: (s) => process.stderr.write(s),
    env: process.env,
  });
  process.exitCode = code;
}
