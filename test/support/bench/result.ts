// BenchResult: the one JSON shape every benchmark returns and writes to
// bench/results/<name>.json, and the report (report.ts) reads. Declared here
// because the report's tests read it too; benchmarks take it from
// bench/lib/result.ts, beside the functions that write it. Figures are
// measurements, never assertions: a benchmark reports its targets in
// `notes`, it does not fail.

export interface MachineInfo {
  cpus: number;
  model: string;
  mem_gib: number;
}

export interface BenchResult {
  /** `<subject>_<topology>_<metric>`-style name; also the JSON file name. */
  name: string;
  /** process.version of the run. */
  node: string;
  machine: MachineInfo;
  /** One paragraph: what was run, how much of it, with which seed. */
  workload: string;
  /** Our figures (throughput in per_s, latencies in _ns, sizes in _mib). */
  metrics: Record<string, number>;
  /** The same figures for each comparison subject, keyed by peer name. */
  peers: Record<string, Record<string, number>>;
  /** ours / theirs, keyed `vs_<peer>`; > 1 means we are better. */
  ratios: Record<string, number>;
  notes?: string[];
  /** When the run finished (ISO 8601, UTC); set by bench/run.ts. */
  date?: string;
  /** True when the run used --quick (short, for checking the tooling: not figures to quote). */
  quick?: boolean;
  /** Wall time of the whole benchmark, seconds; set by bench/run.ts. */
  wall_s?: number;
}
