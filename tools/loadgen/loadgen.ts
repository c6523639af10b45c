// loadgen: the load generator's command line (the generator itself is
// test/support/loadgen/, see its README.md). Prints one JSON LoadResult;
// exit 2 on a usage error, 1 when the run fails. Main thread; the load runs
// in piscina worker threads.
//
//   node dist/tools/loadgen/loadgen.js --url http://127.0.0.1:8080 \
//     --key 1:<base64 secret> --markets 1,2 --mode open --rate 2000 --duration 10s

import { parseArgs, runLoad, type LoadOptions } from '../../test/support/loadgen/loadgen.js';

let opts: LoadOptions;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  // A usage error: say what was wrong and exit 2, without a stack trace.
  process.stderr.write(`${(e as Error).message}\n`);
  process.exit(2);
}
runLoad(opts).then(
  (r) => process.stdout.write(JSON.stringify(r, null, 2) + '\n'),
  (e: unknown) => {
    process.stderr.write(`${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  },
);
