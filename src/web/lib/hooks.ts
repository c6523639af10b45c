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

export interface RememberedSession<S> {
  /** The signed-in session, null until there is one. */
  session: S | null;
  /** False while a remembered sign-in is being tried. */
  ready: boolean;
  /** Why the remembered sign-in failed ('' if it did not). */
  error: string;
  /** Signed in: keeps `saved` for this tab when given. */
  signedIn(session: S, saved: string | null): void;
  signOut(): void;
}

/**
 * A sign-in that may be remembered for this tab (sessionStorage, gone with
 * the tab): on load the saved value is tried once with `restore`; a value
 * that no longer works is forgotten.
 */
export function useRememberedSession<S>(key: string, restore: (saved: string) => Promise<S>): RememberedSession<S> {
  const [session, setSession] = useState<S | null>(null);
  const [ready, setReady] = useState(false);
  const [error, setError] = useState('');
  useEffect(() => {
    const saved = sessionStorage.getItem(key);
    if (saved === null) {
      setReady(true);
      return;
    }
    restore(saved)
      .then(setSession, (e: unknown) => {
        sessionStorage.removeItem(key);
        setError(e instanceof Error ? e.message : String(e));
      })
      .finally(() => setReady(true));
  }, [key]);
  return {
    session,
    ready,
    error,
    signedIn: (s, saved) => {
      if (saved !== null) sessionStorage.setItem(key, saved);
      setError('');
      setSession(s);
    },
    signOut: () => {
      sessionStorage.removeItem(key);
      setSession(null);
    },
  };
}
