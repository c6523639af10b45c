// options: the command-line options every crash run takes (tools/crash_test,
// tools/failover_test): --kills N (at least 1; a default or required), --seed S,
// --load-ms MIN..MAX, --keep and --json, read once here. Test and tool
// processes, main thread.

import { UsageError, type OptionValues } from '../../../src/lib/command_line.js';
import type { CrashOptions } from './driver.js';

export const CRASH_RUN_OPTIONS = {
  kills: { type: 'string' },
  seed: { type: 'string' },
  'load-ms': { type: 'string' },
  keep: { type: 'boolean' },
  json: { type: 'boolean' },
} as const;

/** A non-negative integer option, undefined when absent. */
export function intArg(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^[0-9]+$/.test(v)) throw new UsageError(`--${name} needs a non-negative integer`);
  return Number(v);
}

/**
 * The shared options of a run (the seed defaults to the clock, the kills to
 * defaultKills; without one --kills is required); a UsageError names what is wrong.
 */
export function crashRunOptions(v: OptionValues<typeof CRASH_RUN_OPTIONS>, defaultKills = 0): CrashOptions {
  const o: CrashOptions = { kills: intArg('kills', v.kills) ?? defaultKills, seed: intArg('seed', v.seed) ?? Date.now() % 1_000_000 };
  if (v['load-ms'] !== undefined) {
    const m = /^([0-9]+)\.\.([0-9]+)$/.exec(v['load-ms']);
    if (!m || Number(m[1]) > Number(m[2])) throw new UsageError('--load-ms needs MIN..MAX');
    o.loadMinMs = Number(m[1]);
    o.loadMaxMs = Number(m[2]);
  }
  if (v.keep) o.keep = true;
  if (o.kills < 1) throw new UsageError(defaultKills > 0 ? '--kills needs at least 1' : '--kills N (N >= 1) is required');
  return o;
}
