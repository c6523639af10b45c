// log: structured JSON lines on stderr (start, recovery, operator actions,
// faults). Never logs secrets: callers pass ids, never key material. Any thread.

export type Level = 'debug' | 'info' | 'warn' | 'error';

const threshold: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** DX_LOG_LEVEL's values (the exchange's configuration refuses any other). */
export function isLevel(s: string): s is Level {
  return Object.hasOwn(threshold, s);
}

const given = process.env.DX_LOG_LEVEL ?? '';
const min = isLevel(given) ? threshold[given] : threshold.info;

export function log(level: Level, fields: Record<string, unknown>): void {
  if (threshold[level] < min) return;
  process.stderr.write(`${JSON.stringify({ ts: new Date().toISOString(), level, ...fields })}\n`);
}
