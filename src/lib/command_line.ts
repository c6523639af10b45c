// command_line: the one argument parser of the repository's programs (the
// dx CLI, the exchange, the tools, the benchmarks), a thin layer over
// node:util parseArgs. Options are `--name value`, `--name=value` or a
// boolean `--name`, in any order with the positionals; `--` ends options.
// node's own strict mode is not used, for two habits of these programs:
// a value may start with a dash (`--price -5`, `--url --json` takes
// "--json"), and an undeclared `-x` is an argument, not an option. Every
// mistake is an ArgumentError (a UsageError: exit code 2 in every program)
// naming the argument; a program may word it its own way from `problem`.
// Main thread of any program; never the engine.

import { parseArgs } from 'node:util';

/** A usage mistake: the program prints the message (and `usage` when given) and exits 2. */
export class UsageError extends Error {
  constructor(message: string, readonly usage?: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * A program's command line, read by `parse`: its result, or on a UsageError
 * the message (after `name: ` when given) and `usage` on stderr and null, for
 * the caller to exit 2. Any other error is rethrown.
 */
export function parseOrUsage<T>(parse: () => T, usage: string, name?: string): T | null {
  try {
    return parse();
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${name === undefined ? '' : `${name}: `}${e.message}\n${usage}\n`);
    return null;
  }
}

export type ArgumentProblem = 'unknown_option' | 'missing_value' | 'unexpected_value' | 'unexpected_argument';

/** What the parser refused: `arg` is the argument as written, `option` the option's name as written (`--x`). */
export class ArgumentError extends UsageError {
  constructor(readonly problem: ArgumentProblem, readonly arg: string, readonly option = arg) {
    super(
      problem === 'unknown_option' ? `unknown option ${option}`
        : problem === 'missing_value' ? `${option} needs a value`
          : problem === 'unexpected_value' ? `${option} takes no value`
            : `unexpected argument ${JSON.stringify(arg)}`,
    );
    this.name = 'ArgumentError';
  }
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** One letter: `-h` for `--help`. */
  short?: string;
  /** Repeatable: the values in order (else the last one counts). */
  multiple?: boolean;
}

export type OptionSpecs = Record<string, OptionSpec>;

type ValueOf<S extends OptionSpec> = S['type'] extends 'string'
  ? (S['multiple'] extends true ? string[] : string)
  : (S['multiple'] extends true ? boolean[] : boolean);

export type OptionValues<O extends OptionSpecs> = { -readonly [K in keyof O]?: ValueOf<O[K]> };

export interface CommandLine<O extends OptionSpecs> {
  values: OptionValues<O>;
  positionals: string[];
  /** With `unknown: 'keep'`: undeclared `--name` options, with their inline value or true (a following argument stays positional). */
  unknown: Map<string, string | true>;
}

export interface ParseOptions {
  /** Accept positionals (default true). */
  positionals?: boolean;
  /** An undeclared `--name`: an error (default), or kept in `unknown` for the program to judge. */
  unknown?: 'error' | 'keep';
}

export function parseCommandLine<const O extends OptionSpecs>(argv: readonly string[], options: O, o: ParseOptions = {}): CommandLine<O> {
  // `-x...` that is not exactly a declared short option (`-h`) is an argument as a whole: node would split it into an
  // option per letter (`-hsbc-1` would be -h), and a '-' among them (`-1e-5`) into `--`, ending the options. Hidden from
  // it (NUL: never in argv).
  const shorts = new Set(Object.values(options).map((spec) => `-${spec.short}`));
  const hidden = new Map<string, string>();
  const args = argv.map((a, i) => {
    if (a.length < 2 || a[0] !== '-' || a[1] === '-' || shorts.has(a)) return a;
    hidden.set(`\u0000${i}`, a);
    return `\u0000${i}`;
  });
  const shown = (s: string): string => hidden.get(s) ?? s;
  const { tokens } = parseArgs({ args, options, strict: false, allowPositionals: true, tokens: true });
  const values: Record<string, unknown> = {};
  const positionals: string[] = [];
  const unknown = new Map<string, string | true>();
  let shortIndex = -1;
  for (const t of tokens) {
    if (t.kind === 'option-terminator') continue;
    if (t.kind === 'positional') {
      positionals.push(shown(t.value));
      continue;
    }
    const spec = Object.hasOwn(options, t.name) ? options[t.name] : undefined;
    const written = argv[t.index]!;
    if (spec === undefined) {
      if (!t.rawName.startsWith('--')) {
        // `-5`, `-abc`: an argument (node gives one token per letter of a group).
        if (t.index !== shortIndex) positionals.push(written);
        shortIndex = t.index;
        continue;
      }
      if (o.unknown !== 'keep') throw new ArgumentError('unknown_option', written, t.rawName);
      unknown.set(t.name, t.value ?? true);
      continue;
    }
    if (spec.type === 'string' && t.value === undefined) throw new ArgumentError('missing_value', written, t.rawName);
    if (spec.type === 'boolean' && t.inlineValue === true) throw new ArgumentError('unexpected_value', written, t.rawName);
    const v = spec.type === 'string' ? shown(t.value!) : true;
    if (spec.multiple) ((values[t.name] ??= []) as unknown[]).push(v);
    else values[t.name] = v;
  }
  if (o.positionals === false && positionals.length > 0) throw new ArgumentError('unexpected_argument', positionals[0]!);
  return { values: values as OptionValues<O>, positionals, unknown };
}
