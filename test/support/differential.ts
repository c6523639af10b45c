// differential: runs the engine and the reference model side by side on
// seeded random command streams and compares every command's events and the
// final state summary, with the engine's O(n) invariant checker
// (src/engine/verify.ts) at the end and, when asked, every N commands: the
// harness of test/engine/differential.test.ts, of the long run
// (tools/differential.ts) and of the simulation at scale (sim.ts). A
// failure names seed=<n> command #<i>, the command and the first differing
// event of each side; shrink() finds the shortest prefix of the seed's
// stream that still fails. Main thread or a piscina worker.
//
// Three engines run each stream: the fused engine (decide applies each event
// as it writes it, src/engine/apply.ts), a reference engine that applies
// every event through evolve as a read model does (EngineOptions.viaEvolve),
// and the fused engine as the engine thread runs it (matching-only). All three
// must write the same event bytes for every command, and the fused and the
// evolve engine must reach equal state hashes: the proof that the fused path
// changes the state exactly as evolve does.

import { isDeepStrictEqual } from 'node:util';
import { Engine } from '../../src/engine/engine.js';
import { BufferEventOut } from '../../src/engine/event_out.js';
import { summarize } from '../../src/engine/summary.js';
import type { ExchangeState } from '../../src/engine/state.js';
import { verify } from '../../src/engine/verify.js';
import { stateHash } from '../../src/journal/state_codec.js';
import { checks } from '../../src/lib/assert.js';
import { memOf } from '../../src/lib/mem.js';
import { decodeRecord, encodeRecord, encodeToMem, type RecordObject } from '../../src/layout_codec/record_codec.js';
import { ReferenceModel, type ModelConfig } from './reference_model.js';
import { CommandGenerator, DIFF_CONFIG, type GeneratorOptions } from './random_commands.js';

export interface Coverage {
  commands: Map<string, number>;
  paths: Map<number, number>;
  reasons: Map<number, number>;
  codes: Map<number, number>;
  events: Map<string, number>;
  dropped: number;
}

export function newCoverage(): Coverage {
  return { commands: new Map(), paths: new Map(), reasons: new Map(), codes: new Map(), events: new Map(), dropped: 0 };
}

function bump<K>(m: Map<K, number>, k: K): void {
  m.set(k, (m.get(k) ?? 0) + 1);
}

export interface Failure {
  seed: number;
  /** Index of the command in the stream, or -1 for the final summary. */
  index: number;
  command: RecordObject | null;
  message: string;
  expected?: unknown;
  actual?: unknown;
  /** The whole event lists of the failing command, for context. */
  expectedEvents?: RecordObject[];
  actualEvents?: RecordObject[];
  /** Who produced expected and actual, when not the model and the engine. */
  sides?: [string, string];
}

export function show(v: unknown): string {
  return JSON.stringify(v, (_k, x: unknown) => (typeof x === 'bigint' ? `${x}n` : x));
}

/** Path and values of the first difference between two plain values, or null when deep-equal. */
export function firstDifference(a: unknown, b: unknown, path = ''): { path: string; expected: unknown; actual: unknown } | null {
  if (isDeepStrictEqual(a, b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    for (let i = 0; i < Math.max(a.length, b.length); i++) {
      const d = firstDifference(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
  } else if (a && b && typeof a === 'object' && typeof b === 'object' && !Array.isArray(a) && !Array.isArray(b)) {
    const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
    for (const k of keys) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d) return d;
    }
  }
  return { path: path || '(root)', expected: a, actual: b };
}

export function formatFailure(f: Failure): string {
  const lines = [`seed=${f.seed} ${f.index >= 0 ? `command #${f.index}` : 'final summary'}: ${f.message}`];
  if (f.command) lines.push(`  command:  ${show(f.command)}`);
  if (f.expected !== undefined || f.actual !== undefined) {
    lines.push(`  expected (model):  ${show(f.expected)}`);
    lines.push(`  actual (engine):   ${show(f.actual)}`);
  }
  if (f.expectedEvents && f.actualEvents) {
    const [a, b] = f.sides ?? ['model', 'engine'];
    lines.push(`  ${a} events:`);
    for (const e of f.expectedEvents) lines.push(`    ${show(e)}`);
    lines.push(`  ${b} events:`);
    for (const e of f.actualEvents) lines.push(`    ${show(e)}`);
  }
  return lines.join('\n');
}

export interface RunOptions {
  config?: ModelConfig;
  coverage?: Coverage;
  /** The model's own money invariants every N commands: 1 (the default) after every command, 0 never. */
  invariantsEvery?: number;
  /** The engine's O(n) invariant checker every N commands; 0 (the default): only after the last one. */
  verifyEvery?: number;
  generator?: GeneratorOptions;
  /** Tests of this harness only: called after command i, e.g. to damage the engine's state on purpose. */
  afterCommand?: (i: number, engine: Engine) => void;
}

const CHECKER = 'the invariant checker (src/engine/verify.ts)';

/** The fused and the evolve engine's state hashes are compared every this many commands and at the end. */
const HASH_EVERY = 1000;

/** Buffer views over the first n bytes of two memories are equal. */
function sameBytes(a: Uint8Array, b: Uint8Array, n: number): boolean {
  return Buffer.from(a.buffer, a.byteOffset, n).equals(Buffer.from(b.buffer, b.byteOffset, n));
}

/** True when both outputs hold the same bytes since their last reset. */
function sameOutput(a: BufferEventOut, b: BufferEventOut): boolean {
  return b.length === a.length && sameBytes(a.mem.u8, b.mem.u8, a.length);
}

/** Runs one seed's first `count` commands; returns the first failure or null. */
export function runSeed(seed: number, count: number, opts: RunOptions = {}): Failure | null {
  // The costly assertions (level walks, double indexing) run too.
  const costly = checks.costly;
  checks.costly = true;
  try {
    return runSeedChecked(seed, count, opts);
  } finally {
    checks.costly = costly;
  }
}

/**
 * Every third seed runs with a low max_orders (src/engine/apply.ts makeRoom):
 * half of them at 120, which the retained orders of the stream's accounts
 * reach after a few hundred commands, so that from then on every new order
 * first evicts a retained one (mostly the placing account's own, sometimes
 * another's); the other half at 10, which the live orders alone reach too
 * (about 1.5% of their placements are order_capacity_exceeded).
 */
function configOf(seed: number): ModelConfig {
  if (seed % 3 !== 0) return DIFF_CONFIG;
  return { ...DIFF_CONFIG, max_orders: seed % 2 === 0 ? 120 : 10 };
}

/**
 * The matching-only twin against the full engine after a command: the same
 * event bytes, and what it counts instead of holding (max_orders reads it)
 * equal to what the full engine holds. Null when both agree.
 */
function twinDiffers(
  out: BufferEventOut, twinOut: BufferEventOut, full: ExchangeState, counted: ExchangeState,
): Omit<Failure, 'seed' | 'index' | 'command'> | null {
  if (!sameOutput(out, twinOut)) {
    return {
      message: 'the matching-only engine (ExchangeState.enterMatchingOnly) wrote other events than the full one',
      expectedEvents: out.take(),
      actualEvents: twinOut.take(),
      sides: ['full engine', 'matching-only engine'],
    };
  }
  if (counted.ordersHeld() === full.ordersHeld() && counted.retainedOrders === full.retainedOrders) return null;
  return {
    message: `the matching-only engine counts ${counted.ordersHeld()} orders held, ${counted.retainedOrders} retained; ` +
      `the full one holds ${full.ordersHeld()}, ${full.retainedOrders} retained`,
  };
}

function runSeedChecked(seed: number, count: number, opts: RunOptions): Failure | null {
  const config = opts.config ?? configOf(seed);
  const cov = opts.coverage;
  const invariantsEvery = opts.invariantsEvery ?? 1;
  const verifyEvery = opts.verifyEvery ?? 0;
  const model = new ReferenceModel(config);
  const gen = new CommandGenerator(seed, model, opts.generator);
  // Small initial tables, so that the streams also grow them.
  const engineConfig = { ...config, order_capacity: 256, account_capacity: 16, market_capacity: 4 };
  const out = new BufferEventOut(1 << 22);
  const engine = new Engine(engineConfig, out);
  // The reference for the fused path: every event applied through evolve.
  const viaEvolveOut = new BufferEventOut(1 << 22);
  const viaEvolve = new Engine(engineConfig, viaEvolveOut, undefined, { viaEvolve: true });
  // A twin as the engine thread runs it (ExchangeState.matchingOnly): it must
  // emit byte for byte what the full engine emits. Odd seeds turn it
  // matching-only half-way, as the engine thread turns a recovered state.
  const twinOut = new BufferEventOut(1 << 22);
  const twin = new Engine(engineConfig, twinOut);
  const twinFrom = seed % 2 === 0 ? 0 : count >> 1;
  // The model's events, encoded: equal bytes mean equal events (every field,
  // reserved ones zero), so the field-by-field comparison runs only to
  // explain a difference.
  const encoded = memOf(new ArrayBuffer(1 << 22));
  for (let i = 0; i < count; i++) {
    const raw = gen.next();
    const { mem } = encodeToMem(raw);
    const command = decodeRecord(mem, 0);
    let expected: RecordObject[];
    try {
      expected = model.execute(command);
      if (invariantsEvery > 0 && (i + 1) % invariantsEvery === 0) model.checkInvariants();
    } catch (e) {
      return { seed, index: i, command, message: `reference model threw: ${(e as Error).stack ?? String(e)}` };
    }
    let seq: number;
    try {
      seq = engine.execute(mem, 0);
      viaEvolve.execute(mem, 0);
      if (i === twinFrom) twin.state.enterMatchingOnly();
      twin.execute(mem, 0);
      if (!sameOutput(out, viaEvolveOut)) {
        return {
          seed, index: i, command, message: 'the fused engine emitted other events than the engine that applies them through evolve',
          expectedEvents: viaEvolveOut.take(), actualEvents: out.take(), sides: ['evolve engine', 'fused engine'],
        };
      }
      const twinFailure = twinDiffers(out, twinOut, engine.state, twin.state);
      if (twinFailure !== null) return { seed, index: i, command, ...twinFailure };
      viaEvolveOut.reset();
      twinOut.reset();
    } catch (e) {
      return {
        seed,
        index: i,
        command,
        message: `engine threw: ${(e as Error).stack ?? String(e)}`,
        expectedEvents: expected,
        actualEvents: [],
      };
    }
    let at = 0;
    for (const e of expected) at += encodeRecord(encoded, at, e);
    if (at === out.length && sameBytes(encoded.u8, out.mem.u8, at)) {
      out.reset();
    } else {
      const actual = out.take();
      const n = Math.max(expected.length, actual.length);
      for (let j = 0; j < n; j++) {
        if (!isDeepStrictEqual(expected[j], actual[j])) {
          const d = firstDifference(expected[j], actual[j]);
          return {
            seed, index: i, command, message: `event ${j} differs${d ? ` at ${d.path}` : ''}`,
            expected: expected[j] ?? null, actual: actual[j] ?? null, expectedEvents: expected, actualEvents: actual,
          };
        }
      }
      const message = 'the events have equal fields but different bytes (a reserved field or padding is not zero)';
      return { seed, index: i, command, message, expectedEvents: expected, actualEvents: actual };
    }
    opts.afterCommand?.(i, engine);
    if (verifyEvery > 0 && (i + 1) % verifyEvery === 0) {
      const bad = verify(engine.state);
      if (bad.length > 0) return { seed, index: i, command, message: `${CHECKER} after command #${i}: ${bad.slice(0, 5).join('; ')}` };
    }
    if (i % HASH_EVERY === HASH_EVERY - 1 && stateHash(engine.state) !== stateHash(viaEvolve.state)) {
      return { seed, index: i, command, message: `the fused engine's state hash differs from the evolve engine's after command #${i}` };
    }
    const expectedSeq = expected.length === 0 ? 0 : model.seq;
    if (seq !== expectedSeq)
      return { seed, index: i, command, message: 'execute() returned another seq', expected: expectedSeq, actual: seq };
    if (cov) {
      bump(cov.commands, command.type);
      if (expected.length === 0) cov.dropped++;
      for (const e of expected) {
        bump(cov.events, e.type);
        if (e.type === 'Filled') bump(cov.paths, e.path as number);
        else if (e.type === 'OrderCanceled') bump(cov.reasons, e.reason as number);
        else if (e.type === 'CommandCompleted' && e.code_num !== 0) bump(cov.codes, e.code_num as number);
      }
    }
  }
  const bad = verify(engine.state);
  if (bad.length > 0) return { seed, index: -1, command: null, message: `${CHECKER} at the end: ${bad.slice(0, 5).join('; ')}` };
  let actualSummary: unknown;
  try {
    actualSummary = summarize(engine.state);
  } catch (e) {
    return { seed, index: -1, command: null, message: `summarize threw: ${(e as Error).stack ?? String(e)}` };
  }
  const expectedSummary = model.summary();
  const d = firstDifference(expectedSummary, actualSummary);
  if (d) return { seed, index: -1, command: null, message: `summary differs at ${d.path}`, expected: d.expected, actual: d.actual };
  const fusedHash = stateHash(engine.state);
  const evolveHash = stateHash(viaEvolve.state);
  if (fusedHash !== evolveHash) {
    const message = 'the fused engine\'s state hash differs from the evolve engine\'s';
    return { seed, index: -1, command: null, message, expected: evolveHash, actual: fusedHash };
  }
  return null;
}

/**
 * The shortest prefix of the seed's stream that still fails (any check:
 * events, the evolve engine and the matching-only twin, the model's
 * invariants, the engine's checker, the final summary, the state hashes), found by bisection between a prefix known to
 * pass (0 commands) and one known to fail (`failingCount`), assuming that a
 * longer prefix of a failing one fails too. Reproduce it with the same seed
 * and `count` = prefix.
 */
export function shrink(seed: number, failingCount: number, opts: RunOptions = {}): { prefix: number; failure: Failure } {
  let lo = 0;
  let hi = failingCount;
  let failure = runSeed(seed, hi, opts);
  if (failure === null) throw new Error(`shrink: seed ${seed} passes its first ${failingCount} commands`);
  while (hi - lo > 1) {
    const mid = lo + Math.floor((hi - lo) / 2);
    const f = runSeed(seed, mid, opts);
    if (f === null) lo = mid;
    else {
      hi = mid;
      failure = f;
    }
  }
  return { prefix: hi, failure };
}
