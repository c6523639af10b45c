// deopt_trace: reads the stdout of a `node --trace-deopt` run (the deopt
// check of bench/profile.ts): sections split at the pass markers, the
// deoptimizations of each, and a tally by kind, function and reason. Pure
// text processing; main thread of the bench runner and the tests.

/** Opens each timed pass of the deopt child: a line of its own on stdout. */
export const STEADY_MARK = '=== steady';

/** One --trace-deopt line. */
export interface DeoptEvent {
  /** deopt-eager, deopt-lazy, deopt-soft, ... for a bailout; `marked` for "marking dependent code ... for deoptimization". */
  kind: string;
  /** The optimized function (the outermost one: code inlined into it is not named); '(anonymous)' when V8 has no name. */
  fn: string;
  reason: string;
  /** fn is the name of a function defined in the engine's files (see engineFunctionNames). */
  engine: boolean;
  /** Counts against the engine loop: every bailout, and engine code marked for deoptimization. */
  counted: boolean;
}

export interface DeoptSection {
  /** The marker line that opens the section; '' for the text before the first marker. */
  marker: string;
  events: DeoptEvent[];
}

export interface DeoptRow {
  kind: string;
  fn: string;
  reason: string;
  engine: boolean;
  count: number;
}

const BAILOUT = /^\[bailout \(kind: ([^,]+), reason: (.*)\): begin\. deoptimizing .*?<JSFunction (?:(.*?) )?\(sfi = /;
const MARKED = /^\[marking dependent code .*?<SharedFunctionInfo ?(.*?)>.* for deoptimization, reason: (.*)\]$/;

/**
 * Splits the stdout of a `node --trace-deopt` run at the lines starting with
 * STEADY_MARK and picks out the deoptimizations of each part. Every bailout
 * counts: after warm-up only the engine loop runs, and a deopt in engine code
 * inlined into the benchmark's loop is reported under the benchmark's
 * function. Code marked for deoptimization counts only when it is an engine
 * function's: other code is marked when GC collects objects it embedded
 * (e.g. the workload generator's, "weak objects") and is listed apart.
 */
export function parseDeoptTrace(text: string, isEngine: (fn: string) => boolean): DeoptSection[] {
  const sections: DeoptSection[] = [{ marker: '', events: [] }];
  for (const line of text.split('\n')) {
    if (line.startsWith(STEADY_MARK)) {
      sections.push({ marker: line, events: [] });
      continue;
    }
    const b = BAILOUT.exec(line);
    const m = b === null ? MARKED.exec(line) : null;
    if (b === null && m === null) continue;
    const fn = (b !== null ? b[3] : m![1]) || '(anonymous)';
    const engine = isEngine(fn);
    sections[sections.length - 1]!.events.push(b !== null
      ? { kind: b[1]!, fn, reason: b[2]!, engine, counted: true }
      : { kind: 'marked', fn, reason: m![2]!, engine, counted: engine });
  }
  return sections;
}

/** Events grouped by kind, function and reason, most frequent first. */
export function tallyDeopts(events: DeoptEvent[]): DeoptRow[] {
  const rows = new Map<string, DeoptRow>();
  for (const e of events) {
    const k = `${e.kind}\0${e.fn}\0${e.reason}`;
    const r = rows.get(k);
    if (r !== undefined) r.count++;
    else rows.set(k, { kind: e.kind, fn: e.fn, reason: e.reason, engine: e.engine, count: 1 });
  }
  return [...rows.values()].sort((x, y) => y.count - x.count || x.fn.localeCompare(y.fn));
}
