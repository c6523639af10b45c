// journal_verify: `tools/journal verify` on a data directory, as an operator
// runs it, in a process of its own (a replay of the whole journal with every
// check; see tools/journal.ts), for the runs that end by checking what they
// left: the crash and failover runs (crash/) and the soak (soak/). A run-time
// reference to tools/ that test/imports.test.ts declares. Test processes.

import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const JOURNAL_TOOL_JS = fileURLToPath(new URL('../../tools/journal.js', import.meta.url));

export interface JournalVerdict {
  ok: boolean;
  /** When not ok: the exit status (or the signal) and the end of the tool's output. */
  problem: string;
  /** The last three lines of the tool's output (its result line last). */
  summary: string;
}

/** Runs the verify on dataDir with env (the server's DX_* settings matter without a snapshot); null when tools/ is not built. */
export function journalVerify(dataDir: string, env: NodeJS.ProcessEnv, timeoutMs: number): JournalVerdict | null {
  if (!existsSync(JOURNAL_TOOL_JS)) return null;
  const r = spawnSync(process.execPath, [JOURNAL_TOOL_JS, 'verify', '--data-dir', dataDir], { encoding: 'utf8', timeout: timeoutMs, env });
  const output = `${r.stdout}\n${r.stderr}`.trim();
  return {
    ok: r.status === 0,
    problem: r.status === 0 ? '' : `exited ${r.status ?? r.signal}: ${output.slice(-1500)}`,
    summary: output.split('\n').slice(-3).join('\n'),
  };
}
