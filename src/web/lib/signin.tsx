// signin: the sign-in page both pages open with: a form whose fields the
// page gives, "remember for this tab", one error line (role=alert), the
// first field focused and the page marked interactive (the browser suite
// measures that mark). Browser main thread.

import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText } from './api.js';
import { markInteractive } from './hooks.js';
import { checked } from './ui.js';

export function SignInPage(props: {
  title: string;
  intro: ComponentChildren;
  rememberNote: string;
  /** Why a remembered sign-in failed, shown at first. */
  error: string;
  /** Signs in with the fields' values; throws what to show. */
  submit: (remember: boolean) => Promise<void>;
  /** The error line for a failure (default: the API's code and message). */
  explain?: (e: unknown) => string;
  children: ComponentChildren;
}) {
  const [remember, setRemember] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState(props.error);
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    form.current?.querySelector('input')?.focus();
    markInteractive('dx-interactive');
  }, []);
  const submit = async (ev: Event): Promise<void> => {
    ev.preventDefault();
    setBusy(true);
    setError('');
    try {
      await props.submit(remember);
    } catch (e) {
      setError((props.explain ?? errorText)(e));
      setBusy(false);
    }
  };
  return (
    <main class="signin">
      <h1>{props.title}</h1>
      <p>{props.intro}</p>
      <form ref={form} onSubmit={submit} aria-describedby={error ? 'signin-error' : undefined}>
        {props.children}
        <label class="check">
          <input type="checkbox" checked={remember} onChange={(e) => setRemember(checked(e))} />
          {props.rememberNote}
        </label>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error && (
        <p id="signin-error" class="error" role="alert">
          {error}
        </p>
      )}
    </main>
  );
}

/** What shows while a remembered sign-in is tried. */
export function SigningIn() {
  return (
    <main class="signin">
      <p>Signing in…</p>
    </main>
  );
}
