// hooks: the few Preact hooks both pages share. Browser main thread.

import { useEffect, useState } from 'preact/hooks';

/** Re-renders the component whenever the store says it changed. */
export function useVersion(store: { listen(f: () => void): () => void; version: number }): number {
  const [v, setV] = useState(store.version);
  useEffect(() => store.listen(() => setV(store.version)), [store]);
  return v;
}

/** The wall clock, re-read every `ms` (countdowns). */
export function useNow(ms = 1000): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    const t = setInterval(() => setNow(Date.now()), ms);
    return () => clearInterval(t);
  }, [ms]);
  return now;
}

/** Marks the moment the page became usable (read by the browser tests through the Performance API). */
export function markInteractive(name: string): void {
  if (performance.getEntriesByName(name, 'mark').length === 0) performance.mark(name);
}
