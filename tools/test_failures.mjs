// test_failures: a node:test reporter that prints nothing until the run ends,
// then one block per failed test (file, name, error, the top of its stack).
// run_tests adds it after the TAP reporter, so a failure is named in the last
// lines of a long run's output, where a CI log's tail shows it; TAP alone
// leaves it somewhere in the middle, among thousands of lines.

import { relative } from 'node:path';

const STACK_LINES = 6;

export default async function* testFailures(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const error = event.data.details?.error;
    // A parent whose subtests failed says only that; its failed subtests are listed.
    if (error?.failureType === 'subtestsFailed') continue;
    failed.push(event.data);
  }
  if (failed.length === 0) return;
  yield `# failed tests: ${failed.length}\n`;
  for (const data of failed) {
    const error = data.details?.error;
    const cause = error?.cause ?? error;
    const text = cause instanceof Error ? (cause.stack ?? String(cause)) : String(cause);
    yield `# not ok: ${data.file ? relative(process.cwd(), data.file) : '?'} :: ${data.name}\n`;
    for (const line of text.split('\n').slice(0, STACK_LINES)) yield `#   ${line}\n`;
  }
}
