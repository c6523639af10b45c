// quiet: imported first by the gateway harness so that the exchange's
// structured log (read once per thread at module load, and inherited by the
// worker threads through process.env) only prints errors during the
// black-box tests. Set DX_LOG_LEVEL yourself to see more.

process.env.DX_LOG_LEVEL ??= 'error';

export {};
