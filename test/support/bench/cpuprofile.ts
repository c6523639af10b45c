// cpuprofile: the top-functions table of a V8 CPU profile (the .cpuprofile
// JSON that Chrome DevTools and VS Code open), for bench/profile.ts. Pure:
// node:* free.
//
// Self time of a function = the sampled time whose innermost frame is that
// function; total time = the sampled time during which the function is
// anywhere on the stack, each sample counted once per function even when it
// recurses. Times come from the profile's own timeDeltas (µs); a function is
// keyed by name + script + line + column, so two closures of one name stay
// apart. Percentages are of all sampled time, (idle), (program) and
// (garbage collector) included: those rows say how much of the window the
// thread did no JavaScript.

export interface CallFrame {
  functionName: string;
  scriptId: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

export interface FunctionRow {
  name: string;
  /** Script path relative to the repository where possible, with 1-based line. */
  where: string;
  self_ms: number;
  self_pct: number;
  total_ms: number;
  total_pct: number;
}

export interface ProfileSummary {
  /** All sampled time, ms. */
  sampled_ms: number;
  samples: number;
  /** Wall time the profile covers, ms. */
  wall_ms: number;
  rows: FunctionRow[];
}

function shortUrl(url: string, root: string | null): string {
  let u = url.startsWith('file://') ? decodeURIComponent(url.slice(7)) : url;
  if (root !== null && u.startsWith(root)) u = u.slice(root.length).replace(/^\/+/, '');
  return u;
}

/** Summarizes a profile; `root` (an absolute directory) is cut from script paths. */
export function summarize(p: CpuProfile, root: string | null = null): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) byId.set(n.id, n);
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = new Map<number, string>();
  const info = new Map<string, { name: string; where: string; self: number; total: number }>();
  // Native functions (no script) are named by their busiest caller: "collect" alone says little.
  const nativeCallers = new Map<string, Map<string, number>>();
  for (const n of p.nodes) {
    const f = n.callFrame;
    const key = `${f.functionName}\u0000${f.url}\u0000${f.lineNumber}\u0000${f.columnNumber}`;
    keyOf.set(n.id, key);
    if (!info.has(key)) {
      const url = shortUrl(f.url, root);
      info.set(key, {
        name: f.functionName === '' ? (url === '' ? '(anonymous)' : '(anonymous function)') : f.functionName,
        where: url === '' ? '' : `${url}:${f.lineNumber + 1}`,
        self: 0,
        total: 0,
      });
    }
  }
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  let sampled = 0;
  if (samples.length > 0) {
    // Each sample lasts until the next one (DevTools' convention); the last one until endTime.
    let lastTs = p.startTime;
    for (let i = 0; i < samples.length && i < deltas.length; i++) lastTs += deltas[i]!;
    const seen = new Set<string>();
    for (let i = 0; i < samples.length; i++) {
      const dt = i + 1 < deltas.length ? Math.max(0, deltas[i + 1]!) : Math.max(0, p.endTime - lastTs);
      sampled += dt;
      let id: number | undefined = samples[i]!;
      const leafKey = keyOf.get(id)!;
      const leaf = info.get(leafKey);
      if (leaf !== undefined) {
        leaf.self += dt;
        if (leaf.where === '' && !leaf.name.startsWith('(')) {
          const up = parent.get(id);
          if (up !== undefined) {
            let m = nativeCallers.get(leafKey);
            if (m === undefined) nativeCallers.set(leafKey, (m = new Map()));
            const ck = keyOf.get(up)!;
            m.set(ck, (m.get(ck) ?? 0) + dt);
          }
        }
      }
      seen.clear();
      while (id !== undefined) {
        const k = keyOf.get(id)!;
        if (!seen.has(k)) {
          seen.add(k);
          info.get(k)!.total += dt;
        }
        id = parent.get(id);
      }
    }
  } else {
    // No sample list (some producers keep only hitCount): interval = wall / hits.
    let hits = 0;
    for (const n of p.nodes) hits += n.hitCount ?? 0;
    const per = hits > 0 ? (p.endTime - p.startTime) / hits : 0;
    const subtree = new Map<number, number>();
    const totalOf = (id: number): number => {
      const n = byId.get(id)!;
      let t = (n.hitCount ?? 0) * per;
      for (const c of n.children ?? []) t += totalOf(c);
      subtree.set(id, t);
      return t;
    };
    for (const n of p.nodes) if (!parent.has(n.id)) totalOf(n.id);
    for (const n of p.nodes) {
      const r = info.get(keyOf.get(n.id)!)!;
      r.self += (n.hitCount ?? 0) * per;
      sampled += (n.hitCount ?? 0) * per;
      // A recursive function is counted once per frame here (this fallback has no per-sample stacks).
      r.total += subtree.get(n.id) ?? 0;
    }
  }
  for (const [k, callers] of nativeCallers) {
    let best = '';
    let bestT = -1;
    for (const [ck, t] of callers) if (t > bestT) [best, bestT] = [ck, t];
    const c = info.get(best);
    if (c !== undefined) info.get(k)!.where = `native, mostly from ${c.name}${c.where !== '' ? ` (${c.where})` : ''}`;
  }
  const ms = (us: number): number => Math.round(us / 10) / 100;
  const pct = (us: number): number => (sampled > 0 ? Math.round((us / sampled) * 1000) / 10 : 0);
  const rows: FunctionRow[] = [...info.values()]
    .filter((r) => r.self > 0 || r.total > 0)
    .filter((r) => r.name !== '(root)')
    .map((r) => ({
      name: r.name,
      where: r.where,
      self_ms: ms(r.self),
      self_pct: pct(r.self),
      total_ms: ms(r.total),
      total_pct: pct(r.total),
    }));
  return { sampled_ms: ms(sampled), samples: samples.length, wall_ms: ms(p.endTime - p.startTime), rows };
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|');
}

/** Markdown: the top `n` functions by self time, then the top `n` by total time. */
export function topFunctionsMarkdown(s: ProfileSummary, n = 30): string {
  const out: string[] = [];
  const table = (rows: FunctionRow[]): void => {
    out.push('| # | function | where | self ms | self % | total ms | total % |', '|---:|---|---|---:|---:|---:|---:|');
    rows.forEach((r, i) =>
      out.push(`| ${i + 1} | \`${cell(r.name)}\` | ${cell(r.where)} | ${r.self_ms} | ${r.self_pct} | ${r.total_ms} | ${r.total_pct} |`),
    );
  };
  out.push(`Sampled ${s.sampled_ms} ms in ${s.samples} samples over ${s.wall_ms} ms of wall time.`, '');
  out.push(`### Top ${n} by self time`, '');
  table([...s.rows].sort((a, b) => b.self_ms - a.self_ms).slice(0, n));
  out.push('', `### Top ${n} by total time`, '');
  table([...s.rows].sort((a, b) => b.total_ms - a.total_ms).slice(0, n));
  return out.join('\n');
}

/**
 * Self time grouped by where the code lives: `src/<folder>` and `bench/...`
 * (our code, compiled under dist/), `node:internal`, an npm package, or the
 * VM's own pseudo-frames ((garbage collector), (program), (idle)) and native
 * functions without a script.
 */
export function selfByArea(s: ProfileSummary): { area: string; self_ms: number; self_pct: number }[] {
  const acc = new Map<string, number>();
  for (const r of s.rows) {
    let area: string;
    const w = r.where.replace(/:[0-9]+$/, '');
    if (w === '' || w.startsWith('native,')) area = r.name.startsWith('(') ? r.name : '(native, no script)';
    else if (w.startsWith('node:')) area = 'node: internals';
    else {
      const nm = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(w);
      if (nm) area = `npm: ${nm[1]}`;
      else {
        const ours = /^(?:dist\/)?((?:src|bench|tools|test)\/[^/]+)/.exec(w);
        area = ours ? ours[1]!.replace(/\.js$/, '') : w;
      }
    }
    acc.set(area, (acc.get(area) ?? 0) + r.self_ms);
  }
  return [...acc]
    .map(([area, ms]) => ({
      area,
      self_ms: Math.round(ms * 100) / 100,
      self_pct: s.sampled_ms > 0 ? Math.round((ms / s.sampled_ms) * 1000) / 10 : 0,
    }))
    .sort((a, b) => b.self_ms - a.self_ms);
}

export function areaMarkdown(s: ProfileSummary, n = 15): string {
  const out = ['| area | self ms | self % |', '|---|---:|---:|'];
  for (const a of selfByArea(s).slice(0, n)) out.push(`| ${cell(a.area)} | ${a.self_ms} | ${a.self_pct} |`);
  return out.join('\n');
}
