// probes: how the HTTP benchmarks' notes list their connection-count probes
// (closed loops at a few connection counts, one key per connection, before
// the count of the measured runs is chosen). The benchmark's main thread.

/** What a note says of one probe. */
export interface ProbeSummary {
  connections: number;
  per_s: number;
  per_key_per_s: number;
  accepted: boolean;
}

/** `connections: n/s (k/s per key[, rejected])` for each probe, comma-separated. */
export function probeList(probes: readonly ProbeSummary[]): string {
  return probes
    .map((p) => `${p.connections}: ${Math.round(p.per_s)}/s (${p.per_key_per_s}/s per key${p.accepted ? '' : ', rejected'})`)
    .join(', ');
}
