import { useState, type FormEvent } from 'react';
import { clientFor, unwrap, type Me } from './api';
import type { Session } from './session';
import { ProblemView } from './ui/problem';

/**
 * Paste a key: it is checked with GET /me before the console keeps it. The field is a password
 * field, so the key is not shown on screen or offered to autofill history.
 */
export function SignIn(props: { onSignedIn: (session: Session, me: Me) => void }) {
  const [apiKey, setApiKey] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    const session: Session = { apiKey: apiKey.trim(), branch: '', team: '' };
    if (session.apiKey === '') return;
    setBusy(true);
    setError(undefined);
    unwrap(clientFor(session).GET('/me')).then(
      (me) => props.onSignedIn(session, me),
      (failure: unknown) => {
        setBusy(false);
        setError(failure);
      },
    );
  };
  return (
    <main className="sign-in">
      <h1>Console</h1>
      <form onSubmit={submit} aria-labelledby="sign-in-title">
        <h2 id="sign-in-title">Sign in with a key</h2>
        <label htmlFor="api-key">API key</label>
        <input
          id="api-key"
          type="password"
          autoComplete="off"
          spellCheck={false}
          value={apiKey}
          onChange={(event) => setApiKey(event.target.value)}
          required
        />
        <p className="hint">
          The key stays in this tab only (session storage) and is sent as X-Api-Key. Signing out or
          closing the tab forgets it.
        </p>
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {error !== undefined && <ProblemView error={error} />}
    </main>
  );
}
